//! The verdict of a comparison whose pairs are measured, and why.

use vernier_stats::MIN_PAIRS_TO_LOOK;

use super::block::late_sides;
use super::comparison::{Block, CompareOptions, CompareVerdict, Comparison};

/// Gives `comparison` its verdict and reason from its last CI: faster or slower when the
/// CI of B − A excludes zero, no difference when it lies within ± the width, N/A when it
/// is wider, when the client's lateness is shown to have moved one side's percentile more
/// than the other's, or when
/// there were too few pairs. `stopped`: the watcher ended it before the rule did.
pub(super) fn judge(comparison: &mut Comparison, options: &CompareOptions, stopped: bool) {
    let by = if stopped {
        format!("stopped after {} blocks: ", comparison.blocks.len())
    } else {
        String::new()
    };
    let Some(ci) = comparison.ci else {
        comparison.verdict = CompareVerdict::NotAvailable;
        comparison.reason = format!(
            "{by}fewer than {MIN_PAIRS_TO_LOOK} pairs of blocks were measured (--pairs {})",
            options.max_pairs
        );
        return;
    };
    let w = comparison.width_us;
    if let Some(late) = late_sides(&comparison.blocks, w, ci.confidence) {
        comparison.verdict = CompareVerdict::NotAvailable;
        comparison.reason = format!("{by}{late}");
        return;
    }
    let pairs = ci.pairs as f64;
    let ratio = format!(
        "B / A {:.3} [{:.3}, {:.3}]",
        ci.ratio, ci.ratio_low, ci.ratio_high
    );
    let (verdict, reason) = if ci.high < 0.0 || ci.low > 0.0 {
        let (verdict, word) = if ci.high < 0.0 {
            (CompareVerdict::Faster, "lower")
        } else {
            (CompareVerdict::Slower, "higher")
        };
        (
            verdict,
            format!(
                "B's p{} is {word} than A's by {:.1} µs [{:.1}, {:.1}] ({ratio}), over {} pairs",
                comparison.percentile,
                ci.difference.abs(),
                ci.low.abs().min(ci.high.abs()),
                ci.low.abs().max(ci.high.abs()),
                ci.pairs
            ),
        )
    } else if ci.low >= -w && ci.high <= w {
        (
            CompareVerdict::NoDifference,
            format!(
                "no difference larger than {w:.1} µs: B − A {:+.1} µs [{:+.1}, {:+.1}] ({ratio}), over {} pairs",
                ci.difference, ci.low, ci.high, ci.pairs
            ),
        )
    } else {
        // The CI narrows as 1/√pairs: the pairs its width asks for.
        let needed = (pairs * (ci.width() / w).powi(2)).ceil();
        let per_pair = comparison.seconds / pairs;
        (
            CompareVerdict::NotAvailable,
            format!(
                "the CI of B − A, {:+.1} µs [{:+.1}, {:+.1}], holds zero and is {:.1} µs wide after {} pairs, where {w:.1} µs was asked: about {needed:.0} pairs would do ({:.0} s more at {per_pair:.1} s a pair; --pairs)",
                ci.difference,
                ci.low,
                ci.high,
                ci.width(),
                ci.pairs,
                (needed - pairs).max(0.0) * per_pair
            ) + &spread(&comparison.blocks),
        )
    };
    comparison.verdict = verdict;
    comparison.reason = by + &reason;
}

/// How far each side's blocks spread, for an N/A whose CI stayed wide: `; the blocks'
/// values ranged 410.2-5872.5 µs (A) and 395.0-6011.0 µs (B)`, or nothing without blocks.
fn spread(blocks: &[Block]) -> String {
    let range = |side: &str| {
        let values = blocks.iter().filter(|b| b.side == side).map(|b| b.value_us);
        let lo = values.clone().fold(f64::INFINITY, f64::min);
        let hi = values.fold(f64::NEG_INFINITY, f64::max);
        (lo.is_finite() && hi.is_finite()).then(|| format!("{lo:.1}-{hi:.1} µs ({side})"))
    };
    match (range("A"), range("B")) {
        (Some(a), Some(b)) => format!("; the blocks' values ranged {a} and {b}"),
        _ => String::new(),
    }
}
