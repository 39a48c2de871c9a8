//! The sentences of a CI that did not answer: wider than asked (with the tail's shape and
//! the stalls that took part), or narrow but not yet stopped by the stopping rule.

use vernier_agent::StallReport;

use super::super::reason::{Awaited, Narrow, Wide};

/// `the p99 CI is still … wide after … samples (target …)`.
pub(super) fn wide_found(f: &Wide) -> String {
    format!(
        "the {} CI is still {:.1} µs wide after {} samples (target {:.1} µs)",
        f.p, f.ci_width_us, f.samples, f.target_us
    )
}

/// `at 1/√n it needs about … samples, beyond the limits`.
pub(super) fn wide_beyond(f: &Wide) -> String {
    format!(
        "at 1/√n it needs about {} samples, beyond the limits",
        f.samples_needed
    )
}

/// A heavy tail kept the CI wide: `method: vernier` (heavy at the percentile and inside
/// the tail) or `method: lancet` (the order statistics).
pub(super) fn wide_heavy(f: &Wide) -> String {
    let h = f.heaviness.unwrap_or(f64::NAN);
    match f.variance_inflation {
        Some(_) => format!(
            "heavy tail: {}; the latencies' own tail is {h:.1}× wider than an exponential's; {}",
            wide_found(f),
            wide_beyond(f)
        ),
        None => format!(
            "heavy tail: {}, {h:.1}× wider than an exponential tail's; {}",
            wide_found(f),
            wide_beyond(f)
        ),
    }
}

/// The CI stayed wide, the tail not heavy: dependence (`method: vernier`, with the
/// slowest few percent set apart when they are, and the stalls the probe saw) or the
/// order statistics' width (`method: lancet`).
pub(super) fn wide(f: &Wide) -> String {
    let (Some(inflation), Some(batch)) = (f.variance_inflation, f.batch_size) else {
        return format!("{}; {}", wide_found(f), wide_beyond(f));
    };
    let shape = match (f.heaviness, f.heaviness_inside, f.inside) {
        (Some(h), Some(b), Some(inside)) => format!(
            "the slowest few percent are set apart from the rest ({h:.1}× an exponential tail's width at {}, {b:.1}× at {inside}: not a heavy-tailed service, but requests delayed by something that catches a few percent of them{})",
            f.p,
            f.stalls.as_ref().map_or(String::new(), few_stalls)
        ),
        _ => "the tail itself is not heavy".to_string(),
    };
    format!(
        "{}: latencies stay correlated over about {batch} requests (variance ×{inflation:.1}); {shape}; {}",
        wide_found(f),
        wide_beyond(f)
    )
}

/// Stalls too few to be named the cause, still a part of it.
fn few_stalls(h: &StallReport) -> String {
    format!(
        "; the host probe saw {} stall{} > 1 ms on {} (up to {:.1} ms, {:.2}% of the time), too few to make the whole tail",
        h.stalls_over_1ms,
        if h.stalls_over_1ms == 1 { "" } else { "s" },
        h.name(),
        h.late_max_us / 1e3,
        h.stalled_share * 100.0
    )
}

/// The CI was narrow, but its stop needed more than the time left gave: its confirming
/// look, or more effective tail samples.
pub(super) fn narrow(f: &Narrow) -> String {
    let waits = match f.waits {
        Awaited::Confirmation => format!(
            "the stopping rule confirms a narrow look with the next one, on {} samples, and it did not fit in the time left",
            f.samples_needed
        ),
        Awaited::Tail => format!(
            "it rests on {:.0} effective tail samples where a stop at look {} needs {:.0} (about {} samples), and they did not fit in the time left",
            f.effective_tail, f.look, f.tail_needed, f.samples_needed
        ),
    };
    format!(
        "the {} CI is {:.1} µs wide after {} samples, within the {:.1} µs asked, but not yet an answer: {waits}",
        f.p, f.ci_width_us, f.samples, f.target_us
    )
}
