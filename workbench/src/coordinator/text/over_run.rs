//! How a point's answer sits over its run: the earlier look that answered it, how
//! its percentile moved, and what its stalls say of the host.

use crate::coordinator::fitness::Fitness;

/// What a point that ended on a look without a CI says of the last look that had one
/// ([`crate::coordinator::EarlierLook`]): its CI answered, or the latency moved out of it.
pub fn earned(e: &crate::coordinator::EarlierLook) -> String {
    let ci = format!(
        "look {} at {:.1} s, on {} samples: {:.1} [{:.1}, {:.1}] µs",
        e.look, e.at_s, e.samples, e.value_us, e.low_us, e.high_us
    );
    let end = format!(
        "the look that ended the point, on {} samples, had no valid CI (its dependence outgrew the samples) and an estimate of {:.1} µs",
        e.ending_samples, e.ending_value_us
    );
    if e.answers {
        format!("answered by the CI of {ci}; {end}, within it")
    } else {
        format!(
            "no answer from the CI of {ci}; {end}, outside it: the latency moved, and that CI is not the run's"
        )
    }
}

/// `the p99 drifts: 38.0 µs (at 12 s) to 46.7 µs (at 41 s) over 10.0 s windows; its CI no
/// longer shrinks as 1/√n (variance inflation ×4.1 over eightfold batches)`, or the
/// windows' range alone when it does not drift; `None` with a single window.
pub fn drift(d: &crate::coordinator::DriftSeen) -> Option<String> {
    let range = format!(
        "{:.1} µs (at {:.0} s) to {:.1} µs (at {:.0} s) over {:.1} s windows",
        d.low_us, d.low_at_s, d.high_us, d.high_at_s, d.window_s
    );
    if d.drifting {
        Some(format!(
            "the {} drifts: {range}; its CI no longer shrinks as 1/√n (variance inflation ×{:.1} over eightfold batches), so no time would narrow it as predicted",
            d.p,
            d.growth.unwrap_or(f64::NAN)
        ))
    } else if d.low_at_s != d.high_at_s {
        Some(format!("the {} over the run: {range}", d.p))
    } else {
        None
    }
}

/// [`host_fit`] in two short lines, for the TUI's help page: `None` when fit.
pub fn host_fit_short(touched_share: f64) -> Option<[String; 2]> {
    let second = match Fitness::of(touched_share) {
        Fitness::Fit => return None,
        Fitness::FitWithoutStalls => {
            "fit for the tail without stalls only (`vernier calibrate`: which cores)"
        }
        Fitness::Unfit => "unfit for tails at this scale (`vernier calibrate`: which cores)",
    };
    let first = format!(
        "this host: stalls touched {:.1}% of the last point's requests:",
        touched_share * 100.0
    );
    Some([first, second.to_string()])
}

/// What `vernier calibrate` would call this host, judged by the share of a point's
/// requests its stalls touched: `None` when fit (at most the 1% a p99 holds), else a
/// sentence that points to `vernier calibrate`.
pub fn host_fit(touched_share: f64) -> Option<String> {
    use crate::coordinator::policy::{FIT_TOUCHED_SHARE, MAX_TOUCHED_SHARE};
    let fitness = Fitness::of(touched_share);
    if fitness == Fitness::Fit {
        return None;
    }
    let touched = touched_share * 100.0;
    let p99 = FIT_TOUCHED_SHARE * 100.0;
    Some(if fitness == Fitness::FitWithoutStalls {
        format!(
            "host: stalls touched {touched:.1}% of this point's requests, more than the {p99:.0}% a p99 holds: fit for the tail without stalls only (`vernier calibrate` says which cores are quieter)"
        )
    } else {
        format!(
            "host: stalls touched {touched:.1}% of this point's requests, beyond the {:.0}% the tail without stalls is judged at: unfit for tails at this scale (`vernier calibrate` says which cores are quieter)",
            MAX_TOUCHED_SHARE * 100.0
        )
    })
}
