//! `vernier bench-agent --protocols`: what a declared protocol costs the agent against
//! the built-in protocol it imitates. Both speak to the same in-process echo server at the
//! same rate, request for request the same bytes on the wire: the built-in `echo:64`, and a
//! declared protocol whose request is a 4-byte length and 60 random bytes, framed by that
//! length. The worker's own CPU time (its thread's clock) per million requests is the
//! measure; rounds alternate the two so that a drift of the host reaches both, and the
//! ratio of their medians is the answer.

use std::time::Duration;

use serde::Serialize;
use vernier_agent::sys::{TimestampMode, Transport};
use vernier_agent::{AgentKind, LoadSpec, PollMode, Workload};
use vernier_fixtures::{ServeConfig, ServeProtocol, Server};
use vernier_protocols::{KeyDist, KvWorkload, Protocol, SizeDist};

use crate::load::{Batches, Load, run_load};

/// What the comparison is run with, from `vernier bench-agent`'s options.
pub(super) struct Options {
    /// The rate of every round, requests/s.
    pub rate: f64,
    /// How long each round loads.
    pub round: Duration,
    /// The worker's core, and the server's.
    pub agent_cpu: usize,
    pub server_cpu: usize,
    /// The worker's connections.
    pub connections: usize,
}

/// The declared twin of `echo:64`: a length prefix and 60 random bytes, 64 in all.
const DECLARED_ECHO: &str = "
framing: {length: {bytes: 4}}
requests: [{text: '{len:u32be}{random:fixed:60}'}]
";

/// Rounds of each protocol, alternated.
const ROUNDS: usize = 5;

/// One protocol's rounds.
#[derive(Debug, Serialize)]
pub(super) struct Cost {
    /// The protocol, as a scenario writes it (`declared` for the declared one).
    protocol: String,
    /// Worker CPU seconds per million requests, each round.
    cpu_s_per_million: Vec<f64>,
    /// Their median.
    median: f64,
    /// Requests answered in all rounds, and those that failed.
    received: u64,
    failed: u64,
}

/// The comparison.
#[derive(Debug, Serialize)]
pub(super) struct ProtocolCost {
    rate: f64,
    round_s: f64,
    built_in: Cost,
    declared: Cost,
    /// declared / built-in, of the medians.
    ratio: f64,
    /// The protocol layer alone, in this thread: ns to encode a request and parse its
    /// reply (the request's own bytes, as the echo server returns them), built-in then
    /// declared, each the median of five runs of 200,000.
    encode_parse_ns: [f64; 2],
}

/// Runs the rounds and says each on stderr.
pub(super) fn run(args: &Options) -> Result<ProtocolCost, String> {
    let failed = |e: &dyn std::fmt::Display| e.to_string();
    let mut config = ServeConfig::new(
        "127.0.0.1:0".parse().map_err(|e| failed(&e))?,
        ServeProtocol::Echo,
    );
    config.cpus = Some(vec![args.server_cpu]);
    let server = Server::start(config).map_err(|e| failed(&e))?;
    let declared: Protocol = serde_yaml::from_str(DECLARED_ECHO).map_err(|e| failed(&e))?;
    let built_in: Protocol = "echo:64".parse().map_err(|e| failed(&e))?;
    let rate = args.rate;
    let mut rounds = [Vec::new(), Vec::new()];
    let mut totals = [(0, 0); 2];
    for round in 0..ROUNDS {
        // Alternate which goes first, so that neither always follows the other.
        let order = if round % 2 == 0 { [0, 1] } else { [1, 0] };
        for which in order {
            let protocol = [&built_in, &declared][which];
            let w = run_load(
                spec(args, server.local_addr(), protocol),
                Load {
                    rate,
                    duration: args.round,
                    sampling: 0.0,
                    batches: Batches::Recycled,
                },
            )
            .map_err(|e| failed(&e))?;
            let c = &w.counters;
            let cost = c.cpu_ns as f64 / 1e9 / (c.received.max(1) as f64 / 1e6);
            eprintln!(
                "protocols: round {} {:>8}: {:.3} CPU s per million requests ({} answered, {} failed)",
                round + 1,
                protocol.name(),
                cost,
                c.received,
                c.failed
            );
            rounds[which].push(cost);
            totals[which].0 += c.received;
            totals[which].1 += c.failed;
        }
    }
    let _ = server.stop();
    let [built, decl] = rounds;
    let cost = |protocol: &Protocol, costs: Vec<f64>, (received, failed)| Cost {
        protocol: protocol.to_string(),
        median: median(&costs),
        cpu_s_per_million: costs,
        received,
        failed,
    };
    let (built_in_protocol, declared_protocol) = (built_in, declared);
    let built_in = cost(&built_in_protocol, built, totals[0]);
    let declared = cost(&declared_protocol, decl, totals[1]);
    let ratio = declared.median / built_in.median;
    let encode_parse_ns = [
        encode_parse_ns(&built_in_protocol),
        encode_parse_ns(&declared_protocol),
    ];
    eprintln!(
        "protocols: encode and parse alone: {:.0} ns built-in, {:.0} ns declared per request",
        encode_parse_ns[0], encode_parse_ns[1]
    );
    eprintln!(
        "protocols: declared / built-in CPU per request: {ratio:.3} (medians {:.3} and {:.3} s per million)",
        declared.median, built_in.median
    );
    Ok(ProtocolCost {
        rate,
        round_s: args.round.as_secs_f64(),
        built_in,
        declared,
        ratio,
        encode_parse_ns,
    })
}

/// The median of five runs of 200,000 encodes and parses of `protocol`'s request, ns each.
fn encode_parse_ns(protocol: &Protocol) -> f64 {
    const N: u32 = 200_000;
    let mut out = Vec::with_capacity(256);
    let runs: Vec<f64> = (0..5)
        .map(|_| {
            let started = std::time::Instant::now();
            for seq in 0..N {
                out.clear();
                let request = vernier_protocols::Request::Template {
                    index: 0,
                    key: b"k",
                    entropy: u64::from(seq),
                };
                if protocol.encode(&request, seq, &mut out).is_err()
                    || !matches!(protocol.parse(std::hint::black_box(&out)), Ok(Some(_)))
                {
                    return f64::NAN;
                }
            }
            started.elapsed().as_nanos() as f64 / f64::from(N)
        })
        .collect();
    median(&runs)
}

fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    match sorted.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => sorted[n / 2],
        n => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}

/// One worker on the agent's core speaking `protocol` to the echo server at `target`.
fn spec(args: &Options, target: std::net::SocketAddr, protocol: &Protocol) -> LoadSpec {
    let workload = if protocol.is_declared() {
        Workload::KeyValue(KvWorkload {
            keys: 1,
            key_size: SizeDist::fixed(1),
            value_size: SizeDist::fixed(0),
            read_ratio: 1.0,
            key_dist: KeyDist::Uniform,
            key: None,
        })
    } else {
        Workload::Echo
    };
    LoadSpec {
        poll: PollMode::Sleep,
        target,
        transport: Transport::Tcp,
        protocol: protocol.clone(),
        workload,
        workers: 1,
        cpus: vec![args.agent_cpu],
        connections: args.connections,
        depth: 1,
        kind: AgentKind::Symmetric,
        timestamps: TimestampMode::Kernel,
        seed: 1,
        timeout: Duration::from_secs(1),
        duet: None,
    }
}
