//! The answer for people, as `vernier compare` prints it and `vernier report` of its record
//! prints it again.

use crate::compare::comparison::Comparison;
use crate::compare::comparison::Side;
use crate::compare::text::render_problem;
use crate::scenario::Tail;

/// Which tail was compared, in words: every request, or the requests no host stall
/// touched with the share touched on each side (its blocks' mean).
fn tail(c: &Comparison) -> String {
    if c.tail == Tail::WithStalls {
        return "every request (with the host's stalls)".to_string();
    }
    // A side with no block measured has no share to say (an empty sum would be -0.0).
    let touched = |side: Side| {
        let shares: Vec<f64> = (c.blocks.iter())
            .filter(|b| b.side == side)
            .filter_map(|b| b.touched_share)
            .collect();
        let mean = shares.iter().fold(0.0, |sum, s| sum + s) / shares.len().max(1) as f64;
        (!shares.is_empty()).then(|| format!("{:.1}% of {side}'s", mean * 100.0))
    };
    let said: Vec<String> = [touched(Side::A), touched(Side::B)]
        .into_iter()
        .flatten()
        .collect();
    match said.as_slice() {
        [] => "the tail without stalls (the requests no host stall touched)".to_string(),
        shares => format!(
            "the tail without stalls (the requests no host stall touched; stalls touched {} \
             requests)",
            shares.join(" and ")
        ),
    }
}

/// Both sides' percentiles, the difference and the ratio with their CIs, each block that
/// could not stand for its side and why, then the verdict and why (last, where a script
/// that reads one line finds it).
pub fn render_table(c: &Comparison) -> String {
    let mut out = format!(
        "A {}\nB {}\nat {:.0} req/s, p{}, {}\n",
        c.a,
        c.b,
        c.rate,
        c.percentile,
        tail(c)
    );
    if let Some(ci) = c.ci {
        out += &format!(
            "  A {:.1} µs, B {:.1} µs\n  B − A {:+.1} µs [{:+.1}, {:+.1}]\n  B / A {:.3} [{:.3}, {:.3}]\n",
            ci.a, ci.b, ci.difference, ci.low, ci.high, ci.ratio, ci.ratio_low, ci.ratio_high
        );
    }
    for q in &c.percentiles {
        out += &format!(
            "  p{:<5} A {:8.1} µs, B {:8.1} µs, B − A {:+8.1} µs [{:+.1}, {:+.1}]\n",
            q.p * 100.0,
            q.a,
            q.b,
            q.difference,
            q.low,
            q.high
        );
    }
    for problem in c.blocks.iter().filter_map(render_problem) {
        out += &format!("  problem: {problem}\n");
    }
    out += &format!(
        "verdict: {} ({} blocks, {:.0} s): {}\n",
        c.verdict.text(),
        c.blocks.len(),
        c.seconds,
        c.reason
    );
    out
}
