//! Departures by effect size (`method: vernier`): does the client's lateness move the
//! answer?
//!
//! Each kept sample knows its send lag (kernel TX stamp minus scheduled departure). For a
//! FCFS server, delaying every arrival by at most D moves every completion by at most D
//! (Lindley's recursion), so the lag's high quantile bounds the error; on a host whose
//! vCPUs stall for milliseconds that bound is loose, so what decides is the empirical
//! comparison: the target percentile of the requests that left on schedule against that of
//! all requests. Anderson-Darling on the gaps stays computed and reported beside it.

use std::time::Duration;

use vernier_agent::StallReport;
use vernier_stats::{Percentile, percentile};

use super::super::check_next::{CheckNext, Found};
use super::super::decision::Decision;
use super::super::event::{Check, CheckKind, CheckRole};
use super::super::findings::{DepartureFinding, LateCause};
use super::super::policy::{
    DEPARTURE_SHARE_OF_WIDTH, OnSchedule, departures_hold, host_explains_lag, is_closed_loop,
    lateness_allowed_us, lateness_matters, tail_estimate_stands,
};
use super::super::reason::{ClosedLoop, ClosedLoopMoment, Departures, Reason, Why};
use super::estimate::Estimate;
use super::state::Point;

/// Percentile `p` of the on-schedule requests' latencies `on` (send order), with its
/// dependence-valid interval (NaN bounds without one), and whether it agrees with `all_us`,
/// that of all requests: within ± `allowed`, or its own interval reaching into that band.
pub(crate) struct OnScheduleEstimate {
    pub(crate) value: Option<f64>,
    pub(crate) low: f64,
    pub(crate) high: f64,
    pub(crate) agrees: bool,
}

pub(crate) fn on_schedule(
    on: &[f64],
    p: Percentile,
    confidence: f64,
    all_us: f64,
    allowed: f64,
) -> OnScheduleEstimate {
    // The on-schedule percentile stands only with a few samples beyond it.
    let estimate = tail_estimate_stands(on.len() as f64 * (1.0 - p.fraction()))
        .then(|| Estimate::of(on, p, confidence))
        .flatten()
        .map(|(_, e)| e);
    let value = estimate.as_ref().map(|e| e.value);
    let (low, high) = estimate
        .as_ref()
        .and_then(Estimate::interval)
        .map_or((f64::NAN, f64::NAN), |c| (c.low, c.high));
    // Within the band, or its own interval reaches into it: not shown to matter. The
    // shift is all less on schedule, so its interval is the on-schedule one's, mirrored.
    let agrees =
        value.is_some_and(|v| !lateness_matters(all_us - v, all_us - high, all_us - low, allowed));
    OnScheduleEstimate {
        value,
        low,
        high,
        agrees,
    }
}

impl Point {
    /// Compares percentile `p` of the on-schedule requests with `all_us`,
    /// that of all requests, against the CI width the user asked for, `asked_us`: the
    /// lateness matters when the on-schedule requests' own (dependence-valid) interval lies
    /// wholly outside all ± [`DEPARTURE_SHARE_OF_WIDTH`] × `asked_us`. Reports the check
    /// and answers the reason to end N/A when it does.
    pub(super) fn departures(
        &mut self,
        at: Duration,
        p: Percentile,
        all_us: f64,
        asked_us: f64,
        out: &mut Decision,
    ) -> Option<Reason> {
        let measuring: Vec<usize> = self.measuring().collect();
        let allowed = lateness_allowed_us(asked_us);
        let on_time = OnSchedule::within_us(allowed);
        let on = self.on_schedule_series(&measuring, on_time);
        let lags = self.send_lags(&measuring);
        let n = lags.len();
        let lag = |q: f64| percentile(&lags, q).unwrap_or(f64::NAN);
        let lags = Lags {
            p50: lag(0.5),
            p99: lag(0.99),
            max: lag(1.0),
        };
        let share = on.len() as f64 / n.max(1) as f64;
        let OnScheduleEstimate {
            value: on_us,
            low,
            high,
            agrees,
        } = on_schedule(&on, p, self.config.ci.confidence, all_us, allowed);
        let pass = departures_hold(share, agrees);
        let late = self.lateness(&measuring, on_time, lags);
        let finding = DepartureFinding {
            p,
            on_schedule_share: share.into(),
            on_schedule_within_us: (f64::from(on_time.limit_ns()) / 1e3).into(),
            on_schedule_us: on_us,
            on_schedule_ci: (on_us.is_some() && low.is_finite()).then_some((low, high)),
            all_us: all_us.into(),
            allowed_us: allowed.into(),
            share_of_width: DEPARTURE_SHARE_OF_WIDTH.into(),
            send_lag_p50_us: lags.p50.into(),
            send_lag_p99_us: lags.p99.into(),
            send_lag_max_us: lags.max.into(),
            backlog_max: late.backlog,
            cause: late.cause.clone(),
        };
        let check = Check {
            check: CheckKind::Departures,
            agent: None,
            pass,
            role: CheckRole::Gate,
            statistic: on_us.map(|v| all_us - v),
            pvalue: None,
            n,
            found: Found::Departures(Box::new(finding.clone())),
            next: Some(if pass {
                CheckNext::LatenessHarmless
            } else {
                CheckNext::LatenessMoves(Box::new(finding.clone()))
            }),
            data: None,
        };
        self.check(at, check, out);
        if pass {
            return None;
        }
        Some(self.departures_reason(&late, finding))
    }

    /// The on-schedule requests' latencies (sent within `on_time`), µs, in send order per
    /// agent, for the dependence-valid interval.
    fn on_schedule_series(&mut self, measuring: &[usize], on_time: OnSchedule) -> Vec<f64> {
        measuring
            .iter()
            .flat_map(|&i| {
                let Some(t) = self.stage.tallies_mut().get_mut(i) else {
                    return Vec::new();
                };
                t.samples.sort_by_key(|s| s.departure_ns);
                t.samples
                    .iter()
                    .filter(|s| on_time.holds(u64::from(s.queueing_ns)))
                    .map(|s| s.latency_ns as f64 / 1e3)
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    /// Every kept sample's send lag, µs, ascending.
    fn send_lags(&self, measuring: &[usize]) -> Vec<f64> {
        let mut lags: Vec<f64> = measuring
            .iter()
            .flat_map(|&i| self.samples(i))
            .map(|s| f64::from(s.queueing_ns) / 1e3)
            .collect();
        lags.sort_by(f64::total_cmp);
        lags
    }

    /// Why requests left late, from the send lags: the target's pause, the client's host,
    /// a backlog of the load's own, or the send cost.
    fn lateness(&self, measuring: &[usize], on_time: OnSchedule, lags: Lags) -> Lateness {
        let backlog = measuring
            .iter()
            .map(|&i| self.agents[i].load.backlog_max)
            .max()
            .unwrap_or(0);
        let per_worker = self.per_worker_rate();
        // The host's stalls, when the probe saw some as long as the lateness: then the late
        // requests (and any backlog) are their doing.
        let stalls = self
            .host()
            .iter()
            .filter(|h| h.wakeups > 0 && h.stalls_over_1ms > 0)
            .max_by(|a, b| a.late_max_us.total_cmp(&b.late_max_us))
            .filter(|h| host_explains_lag(h.late_max_us, lags.max))
            .map(StallReport::without_histogram);
        // A backlog that holds most requests back (the median send lag beyond the
        // tolerance, the slots full in most reports) is a closed loop, unless the
        // connections would carry the rate at the mean latency seen (Little's law) and the
        // host's stalls explain the lateness: then a core not ours held the replies, as
        // `Point::tail_cause` judges a closed loop too. A brief one after a stall is the
        // stall's, and so is a late median with free slots (a host that wakes the worker
        // late).
        let late_median = lags.p50 * 1e3 > f64::from(on_time.limit_ns());
        let carried = stalls.is_some() && {
            let held = self.closed_loop();
            held.connections_needed <= held.connections
        };
        let persistent = late_median && is_closed_loop(self.backlogged_share()) && !carried;
        let closed_loop = backlog > 0 && (persistent || stalls.is_none());
        let stalls = stalls.filter(|_| !closed_loop);
        // A brief backlog with the client's host quiet: every connection waited for a reply
        // at once, so the target paused (its own core stalled, or it slowed for a moment).
        // Little's law at the mean latency says nothing about such a pause; keeping the load
        // open through it takes connections for every request due while it lasts.
        let per_agent = self.per_agent_rate();
        let through_pause =
            ((per_agent * lags.max / 1e6 / self.config.depth as f64).ceil() as usize).max(1);
        let (connections, depth) = (self.config.connections, self.config.depth);
        let cause = match stalls {
            _ if closed_loop && !persistent => LateCause::TargetPaused {
                backlog,
                lag_max_us: lags.max.into(),
                through_pause,
                depth,
                connections,
            },
            Some(host) if late_median => LateCause::WokenLate { host },
            Some(host) => LateCause::HostStalls { host },
            None if closed_loop => LateCause::Backlog {
                backlog,
                connections,
                depth,
            },
            None if late_median => LateCause::SendCost {
                per_worker_rate: per_worker.into(),
            },
            None => LateCause::UnseenStalls,
        };
        Lateness {
            backlog,
            persistent,
            closed_loop,
            through_pause,
            cause,
        }
    }

    /// The reason a failed departure check ends the point with: a closed loop (held, or
    /// for a moment), or late departures with their cause.
    fn departures_reason(&self, late: &Lateness, finding: DepartureFinding) -> Reason {
        let why = if late.closed_loop && late.persistent {
            // Late because every slot was taken: the load went closed-loop, and that
            // reason says how many connections would do.
            let mut held = self.closed_loop();
            held.lateness = Some(finding);
            Why::ClosedLoop(ClosedLoop::Held(held))
        } else if late.closed_loop {
            Why::ClosedLoop(ClosedLoop::Moment(ClosedLoopMoment {
                connections: self.config.connections,
                depth: self.config.depth,
                connections_needed: late.through_pause,
                backlog_max: late.backlog,
                send_lag_max_us: finding.send_lag_max_us,
                lateness: finding,
            }))
        } else {
            Why::Departures(Departures { lateness: finding })
        };
        Reason::new(why)
    }
}

/// The send lags' median, 99th percentile and maximum, µs.
#[derive(Debug, Clone, Copy)]
struct Lags {
    p50: f64,
    p99: f64,
    max: f64,
}

/// Why the requests left late, as [`Point::departures`] diagnoses it.
struct Lateness {
    /// The most due requests that waited for a free slot at once, over the agents.
    backlog: u64,
    /// Most requests late with the slots full in most reports: a held closed loop.
    persistent: bool,
    /// A backlog not the host's doing.
    closed_loop: bool,
    /// Connections per agent that would keep the load open through the longest lag.
    through_pause: usize,
    /// The cause.
    cause: LateCause,
}
