use super::*;
use crate::percentile::{percentile_ci, sort_samples};

/// A reproducible uniform stream (SplitMix64), so the tests need no RNG crate.
fn uniforms(seed: u64, n: usize) -> Vec<f64> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = s;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
        })
        .collect()
}

/// Exponential samples of mean 1 from a fixed seed.
pub(crate) fn exp_series(seed: u64, n: usize) -> Vec<f64> {
    uniforms(seed, n).iter().map(|u| -(1.0 - u).ln()).collect()
}

#[test]
fn on_iid_data_it_is_close_to_the_order_statistic_interval() {
    let mut ratios = Vec::new();
    for seed in 0..40 {
        let x = exp_series(seed, 50_000);
        let sorted = sort_samples(&x).unwrap();
        for p in [0.5, 0.99] {
            let (lo, hi) = percentile_ci(&sorted, p, 0.95).unwrap();
            let d = percentile_ci_dependent(&x, &sorted, p, 0.95)
                .unwrap()
                .unwrap();
            assert!(
                d.low <= lo && d.high >= hi,
                "never narrower: {d:?} vs [{lo}, {hi}]"
            );
            ratios.push(d.width() / (hi - lo));
        }
    }
    ratios.sort_by(f64::total_cmp);
    let median = ratios[ratios.len() / 2];
    assert!(median < 1.2, "median width ratio {median}");
}

#[test]
fn autocorrelation_widens_it() {
    // An AR(1)-like series: each value mostly repeats the last.
    let u = exp_series(7, 100_000);
    let mut x = Vec::with_capacity(u.len());
    let mut level = 1.0;
    for (i, e) in u.iter().enumerate() {
        if i % 200 == 0 {
            level = 1.0 + 3.0 * e;
        }
        x.push(level + 0.1 * e);
    }
    let sorted = sort_samples(&x).unwrap();
    let (lo, hi) = percentile_ci(&sorted, 0.9, 0.95).unwrap();
    let d = percentile_ci_dependent(&x, &sorted, 0.9, 0.95)
        .unwrap()
        .unwrap();
    assert!(d.variance_inflation > 20.0, "{d:?}");
    assert!(d.batch_size >= 200, "{d:?}");
    assert!(d.width() > 3.0 * (hi - lo), "{d:?} vs [{lo}, {hi}]");
}

#[test]
fn says_how_many_samples_when_too_few() {
    let x = exp_series(1, 500);
    let sorted = sort_samples(&x).unwrap();
    let need = percentile_ci_dependent(&x, &sorted, 0.999, 0.95)
        .unwrap()
        .unwrap_err();
    assert_eq!(need.have, 500);
    // Thirty effective samples beyond p99.9 need thirty thousand at the least.
    assert!(need.needed >= 30_000, "{need:?}");
    // A series correlated beyond any batching it allows.
    let slow: Vec<f64> = (0..4_000)
        .map(|i| (i / 1000) as f64 + 0.001 * i as f64)
        .collect();
    let sorted = sort_samples(&slow).unwrap();
    let need = percentile_ci_dependent(&slow, &sorted, 0.5, 0.95)
        .unwrap()
        .unwrap_err();
    assert!(need.needed > 4_000, "{need:?}");
    assert!(need.reason.contains("correlated"), "{need:?}");
    // Still correlated at the largest batches that leave ten (16 of 240 here): the
    // caller can say how long that is in time.
    let m = need.correlated_over.expect("the batch size");
    assert!(
        need.reason.contains(&format!("batches of {m} samples")),
        "{need:?}"
    );
    assert!(
        (4_000 / (2 * m)) < MIN_BATCHES && 4_000 / m >= MIN_BATCHES,
        "{need:?}"
    );
}

#[test]
fn moderate_correlation_left_at_the_fewest_batches_is_adjusted_for() {
    // Levels drifting over blocks of 10,000 samples (AR(1), φ = 0.4, as a host's load
    // drifts over seconds): at 160,000 samples the search ends at 16 batches of 10,000
    // whose lag-1 correlation the test at 16 batches often cannot pass.
    let (mut adjusted, mut refused) = (0, 0);
    for seed in 0..60 {
        let noise = exp_series(seed, 160_000);
        let shocks = exp_series(1_000 + seed, 16);
        let mut level = 0.0;
        let mut x = Vec::with_capacity(noise.len());
        for (i, e) in noise.iter().enumerate() {
            if i % 10_000 == 0 {
                level = 0.4 * level + (shocks[i / 10_000] - 1.0);
            }
            x.push(2.0 + 0.1 * level + e);
        }
        let sorted = sort_samples(&x).unwrap();
        match percentile_ci_dependent(&x, &sorted, 0.99, 0.95).unwrap() {
            Ok(d) => {
                assert!(d.batch_lag1 <= MAX_RESIDUAL_R1, "{d:?}");
                if d.batch_lag1 > LAG1_Z / (d.batches as f64).sqrt() {
                    adjusted += 1;
                    // Sequest's factor at least is applied.
                    let ar1 = (1.0 + d.batch_lag1) / (1.0 - d.batch_lag1);
                    assert!(d.variance_inflation >= ar1.min(1.0), "{d:?}");
                    assert!(d.batches >= MIN_BATCHES, "{d:?}");
                }
            }
            Err(need) => {
                assert!(need.reason.contains("correlated"), "{need:?}");
                refused += 1;
            }
        }
    }
    assert!(
        adjusted > 0,
        "no series took the adjustment ({refused} refused)"
    );
}

#[test]
fn too_few_effective_tail_samples_say_the_batch_size_of_the_dependence() {
    // Levels held for 500 samples at a time: p99.9 beyond them comes in clusters.
    let u = exp_series(11, 40_000);
    let mut x = Vec::with_capacity(u.len());
    let mut level = 1.0;
    for (i, e) in u.iter().enumerate() {
        if i % 500 == 0 {
            level = 1.0 + 3.0 * e;
        }
        x.push(level + 0.1 * e);
    }
    let sorted = sort_samples(&x).unwrap();
    let need = percentile_ci_dependent(&x, &sorted, 0.999, 0.95)
        .unwrap()
        .unwrap_err();
    assert!(need.reason.contains("effective samples"), "{need:?}");
    let m = need
        .correlated_over
        .expect("the batch size the inflation came from");
    assert!(m >= 500, "{need:?}");
}

#[test]
fn the_options_default_to_the_methodologys_interval_and_the_others_differ_as_named() {
    let x = exp_series(21, 1_000_000);
    let sorted = sort_samples(&x).unwrap();
    let plain = percentile_ci_dependent(&x, &sorted, 0.99, 0.95)
        .unwrap()
        .unwrap();
    let same = percentile_ci_dependent_with(&x, &sorted, 0.99, 0.95, &CiOptions::default())
        .unwrap()
        .unwrap();
    assert_eq!(plain, same);
    // ⌊√10⁶⌋ = 1,000 batches of 1,000.
    let grown = CiOptions {
        batching: Batching::Growing { exponent: 0.5 },
        ..CiOptions::default()
    };
    let g = percentile_ci_dependent_with(&x, &sorted, 0.99, 0.95, &grown)
        .unwrap()
        .unwrap();
    assert_eq!((g.batch_size, g.batches), (1_000, 1_000), "{g:?}");
    // ⌊10⁶^⅓⌋ = 99 (a double's cube root of 10⁶ is just under 100): batches of 10,101.
    let third = CiOptions {
        batching: Batching::Growing {
            exponent: 1.0 / 3.0,
        },
        ..CiOptions::default()
    };
    let t = percentile_ci_dependent_with(&x, &sorted, 0.99, 0.95, &third)
        .unwrap()
        .unwrap();
    assert!((99..=100).contains(&t.batches), "{t:?}");
    // Overlapping batches of the same size: on iid samples the same inflation (near 1)
    // within its noise, never narrower than the iid interval.
    let over = CiOptions {
        batch_means: BatchMeans::Overlapping,
        ..CiOptions::default()
    };
    let o = percentile_ci_dependent_with(&x, &sorted, 0.99, 0.95, &over)
        .unwrap()
        .unwrap();
    assert_eq!(o.batch_size, plain.batch_size);
    assert!(o.variance_inflation < 1.3, "{o:?}");
    let (lo, hi) = percentile_ci(&sorted, 0.99, 0.95).unwrap();
    assert!(o.low <= lo && o.high >= hi, "{o:?} vs [{lo}, {hi}]");
    // On a series held at levels for 200 samples, the growing batches see the dependence
    // as the searched ones do.
    let u = exp_series(7, 400_000);
    let mut held = Vec::with_capacity(u.len());
    let mut level = 1.0;
    for (i, e) in u.iter().enumerate() {
        if i % 200 == 0 {
            level = 1.0 + 3.0 * e;
        }
        held.push(level + 0.1 * e);
    }
    let sorted = sort_samples(&held).unwrap();
    for options in [grown, over] {
        let d = percentile_ci_dependent_with(&held, &sorted, 0.9, 0.95, &options)
            .unwrap()
            .unwrap();
        assert!(d.variance_inflation > 20.0, "{options:?} {d:?}");
    }
}

#[test]
fn rejects_bad_input() {
    let x = [1.0, 2.0];
    assert!(percentile_ci_dependent(&x, &x, 1.5, 0.95).is_err());
    assert!(percentile_ci_dependent(&x, &x[..1], 0.5, 0.95).is_err());
    assert!(percentile_ci_dependent(&[1.0, f64::NAN], &x, 0.5, 0.95).is_err());
}
