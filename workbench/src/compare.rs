//! `vernier compare`: is B's percentile lower than A's, and by how much. By default A and B
//! are measured at the same moments ([`duet`]): one client keeps both servers' connections
//! open and sends each request of one open-loop stream to A or to B by a fair coin, and
//! the stream is cut into windows, each a pair; the host's stalls and drifts reach both
//! sides alike and cancel in the difference (Bulej et al., ICPE 2020). Where the two
//! cannot run at once, `--design blocks` measures them in pairs of short blocks, each
//! pair's order drawn at random, each block a fresh in-process agent with fresh
//! connections (randomized multiple interleaved trials, Abedi & Brecht, ICPE 2017), so
//! that a host whose speed drifts over minutes reaches both alike.
//! After each pair from the [`MIN_PAIRS_TO_LOOK`]-th on, the difference B − A of the
//! percentile gets its CI by sectioning ([`vernier_stats::difference_ci`]), and the
//! comparison stops when the CI has been narrower than asked at two looks in a row
//! ([`vernier_stats::StoppingRule`]); `cargo run --release --example compare_coverage`
//! measures the coverage of both, as they run here.
//!
//! Each block is judged as the methodology judges a load point, by what a block alone can
//! show ([`block`]): the load reached (its departures against the rate's Poisson count), no
//! closed loop (a backlog of [`HOPELESS_BACKLOG_S`](crate::coordinator) of requests), and
//! departures on schedule (the percentile of the requests sent on time against all).
//!
//! The verdict ([`verdict`]): `faster` or `slower` when the CI of B − A excludes zero, `no
//! difference` when it lies within ± the width asked, N/A otherwise (the CI still wider than
//! asked when the pairs run out, with the pairs it would take) or when a block could not be
//! judged (it measured nothing, the load was not reached, the load went closed-loop, the
//! client sent late enough to move the percentile).
//!
//! [`report`] draws a recorded comparison: both CCDFs, the blocks over time, and the CI of
//! the difference narrowing look by look.

pub(crate) mod block;
mod comparison;
mod duet;
pub mod report;
mod run;
mod steps;
mod text;
mod verdict;

pub use comparison::{
    Block, CompareOptions, CompareVerdict, Comparison, Design, Finding, Look, Side, SideBySide,
    Steer,
};
pub use duet::duet_differs;
pub use steps::fixed_rate;
pub use text::{render_problem, render_reason};
pub use vernier_stats::MIN_PAIRS_TO_LOOK;

/// Compares `a` and `b` at the load and percentile `a` asks for (B's scenario gives only
/// its target and workload; the load, CI and width are A's), as `options.design` lays them
/// out in time. After every block (a duet's: every window) `observe` is shown the
/// comparison so far and a line saying what was measured (and the look that followed);
/// it answers [`Steer::Stop`] to end the comparison there, with the verdict on the pairs
/// measured. A watcher that pauses the comparison simply returns later: nothing is
/// measured into a pair while it holds the call.
pub fn compare(
    a: &crate::scenario::Scenario,
    b: &crate::scenario::Scenario,
    options: &CompareOptions,
    observe: impl FnMut(&Comparison, &str) -> Steer,
) -> Result<Comparison, crate::error::Error> {
    match options.design {
        Design::Duet => duet::compare(a, b, options, observe),
        Design::Blocks | Design::Sequential => run::in_blocks(a, b, options, observe),
    }
}

#[cfg(test)]
mod tests;
