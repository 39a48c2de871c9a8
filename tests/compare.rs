//! `vernier compare`: two variants of one target measured in interleaved blocks, the
//! answer as JSON and in a record that `vernier report` draws, and the one-line errors of
//! what cannot be compared. The server is started here on a free port and killed by PID;
//! every comparison is bounded by its pairs and blocks.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde_json::Value;
use support::{ServeProcess, machine, vernier};

/// A synthetic server whose requests ask for 20 µs (A) and 30 µs (B) of service: B is
/// slower by 10 µs at every percentile, and at the median, which a busy host's stalls
/// barely reach, by about that. The answer may be N/A on a host that stalls (then it
/// says why); it is never `faster`, and its estimate of B − A is above zero.
#[test]
fn a_variant_that_asks_10_us_more_is_found_slower_and_its_record_is_reported() {
    let _m = machine();
    let served = ServeProcess::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("cmp");
    let url = format!("synthetic://{}", served.addr);
    let out = vernier(&[
        "compare",
        &url,
        "--service",
        "fixed:20us",
        "--set-b",
        "service=fixed:30us",
        "--load",
        "2k",
        "--percentile",
        "50",
        "--width",
        "5us",
        "--pairs",
        "8",
        "--block",
        "500ms",
        "--headless",
        "--output",
        "json",
        "--record",
        record.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    let c: Value = serde_json::from_slice(&out.stdout).expect(&err);
    let verdict = c["verdict"].as_str().unwrap();
    assert_eq!(
        out.status.code(),
        Some(if verdict == "n/a" { 3 } else { 0 }),
        "{verdict}: {err}"
    );
    assert_ne!(verdict, "faster", "{}", c["reason"]);
    eprintln!("{verdict}: {}", c["reason"]);
    // The tail compared is the server's own (the default `ci.tail`): every block's
    // requests marked by the host probes' stalls and its late sends, the share touched
    // kept beside every request's percentile.
    assert_eq!(c["tail"], "without_stalls", "{err}");
    for b in c["blocks"].as_array().unwrap() {
        let touched = b["touched_share"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&touched), "{b}");
        assert!(b["value_us"].as_f64().is_some(), "{b}");
        if touched > 0.25 {
            assert!(b["problem"].is_string(), "{b}");
        }
    }
    // Blocks come in pairs, one of each side, in the order measured; a block set aside
    // for a stall of the host names why and is measured again.
    let blocks = c["blocks"].as_array().unwrap();
    let mut sides: BTreeMap<u64, Vec<&str>> = BTreeMap::new();
    for (order, b) in blocks.iter().enumerate() {
        assert_eq!(b["order"], order as u64);
        if b["problem"].is_null() {
            sides
                .entry(b["pair"].as_u64().unwrap())
                .or_default()
                .push(b["side"].as_str().unwrap());
        }
    }
    let whole = sides.values().filter(|s| s.len() == 2).count();
    assert!(
        sides
            .values()
            .all(|s| s.len() == 1 || s.len() == 2 && s[0] != s[1]),
        "{sides:?}"
    );
    let last = blocks.last().unwrap();
    if !last["problem"].is_null() {
        // Ended by a block that could not stand for its side: the finding names it, and
        // the verdict's kind is the block's problem's.
        let finding = &c["finding"];
        assert!(
            finding["kind"] == "block" || finding["kind"] == "host_stalls_too_often",
            "{c}"
        );
        assert_eq!(
            finding["block"].as_u64(),
            Some(blocks.len() as u64 - 1),
            "{c}"
        );
        assert!(last["problem"].is_string(), "{c}");
        assert_eq!(verdict, "n/a");
    } else {
        assert!(whole >= 5, "{whole} whole pairs: {c}");
        let looks = c["looks"].as_array().unwrap();
        assert_eq!(
            looks.len(),
            whole - 4,
            "a look after every pair from the 5th"
        );
        let ci = &c["ci"];
        // B asks 10 µs more: its CI never lies wholly below zero, and when it is found
        // slower the estimate says so too. (On a host stalling for milliseconds, 8 pairs
        // may leave the CI across zero with the estimate on either side.)
        assert!(ci["high"].as_f64().unwrap() > 0.0, "{ci}");
        if verdict == "slower" {
            assert!(ci["difference"].as_f64().unwrap() > 0.0, "{ci}");
            assert!(
                ci["b"].as_f64().unwrap() > ci["a"].as_f64().unwrap(),
                "{ci}"
            );
        }
        assert!(!c["ccdf_a"].as_array().unwrap().is_empty());
        assert!(!c["ccdf_b"].as_array().unwrap().is_empty());
    }
    // The record holds what was printed, and `vernier report` draws it.
    let recorded: Value =
        serde_json::from_str(&std::fs::read_to_string(record.join("comparison.json")).unwrap())
            .unwrap();
    assert_eq!(recorded, c);
    let report = vernier(&["report", record.to_str().unwrap()]);
    let table = String::from_utf8_lossy(&report.stdout);
    assert_eq!(report.status.code(), Some(0), "{table}");
    assert!(
        table
            .lines()
            .last()
            .unwrap()
            .starts_with(&format!("verdict: {}", verdict.replace('_', " "))),
        "{table}"
    );
    assert!(table.contains("the tail without stalls"), "{table}");
    // The blocks are drawn when both sides have one (a comparison that ended on its
    // first side's blocks, each set aside for the host, has nothing to set beside them).
    let both = ["A", "B"]
        .iter()
        .all(|side| blocks.iter().any(|b| b["side"] == *side));
    assert_eq!(
        record.join("report").join("blocks.svg").is_file(),
        both,
        "{table}"
    );
    // A second comparison into the same record is refused: nothing recorded is lost.
    let again = vernier(&[
        "compare",
        &url,
        "--service",
        "fixed:20us",
        "--set-b",
        "service=fixed:30us",
        "--load",
        "2k",
        "--headless",
        "--record",
        record.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&again.stderr);
    assert_eq!(again.status.code(), Some(2), "{err}");
    assert!(err.contains("already recorded"), "{err}");
}

/// What cannot be compared is one line on stderr, exit 2, within a second or two.
#[test]
fn what_cannot_be_compared_is_one_line_and_exit_2() {
    let served = ServeProcess::start(&[]);
    let url = format!("synthetic://{}", served.addr);
    let refused = |args: &[&str], says: &str| {
        let started = Instant::now();
        let out = vernier(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}");
        assert!(started.elapsed() < Duration::from_secs(3), "{args:?}");
    };
    refused(
        &["compare", &url, "--load", "2k"],
        "give B, or --set-b FIELD=VALUE",
    );
    // A synthetic target's requests carry the service they ask for: without --service,
    // that is the error.
    refused(&["compare", &url, &url, "--load", "2k"], "--service");
    let with_service = |more: &[&'static str]| {
        let mut args = vec!["compare", &url, &url, "--service", "fixed:20us"];
        args.extend_from_slice(more);
        args
    };
    refused(
        &with_service(&["--load", "2k", "--pairs", "2"]),
        "at least 5 pairs",
    );
    refused(&with_service(&["--load", "1k,2k"]), "one load");
    refused(
        &with_service(&["--load", "2k", "--set-b", "nonsense=1"]),
        "nonsense",
    );
}
