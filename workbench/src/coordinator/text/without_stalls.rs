//! The words of the tail without the host's stalls.

use super::super::reason::{Thinned, Touched, UntouchedCi, UntouchedFew};
use super::super::result::{CalledBy, Probed, TouchedSide, WithoutStalls};

/// The tail without stalls' CI, wider than asked.
pub(super) fn untouched_wide(f: &UntouchedCi) -> String {
    format!(
        "its CI is {:.1} µs wide, {:.1} asked",
        f.ci_width_us, f.target_us
    )
}

/// The tail without stalls' CI, as narrow as asked but not settled by the stopping rule.
pub(super) fn unsettled(f: &UntouchedCi) -> String {
    format!(
        "its CI was {:.1} µs wide ({:.1} asked) at the last look, but the stopping rule's confirming look did not come before the point ended",
        f.ci_width_us, f.target_us
    )
}

/// Too few untouched samples for the tail without stalls' CI.
pub(super) fn untouched_few(f: &UntouchedFew) -> String {
    format!(
        "{} untouched samples are too few for a CI (about {} would do)",
        f.untouched, f.needed
    )
}

/// Stalls touched more requests than the tail without them is judged at.
pub(super) fn touched(f: &Touched) -> String {
    format!(
        "stalls touched {:.1}% of the requests, more than the {:.0}% the method is checked at: the untouched ones are too small a part to stand for the server",
        f.share * 100.0,
        f.most * 100.0
    )
}

/// No probe recorded stalls.
pub(super) fn no_probe() -> String {
    "no probe recorded stalls, so no request can be called untouched".into()
}

/// The samples were thinned.
pub(super) fn thinned(f: &Thinned) -> String {
    format!(
        "only {:.1}% of the requests were kept, so whether one was still in flight at a stall's end is unknown",
        f.sampling * 100.0
    )
}

/// How the share touched was called when its interval still straddled the bound at the
/// set time, in words (`None` when it was not, or its interval decided).
pub fn without_stalls_call(tail: &WithoutStalls) -> Option<String> {
    let call = tail.touched_call.filter(|c| c.by == CalledBy::Estimate)?;
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

/// The tail without stalls in a line, after a table's row of it: whose stalls it leaves
/// out, how the share touched was called, and, with `short` (why it is short of an
/// answer), its verdict; naming it when it was the tail `asked` for.
pub(super) fn line(tail: &WithoutStalls, asked: bool, short: Option<String>) -> String {
    let asked = if asked { " (the tail asked for)" } else { "" };
    let mut line = format!(
        "without stalls{asked}: without {}",
        without_stalls_scope(tail)
    );
    if let Some(call) = without_stalls_call(tail) {
        line.push_str(&format!("; {call}"));
    }
    if let Some(why) = short {
        line.push_str(&format!("; {}: {why}", tail.verdict.name()));
    }
    line
}

/// Whose stalls the tail without stalls leaves out, in words.
pub fn without_stalls_scope(tail: &WithoutStalls) -> &'static str {
    match tail.probed {
        Probed::ClientAndTarget => "the host's stalls (client and target cores probed)",
        Probed::ClientOnly => "the client's stalls only: the remote target's host is not probed",
    }
}
