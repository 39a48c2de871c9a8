//! `vernier validate --quick`: the evidence harness end to end in a couple of minutes: the
//! calibrated floor, the model beside vernier's runs, memcached, redis-server and nginx
//! against memaslap, redis-benchmark and wrk, and docs/RESULTS.md with its plots. Its
//! figures are not evidence (one load, short limits); that the harness works is. The
//! checks read the typed report (results/validate.json), not the markdown's cells.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde::Deserialize;
use vernier_workbench::validate::{
    Answered, Evidence, Server, Timestamps, Tool, ToolOutcome, ToolRun,
};

/// The fields of results/coverage.json this test reads.
#[derive(Debug, Deserialize)]
struct Coverage {
    rows: Vec<CoverageRow>,
    stopping: Vec<StoppingRow>,
}

#[derive(Debug, Deserialize)]
struct StoppingRow {
    process: String,
    p: f64,
    width: f64,
    replications: usize,
    stopped: usize,
    mean_samples: f64,
}

#[derive(Debug, Deserialize)]
struct CoverageRow {
    process: String,
    p: f64,
    coverage: f64,
}

/// The fields of results/stall-coverage.json this test reads.
#[derive(Debug, Deserialize)]
struct StallCoverage {
    rows: Vec<StallRow>,
}

#[derive(Debug, Deserialize)]
struct StallRow {
    p: f64,
    touched_share: f64,
    without: Held,
    every: Held,
}

#[derive(Debug, Deserialize)]
struct Held {
    with_ci: usize,
    bias: f64,
}

#[test]
fn the_quick_harness_writes_results_with_every_section_and_plot() {
    let _one = support::machine();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("docs");
    let runs = tmp.path().join("runs");
    let result = support::vernier(&[
        "validate",
        "--quick",
        "--out",
        out.to_str().unwrap(),
        "--runs",
        runs.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert!(result.status.success(), "{stderr}");
    let json = std::fs::read_to_string(out.join("results/validate.json")).unwrap();
    let report: Evidence = serde_json::from_str(&json).unwrap();
    assert!(report.quick);
    assert_eq!(report.runs, runs);
    assert!(report.floor.rtt_p50_us > 0.0, "{:?}", report.floor);

    // Part 1: the exponential at 50% with kernel and user timestamps; the model's p99 for
    // M/M/1 at ρ = 0.5, E[S] = 25 µs is 50·ln(100) = 230 µs.
    let exponential: Vec<_> = report
        .accuracy
        .iter()
        .filter(|a| a.service == "exponential" && a.load == 0.5)
        .collect();
    let timestamps: Vec<Timestamps> = exponential.iter().map(|a| a.timestamps).collect();
    assert_eq!(timestamps, [Timestamps::Kernel, Timestamps::User]);
    let kernel = exponential[0];
    assert_eq!(kernel.spec, "exp:25us");
    assert!((kernel.model_p99_us - 230.3).abs() < 15.0, "{kernel:?}");
    // Each experiment is a normal record, where the report says.
    assert_eq!(
        kernel.measurement.record,
        runs.join("exponential-50pct-kernel")
    );
    let record = support::read_run(&kernel.measurement.record);
    assert_eq!(record["status"], "finished");
    assert_eq!(report.precision.len(), 2);

    // Part 2: every tool ran (tests/run.sh installs them) and reported a rate; every vernier
    // run against the servers gave a verdict.
    for server in Server::ALL {
        let rows: Vec<&ToolRun> = report
            .tools
            .iter()
            .filter(|t| t.target == server)
            .map(|t| &t.run)
            .collect();
        let tool = rows
            .iter()
            .find_map(|run| match run {
                ToolRun::Other { tool, outcome, .. } => Some((*tool, outcome)),
                _ => None,
            })
            .unwrap_or_else(|| panic!("no tool row for {server:?}: {rows:?}"));
        assert_eq!(tool.0, server.tool());
        match tool.1 {
            ToolOutcome::Measured(figures) => {
                assert!(figures.achieved_rate > 1_000.0, "{figures:?}");
                assert_eq!(figures.p999.is_some(), tool.0 == Tool::Memaslap);
            }
            ToolOutcome::Failed { error } => panic!("{}: {error}", tool.0.name()),
        }
        let vernier: Vec<&Answered> = rows
            .iter()
            .filter_map(|run| match run {
                ToolRun::Vernier { measurement, .. } => Some(&measurement.outcome),
                _ => None,
            })
            .collect();
        assert!(vernier.len() >= 2, "{rows:?}");
        for outcome in vernier {
            assert!(matches!(outcome, Answered::Measured(_)), "{outcome:?}");
        }
    }

    // The markdown has every section, and the headline printed is the one in it.
    let text = std::fs::read_to_string(out.join("RESULTS.md")).unwrap();
    for section in [
        "## On what machine?",
        "## How far is vernier from the ideal model, in brief?",
        "## How close is vernier to the ideal model?",
        "### How precise is it at 1,000 req/s?",
        "## What do other tools say of the same targets?",
        "## How does the methodology behave as it runs?",
        "## Where is vernier off, and why?",
        "## Does the first CI cover the truth?",
        "## Does the tail without stalls' CI cover?",
    ] {
        assert!(text.contains(section), "{section} missing:\n{text}");
    }
    let headline = String::from_utf8_lossy(&result.stdout);
    assert_eq!(
        headline.trim(),
        vernier_workbench::validate::headline(&report).trim()
    );
    assert!(text.contains(headline.trim()), "{headline}");

    // The plots: the accuracy figure (vernier report's for the 50% run depend on what that
    // run recorded), each where the report says.
    assert!(
        report
            .figures
            .iter()
            .any(|f| f == "accuracy-exponential.svg")
    );
    for figure in &report.figures {
        assert!(out.join("results").join(figure).is_file(), "{figure}");
    }
    let svg = std::fs::read_to_string(out.join("results/accuracy-exponential.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("p99 ideal model"));

    // The tail without stalls: nine cells of p50, p90 and p99, in every one nearer the
    // no-stall truth than the tail of every request, with intervals at p50 and p90 (the
    // quick harness's 100,000 requests are too few for p99 at ρ 0.8). Its coverage depends
    // on the stalls the 1 ms probe misses: docs/RESULTS.md.
    let stalls: StallCoverage = serde_json::from_str(
        &std::fs::read_to_string(out.join("results/stall-coverage.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(stalls.rows.len(), 9 * 3, "{stalls:?}");
    for row in &stalls.rows {
        assert!(row.p > 0.9 || row.without.with_ci > 0, "{row:?}");
        assert!((0.0..=1.0).contains(&row.touched_share), "{row:?}");
        assert!(row.without.bias.abs() < row.every.bias.abs(), "{row:?}");
    }

    // The coverage section's own JSON.
    let coverage: Coverage =
        serde_json::from_str(&std::fs::read_to_string(out.join("results/coverage.json")).unwrap())
            .unwrap();
    let mm1 = coverage
        .rows
        .iter()
        .find(|r| r.process == "M/M/1 ρ = 0.8" && r.p == 0.99)
        .unwrap_or_else(|| panic!("{coverage:?}"));
    assert!((0.0..=1.0).contains(&mm1.coverage), "{mm1:?}");
    // The stopping rule as it runs: every process, p50 to p99, at 5%, 10% and 20% of the
    // value; iid samples stop at every width within the quick harness's limit, and a
    // narrower target takes more samples.
    assert_eq!(
        coverage.stopping.len(),
        5 * 3 * 3,
        "{:?}",
        coverage.stopping
    );
    let iid: Vec<&StoppingRow> = coverage
        .stopping
        .iter()
        .filter(|r| r.process == "iid exponential" && r.p == 0.99)
        .collect();
    assert_eq!(iid.len(), 3, "{iid:?}");
    for r in &iid {
        assert_eq!(r.stopped, r.replications, "{r:?}");
    }
    assert!(
        iid[0].width < iid[2].width && iid[0].mean_samples > iid[2].mean_samples,
        "{iid:?}"
    );
    let text = std::fs::read_to_string(out.join("RESULTS.md")).unwrap();
    assert!(text.contains("### Does the CI cover under the stopping rule?"));
}
