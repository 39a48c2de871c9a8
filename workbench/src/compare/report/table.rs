//! The answer for people, as `vernier compare` prints it and `vernier report` of its record
//! prints it again.

use crate::compare::comparison::Comparison;
use crate::compare::comparison::{Design, Side};
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

/// The percentile compared as the plots name it: `p99`, or `p99 without stalls` when the
/// comparison was of that tail (as `report`'s latency-vs-load names a run's).
pub(super) fn compared_name(c: &Comparison) -> String {
    match c.tail {
        crate::scenario::Tail::WithStalls => crate::report::fmt_percentile(c.percentile),
        crate::scenario::Tail::WithoutStalls => {
            format!(
                "{} without stalls",
                crate::report::fmt_percentile(c.percentile)
            )
        }
    }
}

/// How A and B were laid out in time, in words: side by side (a duet, with what that
/// means), or in blocks.
pub(crate) fn design(c: &Comparison) -> String {
    match (c.design, &c.side_by_side) {
        (Design::Duet, Some(s)) => {
            let cores = |cpus: &[usize], whose: &str| {
                if cpus.is_empty() {
                    String::new()
                } else {
                    let list: Vec<String> = cpus.iter().map(usize::to_string).collect();
                    format!(", {whose} on cores {}", list.join(","))
                }
            };
            let same = if s.same_server {
                "; A and B are one server, which carried both sides' requests"
            } else {
                "; each server takes time from the other where they share cores"
            };
            format!(
                "side by side (a duet): one stream of {:.0} req/s, each request to A or B by a coin{}{}{same}{}",
                s.stream_rate,
                cores(&s.client_cpus, "the client"),
                cores(&s.server_cpus, "the servers"),
                if s.set_aside > 0 {
                    format!("; {} windows set aside", s.set_aside)
                } else {
                    String::new()
                }
            )
        }
        (Design::Duet, None) => "side by side (a duet)".to_string(),
        (Design::Blocks, _) => {
            "in interleaved pairs of blocks, each block its own client and connections".to_string()
        }
        (Design::Sequential, _) => "every block of A, then every block of B".to_string(),
    }
}

/// Both sides' percentiles, the difference and the ratio with their CIs, each block that
/// could not stand for its side and why, then the verdict and why (last, where a script
/// that reads one line finds it).
pub fn render_table(c: &Comparison) -> String {
    let mut out = format!(
        "A {}\nB {}\nat {:.0} req/s, p{}, {}\n{}\n",
        c.a,
        c.b,
        c.rate,
        c.percentile,
        tail(c),
        design(c)
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
    for problem in c.blocks.iter().filter_map(|b| render_problem(b, c.design)) {
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
