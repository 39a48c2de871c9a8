//! The control plane's messages and their conversion from and to the engine's types: the
//! load (a [`LoadSpec`] as a typed Configure request, both ways) and the batches. The one
//! place where either side spells a message.

use std::net::SocketAddr;
use std::time::Duration;

use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Deserializer, Serializer, V2Serializer};
use vernier_protocols::{Dist, InterArrival, KeyDist, KvWorkload, Protocol};

use crate::config::{AgentKind, LoadSpec, PollMode, Workload};
use crate::measure::{Batch, Counters, Sample};
use crate::stall::{StallInterval, StallLog, StallSource};
use crate::sys::{TimestampMode, Transport};

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
pub const SAMPLE_BYTES: usize = std::mem::size_of::<Sample>();

/// Why a message from the network could not be turned back into measurements.
#[derive(Debug, thiserror::Error)]
pub enum WireError {
    /// A samples field (`samples` or `probes`) is not a whole number of records.
    #[error("{field} field of {len} bytes is not a multiple of {SAMPLE_BYTES}")]
    Samples {
        /// Which field.
        field: &'static str,
        /// Its length, bytes.
        len: usize,
    },
    /// The agent lays its samples out otherwise than this build reads them.
    #[error(
        "the agent's samples are {theirs} bytes each, this build's {SAMPLE_BYTES}: agent and \
         coordinator must come from the same vernier build"
    )]
    SampleLayout {
        /// The size the agent said (0: an agent built before the size was said).
        theirs: u32,
    },
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
    /// A field's value is not one this agent knows.
    #[error("{field}: {message}")]
    Field {
        /// Which field.
        field: &'static str,
        /// What was wrong with its value.
        message: String,
    },
}

fn field(field: &'static str, message: impl std::fmt::Display) -> WireError {
    WireError::Field {
        field,
        message: message.to_string(),
    }
}

/// The Configure request for `spec`: `target` as the user wrote it (the agent resolves it
/// itself, as it may see another network), and the session's `lease`.
pub fn configure_request(spec: &LoadSpec, target: &str, lease: Duration) -> pb::ConfigureRequest {
    use pb::configure_request::Workload as W;
    let workload = match &spec.workload {
        Workload::Synthetic { service, .. } => W::Service(service.to_string()),
        Workload::KeyValue(kv) => W::KeyValue(pb::KvWorkload {
            keys: kv.keys,
            key_size: kv.key_size.to_string(),
            value_size: kv.value_size.to_string(),
            read_ratio: kv.read_ratio,
            key_dist: Some(pb::KeyDist {
                kind: Some(match kv.key_dist {
                    KeyDist::Uniform => pb::key_dist::Kind::Uniform(pb::Empty {}),
                    KeyDist::RoundRobin => pb::key_dist::Kind::RoundRobin(pb::Empty {}),
                    KeyDist::Zipf { theta } => pb::key_dist::Kind::Zipf(theta),
                }),
            }),
            key: kv.key.clone(),
        }),
        Workload::Echo => W::Echo(pb::Empty {}),
    };
    let (timestamps, interface) = timestamps_message(&spec.timestamps);
    pb::ConfigureRequest {
        target: target.to_string(),
        transport: match spec.transport {
            Transport::Tcp => pb::Transport::Tcp,
            Transport::Udp => pb::Transport::Udp,
        }
        .into(),
        protocol: Some(protocol_spec(&spec.protocol)),
        workload: Some(workload),
        workers: spec.workers as u32,
        cpus: spec.cpus.iter().map(|&c| c as u32).collect(),
        connections: spec.connections as u32,
        depth: spec.depth as u32,
        kind: match spec.kind {
            AgentKind::Symmetric => pb::AgentKind::Symmetric,
            AgentKind::Throughput => pb::AgentKind::Throughput,
            AgentKind::Latency => pb::AgentKind::Latency,
        }
        .into(),
        timestamps: timestamps.into(),
        poll: match spec.poll {
            PollMode::Sleep => pb::Poll::Sleep,
            PollMode::Spin => pb::Poll::Spin,
            PollMode::Adaptive => pb::Poll::Adaptive,
        }
        .into(),
        interface,
        seed: spec.seed,
        timeout_ms: spec.timeout.as_millis() as u64,
        lease_ms: lease.as_millis() as u64,
        probe: match spec.workload {
            Workload::Synthetic { probe, .. } => probe,
            _ => 0.0,
        },
    }
}

fn protocol_spec(protocol: &Protocol) -> pb::ProtocolSpec {
    if protocol.is_mapping() {
        pb::ProtocolSpec {
            spec: String::new(),
            // A mapping is plain data (strings, numbers): it always serialises.
            declared: serde_json::to_string(protocol).unwrap_or_default(),
        }
    } else {
        pb::ProtocolSpec {
            spec: protocol.to_string(),
            declared: String::new(),
        }
    }
}

fn protocol(p: &pb::ProtocolSpec) -> Result<Protocol, WireError> {
    if p.declared.is_empty() {
        return p
            .spec
            .parse()
            .map_err(|e: vernier_protocols::SpecError| field("protocol.spec", e));
    }
    // A declared protocol's mapping, or a gRPC method's: `Protocol`'s serde form.
    serde_json::from_str(&p.declared).map_err(|e| field("protocol.declared", e))
}

/// A timestamp mode's message form: the source, and the interface of a NIC that stamps.
fn timestamps_message(mode: &TimestampMode) -> (pb::Timestamps, String) {
    match mode {
        TimestampMode::Kernel => (pb::Timestamps::Kernel, String::new()),
        TimestampMode::User => (pb::Timestamps::User, String::new()),
        TimestampMode::Hardware { interface } => (pb::Timestamps::Hardware, interface.clone()),
    }
}

/// The timestamp mode of message field `name` (its value `source`, the NIC's `interface`).
fn timestamps_mode(
    name: &'static str,
    source: i32,
    interface: &str,
) -> Result<TimestampMode, WireError> {
    Ok(
        match pb::Timestamps::try_from(source)
            .map_err(|_| field(name, format!("{source}: unknown")))?
        {
            pb::Timestamps::Kernel => TimestampMode::Kernel,
            pb::Timestamps::User => TimestampMode::User,
            pb::Timestamps::Hardware => TimestampMode::Hardware {
                interface: interface.to_owned(),
            },
        },
    )
}

/// The Configure reply for session `session` whose timestamps come from `mode`.
pub fn configure_reply(
    session: String,
    mode: &TimestampMode,
    connections: u32,
    lease: Duration,
) -> pb::ConfigureReply {
    let (source, interface) = timestamps_message(mode);
    pb::ConfigureReply {
        session,
        timestamps: mode.to_string(),
        connections,
        lease_ms: lease.as_millis() as u64,
        source: Some(source.into()),
        source_interface: interface,
    }
}

/// The timestamp source a Configure reply says is in use: its `source`, or, from an agent
/// that predates it, its text.
pub fn reply_timestamps(reply: &pb::ConfigureReply) -> Result<TimestampMode, WireError> {
    match reply.source {
        Some(source) => timestamps_mode("source", source, &reply.source_interface),
        None => reply
            .timestamps
            .parse()
            .map_err(|e: crate::sys::SysError| field("timestamps", e)),
    }
}

/// The StartLoad request's form of an inter-arrival process.
pub fn arrival(process: &InterArrival) -> pb::Arrival {
    use pb::arrival::Process;
    pb::Arrival {
        process: Some(match process {
            InterArrival::Exp => Process::Exp(pb::Empty {}),
            InterArrival::Fixed => Process::Fixed(pb::Empty {}),
            InterArrival::Dist(shape) => Process::Shaped(shape.to_string()),
        }),
    }
}

/// The inter-arrival process a StartLoad request asks for: its `arrival`, or, from a
/// coordinator that predates it, its text (none: exponential).
pub fn interarrival_of(r: &pb::StartLoadRequest) -> Result<InterArrival, WireError> {
    use pb::arrival::Process;
    let spec = |field_name: &'static str, spec: &str| {
        spec.parse()
            .map_err(|e: vernier_protocols::SpecError| field(field_name, e))
    };
    match r.arrival.as_ref().map(|a| a.process.as_ref()) {
        Some(Some(Process::Exp(_))) => Ok(InterArrival::Exp),
        Some(Some(Process::Fixed(_))) => Ok(InterArrival::Fixed),
        Some(Some(Process::Shaped(shape))) if shape.contains(':') => spec("arrival.shaped", shape),
        Some(Some(Process::Shaped(shape))) => Err(field(
            "arrival.shaped",
            format!("{shape:?}: expected a distribution, as in lognormal:1us:0.5"),
        )),
        Some(None) => Err(WireError::Missing("arrival.process")),
        None if r.interarrival.is_empty() => Ok(InterArrival::Exp),
        None => spec("interarrival", &r.interarrival),
    }
}

/// The load a Configure request asks for, against `target` (resolved by the caller), and
/// its lease (`None`: the agent's default). Every value is checked by
/// [`LoadSpec::validate`] afterwards.
pub fn load_spec(
    r: &pb::ConfigureRequest,
    target: SocketAddr,
) -> Result<(LoadSpec, Option<Duration>), WireError> {
    use pb::configure_request::Workload as W;
    let enum_value = |name: &'static str, value: i32| field(name, format!("{value}: unknown"));
    let transport = match pb::Transport::try_from(r.transport)
        .map_err(|_| enum_value("transport", r.transport))?
    {
        pb::Transport::Tcp => Transport::Tcp,
        pb::Transport::Udp => Transport::Udp,
    };
    let protocol = protocol(r.protocol.as_ref().ok_or(WireError::Missing("protocol"))?)?;
    let workload = match r.workload.as_ref().ok_or(WireError::Missing("workload"))? {
        W::Service(service) => Workload::Synthetic {
            service: service.parse::<Dist>().map_err(|e| field("service", e))?,
            probe: r.probe,
        },
        W::KeyValue(kv) => Workload::KeyValue(KvWorkload {
            keys: kv.keys,
            key_size: kv
                .key_size
                .parse()
                .map_err(|e| field("key_value.key_size", e))?,
            value_size: kv
                .value_size
                .parse()
                .map_err(|e| field("key_value.value_size", e))?,
            read_ratio: kv.read_ratio,
            key_dist: match kv.key_dist.as_ref().and_then(|k| k.kind.as_ref()) {
                None | Some(pb::key_dist::Kind::Uniform(_)) => KeyDist::Uniform,
                Some(pb::key_dist::Kind::RoundRobin(_)) => KeyDist::RoundRobin,
                Some(pb::key_dist::Kind::Zipf(theta)) => KeyDist::Zipf { theta: *theta },
            },
            key: kv.key.clone(),
        }),
        W::Echo(_) => Workload::Echo,
    };
    let kind = match pb::AgentKind::try_from(r.kind).map_err(|_| enum_value("kind", r.kind))? {
        pb::AgentKind::Symmetric => AgentKind::Symmetric,
        pb::AgentKind::Throughput => AgentKind::Throughput,
        pb::AgentKind::Latency => AgentKind::Latency,
    };
    let timestamps = timestamps_mode("timestamps", r.timestamps, &r.interface)?;
    let poll = match pb::Poll::try_from(r.poll).map_err(|_| enum_value("poll", r.poll))? {
        pb::Poll::Sleep => PollMode::Sleep,
        pb::Poll::Spin => PollMode::Spin,
        pb::Poll::Adaptive => PollMode::Adaptive,
    };
    let spec = LoadSpec {
        target,
        transport,
        poll,
        protocol,
        workload,
        workers: r.workers.max(1) as usize,
        cpus: r.cpus.iter().map(|&c| c as usize).collect(),
        connections: r.connections as usize,
        depth: r.depth as usize,
        kind,
        timestamps,
        seed: r.seed,
        // A request unanswered for a second fails unless the coordinator says otherwise.
        timeout: Duration::from_millis(if r.timeout_ms == 0 {
            1000
        } else {
            r.timeout_ms
        }),
        duet: None,
    };
    let lease = (r.lease_ms > 0).then(|| Duration::from_millis(r.lease_ms));
    Ok((spec, lease))
}

/// The counters' fields, listed once for the conversions both ways, the sum over workers
/// and the interval arithmetic: totals count events, gauges (in flight, backlog) are a
/// state at an instant, and the backlog's high-water mark is a maximum.
macro_rules! counters {
    (totals: $($total:ident),*; gauges: $($gauge:ident),*; maxima: $($max:ident),*) => {
        impl From<Counters> for pb::Counters {
            fn from(c: Counters) -> Self {
                pb::Counters { $($total: c.$total,)* $($gauge: c.$gauge,)* $($max: c.$max,)* }
            }
        }

        impl From<pb::Counters> for Counters {
            fn from(c: pb::Counters) -> Self {
                Counters { $($total: c.$total,)* $($gauge: c.$gauge,)* $($max: c.$max,)* }
            }
        }

        impl Counters {
            /// Sums workers' counters at one instant (maxima for the backlog's mark).
            pub fn sum<'a>(all: impl IntoIterator<Item = &'a Counters>) -> Counters {
                all.into_iter().fold(Counters::default(), |a, c| Counters {
                    $($total: a.$total + c.$total,)*
                    $($gauge: a.$gauge + c.$gauge,)*
                    $($max: a.$max.max(c.$max),)*
                })
            }

            /// What these cumulative counters counted since `earlier`: totals as
            /// differences, gauges as now; the maxima are the caller's to track.
            pub fn since(&self, earlier: &Counters) -> Counters {
                Counters {
                    $($total: self.$total.saturating_sub(earlier.$total),)*
                    $($gauge: self.$gauge,)*
                    $($max: self.$max,)*
                }
            }

            /// Adds one interval's counts (a [`Batch`]'s) to cumulative ones: totals add
            /// up, gauges become the interval's, maxima the larger.
            pub fn accumulate(&mut self, interval: &Counters) {
                $(self.$total += interval.$total;)*
                $(self.$gauge = interval.$gauge;)*
                $(self.$max = self.$max.max(interval.$max);)*
            }
        }
    };
}

counters!(
    totals: sent, received, failed, error_replies, timeouts, retried, bytes_sent, bytes_received,
        reconnects, connect_failures, parse_errors, tx_timestamps_missing, cpu_ns, send_ns,
        send_calls, read_calls, probes_sent, probes_received;
    gauges: in_flight, backlog;
    maxima: backlog_max
);

fn encode_histogram(h: &Histogram<u64>) -> Vec<u8> {
    let mut out = Vec::new();
    // Serialising into a Vec cannot fail for lack of space; an empty field decodes as an
    // empty histogram on the other side.
    let _ = V2Serializer::new().serialize(h, &mut out);
    out
}

/// The cookie of `V2Serializer`'s encoding, the only one the agent writes (hdrhistogram keeps
/// its own constant private).
const V2_COOKIE: u32 = 0x1c84_9313;

/// The bytes of a V2 encoding before its payload: cookie, payload length, normalising offset,
/// significant digits, lowest and highest trackable values, integer-to-double ratio.
const V2_HEADER: usize = 40;

/// The cookie of `V2DeflateSerializer`'s encoding (the V2 encoding, zlib-compressed, after
/// the cookie and the compressed length), which interval logs use.
const V2_COMPRESSED_COOKIE: u32 = 0x1c84_9314;

/// The most a compressed histogram may inflate to: hdrhistogram's largest (every bucket of
/// a 1 ns to 2^63 range at 5 digits) encodes to about 54 MiB.
const MAX_INFLATED: u64 = 64 << 20;

fn decode_histogram(field: &'static str, bytes: &[u8]) -> Result<Histogram<u64>, WireError> {
    if bytes.is_empty() {
        return Ok(crate::measure::histogram());
    }
    read_v2(bytes).map_err(|message| WireError::Histogram { field, message })
}

/// An uncompressed V2 encoding, checked before hdrhistogram reads it: it allocates the
/// payload length a header claims before reading the payload (a few bytes claiming 4 GB
/// would abort the process), so no more than what follows the header is believed.
fn read_v2(bytes: &[u8]) -> Result<Histogram<u64>, String> {
    let word = |at: usize| Some(u32::from_be_bytes(bytes.get(at..at + 4)?.try_into().ok()?));
    let payload = bytes.get(V2_HEADER..).unwrap_or_default();
    match (word(0), word(4)) {
        (Some(V2_COOKIE), Some(len)) if len as usize <= payload.len() => {}
        (Some(V2_COOKIE), Some(len)) => {
            return Err(format!(
                "a payload of {len} bytes claimed in {} bytes",
                bytes.len()
            ));
        }
        _ => return Err("not an uncompressed V2 encoding".into()),
    }
    if has_unreadable_run(payload) {
        return Err("a run of 2^63 empty buckets".into());
    }
    Deserializer::new()
        .deserialize(&mut &bytes[..])
        .map_err(|e| format!("{e:?}"))
}

/// A histogram as HdrHistogram's interval logs and tools carry it: the V2 encoding,
/// compressed (as they write it) or not, inflated here within a bound and checked as the
/// agent's own batches are, so that a hostile file is an error rather than an abort.
pub fn read_histogram(bytes: &[u8]) -> Result<Histogram<u64>, String> {
    let word = |at: usize| Some(u32::from_be_bytes(bytes.get(at..at + 4)?.try_into().ok()?));
    if word(0) != Some(V2_COMPRESSED_COOKIE) {
        return read_v2(bytes);
    }
    let compressed = bytes.get(8..).unwrap_or_default();
    let mut inflated = Vec::new();
    std::io::Read::read_to_end(
        &mut std::io::Read::take(flate2::read::ZlibDecoder::new(compressed), MAX_INFLATED + 1),
        &mut inflated,
    )
    .map_err(|e| format!("not zlib-compressed: {e}"))?;
    if inflated.len() as u64 > MAX_INFLATED {
        return Err(format!("inflates to more than {MAX_INFLATED} bytes"));
    }
    read_v2(&inflated)
}

/// Whether a V2 payload holds the one number hdrhistogram 7.6 cannot read without overflow
/// (a panic where overflow is checked, as in debug builds): a run of i64::MIN empty buckets,
/// written as nine 0xff bytes. The payload is a sequence of zig-zag varints, each ending at
/// a byte without the high bit or at its ninth byte (LEB128-64b9B).
fn has_unreadable_run(payload: &[u8]) -> bool {
    let mut rest = payload;
    while !rest.is_empty() {
        let len = rest
            .iter()
            .take(8)
            .position(|b| b & 0x80 == 0)
            .map_or(9, |last| last + 1)
            .min(rest.len());
        if rest[..len] == [0xff; 9] {
            return true;
        }
        rest = &rest[len..];
    }
    false
}

// The samples travel as their own bytes, which are little-endian only on such a host.
#[cfg(target_endian = "big")]
compile_error!("the agent's wire format assumes a little-endian host");

impl From<&Batch> for pb::BatchMessage {
    fn from(b: &Batch) -> Self {
        pb::BatchMessage {
            worker: b.worker,
            generation: b.generation,
            elapsed_ns: b.elapsed.as_nanos() as u64,
            samples: bytemuck::cast_slice::<Sample, u8>(&b.samples).to_vec(),
            sample_bytes: SAMPLE_BYTES as u32,
            probes: bytemuck::cast_slice::<Sample, u8>(&b.probes).to_vec(),
            interarrivals: b.interarrivals.clone(),
            latency: encode_histogram(&b.latency),
            intended: encode_histogram(&b.intended),
            send_lag: encode_histogram(&b.send_lag),
            served: encode_histogram(&b.served),
            asked: encode_histogram(&b.asked),
            counts: Some(b.counts.into()),
            stalls: b.stalls.intervals.iter().map(stall_message).collect(),
            stalls_dropped: b.stalls.dropped,
        }
    }
}

fn stall_message(s: &StallInterval) -> pb::Stall {
    pb::Stall {
        start_ns: s.start_ns,
        end_ns: s.end_ns,
        core: s.core,
        source: match s.source {
            StallSource::Probe => pb::StallSource::Probe,
            StallSource::Spin => pb::StallSource::Spin,
            StallSource::Late => pb::StallSource::Late,
        }
        .into(),
    }
}

/// The stalls of a batch message: each ends after it starts and names a known source;
/// past [`MAX_INTERVALS`](crate::MAX_INTERVALS) they are counted, not kept.
fn stall_log(stalls: &[pb::Stall], dropped: u64) -> Result<StallLog, WireError> {
    let mut log = StallLog {
        intervals: Vec::with_capacity(stalls.len().min(crate::MAX_INTERVALS)),
        dropped,
    };
    for (i, s) in stalls.iter().enumerate() {
        if s.end_ns < s.start_ns {
            return Err(field(
                "stalls",
                format!(
                    "stall {i} ends at {} ns, before it starts at {} ns",
                    s.end_ns, s.start_ns
                ),
            ));
        }
        let source = match pb::StallSource::try_from(s.source) {
            Ok(pb::StallSource::Probe) => StallSource::Probe,
            Ok(pb::StallSource::Spin) => StallSource::Spin,
            Ok(pb::StallSource::Late) => StallSource::Late,
            Err(_) => {
                return Err(field(
                    "stalls",
                    format!("stall {i}: unknown source {}", s.source),
                ));
            }
        };
        log.push(StallInterval {
            start_ns: s.start_ns,
            end_ns: s.end_ns,
            core: s.core,
            source,
        });
    }
    Ok(log)
}

impl TryFrom<pb::BatchMessage> for Batch {
    type Error = WireError;

    fn try_from(m: pb::BatchMessage) -> Result<Self, WireError> {
        if m.sample_bytes as usize != SAMPLE_BYTES {
            return Err(WireError::SampleLayout {
                theirs: m.sample_bytes,
            });
        }
        for (field, bytes) in [("samples", &m.samples), ("probes", &m.probes)] {
            if !bytes.len().is_multiple_of(SAMPLE_BYTES) {
                return Err(WireError::Samples {
                    field,
                    len: bytes.len(),
                });
            }
        }
        Ok(Batch {
            worker: m.worker,
            generation: m.generation,
            elapsed: std::time::Duration::from_nanos(m.elapsed_ns),
            // Copied into aligned storage: the message's bytes need not be.
            samples: bytemuck::pod_collect_to_vec::<u8, Sample>(&m.samples),
            probes: bytemuck::pod_collect_to_vec::<u8, Sample>(&m.probes),
            interarrivals: m.interarrivals,
            latency: decode_histogram("latency", &m.latency)?,
            intended: decode_histogram("intended", &m.intended)?,
            send_lag: decode_histogram("send_lag", &m.send_lag)?,
            served: decode_histogram("served", &m.served)?,
            asked: decode_histogram("asked", &m.asked)?,
            few: crate::measure::Few::default(),
            counts: m.counts.ok_or(WireError::Missing("counts"))?.into(),
            stalls: stall_log(&m.stalls, m.stalls_dropped)?,
        })
    }
}

#[cfg(test)]
mod tests;
