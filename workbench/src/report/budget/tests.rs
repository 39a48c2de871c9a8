use vernier_stats::Percentile;

use super::*;
use crate::budget::{Baseline, Part};
use crate::coordinator::{PercentileResult, Verdict};

/// A quiet probe's report of 10 s.
fn quiet() -> vernier_agent::StallReport {
    let mut r = vernier_agent::StallReport::default();
    r.cpu = Some(1);
    r.seconds = 10.0;
    r.wakeups = 10_000;
    r
}

/// A point at `rate` with the p50 `p50` [±0.5], budgeted against `baseline`.
fn point(baseline: &Baseline, rate: f64, p50: f64) -> PointResult {
    during(baseline, rate, p50, crate::budget::During::default())
}

/// The same, with what was seen while it measured.
fn during(baseline: &Baseline, rate: f64, p50: f64, seen: crate::budget::During) -> PointResult {
    let mut r = PointResult {
        target_percentile: Percentile::P50,
        host: vec![quiet()],
        ..PointResult::example(
            rate,
            Verdict::Converged,
            vec![PercentileResult::example(
                50.0,
                p50,
                Some((p50 - 0.5, p50 + 0.5)),
            )],
        )
    };
    r.budget = Some(baseline.budget(&r, seen));
    r
}

/// Three loads of fixed 20 µs against a floor of 6 µs and a client of -1 µs (kernel
/// stamps leave out system calls the floor holds), one load of a workload the model does
/// not know, and one with the path probe and the server's account of its service.
fn bars() -> Vec<BudgetBar> {
    let known = Baseline::given(
        Part::known(6.0, "ping-pong"),
        Part::known(-1.0, "calibrated"),
        Ok("fixed:20us".parse().unwrap()),
        0,
    );
    let unknown = Baseline::given(
        Part::known(6.0, "ping-pong"),
        Part::known(-1.0, "calibrated"),
        Err("no ideal model".into()),
        0,
    );
    use crate::budget::GRID;
    let probed = crate::budget::During {
        probe: Some(crate::budget::ProbeWindow {
            rate: 1_250.0,
            connections: 8,
            requests: 5_000,
            p50_us: 5.6,
            ci_us: Some((5.5, 5.7)),
            ci_how: "given".into(),
            grid: vec![5.6; GRID],
        }),
        served: (vec![20.4; GRID], vec![20.0; GRID]),
        ..crate::budget::During::default()
    };
    let results = [
        point(&known, 5_000.0, 25.2),
        point(&known, 20_000.0, 31.0),
        point(&known, 40_000.0, 60.0),
        point(&unknown, 10_000.0, 44.0),
        during(
            &known.clone().with_path(vec![5.0; GRID]),
            2_000.0,
            26.2,
            probed,
        ),
    ];
    budget_bars(&results.iter().collect::<Vec<_>>())
}

#[test]
fn each_load_has_its_parts_stacked_and_its_measured_median() {
    let bars = bars();
    assert_eq!(bars.len(), 5);
    let names: Vec<&str> = bars[0].segments.iter().map(|s| s.0).collect();
    assert_eq!(
        names,
        ["floor", "client", "host", "server (model)", "unexplained"]
    );
    assert_eq!(bars[0].measured, Some((25.2, Some((24.7, 25.7)))));
    // The client's negative share runs down from the floor's top.
    let stacked = stack(&bars[0]);
    assert_eq!(stacked[0], ("floor", 0.0, 6.0));
    assert_eq!(stacked[1], ("client", 5.0, 6.0));
    // What is unexplained is the measurement less the parts: 25.2 - 25 at 5,000 req/s.
    let (_, low, high) = stacked[4];
    assert!(
        (high - 25.2).abs() < 0.05 && (high - low - 0.2).abs() < 0.05,
        "{stacked:?}"
    );
    // Without a model the server is unknown: not drawn, and nothing is "unexplained".
    assert_eq!(bars[3].unknown, ["server (model)"]);
    assert_eq!(bars[3].segments.len(), 3);
    // With the probe and the server's own account, two parts more.
    let names: Vec<&str> = bars[4].segments.iter().map(|s| s.0).collect();
    assert_eq!(
        names,
        [
            "floor",
            "client",
            "path moved",
            "host",
            "server (model)",
            "queue beyond",
            "service beyond",
            "unexplained"
        ]
    );
    let served = bars[4].segments[6].1;
    assert!((served - 0.4).abs() < 1e-9, "{:?}", bars[4]);
}

#[test]
fn the_budget_plot_is_a_stacked_bar_per_load() {
    let bars = bars();
    let figure = draw(&bars);
    let svg = figure.svg().unwrap();
    assert!(svg.starts_with("<svg"), "{svg}");
    assert!(svg.contains("p50 latency budget per load"));
    for label in ["5000", "20000", "40000", "10000", "2000"] {
        assert!(
            svg.contains(&format!("\n{label} req/s\n")),
            "{label} missing"
        );
    }
    // Every segment in the legend (the probed point has them all), and the measurement.
    for legend in SEGMENTS.iter().map(|s| s.0).chain(["measured p50 (CI)"]) {
        assert!(svg.contains(&format!("\n{legend}\n")), "{legend} missing");
    }
    assert!(svg.contains("10000 req/s: unknown server (model)"), "{svg}");
    // One rectangle per known part of each bar, besides the legend's and the frame's:
    // leaving a point out takes exactly its segments away.
    let fewer = draw(&[&bars[..3], &bars[4..]].concat()).svg().unwrap();
    assert_eq!(
        svg.matches("<rect").count() - fewer.matches("<rect").count(),
        bars[3].segments.len()
    );
    insta::assert_snapshot!("budget_plot", svg);
}
