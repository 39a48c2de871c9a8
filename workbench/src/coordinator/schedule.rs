//! Coordinated omission, shown: the latency of every request measured from its scheduled
//! departure beside the same latency measured from its actual departure.
//!
//! A client that falls behind sends late and, timing from the late send, never sees the
//! wait it imposed on the request (Tene's coordinated omission). The agents record both
//! clocks for every request in HDR histograms; this turns the measurement's histograms
//! into the figures a result reports.

use hdrhistogram::Histogram;
use vernier_agent::histogram;
use vernier_stats::Percentile;

use super::result::SchedulePercentile;

/// Percentile `p` (percent) of each agent's `(intended, latency)` histograms merged, µs.
/// Empty when no request completed during the measurement, so that a point without one
/// reports nothing rather than zeros.
///
/// Both figures are the HDR histogram's value at the quantile (the highest value
/// equivalent to it at three significant digits), over the same requests: they differ by
/// the client-side wait only, not by estimator.
pub(super) fn from_schedule<'a>(
    agents: impl IntoIterator<Item = (&'a Histogram<u64>, &'a Histogram<u64>)>,
    percentiles: impl IntoIterator<Item = Percentile>,
) -> Vec<SchedulePercentile> {
    let mut intended = histogram();
    let mut latency = histogram();
    for (i, l) in agents {
        // Same bounds on both sides (vernier_agent::histogram): adding cannot fail.
        let _ = intended.add(i);
        let _ = latency.add(l);
    }
    if intended.is_empty() || latency.is_empty() {
        return Vec::new();
    }
    let us = |h: &Histogram<u64>, p: Percentile| h.value_at_quantile(p.fraction()) as f64 / 1e3;
    percentiles
        .into_iter()
        .map(|p| SchedulePercentile {
            p: p.percent(),
            value: us(&intended, p),
            actual: us(&latency, p),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn percent(p: f64) -> Percentile {
        Percentile::from_percent(p).unwrap()
    }

    /// `n` requests of each (value ns) in a fresh histogram.
    fn hist(values: &[(u64, u64)]) -> Histogram<u64> {
        let mut h = histogram();
        for &(v, n) in values {
            h.record_n(v, n).unwrap();
        }
        h
    }

    #[test]
    fn percentiles_of_the_merged_agents_from_both_departures() {
        // Agent 0: 90 requests of 100 µs, 10 of them queued 900 µs behind a stall.
        let intended0 = hist(&[(100_000, 90), (1_000_000, 10)]);
        let latency0 = hist(&[(100_000, 100)]);
        // Agent 1: 100 requests of 200 µs, sent on time.
        let intended1 = hist(&[(200_000, 100)]);
        let latency1 = hist(&[(200_000, 100)]);
        let got = from_schedule(
            [(&intended0, &latency0), (&intended1, &latency1)],
            [25.0, 50.0, 90.0, 99.0].map(percent),
        );
        // 200 requests: from the schedule, 90 at 100 µs, 100 at 200 µs, 10 at 1 ms;
        // from the actual departure, 100 at 100 µs and 100 at 200 µs.
        let expected = [
            (25.0, 100.0, 100.0),
            (50.0, 200.0, 100.0),
            (90.0, 200.0, 200.0),
            (99.0, 1000.0, 200.0),
        ];
        assert_eq!(got.len(), expected.len(), "{got:?}");
        for (g, (p, value, actual)) in got.iter().zip(expected) {
            assert_eq!(g.p, p);
            // Three significant digits: the highest equivalent value is within 0.1%.
            assert!((g.value - value).abs() <= value * 1e-3, "{g:?}");
            assert!((g.actual - actual).abs() <= actual * 1e-3, "{g:?}");
            assert!(g.value >= g.actual, "{g:?}");
        }
    }

    #[test]
    fn no_request_completed_reports_nothing() {
        let empty = histogram();
        assert!(from_schedule([(&empty, &empty)], [50.0, 99.0].map(percent)).is_empty());
        assert!(from_schedule(std::iter::empty(), [percent(50.0)]).is_empty());
    }
}
