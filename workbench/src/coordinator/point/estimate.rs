//! A percentile's estimate from one series, with its dependence-valid CI or why it has
//! none, and one evaluation's samples, copied and sorted once: what the confidence step,
//! the departure check and the verdict read.

use vernier_stats::{
    DependentCi, NeedMore, Percentile, WeightedSamples, percentile, percentile_ci_dependent,
};

use super::super::checks::Interval;
use super::super::result::PercentileResult;
use super::state::Point;

/// One evaluation's samples, copied and sorted once: each measuring agent's latencies
/// (µs) in send order and sorted, and the combined series (the agents' one after another)
/// with its sorted copy, which with one agent is that agent's own.
pub(super) struct Snapshot {
    pub(super) agents: Vec<Series>,
    combined: Option<Series>,
}

/// One series of a [`Snapshot`].
pub(super) struct Series {
    /// The agent (meaningless for the combined series of several).
    pub(super) agent: usize,
    /// Latencies in send order, µs.
    pub(super) in_order: Vec<f64>,
    /// The same, ascending.
    pub(super) sorted: Vec<f64>,
}

impl Series {
    fn new(agent: usize, in_order: Vec<f64>) -> Series {
        let mut sorted = in_order.clone();
        sorted.sort_by(f64::total_cmp);
        Series {
            agent,
            in_order,
            sorted,
        }
    }
}

impl Snapshot {
    /// The combined series; `None` when no agent is measuring.
    pub(super) fn combined(&self) -> Option<&Series> {
        self.combined.as_ref().or(self.agents.first())
    }
}

impl Point {
    /// The measuring agents' samples as one evaluation reads them.
    pub(super) fn snapshot(&mut self) -> Snapshot {
        let measuring: Vec<usize> = self.measuring().collect();
        let agents: Vec<Series> = measuring
            .iter()
            .map(|&i| Series::new(i, self.latencies_in_send_order(i)))
            .collect();
        let combined = (agents.len() > 1).then(|| {
            Series::new(
                usize::MAX,
                agents
                    .iter()
                    .flat_map(|a| a.in_order.iter().copied())
                    .collect(),
            )
        });
        Snapshot { agents, combined }
    }
}

/// A series' percentile with its dependence-valid CI, or why it has none.
pub(super) struct Estimate {
    pub(super) value: f64,
    pub(super) ci: Result<DependentCi, NeedMore>,
}

impl Estimate {
    /// Percentile `p` of `series` (in send order); `None` when empty.
    pub(super) fn of(
        series: &[f64],
        p: Percentile,
        confidence: f64,
    ) -> Option<(Vec<f64>, Estimate)> {
        let mut sorted = series.to_vec();
        sorted.sort_by(f64::total_cmp);
        let estimate = Estimate::of_sorted(series, &sorted, p, confidence)?;
        Some((sorted, estimate))
    }

    /// The same, given the series sorted.
    pub(super) fn of_sorted(
        series: &[f64],
        sorted: &[f64],
        p: Percentile,
        confidence: f64,
    ) -> Option<Estimate> {
        let value = percentile(sorted, p.fraction())?;
        let ci = percentile_ci_dependent(series, sorted, p.fraction(), confidence);
        Some(Estimate::new(value, ci, series.len()))
    }

    /// Percentile `p` of weighted samples (the tail without stalls) with its
    /// dependence-valid CI; `None` when there are none.
    pub(super) fn of_weighted(
        samples: &WeightedSamples,
        p: Percentile,
        confidence: f64,
    ) -> Option<Estimate> {
        let value = samples.percentile(p.fraction())?;
        let ci = samples.percentile_ci_dependent(p.fraction(), confidence);
        Some(Estimate::new(value, ci, samples.len()))
    }

    /// An estimate of `value` from `have` samples with the CI's outcome. Only invalid
    /// parameters fail, and the scenario validated them: that reads as a need no count
    /// meets.
    fn new(
        value: f64,
        ci: Result<Result<DependentCi, NeedMore>, vernier_stats::StatsError>,
        have: usize,
    ) -> Estimate {
        let ci = ci.unwrap_or_else(|e| {
            Err(NeedMore {
                reason: e.to_string(),
                needed: usize::MAX,
                have,
                correlated_over: None,
            })
        });
        Estimate { value, ci }
    }

    pub(super) fn interval(&self) -> Option<Interval> {
        self.ci.as_ref().ok().map(|c| Interval {
            value: self.value,
            low: c.low,
            high: c.high,
        })
    }

    pub(super) fn result(&self, p: Percentile) -> PercentileResult {
        PercentileResult::of(p, self.value, self.ci.as_ref().ok())
    }
}
