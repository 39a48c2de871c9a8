//! `vernier model` as users run it: JSON on stdout, the CCDF in a file, and bad arguments
//! refused with exit code 2 and one line on stderr.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::Value;
use support::vernier;

mod support;

#[test]
fn mm1_json_and_ccdf() {
    let dir = tempfile::tempdir().unwrap();
    let ccdf = dir.path().join("ccdf.csv");
    let out = vernier(&[
        "model",
        "--service",
        "exp:10us",
        "--load",
        "0.5",
        "--requests",
        "200000",
        "--ccdf",
        ccdf.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    // M/M/1 at ρ = 0.5 with E[S] = 10 µs: exponential sojourn with mean 20 µs (sampling
    // noise of 200,000 correlated requests is under 1%).
    let mean = json["mean"].as_f64().unwrap();
    assert!((mean / 20.0 - 1.0).abs() < 0.03, "{json}");
    let p99 = &json["percentiles"][3];
    assert_eq!(p99["p"], 0.99);
    assert!(
        (p99["value"].as_f64().unwrap() / (20.0 * 100f64.ln()) - 1.0).abs() < 0.05,
        "{json}"
    );
    assert_eq!(
        (json["workers"].as_u64(), json["warmup"].as_u64()),
        (Some(1), Some(20_000))
    );
    let csv = std::fs::read_to_string(&ccdf).unwrap();
    assert!(csv.starts_with("latency_us,ccdf\n"), "{csv}");
    assert_eq!(csv.lines().count(), 1 + 101);
}

#[test]
fn bad_arguments_are_one_line_and_exit_code_2() {
    for (args, needle) in [
        (
            &["model", "--service", "exp:10us", "--load", "1"][..],
            "load 1 is not between 0 and 1",
        ),
        (
            &[
                "model",
                "--service",
                "exp:10us",
                "--load",
                "0.5",
                "--workers",
                "0",
            ],
            "workers must be at least 1",
        ),
        (
            &["model", "--service", "fixed:0us", "--load", "0.5"],
            "has mean 0",
        ),
    ] {
        let out = vernier(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty());
        assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
        assert!(stderr.contains(needle), "{args:?}: {stderr}");
    }
    let out = vernier(&["model", "--service", "exp:10", "--load", "0.5"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains(r#"invalid distribution "exp:10""#));
}

#[test]
fn an_unwritable_ccdf_file_fails_with_its_path() {
    let out = vernier(&[
        "model",
        "--service",
        "exp:10us",
        "--load",
        "0.5",
        "--requests",
        "1000",
        "--ccdf",
        "/nonexistent/dir/ccdf.csv",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    assert!(
        String::from_utf8_lossy(&out.stderr).starts_with("vernier: /nonexistent/dir/ccdf.csv: ")
    );
}
