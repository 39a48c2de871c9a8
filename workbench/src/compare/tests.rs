#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use vernier_stats::DifferenceCi;

use super::verdict::judge;
use super::*;

fn options() -> CompareOptions {
    CompareOptions {
        block: Duration::from_secs(1),
        max_pairs: 10,
        seed: 1,
        design: Design::Interleaved,
    }
}

/// A comparison of 8 pairs over 40 s whose CI of B − A is `[low, high]`, asked within
/// `width_us`.
fn comparison(low: f64, high: f64, width_us: f64) -> Comparison {
    let ci = DifferenceCi {
        p: 0.99,
        confidence: 0.95,
        pairs: 8,
        a: 100.0,
        b: 100.0 + (low + high) / 2.0,
        difference: (low + high) / 2.0,
        std_error: (high - low) / 4.0,
        low,
        high,
        ratio: 1.0 + (low + high) / 200.0,
        ratio_low: 1.0 + low / 100.0,
        ratio_high: 1.0 + high / 100.0,
    };
    Comparison {
        a: "127.0.0.1:1".into(),
        b: "127.0.0.1:2".into(),
        rate: 1000.0,
        percentile: 99.0,
        width_us,
        design: Design::Interleaved,
        verdict: CompareVerdict::NotAvailable,
        reason: String::new(),
        ci: Some(ci),
        percentiles: Vec::new(),
        looks: Vec::new(),
        blocks: Vec::new(),
        ccdf_a: Vec::new(),
        ccdf_b: Vec::new(),
        seconds: 40.0,
    }
}

#[test]
fn a_ci_below_zero_is_faster_above_is_slower() {
    let mut c = comparison(-14.0, -6.0, 20.0);
    judge(&mut c, &options(), false);
    assert_eq!(c.verdict, CompareVerdict::Faster);
    assert!(
        c.reason.contains("lower than A's by 10.0 µs [6.0, 14.0]"),
        "{}",
        c.reason
    );
    let mut c = comparison(6.0, 14.0, 20.0);
    judge(&mut c, &options(), false);
    assert_eq!(c.verdict, CompareVerdict::Slower);
    assert!(
        c.reason.contains("higher than A's by 10.0 µs [6.0, 14.0]"),
        "{}",
        c.reason
    );
}

#[test]
fn a_narrow_ci_round_zero_is_no_difference_a_wide_one_is_na_with_the_pairs_it_needs() {
    let mut c = comparison(-3.0, 4.0, 5.0);
    judge(&mut c, &options(), false);
    assert_eq!(c.verdict, CompareVerdict::NoDifference);
    assert!(
        c.reason.contains("no difference larger than 5.0 µs"),
        "{}",
        c.reason
    );
    // 20 µs wide where 5 were asked, on 8 pairs: (20/5)² × 8 = 128 pairs, 120 more at 5 s.
    let mut c = comparison(-10.0, 10.0, 5.0);
    judge(&mut c, &options(), false);
    assert_eq!(c.verdict, CompareVerdict::NotAvailable);
    assert!(
        c.reason.contains("about 128 pairs would do (600 s more"),
        "{}",
        c.reason
    );
}

#[test]
fn too_few_pairs_is_na_saying_so() {
    let mut c = comparison(-1.0, 1.0, 5.0);
    c.ci = None;
    judge(&mut c, &options(), false);
    assert_eq!(c.verdict, CompareVerdict::NotAvailable);
    assert!(c.reason.contains("fewer than 5 pairs"), "{}", c.reason);
}
