//! How many requests a measurement keeps: every one under `method: vernier` unless the
//! point could then hold too many, Lancet's sampling rate (thinned by its lag search)
//! under `method: lancet`, and why, for the phase line.

use super::super::policy::{MAX_KEPT_PER_SECOND, MAX_KEPT_SAMPLES, at_kept_cap};
use super::state::Point;
use crate::scenario::Method;

impl Point {
    /// The share of requests kept while measuring: Lancet's scenario rate, thinned later
    /// by the lag search; under `method: vernier` every request, unless an agent would then
    /// keep more than [`MAX_KEPT_PER_SECOND`] or the point more than [`MAX_KEPT_SAMPLES`]
    /// by its time limit.
    pub(super) fn measure_sampling(&self) -> f64 {
        match self.config.method {
            Method::Lancet => self.config.sampling.rate,
            Method::Vernier => (MAX_KEPT_SAMPLES / self.most_samples().max(1.0))
                .min(MAX_KEPT_PER_SECOND / self.per_agent_rate().max(1.0))
                .min(1.0),
        }
    }

    /// Requests a second each agent sends.
    pub(super) fn per_agent_rate(&self) -> f64 {
        self.config.rate / self.live_count().max(1) as f64
    }

    /// Requests a second each of an agent's workers sends.
    pub(super) fn per_worker_rate(&self) -> f64 {
        self.per_agent_rate() / self.config.workers.max(1) as f64
    }

    /// The samples each live agent keeps a second: its rate under the round's sampling.
    pub(super) fn kept_per_agent(&self) -> f64 {
        self.per_agent_rate() * self.rounds.sampling
    }

    /// The requests the measuring agents send by the point's time limit.
    fn most_samples(&self) -> f64 {
        self.per_agent_rate()
            * self.measuring().count().max(1) as f64
            * self.config.limits.max_duration.as_secs_f64()
    }

    /// Why the share kept is what it is, for the phase line.
    pub(super) fn sampling_why(&self) -> String {
        match self.config.method {
            Method::Lancet => "method: lancet's sampling, thinned by the lag search".into(),
            Method::Vernier if self.rounds.sampling >= 1.0 => format!(
                "every request: the CI gains from each, and by the time limit the point holds at most {:.0} ({:.0} MB)",
                self.most_samples(),
                self.most_samples() * 24.0 / 1e6
            ),
            Method::Vernier if at_kept_cap(self.per_agent_rate() * self.rounds.sampling) => {
                format!(
                    "one request in {:.1}: {:.0} a second per agent at most, since correlated neighbours add little to the CI and every look sorts all that is kept",
                    1.0 / self.rounds.sampling,
                    MAX_KEPT_PER_SECOND
                )
            }
            Method::Vernier => format!(
                "one request in {:.1}: keeping every one, the point could hold {:.0} by its time limit, beyond the {:.0} (24 B each) it may",
                1.0 / self.rounds.sampling,
                self.most_samples(),
                MAX_KEPT_SAMPLES
            ),
        }
    }
}
