#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use vernier_stats::DifferenceCi;

use super::{COMPARISON_FILE, read, render_table, run};
use crate::compare::{Block, CompareVerdict, Comparison, Design, Finding, Look, Side};
use crate::coordinator::ReasonKind;
use crate::error::Error;
use crate::report::{CcdfPoint, PlotFormat};
use crate::scenario::Tail;

/// A block of `side` in `pair`, started at `started_s`, whose p99 is `value_us`.
fn block(side: Side, pair: usize, order: usize, started_s: f64, value_us: f64) -> Block {
    Block {
        side,
        pair,
        order,
        started_s,
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
    }
}

/// A small CCDF whose latencies are `scale` times 10, 20, ... µs.
fn ccdf(scale: f64) -> Vec<CcdfPoint> {
    [(1.0, 1.0), (2.0, 0.1), (3.0, 0.01), (4.0, 1e-3)]
        .iter()
        .map(|&(x, q)| CcdfPoint {
            latency_us: 10.0 * x * scale,
            ccdf: q,
        })
        .collect()
}

/// B faster than A by about 8 µs at p99: three pairs (6 blocks, B's third with a problem)
/// and three looks narrowing around −8 µs (made by hand: a real comparison looks from its
/// fifth pair on, so these looks' pairs are not the blocks').
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
    let mut blocks = vec![
        block(Side::A, 0, 0, 0.0, 41.0),
        block(Side::B, 0, 1, 2.3, 33.0),
        block(Side::B, 1, 2, 4.6, 31.5),
        block(Side::A, 1, 3, 6.9, 39.0),
        block(Side::A, 2, 4, 9.2, 40.5),
        block(Side::B, 2, 5, 11.5, 35.0),
    ];
    blocks[5].problem = Some(ReasonKind::Departures);
    blocks[5].on_schedule = 0.1;
    let look = |pairs, at_s, low, high| Look {
        pairs,
        at_s,
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
        percentiles: vec![ci],
        looks: vec![
            look(5, 4.6, -20.0, 2.0),
            look(6, 9.2, -14.0, -3.0),
            look(7, 13.8, -11.0, -5.0),
        ],
        blocks,
        ccdf_a: ccdf(4.0),
        ccdf_b: ccdf(3.2),
        side_by_side: None,
        seconds: 13.8,
    }
}

/// `c` recorded in `dir` as `vernier compare --record` writes it.
fn record(dir: &Path, c: &Comparison) {
    let json = serde_json::to_string_pretty(c).unwrap();
    std::fs::write(dir.join(COMPARISON_FILE), json + "\n").unwrap();
}

fn text(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn a_recorded_comparison_reads_back_as_it_was() {
    let tmp = tempfile::tempdir().unwrap();
    let mut c = comparison();
    // NaN is written as null: a block that measured nothing, a width before any look.
    c.blocks[0].value_us = f64::NAN.into();
    c.blocks[0].late_shift_us = f64::NAN.into();
    c.width_us = f64::NAN.into();
    record(tmp.path(), &c);
    let back = read(tmp.path()).unwrap();
    assert!(back.blocks[0].value_us.is_nan() && back.width_us.is_nan());
    assert_eq!(back.blocks[1..], c.blocks[1..]);
    assert_eq!((back.looks, back.ccdf_b), (c.looks, c.ccdf_b));
}

#[test]
fn the_three_plots_show_both_sides() {
    let tmp = tempfile::tempdir().unwrap();
    let c = comparison();
    record(tmp.path(), &c);
    let report = run(tmp.path(), None, PlotFormat::Svg).unwrap();
    assert!(report.notes.is_empty(), "{:?}", report.notes);
    let out = tmp.path().join("report");
    let names: Vec<_> = ["ccdf", "blocks", "difference"]
        .iter()
        .map(|stem| out.join(format!("{stem}.svg")))
        .collect();
    assert_eq!(report.plots, names);
    assert_eq!(report.comparison, c);

    let ccdf = text(&names[0]);
    assert!(ccdf.contains("Latency CCDF") && ccdf.contains("p99 compared"));
    let blocks = text(&names[1]);
    assert!(blocks.contains("p99 of each block over time"));
    assert!(blocks.contains("cannot stand for its side") && blocks.contains("(B 3)"));
    for svg in [&ccdf, &blocks] {
        assert!(svg.contains("A: synthetic://127.0.0.1:7000"), "{svg}");
        assert!(svg.contains("B: synthetic://127.0.0.1:7001"), "{svg}");
    }
    let difference = text(&names[2]);
    assert!(difference.contains("B − A of the p99, look by look"));
    assert!(difference.contains("± 4 µs asked") && difference.contains("Verdict: faster"));
    // Two curves and each side's blocks joined in time order, at least.
    assert!(ccdf.matches("<polyline").count() >= 2);
    assert!(blocks.matches("<polyline").count() >= 2);
    assert!(ccdf.contains("compared, every request"), "{ccdf}");

    // Compared on the tail without stalls, each plot names that tail.
    let mut without = comparison();
    without.tail = Tail::WithoutStalls;
    let tmp = tempfile::tempdir().unwrap();
    record(tmp.path(), &without);
    run(tmp.path(), None, PlotFormat::Svg).unwrap();
    let out = tmp.path().join("report");
    let blocks = text(&out.join("blocks.svg"));
    assert!(
        blocks.contains("p99 without stalls of each block over time"),
        "{blocks}"
    );
    let difference = text(&out.join("difference.svg"));
    assert!(difference.contains("B − A of the p99 without stalls, look by look"));
    let ccdf = text(&out.join("ccdf.svg"));
    assert!(ccdf.contains("compared, the tail without stalls"), "{ccdf}");
}

#[test]
fn both_formats_write_a_png_beside_each_svg_elsewhere_when_asked() {
    let tmp = tempfile::tempdir().unwrap();
    record(tmp.path(), &comparison());
    let out = tmp.path().join("plots");
    let report = run(tmp.path(), Some(&out), PlotFormat::Both).unwrap();
    assert_eq!(report.plots.len(), 6);
    let png = std::fs::read(out.join("blocks.png")).unwrap();
    assert!(png.starts_with(b"\x89PNG"), "not a PNG");
    assert!(out.join("difference.svg").is_file() && out.join("ccdf.png").is_file());
    assert!(!tmp.path().join("report").exists());
}

#[test]
fn a_plot_without_data_is_skipped_with_a_note() {
    let tmp = tempfile::tempdir().unwrap();
    let mut c = comparison();
    c.looks.clear();
    c.ccdf_b.clear();
    record(tmp.path(), &c);
    let report = run(tmp.path(), None, PlotFormat::Svg).unwrap();
    assert_eq!(report.plots, vec![tmp.path().join("report/blocks.svg")]);
    assert_eq!(report.notes.len(), 2, "{:?}", report.notes);
    assert!(report.notes[0].starts_with("ccdf.svg skipped: B has no latencies"));
    assert!(
        report.notes[1].starts_with("difference.svg skipped: no look at the CI of B − A"),
        "{:?}",
        report.notes
    );
    assert!(report.notes[1].contains("3 were measured"));

    // A comparison stopped on A's first block: nothing of B to compare with.
    c.blocks.truncate(1);
    c.ccdf_a.clear();
    record(tmp.path(), &c);
    let report = run(tmp.path(), None, PlotFormat::Both).unwrap();
    assert!(report.plots.is_empty());
    assert_eq!(
        report.notes,
        vec![
            "ccdf.svg/.png skipped: neither side has latencies (no block measured any)".to_string(),
            "blocks.svg/.png skipped: B has no blocks".to_string(),
            format!(
                "difference.svg/.png skipped: no look at the CI of B − A (the first comes after \
                 {} pairs of blocks; 0 were measured)",
                crate::compare::MIN_PAIRS_TO_LOOK
            ),
        ]
    );
}

#[test]
fn a_missing_or_corrupt_record_is_an_error_naming_the_file() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join(COMPARISON_FILE);
    let err = run(tmp.path(), None, PlotFormat::Svg).unwrap_err();
    assert!(matches!(err, Error::Io { .. }), "{err:?}");
    assert!(
        err.to_string().starts_with(&path.display().to_string()),
        "{err}"
    );

    std::fs::write(&path, "{\"a\": \"x\",\n \"b\": 3}\n").unwrap();
    let err = read(tmp.path()).unwrap_err();
    assert!(matches!(err, Error::Input { line: Some(2), .. }), "{err:?}");
    let message = err.to_string();
    assert!(
        message.starts_with(&format!("{}:2: not a vernier comparison", path.display())),
        "{message}"
    );
    // Nothing was drawn from it.
    assert!(!tmp.path().join("report").exists());
}

#[test]
fn the_table_says_the_verdict_last_and_each_block_problem() {
    let table = render_table(&comparison());
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines[0], "A synthetic://127.0.0.1:7000");
    assert_eq!(
        lines[2],
        "at 1000 req/s, p99, every request (with the host's stalls)"
    );
    // On the tail without stalls, the share each side's blocks had touched.
    let mut without = comparison();
    without.tail = Tail::WithoutStalls;
    for (i, b) in without.blocks.iter_mut().enumerate() {
        b.touched_share = Some(if b.side == Side::A {
            0.1
        } else {
            0.02 * i as f64
        });
    }
    let b_mean = (without.blocks.iter())
        .enumerate()
        .filter(|(_, b)| b.side == Side::B)
        .map(|(i, _)| 0.02 * i as f64)
        .sum::<f64>()
        / without.blocks.iter().filter(|b| b.side == Side::B).count() as f64;
    assert_eq!(
        render_table(&without).lines().nth(2).unwrap(),
        format!(
            "at 1000 req/s, p99, the tail without stalls (the requests no host stall touched; stalls touched 10.0% of A's and {:.1}% of B's requests)",
            b_mean * 100.0
        )
    );
    // A side with no block measured yet has no share to say, not "-0.0%".
    without.blocks.retain(|b| b.side == Side::B);
    assert_eq!(
        render_table(&without).lines().nth(2).unwrap(),
        format!(
            "at 1000 req/s, p99, the tail without stalls (the requests no host stall touched; stalls touched {:.1}% of B's requests)",
            b_mean * 100.0
        )
    );
    without.blocks.clear();
    assert_eq!(
        render_table(&without).lines().nth(2).unwrap(),
        "at 1000 req/s, p99, the tail without stalls (the requests no host stall touched)"
    );
    assert!(table.contains("  B − A -8.0 µs [-11.0, -5.0]\n"), "{table}");
    let problem = crate::compare::render_problem(&comparison().blocks[5], Design::Blocks).unwrap();
    assert!(problem.starts_with("B's block 3 sent 10% of its requests on schedule"));
    assert!(
        table.contains(&format!("  problem: {problem}\n")),
        "{table}"
    );
    assert_eq!(
        lines.last(),
        Some(&"verdict: faster (6 blocks, 14 s): the CI of B − A lies below zero")
    );
}
