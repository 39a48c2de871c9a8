//! Small numeric kernels for the hot loops of the statistics.

/// Σ a[i]·b[i] over the common length, with eight independent accumulators so the loop
/// pipelines and vectorises under strict IEEE semantics (no reassociation is needed).
pub(crate) fn dot(a: &[f64], b: &[f64]) -> f64 {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut acc = [0.0f64; 8];
    let chunks = n / 8;
    for c in 0..chunks {
        let (xa, xb) = (&a[c * 8..c * 8 + 8], &b[c * 8..c * 8 + 8]);
        for l in 0..8 {
            acc[l] += xa[l] * xb[l];
        }
    }
    let mut tail = 0.0;
    for i in chunks * 8..n {
        tail += a[i] * b[i];
    }
    ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7])) + tail
}

/// Σ a[i], with the same accumulator scheme as [`dot`].
pub(crate) fn sum(a: &[f64]) -> f64 {
    let mut acc = [0.0f64; 8];
    let chunks = a.len() / 8;
    for c in 0..chunks {
        let x = &a[c * 8..c * 8 + 8];
        for l in 0..8 {
            acc[l] += x[l];
        }
    }
    let tail: f64 = a[chunks * 8..].iter().sum();
    ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7])) + tail
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dot_and_sum_agree_with_naive_loops() {
        for n in [0, 1, 7, 8, 9, 63, 1000] {
            let a: Vec<f64> = (0..n).map(|i| (i as f64 * 0.37).sin()).collect();
            let b: Vec<f64> = (0..n).map(|i| (i as f64 * 0.11).cos()).collect();
            let naive: f64 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
            assert!((dot(&a, &b) - naive).abs() < 1e-10, "n={n}");
            assert!((sum(&a) - a.iter().sum::<f64>()).abs() < 1e-10, "n={n}");
        }
    }
}
