//! `vernier run --headless` against a real `vernier serve` process: the methodology end to
//! end, its verdicts against the ideal queueing model, its N/A reasons, its exit codes and
//! its records. Every server is killed by PID when its test ends; every run is bounded by
//! its scenario's limits. The runs take turns: two loads on two cores would measure each
//! other.
//!
//! The tests that need the methodology to converge (or to reach its confidence check) are
//! marked ignored, with the reason: they pass on a quiet host and are run by hand with
//! `--ignored`; on the development VM they end N/A as often as not, for independence.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::Value;
use support::{AgentProcess, ServeProcess, machine, read_run, spawn_run, vernier};
use vernier_fixtures::{ModelConfig, simulate};
use vernier_workbench::coordinator::reason::{
    ClosedLoop, Confidence, HeavyTail, HeavyTooFew, TooFewSamples, Why,
};
use vernier_workbench::coordinator::{CheckKind, ReasonKind};

/// The synthetic server, spinning so that its wake-ups are not part of what is measured
/// (the agent sleeps between departures, so the two share two cores well).
fn served() -> ServeProcess {
    ServeProcess::start(&["--busy-poll"])
}

/// Writes `yaml` (with `TARGET` replaced) to a scenario file in `dir`.
fn scenario(dir: &Path, name: &str, yaml: &str, target: SocketAddr) -> PathBuf {
    let path = dir.join(format!("{name}.yaml"));
    std::fs::write(&path, yaml.replace("TARGET", &target.to_string())).unwrap();
    path
}

/// Runs a scenario headless with JSON output; returns the output and the parsed result.
fn run(path: &Path, record: &Path, extra: &[&str]) -> (Output, Value) {
    let mut args = vec![
        "run",
        path.to_str().unwrap(),
        "--headless",
        "--output",
        "json",
        "--record",
        record.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let output = vernier(&args);
    let value = result_of(&output);
    (output, value)
}

/// The one JSON object `vernier run` printed.
fn result_of(output: &Output) -> Value {
    let stdout = String::from_utf8_lossy(&output.stdout);
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| {
        panic!(
            "stdout is not one JSON object ({e}): {stdout}\nstderr:\n{}",
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// The ideal model's p99 sojourn time, µs, for one server worker.
fn model_p99(service: &str, rate: f64) -> f64 {
    let dist: vernier_protocols::Dist = service.parse().unwrap();
    let mean_s = dist.mean_ns() / 1e9;
    let result = simulate(&ModelConfig {
        requests: 400_000,
        warmup: 40_000,
        ..ModelConfig::new(dist, rate * mean_s)
    })
    .unwrap();
    result
        .percentiles
        .iter()
        .find(|p| (p.p - 0.99).abs() < 1e-9)
        .map(|p| p.value)
        .unwrap()
}

fn p99(result: &Value) -> (f64, f64, f64) {
    let p = result["percentiles"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["p"].as_f64() == Some(99.0))
        .unwrap_or_else(|| panic!("no p99 in {result}"));
    (
        p["value"].as_f64().unwrap(),
        p["ci_low"].as_f64().unwrap(),
        p["ci_high"].as_f64().unwrap(),
    )
}

const CONVERGING: &str = "
name: converging
target: TARGET
protocol: synthetic
service: SERVICE
agents: [local]
connections: 32
load: RATE
ci: {percentile: 99, width: WIDTH}
sampling: {rate: 0.2, samples: 5000, interarrival_samples: 500}
limits: {max_tries: 12, max_duration: 90s}
";

/// Whether a point's N/A is one the methodology rightly gives on a host that stalls for
/// milliseconds, at a load whose queue keeps requests dependent for well under a second:
/// the host's stalls or the client's late sends (with the host probe's figures), or samples
/// correlated over a second or more (out of samples, or out of time with a CI still too
/// wide, whose batches of correlated samples span that long at the kept rate): the host's
/// speed drifting over seconds. Any of the point's reasons may say so, whichever is listed
/// first: a point that stopped on the tail without stalls judges every request's tail on
/// what it holds then, and lists its shortfall in samples before the client's late sends
/// (CI failed at 6a0848d on too_few_samples listed before departures).
fn the_host_is_why(point: &Value) -> bool {
    let probed = point["host"].as_array().is_some_and(|h| !h.is_empty());
    let reasons = point["reasons"].as_array().into_iter().flatten();
    probed && reasons.map(support::reason).any(|r| host_reason(point, &r))
}

/// Whether one reason of a probed point's N/A is the host's (see [`the_host_is_why`]).
fn host_reason(point: &Value, reason: &vernier_workbench::coordinator::Reason) -> bool {
    let check = reason.kind();
    let kept_per_s = point["achieved_rate"].as_f64().unwrap_or(0.0)
        * point["sampling_rate"].as_f64().unwrap_or(0.0);
    let dependence_s = match &reason.why {
        // A heavy tail's reason says how long its samples stay dependent too: over seconds,
        // at these loads, that is the host's drift rather than the service's own tail
        // (fixed service has none; one was named heavy at 12% of the time stalled).
        Why::TooFewSamples(TooFewSamples::Ci(t))
        | Why::HeavyTail(HeavyTail::TooFew(HeavyTooFew { too_few: t, .. })) => t.dependence_s,
        Why::Confidence(Confidence::Wide(w)) => w
            .batch_size
            .map(|batch| batch as f64 / kept_per_s.max(1e-9)),
        _ => None,
    };
    let drift = dependence_s.is_some_and(|s| s >= 1.0);
    // A server the host stops for milliseconds at a time holds every connection's request
    // meanwhile, and the load turns closed-loop for a moment: the right reason when the
    // probes saw the host stalled a percent of the time or more (15% in one CI run).
    let stalled = point["host"].as_array().is_some_and(|h| {
        h.iter()
            .any(|r| r["stalled_share"].as_f64().unwrap_or(0.0) >= 0.01)
    });
    [ReasonKind::HostStalls, ReasonKind::Departures].contains(&check)
        || drift
        || (check == ReasonKind::ClosedLoop && stalled)
}

// 90 s: fixed service at 1,500 req/s once ran out of its earlier 60 s with 81,277 of the
// 101,440 samples a dependence-valid CI needed (batches of 5,072 still correlated: the
// host's load drifting over seconds, which no stall probe flags).
fn converges(service: &str, rate: f64, width: &str) {
    let _m = machine();
    let served = served();
    let dir = tempfile::tempdir().unwrap();
    let yaml = CONVERGING
        .replace("SERVICE", service)
        .replace("RATE", &rate.to_string())
        .replace("WIDTH", width);
    let path = scenario(dir.path(), "converging", &yaml, served.addr);
    let started = Instant::now();
    let (output, result) = run(&path, &dir.path().join("record"), &[]);
    let took = started.elapsed();
    let model = model_p99(service, rate);
    // On a host that stalls for milliseconds, an honest run may end N/A: then it must say
    // the host is why (its stalls, or the client's late sends), with the probe's figures;
    // or that its samples depend on each other over seconds, which at this load (ρ 0.075
    // and 0.15: busy periods of a few hundred µs in the model) no queue does, and a host
    // whose speed drifts over seconds does.
    // The exit code and `verdict` follow the tail the CI target is for (without the host's
    // stalls, the default); `every_request` and `reasons` are every request's.
    let own = &result["without_stalls"];
    assert_eq!(result["verdict"], own["verdict"], "{result:#}");
    let answered = support::exit_of(&result["verdict"]);
    assert_eq!(output.status.code(), Some(answered), "{}", stderr(&output));
    if answered == 0 {
        let p99 = own["percentiles"].as_array().unwrap();
        let p99 = p99.iter().find(|p| p["p"] == 99.0).unwrap();
        let value = p99["value"].as_f64().unwrap();
        // The tail without stalls is the server's: not below the ideal system either.
        assert!(value >= 0.95 * model, "{own:#}");
        eprintln!(
            "{service} at {rate}/s without stalls: p99 {value:.1} µs [{:.1}, {:.1}], model {model:.1} µs, {:.1}% touched",
            p99["ci_low"].as_f64().unwrap_or(f64::NAN),
            p99["ci_high"].as_f64().unwrap_or(f64::NAN),
            own["touched_share"].as_f64().unwrap_or(f64::NAN) * 100.0
        );
    }
    if result["every_request"] != "converged" {
        let reason = support::reason(&result["reasons"][0]);
        // The rule stops on the tail asked (without stalls): every request's tail is then
        // judged on what the point holds, and may be short of samples or of precision (it
        // needs more, its stalls' clusters being dependent) while saying how much longer it
        // would take (a CI run at 6a0848d: 6 s more after 18 s). That, too, is the
        // methodology's answer.
        let short_at_stop = answered == 0
            && result["reasons"]
                .as_array()
                .into_iter()
                .flatten()
                .map(support::reason)
                .all(|r| r.kind().more_samples_help() && r.more_time.is_some());
        assert!(
            short_at_stop || the_host_is_why(&result),
            "N/A for a cause other than the host: {result:#}"
        );
        eprintln!(
            "{service} at {rate}/s: N/A {} after {:.1}s: {}",
            reason.kind(),
            took.as_secs_f64(),
            reason.detail()
        );
        return;
    }
    assert_eq!(result["every_request"], "converged");
    let (value, low, high) = p99(&result);
    eprintln!(
        "{service} at {rate}/s: p99 {value:.1} µs [{low:.1}, {high:.1}], model {model:.1} µs, {} samples, {:.1}s to verdict",
        result["samples"],
        took.as_secs_f64()
    );
    // No tool measures less than the ideal system (a 5% allowance for the model's own
    // sampling); how far above it lies is the host's, shown in RESULTS.md, not promised.
    assert!(
        value >= 0.95 * model,
        "p99 {value:.1} µs below the model's {model:.1}"
    );
    assert!(low <= value && value <= high);
    assert!(
        high - low
            <= vernier_protocols::duration_from_spec(width)
                .unwrap()
                .as_secs_f64()
                * 1e6
    );
    // The dependence-valid CI says how it was built.
    let p99_entry = result["percentiles"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["p"] == 99.0)
        .unwrap();
    assert_eq!(p99_entry["dependence"]["method"], "batched-indicator");
    // The record: run.json with the verdict and every event, the samples as Parquet.
    let record: Value = read_run(&dir.path().join("record"));
    assert_eq!(record["status"], "finished");
    assert_eq!(record["points"][0]["every_request"], "converged");
    let checks: Vec<CheckKind> = record["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "check")
        .map(|e| serde_json::from_value(e["check"].clone()).unwrap())
        .collect();
    // Every check of method: vernier but the agents' agreement (one agent here).
    for needed in CheckKind::ALL
        .iter()
        .filter(|&&c| c != CheckKind::Agreement)
    {
        assert!(checks.contains(needed), "no {needed:?} check in {checks:?}");
    }
    assert!(
        std::fs::read_dir(dir.path().join("record/samples.parquet"))
            .unwrap()
            .count()
            > 0
    );
}

#[test]
fn exponential_service_converges_between_the_model_and_its_bound() {
    converges("exp:50us", 1500.0, "100us");
}

#[test]
fn fixed_service_converges_between_the_model_and_its_bound() {
    converges("fixed:100us", 1500.0, "100us");
}

#[test]
fn lognormal_service_is_na_for_its_heavy_tail() {
    let _m = machine();
    let served = served();
    let dir = tempfile::tempdir().unwrap();
    let yaml = "
name: heavy
target: TARGET
protocol: synthetic
service: lognormal:50us:2
connections: 32
load: 1500
ci: {percentile: 99, width: 10us}
sampling: {rate: 0.2, samples: 5000, interarrival_samples: 500}
limits: {max_tries: 6, max_duration: 30s}
";
    let path = scenario(dir.path(), "heavy", yaml, served.addr);
    let (output, result) = run(&path, &dir.path().join("record"), &[]);
    // N/A, or wide: a heavy tail too heavy for the samples, with or without a CI.
    assert!(
        matches!(output.status.code(), Some(3 | 4)),
        "{result:#}\n{}",
        stderr(&output)
    );
    assert_ne!(result["every_request"], "converged");
    let reason = support::reason(&result["reasons"][0]);
    // On a host that stalls, its stalls (or its drift) may be what the tail is made of
    // before the service's own shape shows: then that is the right reason to give. So is
    // running out of samples, when the host's noise widens the body of the distribution
    // as much as its tail (the tail then no longer stands out as the service's own): the
    // samples it needs must be beyond what the limit gave.
    let short = matches!(
        &reason.why,
        Why::TooFewSamples(TooFewSamples::Ci(t)) if t.min_samples > t.samples
    );
    if reason.kind() != ReasonKind::HeavyTail && (short || the_host_is_why(&result)) {
        eprintln!(
            "lognormal: N/A {} (the host's): {}",
            reason.kind(),
            reason.detail()
        );
        return;
    }
    // The width named: the order statistics' (too few samples), or the CI's.
    let width = match &reason.why {
        Why::HeavyTail(HeavyTail::TooFew(f)) => f.ci_width_us,
        Why::HeavyTail(HeavyTail::Wide(w)) => w.ci_width_us,
        other => panic!("not heavy_tail: {other:#?}\n{result:#}"),
    };
    assert!(width > 10.0, "{reason:?}");
}

#[test]
fn one_connection_at_eighty_percent_is_na_closed_loop() {
    let _m = machine();
    let served = served();
    let dir = tempfile::tempdir().unwrap();
    // 80% of one server worker's capacity for 100 µs requests: 8,000 req/s.
    let yaml = "
name: closed
target: TARGET
protocol: synthetic
service: fixed:100us
connections: 1
depth: 1
load: 8000
ci: {percentile: 99, width: 10us}
limits: {max_tries: 4, max_duration: 20s}
";
    let path = scenario(dir.path(), "closed", yaml, served.addr);
    let (output, result) = run(&path, &dir.path().join("record"), &[]);
    assert_eq!(
        output.status.code(),
        Some(3),
        "{result:#}\n{}",
        stderr(&output)
    );
    assert!(
        result["reasons"][0].is_object(),
        "N/A without a reason of every request's: {result:#}"
    );
    let reason = support::reason(&result["reasons"][0]);
    let Why::ClosedLoop(ClosedLoop::Held(held)) = &reason.why else {
        panic!("not a closed loop held: {result:#}")
    };
    // More connections than the one given would carry it: the cure is connections.
    assert!(held.connections_needed >= 2, "{held:?}");
    assert!(held.connections_needed > held.connections, "{held:?}");
    assert_eq!(
        result["agents"][0]["backlog_max"].as_u64().map(|b| b > 0),
        Some(true)
    );
}

#[test]
fn a_load_beyond_the_agent_is_na_load_not_reached() {
    let _m = machine();
    let served = served();
    let dir = tempfile::tempdir().unwrap();
    let yaml = "
name: unreachable
target: TARGET
protocol: synthetic
service: fixed:0us
connections: 256
depth: 1024
load: 50000000
ci: {percentile: 99, width: 10us}
limits: {max_tries: 4, max_duration: 20s}
";
    let path = scenario(dir.path(), "unreachable", yaml, served.addr);
    let (output, result) = run(&path, &dir.path().join("record"), &[]);
    assert_eq!(
        output.status.code(),
        Some(3),
        "{result:#}\n{}",
        stderr(&output)
    );
    let reason = support::reason(&result["reasons"][0]);
    let Why::LoadNotReached(f) = &reason.why else {
        panic!("not load_not_reached: {result:#}")
    };
    // (5 million a second was beyond one worker until requests due together shared a
    // send: with 1,024 to a connection it then answered 5.0 million.)
    assert!(
        f.achieved_rate > 0.0 && f.achieved_rate < 50_000_000.0 * 0.95,
        "{f:?}"
    );
}

#[test]
fn an_slo_search_finds_a_rate_below_the_model() {
    let _m = machine();
    let served = served();
    let dir = tempfile::tempdir().unwrap();
    let yaml = "
name: slo
target: TARGET
protocol: synthetic
service: exp:100us
connections: 64
load: {slo: {percentile: 99, below: 1500us, from: 1000, to: 9000, precision: 0.05}}
ci: {percentile: 99, width: 100us}
sampling: {rate: 0.2, samples: 2000, interarrival_samples: 500}
limits: {max_tries: 8, max_duration: 40s}
";
    let path = scenario(dir.path(), "slo", yaml, served.addr);
    let (output, result) = run(&path, &dir.path().join("record"), &[]);
    // The model's answer: the highest rate whose ideal p99 is below 1.5 ms, by bisection.
    // (The SLO leaves room for what this host adds to every p99: a few hundred µs of
    // stalls, which at 700 µs left no load to find.)
    let (mut lo, mut hi) = (1000.0f64, 9500.0f64);
    while hi - lo > 25.0 {
        let mid = (lo + hi) / 2.0;
        if model_p99("exp:100us", mid) < 1500.0 {
            lo = mid
        } else {
            hi = mid
        }
    }
    let points = result["points"].as_array().unwrap();
    // Each load tried, its verdict and why: what the search went by.
    let tried: Vec<String> = points
        .iter()
        .map(|p| {
            format!(
                "{:.0} req/s {} {}",
                p["target_rate"].as_f64().unwrap_or(f64::NAN),
                p["verdict"].as_str().unwrap_or("?"),
                p["reasons"][0]["detail"].as_str().unwrap_or("")
            )
        })
        .collect();
    eprintln!(
        "SLO search: {:?} req/s after {} loads; the model's answer {lo:.0} req/s\n{}",
        result["slo_rate"].as_f64(),
        points.len(),
        tried.join("\n")
    );
    // Never above the ideal system's answer. How far below depends on the host: a load
    // whose point ends N/A (the host's stalls, the client's late sends) counts as not met,
    // since nothing shows it met the objective. Here: 5,000 req/s in a quiet hour; 1,875 to
    // 2,875 when the host stalled 0.6-1.0% of the time (the probe's figures are in each
    // point's reason, printed above). Each load has 40 s, since a p99 CI wants 30
    // effective samples beyond p99, about 17,000 samples at 1,000 req/s when the host's
    // stalls inflate the variance 5.6-fold (20 s left the first load N/A in a stalling
    // minute). When even the starting load ends N/A for the host, no rate was shown to
    // meet the objective and the search rightly answers N/A (exit 3), having tried it; an
    // N/A for any other cause, or a rate at or above the model's, fails.
    let Some(found) = result["slo_rate"].as_f64() else {
        assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
        let first = &points[0];
        assert_eq!(first["target_rate"].as_f64(), Some(1000.0), "{result:#}");
        assert!(
            the_host_is_why(first),
            "the starting load N/A for a cause other than the host:\n{}",
            tried.join("\n")
        );
        eprintln!("SLO search: no rate met the objective on this host (N/A, the host's)");
        return;
    };
    assert_eq!(
        output.status.code(),
        Some(0),
        "{result:#}\n{}",
        stderr(&output)
    );
    assert!(
        found < lo && found >= 1000.0,
        "found {found:.0}, model {lo:.0}\n{}",
        tried.join("\n")
    );
}

#[test]
fn exit_codes_and_bad_scenarios() {
    let dir = tempfile::tempdir().unwrap();
    // Malformed: exit 2, the file, the line and the field named, nothing on stdout.
    let bad = dir.path().join("bad.yaml");
    std::fs::write(
        &bad,
        "name: bad\ntarget: 127.0.0.1:1\nprotocol: synthetic\nservice: exp:20us\nload: 1000\nci: {percentile: 99, width: 0us}\n",
    )
    .unwrap();
    let output = vernier(&["run", bad.to_str().unwrap(), "--headless"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(output.stdout.is_empty());
    let err = stderr(&output);
    assert!(
        err.contains("bad.yaml:6") && err.contains("ci.width"),
        "{err}"
    );
    let unknown = dir.path().join("unknown.yaml");
    std::fs::write(
        &unknown,
        "name: bad\ntarget: 127.0.0.1:1\nprotocol: synthetic\nservice: exp:20us\nload: 1000\nci: {percentile: 99, width: 10us}\nconections: 4\n",
    )
    .unwrap();
    let output = vernier(&["run", unknown.to_str().unwrap(), "--headless"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("unknown.yaml:7"),
        "{}",
        stderr(&output)
    );
    // A bad override: exit 2.
    let good = dir.path().join("good.yaml");
    std::fs::write(
        &good,
        "name: good\ntarget: 127.0.0.1:1\nprotocol: synthetic\nservice: exp:20us\nload: 1000\nci: {percentile: 99, width: 10us}\n",
    )
    .unwrap();
    let output = vernier(&[
        "run",
        good.to_str().unwrap(),
        "--headless",
        "--set",
        "ci.width=soon",
    ]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(stderr(&output).contains("ci.width"), "{}", stderr(&output));
    // A target nobody listens on: bad input (2), said before anything starts, not a verdict.
    let output = vernier(&[
        "run",
        good.to_str().unwrap(),
        "--headless",
        "--record",
        dir.path().join("refused").to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("127.0.0.1:1"),
        "{}",
        stderr(&output)
    );
    assert!(output.stdout.is_empty());
}

#[test]
fn a_killed_run_leaves_a_readable_record() {
    let _m = machine();
    let served = served();
    let dir = tempfile::tempdir().unwrap();
    let yaml = "
name: killed
target: TARGET
protocol: synthetic
service: exp:50us
connections: 32
load: [2000, 3000]
ci: {percentile: 99.99, width: 1us}
sampling: {rate: 0.2}
limits: {max_tries: 50, max_duration: 60s}
";
    let path = scenario(dir.path(), "killed", yaml, served.addr);
    let record = dir.path().join("record");
    let mut child = Command::new(env!("CARGO_BIN_EXE_vernier"))
        .args([
            "run",
            path.to_str().unwrap(),
            "--headless",
            "--record",
            record.to_str().unwrap(),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Killed once it has written three parts of samples (one a second while it measures):
    // how long the start takes is the host's, so the test waits for the parts, not a time.
    let parts = || {
        std::fs::read_dir(record.join("samples.parquet")).map_or(0, |d| {
            d.filter(|e| {
                e.as_ref()
                    .is_ok_and(|e| e.path().extension().is_some_and(|x| x == "parquet"))
            })
            .count()
        })
    };
    let started = Instant::now();
    while parts() < 3 && started.elapsed() < Duration::from_secs(40) {
        std::thread::sleep(Duration::from_millis(100));
    }
    kill(Pid::from_raw(child.id() as i32), Signal::SIGKILL).unwrap();
    child.wait().unwrap();
    let run: Value = read_run(&record);
    assert_eq!(run["status"], "running");
    assert!(!run["events"].as_array().unwrap().is_empty());
    // Every part written is complete: the report reads them all.
    let output = vernier(&[
        "report",
        record.to_str().unwrap(),
        "--json",
        "--out",
        dir.path().join("report").to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let written = parts();
    assert!(
        written >= 3,
        "{written} parts after {:.1} s",
        started.elapsed().as_secs_f64()
    );
}

/// The cores a task may run on: the `Cpus_allowed_list` of its `/proc/…/status`.
fn allowed_cpus(status: &str) -> Option<String> {
    status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .map(|v| v.trim().to_string())
}

/// The first and the last core this process may use; the test says so and fails when
/// there are fewer than two.
fn two_cores() -> (usize, usize) {
    let allowed = vernier_agent::sys::available_cpus();
    assert!(
        allowed.len() >= 2,
        "this test needs two cores this process may use; it has {allowed:?}"
    );
    (allowed[0], allowed[allowed.len() - 1])
}

#[test]
fn pinned_workers_keep_vernier_s_own_threads_off_the_other_cores() {
    let _m = machine();
    let (_, cpu) = two_cores();
    let served = served();
    let dir = tempfile::tempdir().unwrap();
    let yaml = format!(
        "
name: confined
target: TARGET
protocol: synthetic
service: exp:20us
workers: 1
cpus: [{cpu}]
connections: 8
load: 1000
ci: {{percentile: 99, width: 1us}}
limits: {{max_duration: 6s}}
"
    );
    let path = scenario(dir.path(), "confined", &yaml, served.addr);
    let mut child = spawn_run(&path, &dir.path().join("record"), &[]);
    // Once it says its threads are confined (after its start-of-run measurements, whose
    // ping-pong runs on two cores first, however long the host makes them take).
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        for line in std::io::BufRead::lines(std::io::BufReader::new(stderr)).map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let mut err = String::new();
    let asked = Instant::now();
    while !err.contains("vernier's own threads kept on core") {
        match rx.recv_timeout(Duration::from_secs(30).saturating_sub(asked.elapsed())) {
            Ok(line) => err.push_str(&(line + "\n")),
            Err(_) => panic!("no confinement said within 30 s:\n{err}"),
        }
    }
    std::thread::sleep(Duration::from_millis(500));
    // Every thread of the running vernier: on the workers' core, whatever it does.
    let tasks = format!("/proc/{}/task", child.id());
    let masks: Vec<(String, String)> = std::fs::read_dir(&tasks)
        .unwrap()
        .filter_map(|e| {
            let dir = e.ok()?.path();
            let name = std::fs::read_to_string(dir.join("comm")).ok()?;
            let mask = allowed_cpus(&std::fs::read_to_string(dir.join("status")).ok()?)?;
            Some((name.trim().to_string(), mask))
        })
        .collect();
    child.wait().unwrap();
    reader.join().unwrap();
    err.extend(rx.try_iter().map(|l| l + "\n"));
    assert!(masks.len() >= 3, "the run's threads: {masks:?}\n{err}");
    for (name, mask) in &masks {
        assert_eq!(mask, &cpu.to_string(), "thread {name}: {masks:?}\n{err}");
    }
    assert!(
        err.contains(&format!(
            "vernier's own threads kept on core {cpu} with the workers"
        )),
        "{err}"
    );
}

#[test]
fn the_target_s_cores_are_probed_when_the_scenario_names_them() {
    let _m = machine();
    let (target, worker) = two_cores();
    let served = served();
    let dir = tempfile::tempdir().unwrap();
    let named = format!("target_cpus: [{target}]\n");
    let (_, result) = probed_run(dir.path(), served.addr, worker, &named);
    // The worker's core (its own waits) and the target's (a probe): each watched, each woken.
    let host = probed_cores(&result, [worker, target]);
    for h in host {
        assert!(h["wakeups"].as_u64().unwrap_or(0) > 100, "{h}");
    }
    // The record's stalls, the worker's and the probe's and the late sends, mark its samples
    // again in `vernier analyze` (one agent, one point: one clock).
    let record = dir.path().join("record");
    let share = |more: &[&str]| {
        let mut args = vec!["analyze", "samples.parquet", "--column", "latency_ns"];
        args.extend(["--send-column", "departure_ns", "--stalls", "stalls.csv"]);
        args.extend_from_slice(more);
        let out = Command::new(env!("CARGO_BIN_EXE_vernier"))
            .args(&args)
            .current_dir(&record)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        v["without_stalls"]["touched_share"].as_f64().unwrap()
    };
    let probes = share(&[]);
    let with_late = share(&["--late-column", "queueing_ns"]);
    assert!(
        (0.0..=1.0).contains(&probes) && with_late >= probes,
        "{probes} then {with_late}"
    );
}

/// A local target pinned to a core (`taskset -c`) has that core probed when the scenario
/// names none: vernier finds the process listening at the target and its threads' cores.
#[test]
fn a_pinned_local_target_s_core_is_found_and_probed() {
    let _m = machine();
    let (target, worker) = two_cores();
    let mut child = Command::new("taskset")
        .args(["-c", &target.to_string(), env!("CARGO_BIN_EXE_vernier")])
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--protocol",
            "synthetic",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("taskset (util-linux) starts vernier serve");
    let addr = support::listening_addr(&mut child).parse().unwrap();
    let served = ServeProcess { child, addr };
    let dir = tempfile::tempdir().unwrap();
    let (output, result) = probed_run(dir.path(), served.addr, worker, "");
    let said = stderr(&output);
    let pid = served.child.id();
    assert!(
        said.contains(&format!("(pid {pid}) on CPU {target}; probed for stalls")),
        "{said}"
    );
    probed_cores(&result, [worker, target]);
}

/// A 1,000 req/s point of a few seconds against `target`, its worker on `worker`, with
/// `more` lines in its scenario; recorded in `dir`/record.
fn probed_run(dir: &Path, target: SocketAddr, worker: usize, more: &str) -> (Output, Value) {
    let yaml = format!(
        "
name: probed
target: TARGET
protocol: synthetic
service: exp:20us
cpus: [{worker}]
{more}connections: 8
load: 1000
ci: {{percentile: 99, width: 1us}}
limits: {{max_duration: 4s}}
"
    );
    let path = scenario(dir, "probed", &yaml, target);
    run(&path, &dir.join("record"), &[])
}

/// The result's host reports, asserted to be of the worker's core (the worker's own waits)
/// then the target's (a probe): no probe thread wakes beside the worker.
fn probed_cores(result: &Value, [worker, target]: [usize; 2]) -> &Vec<Value> {
    let host = result["host"].as_array().expect("host reports");
    let cpus: Vec<Option<u64>> = host.iter().map(|h| h["cpu"].as_u64()).collect();
    assert_eq!(
        cpus,
        [Some(worker as u64), Some(target as u64)],
        "{result:#}"
    );
    host
}

#[test]
fn the_demo_runs_its_sweep_with_nothing_installed() {
    let _m = machine();
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("demo");
    let output = vernier(&["demo", "--record", record.to_str().unwrap()]);
    let table = String::from_utf8_lossy(&output.stdout);
    assert!(
        matches!(output.status.code(), Some(0 | 3 | 4)),
        "{}",
        stderr(&output)
    );
    assert!(table.contains("verdict:"), "{table}");
    let run: Value = read_run(&record);
    assert_eq!(run["points"].as_array().unwrap().len(), 3, "{table}");
    assert_eq!(run["status"], "finished");
    // Each point also has the tail without the host's stalls (the demo's target is in this
    // process: its host is the one probed), and the table prints it.
    for point in run["points"].as_array().unwrap() {
        let own = &point["without_stalls"];
        let touched = own["touched_share"].as_f64().unwrap_or(-1.0);
        assert!((0.0..=1.0).contains(&touched), "{own:#}");
        assert_eq!(own["probed"], "client_and_target", "{own:#}");
        assert!(
            matches!(own["verdict"].as_str(), Some("converged" | "wide" | "n/a")),
            "{own:#}"
        );
        assert_eq!(
            own["percentiles"].as_array().map(Vec::len),
            point["percentiles"].as_array().map(Vec::len),
            "{own:#}"
        );
    }
    assert!(table.contains("without stalls"), "{table}");
    // The stalls the probes saw, beside the samples, when there were any.
    if let Ok(text) = std::fs::read_to_string(record.join("stalls.csv")) {
        assert!(text.starts_with("start_ns,end_ns,"), "{text}");
    }
}

/// An address of loopback whose port was free a moment ago.
fn free_addr() -> String {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .to_string()
}

/// Runs `vernier run` with the token in its environment.
fn run_with_token(path: &Path, record: &Path, token: &str) -> (Output, Value) {
    let output = Command::new(env!("CARGO_BIN_EXE_vernier"))
        .args([
            "run",
            path.to_str().unwrap(),
            "--headless",
            "--record",
            record.to_str().unwrap(),
        ])
        .env("TEST_AGENT_TOKEN", token)
        .output()
        .unwrap();
    let value = result_of(&output);
    (output, value)
}

const REMOTE: &str = "
name: remote
target: TARGET
protocol: synthetic
service: fixed:100us
agents:
  - {address: AGENT0, token_env: TEST_AGENT_TOKEN}
  - {address: AGENT1, token_env: TEST_AGENT_TOKEN}
connections: 1
depth: 1
load: 16000
ci: {percentile: 99, width: 10us}
limits: {max_tries: 4, max_duration: 20s}
";

#[test]
fn two_remote_agents_share_the_load_over_grpc() {
    let _m = machine();
    let served = served();
    let token = "remote-test-token";
    // Agent 0 serves its live figures too.
    let metrics = free_addr();
    let (a0, a1) = (
        AgentProcess::start_with(token, &["--metrics", &metrics]),
        AgentProcess::start(token),
    );
    let (status, idle) = http_get(&metrics, "/metrics");
    assert_eq!(status, "HTTP/1.1 200 OK");
    assert!(
        idle.contains("vernier_agent_held 0") && idle.contains("vernier_agent_sessions 0"),
        "{idle}"
    );
    let dir = tempfile::tempdir().unwrap();
    // Two agents with one connection each cannot carry 16,000 req/s of 100 µs requests:
    // a verdict that needs both agents' counters, reached in seconds.
    let yaml = REMOTE
        .replace("AGENT0", &a0.addr)
        .replace("AGENT1", &a1.addr);
    let path = scenario(dir.path(), "remote", &yaml, served.addr);
    let (output, result) = run_with_token(&path, &dir.path().join("record"), token);
    assert_eq!(
        output.status.code(),
        Some(3),
        "{result:#}\n{}",
        stderr(&output)
    );
    assert_eq!(
        support::first_kind(&result),
        Some(ReasonKind::ClosedLoop),
        "{result:#}"
    );
    let agents = result["agents"].as_array().unwrap();
    assert_eq!(agents.len(), 2);
    // Each agent carried about half of what was achieved: the coordinator asks each for
    // half, and each, closed-loop over its one connection, answers what the server's
    // latency allows it (how much that is, is the host's).
    let achieved = result["achieved_rate"].as_f64().unwrap();
    assert!(achieved > 0.0, "{result:#}");
    for a in agents {
        let share = a["achieved_rate"].as_f64().unwrap();
        assert!(
            (0.3 * achieved..0.7 * achieved).contains(&share),
            "{share:.0} of {achieved:.0} req/s: {result:#}"
        );
    }
    assert_eq!(result["timestamps"], "kernel");
    // What agent 0 did, in its figures: one session, over, its requests and latencies.
    let (_, after) = http_get(&metrics, "/metrics");
    for needle in [
        "vernier_agent_held 0",
        "vernier_agent_sessions 1",
        "vernier_agent_sent{worker=\"0\"}",
        "vernier_agent_latency_seconds_count",
    ] {
        assert!(after.contains(needle), "{needle} missing from:\n{after}");
    }
    promtool_accepts(&after);
    // A wrong token is an error (exit 1) naming the agent, not a verdict.
    let (output, _) = {
        let output = Command::new(env!("CARGO_BIN_EXE_vernier"))
            .args([
                "run",
                path.to_str().unwrap(),
                "--headless",
                "--record",
                dir.path().join("wrong").to_str().unwrap(),
            ])
            .env("TEST_AGENT_TOKEN", "not-the-token")
            .output()
            .unwrap();
        (output, ())
    };
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(stderr(&output).contains(&a0.addr), "{}", stderr(&output));
}

#[test]
fn a_lost_agent_ends_the_point_na_and_keeps_what_was_collected() {
    let _m = machine();
    let served = served();
    let token = "lost-test-token";
    let (a0, mut a1) = (AgentProcess::start(token), AgentProcess::start(token));
    let dir = tempfile::tempdir().unwrap();
    let yaml = REMOTE
        .replace("AGENT0", &a0.addr)
        .replace("AGENT1", &a1.addr)
        .replace("connections: 1", "connections: 16")
        .replace("load: 16000", "load: 2000")
        .replace("width: 10us", "width: 1us")
        .replace("max_duration: 20s", "max_duration: 60s");
    let path = scenario(dir.path(), "lost", &yaml, served.addr);
    let record = dir.path().join("record");
    let child = spawn_run(&path, &record, &[("TEST_AGENT_TOKEN", token)]);
    std::thread::sleep(Duration::from_secs(4));
    a1.child.kill().unwrap();
    let output = child.wait_with_output().unwrap();
    let result = result_of(&output);
    assert_eq!(output.status.code(), Some(3), "{result:#}");
    let reason = support::reason(&result["reasons"][0]);
    let Why::AgentLost(lost) = &reason.why else {
        panic!("not agent_lost: {result:#}")
    };
    assert_eq!(lost.agent, 1, "{result:#}");
    let run: Value = read_run(&record);
    assert_eq!(run["status"], "finished");
}

/// A scenario file in `dir` that loads `vernier serve` at `rate` with 10 µs of service,
/// asking for a CI no run reaches, so that it lasts its `limit`.
fn short_run(dir: &Path, name: &str, rate: u32, limit: &str, target: SocketAddr) -> PathBuf {
    let yaml = format!(
        "
name: {name}
target: TARGET
protocol: synthetic
service: fixed:10us
agents: [local]
connections: 4
load: {rate}
ci: {{percentile: 99, width: 1us}}
limits: {{max_duration: {limit}}}
"
    );
    scenario(dir, name, &yaml, target)
}

/// The Python reader of interval logs: `VERNIER_PYTHON` (tests/run.sh makes a virtual
/// environment with the `hdrhistogram` package from PyPI) or `python3`, if it can import
/// `hdrh`.
fn python_with_hdrh() -> Result<String, String> {
    let python = std::env::var("VERNIER_PYTHON").unwrap_or_else(|_| "python3".into());
    match Command::new(&python)
        .args(["-c", "import hdrh.log"])
        .output()
    {
        Ok(o) if o.status.success() => Ok(python),
        Ok(o) => Err(format!(
            "{python} cannot import hdrh (pip install hdrhistogram): {}",
            String::from_utf8_lossy(&o.stderr).trim()
        )),
        Err(e) => Err(format!("cannot run {python}: {e}")),
    }
}

/// Reads an interval log with HdrHistogram's Python implementation: the intervals whose
/// tag starts with argv[2], merged; their count and p50/p99/p99.9.
const READ_HLOG_PY: &str = r#"
import json, sys
from hdrh.histogram import HdrHistogram
from hdrh.log import HistogramLogReader
path, prefix = sys.argv[1], sys.argv[2]
reader = HistogramLogReader(path, HdrHistogram(1, 3600 * 10**9, 3))
total = HdrHistogram(1, 3600 * 10**9, 3)
intervals = 0
while True:
    h = reader.get_next_interval_histogram()
    if h is None:
        break
    if (h.get_tag() or "").startswith(prefix):
        total.add(h)
        intervals += 1
n = total.get_total_count()
# Each percentile with the values one rank either side: implementations round the rank
# (q * n) differently.
span = lambda p: [total.get_value_at_percentile(min(100.0, max(0.0, p + d * 100.0 / n)))
                  for d in (-1, 0, 1)]
print(json.dumps({"intervals": intervals, "count": n,
                  "p": [span(p) for p in (50.0, 99.0, 99.9)]}))
"#;

/// A record keeps each point's latency of every request as an HdrHistogram interval log:
/// HdrHistogram's own Python reader finds the same requests and percentiles in it as
/// `vernier analyze` does, and their median is that of the samples the record kept.
#[test]
fn a_record_s_interval_log_reads_the_same_in_python() {
    let python = match python_with_hdrh() {
        Ok(p) => p,
        Err(why) if std::env::var_os("VERNIER_PYTHON").is_some() => panic!("{why}"),
        Err(why) => {
            return support::did_not_run("a_record_s_interval_log_reads_the_same_in_python", &why);
        }
    };
    let _m = machine();
    let served = served();
    let dir = tempfile::tempdir().unwrap();
    let path = short_run(dir.path(), "hlog", 1_500, "6s", served.addr);
    let record = dir.path().join("record");
    let _ = run(&path, &record, &[]);
    let hlog = record.join("point-000.hlog");
    let hlog_text = std::fs::read_to_string(&hlog).unwrap();
    assert!(
        hlog_text.contains("Tag=point0/round0/agent0/worker0,")
            && hlog_text.contains("Tag=point0/round1/"),
        "{}",
        &hlog_text[..hlog_text.len().min(2_000)]
    );
    for prefix in ["point0/", "point0/round1/"] {
        let rust = vernier(&[
            "analyze",
            hlog.to_str().unwrap(),
            "--tag",
            prefix,
            "--percentiles",
            "50,99,99.9",
        ]);
        assert!(rust.status.success(), "{}", stderr(&rust));
        let rust: Value = serde_json::from_slice(&rust.stdout).unwrap();
        let py = Command::new(&python)
            .args(["-c", READ_HLOG_PY, hlog.to_str().unwrap(), prefix])
            .output()
            .unwrap();
        assert!(
            py.status.success(),
            "{}",
            String::from_utf8_lossy(&py.stderr)
        );
        let py: Value = serde_json::from_slice(&py.stdout).unwrap();
        eprintln!("{prefix}: vernier {rust}\npython {py}");
        assert_eq!(rust["intervals"], py["intervals"], "{prefix}");
        assert_eq!(rust["count"], py["count"], "{prefix}");
        assert!(rust["count"].as_u64().unwrap() > 1_000, "{rust}");
        for (i, p) in rust["percentiles"].as_array().unwrap().iter().enumerate() {
            let ours = p["value"].as_f64().unwrap();
            let [below, theirs, above] = [0, 1, 2].map(|j| py["p"][i][j].as_f64().unwrap());
            // The same buckets, up to how each rounds the percentile's rank.
            assert!(
                below <= ours && ours <= above,
                "{prefix} p{}: vernier {ours} ns, python {theirs} ns ({below} to {above} a rank either side)",
                p["p"]
            );
        }
    }
    // The samples kept (every request at this rate) have the same median, in ns.
    let samples = vernier(&[
        "analyze",
        record.join("samples.parquet").to_str().unwrap(),
        "--column",
        "latency_ns",
        "--percentiles",
        "50",
    ]);
    assert!(samples.status.success(), "{}", stderr(&samples));
    let samples: Value = serde_json::from_slice(&samples.stdout).unwrap();
    let from_samples = samples["percentiles"][0]["value"].as_f64().unwrap();
    let all = vernier(&["analyze", hlog.to_str().unwrap(), "--percentiles", "50"]);
    let all: Value = serde_json::from_slice(&all.stdout).unwrap();
    let from_log = all["percentiles"][0]["value"].as_f64().unwrap();
    assert!(
        (from_log - from_samples).abs() <= 0.02 * from_samples,
        "p50: log {from_log} ns, samples {from_samples} ns"
    );
}

/// `promtool check metrics` accepts `body` (where promtool is installed; tests/run.sh
/// installs it, and a test that needs it says when it is missing).
fn promtool_accepts(body: &str) {
    let Ok(mut promtool) = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    else {
        return support::did_not_run("promtool check metrics", "promtool is not installed");
    };
    std::io::Write::write_all(&mut promtool.stdin.take().unwrap(), body.as_bytes()).unwrap();
    let checked = promtool.wait_with_output().unwrap();
    assert!(
        checked.status.success(),
        "promtool: {}{}\n{body}",
        String::from_utf8_lossy(&checked.stdout),
        String::from_utf8_lossy(&checked.stderr)
    );
}

/// One HTTP/1.1 GET of `path` at `addr`: the status line and the body.
fn http_get(addr: &str, path: &str) -> (String, String) {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    write!(stream, "GET {path} HTTP/1.1\r\nHost: {addr}\r\n\r\n").unwrap();
    let mut text = String::new();
    stream.read_to_string(&mut text).unwrap();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    (
        head.lines().next().unwrap_or("").to_string(),
        body.to_string(),
    )
}

/// `vernier run --metrics`: scraped while the run measures, the figures name the point's
/// asked rate, each agent's rates and latency histogram and the phase, and Prometheus's
/// own checker (`promtool check metrics`) accepts them; other paths are 404, and the
/// figures end with the run.
#[test]
fn live_metrics_pass_promtool_during_a_run() {
    if Command::new("promtool").arg("--version").output().is_err() {
        return support::did_not_run(
            "live_metrics_pass_promtool_during_a_run",
            "promtool (Debian's prometheus package) is not installed",
        );
    }
    let _m = machine();
    let served = served();
    let dir = tempfile::tempdir().unwrap();
    let path = short_run(dir.path(), "metrics", 2_000, "8s", served.addr);
    let record = dir.path().join("record");
    let mut child = Command::new(env!("CARGO_BIN_EXE_vernier"))
        .args([
            "run",
            path.to_str().unwrap(),
            "--headless",
            "--quiet",
            "--record",
        ])
        .arg(&record)
        .args(["--metrics", "127.0.0.1:0"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(stderr));
    let addr = lines
        .by_ref()
        .map_while(Result::ok)
        .find_map(|l| {
            l.strip_prefix("vernier: live figures at http://")
                .and_then(|rest| rest.strip_suffix("/metrics"))
                .map(String::from)
        })
        .expect("the metrics address on stderr");
    // Keep reading stderr so that the run never blocks on it.
    let drain = std::thread::spawn(move || lines.map_while(Result::ok).count());
    let needles = [
        "vernier_asked_rate{point=\"0\"} 2000",
        "vernier_achieved_rate{point=\"0\",agent=\"0\"}",
        "vernier_latency_seconds_bucket{le=\"+Inf\",point=\"0\",agent=\"0\"}",
        "vernier_latency_seconds_count{point=\"0\",agent=\"0\"}",
        "vernier_phase{point=\"0\",phase=",
    ];
    // Scraped while the point loads: the agent's figures appear with its first batch,
    // after the run's start-of-run measurements, however long the host makes those.
    let asked = Instant::now();
    let body = loop {
        let (status, body) = http_get(&addr, "/metrics");
        assert_eq!(status, "HTTP/1.1 200 OK", "{body}");
        if needles.iter().all(|n| body.contains(n)) {
            break body;
        }
        assert!(
            asked.elapsed() < Duration::from_secs(6),
            "{:?} missing from:\n{body}",
            needles.iter().find(|n| !body.contains(*n))
        );
        std::thread::sleep(Duration::from_millis(250));
    };
    promtool_accepts(&body);
    let (status, _) = http_get(&addr, "/");
    assert_eq!(status, "HTTP/1.1 404 Not Found");
    // The run ends by its limit; its figures go with it.
    let exit = child.wait().unwrap();
    drain.join().unwrap();
    assert!(
        exit.code().is_some_and(|c| matches!(c, 0 | 3 | 4)),
        "{exit:?}"
    );
    assert!(std::net::TcpStream::connect(&addr).is_err());
}

const REPLICATED: &str = "
name: replicated
target: TARGET
protocol: synthetic
service: exp:20us
agents:
  - local
  - {address: REMOTE_AGENT, token_env: TEST_AGENT_TOKEN}
connections: 8
load: 2000
ci: {percentile: 99, width: 40%}
sampling: {rate: 0.5, samples: 3000, interarrival_samples: 500}
limits: {max_tries: 6, max_duration: 20s}
replications: {min: 2, max: 2, width: 60%, pause: 200ms}
";

#[test]
fn a_replicated_point_runs_again_on_fresh_sessions_and_reports_across_runs() {
    let _m = machine();
    let served = served();
    let token = "replicated-test-token";
    let metrics = free_addr();
    let agent = AgentProcess::start_with(token, &["--metrics", &metrics]);
    let dir = tempfile::tempdir().unwrap();
    let yaml = REPLICATED.replace("REMOTE_AGENT", &agent.addr);
    let path = scenario(dir.path(), "replicated", &yaml, served.addr);
    let record = dir.path().join("record");
    let (output, result) = run_with_token(&path, &record, token);
    assert!(
        matches!(output.status.code(), Some(0 | 3 | 4)),
        "{result:#}\n{}",
        stderr(&output)
    );
    let runs = result["replication"]["runs"]
        .as_array()
        .unwrap_or_else(|| panic!("no runs: {result:#}"));
    // A run that ended N/A for a cause (not for precision) ends the point after it: then
    // this host could not run the load, and that is what the result must say.
    if runs.len() == 1 {
        // The rule replications follow: a run ends the point when one of its reasons is
        // a cause more samples would not remove (a late client's departures beside the
        // host's stalls, say), whichever comes first in the list.
        let reasons: Vec<_> = result["reasons"]
            .as_array()
            .into_iter()
            .flatten()
            .map(support::reason)
            .collect();
        let cause = reasons.iter().find(|r| !r.kind().more_samples_help());
        let run = &runs[0];
        assert!(
            reasons.iter().all(|r| r.run == Some(1)) && cause.is_some(),
            "the point's reasons: {}\nrun 1: {} {}\nstderr:\n{}\n{result:#}",
            result["reasons"],
            run["verdict"],
            run["reasons"],
            stderr(&output)
        );
        let check = cause.map(|r| r.kind()).unwrap();
        eprintln!("run 1 ended the point: {check}; the renewal is not exercised this time");
        return;
    }
    assert_eq!(runs.len(), 2, "{result:#}");
    for (i, run) in runs.iter().enumerate() {
        assert_eq!(run["run"], i + 1, "{run:#}");
    }
    // Each run's rounds come after the last run's: (point, round) keys the record.
    let rounds: Vec<u64> = runs.iter().map(|r| r["round"].as_u64().unwrap()).collect();
    assert!(rounds.windows(2).all(|w| w[0] < w[1]), "{rounds:?}");
    // The remote agent was configured afresh for each run: a session per run.
    let (_, figures) = http_get(&metrics, "/metrics");
    assert!(
        figures.contains(&format!("vernier_agent_sessions {}", runs.len())),
        "{} runs:\n{figures}",
        runs.len()
    );
    // The point's p99 is the mean of the runs' with the t-interval across them.
    let across = result["replication"]["across"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["p"] == 99.0)
        .unwrap();
    let estimates: Vec<f64> = runs
        .iter()
        .map(|r| {
            r["percentiles"]
                .as_array()
                .unwrap()
                .iter()
                .find(|p| p["p"] == 99.0)
                .unwrap()["value"]
                .as_f64()
                .unwrap()
        })
        .collect();
    let mean = estimates.iter().sum::<f64>() / estimates.len() as f64;
    assert!(
        (across["mean"].as_f64().unwrap() - mean).abs() < 1e-6,
        "{across:#}"
    );
    let (value, low, high) = p99(&result);
    assert!((value - mean).abs() < 1e-6 && low <= value && value <= high);
    assert_eq!(result["replication"]["method"], "t-interval over runs");
    // The record keeps every run: a run event each, and the point's verdict once.
    let run_json: Value = read_run(&record);
    let events = run_json["events"].as_array().unwrap();
    let kinds = |k: &str| events.iter().filter(|e| e["kind"] == k).count();
    assert_eq!((kinds("run"), kinds("verdict")), (runs.len(), 1));
    assert_eq!(
        run_json["points"][0]["replication"]["runs"]
            .as_array()
            .unwrap()
            .len(),
        runs.len()
    );
    // And the report draws the runs.
    let report = vernier(&["report", record.to_str().unwrap()]);
    assert!(report.status.success(), "{}", stderr(&report));
    assert!(record.join("report/runs.svg").is_file());
    let table = String::from_utf8_lossy(&report.stdout);
    assert!(
        table.contains(" run 1") && table.contains(" run 2"),
        "{table}"
    );
    eprintln!(
        "{} runs, p99 per run {estimates:?}, across {value:.1} [{low:.1}, {high:.1}], verdict {}",
        runs.len(),
        result["verdict"]
    );
}

const BUDGETED: &str = "
name: budgeted
target: TARGET
protocol: synthetic
service: fixed:20us
agents: [local]
connections: 8
load: 5000
ci: {percentile: 50, width: 1us}
percentiles: [50, 99]
limits: {max_tries: 8, max_duration: 40s}
cpus: [1]
target_cpus: [0]
budget: {probe: 25%}
";

/// A budget part's size, µs, which must be known here.
fn known(budget: &Value, part: &str) -> f64 {
    budget[part]["us"]
        .as_f64()
        .unwrap_or_else(|| panic!("{part} unknown: {budget:#}"))
}

/// Fixed 20 µs at 5,000 req/s (load 0.1): nine requests in ten find the server idle, so
/// the ideal median is the service time itself, 20 µs, whatever the simulation's seed. The
/// floor and the client are measured at the run's start, the host by the probes while the
/// point measured, the server by the model: none is the measurement less the others.
#[test]
fn a_synthetic_point_has_a_budget_whose_parts_add_up_to_its_p50() {
    let _m = machine();
    // Pinned as `vernier validate` pins them: the server on core 0, the agent on core 1.
    let served = ServeProcess::start(&["--busy-poll", "--cpus", "0"]);
    let dir = tempfile::tempdir().unwrap();
    let path = scenario(dir.path(), "budgeted", BUDGETED, served.addr);
    let (output, result) = run(&path, &dir.path().join("record"), &[]);
    let budget = &result["budget"];
    assert!(
        budget.is_object(),
        "no budget: {result:#}\n{}",
        stderr(&output)
    );
    // A point the host kept from measuring its p50 has no measurement for the parts to
    // add up to: then it must be N/A with the host probe's stalls beside it (a server
    // pinned to a core that something else holds is the host's doing, not the budget's).
    if budget["measured_us"].is_null() {
        let stalled = result["host"].as_array().is_some_and(|h| {
            h.iter()
                .any(|r| r["stalls_over_1ms"].as_u64().unwrap_or(0) > 0)
        });
        assert!(
            result["every_request"] == "n/a" && stalled,
            "no p50 on a quiet host: {result:#}"
        );
        eprintln!(
            "budget: the point measured no p50 (N/A {}: {}); the host stalled",
            result["reasons"][0]["check"], result["reasons"][0]["detail"]
        );
        return;
    }
    let (floor, client, moved, host, model) = (
        known(budget, "floor"),
        known(budget, "client"),
        known(budget, "path_moved"),
        known(budget, "host"),
        known(budget, "model"),
    );
    // Each part says how it was measured.
    let how = |part: &str| budget[part]["how"].as_str().unwrap().to_string();
    assert!(how("floor").contains("busy-polling TCP ping-pong over loopback"));
    assert!(how("client").contains("calibrated at the run's start"));
    // The path probe: a quarter of the load's rate on top of it, sent by its workers over
    // its eight connections, its p50 with a CI, which the parts' sum carries; the load's
    // own rate and samples are the load's alone.
    let probe = &budget["probe"];
    assert_eq!(probe["connections"], 8, "{budget:#}");
    let achieved = result["achieved_rate"].as_f64().unwrap();
    // Not the probe's requests (with them, 6,250); a host that slows the server may keep
    // the load below what was asked, never above.
    assert!(
        achieved < 5_250.0 && achieved > 2_500.0,
        "the probe's requests counted in the load's rate: {achieved}"
    );
    assert!(
        (probe["rate"].as_f64().unwrap() - 0.25 * achieved).abs() < 1e-6,
        "{budget:#}"
    );
    assert!(probe["requests"].as_u64().unwrap() > 1_000, "{budget:#}");
    assert!(
        how("path_moved").contains("moved by")
            && how("path_moved")
                .contains("sent by the load's workers among its requests over its 8 connections"),
        "{}",
        how("path_moved")
    );
    assert!(how("host").starts_with("probes on "), "{}", how("host"));
    assert!(how("model").contains("fixed:20us at 5000 req/s, load 0.10"));
    // Fed the requests as sent when the point kept them all at a rate the model was
    // checked at, else Poisson arrivals, saying why (5,000 req/s is beyond that rate).
    assert!(
        how("model").contains("fed the arrivals as sent")
            || how("model").contains("not the arrivals as sent: the point kept 1 request in")
            || how("model").contains("a second the model fed the requests as sent is checked at"),
        "{}",
        how("model")
    );
    assert!(floor > 0.0 && floor < 1_000.0, "{budget:#}");
    // The model's own p50 is the service time; added request by request to the path's
    // latencies, the tenth of requests that queue lift the median by a few hundredths
    // when those latencies are tight, and by up to the mean wait (M/D/1 at load 0.1:
    // 0.1 × 20 / (2 × 0.9) = 1.11 µs) when they spread evenly about their median, as a
    // busy host spreads them (20.81 µs measured beside a compilation).
    assert!((20.0..21.2).contains(&model), "{budget:#}");
    let share = budget["host"]["requests_share"].as_f64().unwrap();
    assert!((0.0..=1.0).contains(&share), "{budget:#}");
    let (p50, ci) = {
        let p = &result["percentiles"][0];
        assert_eq!(p["p"], 50.0);
        (
            p["value"].as_f64().unwrap(),
            p["ci_low"].as_f64().zip(p["ci_high"].as_f64()),
        )
    };
    assert_eq!(budget["measured_us"].as_f64(), Some(p50));
    let remains = known(budget, "remains");
    assert!((remains - (p50 - floor - client - moved - host)).abs() < 1e-6);
    // The record keeps the same budget.
    let record = read_run(&dir.path().join("record"));
    assert_eq!(&record["points"][0]["budget"], budget);
    // vernier's synthetic server says in each reply how long it served the request: a
    // spin overshoots by a clock read or two, and the OS may take the core mid-spin.
    let served = known(budget, "served");
    assert!(
        how("served").contains("against the service they asked for (median 20.0"),
        "{}",
        how("served")
    );
    // By the server's own account: when its mean service is what was asked (its core its
    // own), the part is an overshoot of a clock read or two; when another thread took its
    // core mid-spin (a competing load there: mean 30.8 µs served of 20.0 asked, p99 1 ms),
    // the part is that time's move of the median (4.0 µs then), never negative.
    let means: Vec<f64> = how("served")
        .split("mean ")
        .skip(1)
        .filter_map(|s| s.split(' ').next()?.parse().ok())
        .collect();
    let [served_mean, asked_mean] = means[..] else {
        panic!("{}", how("served"))
    };
    // With the probe, the queue beyond the ideal model: for fixed service served as asked,
    // the probe's waits move the median as the model's do, so next to nothing; a server
    // whose service the OS stretches queues more than the model (0.35 µs under a competing
    // load on its core), never less.
    let queue = known(budget, "queue");
    let own_core = served_mean - asked_mean < 1.0;
    if own_core {
        assert!((0.0..2.0).contains(&served), "{budget:#}");
        assert!(queue.abs() < 0.3, "{budget:#}");
    } else {
        assert!(served > 0.0 && queue > -0.3, "{budget:#}");
        eprintln!(
            "budget: the server's core was taken mid-spin (served mean {served_mean:.1} µs of {asked_mean:.1} asked): service beyond {served:.2} µs, queue beyond {queue:.2} µs"
        );
    }
    let sum = floor + client + moved + host + model + queue + served;
    eprintln!(
        "budget: floor {floor:.2} + client {client:+.2} + moved {moved:+.2} + host {host:.2} + server {model:.2} + queue {queue:+.2} + served {served:+.3} = {sum:.2} µs; measured p50 {p50:.2} µs, CI {ci:?}, verdict {}",
        result["verdict"]
    );
    // A point that ended N/A without a CI of its p50 (the host's stalls, another load on
    // these cores) has nothing to add up against; its budget is complete all the same.
    let Some((low, high)) = ci else {
        eprintln!(
            "budget: no CI of the p50 ({}): {:+.2} µs unexplained",
            result["reasons"][0]["check"],
            p50 - sum
        );
        return;
    };
    // The sum's CI is the probe's, around the sum; how far the load's connections' paths
    // differ is reported beside it.
    let spread = budget["connection_sd_us"]
        .as_f64()
        .expect("the connections' spread");
    // Within 2 µs of each other when the server's core is its own; a core taken mid-spin
    // at random spreads them (3.6 µs under a competing load there).
    assert!(spread >= 0.0 && (!own_core || spread < 2.0), "{budget:#}");
    let (s_low, s_high) = (
        budget["sum_ci_us"][0].as_f64().unwrap(),
        budget["sum_ci_us"][1].as_f64().unwrap(),
    );
    assert!(s_low <= sum + 1e-9 && sum <= s_high + 1e-9, "{budget:#}");
    // The difference's CI: both CIs' half-widths in quadrature.
    let (d_low, d_high) = (
        (p50 - sum) - (p50 - low).hypot(s_high - sum),
        (p50 - sum) + (high - p50).hypot(sum - s_low),
    );
    let adds_up = d_low <= 0.0 && 0.0 <= d_high;
    eprintln!(
        "budget: measured − parts {:+.2} µs, CI [{d_low:+.2}, {d_high:+.2}]: {}",
        p50 - sum,
        if adds_up {
            "adds up"
        } else {
            "does not add up"
        }
    );
    assert!(
        d_low - RESIDUAL_US <= 0.0 && 0.0 <= d_high + RESIDUAL_US,
        "the parts add up to {sum:.2} µs [{s_low:.2}, {s_high:.2}], the p50 is {p50:.2} [{low:.2}, {high:.2}]: apart by more than the residual: {budget:#}"
    );
}

/// What the parts may leave unexplained beyond both CIs on this host: with the path probe
/// sent among the load's requests and the server's own account of its service, measured −
/// sum at 5,000 req/s was +0.02 to +0.08 µs in six sweeps, every one within the CIs
/// (docs/RESULTS.md), against half-widths of 0.05–0.2. A 95% CI misses one time in twenty,
/// which this allowance absorbs; a part missing or counted twice (the floor is 5.5 µs, the
/// server 20) still fails.
const RESIDUAL_US: f64 = 0.25;

/// Each kept sample's busy stretch, as its agent found it while the run went on (every
/// request before it answered, in send order), is the one a sweep over the record's
/// requests finds afterwards: at 6,000 req/s every request is kept, so the sweep sees them
/// all. The two differ by the microseconds between the schedule the agent knows and the
/// one the record gives (TX stamp less the send lag), and where the agent knows of
/// requests the record does not keep (a reply without an RX stamp, one in flight at a
/// change of sampling): 0.9% of 22,895 samples by more than 5 µs when first measured.
#[test]
fn a_kept_sample_s_busy_stretch_is_the_one_a_sweep_of_the_record_finds() {
    stretches_against_the_sweep(1);
}

/// Two workers, each sweeping its own requests: joined (`joined_since`), the kept
/// samples' stretches are the ones a sweep over the agent's every request finds.
#[test]
fn two_workers_stretches_joined_are_the_ones_a_sweep_of_the_record_finds() {
    stretches_against_the_sweep(2);
}

/// An agent of `workers` workers keeps every request at 6,000 req/s of `exp:60us`; each
/// kept sample's stretch (joined across the workers) against a sweep of the record.
fn stretches_against_the_sweep(workers: usize) {
    let _m = machine();
    let served = served();
    let dir = tempfile::tempdir().unwrap();
    let yaml = format!(
        "
name: stretches
target: TARGET
protocol: synthetic
service: exp:60us
agents: [local]
workers: {workers}
connections: 8
load: 6000
ci: {{percentile: 99, width: 1us}}
limits: {{max_duration: 4s}}
"
    );
    let path = scenario(dir.path(), "stretches", &yaml, served.addr);
    let record = dir.path().join("record");
    let (_, result) = run(&path, &record, &[]);
    assert_eq!(result["sampling_rate"], 1.0, "{result:#}");
    let samples = vernier_workbench::record::read_samples(&record).unwrap();
    let (mut agreed, mut shorter, mut busy, mut all, mut own) = (0, 0, 0, 0, 0);
    for round in 0..=result["round"].as_u64().unwrap() as u32 {
        let recorded = vernier_workbench::record::point_requests(&samples, 0, round).unwrap();
        assert!(recorded.stretches);
        assert_eq!(
            recorded.workers.get(&0).copied(),
            Some(workers),
            "{:?}",
            recorded.workers
        );
        let mut kept: Vec<vernier_stats::Kept> =
            recorded.requests.into_iter().map(|(_, k)| k).collect();
        let scheduled = |k: &vernier_stats::Kept| k.sent.departure_ns - k.sent.late_ns;
        kept.sort_by_key(scheduled);
        let joined = vernier_stats::joined_since(&kept);
        let (mut busy_until, mut since) = (0, 0);
        for (k, joined) in kept.iter().zip(joined) {
            if busy_until <= scheduled(k) {
                since = scheduled(k);
            }
            busy_until = busy_until.max(k.sent.departure_ns + k.sent.latency_ns);
            let swept = scheduled(k) - since;
            let carried = (scheduled(k) as f64 - joined) as u64;
            agreed += usize::from(carried.abs_diff(swept) <= 5_000);
            own += usize::from(k.busy_ns.abs_diff(swept) <= 5_000);
            shorter += usize::from(carried + 5_000 < swept);
            busy += usize::from(carried > 0);
            all += 1;
        }
    }
    eprintln!(
        "with {workers} worker(s): {agreed} of {all} stretches as the sweep's ({own} before joining), \
         {shorter} shorter; {busy} in a stretch begun earlier"
    );
    assert!(all > 10_000, "{all}");
    // At ρ 0.36, about a third of the requests find another in flight.
    assert!(busy as f64 > 0.15 * all as f64, "{busy} of {all}");
    assert!(agreed as f64 >= 0.98 * all as f64, "{agreed} of {all}");
    // Where they differ, the agent's is the longer as a rule: a reply without an RX stamp
    // counts from when it was read, and a request never answered from when it was given up.
    assert!((shorter as f64) < 0.005 * all as f64, "{shorter} of {all}");
}
