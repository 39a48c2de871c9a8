//! A point's latency budget: where the median's microseconds went ("Where has my time
//! gone?", Zilberman et al.). The measured p50 is split into
//!
//! - the **floor** of the path: the p50 round trip of a busy-polling ping-pong between
//!   the agent's core and the target's, measured when the run starts (`vernier
//!   calibrate`'s ping-pong), the least any request can take here; blocking instead where
//!   this process has one core for both ends (`budget::start` says why);
//! - the **client's share**: what the agent's own measurement path (its timestamps, its
//!   way of waiting for replies) and a bare server's handling add to the floor, calibrated
//!   when the run starts against vernier's zero-service synthetic server. The agent's
//!   samples carry one stamp per request, so kernel and user stamps cannot be compared
//!   request by request; the calibrated figure stands in, and says so;
//! - **host interference**: what the run's stall probes saw while the point measured: the
//!   share of requests whose window held a stall, its size, and (where the ideal model
//!   gives the latency distribution) how far that share moves the median;
//! - **what remains**: the server and its queue. Where the service time is known (the
//!   synthetic protocol's `service:`), by the ideal M/G/1 model, independent of the
//!   measurement: how far the model's times, added request by request to the client
//!   calibration's latencies, move their median; everywhere, the measured median less the
//!   parts above, by difference.
//!
//! With `budget: {probe: SHARE}` the path is also measured while each point measures
//! ([`probe`]): the start-of-run calibration is moved to the probe's p50 (less the ideal
//! model's wait for it), the queue beyond the ideal model is a part, and the parts' sum
//! carries the probe's CI, so that "the parts add up" is judged against both uncertainties
//! rather than against a calibration minutes old.
//!
//! Where the server says in its replies how long it served each request (vernier's
//! synthetic server), the **service beyond what was asked** is a part too: a spin
//! overshoots, and the OS or the hypervisor takes the server's core mid-request.
//!
//! The budget is of the p50: the floor and the client's share are medians, and a median
//! of a sum is the sum of medians when all parts but one are nearly constant, as the path
//! is on a quiet host. Where the path varies (a tenth of its requests several µs slow), a
//! spread-out service time moves the median by more than its own median, which is why the
//! server's part adds the model to the path's measured latencies rather than quoting the
//! model's p50. Higher percentiles do not split at all (the p99 of a sum is not the sum of
//! p99s). A figure that cannot be measured on a given host or path is `None` with the
//! reason, never a guess.
//!
//! The budget's files, one idea each: `policy`, its thresholds and limits; `grid`, the
//! quantiles its distributions are kept at and added on; `queue`, the ideal server's
//! queue; `host`, the host's part; `start`, the start-of-run calibration; `probe`, the
//! path probe's window; `sent`, what a point's batches leave for its budget; and `parts`,
//! the parts' arithmetic that makes a point's budget.

mod grid;
mod host;
mod parts;
mod policy;
pub mod probe;
mod queue;
mod sent;
mod start;

pub use crate::coordinator::{Budget, HostPart, Part, ProbeWindow};
pub use grid::{GRID, histogram_grid};
pub use parts::{Baseline, During, Figures};
pub use policy::BUDGET_PERCENTILE;
pub(crate) use sent::Sent;

#[cfg(test)]
mod tests;
