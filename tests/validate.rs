//! `vernier validate --quick`: the evidence harness end to end in about a minute: the
//! calibrated floor, the model beside vernier's runs, memcached, redis-server and nginx
//! against memaslap, redis-benchmark and wrk, and docs/RESULTS.md with its plots. Its
//! figures are not evidence (one load, short limits); that the harness works is.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

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
    let text = std::fs::read_to_string(out.join("RESULTS.md")).unwrap();
    for section in [
        "## The machine",
        "## Headline",
        "## 1. Accuracy against the ideal model",
        "### Precision at 1,000 req/s",
        "## 2. Against other tools, same targets",
        "## 3. The methodology's own dynamics",
        "## Where vernier is off, and why",
        "vernier validate --quick",
        "## Coverage of the confidence intervals",
        "| M/M/1 ρ = 0.8 | p99 |",
    ] {
        assert!(text.contains(section), "{section} missing:\n{text}");
    }
    // The headline on stdout is the one in the file.
    let headline = String::from_utf8_lossy(&result.stdout);
    assert!(
        headline.contains("| exponential (`exp:25us`) |"),
        "{headline}"
    );
    assert!(text.contains(headline.trim()), "{headline}");
    // The model's p99 for M/M/1 at ρ = 0.5, E[S] = 25 µs: 50·ln(100) = 230 µs.
    let model_p99: f64 = headline
        .lines()
        .find(|l| l.starts_with("| exponential"))
        .and_then(|l| l.trim_end_matches(" |").rsplit("| ").next())
        .and_then(|v| v.trim().parse().ok())
        .unwrap();
    assert!((model_p99 - 230.3).abs() < 15.0, "{headline}");
    // Every tool ran (tests/run.sh installs them), with a rate; vernier's rows say whether
    // its gaps passed.
    for tool in ["| memaslap |", "| redis-benchmark |", "| wrk |"] {
        let row = text.lines().find(|l| l.contains(tool)).unwrap();
        assert!(!row.contains("not installed"), "{row}");
        let achieved: f64 = row.split('|').nth(4).unwrap().trim().parse().unwrap();
        assert!(achieved > 1_000.0, "{row}");
    }
    assert_eq!(
        text.lines()
            .filter(|l| l.contains("| vernier |") && l.contains("yes by design"))
            .count(),
        text.lines().filter(|l| l.contains("| vernier |")).count()
    );
    // The plots: the accuracy figure, and vernier report's for the 50% run.
    let svg = std::fs::read_to_string(out.join("results/accuracy-exponential.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("p99 ideal model"));
    assert!(text.contains("![accuracy-exponential.svg](results/accuracy-exponential.svg)"));
    // Each experiment is a normal record.
    let record = support::read_run(&runs.join("exponential-50pct-kernel"));
    assert_eq!(record["status"], "finished");
}
