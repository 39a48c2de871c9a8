//! The whole analysis of 1,000,000 latency samples (all percentiles and CIs, the Spearman
//! lag search, ADF with AIC over statsmodels' default maxlag of 120) plus Anderson-Darling
//! on 10,000 inter-arrivals; and each part alone, to show where the time goes.
//!
//! `cargo bench -p vernier-stats --bench analysis`

#![allow(clippy::unwrap_used)]

use criterion::{Criterion, criterion_group, criterion_main};
use rand::SeedableRng;
use rand::rngs::StdRng;
use rand_distr::{Distribution, Exp};
use std::hint::black_box;
use vernier_stats::*;

/// M/M/1 sojourn times at ρ = 0.8 by Lindley's recursion: autocorrelated, heavy-ish
/// tailed, the shape a real latency series has.
fn latency_series(n: usize, seed: u64) -> Vec<f64> {
    let mut rng = StdRng::seed_from_u64(seed);
    let arrivals = Exp::new(0.8).unwrap();
    let service = Exp::new(1.0).unwrap();
    let mut wait = 0.0f64;
    let mut prev_service = 0.0;
    (0..n)
        .map(|_| {
            let s = service.sample(&mut rng);
            wait = (wait + prev_service - arrivals.sample(&mut rng)).max(0.0);
            prev_service = s;
            20.0 + 10.0 * (wait + s)
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let samples = latency_series(1_000_000, 1);
    let mut rng = StdRng::seed_from_u64(2);
    let gaps: Vec<f64> = Exp::new(1.0 / 50.0)
        .unwrap()
        .sample_iter(&mut rng)
        .take(10_000)
        .collect();
    let options = AnalysisOptions::default();

    let mut g = c.benchmark_group("1M samples");
    g.sample_size(10);
    g.bench_function("analyze (all of it)", |b| {
        b.iter(|| analyze(black_box(&samples), Some(black_box(&gaps)), &options).unwrap())
    });
    g.bench_function("adf c/AIC, maxlag 120", |b| {
        b.iter(|| adf(black_box(&samples), &AdfOptions::default()).unwrap())
    });
    g.bench_function("spearman lag 1", |b| {
        b.iter(|| spearman_lag(black_box(&samples), 1).unwrap())
    });
    g.bench_function("sort + 6 percentiles with CIs", |b| {
        b.iter(|| {
            let sorted = sort_samples(black_box(&samples)).unwrap();
            options
                .percentiles
                .iter()
                .map(|&p| percentile_ci(&sorted, p, 0.95).unwrap().1)
                .sum::<f64>()
        })
    });
    g.finish();
    c.bench_function("anderson-darling 10k", |b| {
        b.iter(|| anderson_exponential(black_box(&gaps)).unwrap())
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
