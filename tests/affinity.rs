//! `vernier run --headless` confined to one CPU (`taskset -c N` around the binary), as a
//! user pins it beside a server on another core (issue 28): every measurement the run
//! makes before its load ends, says on stderr what it does, and does not spin where its
//! two ends share the core; a scenario whose `cpus:` this affinity forbids is refused at
//! once, naming both sets. Each run is bounded by its scenario's limits, and each server
//! is killed by PID when its test ends.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::net::SocketAddr;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use support::{ServeProcess, did_not_run, machine, read_run};

/// How long the pre-load measurements may take at most: the floor's limit (3 s) and one
/// stalled message (2 s), the client calibration's limit (5 s).
const PRE_LOAD: Duration = Duration::from_secs(10);
/// The scenarios' `max_duration`.
const MAX_DURATION: Duration = Duration::from_secs(4);
/// Starting, stopping and writing the record.
const MARGIN: Duration = Duration::from_secs(5);

/// The first CPU this process may use, if `taskset` can be run here; otherwise the test
/// says on stderr that it did not run.
fn one_cpu(test: &str) -> Option<usize> {
    let found = Command::new("taskset")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    if !found.is_ok_and(|s| s.success()) {
        did_not_run(
            test,
            "taskset is not installed (util-linux; tests/run.sh installs it)",
        );
        return None;
    }
    vernier_agent::sys::available_cpus().first().copied()
}

/// `taskset -c CPU vernier run SCENARIO --headless --output json --record RECORD`, to the
/// end, and how long it took.
fn run_on(cpu: usize, scenario: &Path, record: &Path) -> (Output, Duration) {
    let started = Instant::now();
    let output = Command::new("taskset")
        .args(["-c", &cpu.to_string()])
        .arg(env!("CARGO_BIN_EXE_vernier"))
        .arg("run")
        .arg(scenario)
        .args(["--headless", "--output", "json", "--record"])
        .arg(record)
        .stdin(Stdio::null())
        .output()
        .expect("run taskset");
    (output, started.elapsed())
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// The one JSON object `vernier run` printed.
fn result_of(output: &Output) -> Value {
    let stdout = String::from_utf8_lossy(&output.stdout);
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| {
        panic!(
            "stdout is not one JSON object ({e}): {stdout}\nstderr:\n{}",
            stderr(output)
        )
    })
}

/// Writes `yaml` (`TARGET` replaced) to `dir/name.yaml`.
fn scenario(dir: &Path, name: &str, yaml: &str, target: SocketAddr) -> std::path::PathBuf {
    let path = dir.join(format!("{name}.yaml"));
    std::fs::write(&path, yaml.replace("TARGET", &target.to_string())).unwrap();
    path
}

/// The index of the first line of `err` that starts with `prefix`, and fails naming it
/// otherwise.
fn line_index(err: &str, prefix: &str) -> usize {
    err.lines()
        .position(|l| l.starts_with(prefix))
        .unwrap_or_else(|| panic!("no line starting {prefix:?} in:\n{err}"))
}

/// A run that ended with a verdict (0 converged, 3 N/A) within its limits, whose
/// pre-load lines come before its first progress line; its result.
fn ended_with_a_verdict(output: &Output, took: Duration) -> Value {
    let err = stderr(output);
    assert!(
        matches!(output.status.code(), Some(0 | 3 | 4)),
        "exit {:?} after {took:?}:\n{err}",
        output.status.code()
    );
    assert!(
        took < PRE_LOAD + MAX_DURATION + MARGIN,
        "took {took:?}:\n{err}"
    );
    let floor = line_index(&err, "latency budget: measuring the path's floor");
    let client = line_index(&err, "latency budget: calibrating the client's share");
    let ready = line_index(&err, "agents ready");
    let probes = line_index(&err, "host probes: ");
    let first_progress = line_index(&err, "[");
    assert!(
        floor < client && client < ready && ready < probes && probes < first_progress,
        "{err}"
    );
    let result = result_of(output);
    assert!(
        matches!(
            result["verdict"].as_str(),
            Some("converged" | "wide" | "n/a")
        ),
        "{result:#}"
    );
    result
}

/// Against vernier's synthetic server (sleeping in epoll, so it does not matter which
/// core it lands on), no cores named: the floor's ping-pong has one core for both ends,
/// blocks, and the record says so.
#[test]
fn a_run_confined_to_one_cpu_ends_with_a_verdict_and_says_what_it_measured_first() {
    let test = "a_run_confined_to_one_cpu_ends_with_a_verdict_and_says_what_it_measured_first";
    let _m = machine();
    let Some(cpu) = one_cpu(test) else { return };
    let served = ServeProcess::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let yaml = format!(
        "
name: one-cpu
target: TARGET
protocol: synthetic
service: exp:20us
connections: 4
load: 1500
ci: {{percentile: 50, width: 20%}}
limits: {{max_duration: {}s}}
",
        MAX_DURATION.as_secs()
    );
    let path = scenario(dir.path(), "one-cpu", &yaml, served.addr);
    let record = dir.path().join("record");
    let (output, took) = run_on(cpu, &path, &record);
    let err = stderr(&output);
    eprintln!("taskset -c {cpu}: {took:?}");
    let result = ended_with_a_verdict(&output, took);
    assert!(
        err.contains(&format!(
            "latency budget: measuring the path's floor (at most 3s): 10000 round trips of a blocking ping-pong over loopback, both ends on CPU {cpu}, the only one this process may use"
        )),
        "{err}"
    );
    assert!(
        err.contains(
            "latency budget: calibrating the client's share (at most 5s): 1000 requests at 2000 req/s over one connection against the target itself asked for no service time"
        ),
        "{err}"
    );
    assert!(
        err.contains("host probes: the workers' own waits, wherever they run"),
        "{err}"
    );
    // The record, as the output, says how the floor was measured.
    let point = &read_run(&record)["points"][0];
    for budget in [&result["budget"], &point["budget"]] {
        let how = budget["floor"]["how"].as_str().unwrap_or_default();
        assert!(
            how.contains("blocking in read") && how.contains(&format!("both ends on CPU {cpu}")),
            "{budget:#}"
        );
        assert!(budget["floor"]["us"].is_number(), "{budget:#}");
    }
}

/// A memcached scenario as the issue ran it: the worker pinned to the one CPU allowed and
/// the target's core outside it. The client calibration's in-process server then sleeps in
/// epoll rather than spin beside the worker, nothing of vernier's goes to the target's
/// core, and the lines say both.
#[test]
fn a_memcached_run_confined_to_one_cpu_keeps_off_the_targets_core_and_ends() {
    let test = "a_memcached_run_confined_to_one_cpu_keeps_off_the_targets_core_and_ends";
    let _m = machine();
    let Some(cpu) = one_cpu(test) else { return };
    // Another CPU's number, whether the host has it or not: outside the affinity either way.
    let other = cpu + 1;
    let server = ServeProcess::start_protocol("memcached", &[]);
    let dir = tempfile::tempdir().unwrap();
    let yaml = format!(
        "
name: one-cpu-memcached
target: TARGET
protocol: memcached
workload: {{keys: 1000, key_size: fixed:30, value_size: fixed:200, read_ratio: 0.9}}
workers: 1
cpus: [{cpu}]
target_cpus: [{other}]
connections: 4
load: 2000
ci: {{percentile: 99, width: 20%}}
limits: {{max_duration: {}s}}
",
        MAX_DURATION.as_secs()
    );
    let path = scenario(dir.path(), "memcached", &yaml, server.addr);
    let (output, took) = run_on(cpu, &path, &dir.path().join("record"));
    let err = stderr(&output);
    eprintln!("taskset -c {cpu}, memcached: {took:?}");
    let result = ended_with_a_verdict(&output, took);
    let outside = format!(
        "the target's CPU {other} (target_cpus) is not one this process may use (it may use {cpu})"
    );
    let floor = &err
        .lines()
        .nth(line_index(&err, "latency budget: measuring"))
        .unwrap();
    assert!(
        floor.contains(&format!(
            "blocking ping-pong over loopback, both ends on CPU {cpu}"
        )) && floor.contains(&outside),
        "{err}"
    );
    assert!(
        err.contains("against vernier's synthetic server answering at once (in process, sleeping in epoll: this process may use one CPU"),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "host probes: the workers' own waits on CPU {cpu}; not on the target's CPU {other} (target_cpus), which this process may not use (it may use {cpu})"
        )),
        "{err}"
    );
    assert!(
        err.contains(&format!("vernier's own threads kept on core {cpu}")),
        "{err}"
    );
    let budget = &result["budget"];
    assert!(
        budget["floor"]["how"]
            .as_str()
            .is_some_and(|h| h.contains("blocking in read") && h.contains(&outside)),
        "{budget:#}"
    );
    assert!(
        budget["client"]["how"]
            .as_str()
            .is_some_and(|h| h.contains("sleeping in epoll")),
        "{budget:#}\n{err}"
    );
}

/// `cpus:` naming a CPU the process's affinity forbids: refused at once (exit 2), in one
/// line naming both sets, before anything is measured or loaded.
/// `yaml` (its target: a port nothing listens on) run on the one CPU `cpu`: refused at
/// once, before any connection, with exit 2, nothing printed on stdout and nothing
/// recorded. Its stderr's lines, and the scenario's path.
fn refused_at_once(cpu: usize, name: &str, yaml: &str) -> (Vec<String>, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = scenario(
        dir.path(),
        name,
        yaml,
        SocketAddr::from(([127, 0, 0, 1], 9)),
    );
    let record = dir.path().join("record");
    let (output, took) = run_on(cpu, &path, &record);
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{err}");
    assert!(took < Duration::from_secs(3), "took {took:?}: {err}");
    assert!(output.stdout.is_empty());
    assert!(!record.exists(), "nothing was recorded");
    (err.trim_end().lines().map(String::from).collect(), path)
}

#[test]
fn workers_pinned_outside_the_affinity_are_refused_at_once_naming_both_sets() {
    let test = "workers_pinned_outside_the_affinity_are_refused_at_once_naming_both_sets";
    let Some(cpu) = one_cpu(test) else { return };
    let other = cpu + 1;
    let yaml = format!(
        "
name: elsewhere
target: TARGET
protocol: synthetic
service: exp:20us
cpus: [{other}]
load: 1000
ci: {{percentile: 50, width: 20%}}
limits: {{max_duration: 4s}}
"
    );
    let (err, path) = refused_at_once(cpu, "elsewhere", &yaml);
    assert_eq!(
        err,
        [format!(
            "vernier: {}: cpus: [{other}] names CPU {other} outside the CPUs this process may run on ({cpu}, its affinity: taskset or a cpuset); name cores among those, or run vernier where it may use these",
            path.display()
        )]
    );
}

/// Workers that spin with no other core for vernier's threads are refused before anything
/// starts, saying what would work: the threads would share the spinning worker's core and
/// make late the departures spinning is for.
#[test]
fn spinning_workers_without_a_spare_core_are_refused_at_once() {
    let test = "spinning_workers_without_a_spare_core_are_refused_at_once";
    let Some(cpu) = one_cpu(test) else { return };
    let yaml = format!(
        "
name: spinning
target: TARGET
protocol: synthetic
service: exp:20us
cpus: [{cpu}]
poll: spin
load: 1000
ci: {{percentile: 50, width: 20%}}
limits: {{max_duration: 4s}}
"
    );
    let (err, path) = refused_at_once(cpu, "spinning", &yaml);
    assert_eq!(
        err,
        [format!(
            "vernier: {}: poll: spin needs a core for vernier's other threads besides the spinning workers': its workers spin on CPU {cpu}, every CPU this process may use ({cpu}); allow another core (taskset -c), or use poll: sleep (the default), which sends as precisely as the answer asked needs",
            path.display()
        )]
    );
}
