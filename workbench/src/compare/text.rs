//! A comparison in words: every sentence `vernier compare` says of a block or of its
//! verdict, rendered from the typed finding and the comparison's own figures. Decisions
//! (the block judgement, the verdict) return data; rewording one touches only this file.

use vernier_stats::MIN_PAIRS_TO_LOOK;

use super::comparison::{Block, Comparison, Design, Finding, Side};
use crate::coordinator::ReasonKind;
use crate::coordinator::policy::MAX_TOUCHED_SHARE;
use crate::scenario::Tail;

/// Why `block` of a comparison of `design` cannot stand for its side, in a sentence
/// (`None` when it can).
pub fn render_problem(block: &Block, design: Design) -> Option<String> {
    let kind = block.problem?;
    let part = match design {
        Design::Duet => "window",
        Design::Blocks | Design::Sequential => "block",
    };
    let name = format!("{}'s {part} {}", block.side, block.pair + 1);
    Some(match kind {
        ReasonKind::TargetFailed if block.samples > 0 => format!(
            "{name}: {} of its {} replies were the server's errors (target_failed)",
            block.errors, block.samples
        ),
        ReasonKind::TargetFailed => format!(
            "{name} measured nothing ({} sent, {} failed)",
            block.sent, block.failed
        ),
        ReasonKind::ClosedLoop => format!(
            "{name} went closed-loop: {} requests waited for a free connection slot (closed_loop: more --connections or --depth)",
            block.backlog_max
        ),
        ReasonKind::LoadNotReached => format!(
            "{name} sent {} of the {:.0} requests its rate asks for (load_not_reached: the client or the target could not keep up)",
            block.sent, block.asked
        ),
        ReasonKind::Departures => format!(
            "{name} sent {:.0}% of its requests on schedule (departures: the client fell behind its load)",
            block.on_schedule * 100.0
        ),
        ReasonKind::HostStalls if design == Design::Duet => format!(
            "the host's stalls touched {:.0}% of {name}'s requests and left too few untouched for the percentile: set aside with its pair (host_stalls)",
            block.touched_share.unwrap_or(f64::NAN) * 100.0
        ),
        ReasonKind::HostStalls => format!(
            "the host's stalls touched {:.0}% of {name}'s requests, more than the {:.0}% the tail without stalls is judged at (host_stalls)",
            block.touched_share.unwrap_or(f64::NAN) * 100.0,
            MAX_TOUCHED_SHARE * 100.0
        ),
        // Kinds a block is never judged to have (every kind named, so that a new one must
        // say whether it is).
        ReasonKind::Interarrival
        | ReasonKind::Independence
        | ReasonKind::Stationarity
        | ReasonKind::WarmupStationarity
        | ReasonKind::AgentsDisagree
        | ReasonKind::TooFewSamples
        | ReasonKind::HeavyTail
        | ReasonKind::Confidence
        | ReasonKind::Quit
        | ReasonKind::AgentLost
        | ReasonKind::AcceptedEmpty
        | ReasonKind::Hysteresis
        | ReasonKind::Replications
        | ReasonKind::TooFewPairs
        | ReasonKind::Touched
        | ReasonKind::NoProbe
        | ReasonKind::Thinned => format!("{name}: {kind}"),
    })
}

/// Why the comparison has its verdict, in a sentence (empty before it is judged).
pub fn render_reason(c: &Comparison) -> String {
    let by = c
        .stopped_after
        .map_or(String::new(), |n| format!("stopped after {n} blocks: "));
    let why = match &c.finding {
        Finding::Unjudged => return String::new(),
        Finding::Difference => difference(c),
        Finding::TooFewPairs { max_pairs } => format!(
            "fewer than {MIN_PAIRS_TO_LOOK} pairs of blocks were measured (--pairs {max_pairs})"
        ),
        Finding::BlocksTooShort { error, block_s } => format!(
            "{error}: each block of {block_s:.1} s at {:.0} req/s holds too few{} requests for p{}; a longer --block would",
            c.rate,
            if c.tail == Tail::WithoutStalls {
                " untouched"
            } else {
                ""
            },
            c.percentile
        ),
        Finding::Block { block } => c
            .blocks
            .get(*block)
            .and_then(|b| render_problem(b, c.design))
            .unwrap_or_default(),
        Finding::HostStallsTooOften { block, remeasured } => format!(
            "{}, after {remeasured} {} for the same reason: the host stalls too often for a comparison now",
            c.blocks
                .get(*block)
                .and_then(|b| render_problem(b, c.design))
                .unwrap_or_default(),
            if c.design == Design::Duet {
                "windows set aside"
            } else {
                "blocks measured again"
            }
        ),
        Finding::Refused { side, error } => format!(
            "{side}'s server could not be reached ({error}): nothing was compared (target_failed)"
        ),
        Finding::Departures {
            pairs,
            mean_us,
            low_us,
            high_us,
        } => format!(
            "the client's lateness moved B's blocks by {mean_us:+.1} µs [{low_us:+.1}, {high_us:+.1}] more than A's (over {pairs} pairs), more than half the {:.1} µs asked: part of B − A would be the client's (departures: pin the workers with --cpus, or ask a wider --width)",
            c.width_us
        ),
        Finding::Confidence {
            pairs_needed,
            more_s,
            per_pair_s,
        } => match c.ci {
            Some(ci) => {
                format!(
                    "the CI of B − A, {:+.1} µs [{:+.1}, {:+.1}], holds zero and is {:.1} µs wide after {} pairs, where {:.1} µs was asked: about {pairs_needed:.0} pairs would do ({more_s:.0} s more at {per_pair_s:.1} s a pair; --pairs)",
                    ci.difference,
                    ci.low,
                    ci.high,
                    ci.width(),
                    ci.pairs,
                    c.width_us
                ) + &spread(&c.blocks, c.tail)
            }
            None => String::new(),
        },
    };
    by + &why
}

/// Faster, slower or no difference, from the CI of B − A.
fn difference(c: &Comparison) -> String {
    let Some(ci) = c.ci else {
        return String::new();
    };
    let ratio = format!(
        "B / A {:.3} [{:.3}, {:.3}]",
        ci.ratio, ci.ratio_low, ci.ratio_high
    );
    if ci.high < 0.0 || ci.low > 0.0 {
        let word = if ci.high < 0.0 { "lower" } else { "higher" };
        format!(
            "B's p{} is {word} than A's by {:.1} µs [{:.1}, {:.1}] ({ratio}), over {} pairs",
            c.percentile,
            ci.difference.abs(),
            ci.low.abs().min(ci.high.abs()),
            ci.low.abs().max(ci.high.abs()),
            ci.pairs
        )
    } else {
        format!(
            "no difference larger than {:.1} µs: B − A {:+.1} µs [{:+.1}, {:+.1}] ({ratio}), over {} pairs",
            c.width_us, ci.difference, ci.low, ci.high, ci.pairs
        )
    }
}

/// How far each side's blocks spread, for an N/A whose CI stayed wide: `; the blocks'
/// values ranged 410.2-5872.5 µs (A) and 395.0-6011.0 µs (B)`, or nothing without blocks.
fn spread(blocks: &[Block], tail: Tail) -> String {
    let range = |side: Side| {
        let values = blocks
            .iter()
            .filter(|b| b.side == side)
            .map(|b| b.value_of(tail));
        let lo = values.clone().fold(f64::INFINITY, f64::min);
        let hi = values.fold(f64::NEG_INFINITY, f64::max);
        (lo.is_finite() && hi.is_finite()).then(|| format!("{lo:.1}-{hi:.1} µs ({side})"))
    };
    match (range(Side::A), range(Side::B)) {
        (Some(a), Some(b)) => format!("; the blocks' values ranged {a} and {b}"),
        _ => String::new(),
    }
}
