//! The scenario loader as a user meets it: the example files, the defaults, overrides, and
//! the exact message of each kind of mistake.

use std::path::{Path, PathBuf};
use std::time::Duration;

use vernier_agent::sys::{TimestampMode, Transport};
use vernier_agent::{AgentKind, Workload};
use vernier_protocols::{InterArrival, Protocol};

use super::*;

/// The percentiles in percent, as the scenario wrote them.
fn percents(percentiles: &[vernier_stats::Percentile]) -> Vec<f64> {
    percentiles.iter().map(|p| p.percent()).collect()
}

/// The smallest valid scenario: the required fields only.
const MINIMAL: &str = "\
name: minimal
target: 127.0.0.1:7000
protocol: synthetic
service: exp:20us
load: 20000
ci: {percentile: 99, width: 10us}
";

fn scenarios_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios")
}

fn parse(yaml: &str, overrides: &[&str]) -> Result<Scenario, ScenarioError> {
    let overrides: Vec<Override> = overrides
        .iter()
        .map(|o| o.parse().unwrap_or_else(|e| panic!("{o}: {e}")))
        .collect();
    Scenario::from_yaml(yaml, Some(Path::new("bad.yaml")), &overrides)
}

fn valid(yaml: &str, overrides: &[&str]) -> Scenario {
    parse(yaml, overrides).unwrap_or_else(|e| panic!("should be valid: {e}\n{yaml}"))
}

#[test]
fn every_example_loads_and_validates() {
    let mut names = Vec::new();
    for entry in std::fs::read_dir(scenarios_dir()).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "yaml") {
            let scenario =
                Scenario::load(&path, &[]).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert_eq!(scenario.source.as_deref(), Some(path.as_path()));
            assert_eq!(scenario.yaml, std::fs::read_to_string(&path).unwrap());
            names.push(path.file_name().unwrap().to_string_lossy().into_owned());
        }
    }
    names.sort();
    assert_eq!(
        names,
        [
            "demo.yaml",
            "framed.yaml",
            "grpc.yaml",
            "http.yaml",
            "memcached-10k-halt-poll.yaml",
            "memcached-10k.yaml",
            "memcached-replicated.yaml",
            "memcached.yaml",
            "redis-declared.yaml",
            "redis.yaml",
            "remote-agents.yaml",
            "synthetic-exp.yaml",
            "synthetic-slo.yaml",
            "synthetic-sweep.yaml"
        ]
    );
}

#[test]
fn examples_mean_what_their_comments_say() {
    let load = |name: &str| Scenario::load(&scenarios_dir().join(name), &[]).unwrap();
    let demo = load("demo.yaml");
    assert_eq!(demo.load, LoadPlan::Sweep(vec![2000.0, 3000.0, 4000.0]));
    assert_eq!(demo.replications, None);
    assert_eq!(
        load("memcached-replicated.yaml").replications,
        Some(Replications {
            min: 3,
            max: 6,
            width: CiWidth::Relative(0.1),
            pause: Duration::from_secs(2),
        })
    );
    // Unstated, the runs' fields take their defaults: 3 to 10 runs, 1%, no pause.
    assert_eq!(
        valid(&edit(MINIMAL, "replications: {}\n"), &[]).replications,
        Some(Replications {
            min: 3,
            max: 10,
            width: CiWidth::Relative(0.01),
            pause: Duration::ZERO,
        })
    );
    assert_eq!(demo.ci.width, CiWidth::Relative(0.2));
    assert_eq!(demo.sampling.samples, 5000);
    assert_eq!(demo.limits.max_duration, Duration::from_secs(19));
    assert_eq!(demo.ci.tail, Tail::WithoutStalls);
    assert_eq!(
        load("synthetic-sweep.yaml").load,
        LoadPlan::Sweep((1..=8).map(|i| i as f64 * 10_000.0).collect())
    );
    let remote = load("remote-agents.yaml");
    assert_eq!(
        remote.agents,
        [
            AgentSpec::Remote {
                address: "10.0.0.21:5001".into(),
                token_env: "VERNIER_TOKEN_A".into(),
                tls_ca: Some(scenarios_dir().join("certs/lab-ca.pem")),
                tls_name: None,
                kind: AgentKind::Throughput
            },
            AgentSpec::Remote {
                address: "10.0.0.22:5001".into(),
                token_env: "VERNIER_TOKEN_B".into(),
                tls_ca: None,
                tls_name: None,
                kind: AgentKind::Latency
            }
        ]
    );
    assert_eq!(remote.on_agent_loss, crate::scenario::OnAgentLoss::Continue);
    assert_eq!(load("http.yaml").protocol, Protocol::http());
    let memcached = load("memcached-10k.yaml");
    assert_eq!(memcached.load, LoadPlan::Fixed(10_000.0));
    assert_eq!(
        (
            memcached.workers,
            memcached.cpus.as_slice(),
            memcached.connections
        ),
        (1, &[1][..], 4)
    );
    assert_eq!(memcached.agents.len(), 1);
    assert_eq!(memcached.interarrival, InterArrival::Exp);
    assert_eq!(memcached.ci.width, CiWidth::Relative(0.2));
    assert_eq!(memcached.limits.max_duration, Duration::from_secs(120));
    assert_eq!(memcached.timestamps, TimestampMode::Kernel);
    assert_eq!(memcached.method, Method::Vernier);
    assert_eq!(memcached.halt_poll, None);
    // The same scenario, with the guest's halt polling set for the run.
    let halt_poll = load("memcached-10k-halt-poll.yaml");
    assert_eq!(halt_poll.halt_poll, Some(Duration::from_micros(200)));
    assert_eq!(
        Scenario {
            name: memcached.name.clone(),
            halt_poll: None,
            source: memcached.source.clone(),
            yaml: memcached.yaml.clone(),
            ..halt_poll
        },
        memcached
    );
    let LoadPlan::Slo(slo) = load("synthetic-slo.yaml").load else {
        panic!("an SLO search");
    };
    assert_eq!(
        slo,
        SloSearch {
            percentile: vernier_stats::Percentile::P99,
            below: Duration::from_micros(300),
            from: 1000.0,
            to: 60_000.0,
            precision: 0.02
        }
    );
}

#[test]
fn unstated_fields_take_their_defaults() {
    let s = valid(MINIMAL, &[]);
    assert_eq!(s.name, "minimal");
    assert_eq!(s.source.as_deref(), Some(Path::new("bad.yaml")));
    assert_eq!(s.yaml, MINIMAL);
    assert_eq!(s.targets, ["127.0.0.1:7000"]);
    assert_eq!(s.protocol, Protocol::synthetic());
    assert_eq!(
        s.workload,
        Workload::Synthetic {
            service: "exp:20us".parse().unwrap(),
            probe: 0.0,
        }
    );
    assert_eq!(s.transport, Transport::Tcp);
    assert_eq!(
        s.agents,
        [AgentSpec::Local {
            kind: AgentKind::Symmetric
        }]
    );
    assert_eq!((s.workers, s.connections, s.depth), (1, 16, 1));
    assert!(s.cpus.is_empty());
    assert_eq!(s.interarrival, InterArrival::Exp);
    assert_eq!(s.load, LoadPlan::Fixed(20_000.0));
    assert_eq!(
        s.ci,
        CiTarget {
            percentile: vernier_stats::Percentile::P99,
            width: CiWidth::Absolute(Duration::from_micros(10)),
            confidence: 0.95,
            tail: Tail::WithoutStalls,
        }
    );
    assert_eq!(percents(&s.percentiles), [50.0, 90.0, 99.0, 99.9]);
    assert_eq!(s.timestamps, TimestampMode::Kernel);
    assert_eq!(
        s.limits,
        Limits {
            max_tries: 10,
            max_duration: Duration::from_secs(60)
        }
    );
    assert_eq!(
        s.sampling,
        Sampling {
            rate: 0.2,
            samples: 10_000,
            interarrival_samples: 1_000
        }
    );
    assert_eq!(
        s.warmup,
        Warmup {
            window: Duration::from_millis(50),
            windows: 40,
            tolerance: 0.05,
            max: Duration::from_secs(30)
        }
    );
    assert_eq!(s.alpha, 0.05);
    assert_eq!(s.timeout, Duration::from_secs(1));
    assert_eq!(s.seed, 1);
    assert_eq!(s.method, Method::Vernier);
}

#[test]
fn key_value_protocols_without_a_workload_take_the_default() {
    for protocol in ["memcached", "memcached-binary", "redis"] {
        let s = valid(
            &edit(
                MINIMAL,
                &format!("-protocol: synthetic\n-service: exp:20us\nprotocol: {protocol}\n"),
            ),
            &[],
        );
        assert_eq!(
            s.workload,
            Workload::KeyValue(defaults::key_value()),
            "{protocol}"
        );
        assert!(s.default_workload);
        assert_eq!(
            s.default_workload_note().unwrap(),
            "the default key-value workload, {keys: 10000, key_size: fixed:30, value_size: \
             fixed:200, read_ratio: 0.9} (a file's workload:, or --keys, --key-size, \
             --value-size, --read-ratio, --key-dist with a URL, names another)"
        );
    }
    // HTTP asks GET / (wrk's default), or the one path named.
    let http = |path: &str| {
        valid(
            &edit(
                MINIMAL,
                &format!("-protocol: synthetic\n-service: exp:20us\nprotocol: http\n{path}"),
            ),
            &[],
        )
    };
    let s = http("");
    assert_eq!(s.workload, Workload::KeyValue(defaults::http_path("")));
    assert!(
        s.default_workload_note()
            .unwrap()
            .starts_with("GET / on every request")
    );
    let s = http("path: /api/items?id=7\n");
    assert_eq!(
        s.workload,
        Workload::KeyValue(defaults::http_path("api/items?id=7"))
    );
    assert!(!s.default_workload);
    // A workload named is no default; synthetic and echo have none to take.
    let s = valid(
        &edit(
            MINIMAL,
            "-protocol: synthetic\n-service: exp:20us\nprotocol: redis\nworkload: {keys: 5, \
             key_size: fixed:8, value_size: fixed:8, read_ratio: 1}\n",
        ),
        &[],
    );
    assert!(!s.default_workload && s.default_workload_note().is_none());
    assert!(!valid(MINIMAL, &[]).default_workload);
}

#[test]
fn the_answer_wanted_defaults_to_p99_within_20_percent() {
    let without = |change: &str| valid(&edit(MINIMAL, change), &[]).ci;
    let p99_20 = CiTarget {
        percentile: vernier_stats::Percentile::P99,
        width: CiWidth::Relative(0.2),
        confidence: 0.95,
        tail: Tail::WithoutStalls,
    };
    assert_eq!(without("-ci: {percentile: 99, width: 10us}"), p99_20);
    assert_eq!(
        without("-ci: {percentile: 99, width: 10us}\nci: {percentile: 99.9}\n"),
        CiTarget {
            percentile: vernier_stats::Percentile::P99_9,
            ..p99_20
        }
    );
    assert_eq!(
        without("-ci: {percentile: 99, width: 10us}\nci: {width: 5us}\n").width,
        CiWidth::Absolute(Duration::from_micros(5))
    );
}

#[test]
fn stated_fields_are_typed() {
    let s = valid(
        "name: full
target: [10.0.0.1:11211, '[::1]:11211']
protocol: memcached-binary:getk
workload: {keys: 10, key_size: fixed:8, value_size: fixed:100, read_ratio: 0.5}
transport: udp
agents:
  - local
  - {local: {kind: latency}}
  - {ssh: bench@host2, kind: throughput}
  - {address: 'host3:5001'}
workers: 2
cpus: [0, 1]
target_cpus: [3]
connections: 4
depth: 8
interarrival: lognormal:1us:0.5
load: [1k, 2.5k, 3000]
ci: {percentile: 99.9, width: 1.5us, confidence: 0.99}
percentiles: [99, 50, 99, 25]
timestamps: hw
interface: eth0
limits: {max_tries: 3, max_duration: 1.5m}
sampling: {rate: 1, samples: 100, interarrival_samples: 50}
warmup: {window: 100ms, windows: 10, tolerance: 0.1, max: 1s}
alpha: 0.01
timeout: 250ms
seed: 42
method: lancet
",
        &[],
    );
    assert_eq!(s.targets, ["10.0.0.1:11211", "[::1]:11211"]);
    assert_eq!(s.protocol, Protocol::memcached_binary(true));
    assert_eq!(s.transport, Transport::Udp);
    assert_eq!(
        s.agents,
        [
            AgentSpec::Local {
                kind: AgentKind::Symmetric
            },
            AgentSpec::Local {
                kind: AgentKind::Latency
            },
            AgentSpec::Ssh {
                host: "bench@host2".into(),
                kind: AgentKind::Throughput
            },
            AgentSpec::Remote {
                address: "host3:5001".into(),
                token_env: "VERNIER_TOKEN".into(),
                tls_ca: None,
                tls_name: None,
                kind: AgentKind::Symmetric
            },
        ]
    );
    assert_eq!(s.load, LoadPlan::Sweep(vec![1000.0, 2500.0, 3000.0]));
    // The target percentile joins the list; sorted, each once.
    assert_eq!(percents(&s.percentiles), [25.0, 50.0, 99.0, 99.9]);
    assert_eq!(
        s.timestamps,
        TimestampMode::Hardware {
            interface: "eth0".into()
        }
    );
    assert_eq!(s.limits.max_duration, Duration::from_secs(90));
    assert_eq!(s.ci.width, CiWidth::Absolute(Duration::from_nanos(1500)));
    assert_eq!(s.method, Method::Lancet);
    assert_eq!(
        (s.workers, s.cpus.as_slice(), s.depth, s.seed),
        (2, &[0, 1][..], 8, 42)
    );
    assert_eq!(s.target_cpus, [3]);
}

#[test]
fn ci_widths_are_durations_or_shares_of_the_value() {
    let width = |w: &str| {
        valid(&MINIMAL.replace("width: 10us", &format!("width: {w}")), &[])
            .ci
            .width
    };
    assert_eq!(width("20%"), CiWidth::Relative(0.2));
    assert_eq!(width("2.5%"), CiWidth::Relative(0.025));
    assert_eq!(width("'12.5 %'"), CiWidth::Relative(0.125));
    assert_eq!(
        width("1.5ms"),
        CiWidth::Absolute(Duration::from_micros(1500))
    );

    // A relative target scales with the estimate; an absolute one ignores it.
    assert!((CiWidth::Relative(0.2).target_us(300.0) - 60.0).abs() < 1e-9);
    assert!(CiWidth::Relative(0.2).target_us(f64::NAN).is_nan());
    assert_eq!(
        CiWidth::Absolute(Duration::from_micros(50)).target_us(f64::NAN),
        50.0
    );

    assert_eq!(
        CiWidth::Absolute(Duration::from_micros(50)).to_string(),
        "50 µs"
    );
    assert_eq!(
        CiWidth::Absolute(Duration::from_nanos(1500)).to_string(),
        "1.5 µs"
    );
    assert_eq!(CiWidth::Relative(0.2).to_string(), "20% of the value");
    assert_eq!(CiWidth::Relative(0.07).to_string(), "7% of the value");
    assert_eq!(CiWidth::Relative(0.025).to_string(), "2.5% of the value");
}

#[test]
fn step_sweeps_expand_inclusively() {
    let sweep = |step: &str| valid(&MINIMAL.replace("load: 20000", step), &[]).load;
    assert_eq!(
        sweep("load: {step: {from: 5000, to: 20000, by: 5000}}"),
        LoadPlan::Sweep(vec![5000.0, 10_000.0, 15_000.0, 20_000.0])
    );
    // `to` off the grid: the last step below it.
    assert_eq!(
        sweep("load: {step: {from: 1000, to: 2999, by: 1000}}"),
        LoadPlan::Sweep(vec![1000.0, 2000.0])
    );
    // Steps that are not exact in binary still land on `to`.
    assert_eq!(
        sweep("load: {step: {from: 0.1k, to: 0.3k, by: 0.1k}}"),
        LoadPlan::Sweep(vec![100.0, 200.0, 300.0])
    );
    assert_eq!(
        sweep("load: {step: {from: 7000, to: 7000, by: 1}}"),
        LoadPlan::Sweep(vec![7000.0])
    );
    assert_eq!(
        sweep("load:\n  step:\n    from: 1\n    to: 1000\n    by: 1\n"),
        LoadPlan::Sweep((1..=1000).map(f64::from).collect())
    );
}

#[test]
fn slo_search_defaults() {
    let s = valid(
        &MINIMAL.replace("load: 20000", "load: {slo: {below: 1ms, to: 50k}}"),
        &[],
    );
    assert_eq!(
        s.load,
        LoadPlan::Slo(SloSearch {
            percentile: vernier_stats::Percentile::P99,
            below: Duration::from_millis(1),
            from: 1000.0,
            to: 50_000.0,
            precision: 0.05
        })
    );
    let s = valid(
        &MINIMAL.replace(
            "load: 20000",
            "load: {slo: {percentile: 99.5, below: 1ms, to: 50k}}",
        ),
        &[],
    );
    assert_eq!(percents(&s.percentiles), [50.0, 90.0, 99.0, 99.5, 99.9]);
}

#[test]
fn overrides_change_the_scenario_and_its_yaml() {
    let s = valid(MINIMAL, &["ci.width=5us", "load=30000"]);
    assert_eq!(s.ci.width, CiWidth::Absolute(Duration::from_micros(5)));
    assert_eq!(s.load, LoadPlan::Fixed(30_000.0));
    // The record keeps the scenario as run.
    let reread = valid(&s.yaml, &[]);
    assert_eq!(reread.ci, s.ci);
    assert_eq!(reread.load, s.load);

    let s = valid(MINIMAL, &["ci.width=20%", "method=lancet"]);
    assert_eq!(s.ci.width, CiWidth::Relative(0.2));
    assert_eq!(s.method, Method::Lancet);
    let reread = valid(&s.yaml, &[]);
    assert_eq!((reread.ci, reread.method), (s.ci, s.method));

    let s = valid(
        MINIMAL,
        &["load=[1000, 2000]", "warmup.max=1m", "limits.max_tries=3"],
    );
    assert_eq!(s.load, LoadPlan::Sweep(vec![1000.0, 2000.0]));
    assert_eq!(s.warmup.max, Duration::from_secs(60));
    assert_eq!(s.limits.max_tries, 3);
    // A scenario made entirely of overrides.
    let s = valid(
        "",
        &[
            "name=cli",
            "target=127.0.0.1:7000",
            "protocol=synthetic",
            "service=fixed:5us",
            "load.step={from: 1000, to: 3000, by: 1000}",
            "ci={percentile: 90, width: 1us}",
        ],
    );
    assert_eq!(s.load, LoadPlan::Sweep(vec![1000.0, 2000.0, 3000.0]));
}

#[test]
fn the_ci_is_for_the_tail_without_stalls_unless_asked_or_under_lancet() {
    let tail = |overrides: &[&str]| valid(MINIMAL, overrides).ci.tail;
    assert_eq!(tail(&[]), Tail::WithoutStalls);
    assert_eq!(tail(&["ci.tail=with_stalls"]), Tail::WithStalls);
    assert_eq!(tail(&["ci.tail=with-stalls"]), Tail::WithStalls);
    assert_eq!(tail(&["ci.tail=without_stalls"]), Tail::WithoutStalls);
    // Lancet's procedure knows every request's tail only.
    assert_eq!(tail(&["method=lancet"]), Tail::WithStalls);
    let error = |overrides: &[&str]| parse(MINIMAL, overrides).unwrap_err().to_string();
    assert_eq!(
        error(&["method=lancet", "ci.tail=without_stalls"]),
        "--set ci.tail: \"without_stalls\": expected with_stalls under method: lancet, whose \
         procedure has no tail without the host's stalls"
    );
    assert_eq!(
        error(&["ci.tail=own"]),
        "--set ci.tail: \"own\": expected without_stalls (the server's own tail: the requests \
         no stall of the host touched) or with_stalls (every request)"
    );
}

#[test]
fn errors_in_overridden_values_name_the_override() {
    let error = |overrides: &[&str]| parse(MINIMAL, overrides).unwrap_err();
    let e = error(&["ci.width=abc"]);
    assert_eq!(
        e.to_string(),
        "--set ci.width: \"abc\": expected a duration such as 10us or a share of the value \
         such as 20%"
    );
    assert_eq!((e.path(), e.line()), (Some(Path::new("bad.yaml")), None));
    assert_eq!(
        error(&["load=-5"]).to_string(),
        "--set load: \"-5\": expected a positive rate in requests per second, as in 20000 or 20k"
    );
    assert_eq!(
        error(&["ci.widht=5us"]).to_string(),
        "--set ci.widht: unknown field; expected one of percentile, width, confidence, tail"
    );
    assert_eq!(
        error(&["ci.width=150%"]).to_string(),
        "--set ci.width: \"150%\": expected a share of the value strictly between 0% and \
         100%, as in 20%"
    );
    assert_eq!(
        error(&["method=tailbench"]).to_string(),
        "--set method: \"tailbench\": expected vernier (effect-size checks, dependence-valid \
         CIs) or lancet (Lancet's procedure exactly)"
    );
    assert_eq!(
        error(&["workers=two"]).to_string(),
        "--set workers: \"two\": expected a whole number ≥ 0"
    );
    // An error elsewhere still has the file's line.
    let e = parse(
        &MINIMAL.replace("service: exp:20us", "service: exp:0"),
        &["load=30000"],
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "bad.yaml:4: service: \"exp:0\": expected a duration with a unit (ns, us, ms, s), as in exp:10us"
    );
    assert_eq!(e.line(), Some(4));
}

#[test]
fn a_missing_file_names_its_path() {
    let path = scenarios_dir().join("no-such-scenario.yaml");
    let e = Scenario::load(&path, &[]).unwrap_err();
    assert!(matches!(e, ScenarioError::Io { .. }), "{e:?}");
    assert_eq!(e.path(), Some(path.as_path()));
    assert!(
        e.to_string().starts_with(&format!("{}: ", path.display())),
        "{e}"
    );
}

/// Each kind of mistake, and the message it must produce: the file, the line, the field,
/// the value, what is allowed.
#[test]
fn invalid_scenarios_say_where_and_what() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "unknown field, with its line",
            "-ci: {percentile: 99, width: 10us}\nci:\n  percentile: 99\n  widht: 10us\n",
            "bad.yaml:8: ci.widht: unknown field; expected one of percentile, width, confidence, tail",
        ),
        (
            "unknown top-level field",
            "targets: 127.0.0.1:7001\n",
            "bad.yaml:7: targets: unknown field; expected one of name, target, protocol, \
             service, workload, path, transport, agents, workers, cpus, target_cpus, connections, depth, \
             interarrival, load, ci, percentiles, timestamps, interface, poll, halt_poll, limits, \
             sampling, warmup, alpha, timeout, seed, on_agent_loss, interarrival_check, method, \
             replications, budget",
        ),
        (
            "a probe of nothing",
            "budget: {probe: 0}\n",
            "bad.yaml:7: budget.probe: \"0\": expected a share of each point's rate above 0 and at most 100%, as in 10% or 0.1",
        ),
        (
            "a probe of more than the load",
            "budget: {probe: 150%}\n",
            "bad.yaml:7: budget.probe: \"150%\": expected a share of each point's rate above 0 and at most 100%, as in 10% or 0.1",
        ),
        (
            "a probe that is not a share",
            "budget: {probe: lots}\n",
            "bad.yaml:7: budget.probe: \"lots\": expected a share of each point's rate above 0 and at most 100%, as in 10% or 0.1",
        ),
        (
            "a probe against a server that cannot be asked for no service",
            "-protocol: synthetic\n-service: exp:20us\nprotocol: echo:64\nbudget: {probe: 10%}\n",
            "bad.yaml:6: budget.probe: \"10%\": the probe's requests ask the target for no service time, which only protocol synthetic can (this scenario's is echo:64)",
        ),
        (
            "unknown budget field",
            "budget: {rate: 1000}\n",
            "bad.yaml:7: budget.rate: unknown field; expected probe",
        ),
        (
            "one replication",
            "replications: {min: 1}\n",
            "bad.yaml:7: replications.min: \"1\": expected at least 2 runs (one run has no spread to judge), as in 3",
        ),
        (
            "fewer replications at most than at least",
            "replications: {min: 5, max: 4}\n",
            "bad.yaml:7: replications.max: \"4\": expected from replications.min (5) to 100, as in 10",
        ),
        (
            "a replication width of nothing",
            "replications: {width: 0%}\n",
            "bad.yaml:7: replications.width: \"0%\": expected a share of the value strictly between 0% and 100%, as in 20%",
        ),
        (
            "a pause between runs that is not a duration",
            "replications: {pause: soon}\n",
            "bad.yaml:7: replications.pause: \"soon\": expected a duration with a unit (ns, us, ms, s, m, h), as in 1s",
        ),
        (
            "unknown replications field",
            "replications: {runs: 3}\n",
            "bad.yaml:7: replications.runs: unknown field; expected one of min, max, width, pause",
        ),
        (
            "unknown polling mode",
            "poll: busy\n",
            "bad.yaml:7: poll: \"busy\": expected sleep, spin or adaptive",
        ),
        (
            "halt-poll window that is not a duration",
            "halt_poll: 200\n",
            "bad.yaml:7: halt_poll: \"200\": expected a duration with a unit (ns, us, ms, s, m, h), as in 200us",
        ),
        (
            "missing required field",
            "-name: minimal",
            "bad.yaml: name: missing: expected a name for the run and its records, as in \
             name: memcached-zipf",
        ),
        (
            "a path for a protocol other than http",
            "path: /index.html\n",
            "bad.yaml:7: path: \"/index.html\": expected no path: only http asks for one, not \
             synthetic",
        ),
        (
            "a path and a workload",
            "-protocol: synthetic\n-service: exp:20us\nprotocol: http\npath: /x\nworkload: \
             {keys: 10, key_size: fixed:8, value_size: fixed:8, read_ratio: 1}\n",
            "bad.yaml:6: path: \"/x\": expected no path with workload: a path is the one request \
             target, where workload: draws keys; keep one of them",
        ),
        (
            "a path without its slash",
            "-protocol: synthetic\n-service: exp:20us\nprotocol: http\npath: index.html\n",
            "bad.yaml:6: path: \"index.html\": expected a request target starting with /, as in \
             /index.html",
        ),
        (
            "a path http cannot send",
            "-protocol: synthetic\n-service: exp:20us\nprotocol: http\npath: /a b\n",
            "bad.yaml:6: path: \"/a b\": expected a path http can send: http cannot send the key \
             \"a b\": a request target holds only visible ASCII (percent-encode the rest)",
        ),
        (
            "negative rate",
            "-load: 20000\nload: -5\n",
            "bad.yaml:6: load: \"-5\": expected a positive rate in requests per second, as in \
             20000 or 20k",
        ),
        (
            "negative rate in a list",
            "-load: 20000\nload: [1000, -5]\n",
            "bad.yaml:6: load[1]: \"-5\": expected a positive rate in requests per second, as \
             in 20000 or 20k",
        ),
        (
            "zero width",
            "-ci: {percentile: 99, width: 10us}\nci: {percentile: 99, width: 0us}\n",
            "bad.yaml:6: ci.width: \"0us\": expected a positive duration, as in 10us",
        ),
        (
            "width neither a duration nor a share",
            "-ci: {percentile: 99, width: 10us}\nci: {percentile: 99, width: 10}\n",
            "bad.yaml:6: ci.width: \"10\": expected a duration such as 10us or a share of the \
             value such as 20%",
        ),
        (
            "width of 150%",
            "-ci: {percentile: 99, width: 10us}\nci: {percentile: 99, width: 150%}\n",
            "bad.yaml:6: ci.width: \"150%\": expected a share of the value strictly between \
             0% and 100%, as in 20%",
        ),
        (
            "width of 0%",
            "-ci: {percentile: 99, width: 10us}\nci:\n  percentile: 99\n  width: 0%\n",
            "bad.yaml:8: ci.width: \"0%\": expected a share of the value strictly between 0% \
             and 100%, as in 20%",
        ),
        (
            "width of a percentage that is no number",
            "-ci: {percentile: 99, width: 10us}\nci: {percentile: 99, width: ten%}\n",
            "bad.yaml:6: ci.width: \"ten%\": expected a share of the value strictly between \
             0% and 100%, as in 20%",
        ),
        (
            "bad method",
            "method: tailbench\n",
            "bad.yaml:7: method: \"tailbench\": expected vernier (effect-size checks, \
             dependence-valid CIs) or lancet (Lancet's procedure exactly)",
        ),
        (
            "method given as a list",
            "method: [lancet]\n",
            "bad.yaml:7: method: expected text, not a list",
        ),
        (
            "bad duration",
            "timeout: 10 parsecs\n",
            "bad.yaml:7: timeout: \"10 parsecs\": expected a duration with a unit (ns, us, ms, \
             s, m, h), as in 1s",
        ),
        (
            "percentile 100",
            "-ci: {percentile: 99, width: 10us}\nci:\n  percentile: 100\n  width: 10us\n",
            "bad.yaml:7: ci.percentile: \"100\": expected a percentile strictly between 0 and \
             100, as in 99",
        ),
        (
            "hardware timestamps without an interface",
            "timestamps: hw\n",
            "bad.yaml:7: timestamps: \"hw\": expected interface too: hardware timestamps are \
             taken by a NIC, named as in interface: eth0",
        ),
        (
            "an interface without hardware timestamps",
            "interface: eth0\n",
            "bad.yaml:7: interface: \"eth0\": expected no interface with timestamps: kernel; \
             only hardware timestamps (timestamps: hw) are taken by a NIC",
        ),
        (
            "service given for memcached",
            "-protocol: synthetic\nprotocol: memcached\n",
            "bad.yaml:3: service: \"exp:20us\": expected no service time: only the synthetic \
             protocol carries one; a memcached server's is its own",
        ),
        (
            "workload given for synthetic",
            "workload: {keys: 10, key_size: fixed:8, value_size: fixed:8, read_ratio: 1}\n",
            "bad.yaml:7: workload: expected no key-value workload: only memcached, redis, http, \
             declared protocols and grpc take one; synthetic takes service, as in service: \
             exp:20us",
        ),
        (
            "a key-value workload without its value size",
            "-protocol: synthetic\nprotocol: memcached\n-service: exp:20us\n\
             workload: {keys: 10, key_size: fixed:3, read_ratio: 1}\n",
            "bad.yaml:6: workload.value_size: missing: expected a value, as in workload: \
             {keys: 10000, key_size: fixed:30, value_size: fixed:200, read_ratio: 0.9}",
        ),
        (
            "a declared protocol given a read ratio",
            "-protocol: synthetic\nprotocol: {framing: {fixed: 8}, requests: [{text: '{key}'}]}\n\
             -service: exp:20us\nworkload: {keys: 10, key_size: fixed:8, read_ratio: 0.5}\n",
            "bad.yaml:6: workload.read_ratio: \"0.5\": expected no value_size or read_ratio: a \
             declared protocol's requests say their own sizes and mix (requests: [{ratio: ..., \
             text: ...}])",
        ),
        (
            "a declared protocol's template naming an unknown field",
            "-protocol: synthetic\nprotocol: {framing: {length: {bytes: 4}}, requests: [{text: \
             '{len:u32be}{kee}'}]}\n-service: exp:20us\n",
            "bad.yaml:5: protocol: requests[0].text: unknown field {kee} at byte 11: \
             expected key, key_len:FMT, seq:FMT, len:FMT or random:SIZE",
        ),
        (
            "a declared protocol's length field wider than its framing",
            "-protocol: synthetic\nprotocol: {framing: {length: {bytes: 2}}, requests: [{text: \
             '{len:u32be}{key}'}]}\n-service: exp:20us\n",
            "bad.yaml:5: protocol: requests[0].text: {len:u32be} is 4 bytes, wider \
             than the framing's 2-byte length field",
        ),
        (
            "a declared protocol with a misspelt field",
            "-protocol: synthetic\nprotocol: {framin: {fixed: 8}, requests: [{text: x}]}\n\
             -service: exp:20us\n",
            "bad.yaml:5: protocol: a declared protocol's mapping: unknown field `framin`, \
             expected one of `framing`, `max_frame`, `requests`, `reply`",
        ),
        (
            "a workload the generator refuses",
            "-protocol: synthetic\n-service: exp:20us\nprotocol: redis\nworkload:\n  keys: 0\n  \
             key_size: fixed:8\n  value_size: fixed:8\n  read_ratio: 1\n",
            "bad.yaml:7: workload.keys: \"0\": expected from 1 to 4294967295",
        ),
        (
            "connections fewer than workers",
            "workers: 4\nconnections: 2\n",
            "bad.yaml:8: connections: \"2\": expected at least one per worker (4 workers)",
        ),
        (
            "cpus fewer than workers",
            "workers: 2\ncpus: [3]\n",
            "bad.yaml:8: cpus: \"[3]\": expected one core per worker (2 workers), or none",
        ),
        (
            "zero depth",
            "depth: 0\n",
            "bad.yaml:7: depth: \"0\": expected at least 1",
        ),
        (
            "YAML syntax error, with its line",
            "-ci: {percentile: 99, width: 10us}\nci: {percentile: 99, width: 10us\nseed: 1\n",
            "bad.yaml:7: invalid YAML: did not find expected ',' or '}' at line 7 column 5, \
             while parsing a flow mapping at line 6 column 5",
        ),
        (
            "a field given twice",
            "seed: 1\nseed: 2\n",
            "bad.yaml:8: invalid YAML: duplicate entry with key \"seed\"",
        ),
        (
            "bad interarrival_check",
            "interarrival_check: warn\n",
            "bad.yaml:7: interarrival_check: \"warn\": expected enforce (a load the agent cannot \
             generate is N/A) or report (measure anyway; the result carries the failed test)",
        ),
        (
            "bad on_agent_loss",
            "on_agent_loss: retry\n",
            "bad.yaml:7: on_agent_loss: \"retry\": expected stop (the point ends N/A agent_lost) \
             or continue (the other agents take over its load)",
        ),
        (
            "bad agent entry",
            "agents:\n  - local\n  - remote\n",
            "bad.yaml:9: agents[1]: \"remote\": expected local, {local: {kind: KIND}}, \
             {address: HOST:PORT, token_env: VAR, tls_ca: PEM, tls_name: NAME, kind: KIND} or \
             {ssh: HOST, kind: KIND}",
        ),
        (
            "misspelt agent field",
            "agents:\n  - address: 10.0.0.1:5001\n    token: SECRET\n",
            "bad.yaml:9: agents[0].token: unknown field; expected one of address, token_env, \
             tls_ca, tls_name, kind",
        ),
        (
            "bad agent kind",
            "agents: [{ssh: host, kind: fast}]\n",
            "bad.yaml:7: agents[0].kind: \"fast\": expected symmetric (loads and measures), \
             throughput (loads only) or latency (one request at a time, measures)",
        ),
        (
            "only throughput agents",
            "agents: [{local: {kind: throughput}}]\n",
            "bad.yaml:7: agents: expected at least one agent that measures (kind symmetric or \
             latency): throughput agents only load",
        ),
        (
            "step with by 0",
            "-load: 20000\nload:\n  step: {from: 1000, to: 5000, by: 0}\n",
            "bad.yaml:7: load.step.by: \"0\": expected the step between loads, a positive rate \
             in requests per second, as in step: {from: 5000, to: 50000, by: 5000}",
        ),
        (
            "step too long",
            "-load: 20000\nload: {step: {from: 1, to: 100000, by: 1}}\n",
            "bad.yaml:6: load.step.by: \"1\": expected a step giving at most 1000 loads from 1 \
             to 100000",
        ),
        (
            "SLO without to",
            "-load: 20000\nload:\n  slo:\n    percentile: 99\n    below: 300us\n",
            "bad.yaml:7: load.slo.to: missing: expected the highest load to try, as in slo: \
             {percentile: 99, below: 300us, to: 100000}",
        ),
        (
            "an unknown load plan",
            "-load: 20000\nload: {ramp: 1000}\n",
            "bad.yaml:6: load: \"{\\\"ramp\\\":1000}\": expected a rate in requests per second \
             (20000), a list of rates ([10000, 20000]), {step: {from: 5000, to: 50000, by: \
             5000}} or {slo: {percentile: 99, below: 300us, to: 100000}}",
        ),
        (
            "a bad target",
            "-target: 127.0.0.1:7000\ntarget: localhost\n",
            "bad.yaml:6: target: \"localhost\": expected host:port, as in 127.0.0.1:7000",
        ),
        (
            "a bad protocol",
            "-protocol: synthetic\nprotocol: memcache\n",
            "bad.yaml:6: protocol: \"memcache\": expected echo:N, synthetic, memcached, \
             memcached-binary, memcached-binary:getk, redis, http, a declared protocol (a \
             mapping) or a gRPC method (a mapping)",
        ),
        (
            "warm-up windows longer than its limit",
            "warmup: {window: 1s, windows: 40, max: 30s}\n",
            "bad.yaml:7: warmup.max: \"30s\": expected at least windows × window (40 × 1s) to \
             let warm-up end",
        ),
        (
            "alpha out of range",
            "alpha: 0.9\n",
            "bad.yaml:7: alpha: \"0.9\": expected a significance level above 0 and at most \
             0.5, as in 0.05",
        ),
        (
            "a list where a map belongs",
            "sampling: [0.2]\n",
            "bad.yaml:7: sampling: expected a map of fields, not a list",
        ),
        (
            "not a map at all",
            "=- name: x\n",
            "bad.yaml:1: expected a map of fields (name: ..., target: ...), not a list",
        ),
    ];
    assert!(cases.len() >= 15);
    let mut failures = Vec::new();
    for (what, change, expected) in cases {
        let yaml = edit(MINIMAL, change);
        match parse(&yaml, &[]) {
            Ok(_) => failures.push(format!("{what}: accepted\n{yaml}")),
            Err(e) if e.to_string() != *expected => {
                failures.push(format!("{what}:\n  got      {e}\n  expected {expected}"));
            }
            Err(_) => {}
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

/// `MINIMAL` changed: `-LINE` lines remove that line, `=TEXT` replaces the whole text, other
/// lines are appended.
fn edit(base: &str, change: &str) -> String {
    if let Some(whole) = change.strip_prefix('=') {
        return whole.to_owned();
    }
    let mut lines: Vec<String> = base.lines().map(str::to_owned).collect();
    for line in change.lines() {
        match line.strip_prefix('-') {
            Some(removed) if !removed.starts_with(' ') => lines.retain(|l| l != removed),
            _ => lines.push(line.to_owned()),
        }
    }
    lines.join("\n") + "\n"
}

#[test]
fn a_budget_probe_is_a_share_of_the_rate_off_unless_asked() {
    assert_eq!(valid(MINIMAL, &[]).budget_probe, None);
    for (text, share) in [("10%", 0.1), ("0.25", 0.25), ("100%", 1.0)] {
        let yaml = edit(MINIMAL, &format!("budget: {{probe: {text}}}\n"));
        let scenario = valid(&yaml, &[]);
        assert_eq!(scenario.budget_probe, Some(share), "{text}");
        // The agents' workers send it, with the load.
        let spec = scenario.load_spec(0, "127.0.0.1:7000".parse().unwrap());
        assert!(
            matches!(spec.workload, Workload::Synthetic { probe, .. } if probe == share),
            "{text}: {:?}",
            spec.workload
        );
        assert_eq!(spec.validate(), Ok(()));
    }
    let spec = valid(MINIMAL, &[]).load_spec(0, "127.0.0.1:7000".parse().unwrap());
    assert!(matches!(spec.workload, Workload::Synthetic { probe, .. } if probe == 0.0));
}
