//! `vernier compare`: two variants of one target measured side by side (a duet, the
//! default) and in interleaved blocks, the answer as JSON and in a record that `vernier
//! report` draws, a side whose server dies mid-run, and the one-line errors of what cannot
//! be compared. The server is started here on a free port and killed by PID;
//! every comparison is bounded by its pairs and blocks.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde_json::Value;
use support::{ServeProcess, machine, vernier};

/// `vernier compare` of the synthetic server at `url` asked for 20 µs of service (A) and
/// 30 µs (B), with `more` arguments.
fn variants(url: &str, more: &[&str]) -> std::process::Output {
    let mut args = vec![
        "compare",
        url,
        "--service",
        "fixed:20us",
        "--set-b",
        "service=fixed:30us",
    ];
    args.extend_from_slice(more);
    vernier(&args)
}

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
    let out = variants(
        &url,
        &[
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
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    let c: Value = serde_json::from_slice(&out.stdout).expect(&err);
    let verdict = c["verdict"].as_str().unwrap();
    assert_eq!(
        out.status.code(),
        Some(match verdict {
            "n/a" => 3,
            "wide" => 4,
            _ => 0,
        }),
        "{verdict}: {err}"
    );
    assert_ne!(verdict, "faster", "{}", c["reason"]);
    eprintln!("{verdict}: {}", c["reason"]);
    // A duet (the default): B differs from A only in what it asks, so one client carries
    // both, and the answer says they were side by side on one server.
    assert_eq!(c["design"], "duet", "{err}");
    assert_eq!(c["side_by_side"]["same_server"], true, "{c}");
    assert_eq!(c["side_by_side"]["stream_rate"], 4000.0, "{c}");
    // The tail compared is the server's own (the default `ci.tail`): every window's
    // requests marked by the host probes' stalls and its late sends, the share touched
    // kept beside every request's percentile. A window's A and B blocks start together.
    assert_eq!(c["tail"], "without_stalls", "{err}");
    let blocks = c["blocks"].as_array().unwrap();
    for b in blocks {
        let touched = b["touched_share"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&touched), "{b}");
        assert!(b["value_us"].as_f64().is_some(), "{b}");
    }
    for pair in blocks.chunks(2) {
        assert_eq!(pair[0]["side"], "A", "{c}");
        assert!(pair.len() < 2 || pair[1]["side"] == "B", "{c}");
        assert!(
            pair.len() < 2 || pair[0]["started_s"] == pair[1]["started_s"],
            "{c}"
        );
    }
    // Blocks come in pairs, one of each side, in the order measured; a window set aside
    // (the client behind, or too few untouched requests) names why.
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
        let named = finding["block"].as_u64().unwrap();
        assert!(named + 2 >= blocks.len() as u64, "{c}");
        assert!(blocks[named as usize]["problem"].is_string(), "{c}");
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
    let again = variants(
        &url,
        &[
            "--load",
            "2k",
            "--headless",
            "--record",
            record.to_str().unwrap(),
        ],
    );
    let err = String::from_utf8_lossy(&again.stderr);
    assert_eq!(again.status.code(), Some(2), "{err}");
    assert!(err.contains("already recorded"), "{err}");
}

/// The old design, asked for: interleaved blocks, each its own client, in pairs of A and
/// B in a random order; a block touched by the host's stalls beyond 25% is never one that
/// stands.
#[test]
fn interleaved_blocks_still_compare_when_asked() {
    let _m = machine();
    let served = ServeProcess::start(&[]);
    let url = format!("synthetic://{}", served.addr);
    let out = variants(
        &url,
        &[
            "--load",
            "2k",
            "--percentile",
            "50",
            "--width",
            "5us",
            "--pairs",
            "6",
            "--block",
            "300ms",
            "--design",
            "blocks",
            "--headless",
            "--output",
            "json",
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    let c: Value = serde_json::from_slice(&out.stdout).expect(&err);
    assert_eq!(c["design"], "blocks", "{err}");
    assert!(c["side_by_side"].is_null(), "{c}");
    let blocks = c["blocks"].as_array().unwrap();
    assert!(blocks.len() >= 2, "{c}");
    for b in blocks {
        if b["touched_share"].as_f64().unwrap() > 0.25 {
            assert!(b["problem"].is_string(), "{b}");
        }
    }
    // Each block started on its own: never two at the same moment.
    let starts: Vec<f64> = blocks
        .iter()
        .map(|b| b["started_s"].as_f64().unwrap())
        .collect();
    assert!(starts.windows(2).all(|w| w[1] > w[0]), "{starts:?}");
    // The old name of the design is still understood.
    let old = variants(
        &url,
        &[
            "--load",
            "2k",
            "--pairs",
            "5",
            "--block",
            "200ms",
            "--design",
            "interleaved",
            "--headless",
            "--output",
            "json",
        ],
    );
    let c: Value = {
        let err = String::from_utf8_lossy(&old.stderr);
        serde_json::from_slice(&old.stdout).expect(&err)
    };
    assert_eq!(c["design"], "blocks");
}

/// B's server dies while the duet runs: the comparison ends N/A (exit 3) naming B, and
/// what both sides measured until then is kept in the answer and the record.
#[test]
fn a_side_that_dies_mid_run_is_named_and_what_was_measured_is_kept() {
    let _m = machine();
    let a = ServeProcess::start_protocol("memcached", &["--service", "fixed:20us"]);
    let b = ServeProcess::start_protocol(
        "memcached",
        &["--service", "fixed:20us", "--duration", "2s"],
    );
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("cmp");
    let out = vernier(&[
        "compare",
        &format!("memcached://{}", a.addr),
        &format!("memcached://{}", b.addr),
        "--load",
        "1k",
        "--block",
        "400ms",
        "--pairs",
        "30",
        "--width",
        "0.1us",
        "--headless",
        "--output",
        "json",
        "--record",
        record.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    let c: Value = serde_json::from_slice(&out.stdout).expect(&err);
    assert_eq!(out.status.code(), Some(3), "{c}");
    assert_eq!(c["verdict"], "n/a", "{c}");
    let reason = c["reason"].as_str().unwrap();
    assert!(reason.starts_with("B's window"), "{reason}");
    let blocks = c["blocks"].as_array().unwrap();
    let named = &blocks[c["finding"]["block"].as_u64().unwrap() as usize];
    assert_eq!(named["side"], "B", "{c}");
    // It measured nothing, or too little of its load (it died within the window).
    let problem = named["problem"].as_str().unwrap();
    assert!(
        ["target_failed", "load_not_reached"].contains(&problem),
        "{problem}: {c}"
    );
    // Windows with both sides answering came first, and are kept.
    assert!(
        blocks
            .iter()
            .any(|b| b["side"] == "B" && b["samples"].as_u64().unwrap() > 0),
        "{c}"
    );
    let recorded: Value =
        serde_json::from_str(&std::fs::read_to_string(record.join("comparison.json")).unwrap())
            .unwrap();
    assert_eq!(recorded, c);
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
    // A duet asked for where one client cannot carry both sides.
    refused(
        &with_service(&[
            "--load",
            "2k",
            "--set-b",
            "connections=8",
            "--design",
            "duet",
        ]),
        "differ in connections",
    );
}
