//! `vernier report` as a user runs it: the real binary on run directories written with the
//! recorder (a three-point sweep with one N/A point, a run killed during warm-up, a run
//! without samples), on a recorded comparison, and on the bad inputs it must refuse with one
//! line naming the file.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Output;

use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};
use serde_json::Value;
use support::vernier;
use vernier_agent::{Sample, StallInterval, StallLog, StallSource};
use vernier_stats::{DifferenceCi, percentile, percentile_ci, sort_samples};
use vernier_workbench::budget::{Baseline, Part};
use vernier_workbench::compare::report::COMPARISON_FILE;
use vernier_workbench::compare::{Block, CompareVerdict, Comparison, Design, Finding, Look, Side};
use vernier_workbench::coordinator::check_next::{CheckNext, Found};
use vernier_workbench::coordinator::findings::{GapTest, InterarrivalFinding, SpearmanFinding};
use vernier_workbench::coordinator::reason::{Independence, IndependenceStuck, Why};
use vernier_workbench::coordinator::{
    Check, CheckData, CheckKind, CheckRole, Event, EventKind, PercentileResult, PointResult,
    Probed, Reason, ReasonKind, SchedulePercentile, Verdict, WithoutStalls,
};
use vernier_workbench::hlog::Origin;
use vernier_workbench::record::{FORMAT, Machine, Recorder, RunRecord};
use vernier_workbench::report::CcdfPoint;
use vernier_workbench::scenario::Tail;

mod support;

const RATES: [f64; 3] = [10_000.0, 20_000.0, 30_000.0];

/// The percentiles every point reports, in percent.
const REPORTED: [f64; 4] = [50.0, 99.0, 99.9, 99.99];

fn new_record(name: &str) -> RunRecord {
    RunRecord {
        format: FORMAT.into(),
        name: name.into(),
        started: "2026-01-02T03:04:05Z".into(),
        status: "running".into(),
        scenario_file: None,
        scenario: "name: test\n".into(),
        machine: Machine::this(),
        timestamps: "user".into(),
        events: Vec::new(),
        points: Vec::new(),
        slo_rate: None,
        verdict: None,
    }
}

/// `n` samples with latencies of 10 µs plus an exponential of `mean_us`, sent 1/rate apart.
fn samples(rng: &mut SmallRng, n: usize, mean_us: f64, rate: f64) -> Vec<Sample> {
    (0..n)
        .map(|i| Sample {
            departure_ns: (i as f64 * 1e9 / rate) as u64,
            latency_ns: (10_000.0 - mean_us * 1e3 * (1.0 - rng.random::<f64>()).ln()) as u64,
            queueing_ns: 100,
            conn: (i % 4) as u16,
            request: 0,
            outcome: 0,
            ..Sample::default()
        })
        .collect()
}

/// Each reported percentile with its 95% CI, µs (no CI where the samples are too few).
fn percentiles(samples: &[Sample]) -> Vec<PercentileResult> {
    let us: Vec<f64> = samples.iter().map(|s| s.latency_ns as f64 / 1e3).collect();
    let sorted = sort_samples(&us).unwrap();
    REPORTED
        .iter()
        .map(|&p| {
            let ci = percentile_ci(&sorted, p / 100.0, 0.95).ok();
            PercentileResult {
                p,
                value: percentile(&sorted, p / 100.0).unwrap(),
                ci_low: ci.map(|c| c.0),
                ci_high: ci.map(|c| c.1),
                dependence: None,
            }
        })
        .collect()
}

fn result(
    rate: f64,
    verdict: Verdict,
    samples: usize,
    percentiles: Vec<PercentileResult>,
) -> PointResult {
    let mut result = PointResult {
        answer: verdict,
        verdict,
        reasons: Vec::new(),
        more_time_s: None,
        waived: Vec::new(),
        target_rate: rate,
        achieved_rate: rate * 0.998,
        timestamps: vernier_agent::sys::TimestampMode::User,
        samples,
        sampling_rate: 0.2,
        duration_s: 12.0,
        percentiles,
        from_schedule: Vec::new(),
        target_percentile: vernier_stats::Percentile::P99,
        ci_width_us: Some(3.0),
        tries: 1,
        min_samples: 299,
        round: 1,
        agents: Vec::new(),
        host: Vec::new(),
        budget: None,
        record: None,
        run: None,
        replication: None,
        without_stalls: None,
        drift: None,
        earned: None,
        tail: vernier_workbench::scenario::Tail::WithStalls,
    };
    // Measured on loopback against exp:50us; no probe ran, so the host is unknown.
    let baseline = Baseline::given(
        Part::known(6.0, "busy-polling ping-pong"),
        Part::known(-1.0, "calibrated"),
        Ok("exp:50us".parse().unwrap()),
        7,
    );
    result.budget = Some(baseline.budget(&result, vernier_workbench::budget::During::default()));
    result
}

/// An inter-arrival check on exponential gaps of the rate's mean, binned as the
/// coordinator bins them (40 bins over 5 means).
fn interarrival(rng: &mut SmallRng, point: usize, rate: f64) -> Event {
    let mean_ns = 1e9 / rate;
    let bin_ns = 5.0 * mean_ns / 40.0;
    let mut counts = vec![0u64; 40];
    for _ in 0..5000 {
        let gap = -mean_ns * (1.0 - rng.random::<f64>()).ln();
        counts[((gap / bin_ns) as usize).min(39)] += 1;
    }
    Event {
        at: 1.0,
        point,
        rate,
        kind: EventKind::Check(Check {
            check: CheckKind::Interarrival,
            agent: Some(0),
            pass: true,
            role: CheckRole::Gate,
            statistic: Some(0.52),
            pvalue: Some(0.71),
            n: 5000,
            found: Found::Gaps(InterarrivalFinding {
                test: GapTest::AndersonDarling {
                    statistic: 0.52.into(),
                    critical_5: 0.752.into(),
                    pvalue: 0.71.into(),
                    fits: true,
                },
                mean_gap_us: (mean_ns / 1e3).into(),
                target_gap_us: (mean_ns / 1e3).into(),
                mean_off: None,
                misfit: None,
            }),
            next: Some(CheckNext::Fits),
            data: Some(CheckData::Histogram {
                bin_ns,
                counts,
                target_mean_ns: mean_ns,
                shape: vernier_protocols::InterArrival::Exp,
            }),
        }),
    }
}

fn independence(point: usize, rate: f64, lags: Vec<(usize, f64, f64)>, pass: bool) -> Event {
    Event {
        at: 5.0,
        point,
        rate,
        kind: EventKind::Check(Check {
            check: CheckKind::Independence,
            agent: Some(0),
            pass,
            role: CheckRole::Gate,
            statistic: Some(lags[0].1),
            pvalue: Some(lags[0].2),
            n: 20_000,
            found: Found::Spearman(SpearmanFinding::Tested {
                rho: lags[0].1.into(),
                pvalue: lags[0].2.into(),
                lag: pass.then_some(1),
                last_lag: 1,
            }),
            next: None,
            data: Some(CheckData::Correlogram { lags }),
        }),
    }
}

fn verdict(point: usize, result: PointResult) -> Event {
    Event {
        at: 10.0,
        point,
        rate: result.target_rate,
        kind: EventKind::Verdict(Box::new(result)),
    }
}

/// Samples of worker 0 of `agent`, counted in `round` of `point`.
fn origin(point: usize, round: u32, agent: usize) -> Origin {
    Origin {
        point,
        round,
        agent,
        worker: 0,
    }
}

/// A finished three-point sweep: two converged points, the third N/A for independence
/// with too few samples for a CI of its p99.9. Returns the results recorded.
fn sweep(dir: &Path) -> Vec<PointResult> {
    let mut rng = SmallRng::seed_from_u64(7);
    let mut recorder = Recorder::create(dir, new_record("e2e-sweep")).unwrap();
    let mut results = Vec::new();
    for (point, &rate) in RATES.iter().enumerate() {
        let mean_us = 15.0 * (point + 1) as f64;
        let warmup = samples(&mut rng, 1000, mean_us * 3.0, rate);
        recorder.samples(origin(point, 0, 0), &warmup);
        let n = if point == 2 { 2000 } else { 20_000 };
        let measured = samples(&mut rng, n, mean_us, rate);
        // Two agents share the measured round.
        recorder.samples(origin(point, 1, 0), &measured[..n / 2]);
        recorder.samples(origin(point, 1, 1), &measured[n / 2..]);
        recorder.flush().unwrap();
        recorder
            .event(&interarrival(&mut rng, point, rate))
            .unwrap();
        let mut r = result(rate, Verdict::Converged, n, percentiles(&measured));
        // From the schedule, each request waited 5 µs more per point of load.
        r.from_schedule = r
            .percentiles
            .iter()
            .map(|q| SchedulePercentile {
                p: q.p,
                value: q.value + 5.0 * point as f64,
                actual: q.value,
            })
            .collect();
        if point == 0 {
            recorder
                .event(&independence(point, rate, vec![(1, 0.004, 0.6)], true))
                .unwrap();
        }
        if point == 2 {
            recorder
                .event(&independence(
                    point,
                    rate,
                    vec![(1, 0.31, 1e-30), (2, 0.12, 1e-8), (3, 0.05, 1e-3)],
                    false,
                ))
                .unwrap();
            r.verdict = Verdict::NotAvailable;
            r.settle_answer();
            r.reasons
                .push(Reason::new(Why::Independence(Independence::Stuck(
                    IndependenceStuck {
                        agent: 0,
                        sampling_rate: 1.0.into(),
                        spearman: SpearmanFinding::Tested {
                            rho: 0.31.into(),
                            pvalue: 1e-30.into(),
                            lag: None,
                            last_lag: 3,
                        },
                    },
                ))));
        }
        recorder.event(&verdict(point, r.clone())).unwrap();
        results.push(r);
    }
    recorder.finish(None, Some(Verdict::NotAvailable)).unwrap();
    results
}

fn ok(out: &Output) -> (String, String) {
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(
        out.status.code(),
        Some(0),
        "stdout: {stdout}\nstderr: {stderr}"
    );
    (stdout, stderr)
}

fn svg(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(text.contains("<svg"), "{} is not an SVG", path.display());
    text
}

/// As the table prints a cell: `value [low, high]`, a tenth of a µs at these latencies.
fn cell(p: &PercentileResult) -> String {
    match (p.ci_low, p.ci_high) {
        (Some(low), Some(high)) => format!("{:.1} [{low:.1}, {high:.1}]", p.value),
        _ => format!("{:.1} (no CI)", p.value),
    }
}

#[test]
fn a_sweep_gets_its_table_and_every_plot() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    let results = sweep(&run);
    let (stdout, stderr) = ok(&vernier(&["report", run.to_str().unwrap()]));

    assert!(stdout.starts_with("run e2e-sweep (finished)"), "{stdout}");
    let lines: Vec<&str> = stdout.lines().collect();
    let header = lines.iter().position(|l| l.starts_with("point")).unwrap();
    for column in [
        "target/s",
        "achieved/s",
        "verdict",
        "samples",
        "p50 µs",
        "p99 µs*",
        "p99.9 µs",
        "p99.99 µs",
    ] {
        assert!(
            lines[header].contains(column),
            "{column} missing: {}",
            lines[header]
        );
    }
    // Each point's row, and under it the same percentiles from the schedule.
    for (i, r) in results.iter().enumerate() {
        let row = lines[header + 1 + 2 * i];
        assert!(row.trim_start().starts_with(&i.to_string()), "{row}");
        assert!(row.contains(&format!("{:.0}", r.target_rate)), "{row}");
        assert!(row.contains(&format!("{:.1}", r.achieved_rate)), "{row}");
        assert!(
            row.contains(r.verdict.name()) && row.contains(&r.samples.to_string()),
            "{row}"
        );
        for p in &r.percentiles[..3] {
            assert!(row.contains(&cell(p)), "{} missing from {row}", cell(p));
        }
        let under = lines[header + 2 + 2 * i];
        assert!(under.trim_start().starts_with("from schedule"), "{under}");
        for s in &r.from_schedule[..3] {
            let cell = format!("{:.1} ({:.1} actual)", s.value, s.actual);
            assert!(under.contains(&cell), "{cell} missing from {under}");
        }
    }
    // The N/A point: its p99.9 had too few samples for a CI, and its reason is under it.
    assert!(results[2].percentiles[2].ci_low.is_none());
    assert!(lines[header + 5].contains("(no CI)"));
    assert_eq!(
        lines[header + 7].trim(),
        format!("N/A: independence: {}", results[2].reasons[0].detail())
    );
    assert_eq!(results[2].reasons[0].kind(), ReasonKind::Independence);
    assert!(stdout.contains("verdict: n/a"));
    assert!(
        stdout.contains("from schedule: every request timed from its scheduled departure"),
        "{stdout}"
    );

    let report = run.join("report");
    let expected = [
        "ccdf.svg",
        "latency-vs-load.svg",
        "budget.svg",
        "interarrival-p0-a0.svg",
        "interarrival-p1-a0.svg",
        "interarrival-p2-a0.svg",
        "correlogram-p0-a0.svg",
        "correlogram-p2-a0.svg",
    ];
    for name in expected {
        let path = report.join(name);
        assert!(
            stderr.contains(&format!("wrote {}", path.display())),
            "{name} not listed: {stderr}"
        );
    }
    assert_eq!(std::fs::read_dir(&report).unwrap().count(), expected.len());

    let ccdf = svg(&report.join("ccdf.svg"));
    for label in [
        "10000 req/s, converged, n = 20000",
        "20000 req/s, converged",
        "30000 req/s, n/a, n = 2000",
    ] {
        assert!(ccdf.contains(label), "{label} missing from the CCDF legend");
    }
    assert!(ccdf.contains("1e-4") && ccdf.contains("latency (µs)"));

    let load = svg(&report.join("latency-vs-load.svg"));
    assert!(load.contains("p99 latency vs achieved load"));
    assert!(load.contains("converged") && load.contains("n/a"));
    assert!(
        load.contains("p99 from schedule"),
        "the second series' legend entry"
    );

    let budget = svg(&report.join("budget.svg"));
    assert!(budget.contains("p50 latency budget per load"));
    assert!(budget.contains("10000 req/s: unknown host"), "{budget}");

    let gaps = svg(&report.join("interarrival-p1-a0.svg"));
    assert!(gaps.contains("Inter-departure gaps: point 1 (20000 req/s), agent 0"));
    assert!(gaps.contains("target: exponential, mean 50 µs"), "{gaps}");
    assert!(gaps.contains("<rect"), "the histogram's bars");

    let corr = svg(&report.join("correlogram-p2-a0.svg"));
    assert!(corr.contains("Spearman correlogram: point 2 (30000 req/s), agent 0"));
    assert!(corr.contains("±1.96/√n = ±0.0139 with n = 20000"), "{corr}");
}

#[test]
fn json_says_the_same_and_out_puts_the_plots_elsewhere() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    let results = sweep(&run);
    let out = tmp.path().join("plots");
    let (stdout, _) = ok(&vernier(&[
        "report",
        run.to_str().unwrap(),
        "--json",
        "--out",
        out.to_str().unwrap(),
    ]));
    let json: Value = serde_json::from_str(&stdout).expect("one JSON object");
    assert_eq!(json["name"], "e2e-sweep");
    assert_eq!(json["verdict"], "n/a");
    assert_eq!(json["points"].as_array().unwrap().len(), 3);
    assert_eq!(json["points"][2]["verdict"], "n/a");
    assert_eq!(
        support::first_kind(&json["points"][2]),
        Some(ReasonKind::Independence)
    );
    assert_eq!(json["points"][0]["percentiles"][1]["p"], 99.0);
    assert_eq!(
        json["points"][0]["percentiles"][1]["ci_high"].as_f64(),
        results[0].percentiles[1].ci_high
    );
    let scheduled = json["points"][2]["from_schedule"][1]["value"]
        .as_f64()
        .unwrap();
    assert!((scheduled - results[2].from_schedule[1].value).abs() < 1e-6);
    let plots: Vec<PathBuf> = json["plots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| PathBuf::from(p.as_str().unwrap()))
        .collect();
    assert!(plots.contains(&out.join("ccdf.svg")), "{plots:?}");
    assert!(plots.iter().all(|p| p.starts_with(&out) && p.exists()));
    assert!(!run.join("report").exists());
}

/// A PNG's width and height, from a real decode (the `png` crate vernier encodes with;
/// the header alone could be right over a broken image).
fn png_size(path: &Path) -> (u32, u32) {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(
        &bytes[..8],
        b"\x89PNG\r\n\x1a\n",
        "{} is not a PNG",
        path.display()
    );
    let mut reader = png::Decoder::new(std::io::Cursor::new(bytes))
        .read_info()
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut pixels = vec![0; reader.output_buffer_size().unwrap()];
    let frame = reader
        .next_frame(&mut pixels)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    // Something was drawn: not one colour throughout.
    assert!(
        pixels.iter().any(|&b| b != pixels[0]),
        "{} is blank",
        path.display()
    );
    (frame.width, frame.height)
}

#[test]
fn every_plot_is_written_as_png_beside_svg_or_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    sweep(&run);
    let both = tmp.path().join("both");
    let (_, stderr) = ok(&vernier(&[
        "report",
        run.to_str().unwrap(),
        "--format",
        "both",
        "--out",
        both.to_str().unwrap(),
    ]));
    let mut names: Vec<String> = std::fs::read_dir(&both)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    let svgs: Vec<&String> = names.iter().filter(|n| n.ends_with(".svg")).collect();
    assert_eq!(svgs.len(), 8, "{names:?}");
    for svg_name in svgs {
        let png = both.join(svg_name.replace(".svg", ".png"));
        assert!(
            stderr.contains(&format!("wrote {}", png.display())),
            "{stderr}"
        );
        assert_eq!(png_size(&png), (900, 600), "{}", png.display());
        svg(&both.join(svg_name));
    }
    assert_eq!(names.len(), 16, "{names:?}");

    let only = tmp.path().join("png");
    ok(&vernier(&[
        "report",
        run.to_str().unwrap(),
        "--format",
        "png",
        "--out",
        only.to_str().unwrap(),
    ]));
    let written: Vec<PathBuf> = std::fs::read_dir(&only)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(written.len(), 8, "{written:?}");
    assert!(
        written
            .iter()
            .all(|p| p.extension().is_some_and(|e| e == "png"))
    );
    // The same drawing as the SVG: a PNG of the CCDF is the PNG written beside it.
    assert_eq!(
        std::fs::read(only.join("ccdf.png")).unwrap(),
        std::fs::read(both.join("ccdf.png")).unwrap()
    );

    let out = vernier(&["report", run.to_str().unwrap(), "--format", "jpeg"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("invalid value 'jpeg' for '--format"),
        "{stderr}"
    );
    assert!(stderr.contains("svg, png, both"), "{stderr}");
}

#[test]
fn a_run_killed_in_warm_up_still_reports() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("killed");
    let mut rng = SmallRng::seed_from_u64(1);
    let mut recorder = Recorder::create(&run, new_record("killed")).unwrap();
    recorder.samples(origin(0, 0, 0), &samples(&mut rng, 500, 20.0, 10_000.0));
    recorder
        .event(&interarrival(&mut rng, 0, 10_000.0))
        .unwrap();
    recorder.flush().unwrap();
    drop(recorder);

    let (stdout, stderr) = ok(&vernier(&["report", run.to_str().unwrap()]));
    assert!(stdout.contains("no load point finished"), "{stdout}");
    assert!(stdout.contains("the run did not finish"), "{stdout}");
    assert!(stderr.contains("no load point finished"), "{stderr}");
    assert!(stderr.contains("interarrival-p0-a0.svg"), "{stderr}");
    svg(&run.join("report/interarrival-p0-a0.svg"));
    assert!(!run.join("report/ccdf.svg").exists());
}

#[test]
fn a_run_without_samples_skips_the_ccdf_with_a_note() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("nosamples");
    let mut recorder = Recorder::create(&run, new_record("nosamples")).unwrap();
    let p99 = |v: f64| {
        vec![PercentileResult {
            p: 99.0,
            value: v,
            ci_low: Some(v - 1.0),
            ci_high: Some(v + 1.0),
            dependence: None,
        }]
    };
    recorder
        .event(&verdict(
            0,
            result(1000.0, Verdict::Converged, 5000, p99(30.0)),
        ))
        .unwrap();
    recorder
        .event(&verdict(
            1,
            result(2000.0, Verdict::Converged, 5000, p99(40.0)),
        ))
        .unwrap();
    recorder
        .finish(Some(2000.0), Some(Verdict::Converged))
        .unwrap();

    let (stdout, stderr) = ok(&vernier(&["report", run.to_str().unwrap()]));
    assert!(stdout.contains("slo rate: 2000 req/s"), "{stdout}");
    assert!(stderr.contains("ccdf.svg skipped"), "{stderr}");
    assert!(!run.join("report/ccdf.svg").exists());
    let load = svg(&run.join("report/latency-vs-load.svg"));
    assert!(load.contains("SLO rate 2000 req/s"));
}

#[test]
fn a_point_na_before_measuring_is_not_in_the_ccdf() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("early");
    let mut rng = SmallRng::seed_from_u64(3);
    let mut recorder = Recorder::create(&run, new_record("early")).unwrap();
    // Point 0 had warm-up samples only, then failed its inter-arrival check: round 0.
    recorder.samples(origin(0, 0, 0), &samples(&mut rng, 3000, 500.0, 5000.0));
    let mut na = result(5000.0, Verdict::NotAvailable, 0, Vec::new());
    na.round = 0;
    recorder.event(&verdict(0, na)).unwrap();
    let measured = samples(&mut rng, 5000, 20.0, 10_000.0);
    recorder.samples(origin(1, 0, 0), &samples(&mut rng, 500, 20.0, 10_000.0));
    recorder.samples(origin(1, 1, 0), &measured);
    let converged = result(10_000.0, Verdict::Converged, 5000, percentiles(&measured));
    recorder.event(&verdict(1, converged)).unwrap();
    recorder.finish(None, Some(Verdict::NotAvailable)).unwrap();

    let (_, stderr) = ok(&vernier(&["report", run.to_str().unwrap()]));
    assert!(
        stderr.contains("point 0 (5000 req/s): ended before measuring; not in the CCDF"),
        "{stderr}"
    );
    let ccdf = svg(&run.join("report/ccdf.svg"));
    assert!(ccdf.contains("10000 req/s, converged, n = 5000"));
    assert!(
        !ccdf.contains("5000 req/s, n/a"),
        "warm-up samples drawn as a result"
    );
}

/// A point measured beside the host's stalls gets its tail without stalls drawn beside
/// every request's, from the samples and `stalls.csv` (the report marks them again as
/// the point did); an unreadable `stalls.csv` leaves that curve out with a note naming
/// the line.
#[test]
fn the_ccdf_draws_the_tail_without_stalls_beside_every_requests() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("stalls");
    let mut rng = SmallRng::seed_from_u64(5);
    let mut recorder = Recorder::create(&run, new_record("stalls")).unwrap();
    // 10,000 req/s for 0.5 s; a 1 ms stall every 10 ms.
    let measured = samples(&mut rng, 5000, 20.0, 10_000.0);
    recorder.samples(origin(0, 1, 0), &measured);
    let stalls = StallLog {
        intervals: (0..50u64)
            .map(|k| StallInterval {
                start_ns: k * 10_000_000 + 2_000_000,
                end_ns: k * 10_000_000 + 3_000_000,
                core: Some(1),
                source: StallSource::Probe,
            })
            .collect(),
        dropped: 0,
    };
    recorder.stalls(origin(0, 1, 0), &stalls);
    let mut point = result(10_000.0, Verdict::Converged, 5000, percentiles(&measured));
    point.without_stalls = Some(WithoutStalls {
        verdict: Verdict::Converged,
        short: None,
        percentiles: percentiles(&measured),
        ci_width_us: Some(3.0),
        touched_share: 0.12,
        touched_by_agent: vec![0.12],
        samples: 4400,
        stalls: 50,
        probed: Probed::ClientAndTarget,
        touched_call: None,
        more_time: None,
    });
    // The tail asked for is the one without stalls, as by default.
    point.tail = vernier_workbench::scenario::Tail::WithoutStalls;
    point.settle_answer();
    recorder.event(&verdict(0, point)).unwrap();
    recorder.finish(None, Some(Verdict::Converged)).unwrap();

    let (_, stderr) = ok(&vernier(&["report", run.to_str().unwrap()]));
    let ccdf = svg(&run.join("report/ccdf.svg"));
    // Each curve names its tail, and which one is the answer.
    assert!(
        ccdf.contains("10000 req/s, every request, converged, n = 5000"),
        "{stderr}"
    );
    // The requests sent from a stall's start until nothing was in flight after it: a
    // little more than a tenth.
    let label = ccdf
        .split("without stalls, the answer: converged (")
        .nth(1)
        .expect("a curve without stalls");
    let touched: f64 = label.split('%').next().unwrap().parse().unwrap();
    assert!((10.0..=14.0).contains(&touched), "{label}");

    // A stalls.csv whose line 3 is not a stall: the curve is left out, and why is said.
    let csv = run.join("stalls.csv");
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines.insert(2, "9,1,,probe,0,0");
    std::fs::write(&csv, lines.join("\n") + "\n").unwrap();
    let (_, stderr) = ok(&vernier(&["report", run.to_str().unwrap()]));
    assert!(
        stderr.contains("stalls.csv:3: end_ns 1 is before start_ns 9")
            && stderr.contains("not drawn"),
        "{stderr}"
    );
    assert!(!svg(&run.join("report/ccdf.svg")).contains("without stalls, the answer"));
}

/// Exit code 2 (or 1 for `io`), one line on stderr naming `needle`, nothing on stdout.
fn expect_error(out: &Output, code: i32, needles: &[&str]) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "stderr: {stderr}");
    assert!(
        out.stdout.is_empty(),
        "stdout: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert_eq!(
        stderr.trim_end().lines().count(),
        1,
        "one line expected: {stderr}"
    );
    for needle in needles {
        assert!(stderr.contains(needle), "{needle:?} missing from: {stderr}");
    }
}

#[test]
fn bad_input_is_one_line_naming_the_file() {
    let tmp = tempfile::tempdir().unwrap();

    let missing = tmp.path().join("no-such-run");
    let out = vernier(&["report", missing.to_str().unwrap()]);
    expect_error(&out, 1, &[missing.to_str().unwrap(), "No such file"]);

    let not_json = tmp.path().join("not-json");
    std::fs::create_dir(&not_json).unwrap();
    std::fs::write(not_json.join("run.json"), "this is not JSON\n").unwrap();
    let out = vernier(&["report", not_json.to_str().unwrap()]);
    expect_error(
        &out,
        2,
        &[
            &not_json.join("run.json").display().to_string(),
            "not a vernier run record",
        ],
    );

    // A real record of another format.
    let run = tmp.path().join("run");
    sweep(&run);
    let path = run.join("run.json");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.replace(FORMAT, "vernier-run/99")).unwrap();
    let out = vernier(&["report", run.to_str().unwrap()]);
    expect_error(&out, 2, &[&path.display().to_string(), "vernier-run/99"]);
    std::fs::write(&path, text).unwrap();

    // A samples part that is not Parquet.
    let part = run.join("samples.parquet/part-000001.parquet");
    assert!(part.exists());
    std::fs::write(&part, b"PAR1 but not really").unwrap();
    let out = vernier(&["report", run.to_str().unwrap()]);
    expect_error(
        &out,
        2,
        &[&part.display().to_string(), "not a samples part"],
    );
}

/// A comparison as `vernier compare --record` leaves it: B faster than A by about 8 µs at
/// p99 over three pairs, its last block unable to stand for B.
fn comparison() -> Comparison {
    let ci = DifferenceCi {
        p: 0.99,
        confidence: 0.95,
        pairs: 3,
        a: 40.0,
        b: 32.0,
        difference: -8.0,
        std_error: 1.0,
        low: -11.0,
        high: -5.0,
        ratio: 0.8,
        ratio_low: 0.72,
        ratio_high: 0.88,
    };
    let block = |side: Side, pair: usize, order: usize, value_us: f64| Block {
        side,
        pair,
        order,
        started_s: order as f64 * 2.3,
        samples: 2000,
        value_us: value_us.into(),
        sent: 2000,
        asked: 2000.0,
        on_schedule: 0.99,
        late_shift_us: 0.5.into(),
        send_lag_p99_us: 3.0,
        backlog_max: 1,
        failed: 0,
        errors: 0,
        without_stalls_us: None,
        touched_share: None,
        problem: None,
    };
    let mut blocks = vec![
        block(Side::A, 0, 0, 41.0),
        block(Side::B, 0, 1, 33.0),
        block(Side::B, 1, 2, 31.5),
        block(Side::A, 1, 3, 39.0),
        block(Side::A, 2, 4, 40.5),
        block(Side::B, 2, 5, 35.0),
    ];
    blocks[5].problem = Some(ReasonKind::Departures);
    blocks[5].on_schedule = 0.1;
    let ccdf = |scale: f64| {
        [(1.0, 1.0), (2.0, 0.1), (3.0, 0.01), (4.0, 1e-3)]
            .iter()
            .map(|&(x, ccdf)| CcdfPoint {
                latency_us: 10.0 * x * scale,
                ccdf,
            })
            .collect()
    };
    let look = |pairs, low: f64, high: f64| Look {
        pairs,
        at_s: pairs as f64 * 4.6,
        difference: (low + high) / 2.0,
        low,
        high,
    };
    Comparison {
        a: "synthetic://127.0.0.1:7000".into(),
        b: "synthetic://127.0.0.1:7001".into(),
        rate: 1000.0,
        percentile: 99.0,
        tail: Tail::WithStalls,
        width_us: 4.0.into(),
        design: Design::Blocks,
        verdict: CompareVerdict::Faster,
        finding: Finding::Difference,
        stopped_after: None,
        reason: "the CI of B − A lies below zero".into(),
        ci: Some(ci),
        percentiles: Vec::new(),
        looks: vec![look(5, -20.0, 2.0), look(6, -11.0, -5.0)],
        blocks,
        ccdf_a: ccdf(4.0),
        ccdf_b: ccdf(3.2),
        side_by_side: None,
        seconds: 13.8,
    }
}

#[test]
fn a_recorded_comparison_gets_its_table_and_three_plots() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("cmp");
    std::fs::create_dir(&dir).unwrap();
    let json = serde_json::to_string_pretty(&comparison()).unwrap();
    std::fs::write(dir.join(COMPARISON_FILE), json).unwrap();

    let (stdout, stderr) = ok(&vernier(&["report", dir.to_str().unwrap()]));
    assert!(
        stdout.starts_with("A synthetic://127.0.0.1:7000\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("  problem: B's block 3 sent 10% of its requests on schedule"),
        "{stdout}"
    );
    assert_eq!(
        stdout.lines().last(),
        Some("verdict: faster (6 blocks, 14 s): the CI of B − A lies below zero"),
        "{stdout}"
    );
    for stem in ["ccdf", "blocks", "difference"] {
        let path = dir.join(format!("report/{stem}.svg"));
        assert!(
            stderr.contains(&format!("wrote {}\n", path.display())),
            "{stderr}"
        );
        let text = svg(&path);
        if stem != "difference" {
            assert!(
                text.contains("B: synthetic://127.0.0.1:7001"),
                "{stem}: both sides"
            );
        }
    }

    // The JSON holds the comparison and the plots; a corrupt record is one line naming it.
    let (stdout, _) = ok(&vernier(&["report", dir.to_str().unwrap(), "--json"]));
    let json: Value = serde_json::from_str(&stdout).expect("one JSON object");
    assert_eq!(json["comparison"]["verdict"], "faster");
    assert_eq!(json["plots"].as_array().unwrap().len(), 3);
    std::fs::write(dir.join(COMPARISON_FILE), "{}").unwrap();
    let out = vernier(&["report", dir.to_str().unwrap()]);
    expect_error(
        &out,
        2,
        &[
            &dir.join(COMPARISON_FILE).display().to_string(),
            "not a vernier comparison",
        ],
    );
}

/// A record of the format before this build's (`vernier-run/2`, written by an earlier
/// build: fixtures/runs/memcached-30k) reads into today's types and back out as it was
/// written, field for field; and `vernier report` tabulates the tail it answered for.
#[test]
fn a_record_of_the_last_format_reads_back_as_written() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/runs/memcached-30k");
    let written: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("run.json")).unwrap()).unwrap();
    assert_eq!(written["format"], "vernier-run/2");
    let record = vernier_workbench::record::read_record(&dir).unwrap();
    let read: Value = serde_json::to_value(&record).unwrap();
    let mut differ = Vec::new();
    differences("", &written, &read, &mut differ);
    assert!(differ.is_empty(), "read back otherwise: {differ:#?}");
    let out = vernier(&[
        "report",
        dir.to_str().unwrap(),
        "--json",
        "--out",
        tempfile::tempdir().unwrap().path().to_str().unwrap(),
    ]);
    let (stdout, _) = ok(&out);
    let table: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(table["points"][0]["target_rate"], 30_000.0, "{table:#}");
    assert_eq!(
        table["points"][0]["samples"], written["points"][0]["samples"],
        "{table:#}"
    );
    // The point answered for the tail without stalls (converged) where every request's
    // tail had no CI: the table's verdict is the answer's, every request's beside it.
    assert_eq!(written["points"][0]["verdict"], "converged");
    assert_eq!(written["points"][0]["every_request"], "n/a");
    assert_eq!(table["points"][0]["verdict"], "converged", "{table:#}");
    assert_eq!(table["points"][0]["every_request"], "n/a", "{table:#}");
    let out = vernier(&[
        "report",
        dir.to_str().unwrap(),
        "--out",
        tempfile::tempdir().unwrap().path().to_str().unwrap(),
    ]);
    let (text, _) = ok(&out);
    assert!(
        text.contains("without stalls converged, 1.3% touched  24.2 [23.1, 24.8]"),
        "{text}"
    );
    assert!(
        text.contains("without stalls (the tail asked for): without"),
        "{text}"
    );
    assert!(text.contains("every request, N/A: host_stalls:"), "{text}");
    assert!(text.contains("\nverdict: converged\n"), "{text}");
}

/// The paths at which `a` and `b` differ (a number within 1e-12 of its own size counts as
/// the same: a float printed and read again).
fn differences(at: &str, a: &Value, b: &Value, out: &mut Vec<String>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for key in x.keys().chain(y.keys().filter(|k| !x.contains_key(*k))) {
                let path = format!("{at}/{key}");
                match (x.get(key), y.get(key)) {
                    (Some(u), Some(v)) => differences(&path, u, v, out),
                    _ => out.push(path),
                }
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (u, v)) in x.iter().zip(y).enumerate() {
                differences(&format!("{at}/{i}"), u, v, out);
            }
        }
        (Value::Number(x), Value::Number(y)) => {
            let (u, v) = (
                x.as_f64().unwrap_or(f64::NAN),
                y.as_f64().unwrap_or(f64::NAN),
            );
            if (u - v).abs() > 1e-12 * u.abs().max(1.0) {
                out.push(format!("{at}: {u} against {v}"));
            }
        }
        _ if a != b => out.push(format!("{at}: {a} against {b}")),
        _ => {}
    }
}
