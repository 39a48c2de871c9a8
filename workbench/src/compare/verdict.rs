//! The verdict of a comparison whose pairs are measured, and what it rests on (the words
//! are [`super::text`]'s).

use super::block::late_sides;
use super::comparison::{CompareOptions, CompareVerdict, Comparison, Design, Finding};
use super::text::render_reason;

/// How the comparison came to its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Ending {
    /// The stopping rule, or the pairs ran out.
    ByRule,
    /// The watcher stopped it after the blocks measured.
    ByWatcher,
}

/// Gives `comparison` its verdict and finding from its last CI: faster or slower when the
/// CI of B − A excludes zero, no difference when it lies within ± the width, wide when it
/// holds zero and is wider (a valid CI, the answer as far as it goes), N/A when there is
/// none, when the client's lateness is shown to have moved one side's percentile more
/// than the other's, or when there were too few pairs.
pub(super) fn judge(comparison: &mut Comparison, options: &CompareOptions, ending: Ending) {
    if ending == Ending::ByWatcher {
        comparison.stopped_after = Some(comparison.blocks.len());
    }
    let (verdict, finding) = decide(comparison, options);
    conclude(comparison, verdict, finding);
}

/// Sets the verdict, what it rests on, and its sentence.
pub(super) fn conclude(comparison: &mut Comparison, verdict: CompareVerdict, finding: Finding) {
    comparison.verdict = verdict;
    comparison.finding = finding;
    comparison.reason = render_reason(comparison);
}

fn decide(comparison: &Comparison, options: &CompareOptions) -> (CompareVerdict, Finding) {
    let Some(ci) = comparison.ci else {
        return (
            CompareVerdict::NotAvailable,
            Finding::TooFewPairs {
                max_pairs: options.max_pairs,
            },
        );
    };
    let w = comparison.width_us.get();
    // In a duet each request's side is drawn apart from when it leaves: the client's
    // lateness reaches both sides alike by construction, and a side its late sends move
    // further (a slower server drains a stall's queue more slowly) shows the server's
    // doing, which the difference is to measure.
    let blocks_apart = comparison.design != Design::Duet;
    if blocks_apart && let Some(late) = late_sides(&comparison.blocks, w, ci.confidence) {
        return (CompareVerdict::NotAvailable, late);
    }
    if ci.high < 0.0 {
        (CompareVerdict::Faster, Finding::Difference)
    } else if ci.low > 0.0 {
        (CompareVerdict::Slower, Finding::Difference)
    } else if ci.low >= -w && ci.high <= w {
        (CompareVerdict::NoDifference, Finding::Difference)
    } else {
        // The CI narrows as 1/√pairs: the pairs its width asks for.
        let pairs = ci.pairs as f64;
        let pairs_needed = (pairs * (ci.width() / w).powi(2)).ceil();
        let per_pair_s = comparison.seconds / pairs;
        (
            CompareVerdict::Wide,
            Finding::Confidence {
                pairs_needed,
                more_s: (pairs_needed - pairs).max(0.0) * per_pair_s,
                per_pair_s,
            },
        )
    }
}
