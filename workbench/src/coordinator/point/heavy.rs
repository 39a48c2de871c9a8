//! Whether the latencies' own tail is heavy: the order-statistic width (which dependence
//! does not change) against an exponential tail's, at the percentile and inside the tail.

use vernier_stats::{Percentile, tail_heaviness};

use super::super::checks::{self, Interval};
use super::super::policy::{HEAVY_TAIL_ALSO_AT, is_heavy};
use super::super::reason::{HeavyTooFew, TooFewForCi};

/// The tail's own shape at `q`: the order-statistic width (which dependence does not
/// change) against an exponential tail's from as many samples.
pub(super) fn heaviness_at(sorted: &[f64], q: Percentile, n: usize, conf: f64) -> Option<f64> {
    checks::interval(sorted, q, conf)
        .and_then(|(value, ci)| ci.map(|(low, high)| Interval { value, low, high }))
        .and_then(|iid| tail_heaviness(iid.value, iid.width(), q.fraction(), n, conf).ok())
}

/// `heavy_tail` when the samples are too few for a dependence-valid interval and the
/// latencies' own tail is heavy, at `p` and inside the tail too (a service whose own tail
/// is heavy is heavy well inside it: a lognormal with σ = 2 is 2.6× an exponential at p90;
/// stalls of the host lift only the 1-2% of requests they catch, so they fatten the tail
/// beyond p98 and leave p90 alone). The order-statistic interval's width, a lower bound on
/// the dependence-valid one, is the figure given.
pub(super) fn heavy_too_few(sorted: &[f64], too_few: &TooFewForCi) -> Option<HeavyTooFew> {
    let (p, n, conf) = (too_few.p, too_few.samples, too_few.confidence.get());
    let inside = p.min(HEAVY_TAIL_ALSO_AT);
    let h = heaviness_at(sorted, p, n, conf).filter(|&h| is_heavy(h))?;
    let b = heaviness_at(sorted, inside, n, conf).filter(|&b| is_heavy(b))?;
    let (_, iid) = checks::interval(sorted, p, conf)?;
    let (low, high) = iid?;
    Some(HeavyTooFew {
        too_few: too_few.clone(),
        ci_width_us: (high - low).into(),
        heaviness: h.into(),
        heaviness_inside: b.into(),
        inside,
    })
}
