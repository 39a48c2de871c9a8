//! `vernier run`'s output: the table, the progress lines and the exit codes.

use std::path::Path;

use super::progress::verdict_line;
use super::*;
use crate::coordinator::{PercentileResult, SchedulePercentile};

/// `vernier run ARGS` as parsed.
fn args(line: &[&str]) -> RunArgs {
    let cli = <crate::Cli as clap::Parser>::try_parse_from(["vernier", "run"].iter().chain(line))
        .unwrap_or_else(|e| panic!("{line:?}: {e}"));
    match cli.command {
        crate::Command::Run(args) => *args,
        other => panic!("{other:?}"),
    }
}

#[test]
fn every_url_flag_sets_the_field_it_names() {
    let s = scenario(&args(&[
        "redis://127.0.0.1:6379",
        "--load",
        "1k,2k",
        "--percentile",
        "99.5",
        "--width",
        "5us",
        "--connections",
        "4",
        "--depth",
        "2",
        "--workers",
        "2",
        "--cpus",
        "0,1",
        "--duration",
        "30s",
        "--keys",
        "100",
        "--key-size",
        "fixed:8",
        "--value-size",
        "fixed:16",
        "--read-ratio",
        "0.5",
        "--key-dist",
        "round-robin",
        "--tail",
        "with-stalls",
    ]))
    .unwrap();
    assert_eq!(s.load, LoadPlan::Sweep(vec![1000.0, 2000.0]));
    assert_eq!(s.ci.tail, crate::scenario::Tail::WithStalls);
    assert_eq!(s.ci.percentile.percent(), 99.5);
    assert_eq!(s.ci.width.to_string(), "5 µs");
    assert_eq!(
        (s.connections, s.depth, s.workers, s.cpus.as_slice()),
        (4, 2, 2, &[0, 1][..])
    );
    assert_eq!(s.limits.max_duration, std::time::Duration::from_secs(30));
    let vernier_agent::Workload::KeyValue(kv) = &s.workload else {
        panic!("{:?}", s.workload)
    };
    assert_eq!(
        (
            kv.keys,
            kv.key_size.to_string(),
            kv.value_size.to_string(),
            kv.read_ratio,
            kv.key_dist
        ),
        (
            100,
            "fixed:8".into(),
            "fixed:16".into(),
            0.5,
            vernier_protocols::KeyDist::RoundRobin
        )
    );
    let s = scenario(&args(&[
        "synthetic://127.0.0.1:7000",
        "--load",
        "1k",
        "--service",
        "fixed:5us",
    ]))
    .unwrap();
    assert!(matches!(
        s.workload,
        vernier_agent::Workload::Synthetic { .. }
    ));
}

#[test]
fn a_url_flag_with_a_file_is_refused_naming_the_set_that_does_the_same() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/memcached-10k.yaml");
    let file = path.to_str().unwrap();
    let error = |extra: &[&str]| {
        let line: Vec<&str> = [file].iter().chain(extra).copied().collect();
        let e = scenario(&args(&line)).unwrap_err();
        assert_eq!(e.exit_code(), ExitCode::from(2));
        e.to_string()
    };
    assert_eq!(
        error(&["--width", "10%"]),
        format!(
            "--width sets ci.width of a URL's scenario; {file} is a file: write ci.width \
             in it, or give --set 'ci.width=10%'"
        )
    );
    assert_eq!(
        error(&["--load", "5k", "--cpus", "2,3"]),
        format!(
            "--cpus sets cpus of a URL's scenario; {file} is a file: write cpus in it, or \
             give --set 'cpus=[2,3]'"
        )
    );
    // --load and --set are a file's too.
    let s = scenario(&args(&[file, "--load", "5k,10k", "--set", "connections=8"])).unwrap();
    assert_eq!(s.load, LoadPlan::Sweep(vec![5000.0, 10_000.0]));
    assert_eq!(s.connections, 8);
    // An address where a file was expected: the URL it meant.
    assert_eq!(
        scenario(&args(&["127.0.0.1:11211"]))
            .unwrap_err()
            .to_string(),
        "127.0.0.1:11211: no such scenario file; a server is measured by its URL, as in \
         memcached://127.0.0.1:11211"
    );
}

fn point(rate: f64, from_schedule: Vec<SchedulePercentile>) -> PointResult {
    let percentiles = [(50.0, 12.3), (99.0, 45.1)]
        .into_iter()
        .map(|(p, v)| PercentileResult::example(p, v, Some((v - 1.0, v + 1.0))))
        .collect();
    PointResult {
        sampling_rate: 0.2,
        duration_s: 8.0,
        from_schedule,
        ..PointResult::example(rate, Verdict::Converged, percentiles)
    }
}

#[test]
fn the_table_shows_the_percentiles_from_the_schedule_under_each_point() {
    let scheduled = vec![
        SchedulePercentile {
            p: 50.0,
            value: 12.6,
            actual: 12.4,
        },
        SchedulePercentile {
            p: 99.0,
            value: 1234.5,
            actual: 45.3,
        },
    ];
    let outcome = SessionResult {
        // The second point is from a record that predates the figures.
        points: vec![point(1000.0, scheduled), point(2000.0, Vec::new())],
        slo_rate: None,
        verdict: Verdict::Converged,
        record: PathBuf::from("runs/x"),
        timestamps: vernier_agent::sys::TimestampMode::User,
        record_error: None,
        threads: None,
    };
    let text = table(&outcome);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[1].contains("45.1 [44.1, 46.1]"), "{text}");
    assert_eq!(
        lines[2],
        format!(
            "{:>42} {:>26} {:>26}",
            "from schedule", "12.6 (12.4 actual)", "1234.5 (45.3 actual)"
        ),
        "{text}"
    );
    assert!(lines[3].trim_start().starts_with("2000"), "{text}");
    assert!(lines[4].starts_with("verdict: converged"), "{text}");
    assert_eq!(text.matches("from schedule").count(), 1, "{text}");

    let line = verdict_line(&outcome.points[0]);
    assert!(
        line.starts_with("converged: p99 = 45.1 µs [44.1, 46.1], 1234.5 µs from schedule;"),
        "{line}"
    );
}

#[test]
fn the_verdict_line_has_a_line_per_host_probe() {
    let mut r = point(1000.0, Vec::new());
    assert!(!verdict_line(&r).contains("host"));
    for cpu in [Some(1), None] {
        let mut probe = vernier_agent::StallReport::default();
        probe.cpu = cpu;
        probe.realtime = cpu.is_some();
        probe.period_us = 1000.0;
        probe.seconds = 10.0;
        probe.wakeups = 9_990;
        probe.late_p50_us = 55.0;
        probe.late_p99_us = 1_200.0;
        probe.late_max_us = 3_400.0;
        probe.stalls_over_1ms = 7;
        probe.stalled_share = 0.013;
        r.host.push(probe);
    }
    let line = verdict_line(&r);
    let lines: Vec<&str> = line.lines().collect();
    assert_eq!(lines.len(), 3, "{line}");
    assert_eq!(
        lines[1],
        "             host (cpu 1): wake-ups 1 ms apart came p50 55 µs, p99 1.2 ms, max 3.4 ms late; 7 stalls > 1 ms in 10.0 s (1.3% of the time)"
    );
    assert!(lines[2].starts_with("             host (unpinned): wake-ups"));
    assert!(
        lines[2].ends_with("(an ordinary-priority probe: other threads on its core delay it too)"),
        "{line}"
    );
}

/// The run's last line says where each of its threads ran, the busiest first, and leaves
/// out the ones that did next to nothing.
#[test]
fn the_threads_line_says_where_each_thread_ran() {
    use crate::procfs::{ThreadUsage, Usage};
    let thread = |name: &str, threads, cpu_ms_per_s, wakeups, cpus: &[u32]| ThreadUsage {
        name: name.into(),
        threads,
        cpu_ms_per_s,
        voluntary_per_s: wakeups,
        involuntary_per_s: 0.0,
        cpus: cpus.iter().copied().collect(),
    };
    let usage = Usage {
        window_s: 15.9,
        process_cpu_s: 4.0,
        voluntary: 0,
        involuntary: 0,
        threads: vec![
            thread("vernier-worker-", 1, 224.9, 7104.0, &[1]),
            thread("vernier-session", 2, 1.3, 108.0, &[0, 1]),
            thread("polars-0", 1, 0.1, 1.0, &[1]),
        ],
    };
    assert_eq!(
        super::progress::threads_line(&usage).unwrap(),
        "vernier's threads, per second of the run (15.9 s): vernier-worker- on CPU 1, 224.9 ms of CPU and 7104 wake-ups; vernier-session (×2) on CPU 0,1, 1.3 ms of CPU and 108 wake-ups"
    );
    let idle = Usage {
        threads: vec![thread("polars-0", 1, 0.1, 1.0, &[1])],
        ..usage
    };
    assert_eq!(super::progress::threads_line(&idle), None);
}

#[test]
fn a_check_that_gates_nothing_never_says_fail_in_its_progress_line() {
    use crate::coordinator::{Check, CheckOutcome, CheckRole, Event, EventKind};
    use crate::record::ShownCheck;
    let check = |role| Check {
        role,
        ..Check::example()
    };
    let mut progress = super::progress::Progress::new(Chatter::Progress, &LoadPlan::Fixed(2000.0));
    let mut line = |c: Check| {
        progress
            .line(&Event {
                at: 15.5,
                point: 0,
                rate: 2000.0,
                kind: EventKind::Check(c),
            })
            .unwrap()
    };
    let reported = check(CheckRole::Report);
    assert_eq!(reported.outcome(), CheckOutcome::Reported);
    let said = line(reported.clone());
    assert!(!said.to_lowercase().contains("fail"), "{said}");
    assert!(said.contains("independence agent 0: reported"), "{said}");
    // The record says the same: not a failure.
    let json = serde_json::to_value(&reported).unwrap();
    assert_eq!(json["outcome"], "reported", "{json}");
    let back: ShownCheck = serde_json::from_value(json).unwrap();
    assert_eq!(back, ShownCheck::from(&reported));
    // A gate that fails does.
    let said = line(check(CheckRole::Gate));
    assert!(said.contains("independence agent 0: FAIL"), "{said}");
}
