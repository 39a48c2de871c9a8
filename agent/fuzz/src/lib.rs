//! The properties the agent's decoding of control messages must have on any bytes, checked
//! by the fuzz target; [`seeds`] are real messages to start it from.

use std::net::SocketAddr;
use std::time::Duration;

use prost::Message;
use vernier_agent::wire::{self, pb};
use vernier_agent::{Batch, Counters};
use vernier_protocols::InterArrival;

/// The target every Configure request is converted against: the agent resolves the request's
/// own `target` with DNS (`control::load_spec`), which a fuzzer must not call.
pub const TARGET: &str = "127.0.0.1:11211";

fn target() -> SocketAddr {
    TARGET.parse().expect("a socket address")
}

/// `data` as a Configure request, turned into a load as the agent does (`wire::load_spec`,
/// then `LoadSpec::validate`): no panic, and a valid load re-encodes
/// (`wire::configure_request`) to bytes that decode and convert to the same load and lease.
pub fn check_configure(data: &[u8]) {
    let Ok(request) = pb::ConfigureRequest::decode(data) else {
        return;
    };
    let Ok((spec, lease)) = wire::load_spec(&request, target()) else {
        return;
    };
    // Only a valid load is sent on: an invalid one may hold a NaN, never equal to itself.
    if spec.validate().is_err() {
        return;
    }
    let again = wire::configure_request(&spec, TARGET, lease.unwrap_or_default());
    let bytes = again.encode_to_vec();
    let decoded = pb::ConfigureRequest::decode(bytes.as_slice())
        .unwrap_or_else(|e| panic!("{again:?} encoded does not decode: {e}"));
    match wire::load_spec(&decoded, target()) {
        Ok(back) => assert_eq!(back, (spec, lease), "re-encoded as {decoded:?}"),
        Err(e) => panic!("{spec:?} re-encoded as {decoded:?} does not convert: {e}"),
    }
}

/// `data` as a batch from an agent's stream, converted as its client does
/// (`TryFrom<pb::BatchMessage>`, histograms included): no panic, and a batch re-encodes to a
/// message that converts to the same batch.
pub fn check_batch(data: &[u8]) {
    let Ok(message) = pb::BatchMessage::decode(data) else {
        return;
    };
    let Ok(batch) = Batch::try_from(message) else {
        return;
    };
    let again = Batch::try_from(pb::BatchMessage::from(&batch))
        .unwrap_or_else(|e| panic!("{batch:?} re-encoded does not convert: {e}"));
    assert_eq!(again.worker, batch.worker);
    assert_eq!(again.generation, batch.generation);
    assert_eq!(again.elapsed, batch.elapsed);
    assert_eq!(again.samples, batch.samples);
    assert_eq!(again.interarrivals, batch.interarrivals);
    assert_eq!(again.latency, batch.latency, "latency histogram");
    assert_eq!(again.intended, batch.intended, "intended histogram");
    assert_eq!(again.send_lag, batch.send_lag, "send_lag histogram");
    assert_eq!(again.counts, batch.counts);
    assert_eq!(again.stalls, batch.stalls, "stalls");
}

/// `data` as each other request the agent serves: no panic decoding them, nor parsing the
/// inter-arrival process StartLoad names.
pub fn check_requests(data: &[u8]) {
    if let Ok(r) = pb::StartLoadRequest::decode(data) {
        let _ = r.interarrival.parse::<InterArrival>();
    }
    let _ = pb::StartMeasureRequest::decode(data);
    let _ = pb::Empty::decode(data);
}

/// `data` as each other reply the agent's client reads: no panic decoding them, and the
/// counters convert both ways unchanged.
pub fn check_replies(data: &[u8]) {
    let _ = pb::ConfigureReply::decode(data);
    let _ = pb::Ack::decode(data);
    if let Ok(reply) = pb::CountersReply::decode(data) {
        for counters in reply.total.into_iter().chain(reply.workers) {
            assert_eq!(pb::Counters::from(Counters::from(counters)), counters);
        }
    }
}

/// Real messages to seed the corpus with: Configure requests for each protocol and
/// workload, a batch with samples and histograms, and the other requests and replies.
pub fn seeds() -> Vec<(&'static str, Vec<u8>)> {
    let spec = |protocol: &str, workload: vernier_agent::Workload| vernier_agent::LoadSpec {
        target: target(),
        transport: vernier_agent::sys::Transport::Tcp,
        protocol: protocol.parse().expect("a valid protocol"),
        workload,
        workers: 2,
        cpus: vec![0, 1],
        connections: 8,
        depth: 4,
        kind: vernier_agent::AgentKind::Symmetric,
        timestamps: vernier_agent::sys::TimestampMode::Hardware {
            interface: "eth0".into(),
        },
        poll: vernier_agent::PollMode::Adaptive,
        seed: 42,
        timeout: Duration::from_millis(250),
        duet: None,
    };
    let kv = |key_dist: &str| {
        vernier_agent::Workload::KeyValue(vernier_protocols::KvWorkload {
            keys: 10_000,
            key_size: "fixed:30".parse().expect("a valid spec"),
            value_size: "exp:200".parse().expect("a valid spec"),
            read_ratio: 0.9,
            key_dist: key_dist.parse().expect("a valid key distribution"),
            key: None,
        })
    };
    let configure = |spec: vernier_agent::LoadSpec| {
        wire::configure_request(&spec, TARGET, Duration::from_secs(10)).encode_to_vec()
    };
    let mut latency = vernier_agent::histogram();
    for value in [1_000, 12_345, 99_000, 5_000_000] {
        let _ = latency.record(value);
    }
    let batch = Batch {
        worker: 1,
        generation: 3,
        elapsed: Duration::from_millis(20),
        samples: vec![vernier_agent::Sample {
            latency_ns: 12_345,
            conn: 4,
            ..vernier_agent::Sample::default()
        }],
        probes: Vec::new(),
        interarrivals: vec![10, 20, 30],
        latency: latency.clone(),
        intended: latency.clone(),
        send_lag: vernier_agent::histogram(),
        served: latency.clone(),
        asked: latency,
        counts: Counters {
            sent: 5,
            received: 4,
            in_flight: 1,
            ..Counters::default()
        },
        stalls: vernier_agent::StallLog {
            intervals: vec![vernier_agent::StallInterval {
                start_ns: 1_000_000,
                end_ns: 3_400_000,
                core: Some(1),
                source: vernier_agent::StallSource::Probe,
            }],
            dropped: 0,
        },
    };
    let service = "exp:50us".parse().expect("a valid spec");
    vec![
        (
            "configure-synthetic",
            configure(spec(
                "synthetic",
                vernier_agent::Workload::Synthetic {
                    service,
                    probe: 0.0,
                },
            )),
        ),
        (
            "configure-echo",
            configure(spec("echo:64", vernier_agent::Workload::Echo)),
        ),
        (
            "configure-memcached",
            configure(spec("memcached", kv("zipf:0.99"))),
        ),
        (
            "configure-redis",
            configure(spec("redis", kv("round-robin"))),
        ),
        ("batch", pb::BatchMessage::from(&batch).encode_to_vec()),
        (
            "start-load",
            pb::StartLoadRequest {
                rate: 10_000.0,
                interarrival: "exp".into(),
            }
            .encode_to_vec(),
        ),
        (
            "start-measure",
            pb::StartMeasureRequest {
                sampling_rate: 0.2,
                generation: 2,
            }
            .encode_to_vec(),
        ),
        (
            "counters",
            pb::CountersReply {
                total: Some(batch.counts.into()),
                workers: vec![batch.counts.into(), Counters::default().into()],
            }
            .encode_to_vec(),
        ),
    ]
}
