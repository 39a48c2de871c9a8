//! What a scenario gets for a field it leaves out, in one place: validation applies these
//! to a file and to the scenario a URL builds (`vernier run memcached://HOST:PORT`) alike,
//! and `--print-scenario` lists the ones taken, so that what is printed is what runs.

use vernier_protocols::{KeyDist, KvWorkload, Protocol, SizeDist, WorkloadKind};
use vernier_stats::Percentile;

/// Worker threads per agent: one worker sent 200,000 req/s of small requests here
/// (README, `vernier bench-agent`), and every added worker is another core the host must
/// spare.
pub(crate) const WORKERS: usize = 1;

/// Connections per agent: enough that a burst of Poisson arrivals rarely finds all of them
/// busy at microsecond service times (the load would wait for a reply, closed-loop), few
/// enough for any server's connection limit.
pub(crate) const CONNECTIONS: usize = 16;

/// Outstanding requests per connection: one, as a client without pipelining sends them;
/// pipelining is a property of the client being modelled, so it is asked for, not assumed.
pub(crate) const DEPTH: usize = 1;

/// Poisson arrivals: the open-loop process of many independent clients.
pub(crate) const INTERARRIVAL: &str = "exp";

/// Kernel software timestamps: available on every Linux socket, loopback included, and
/// without the agent's own scheduling delay between the socket call and the wire.
pub(crate) const TIMESTAMPS: &str = "kernel";

/// Measurement rounds per load point before N/A: room for the resamples and extensions a
/// noisy host asks for, without chasing a CI that will not come.
pub(crate) const MAX_TRIES: u32 = 10;

/// Wall time per load point, warm-up included, before it answers with the CI at hand: a
/// first run of a one-liner answers within about a minute, and one that needs more says
/// how much more time its precision would take, which `--duration` (or `c` in the TUI)
/// gives (docs/history/results-2026-11-24-to-29.md, "An answer whenever the run has one").
pub(crate) const MAX_DURATION: &str = "1m";

/// A request unanswered this long fails: a thousand times a microsecond-scale service's
/// reply, short enough that a lost request does not hold its slot for long.
pub(crate) const TIMEOUT: &str = "1s";

/// The one seed, when the scenario gives none: runs are reproducible by default.
pub(crate) const SEED: u64 = 1;

/// The significance level of the checks' tests (Anderson-Darling, Spearman, ADF): one
/// chance in twenty of failing a check the data meet.
pub(crate) const ALPHA: f64 = 0.05;

/// How requests travel: TCP, as memcached, Redis and HTTP clients send them.
pub(crate) const TRANSPORT: &str = "tcp";

/// The procedure that decides a point: vernier's own (`lancet` asks for Lancet's).
pub(crate) const METHOD: &str = "vernier";

/// What a run does when an agent is lost: stop (the load no longer is what was asked).
pub(crate) const ON_AGENT_LOSS: &str = "stop";

/// Whether a failed check gates the answer: it does (`report` only says it).
pub(crate) const CHECK: &str = "enforce";

/// Runs of a replicated point: at the least ...
pub(crate) const REPLICATIONS_MIN: u32 = 3;

/// ... and at the most.
pub(crate) const REPLICATIONS_MAX: u32 = 10;

/// How wide the runs' combined CI may be.
pub(crate) const REPLICATIONS_WIDTH: &str = "1%";

/// The share of requests Lancet's procedure keeps (`method: lancet`; vernier's own keeps
/// what its CI needs).
pub(crate) const SAMPLING_RATE: f64 = 0.2;

/// Samples per agent in a first measuring round.
pub(crate) const SAMPLING_SAMPLES: usize = 10_000;

/// Inter-departure gaps per agent for the arrival test.
pub(crate) const INTERARRIVAL_SAMPLES: usize = 1_000;

/// Warm-up's windows: each this long ...
pub(crate) const WARMUP_WINDOW: &str = "50ms";

/// ... this many of them stationary (and the rate within the tolerance) ends warm-up ...
pub(crate) const WARMUP_WINDOWS: usize = 40;

/// ... the achieved rate within this share of the one asked ...
pub(crate) const WARMUP_TOLERANCE: f64 = 0.05;

/// ... or N/A after this long.
pub(crate) const WARMUP_MAX: &str = "30s";

/// The percentile whose CI is the answer: p99, the tail most service objectives name.
pub(crate) const CI_PERCENTILE: f64 = 99.0;

/// How wide its CI may be: a share of its value rather than a duration, since a target's
/// tail is not known before it is measured, and the same share holds at every load of a
/// sweep (TailBench states its targets this way).
pub(crate) const CI_WIDTH: &str = "20%";

/// The CI's confidence level.
pub(crate) const CI_CONFIDENCE: f64 = 0.95;

/// Reported besides the target percentile.
pub(crate) const PERCENTILES: [Percentile; 4] = [
    Percentile::P50,
    Percentile::P90,
    Percentile::P99,
    Percentile::P99_9,
];

/// The key-value workload of memcached and Redis when the scenario names none: 10,000 keys
/// of 30 bytes with 200-byte values (about 2.3 MB: it fits any server's memory yet is no
/// single hot key), 90% reads (a cache is read far more than written), keys chosen
/// uniformly. It is `memcached-10k.yaml`'s. Reads of a key not yet written miss, until the
/// writes have covered the key space (a few seconds at 10,000 req/s).
pub(crate) const KEY_VALUE: &str =
    "{keys: 10000, key_size: fixed:30, value_size: fixed:200, read_ratio: 0.9}";

/// A declared protocol's keys when the scenario names none: the default key-value
/// workload's, whose values and read ratio it does not use.
pub(crate) const KEYS: &str = "{keys: 10000, key_size: fixed:30}";

/// The default `workload:` of a protocol whose requests take one: its keys alone for a
/// declared protocol ([`KEYS`]), else the key-value workload ([`KEY_VALUE`]).
pub(crate) fn workload_for(kind: WorkloadKind) -> &'static str {
    match kind {
        WorkloadKind::Keys => KEYS,
        _ => KEY_VALUE,
    }
}

/// The default key-value workload ([`KEY_VALUE`]).
pub(crate) fn key_value() -> KvWorkload {
    KvWorkload {
        keys: 10_000,
        key_size: SizeDist::fixed(30),
        value_size: SizeDist::fixed(200),
        read_ratio: 0.9,
        key_dist: KeyDist::Uniform,
        key: None,
    }
}

/// The workload of an HTTP scenario that names `path` (without its leading `/`) and no
/// workload: that one key, read every time.
pub(crate) fn http_path(key: &str) -> KvWorkload {
    KvWorkload {
        keys: 1,
        read_ratio: 1.0,
        key: Some(key.to_owned()),
        ..key_value()
    }
}

/// The defaults `--print-scenario` lists for a scenario speaking `protocol`, each a dotted
/// field and its value as YAML, in the order the scenario's documentation lists them: the
/// fields people change, not every one (scenarios/README.md has them all).
pub(crate) fn listed(protocol: &Protocol) -> Vec<(&'static str, String)> {
    let mut all = Vec::new();
    match (protocol.workload(), protocol.entry().default_path) {
        (WorkloadKind::Service | WorkloadKind::Fixed, _) => {}
        (WorkloadKind::KeyValue, Some(path)) => all.push(("path", path.to_owned())),
        (kind, _) => all.push(("workload", workload_for(kind).to_owned())),
    }
    all.extend([
        ("agents", "[local]".to_owned()),
        ("workers", WORKERS.to_string()),
        ("connections", CONNECTIONS.to_string()),
        ("depth", DEPTH.to_string()),
        ("interarrival", INTERARRIVAL.to_owned()),
        ("ci.percentile", CI_PERCENTILE.to_string()),
        ("ci.width", CI_WIDTH.to_owned()),
        ("ci.confidence", CI_CONFIDENCE.to_string()),
        ("ci.tail", "without_stalls".to_owned()),
        (
            "percentiles",
            format!(
                "[{}]",
                PERCENTILES
                    .iter()
                    .map(|p| p.percent().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ),
        ("timestamps", TIMESTAMPS.to_owned()),
        ("limits.max_tries", MAX_TRIES.to_string()),
        ("limits.max_duration", MAX_DURATION.to_owned()),
        ("timeout", TIMEOUT.to_owned()),
        ("seed", SEED.to_string()),
    ]);
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_workload_is_written_as_it_is_typed() {
        let written: KvWorkload = serde_yaml::from_str(KEY_VALUE).unwrap();
        assert_eq!(written, key_value());
        assert_eq!(written.validate(), Ok(()));
        assert_eq!(http_path("index.html").validate(), Ok(()));
    }
}
