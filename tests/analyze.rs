//! `vernier analyze` as a user runs it: the real binary on files in the three layouts,
//! and on the bad inputs it must refuse with exit code 2, one line on stderr naming the
//! file, line and value, and nothing on stdout.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;
use support::vernier;

mod support;

/// A deterministic latency-like series: a slowly varying base plus a scrambled spread.
fn series(n: usize) -> Vec<f64> {
    (0..n)
        .map(|i| 50.0 + ((i * 7919) % 1009) as f64 / 10.0 + ((i % 97) as f64).sqrt())
        .collect()
}

fn write_lines(dir: &Path, name: &str, values: &[f64]) -> PathBuf {
    let path = dir.join(name);
    let text: String = values.iter().map(|v| format!("{v}\n")).collect();
    std::fs::write(&path, text).unwrap();
    path
}

fn json(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "exit {:?}, stderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("stdout is one JSON object")
}

fn expect_bad_input(out: &Output, needles: &[&str]) {
    assert_eq!(
        out.status.code(),
        Some(2),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stdout.is_empty(),
        "partial output on stdout: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        err.trim_end().lines().count(),
        1,
        "one line expected: {err}"
    );
    for needle in needles {
        assert!(err.contains(needle), "{needle:?} missing from: {err}");
    }
}

#[test]
fn the_three_layouts_give_the_same_answer() {
    let dir = tempfile::tempdir().unwrap();
    let values = series(5000);
    let lines = write_lines(dir.path(), "lat.txt", &values);

    let csv = dir.path().join("run.csv");
    let text: String = std::iter::once("send_ns,latency_us\n".to_string())
        .chain(
            values
                .iter()
                .enumerate()
                .map(|(i, v)| format!("{},{v}\n", i * 1000)),
        )
        .collect();
    std::fs::write(&csv, text).unwrap();

    let parquet = dir.path().join("samples.parquet");
    {
        use polars::prelude::*;
        let mut frame =
            DataFrame::new_infer_height(vec![Column::new("latency_us".into(), values.clone())])
                .unwrap();
        ParquetWriter::new(std::fs::File::create(&parquet).unwrap())
            .finish(&mut frame)
            .unwrap();
    }

    let a = json(&vernier(&["analyze", lines.to_str().unwrap()]));
    let b = json(&vernier(&[
        "analyze",
        csv.to_str().unwrap(),
        "--column",
        "latency_us",
    ]));
    let c = json(&vernier(&[
        "analyze",
        parquet.to_str().unwrap(),
        "--column",
        "latency_us",
    ]));
    assert_eq!(a, b);
    assert_eq!(a, c);

    // The numbers are the library's numbers, in the documented shape.
    let sorted = vernier_stats::sort_samples(&values).unwrap();
    assert_eq!(a["n"], 5000);
    let ps: Vec<f64> = a["percentiles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["p"].as_f64().unwrap())
        .collect();
    assert_eq!(ps, vec![0.5, 0.9, 0.95, 0.99, 0.999, 0.9999]);
    for p in a["percentiles"].as_array().unwrap() {
        let q = p["p"].as_f64().unwrap();
        assert_eq!(
            p["value"].as_f64().unwrap(),
            vernier_stats::percentile(&sorted, q).unwrap()
        );
        match vernier_stats::percentile_ci(&sorted, q, 0.95) {
            Ok((lo, hi)) => {
                assert_eq!(p["ci_low"].as_f64().unwrap(), lo);
                assert_eq!(p["ci_high"].as_f64().unwrap(), hi);
            }
            Err(_) => {
                assert!(p["ci_low"].is_null() && p["ci_high"].is_null(), "{p}");
                let note = p["ci_note"].as_str().unwrap();
                assert!(
                    note.starts_with("not enough samples: p99.9")
                        && note.contains("at 95% needs at least"),
                    "{p}"
                );
            }
        }
    }
    for key in [
        "alpha",
        "lag1_rho",
        "lag1_pvalue",
        "iid",
        "decorrelation_lag",
    ] {
        assert!(
            a["independence"].get(key).is_some(),
            "independence.{key} missing: {a}"
        );
    }
    for key in [
        "adf_stat",
        "pvalue",
        "usedlag",
        "nobs",
        "critical_values",
        "stationary",
    ] {
        assert!(
            a["stationarity"].get(key).is_some(),
            "stationarity.{key} missing: {a}"
        );
    }
    assert!(a["stationarity"]["critical_values"]["5%"].is_f64());
    assert!(
        a.get("interarrival").is_none(),
        "no inter-arrivals were given"
    );
}

#[test]
fn interarrivals_from_a_file_or_a_column() {
    let dir = tempfile::tempdir().unwrap();
    let values = series(2000);
    let lines = write_lines(dir.path(), "lat.txt", &values);
    // Quantiles of an exponential with mean 20: as exponential as data can be.
    let gaps: Vec<f64> = (0..2000)
        .map(|i| -20.0 * (1.0 - (i as f64 + 0.5) / 2000.0).ln())
        .collect();
    let gap_file = write_lines(dir.path(), "gaps.txt", &gaps);
    let out = json(&vernier(&[
        "analyze",
        lines.to_str().unwrap(),
        "--interarrival",
        gap_file.to_str().unwrap(),
    ]));
    let ia = &out["interarrival"];
    assert_eq!(ia["exponential"], true, "{ia}");
    assert!((ia["scale"].as_f64().unwrap() - 20.0).abs() < 0.5, "{ia}");
    assert_eq!(
        ia["significance_levels"],
        serde_json::json!([15.0, 10.0, 5.0, 2.5, 1.0])
    );

    // Evenly spaced departures are not a Poisson process.
    let csv = dir.path().join("run.csv");
    let text: String = std::iter::once("latency_us,gap_us\n".to_string())
        .chain(values.iter().map(|v| format!("{v},20\n")))
        .collect::<String>()
        .replacen(",20\n", ",21\n", 1);
    std::fs::write(&csv, text).unwrap();
    let out = json(&vernier(&[
        "analyze",
        csv.to_str().unwrap(),
        "--column",
        "latency_us",
        "--interarrival-column",
        "gap_us",
    ]));
    assert_eq!(
        out["interarrival"]["exponential"], false,
        "{}",
        out["interarrival"]
    );
}

#[test]
fn bad_inputs_are_refused_with_file_line_and_value() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.txt");
    std::fs::write(&path, "10.5\n11\nfast\n12\n").unwrap();
    expect_bad_input(
        &vernier(&["analyze", path.to_str().unwrap()]),
        &["bad.txt:3", "\"fast\" is not a number"],
    );

    std::fs::write(&path, "10.5\nnan\n").unwrap();
    expect_bad_input(
        &vernier(&["analyze", path.to_str().unwrap()]),
        &["bad.txt:2", "\"nan\" is not a finite number"],
    );

    let empty = dir.path().join("empty.txt");
    std::fs::write(&empty, "").unwrap();
    expect_bad_input(
        &vernier(&["analyze", empty.to_str().unwrap()]),
        &["empty.txt", "no samples"],
    );

    let csv = dir.path().join("run.csv");
    std::fs::write(&csv, "a,b\n1,2\n").unwrap();
    expect_bad_input(
        &vernier(&["analyze", csv.to_str().unwrap(), "--column", "latency"]),
        &["run.csv", "no column \"latency\" (columns: a, b)"],
    );
    std::fs::write(&csv, "a,b\n1,2\n3,inf\n").unwrap();
    expect_bad_input(
        &vernier(&["analyze", csv.to_str().unwrap(), "--column", "b"]),
        &["run.csv:3", "\"inf\""],
    );

    let missing = dir.path().join("nope.txt");
    expect_bad_input(
        &vernier(&["analyze", missing.to_str().unwrap()]),
        &["nope.txt", "cannot open"],
    );

    let not_parquet = dir.path().join("fake.parquet");
    std::fs::write(&not_parquet, "1\n2\n").unwrap();
    expect_bad_input(
        &vernier(&["analyze", not_parquet.to_str().unwrap(), "--column", "x"]),
        &["fake.parquet", "Parquet"],
    );

    let lines = write_lines(dir.path(), "ok.txt", &series(100));
    expect_bad_input(
        &vernier(&[
            "analyze",
            lines.to_str().unwrap(),
            "--percentiles",
            "99,100",
        ]),
        &["--percentiles", "100"],
    );
    expect_bad_input(
        &vernier(&["analyze", lines.to_str().unwrap(), "--confidence", "1.5"]),
        &["confidence", "1.5"],
    );
}

/// Each percentile carries the interval valid under dependence beside the order-statistic
/// one: as wide on independent samples, wider on a series whose values come in runs, and
/// null with the reason (and the samples needed) when there are too few.
#[test]
fn percentiles_carry_the_ci_under_dependence() {
    let dir = tempfile::tempdir().unwrap();
    // Runs of 200 equal-ish values: strongly dependent.
    let runs: Vec<f64> = (0..50_000)
        .map(|i| 100.0 + ((i / 200 * 7919) % 1009) as f64 / 10.0 + (i % 7) as f64 / 100.0)
        .collect();
    let path = write_lines(dir.path(), "runs.txt", &runs);
    let out = json(&vernier(&["analyze", path.to_str().unwrap()]));
    let p50 = out["percentiles"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["p"] == 0.5)
        .unwrap();
    let dep = &p50["ci_under_dependence"];
    assert_eq!(dep["method"], "batched-indicator", "{p50}");
    assert!(dep["batch_size"].as_u64().unwrap() >= 200, "{p50}");
    assert!(dep["batches"].as_u64().unwrap() >= 10, "{p50}");
    let width = |lo: &Value, hi: &Value| hi.as_f64().unwrap() - lo.as_f64().unwrap();
    assert!(
        width(&dep["low"], &dep["high"]) > 3.0 * width(&p50["ci_low"], &p50["ci_high"]),
        "{p50}"
    );
    // p99.99 from 50,000 samples: no interval under dependence, and why.
    let p9999 = out["percentiles"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["p"] == 0.9999)
        .unwrap();
    assert!(p9999["ci_under_dependence"].is_null(), "{p9999}");
    let reason = p9999["ci_under_dependence_reason"].as_str().unwrap();
    assert!(reason.contains("samples needed"), "{reason}");
}

/// What `mutilate --save` writes (send time in s, latency in µs, one request a line) reads
/// with `--column 2` and answers as the one-number file of its latencies does; without a
/// column, or with an interval log's options, the error says what to pass.
#[test]
fn a_mutilate_save_file_reads_by_column_number() {
    let dir = tempfile::tempdir().unwrap();
    let values = series(3000);
    let saved = dir.path().join("mutilate.txt");
    let text: String = values
        .iter()
        .enumerate()
        .map(|(i, v)| format!("{:.6} {v:.6}\n", i as f64 * 1e-4))
        .collect();
    std::fs::write(&saved, text).unwrap();
    let lines = write_lines(
        dir.path(),
        "lat.txt",
        &values
            .iter()
            .map(|v| format!("{v:.6}").parse().unwrap())
            .collect::<Vec<f64>>(),
    );
    let by_column = json(&vernier(&[
        "analyze",
        saved.to_str().unwrap(),
        "--column",
        "2",
    ]));
    let plain = json(&vernier(&["analyze", lines.to_str().unwrap()]));
    assert_eq!(by_column["percentiles"], plain["percentiles"]);
    assert_eq!(by_column["n"], 3000);
    expect_bad_input(
        &vernier(&["analyze", saved.to_str().unwrap()]),
        &["mutilate.txt:1", "has 2 columns", "--column 2"],
    );
    let out = vernier(&["analyze", saved.to_str().unwrap(), "--tag", "point0/"]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Requests every 100 µs for 20 s, answered in 20-60 µs, but for a host stall of 3 ms every
/// second: the requests it held wait it out and the queue drains behind it. With the stalls
/// file the without-stalls tail is the server's own; the full tail is the stalls'.
fn stalled_run(dir: &Path) -> (PathBuf, PathBuf) {
    let mut rows = String::from("send_ns,latency_ns\n");
    let mut stalls = String::from("start_ns,end_ns,core,source\n");
    let mut backlog_until = 0u64;
    for i in 0..200_000u64 {
        let send = 1_000_000_000 + i * 100_000;
        let own = 20_000 + (i * 7919 % 40_000);
        if i % 10_000 == 5_000 {
            // The stall as a probe records it: from its last wake-up, a little early.
            stalls += &format!("{},{},0,host\n", send - 150_000, send + 3_000_000);
            backlog_until = send + 3_000_000;
        }
        let latency = if send < backlog_until {
            backlog_until - send + own
        } else {
            own
        };
        rows += &format!("{send},{latency}\n");
    }
    let samples = dir.join("samples.csv");
    std::fs::write(&samples, rows).unwrap();
    let path = dir.join("stalls.csv");
    std::fs::write(&path, stalls).unwrap();
    (samples, path)
}

#[test]
fn stalls_give_the_tail_without_them() {
    let dir = tempfile::tempdir().unwrap();
    let (samples, stalls) = stalled_run(dir.path());
    let v = json(&stalls_of(
        &samples,
        stalls.to_str().unwrap(),
        &["--percentiles", "50,99,99.9"],
    ));
    let every = &v["percentiles"][2];
    let own = &v["without_stalls"];
    // 30 of every 10,000 requests were held (3 ms at one every 100 µs): p99.9 is theirs.
    assert!(every["value"].as_f64().unwrap() > 100_000.0, "{every}");
    let share = own["touched_share"].as_f64().unwrap();
    assert!((0.003..0.0035).contains(&share), "{own}");
    assert_eq!(
        own["n"].as_u64().unwrap(),
        (200_000.0 * (1.0 - share)).round() as u64
    );
    let p999 = &own["percentiles"][2];
    assert_eq!(p999["p"].as_f64().unwrap(), 0.999);
    let value = p999["value"].as_f64().unwrap();
    assert!((59_000.0..60_000.0).contains(&value), "{p999}");
    let ci = &p999["ci_under_dependence"];
    assert!(
        ci["low"].as_f64().unwrap() <= value && ci["high"].as_f64().unwrap() < 60_000.0,
        "{p999}"
    );
    assert!(
        p999["ci_low"].as_f64().is_some() && p999["ci_high"].as_f64().is_some(),
        "{p999}"
    );
    // Without --stalls the JSON is as before.
    let plain = json(&vernier(&[
        "analyze",
        samples.to_str().unwrap(),
        "--column",
        "latency_ns",
    ]));
    assert!(plain.get("without_stalls").is_none(), "{plain}");
}

/// As a run records its client's requests (`vernier run --record`: `departure_ns`,
/// `queueing_ns`), its late sends mark the requests a client's stall held, which no probe
/// saw: 20 requests every 2 s left 0.1-2 ms late, their core taken 2 ms; the probe's file
/// has only the server's stalls.
#[test]
fn a_records_late_sends_mark_the_clients_own_stalls() {
    let dir = tempfile::tempdir().unwrap();
    let (samples, stalls) = stalled_run(dir.path());
    let text = std::fs::read_to_string(&samples).unwrap();
    let mut rows = String::from("send_ns,late_ns,latency_ns\n");
    for (i, line) in text.lines().skip(1).enumerate() {
        let (send, latency) = line.split_once(',').unwrap();
        let (send, latency): (u64, u64) = (send.parse().unwrap(), latency.parse().unwrap());
        // Scheduled within the client's 2 ms stall: sent when it ends.
        let late = match i % 20_000 {
            k @ 12_000..12_020 => (12_020 - k as u64) * 100_000,
            _ => 0,
        };
        rows += &format!("{},{late},{latency}\n", send + late);
    }
    let recorded = dir.path().join("recorded.csv");
    std::fs::write(&recorded, rows).unwrap();
    let stalls = stalls.to_str().unwrap();
    let share = |more: &[&str]| {
        let v = json(&stalls_of(&recorded, stalls, more));
        v["without_stalls"]["touched_share"].as_f64().unwrap()
    };
    let probes_only = share(&[]);
    let with_late = share(&["--late-column", "late_ns"]);
    // The server's stalls touch about 0.32%; the client's 20 of every 20,000 (all but
    // the one sent on time are over 100 µs late, and it left with them) 0.1% more.
    assert!((0.003..0.0035).contains(&probes_only), "{probes_only}");
    assert!(
        (probes_only + 0.0009..probes_only + 0.0012).contains(&with_late),
        "{probes_only} then {with_late}"
    );
    // A lateness that is no time is refused, naming the column and the row.
    let bad = dir.path().join("bad.csv");
    std::fs::write(&bad, "send_ns,late_ns,latency_ns\n1500000000,-3,20000\n").unwrap();
    expect_bad_input(
        &stalls_of(&bad, stalls, &["--late-column", "late_ns"]),
        &["row 1 of --late-column", "-3"],
    );
}

/// `vernier analyze` of the latencies in `samples` with the stalls file `stalls`, and
/// `more` arguments.
fn stalls_of(samples: &Path, stalls: &str, more: &[&str]) -> Output {
    let mut args = vec![
        "analyze",
        samples.to_str().unwrap(),
        "--column",
        "latency_ns",
        "--send-column",
        "send_ns",
        "--stalls",
        stalls,
    ];
    args.extend_from_slice(more);
    vernier(&args)
}

#[test]
fn bad_stalls_files_are_refused_with_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let (samples, _) = stalled_run(dir.path());
    let run = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        stalls_of(&samples, path.to_str().unwrap(), &[])
    };
    let second = "start_ns,end_ns\n1500000000,1503000000\n";
    expect_bad_input(
        &run("unsorted.csv", &format!("{second}1400000000,1401000000\n")),
        &["unsorted.csv:3", "not sorted"],
    );
    expect_bad_input(
        &run("overlap.csv", &format!("{second}1502000000,1504000000\n")),
        &["overlap.csv:3", "overlaps"],
    );
    expect_bad_input(
        &run("negative.csv", "start_ns,end_ns\n-5,10\n"),
        &["negative.csv:2", "negative"],
    );
    expect_bad_input(
        &run("clock.csv", "start_ns,end_ns\n5,10\n20,30\n"),
        &["clock.csv", "send column's clock"],
    );
    expect_bad_input(
        &run("header.csv", "from,to\n5,10\n"),
        &["header.csv:1", "start_ns and end_ns"],
    );
    let missing = stalls_of(&samples, "/nonexistent/stalls.csv", &[]);
    expect_bad_input(&missing, &["/nonexistent/stalls.csv", "cannot open"]);
}

/// A thinned record's rows (`--busy-column`, a record's `busy_ns`): a request whose busy
/// stretch began before a stall that ended before its own send is touched, as the point
/// that kept it marked it; read as every request (no busy column), the stall's queue
/// drained at that send and the request is untouched.
#[test]
fn a_thinned_sample_is_marked_by_each_request_s_busy_stretch() {
    let dir = tempfile::tempdir().unwrap();
    let samples = dir.path().join("kept.csv");
    let stalls = dir.path().join("stalls.csv");
    let (mut rows, mut stall_rows) = (
        String::from("send_ns,late_ns,latency_ns,busy_ns\n"),
        String::from("start_ns,end_ns\n"),
    );
    for i in 0..3000_u64 {
        let send = 1_000_000_000 + i * 100_000;
        // Three requests kept from stretches begun 50 µs before them, a stall in each.
        let stretched = i % 1000 == 500;
        let busy = if stretched { 50_000 } else { 0 };
        rows.push_str(&format!("{send},0,{},{busy}\n", 20_000 + i % 7 * 1_000));
        if stretched {
            stall_rows.push_str(&format!("{},{}\n", send - 40_000, send - 30_000));
        }
    }
    std::fs::write(&samples, rows).unwrap();
    std::fs::write(&stalls, stall_rows).unwrap();
    let stalls = stalls.to_str().unwrap();
    let touched = |more: &[&str]| {
        let v = json(&stalls_of(&samples, stalls, more));
        let own = &v["without_stalls"];
        (
            own["n"].as_u64().unwrap(),
            own["touched_share"].as_f64().unwrap(),
        )
    };
    assert_eq!(touched(&["--late-column", "late_ns"]), (3000, 0.0));
    let (n, share) = touched(&["--late-column", "late_ns", "--busy-column", "busy_ns"]);
    assert_eq!(n, 2997);
    assert!((share - 0.001).abs() < 1e-12, "{share}");
    // The busy column is one of the same rows, of ns of zero or more.
    let bad = dir.path().join("bad.csv");
    std::fs::write(
        &bad,
        "send_ns,late_ns,latency_ns,busy_ns\n1050000000,0,20000,-1\n",
    )
    .unwrap();
    expect_bad_input(
        &stalls_of(
            &bad,
            stalls,
            &["--late-column", "late_ns", "--busy-column", "busy_ns"],
        ),
        &["row 1 of --busy-column", "-1"],
    );
}
