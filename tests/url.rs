//! `vernier run URL`: a server measured from one line, no file (the scenario the URL and
//! the flags build, printed and run again as a file), and the one-line errors of a bad
//! URL, of a flag that a file conflicts with, and of a target where nothing listens. Also
//! `vernier --version`, which names the commit. Every server is started here on a free
//! port and killed by PID; every run is bounded by its own short limits.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::Path;
use std::process::Output;
use std::time::{Duration, Instant};

use serde_json::Value;
use support::{ServeProcess, did_not_run, machine, read_run, vernier};
use vernier_fixtures::ExternalServer;

/// The commit `git` says HEAD is, if this is a checkout `git` can read.
fn head() -> Option<String> {
    let out = std::process::Command::new("git")
        .args([
            "-C",
            env!("CARGO_MANIFEST_DIR"),
            "rev-parse",
            "--short",
            "HEAD",
        ])
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

#[test]
fn the_version_names_the_commit_built() {
    let out = vernier(&["--version"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let line = String::from_utf8(out.stdout).unwrap();
    let commit = match head() {
        Some(hash) => hash,
        None => "unknown commit".into(),
    };
    assert_eq!(
        line,
        format!("vernier {} ({commit})\n", env!("CARGO_PKG_VERSION"))
    );
}

/// What `vernier run ARGS --headless --record DIR` printed, and how long it took.
fn run(args: &[&str], record: &Path) -> (Output, Duration) {
    let started = Instant::now();
    let mut all = vec!["run"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--headless", "--record", record.to_str().unwrap()]);
    let out = vernier(&all);
    (out, started.elapsed())
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The point a fixed load's run printed: its p99 with a CI, or N/A with a reason.
fn answered(out: &Output) -> Value {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let point: Value = serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("not one JSON object ({e}): {stdout}\n{}", stderr(out)));
    assert_eq!(point["target_percentile"], 99.0, "{point:#}");
    // The exit code follows the tail the CI target is for: without the host's stalls by
    // default (its verdict and percentiles in `without_stalls`).
    let own = point["tail"] == "without_stalls";
    let answer = if own {
        &point["without_stalls"]
    } else {
        &point
    };
    assert_eq!(point["verdict"], answer["verdict"], "{point:#}");
    match (out.status.code(), answer["verdict"].as_str()) {
        (Some(0), Some("converged")) | (Some(4), Some("wide")) => {
            let p99 = answer["percentiles"]
                .as_array()
                .unwrap()
                .iter()
                .find(|p| p["p"] == 99.0)
                .unwrap_or_else(|| panic!("no p99: {point:#}"));
            let (lo, value, hi) = (
                p99["ci_low"].as_f64().unwrap(),
                p99["value"].as_f64().unwrap(),
                p99["ci_high"].as_f64().unwrap(),
            );
            assert!(lo <= value && value <= hi, "{p99}");
        }
        (Some(3), Some("n/a")) if own => assert!(
            answer["short"]["kind"].is_string(),
            "an N/A without its reason: {point:#}"
        ),
        (Some(3), Some("n/a")) => {}
        other => panic!("{other:?}: {point:#}\n{}", stderr(out)),
    }
    // Every request's verdict, whatever the answer: an N/A says why.
    if point["every_request"] == "n/a" {
        let reason = &point["reasons"][0];
        assert!(
            reason["check"].is_string() && reason["detail"].is_string(),
            "an N/A without its reason: {point:#}"
        );
    }
    point
}

/// The scenario `--print-scenario` prints for `args`.
fn printed(args: &[&str]) -> String {
    let mut all = vec!["run"];
    all.extend_from_slice(args);
    all.push("--print-scenario");
    let out = vernier(&all);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn memcached_is_measured_from_its_url_with_no_file() {
    let _m = machine();
    let server = match ExternalServer::memcached() {
        Ok(server) => server,
        Err(e) => {
            did_not_run(
                "memcached_is_measured_from_its_url_with_no_file",
                &e.to_string(),
            );
            return;
        }
    };
    let dir = tempfile::tempdir().unwrap();
    let url = format!("memcached://{}", server.addr());
    // Bounded: a point that cannot converge in 20 s is N/A, with its reason.
    let args = [url.as_str(), "--load", "10k", "--duration", "20s"];
    let (out, took) = run(&args, &dir.path().join("record"));
    answered(&out);
    assert!(took < Duration::from_secs(40), "{took:?}");
    // The default workload, said.
    assert!(
        stderr(&out).contains(
            "vernier: workload: the default key-value workload, {keys: 10000, key_size: \
             fixed:30, value_size: fixed:200, read_ratio: 0.9}"
        ),
        "{}",
        stderr(&out)
    );
    // The record keeps the scenario the URL made, as --print-scenario prints it.
    let document = printed(&args);
    let record = read_run(&dir.path().join("record"));
    assert_eq!(record["scenario"].as_str(), Some(document.as_str()));
    assert!(
        record["scenario_file"].is_null(),
        "{}",
        record["scenario_file"]
    );
    // Saved, it runs as a file (and prints as itself).
    let file = dir.path().join("memcached.yaml");
    std::fs::write(&file, &document).unwrap();
    assert_eq!(printed(&[file.to_str().unwrap()]), document);
}

#[test]
fn the_synthetic_server_is_measured_from_its_url_as_a_table() {
    let _m = machine();
    let served = ServeProcess::start(&["--busy-poll"]);
    let dir = tempfile::tempdir().unwrap();
    let url = format!("synthetic://{}", served.addr);
    let (out, _) = run(
        &[
            &url,
            "--service",
            "exp:20us",
            "--load",
            "2k",
            "--duration",
            "15s",
            "--output",
            "table",
        ],
        &dir.path().join("record"),
    );
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(
        matches!(out.status.code(), Some(0 | 3 | 4)),
        "{table}\n{}",
        stderr(&out)
    );
    let verdict = table.lines().last().unwrap_or_default();
    assert!(
        verdict.starts_with("verdict: converged") || verdict.starts_with("verdict: n/a"),
        "{table}"
    );
    assert!(table.contains("p99 µs [CI]"), "{table}");
    // A synthetic target takes no default workload: nothing is said of one.
    assert!(!stderr(&out).contains("workload:"), "{}", stderr(&out));
}

/// A length-prefixed server (`vernier serve --protocol framed`) measured from a `tcp://`
/// URL whose flags declare its protocol, as the README's recipe does; the scenario it
/// prints runs as a file.
#[test]
fn a_length_prefixed_server_is_measured_from_a_tcp_url() {
    let _m = machine();
    let served = ServeProcess::start_protocol("framed", &[]);
    let dir = tempfile::tempdir().unwrap();
    let url = format!("tcp://{}", served.addr);
    let args = [
        url.as_str(),
        "--framing",
        "length:4",
        "--request",
        r"{len:u32be}{seq:u64be}\x00{key}",
        "--reply-ok",
        r"12:\x00",
        "--load",
        "2k",
        "--duration",
        "15s",
    ];
    let (out, took) = run(&args, &dir.path().join("record"));
    let point = answered(&out);
    assert!(took < Duration::from_secs(40), "{took:?}");
    assert!(point["samples"].as_u64().unwrap_or(0) > 1_000, "{point:#}");
    // The default keys, said as a declared protocol takes them (no values, no read ratio).
    assert!(
        stderr(&out).contains(
            "vernier: workload: the default keys, {keys: 10000, key_size: fixed:30} (a file's \
             workload:, or --keys, --key-size, --key-dist with a URL, names others)"
        ),
        "{}",
        stderr(&out)
    );
    // Every reply passed the declared check (status 0 at byte 12).
    let agents = point["agents"].as_array().expect("agents");
    assert!(
        !agents.is_empty() && agents.iter().all(|a| a["errors"] == 0),
        "{point:#}"
    );
    // The scenario the URL made declares the protocol as a file would.
    let document = printed(&args);
    assert!(document.contains("protocol:"), "{document}");
    assert!(document.contains("framing:"), "{document}");
    let file = dir.path().join("framed.yaml");
    std::fs::write(&file, &document).unwrap();
    assert_eq!(printed(&[file.to_str().unwrap()]), document);
}

/// Asserts that `vernier run ARGS` failed with exit 2 and one line on stderr, within 3 s,
/// printing nothing on stdout; the line.
fn refused(args: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let (out, took) = run(args, &dir.path().join("record"));
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    assert!(took < Duration::from_secs(3), "{args:?}: {took:?}");
    assert!(out.stdout.is_empty(), "{args:?}");
    assert!(!dir.path().join("record").exists(), "{args:?}: a record");
    err.trim_end().to_owned()
}

#[test]
fn bad_input_is_one_line_and_exit_2_within_3_s() {
    assert_eq!(
        refused(&["memcache://127.0.0.1:11211", "--load", "10k"]),
        "vernier: memcache://127.0.0.1:11211: unknown scheme \"memcache\": expected \
         echo, synthetic, memcached, memcached-binary, redis, http, tcp, grpc or grpcs"
    );
    assert_eq!(
        refused(&["tcp://127.0.0.1:9000", "--load", "10k"]),
        "vernier: tcp://127.0.0.1:9000: tcp:// speaks the protocol you declare: expected \
         --framing and --request, as in --framing length:4 --request \
         '{len:u32be}{seq:u32be}{key}'"
    );
    assert_eq!(
        refused(&["memcached://127.0.0.1", "--load", "10k"]),
        "vernier: memcached://127.0.0.1: missing port: expected memcached://HOST:PORT, as in \
         memcached://127.0.0.1:11211"
    );
    // A URL's flag with a file: the file is where the field is written.
    let scenario = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/memcached-10k.yaml");
    let file = scenario.to_str().unwrap();
    assert_eq!(
        refused(&[file, "--connections", "8"]),
        format!(
            "vernier: --connections sets connections of a URL's scenario; {file} is a file: \
             write connections in it, or give --set 'connections=8'"
        )
    );
    // Nothing listening: said at once, not after the run's limits (5 minutes by default).
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    assert_eq!(
        refused(&[&format!("memcached://127.0.0.1:{port}"), "--load", "10k"]),
        format!(
            "vernier: target 127.0.0.1:{port}: nothing is listening there (connection \
             refused); start the server, or check the address"
        )
    );
    // A flag's bad value names the flag.
    assert_eq!(
        refused(&["redis://127.0.0.1:6379", "--load", "10k", "--width", "150%"]),
        "vernier: --width ci.width: \"150%\": expected a share of the value strictly between \
         0% and 100%, as in 20%"
    );
}
