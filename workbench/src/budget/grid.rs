//! Distributions kept at a fixed grid of quantiles, and the median of a sum of two of
//! them: how the budget adds a part (the server's time, a queue's wait) to another (the
//! path's latencies) request by request rather than median to median.

/// How many quantiles a distribution is kept at for adding two of them: (i + 0.5) / GRID
/// for i below it. A million sums, a few ms.
pub const GRID: usize = 1_000;

/// The [`GRID`]'s quantile levels, ascending.
pub(super) fn grid() -> impl Iterator<Item = f64> {
    (0..GRID).map(|i| (i as f64 + 0.5) / GRID as f64)
}

/// A histogram of ns at the [`GRID`]'s quantiles, µs (empty for an empty one).
pub fn histogram_grid(h: &hdrhistogram::Histogram<u64>) -> Vec<f64> {
    if h.is_empty() {
        return Vec::new();
    }
    grid()
        // The middle of each value's bucket, not its top (16 ns above at 20 µs).
        .map(|q| h.median_equivalent(h.value_at_quantile(q)) as f64 / 1e3)
        .collect()
}

/// Ascending `sorted` at the [`GRID`]'s quantiles (empty for none).
pub(super) fn on_grid(sorted: &[f64]) -> Vec<f64> {
    let n = sorted.len();
    if n == 0 {
        return Vec::new();
    }
    grid()
        .map(|q| sorted[((q * n as f64) as usize).min(n - 1)])
        .collect()
}

/// The median of A + B for independent A and B, each given by its quantiles at evenly
/// spaced levels (every pair of them is equally likely).
pub(super) fn median_of_sum(a: &[f64], b: &[f64]) -> f64 {
    let mut sums: Vec<f64> = a
        .iter()
        .flat_map(|x| b.iter().map(move |y| x + y))
        .collect();
    if sums.is_empty() {
        return f64::NAN;
    }
    let middle = sums.len() / 2;
    *sums.select_nth_unstable_by(middle, f64::total_cmp).1
}
