//! The control plane's messages and their conversion from and to the engine's types.

use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Deserializer, Serializer, V2Serializer};

use crate::measure::{Batch, Counters, Sample};

/// The generated gRPC types and services (from proto/agent.proto).
#[allow(
    missing_docs,
    missing_debug_implementations,
    clippy::all,
    clippy::unwrap_used,
    clippy::expect_used
)]
pub mod pb {
    tonic::include_proto!("vernier.agent.v1");
}

/// Size of one sample on the wire.
pub const SAMPLE_BYTES: usize = 24;

/// Why a message from the network could not be turned back into measurements.
#[derive(Debug, thiserror::Error)]
pub enum WireError {
    /// The samples field is not a whole number of records.
    #[error("samples field of {0} bytes is not a multiple of {SAMPLE_BYTES}")]
    Samples(usize),
    /// A histogram did not deserialise.
    #[error("{field} histogram: {message}")]
    Histogram {
        /// Which histogram.
        field: &'static str,
        /// Why.
        message: String,
    },
    /// A field that must be present was not.
    #[error("missing field {0}")]
    Missing(&'static str),
}

/// The counters' fields, listed once for the conversions both ways and the sum; the
/// backlog high-water mark sums as a maximum, every other field as a total.
macro_rules! counters {
    (totals: $($total:ident),*; maxima: $($max:ident),*) => {
        impl From<Counters> for pb::Counters {
            fn from(c: Counters) -> Self {
                pb::Counters { $($total: c.$total,)* $($max: c.$max,)* }
            }
        }

        impl From<pb::Counters> for Counters {
            fn from(c: pb::Counters) -> Self {
                Counters { $($total: c.$total,)* $($max: c.$max,)* }
            }
        }

        impl Counters {
            /// Sums workers' counters (maxima for the backlog high-water mark).
            pub fn sum<'a>(all: impl IntoIterator<Item = &'a Counters>) -> Counters {
                all.into_iter().fold(Counters::default(), |a, c| Counters {
                    $($total: a.$total + c.$total,)*
                    $($max: a.$max.max(c.$max),)*
                })
            }
        }
    };
}

counters!(
    totals: sent, received, failed, in_flight, error_replies, timeouts, bytes_sent, bytes_received,
        reconnects, connect_failures, parse_errors, backlog, tx_timestamps_missing;
    maxima: backlog_max
);

fn encode_histogram(h: &Histogram<u64>) -> Vec<u8> {
    let mut out = Vec::new();
    // Serialising into a Vec cannot fail for lack of space; an empty field decodes as an
    // empty histogram on the other side.
    let _ = V2Serializer::new().serialize(h, &mut out);
    out
}

fn decode_histogram(field: &'static str, bytes: &[u8]) -> Result<Histogram<u64>, WireError> {
    if bytes.is_empty() {
        return Ok(crate::measure::histogram());
    }
    Deserializer::new()
        .deserialize(&mut &bytes[..])
        .map_err(|e| WireError::Histogram {
            field,
            message: format!("{e:?}"),
        })
}

impl From<&Batch> for pb::BatchMessage {
    fn from(b: &Batch) -> Self {
        let mut samples = Vec::with_capacity(b.samples.len() * SAMPLE_BYTES);
        for s in &b.samples {
            samples.extend_from_slice(&s.departure_ns.to_le_bytes());
            samples.extend_from_slice(&s.latency_ns.to_le_bytes());
            samples.extend_from_slice(&s.queueing_ns.to_le_bytes());
            samples.extend_from_slice(&s.conn.to_le_bytes());
            samples.push(s.request);
            samples.push(s.outcome);
        }
        pb::BatchMessage {
            worker: b.worker,
            elapsed_ns: b.elapsed.as_nanos() as u64,
            samples,
            interarrivals: b.interarrivals.clone(),
            latency: encode_histogram(&b.latency),
            intended: encode_histogram(&b.intended),
            send_lag: encode_histogram(&b.send_lag),
            counters: Some(b.counters.into()),
        }
    }
}

impl TryFrom<pb::BatchMessage> for Batch {
    type Error = WireError;

    fn try_from(m: pb::BatchMessage) -> Result<Self, WireError> {
        if !m.samples.len().is_multiple_of(SAMPLE_BYTES) {
            return Err(WireError::Samples(m.samples.len()));
        }
        let samples = m
            .samples
            .chunks_exact(SAMPLE_BYTES)
            .map(|r| {
                let u64_at = |i: usize| {
                    u64::from_le_bytes([
                        r[i],
                        r[i + 1],
                        r[i + 2],
                        r[i + 3],
                        r[i + 4],
                        r[i + 5],
                        r[i + 6],
                        r[i + 7],
                    ])
                };
                Sample {
                    departure_ns: u64_at(0),
                    latency_ns: u64_at(8),
                    queueing_ns: u32::from_le_bytes([r[16], r[17], r[18], r[19]]),
                    conn: u16::from_le_bytes([r[20], r[21]]),
                    request: r[22],
                    outcome: r[23],
                }
            })
            .collect();
        Ok(Batch {
            worker: m.worker,
            elapsed: std::time::Duration::from_nanos(m.elapsed_ns),
            samples,
            interarrivals: m.interarrivals,
            latency: decode_histogram("latency", &m.latency)?,
            intended: decode_histogram("intended", &m.intended)?,
            send_lag: decode_histogram("send_lag", &m.send_lag)?,
            counters: m.counters.ok_or(WireError::Missing("counters"))?.into(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_round_trip() {
        let mut latency = crate::measure::histogram();
        latency.record(12_345).unwrap();
        let batch = Batch {
            worker: 3,
            elapsed: std::time::Duration::from_millis(20),
            samples: vec![Sample {
                departure_ns: 1,
                latency_ns: 2,
                queueing_ns: 3,
                conn: 4,
                request: 1,
                outcome: 2,
            }],
            interarrivals: vec![10, 20],
            latency,
            intended: crate::measure::histogram(),
            send_lag: crate::measure::histogram(),
            counters: Counters {
                sent: 5,
                received: 4,
                in_flight: 1,
                ..Counters::default()
            },
        };
        let back = Batch::try_from(pb::BatchMessage::from(&batch)).unwrap();
        assert_eq!(back.samples, batch.samples);
        assert_eq!(back.interarrivals, batch.interarrivals);
        assert_eq!(back.counters, batch.counters);
        assert_eq!(back.latency.len(), 1);
        assert_eq!(
            back.latency.value_at_quantile(0.5),
            batch.latency.value_at_quantile(0.5)
        );
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        let m = pb::BatchMessage {
            samples: vec![0; 25],
            ..Default::default()
        };
        assert!(matches!(Batch::try_from(m), Err(WireError::Samples(25))));
        let m = pb::BatchMessage {
            latency: vec![1, 2, 3],
            counters: Some(Default::default()),
            ..Default::default()
        };
        assert!(matches!(
            Batch::try_from(m),
            Err(WireError::Histogram {
                field: "latency",
                ..
            })
        ));
    }
}
