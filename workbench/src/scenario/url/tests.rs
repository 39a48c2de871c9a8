//! URLs as a user types them, the scenario their flags build, and the document printed for
//! it, read back as a file.

use std::path::Path;
use std::time::Duration;

use vernier_agent::Workload;
use vernier_protocols::Protocol;

use super::*;
use crate::scenario::{CiWidth, LoadPlan, load_value};

/// The flags `vernier run` passes (every one, given or not), with the values of `given`.
fn flags(given: &[(&'static str, &str)]) -> Vec<Flag> {
    const ALL: [(&str, &str); 14] = [
        ("--service", "service"),
        ("--keys", "workload.keys"),
        ("--key-size", "workload.key_size"),
        ("--value-size", "workload.value_size"),
        ("--read-ratio", "workload.read_ratio"),
        ("--key-dist", "workload.key_dist"),
        ("--workers", "workers"),
        ("--cpus", "cpus"),
        ("--connections", "connections"),
        ("--depth", "depth"),
        ("--load", "load"),
        ("--percentile", "ci.percentile"),
        ("--width", "ci.width"),
        ("--duration", "limits.max_duration"),
    ];
    for (name, _) in given {
        assert!(ALL.iter().any(|(n, _)| n == name), "no flag {name}");
    }
    ALL.iter()
        .map(|&(name, field)| Flag {
            name,
            field,
            given: given.iter().find(|(n, _)| *n == name).map(|(_, v)| {
                let value = match name {
                    "--load" => load_value(v),
                    _ => serde_yaml::from_str(v).unwrap(),
                };
                (v.to_string(), value)
            }),
        })
        .collect()
}

fn sets(texts: &[&str]) -> Vec<Override> {
    texts.iter().map(|t| t.parse().unwrap()).collect()
}

fn from_url(url: &str, given: &[(&'static str, &str)]) -> Result<Scenario, String> {
    Scenario::from_url(url, &flags(given), &[]).map_err(|e| e.to_string())
}

fn target(url: &str) -> Target {
    url.parse().unwrap_or_else(|e| panic!("{url}: {e}"))
}

#[test]
fn a_url_names_the_target_and_the_protocol() {
    let t = target("memcached://127.0.0.1:11211");
    assert_eq!(
        (t.address(), t.protocol.as_str(), t.path.as_deref()),
        ("127.0.0.1:11211".into(), "memcached", None)
    );
    assert_eq!(t.name(), "memcached-127.0.0.1-11211");
    // Schemes are case-insensitive, as in any URL.
    assert_eq!(target("MEMCACHED://h:1").protocol, "memcached");
    assert_eq!(
        target("memcached-binary://h:1").protocol,
        "memcached-binary"
    );
    assert_eq!(target("redis://localhost:6379").address(), "localhost:6379");
    assert_eq!(target("synthetic://h:7000").protocol, "synthetic");
    assert_eq!(target("echo://h:7").protocol, "echo:64");
    let v6 = target("redis://[::1]:6379");
    assert_eq!(
        (v6.address(), v6.name()),
        ("[::1]:6379".into(), "redis---1-6379".into())
    );
    // HTTP's path is every request's target; none, or `/`, is the default `GET /`.
    for (url, path) in [
        ("http://h:8080", None),
        ("http://h:8080/", None),
        ("http://h:8080/index.html", Some("/index.html")),
        ("http://h:8080/api/items?id=7", Some("/api/items?id=7")),
        ("http://h:8080?id=7", Some("/?id=7")),
        ("http://h:8080/a#part", Some("/a")),
        ("memcached://h:1/", None),
    ] {
        assert_eq!(target(url).path.as_deref(), path, "{url}");
    }
}

#[test]
fn a_bad_url_says_what_is_expected() {
    let cases = [
        (
            "memcache://127.0.0.1:11211",
            "memcache://127.0.0.1:11211: unknown scheme \"memcache\": expected echo, \
             synthetic, memcached, memcached-binary, redis, http, tcp, grpc or grpcs",
        ),
        (
            "https://127.0.0.1:8443/",
            "https://127.0.0.1:8443/: https is not supported: vernier speaks plain HTTP/1.1 \
             (http://HOST:PORT)",
        ),
        (
            "memcached://127.0.0.1",
            "memcached://127.0.0.1: missing port: expected memcached://HOST:PORT, as in \
             memcached://127.0.0.1:11211",
        ),
        (
            "redis://localhost:",
            "redis://localhost:: missing port: expected redis://HOST:PORT, as in \
             redis://127.0.0.1:6379",
        ),
        (
            "http://:8080/",
            "http://:8080/: missing host: expected http://HOST:PORT, as in http://127.0.0.1:8080",
        ),
        (
            "memcached://h:0",
            "memcached://h:0: port \"0\": expected 1 to 65535",
        ),
        (
            "memcached://h:70000",
            "memcached://h:70000: port \"70000\": expected 1 to 65535",
        ),
        (
            "memcached://h:11211/cache",
            "memcached://h:11211/cache: path \"/cache\": only an http:// URL has a path; \
             expected memcached://127.0.0.1:11211",
        ),
        (
            "redis://user@h:6379",
            "redis://user@h:6379: expected HOST:PORT after redis://, without a user@, as in \
             redis://127.0.0.1:6379",
        ),
        (
            "redis://::1:6379",
            "redis://::1:6379: expected an IPv6 address in brackets, as in redis://[::1]:6379",
        ),
        (
            "redis://[::1:6379",
            "redis://[::1:6379: expected ] after an IPv6 address, as in redis://[::1]:6379",
        ),
        (
            "grpc://127.0.0.1:50051",
            "grpc://127.0.0.1:50051: expected the method to call as the path, \
             grpc://HOST:PORT/package.Service/Method, as in \
             grpc://127.0.0.1:50051/bench.Echo/Call",
        ),
    ];
    for (url, expected) in cases {
        let e = url.parse::<Target>().unwrap_err();
        assert_eq!(e.to_string(), expected);
        // A URL is bad input, named with no file or line.
        assert_eq!((e.path(), e.line()), (None, None));
    }
}

#[test]
fn flags_set_their_fields_and_defaults_the_rest() {
    let s = from_url("memcached://127.0.0.1:11211", &[("--load", "10k")]).unwrap();
    assert_eq!(s.name, "memcached-127.0.0.1-11211");
    assert_eq!(s.source, None);
    assert_eq!(s.targets, ["127.0.0.1:11211"]);
    assert_eq!(s.protocol, Protocol::memcached());
    assert_eq!(s.load, LoadPlan::Fixed(10_000.0));
    // The file's defaults, the same for both.
    assert_eq!(s.workload, Workload::KeyValue(defaults::key_value()));
    assert!(s.default_workload);
    assert_eq!(
        (s.workers, s.connections, s.depth, s.cpus.len()),
        (1, 16, 1, 0)
    );
    assert_eq!(s.ci.percentile, vernier_stats::Percentile::P99);
    assert_eq!(s.ci.width, CiWidth::Relative(0.2));
    assert_eq!(s.limits.max_duration, Duration::from_secs(60));

    let s = from_url(
        "redis://127.0.0.1:6379",
        &[
            ("--load", "5k,10k,20k"),
            ("--percentile", "99.9"),
            ("--width", "10us"),
            ("--connections", "8"),
            ("--depth", "4"),
            ("--workers", "2"),
            ("--cpus", "[2, 3]"),
            ("--duration", "30s"),
            ("--keys", "500"),
            ("--read-ratio", "0.5"),
            ("--key-dist", "zipf:0.99"),
        ],
    )
    .unwrap();
    assert_eq!(s.load, LoadPlan::Sweep(vec![5_000.0, 10_000.0, 20_000.0]));
    assert_eq!(s.ci.percentile, vernier_stats::Percentile::P99_9);
    assert_eq!(s.ci.width, CiWidth::Absolute(Duration::from_micros(10)));
    assert_eq!(
        (s.connections, s.depth, s.workers, s.cpus.as_slice()),
        (8, 4, 2, &[2, 3][..])
    );
    assert_eq!(s.limits.max_duration, Duration::from_secs(30));
    // The workload's other fields are the default's.
    let Workload::KeyValue(kv) = &s.workload else {
        panic!("{:?}", s.workload)
    };
    assert_eq!((kv.keys, kv.read_ratio), (500, 0.5));
    assert_eq!(kv.key_size, defaults::key_value().key_size);
    assert_eq!(kv.key_dist, "zipf:0.99".parse().unwrap());
    assert!(!s.default_workload);

    let s = from_url("http://127.0.0.1:8080/index.html", &[("--load", "1k")]).unwrap();
    assert_eq!(
        s.workload,
        Workload::KeyValue(defaults::http_path("index.html"))
    );
    let s = from_url(
        "synthetic://127.0.0.1:7000",
        &[("--load", "1k..3k/1k"), ("--service", "exp:20us")],
    )
    .unwrap();
    assert_eq!(s.load, LoadPlan::Sweep(vec![1000.0, 2000.0, 3000.0]));
    assert!(matches!(s.workload, Workload::Synthetic { .. }));
    let s = from_url("echo://127.0.0.1:7", &[("--load", "1k")]).unwrap();
    assert_eq!(s.protocol, "echo:64".parse().unwrap());
    // `--set` reaches every other field, after the flags.
    let s = Scenario::from_url(
        "memcached://127.0.0.1:11211",
        &flags(&[("--load", "1k"), ("--connections", "8")]),
        &sets(&["timestamps=user", "connections=4", "name=mine"]),
    )
    .unwrap();
    assert_eq!(s.timestamps, vernier_agent::sys::TimestampMode::User);
    assert_eq!((s.connections, s.name.as_str()), (4, "mine"));
}

#[test]
fn the_load_flag_takes_a_rate_a_list_or_a_step_sweep() {
    let load = |text: &str| from_url("redis://h:1", &[("--load", text)]).map(|s| s.load);
    assert_eq!(load("20000"), Ok(LoadPlan::Fixed(20_000.0)));
    assert_eq!(load(" 2.5k "), Ok(LoadPlan::Fixed(2_500.0)));
    assert_eq!(
        load("1k, 2k,3000"),
        Ok(LoadPlan::Sweep(vec![1000.0, 2000.0, 3000.0]))
    );
    assert_eq!(
        load("5k..20k/5k"),
        Ok(LoadPlan::Sweep(vec![5000.0, 10_000.0, 15_000.0, 20_000.0]))
    );
    // Any YAML load: takes, as in a file.
    assert_eq!(
        load("[1000, 2000]"),
        Ok(LoadPlan::Sweep(vec![1000.0, 2000.0]))
    );
    assert!(matches!(
        load("{slo: {below: 1ms, to: 50k}}"),
        Ok(LoadPlan::Slo(_))
    ));
    assert_eq!(
        load("5k..20k").unwrap_err(),
        "--load load.step.by: missing: expected the step between loads, as in step: {from: \
         5000, to: 50000, by: 5000}"
    );
    assert_eq!(
        load("1k,,2k").unwrap_err(),
        "--load load[1]: \"\": expected a positive rate in requests per second, as in 20000 \
         or 20k"
    );
}

#[test]
fn errors_name_the_flag_that_sets_the_field() {
    let error = |given: &[(&'static str, &str)]| from_url("memcached://h:1", given).unwrap_err();
    // A flag not given is the one to give.
    assert_eq!(
        error(&[]),
        "--load load: missing: expected the load in requests per second, as in load: 20000, \
         or a list, a step sweep or an SLO search"
    );
    assert_eq!(
        from_url("synthetic://h:1", &[("--load", "1k")]).unwrap_err(),
        "--service service: missing: expected the synthetic server's service-time \
         distribution, as in service: exp:20us"
    );
    assert_eq!(
        error(&[("--load", "1k"), ("--width", "150%")]),
        "--width ci.width: \"150%\": expected a share of the value strictly between 0% and \
         100%, as in 20%"
    );
    // A default at fault is blamed on the flag that replaces it.
    assert_eq!(
        error(&[("--load", "1k"), ("--workers", "32")]),
        "--connections connections: \"16\": expected at least one per worker (32 workers)"
    );
    assert_eq!(
        error(&[("--load", "1k"), ("--key-size", "fixd:3")]),
        "--key-size workload.key_size: invalid size distribution \"fixd:3\": expected fixed:, \
         exp:, bimodal:, lognormal:, uniform: or pareto:, as in exp:32"
    );
    assert_eq!(
        error(&[("--load", "1k"), ("--service", "exp:20us")]),
        "--service service: \"exp:20us\": expected no service time: only the synthetic \
         protocol carries one; a memcached server's is its own"
    );
    assert_eq!(
        Scenario::from_url(
            "memcached://h:1",
            &flags(&[("--load", "1k")]),
            &sets(&["workers=two"])
        )
        .unwrap_err()
        .to_string(),
        "--set workers: \"two\": expected a whole number ≥ 0"
    );
    assert_eq!(
        from_url(
            "http://h:1/index.html",
            &[("--load", "1k"), ("--keys", "10")]
        )
        .unwrap_err(),
        "path: \"/index.html\": expected no path with workload: a path is the one request \
         target, where workload: draws keys; keep one of them"
    );
}

/// The document's lines after its list of defaults, uncommented.
fn with_defaults_written(yaml: &str) -> String {
    let (fields, defaults) = yaml
        .split_once("# Defaults taken")
        .expect("a list of defaults");
    let defaults: String = defaults
        .lines()
        .skip(1)
        .map(|line| format!("{}\n", line.strip_prefix("# ").expect("a commented line")))
        .collect();
    format!("{fields}{defaults}")
}

/// A URL, its flags and its overrides.
type Case = (
    &'static str,
    &'static [(&'static str, &'static str)],
    &'static [&'static str],
);

#[test]
fn the_printed_scenario_read_as_a_file_is_the_same_scenario() {
    let cases: [Case; 6] = [
        ("memcached://127.0.0.1:11211", &[("--load", "10k")], &[]),
        (
            "redis://[::1]:6379",
            &[
                ("--load", "5k,10k"),
                ("--percentile", "99.9"),
                ("--width", "10us"),
                ("--keys", "500"),
                ("--cpus", "[1]"),
            ],
            &["timestamps=user", "method=lancet"],
        ),
        (
            "http://localhost:8080/api/items?id=7",
            &[("--load", "1k..3k/1k"), ("--connections", "32")],
            &[],
        ),
        ("http://localhost:8080", &[("--load", "1k")], &[]),
        (
            "synthetic://127.0.0.1:7000",
            &[
                ("--load", "{slo: {below: 1ms, to: 50k}}"),
                ("--service", "exp:20us"),
                ("--duration", "30s"),
            ],
            &["ci.confidence=0.99"],
        ),
        (
            "echo://127.0.0.1:7",
            &[("--load", "1k"), ("--depth", "4")],
            &[
                "protocol=echo:512",
                "agents=[local, {local: {kind: latency}}]",
            ],
        ),
    ];
    for (url, given, overrides) in cases {
        let built = Scenario::from_url(url, &flags(given), &sets(overrides))
            .unwrap_or_else(|e| panic!("{url}: {e}"));
        assert!(
            built.yaml.starts_with(&format!("# vernier run {url} ")),
            "{}",
            built.yaml
        );
        // Saved and run as a file: the same scenario, from the same text.
        let file = Path::new("printed.yaml");
        let read = Scenario::from_yaml(&built.yaml, Some(file), &[])
            .unwrap_or_else(|e| panic!("{url}: {e}\n{}", built.yaml));
        assert_eq!(read.source.as_deref(), Some(file));
        assert_eq!(
            Scenario {
                source: None,
                ..read
            },
            built,
            "{}",
            built.yaml
        );
        // The defaults it lists are the ones it took: written out, nothing changes (but a
        // workload written is no longer the default taken).
        let written = with_defaults_written(&built.yaml);
        let read = Scenario::from_yaml(&written, None, &[])
            .unwrap_or_else(|e| panic!("{url}: {e}\n{written}"));
        assert!(!read.default_workload);
        assert_eq!(
            Scenario {
                yaml: built.yaml.clone(),
                default_workload: built.default_workload,
                ..read
            },
            built,
            "{written}"
        );
    }
}

#[test]
fn the_document_says_where_each_field_came_from() {
    let s = Scenario::from_url(
        "memcached://127.0.0.1:11211",
        &flags(&[("--load", "10k"), ("--width", "10us"), ("--keys", "500")]),
        &sets(&["timestamps=user"]),
    )
    .unwrap();
    let expected = "\
# vernier run memcached://127.0.0.1:11211 --keys 500 --load 10k --width 10us --set timestamps=user
#
# Made from the command line by vernier VERSION. Saved to a file, it runs as the same
# scenario: vernier run FILE. Each field says where it came from; the defaults taken
# are listed at the end (every field: scenarios/README.md).

# from the URL
name: memcached-127.0.0.1-11211
target: 127.0.0.1:11211
protocol: memcached

# from the default key-value workload, --keys
workload:
  keys: 500
  key_size: fixed:30
  value_size: fixed:200
  read_ratio: 0.9

# from --load
load: 10k

# from --width; by default percentile: 99, confidence: 0.95, tail: without_stalls
ci:
  width: 10us

# from --set timestamps
timestamps: user

# Defaults taken (uncomment a line to change it):
# agents: [local]
# workers: 1
# connections: 16
# depth: 1
# interarrival: exp
# percentiles: [50, 90, 99, 99.9]
# limits: {max_tries: 10, max_duration: 1m}
# timeout: 1s
# seed: 1
";
    assert_eq!(
        s.yaml,
        expected.replace("VERSION", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn the_command_is_repeated_as_a_shell_takes_it() {
    assert_eq!(quoted("2k..10k/2k"), "2k..10k/2k");
    assert_eq!(quoted("5k,10k"), "5k,10k");
    assert_eq!(quoted("{slo: {below: 1ms}}"), "'{slo: {below: 1ms}}'");
    assert_eq!(quoted("name=it's"), r"'name=it'\''s'");
    assert_eq!(quoted(""), "''");
    let s = from_url("redis://h:1", &[("--load", "[1k, 2k]")]).unwrap();
    assert!(
        s.yaml
            .starts_with("# vernier run redis://h:1 --load '[1k, 2k]'\n"),
        "{}",
        s.yaml
    );
}
