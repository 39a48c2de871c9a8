//! The words of the tail without the host's stalls.

use super::super::result::{CalledBy, OwnShort, Probed, TouchedSide, WithoutStalls};

/// Why the tail without stalls did not converge, in words (`None` when it did), with what
/// more time would buy it when it would.
pub fn without_stalls_short(own: &WithoutStalls) -> Option<String> {
    let why = without_stalls_why(own)?;
    Some(match own.more_time {
        Some(more) => format!(
            "{why}; the {} untouched samples its precision needs would take {} more at this rate (c while it measures; or --duration, limits.max_duration)",
            more.samples,
            humantime::format_duration(std::time::Duration::from_secs(more.seconds.ceil() as u64))
        ),
        None => why,
    })
}

/// Why the tail without stalls did not converge, in words.
fn without_stalls_why(own: &WithoutStalls) -> Option<String> {
    own.short.as_ref().map(|s| match s {
        OwnShort::Wide {
            width_us,
            target_us,
        } => format!("its CI is {width_us:.1} µs wide, {target_us:.1} asked"),
        OwnShort::TooFew { have, needed } => format!(
            "{have} untouched samples are too few for a CI (about {needed} would do)"
        ),
        OwnShort::Unsettled {
            width_us,
            target_us,
        } => format!(
            "its CI was {width_us:.1} µs wide ({target_us:.1} asked) at the last look, but the stopping rule's confirming look did not come before the point ended"
        ),
        OwnShort::Touched { share, most } => format!(
            "stalls touched {:.1}% of the requests, more than the {:.0}% the method is checked at: the untouched ones are too small a part to stand for the server",
            share * 100.0,
            most * 100.0
        ),
        OwnShort::NoProbe => "no probe recorded stalls, so no request can be called untouched".into(),
        OwnShort::Thinned { sampling } => format!(
            "only {:.1}% of the requests were kept, so whether one was still in flight at a stall's end is unknown",
            sampling * 100.0
        ),
    })
}

/// How the share touched was called when its interval still straddled the bound at the
/// set time, in words (`None` when it was not, or its interval decided).
pub fn without_stalls_call(own: &WithoutStalls) -> Option<String> {
    let call = own.touched_call.filter(|c| c.by == CalledBy::Estimate)?;
    let side = match call.side {
        TouchedSide::Under => "within",
        TouchedSide::Over => "beyond",
    };
    Some(format!(
        "after {:.0} s of requests the share touched, {:.1}% [{:.1}, {:.1}], still straddled the bound, so its estimate called it {side}",
        call.seen_s,
        call.share * 100.0,
        call.low * 100.0,
        call.high * 100.0
    ))
}

/// Whose stalls the tail without stalls leaves out, in words.
pub fn without_stalls_scope(own: &WithoutStalls) -> &'static str {
    match own.probed {
        Probed::ClientAndTarget => "the host's stalls (client and target cores probed)",
        Probed::ClientOnly => "the client's stalls only: the remote target's host is not probed",
    }
}
