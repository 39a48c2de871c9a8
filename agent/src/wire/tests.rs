//! Tests of `wire`.

use super::*;
use crate::measure::RequestKind;

/// One worker, one connection, user timestamps: a load to send over the wire.
fn one_connection(target: SocketAddr, protocol: Protocol, workload: Workload) -> LoadSpec {
    LoadSpec {
        target,
        transport: Transport::Tcp,
        protocol,
        workload,
        workers: 1,
        cpus: Vec::new(),
        connections: 1,
        depth: 1,
        kind: AgentKind::Symmetric,
        timestamps: TimestampMode::User,
        poll: PollMode::default(),
        seed: 1,
        timeout: Duration::from_secs(1),
        duet: None,
    }
}

#[test]
fn a_named_key_reaches_the_agent() {
    let kv = KvWorkload {
        keys: 1,
        key_size: Dist::fixed(1),
        value_size: Dist::fixed(1),
        read_ratio: 1.0,
        key_dist: KeyDist::Uniform,
        key: Some("index.html".into()),
    };
    let target = SocketAddr::from(([127, 0, 0, 1], 8080));
    for key in [kv.key.clone(), Some(String::new()), None] {
        let workload = Workload::KeyValue(KvWorkload {
            key: key.clone(),
            ..kv.clone()
        });
        let spec = one_connection(target, Protocol::http(), workload);
        let request = configure_request(&spec, "127.0.0.1:8080", Duration::from_secs(5));
        let (received, _) = load_spec(&request, target).unwrap();
        assert_eq!(received.workload, spec.workload, "{key:?}");
    }
}

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
            busy_ns: 8,
            in_flight: 9,
        }],
        probes: vec![Sample {
            departure_ns: 5,
            latency_ns: 6,
            queueing_ns: 7,
            conn: 1,
            request: RequestKind::Probe as u8,
            outcome: 2,
            ..Sample::default()
        }],
        interarrivals: vec![10, 20],
        latency,
        few: crate::measure::Few {
            latency: vec![12_345],
            ..Default::default()
        },
        intended: crate::measure::histogram(),
        send_lag: crate::measure::histogram(),
        served: {
            let mut served = crate::measure::histogram();
            served.record(20_017).unwrap();
            served
        },
        asked: {
            let mut asked = crate::measure::histogram();
            asked.record(20_000).unwrap();
            asked
        },
        generation: 7,
        counts: Counters {
            sent: 6,
            received: 4,
            in_flight: 1,
            retried: 1,
            probes_sent: 2,
            probes_received: 1,
            ..Counters::default()
        },
        stalls: StallLog {
            intervals: vec![
                StallInterval {
                    start_ns: 1_000,
                    end_ns: 2_501_000,
                    core: Some(3),
                    source: StallSource::Spin,
                },
                StallInterval {
                    start_ns: 4_000_000,
                    end_ns: 4_800_000,
                    core: None,
                    source: StallSource::Probe,
                },
            ],
            dropped: 9,
        },
    };
    let back = Batch::try_from(pb::BatchMessage::from(&batch)).unwrap();
    assert_eq!(back.stalls, batch.stalls);
    assert_eq!(back.samples, batch.samples);
    assert_eq!(back.probes, batch.probes);
    assert_eq!(back.served, batch.served);
    assert_eq!(back.asked, batch.asked);
    assert_eq!(back.interarrivals, batch.interarrivals);
    assert_eq!(back.counts, batch.counts);
    assert_eq!(back.generation, 7);
    assert_eq!(back.latency.len(), 1);
    // The values kept beside the histograms stay home: the remote batch merges whole.
    assert_eq!(back.few, crate::measure::Few::default());
    assert_eq!(
        back.latency.value_at_quantile(0.5),
        batch.latency.value_at_quantile(0.5)
    );
}

#[test]
fn a_stall_that_ends_before_it_starts_or_of_no_known_source_is_an_error() {
    let stall = |start_ns, end_ns, source| pb::BatchMessage {
        counts: Some(Default::default()),
        sample_bytes: SAMPLE_BYTES as u32,
        stalls: vec![pb::Stall {
            start_ns,
            end_ns,
            core: Some(1),
            source,
        }],
        ..Default::default()
    };
    let e = Batch::try_from(stall(10, 9, 0)).unwrap_err().to_string();
    assert_eq!(e, "stalls: stall 0 ends at 9 ns, before it starts at 10 ns");
    let e = Batch::try_from(stall(10, 20, 7)).unwrap_err().to_string();
    assert_eq!(e, "stalls: stall 0: unknown source 7");
    // More than the cap: the rest are counted, not kept.
    let mut many = stall(10, 20, 1);
    many.stalls = vec![many.stalls[0]; crate::MAX_INTERVALS + 2];
    many.stalls_dropped = 1;
    let back = Batch::try_from(many).unwrap().stalls;
    assert_eq!(
        (back.intervals.len(), back.dropped),
        (crate::MAX_INTERVALS, 3)
    );
}

/// An agent of another build (whose samples are laid out otherwise, or that does not say
/// how) is refused with what to do, not read as garbage samples.
#[test]
fn samples_laid_out_otherwise_are_refused() {
    for theirs in [0, 24] {
        let m = pb::BatchMessage {
            samples: vec![0; 96],
            sample_bytes: theirs,
            counts: Some(Default::default()),
            ..Default::default()
        };
        let e = Batch::try_from(m).unwrap_err();
        assert!(matches!(e, WireError::SampleLayout { theirs: t } if t == theirs));
        assert!(e.to_string().contains("same vernier build"), "{e}");
    }
}

#[test]
fn garbage_is_an_error_not_a_panic() {
    let m = pb::BatchMessage {
        samples: vec![0; 25],
        sample_bytes: SAMPLE_BYTES as u32,
        ..Default::default()
    };
    assert!(matches!(
        Batch::try_from(m),
        Err(WireError::Samples {
            field: "samples",
            len: 25
        })
    ));
    let m = pb::BatchMessage {
        probes: vec![0; 30],
        counts: Some(Default::default()),
        sample_bytes: SAMPLE_BYTES as u32,
        ..Default::default()
    };
    let e = Batch::try_from(m).unwrap_err();
    assert_eq!(
        e.to_string(),
        "probes field of 30 bytes is not a multiple of 32"
    );
    let m = pb::BatchMessage {
        latency: vec![1, 2, 3],
        counts: Some(Default::default()),
        sample_bytes: SAMPLE_BYTES as u32,
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

/// Found by the `decode_control` fuzz target (agent/fuzz): the `intended` histogram's
/// header claims a payload of 4,283,432,972 bytes, which hdrhistogram allocated; then a
/// payload that made it panic (where overflow is checked).
#[test]
fn compressed_histograms_read_as_interval_logs_carry_them() {
    let mut h = crate::measure::histogram();
    for v in [1_000, 25_000, 3_000_000] {
        h.record(v).unwrap();
    }
    let mut compressed = Vec::new();
    hdrhistogram::serialization::V2DeflateSerializer::new()
        .serialize(&h, &mut compressed)
        .unwrap();
    assert_eq!(read_histogram(&compressed).unwrap(), h);
    assert_eq!(read_histogram(&encode_histogram(&h)).unwrap(), h);
    // A compressed header over garbage, and a compressed 4 GB claim: errors.
    let mut garbage = compressed[..8].to_vec();
    garbage.extend_from_slice(b"not zlib at all");
    assert!(read_histogram(&garbage).is_err());
    let mut claim = encode_histogram(&h);
    claim[4..8].copy_from_slice(&u32::MAX.to_be_bytes());
    let mut packed = Vec::new();
    {
        use std::io::Write;
        let mut z = flate2::write::ZlibEncoder::new(&mut packed, flate2::Compression::default());
        z.write_all(&claim).unwrap();
        z.finish().unwrap();
    }
    let mut hostile = V2_COMPRESSED_COOKIE.to_be_bytes().to_vec();
    hostile.extend_from_slice(&(packed.len() as u32).to_be_bytes());
    hostile.extend_from_slice(&packed);
    let err = read_histogram(&hostile).unwrap_err();
    assert!(err.contains("claimed"), "{err}");
}

#[test]
fn fuzzed_histograms_are_errors_not_allocations_or_panics() {
    use prost::Message;
    let fuzzed = b"\x08\x01\x10\x80\xda\xc4\x09\x1a\x18\0\0\0\0\0\0\0\090\0\
        \0\0\0\0\0\0\0\0\0\x04\0\0\0\"\x03\x0a\x14\x1e*4\
        \x1c\x84\x93\x13\0\0\0\x0c\0\0\0\0\0\0\0\x03\0\0\0\0\
        \0\0\0\x01\0\0\0\x17Hv\xe8\0?\xf0\0\0\0\0\0\0\
        \xcf\x0f\x02\xbb0\x02\x830\x02\xf1Z\x0224\x1c\x84\x93\x13\xffP\
        \0\x0c\0\0\0\0\0\0\0\x03\0\0\0\0\0\0\0\x01\0\0\
        \0PHv\xe8\0?\xf0\0\0\0\0\0\0\xcf\x0f\x02\xbb9\x02\
        \x830\x02\xf1Z\x09:)\x1c\x84\x93\x134\0\0\0\0\0\0\0\
        \0\0\0\x03\0\0\0\0\0\0\0\x01\0\0\0\x17Hv\xe8\0\
        ?\xf0\0\0\0\0\0\0\0H\x03R\x06\x08\x05\x10\x04 \x01";
    let mut m = pb::BatchMessage::decode(&fuzzed[..]).unwrap();
    // Found before samples were 32 bytes and said so: the histograms are what is tested.
    (m.samples, m.sample_bytes) = (Vec::new(), SAMPLE_BYTES as u32);
    assert_eq!(m.intended.len(), 52);
    let error = Batch::try_from(m).unwrap_err().to_string();
    assert_eq!(
        error,
        "intended histogram: a payload of 4283432972 bytes claimed in 52 bytes"
    );
    // Found next: a zero run of i64::MIN, which hdrhistogram negates.
    let fuzzed = b"\x08\x01\x10\x80\xda\x0224\x1c\x84\x93\x13\0\0\0\x0c\0\0\0\0\
        \0\0\0\x03\0\0\0\0\0\0\xff\0\xff\xf8\0\x17Hv\xe8\0\
        ?\xf0\0\0\0\0\0\0\xff\xff\xff\xff\xff\xff\xff\xff\xff\xda\xc4\x09\
        \x1a\x18\0\0Hv\xe8\0?\xf0\0@\0\0\0H\x03R\xe7\x06\
        \x08\x05\x10\x04\x20\x01";
    let mut m = pb::BatchMessage::decode(&fuzzed[..]).unwrap();
    // Found before samples were 32 bytes and said so: the histograms are what is tested.
    (m.samples, m.sample_bytes) = (Vec::new(), SAMPLE_BYTES as u32);
    assert_eq!(
        Batch::try_from(m).unwrap_err().to_string(),
        "intended histogram: a run of 2^63 empty buckets"
    );
    // A header cut short is an error too.
    assert!(decode_histogram("latency", &V2_COOKIE.to_be_bytes()).is_err());
    assert!(decode_histogram("latency", &[0x1c, 0x84, 0x93, 0x13, 0, 0, 0, 0]).is_err());
    // What the agent itself writes still decodes.
    let mut h = crate::measure::histogram();
    h.record(12_345).unwrap();
    let m = pb::BatchMessage {
        latency: encode_histogram(&h),
        counts: Some(Default::default()),
        sample_bytes: SAMPLE_BYTES as u32,
        ..Default::default()
    };
    assert_eq!(Batch::try_from(m).unwrap().latency, h);
}

/// A gRPC method travels to a remote agent as its mapping, descriptors included: the agent
/// needs none of the user's files, and a TLS CA travels as its PEM text.
#[test]
fn a_grpc_method_reaches_the_agent_with_its_descriptors() {
    let proto =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/grpc/bench.proto");
    let mut compiler = protox::Compiler::new([proto.parent().unwrap()]).unwrap();
    compiler.include_imports(true).open_file(&proto).unwrap();
    let descriptors = compiler.encode_file_descriptor_set();
    let target = SocketAddr::from(([127, 0, 0, 1], 50051));
    let tls = vernier_protocols::grpc::TlsMapping {
        ca_pem: None,
        server_name: Some("api.test".into()),
    };
    for tls in [None, Some(tls)] {
        let protocol = vernier_protocols::grpc::Grpc::protocol(
            &descriptors,
            "bench.Echo/Call",
            r#"{"key": "{key}", "seq": "{seq}"}"#,
            "127.0.0.1:50051",
            tls,
        );
        // Without a CA of its own, TLS takes the system's (tests/env.sh installs them).
        let protocol = protocol.unwrap_or_else(|e| panic!("{e}"));
        let keys = Workload::KeyValue(KvWorkload {
            keys: 10,
            key_size: Dist::fixed(8),
            value_size: Dist::fixed(0),
            read_ratio: 1.0,
            key_dist: KeyDist::Uniform,
            key: None,
        });
        let spec = one_connection(target, protocol, keys);
        let request = configure_request(&spec, "127.0.0.1:50051", Duration::from_secs(5));
        let sent = request.protocol.as_ref().unwrap();
        assert!(sent.spec.is_empty() && sent.declared.contains("descriptors"));
        let (received, _) = load_spec(&request, target).unwrap();
        assert_eq!(received.protocol, spec.protocol);
        assert!(received.protocol.keeps_state());
    }
}

/// The arrival process travels typed and comes back the same; a request from a coordinator
/// that sent it as text is read from the text, and none at all is exponential.
#[test]
fn an_arrival_process_round_trips_and_the_old_text_is_read() {
    let request = |arrival: Option<pb::Arrival>, text: &str| pb::StartLoadRequest {
        rate: 1000.0,
        interarrival: text.into(),
        arrival,
    };
    for spec in ["exp", "fixed", "lognormal:1us:2", "pareto:10us:2.5"] {
        let process: InterArrival = spec.parse().unwrap();
        let typed = request(Some(arrival(&process)), "");
        assert_eq!(interarrival_of(&typed).unwrap(), process, "{spec}");
        assert_eq!(
            interarrival_of(&request(None, spec)).unwrap(),
            process,
            "{spec}"
        );
    }
    assert_eq!(
        interarrival_of(&request(None, "")).unwrap(),
        InterArrival::Exp
    );
    let errors = [
        request(Some(pb::Arrival { process: None }), ""),
        request(
            Some(pb::Arrival {
                process: Some(pb::arrival::Process::Shaped("often".into())),
            }),
            "",
        ),
        request(None, "lognormal:0us:2"),
    ];
    for bad in errors {
        let e = interarrival_of(&bad).unwrap_err().to_string();
        assert!(e.contains("arrival") || e.contains("interarrival"), "{e}");
    }
}

/// The timestamp source in use travels typed in the Configure reply; a reply from an agent
/// that sent it only as text is read from the text.
#[test]
fn the_timestamp_source_round_trips_and_the_old_text_is_read() {
    let lease = Duration::from_secs(10);
    for mode in [
        TimestampMode::Kernel,
        TimestampMode::User,
        TimestampMode::Hardware {
            interface: "eth0".into(),
        },
    ] {
        let reply = configure_reply("1".into(), &mode, 4, lease);
        assert_eq!(reply_timestamps(&reply).unwrap(), mode);
        let older = pb::ConfigureReply {
            source: None,
            source_interface: String::new(),
            ..reply
        };
        assert_eq!(reply_timestamps(&older).unwrap(), mode);
    }
    let unknown = pb::ConfigureReply {
        source: Some(7),
        ..configure_reply("1".into(), &TimestampMode::User, 1, lease)
    };
    let e = reply_timestamps(&unknown).unwrap_err().to_string();
    assert!(e.contains("source"), "{e}");
}
