//! The tail without stalls in a run's CCDF: a point's requests no host stall touched,
//! weighted against the selection as the point's result weighed them, drawn beside every
//! request's curve, so that "where has my p99 gone" is a gap between two curves.

use vernier_agent::STALL_THRESHOLD_NS;
use vernier_stats::{Kept, Stall, untouched_requests};

use super::ccdf::{CcdfPoint, DEEPEST, levels};
use crate::error::Error;
use crate::record::{self, RecordedStall};
use crate::samples::stall_of;

/// The untouched requests of `point`'s `round` (µs) with their weights, each agent's
/// marked by the stalls on its own clock that arrived during the point (as the point
/// marked them: by each kept request's busy stretch when the point was `thinned`), and
/// the share touched; `None` when the round holds no request, or was thinned in a record
/// that does not say the busy stretches.
pub(super) fn untouched(
    samples: &polars::prelude::DataFrame,
    stalls: &[RecordedStall],
    point: usize,
    round: u32,
    thinned: bool,
) -> Result<Option<(Vec<f64>, Vec<f64>, f64)>, Error> {
    let recorded = record::point_requests(samples, point, round)?;
    if thinned && !recorded.stretches {
        return Ok(None);
    }
    let requests = &recorded.requests;
    let mut agents: Vec<u32> = requests.iter().map(|(a, _)| *a).collect();
    agents.sort_unstable();
    agents.dedup();
    let (mut values, mut weights) = (Vec::new(), Vec::new());
    let (mut touched, mut total) = (0.0, 0);
    for agent in agents {
        let mut kept: Vec<Kept> = (requests.iter())
            .filter(|(a, _)| *a == agent)
            .map(|(_, s)| *s)
            .collect();
        let seen: Vec<Stall> = (stalls.iter())
            .filter(|s| s.agent == agent && s.point as usize == point)
            .map(|s| stall_of(&s.interval))
            .collect();
        let stretches = recorded.stretches_of(agent, thinned);
        let part = untouched_requests(&mut kept, seen, STALL_THRESHOLD_NS, stretches)
            .map_err(|e| Error::Failed(format!("the tail without stalls of point {point}: {e}")))?;
        touched += part.touched_share * part.requests as f64;
        total += part.requests;
        values.extend(part.latency_us);
        weights.extend(part.weights);
    }
    Ok((total > 0).then(|| (values, weights, touched / total as f64)))
}

/// The CCDF of weighted samples (`values_us`, one positive weight each) at log-spaced
/// levels from 1 down to [`DEEPEST`], or to the least weight's share when the samples say
/// nothing deeper. Each point is a sample, its level the share of the weight at or above
/// it: the level q is read at the largest sample with at least q of the weight at or above.
pub(super) fn weighted_ccdf_points(values_us: &[f64], weights: &[f64]) -> Vec<CcdfPoint> {
    let mut order: Vec<usize> = (0..values_us.len().min(weights.len())).collect();
    order.sort_unstable_by(|&a, &b| values_us[a].total_cmp(&values_us[b]));
    // above[i]: the weight at or above the i-th smallest.
    let mut above = vec![0.0; order.len()];
    let mut sum = 0.0;
    for (k, &i) in order.iter().enumerate().rev() {
        sum += weights[i];
        above[k] = sum;
    }
    if order.is_empty() || !(sum > 0.0) {
        return Vec::new();
    }
    let least = order
        .iter()
        .map(|&i| weights[i])
        .fold(f64::INFINITY, f64::min)
        / sum;
    let floor = DEEPEST.max(least);
    let mut picked: Vec<usize> = levels(floor)
        .map(|q| {
            above
                .partition_point(|&a| a >= q * sum * (1.0 - 1e-12))
                .max(1)
                - 1
        })
        .collect();
    picked.push(order.len() - 1);
    picked.dedup();
    picked
        .into_iter()
        .map(|k| CcdfPoint {
            latency_us: values_us[order[k]],
            ccdf: above[k] / sum,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_weights_give_every_requests_levels() {
        // 1..=1,000 µs equally weighted: the level 0.1 is at 901 µs (100 at or above).
        let values: Vec<f64> = (1..=1_000).map(f64::from).collect();
        let points = weighted_ccdf_points(&values, &[1.0; 1_000]);
        assert_eq!(
            points[0],
            CcdfPoint {
                latency_us: 1.0,
                ccdf: 1.0
            }
        );
        let at = |q: f64| {
            points
                .iter()
                .find(|p| (p.ccdf - q).abs() < 1e-9)
                .unwrap()
                .latency_us
        };
        assert_eq!(at(0.1), 901.0);
        assert_eq!(at(0.01), 991.0);
        // It ends at the largest sample, at its own share.
        assert_eq!(
            *points.last().unwrap(),
            CcdfPoint {
                latency_us: 1_000.0,
                ccdf: 0.001
            }
        );
        assert!(
            points
                .windows(2)
                .all(|w| w[0].ccdf > w[1].ccdf && w[0].latency_us < w[1].latency_us)
        );
    }

    #[test]
    fn a_heavier_sample_holds_more_of_the_curve() {
        // 100 samples of 1 µs and one of 10 µs weighing as much as all of them: half the
        // weight is at 10 µs.
        let mut values = vec![1.0; 100];
        values.push(10.0);
        let mut weights = vec![1.0; 100];
        weights.push(100.0);
        let points = weighted_ccdf_points(&values, &weights);
        let last = points.last().unwrap();
        assert_eq!(last.latency_us, 10.0);
        assert!((last.ccdf - 0.5).abs() < 1e-12, "{points:?}");
        assert!(weighted_ccdf_points(&[], &[]).is_empty());
    }
}
