#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

/// A block of `m` evenly spread values from `from` (sorted).
fn block(from: f64, m: usize) -> Vec<f64> {
    (0..m).map(|i| from + i as f64).collect()
}

fn pairs<'a>(blocks: &'a [(Vec<f64>, Vec<f64>)]) -> Vec<Pair<'a>> {
    blocks.iter().map(|(a, b)| Pair { a, b }).collect()
}

#[test]
fn a_constant_shift_is_found_exactly() {
    // Every pair's B is its A moved by 5, whatever the drift between pairs.
    let blocks: Vec<_> = [0.0, 100.0, 40.0]
        .iter()
        .map(|&drift| (block(drift, 50), block(drift + 5.0, 50)))
        .collect();
    let ci = difference_ci(&pairs(&blocks), 0.5, 0.95).unwrap();
    assert!((ci.difference - 5.0).abs() < 1e-12, "{ci:?}");
    assert!(
        ci.std_error.abs() < 1e-12 && ci.holds(5.0) && !ci.holds(4.9),
        "{ci:?}"
    );
}

#[test]
fn a_factor_is_found_exactly_as_a_ratio() {
    let blocks: Vec<_> = [1.0, 30.0, 7.0, 12.0]
        .iter()
        .map(|&from| {
            let a = block(from, 40);
            let b = a.iter().map(|x| 2.0 * x).collect();
            (a, b)
        })
        .collect();
    let ci = difference_ci(&pairs(&blocks), 0.5, 0.95).unwrap();
    assert!((ci.ratio - 2.0).abs() < 1e-12, "{ci:?}");
    assert!((ci.ratio_low - 2.0).abs() < 1e-9 && (ci.ratio_high - 2.0).abs() < 1e-9);
}

#[test]
fn the_interval_is_centred_on_the_pooled_estimate_with_the_pairs_spread() {
    // Three pairs whose differences are 2, 5 and 11: the centre is the pooled
    // percentiles' difference, the half-width t(2) · sd / √3 around it.
    let blocks: Vec<_> = [2.0, 5.0, 11.0]
        .iter()
        .enumerate()
        .map(|(i, &d)| (block(10.0 * i as f64, 20), block(10.0 * i as f64 + d, 20)))
        .collect();
    let ci = difference_ci(&pairs(&blocks), 0.5, 0.95).unwrap();
    let pooled = |side: usize| {
        let mut all: Vec<f64> = blocks
            .iter()
            .flat_map(|(a, b)| if side == 0 { a.clone() } else { b.clone() })
            .collect();
        all.sort_by(f64::total_cmp);
        percentile(&all, 0.5).unwrap()
    };
    let centre = pooled(1) - pooled(0);
    let sd = ([2.0f64, 5.0, 11.0]
        .iter()
        .map(|d| (d - centre).powi(2))
        .sum::<f64>()
        / 2.0)
        .sqrt();
    // Student's t, 2 degrees of freedom, 0.975 (scipy.stats.t.ppf(0.975, 2)).
    let half = 4.302_652_729_911_275 * sd / 3f64.sqrt();
    assert!((ci.difference - centre).abs() < 1e-12, "{ci:?}");
    assert!(
        (ci.high - (centre + half)).abs() < 1e-9,
        "{ci:?} vs half {half}"
    );
    assert!((ci.low - (centre - half)).abs() < 1e-9, "{ci:?}");
}

#[test]
fn too_few_pairs_or_too_short_blocks_or_bad_values_are_refused() {
    let two: Vec<_> = (0..2).map(|_| (block(0.0, 50), block(1.0, 50))).collect();
    assert!(matches!(
        difference_ci(&pairs(&two), 0.5, 0.95),
        Err(StatsError::TooFew {
            needed: MIN_PAIRS,
            got: 2,
            ..
        })
    ));
    // p99 needs 10 samples beyond it in every block: 1,000 samples; these have 500.
    let short: Vec<_> = (0..4).map(|_| (block(0.0, 500), block(1.0, 500))).collect();
    assert!(matches!(
        difference_ci(&pairs(&short), 0.99, 0.95),
        Err(StatsError::TooFew {
            needed: 1000,
            got: 500,
            ..
        })
    ));
    let mut nan: Vec<_> = (0..3).map(|_| (block(0.0, 50), block(1.0, 50))).collect();
    nan[1].1[3] = f64::NAN;
    assert!(matches!(
        difference_ci(&pairs(&nan), 0.5, 0.95),
        Err(StatsError::NonFinite { .. })
    ));
    assert!(difference_ci(&pairs(&two[..]), 1.5, 0.95).is_err());
}

#[test]
fn the_rule_stops_on_the_second_narrow_look_in_a_row() {
    let blocks: Vec<_> = [2.0, 5.0, 11.0]
        .iter()
        .map(|&d| (block(0.0, 20), block(d, 20)))
        .collect();
    let ci = difference_ci(&pairs(&blocks), 0.5, 0.95).unwrap();
    let mut rule = StoppingRule::default();
    let (wide, narrow) = (ci.width() / 2.0, ci.width() * 2.0);
    assert!(!rule.stops(&ci, narrow), "one narrow look is not enough");
    assert!(!rule.stops(&ci, wide), "a wide look starts the count again");
    assert!(!rule.stops(&ci, narrow));
    assert!(rule.stops(&ci, narrow), "two in a row stop");
}

#[test]
fn weighted_blocks_are_sectioned_on_their_weighted_percentiles() {
    let ones = vec![1.0; 50];
    // B's upper half weighs three times its lower: its median moves to the 34th value.
    let heavy: Vec<f64> = (0..50).map(|i| if i < 25 { 1.0 } else { 3.0 }).collect();
    let blocks: Vec<_> = (0..3).map(|_| (block(0.0, 50), block(5.0, 50))).collect();
    let weighted = |b_weights: &[f64]| -> Result<DifferenceCi, StatsError> {
        let pairs: Vec<WeightedPair<'_>> = blocks
            .iter()
            .map(|(a, b)| WeightedPair {
                a: WeightedBlock {
                    values: a,
                    weights: &ones,
                },
                b: WeightedBlock {
                    values: b,
                    weights: b_weights,
                },
            })
            .collect();
        weighted_difference_ci(&pairs, 0.5, 0.95)
    };
    // With equal weights, the shift is found exactly, as unweighted.
    let ci = weighted(&ones).unwrap();
    assert!((ci.difference - 5.0).abs() < 1e-12, "{ci:?}");
    assert!(ci.std_error.abs() < 1e-12, "{ci:?}");
    // A's median is its 25th value (24), B's its 34th (5 + 33).
    let ci = weighted(&heavy).unwrap();
    assert!(
        (ci.a - 24.0).abs() < 1e-12 && (ci.b - 38.0).abs() < 1e-12,
        "{ci:?}"
    );
    assert!((ci.difference - 14.0).abs() < 1e-12, "{ci:?}");
    // A weight missing, or a block too short, is refused.
    assert!(matches!(
        weighted(&ones[..49]),
        Err(StatsError::InvalidParameter {
            name: "weights",
            ..
        })
    ));
    let short = vec![(block(0.0, 10), block(5.0, 10)); 3];
    let pairs: Vec<WeightedPair<'_>> = short
        .iter()
        .map(|(a, b)| WeightedPair {
            a: WeightedBlock {
                values: a,
                weights: &ones[..10],
            },
            b: WeightedBlock {
                values: b,
                weights: &ones[..10],
            },
        })
        .collect();
    assert!(matches!(
        weighted_difference_ci(&pairs, 0.99, 0.95),
        Err(StatsError::TooFew { .. })
    ));
}
