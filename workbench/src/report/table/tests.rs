//! Tests of the run's table.

use super::*;
use crate::coordinator::findings::{GapTest, InterarrivalFinding};
use crate::coordinator::reason::{
    Independence, IndependenceThinned, Interarrival, InterarrivalFailed, NotReached, Why,
};
use crate::coordinator::{PointResult, Reason};
use crate::record::{FORMAT, Machine};
use vernier_protocols::InterArrival;

fn pct(p: f64, value: f64, ci: Option<(f64, f64)>) -> PercentileResult {
    PercentileResult::example(p, value, ci)
}

fn point(rate: f64, verdict: Verdict, percentiles: Vec<PercentileResult>) -> PointResult {
    PointResult {
        achieved_rate: rate * 0.999,
        sampling_rate: 0.2,
        ..PointResult::example(rate, verdict, percentiles)
    }
}

fn record(points: Vec<PointResult>) -> RunRecord {
    RunRecord {
        format: FORMAT.into(),
        name: "sweep".into(),
        started: "2026-01-02T03:04:05Z".into(),
        status: "finished".into(),
        scenario_file: None,
        scenario: String::new(),
        machine: Machine {
            hostname: "h".into(),
            kernel: "k".into(),
            cpus: 2,
            vernier: "0".into(),
            idle: Default::default(),
        },
        timestamps: "user".into(),
        events: Vec::new(),
        points: points.into_iter().map(Into::into).collect(),
        slo_rate: None,
        verdict: Some(Verdict::NotAvailable),
    }
}

#[test]
fn rows_line_up_with_cis_and_reasons_under_them() {
    let good = point(
        10_000.0,
        Verdict::Converged,
        vec![
            pct(50.0, 12.345, Some((12.1, 12.6))),
            pct(99.0, 45.07, Some((44.0, 46.25))),
            pct(99.9, 80.2, None),
        ],
    );
    let mut bad = point(
        20_000.0,
        Verdict::NotAvailable,
        vec![pct(50.0, 8.5, Some((8.25, 8.75)))],
    );
    bad.reasons
        .push(Reason::new(Why::Independence(Independence::Thinned(
            IndependenceThinned {
                lag: 1000,
                sampling_rate: 0.001.into(),
                seconds_needed: 200.0.into(),
                samples_wanted: 20_000,
                seconds_left: Some(10.0),
                max_tries: None,
            },
        ))));
    let text = render_table(&summarize(Path::new("/runs/x"), &record(vec![good, bad])));
    let expected = "\
run sweep (finished), started 2026-01-02T03:04:05Z, timestamps: user
/runs/x

point  target/s  achieved/s  verdict    samples  p50 µs             p99 µs*            p99.9 µs
    0     10000      9990.0  converged    20000  12.3 [12.1, 12.6]  45.1 [44.0, 46.2]  80.2 (no CI)
    1     20000     19980.0  n/a          20000  8.50 [8.25, 8.75]  -                  -
        N/A: independence: samples are independent only one in 1000: 20000 samples at 0.1000% sampling would take 200s, beyond the 10s left

latencies in µs: estimate [CI low, CI high]; * the target percentile

verdict: n/a
";
    assert_eq!(text, expected, "\n{text}");
}

#[test]
fn a_replicated_point_has_its_runs_under_it() {
    let run = |k: u32, value: f64| PointResult {
        run: Some(k),
        ..point(
            10_000.0,
            Verdict::Converged,
            vec![pct(99.0, value, Some((value - 1.0, value + 1.0)))],
        )
    };
    let mut across = point(
        10_000.0,
        Verdict::Converged,
        vec![pct(99.0, 41.0, Some((38.5, 43.5)))],
    );
    across.replication = Some(Box::new(crate::coordinator::Replication {
        method: crate::coordinator::AcrossMethod::TIntervalOverRuns,
        runs: vec![run(1, 40.0), run(2, 42.0)],
        across: Vec::new(),
        width_target_us: 5.0,
        spread: None,
        hysteresis: false,
    }));
    let summary = summarize(Path::new("/runs/x"), &record(vec![across]));
    let runs: Vec<Option<u32>> = summary.points.iter().map(|r| r.run).collect();
    assert_eq!(runs, [None, Some(1), Some(2)]);
    let text = render_table(&summary);
    assert!(
        text.contains(" run 1     10000      9990.0  converged    20000  40.0 [39.0, 41.0]"),
        "\n{text}"
    );
    assert!(text.contains(" run 2"), "\n{text}");
}

fn sched(p: f64, value: f64, actual: f64) -> SchedulePercentile {
    SchedulePercentile { p, value, actual }
}

#[test]
fn the_percentiles_from_the_schedule_line_up_under_each_row() {
    let mut good = point(
        10_000.0,
        Verdict::Converged,
        vec![
            pct(50.0, 12.345, Some((12.1, 12.6))),
            pct(99.0, 45.07, Some((44.0, 46.25))),
        ],
    );
    good.from_schedule = vec![sched(50.0, 12.5, 12.3), sched(99.0, 61.25, 45.2)];
    let mut late = point(
        20_000.0,
        Verdict::NotAvailable,
        vec![pct(50.0, 8.5, Some((8.25, 8.75))), pct(99.0, 30.0, None)],
    );
    late.from_schedule = vec![sched(50.0, 9.0, 8.5), sched(99.0, 1234.5, 30.25)];
    late.reasons
        .push(Reason::new(Why::LoadNotReached(NotReached {
            achieved_rate: 19_980.0.into(),
            sent_rate: 19_990.0.into(),
            target_rate: 20_000.0.into(),
            agents: 1,
            send_lag_p50_us: None,
        })));
    // An old record's point: no line under it.
    let old = point(
        30_000.0,
        Verdict::Converged,
        vec![pct(50.0, 9.5, None), pct(99.0, 50.0, None)],
    );
    let summary = summarize(Path::new("/runs/x"), &record(vec![good, late, old]));
    let text = render_table(&summary);
    let expected = "\
run sweep (finished), started 2026-01-02T03:04:05Z, timestamps: user
/runs/x

point  target/s  achieved/s  verdict    samples  p50 µs              p99 µs*
    0     10000      9990.0  converged    20000  12.3 [12.1, 12.6]   45.1 [44.0, 46.2]
                                  from schedule  12.5 (12.3 actual)  61.2 (45.2 actual)
    1     20000     19980.0  n/a          20000  8.50 [8.25, 8.75]   30.0 (no CI)
                                  from schedule  9.00 (8.50 actual)  1234.5 (30.2 actual)
        N/A: load_not_reached: load not reached: achieved 19980 req/s (sent 19990) of 20000 with 1 agent(s); more workers or agents are needed
    2     30000     29970.0  converged    20000  9.50 (no CI)        50.0 (no CI)

latencies in µs: estimate [CI low, CI high]; * the target percentile
from schedule: every request timed from its scheduled departure (coordinated omission included), then from its actual one

verdict: n/a
";
    assert_eq!(text, expected, "\n{text}");
    let json = serde_json::to_value(&summary).unwrap();
    assert_eq!(json["points"][1]["from_schedule"][1]["value"], 1234.5);
    assert_eq!(json["points"][1]["from_schedule"][1]["actual"], 30.25);
    assert!(json["points"][2].get("from_schedule").is_none(), "{json}");
}

#[test]
fn points_na_before_measuring_have_rows_without_percentiles() {
    let mut na = point(5000.0, Verdict::NotAvailable, Vec::new());
    na.samples = 0;
    na.reasons
        .push(Reason::new(Why::Interarrival(Interarrival::Failed(
            InterarrivalFailed {
                agent: 0,
                statistic: 9.0.into(),
                pvalue: Some(0.001),
                process: InterArrival::Exp,
                tries: Some(5),
                finding: InterarrivalFinding {
                    test: GapTest::MeanOnly {
                        shape: InterArrival::Exp,
                    },
                    mean_gap_us: 120.0.into(),
                    target_gap_us: 100.0.into(),
                    mean_off: None,
                    misfit: None,
                },
            },
        ))));
    let text = render_table(&summarize(Path::new("d"), &record(vec![na])));
    assert!(
        text.contains("point  target/s  achieved/s  verdict  samples\n"),
        "{text}"
    );
    assert!(
        text.contains("    0      5000      4995.0  n/a            0\n"),
        "{text}"
    );
    assert!(
        text.contains("        N/A: interarrival: agent 0 cannot generate"),
        "{text}"
    );
    assert!(
        !text.contains("latencies in µs"),
        "no percentile, no legend: {text}"
    );
}

#[test]
fn each_point_has_a_line_of_its_host_stalls_when_it_was_probed() {
    let probe = |cpu: Option<usize>, p99_us: f64, max_us: f64, stalls: u64, share: f64| {
        let mut r = StallReport::default();
        r.cpu = cpu;
        r.period_us = 1000.0;
        r.seconds = 10.0;
        r.wakeups = 9_990;
        r.late_p50_us = 55.0;
        r.late_p99_us = p99_us;
        r.late_max_us = max_us;
        r.stalls_over_1ms = stalls;
        r.stalled_share = share;
        r
    };
    let mut probed = point(10_000.0, Verdict::Converged, vec![pct(99.0, 45.0, None)]);
    probed.host = vec![
        probe(Some(1), 1_200.0, 3_400.0, 7, 0.013),
        probe(None, 80.0, 1_100.0, 1, 0.0002),
    ];
    // An old record's point: no line.
    let old = point(20_000.0, Verdict::Converged, vec![pct(99.0, 50.0, None)]);
    let summary = summarize(Path::new("d"), &record(vec![probed, old]));
    let text = render_table(&summary);
    let lines: Vec<&str> = text.lines().collect();
    let at = lines.iter().position(|l| l.contains("converged")).unwrap();
    assert_eq!(
        lines[at + 1],
        "        host: cpu 1 p99 1.2 ms, max 3.4 ms, 7 stalls > 1 ms, 1.3% stalled · \
             unpinned p99 80 µs, max 1.1 ms, 1 stall > 1 ms, 0.02% stalled",
        "{text}"
    );
    assert_eq!(text.matches("        host: ").count(), 1, "{text}");
    assert!(text.contains("\nhost: the host's stalls"), "{text}");
    let json = serde_json::to_value(&summary).unwrap();
    assert_eq!(json["points"][0]["host"][0]["late_p99_us"], 1200.0);
    assert!(json["points"][1].get("host").is_none(), "{json}");
}

#[test]
fn a_run_killed_in_warm_up_still_has_a_table() {
    let mut rec = record(Vec::new());
    rec.status = "running".into();
    rec.verdict = None;
    let text = render_table(&summarize(Path::new("d"), &rec));
    assert!(text.contains("no load point finished"), "{text}");
    assert!(
        text.contains("status \"running\": the run did not finish"),
        "{text}"
    );
    assert!(
        text.contains("verdict: none (the run did not finish)"),
        "{text}"
    );
}

#[test]
fn an_slo_search_says_its_rate() {
    let mut rec = record(vec![point(
        5000.0,
        Verdict::Converged,
        vec![pct(99.0, 20.0, Some((19.0, 21.0)))],
    )]);
    rec.slo_rate = Some(5000.0);
    rec.verdict = Some(Verdict::Converged);
    let summary = summarize(Path::new("d"), &rec);
    let text = render_table(&summary);
    assert!(text.contains("slo rate: 5000 req/s"), "{text}");
    let json = serde_json::to_value(&summary).unwrap();
    assert_eq!(json["slo_rate"], 5000.0);
    assert_eq!(json["points"][0]["verdict"], "converged");
    assert_eq!(json["points"][0]["percentiles"][0]["ci_low"], 19.0);
}
