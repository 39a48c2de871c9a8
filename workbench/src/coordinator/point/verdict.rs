//! The end of a point: out of time, or judged, its result is assembled (every percentile
//! with its CI, per agent, from the schedule, the host's stalls) and announced, and an N/A
//! names its cause.

use std::time::Duration;

use vernier_agent::StallReport;
use vernier_stats::{DriftVerdict, Percentile, min_samples_for_ci, percentile};

use super::super::checks;
use super::super::decision::Decision;
use super::super::event::{EventKind, Phase};
use super::super::policy::{
    HostStallFigures, OnSchedule, RateStanding, drift_windows, is_closed_loop, rate_standing,
    stalls_reach,
};
use super::super::reason::{
    ClosedLoop, Confidence, HostKept, HostStalls, Interarrival, OutOfTime, Reason, TooFewSamples,
    Why, Wide,
};
use super::super::result::{AgentResult, DriftSeen, PercentileResult, PointResult, Verdict};
use super::estimate::Estimate;
use super::state::{Point, Stage};
use crate::scenario::Method;

impl Point {
    /// Every agent's kept latencies, µs, ascending.
    pub(super) fn merged_sorted(&self) -> Vec<f64> {
        let mut all: Vec<f64> = (self.stage.tallies().iter())
            .flat_map(|t| t.samples.iter().map(|s| s.latency_ns as f64 / 1e3))
            .collect();
        all.sort_by(f64::total_cmp);
        all
    }

    /// Ends the point at its time limit. A measuring round of `method: vernier` takes the
    /// limit's look: its CI is the answer, converged when as narrow as asked (a look the
    /// clock chose needs no confirmation), wide when valid but wider. Otherwise N/A, naming
    /// the phase it was in; a measurement cut short names the cause an evaluation would
    /// ([`Point::tail_cause`]): a round the clock ended while the host stalled is the host's
    /// doing as much as one judged too wide.
    pub(super) fn out_of_time(&mut self, at: Duration, out: &mut Decision) {
        let phase = self.stage.phase();
        if phase == Phase::Warmup {
            self.warmup_failed(at, out);
            return;
        }
        if phase == Phase::Measure && self.config.method == Method::Vernier {
            if let Some(looks) = self.stage.looks_mut() {
                looks.at_limit = true;
            }
            let snapshot = self.snapshot();
            self.check_confidence_dependent(at, &snapshot, out);
            if matches!(self.stage, Stage::Done(_)) {
                return;
            }
        }
        let max_duration_s = self.config.limits.max_duration.as_secs_f64();
        if phase == Phase::Interarrival {
            let why = Why::Interarrival(Interarrival::OutOfTime(OutOfTime {
                p: None,
                max_duration_s: max_duration_s.into(),
                ci_width_us: self.looks.ci_width_us,
            }));
            self.finish_na(at, vec![Reason::new(why)], out);
            return;
        }
        let p = self.config.ci.percentile;
        let value_us = percentile(&self.merged_sorted(), p.fraction()).unwrap_or(f64::NAN);
        let timed_out = OutOfTime {
            p: Some(p),
            max_duration_s: max_duration_s.into(),
            ci_width_us: self.looks.ci_width_us,
        };
        // A last look as narrow as asked was not cut short by a wide CI: its figures say
        // what the stop waited for.
        let why = match self.stage.looks().and_then(|l| l.narrow.clone()) {
            Some(narrow) => Confidence::Narrow(narrow),
            None => Confidence::OutOfTime(timed_out),
        };
        let reason = self.tail_cause(at, value_us, Why::Confidence(why));
        self.end_unsettled(at, value_us, reason, out);
    }

    /// Whether the load went closed-loop while it measured: a backlog of requests waiting
    /// for a slot, and an answered rate short of the one asked by more than warm-up's
    /// tolerance.
    fn measured_closed_loop(&self, at: Duration) -> bool {
        let seconds = at.saturating_sub(self.stage.round().started).as_secs_f64();
        let answered = self.stage.round().received as f64 / seconds.max(1e-9);
        // Or a backlog that held most requests back past the send path's tolerance, as
        // the departure check's `persistent`: an agent quick enough to answer nearly the
        // rate through one busy connection is still a closed loop. Held back by the
        // backlog, not late for another reason: the slots were full in most reports
        // ([`CLOSED_LOOP_SHARE`](crate::coordinator::policy::CLOSED_LOOP_SHARE)); a host whose threads wake late sends most requests late
        // with free slots.
        let held_back = || {
            if !is_closed_loop(self.backlogged_share()) {
                return false;
            }
            let (late, all) = self.measuring().flat_map(|i| self.samples(i)).fold(
                (0usize, 0usize),
                |(late, all), s| {
                    let late_one = !OnSchedule::SEND_PATH.holds(u64::from(s.queueing_ns));
                    (late + usize::from(late_one), all + 1)
                },
            );
            all > 0 && 2 * late > all
        };
        seconds > 0.0
            && self.agents.iter().any(|a| a.load.backlog_max > 0)
            && (rate_standing(answered, self.config.rate, self.rate_tolerance())
                == RateStanding::Short
                || held_back())
    }

    /// The share of the measuring round's reports (each worker's, every 20 ms) in which
    /// some request waited for a free slot: how much of the time the backlog lasted.
    pub(super) fn backlogged_share(&self) -> f64 {
        let tallies = self.stage.tallies();
        let (backlogged, reports) = self
            .measuring()
            .filter_map(|i| tallies.get(i))
            .fold((0, 0), |(b, r), t| {
                (b + t.backlogged_reports, r + t.reports)
            });
        backlogged as f64 / reports.max(1) as f64
    }

    /// The probe report of the measurement with the latest wake-up (the worst core).
    pub(super) fn worst_host(&self) -> Option<&StallReport> {
        self.host()
            .iter()
            .filter(|h| h.wakeups > 0)
            .max_by(|a, b| a.late_max_us.total_cmp(&b.late_max_us))
    }

    /// The host's stalls, when they explain a tail at `value_us`: the probe's worst core
    /// during the measurement had stalls over 1 ms, the percentile lies within their reach
    /// (half the longest stall, or the lateness's p99, is at least half the value), and
    /// they took enough of the time to hold a real share of the tail
    /// ([`HOST_SHARE_OF_TAIL`](crate::coordinator::policy::HOST_SHARE_OF_TAIL)): two 8 ms stalls in 100 s reach any microsecond percentile
    /// but cannot be why a p99 comes in clusters.
    fn host_cause(&self, value_us: f64) -> Option<StallReport> {
        self.host_cause_at(self.config.ci.percentile, value_us)
    }

    /// [`Point::host_cause`] for percentile `q` at `value_us`.
    fn host_cause_at(&self, q: Percentile, value_us: f64) -> Option<StallReport> {
        let tail = q.tail();
        self.worst_host()
            .filter(|h| {
                h.stalls_over_1ms > 0
                    && stalls_reach(
                        HostStallFigures {
                            late_p99_us: h.late_p99_us,
                            late_max_us: h.late_max_us,
                            stalled_share: h.stalled_share,
                        },
                        value_us,
                        tail,
                    )
            })
            .map(StallReport::without_histogram)
    }

    /// Whether the host's stalls could make the tail heavy at `q` (at `value_us`) too, as
    /// [`Point::host_cause`] judges the target percentile: then a tail heavy there is not
    /// evidence of the service's own shape. The rule that a heavy tail is heavy inside it
    /// ([`super::super::policy::HEAVY_TAIL_ALSO_AT`]) assumes the stalls catch fewer requests than that; on this
    /// host they took 1-9% of the time on some hours, and the demo's exponential service
    /// was named heavy at p90 (2.1×) with its coordinator 4.1% stalled.
    pub(super) fn host_reaches(&self, q: Percentile, value_us: f64) -> bool {
        self.host_cause_at(q, value_us).is_some()
    }

    /// Why the target percentile's tail at `value_us` could not be pinned down: a load gone
    /// closed-loop while it measured ([`Point::measured_closed_loop`]), then the host's
    /// stalls, with the probe's figures, when they explain it ([`Point::host_cause`]: what
    /// the CI was kept from is `otherwise`'s), otherwise `otherwise`. Every N/A about that tail asks here, the
    /// evaluation's and the time limit's alike, so one tail gets one cause.
    pub(super) fn tail_cause(&self, at: Duration, value_us: f64, otherwise: Why) -> Reason {
        // A load gone closed-loop (requests waited for a slot, fewer answered than asked)
        // is why the samples fall short, whatever the host did meanwhile: one connection at
        // 80% of the server's capacity ended that way on this host, when warm-up had
        // happened to see the rate within its tolerance.
        // Unless the connections would carry the rate at the mean latency seen (Little's
        // law) and the host's stalls explain the tail: then the backlog is the stalls'
        // (a core not ours holds every reply until it is back, and the requests due
        // meanwhile wait for a slot), and the connections are not what to change.
        if self.measured_closed_loop(at) {
            let held = self.closed_loop();
            if held.connections_needed > held.connections || self.host_cause(value_us).is_none() {
                return Reason::new(Why::ClosedLoop(ClosedLoop::Held(held)));
            }
        }
        let Some(h) = self.host_cause(value_us) else {
            return Reason::new(otherwise);
        };
        let kept = match otherwise {
            // The stalls are the cause, not the tail's own shape.
            Why::Confidence(Confidence::Wide(w)) => HostKept::Wide(Wide {
                heaviness: None,
                heaviness_inside: None,
                inside: None,
                stalls: None,
                ..w
            }),
            Why::Confidence(Confidence::OutOfTime(t)) => HostKept::OutOfTime(t),
            Why::TooFewSamples(TooFewSamples::Ci(t)) => HostKept::TooFew(t),
            other => return Reason::new(other),
        };
        Reason::new(Why::HostStalls(HostStalls {
            host_late_p99_us: h.late_p99_us.into(),
            host_late_max_us: h.late_max_us.into(),
            host_stalled_share: h.stalled_share.into(),
            host: h,
            value_us: value_us.into(),
            kept,
        }))
    }

    pub(super) fn finish_na(&mut self, at: Duration, reasons: Vec<Reason>, out: &mut Decision) {
        self.finish(at, Verdict::NotAvailable, reasons, out);
    }

    /// Ends the point with `verdict`: its result is assembled, the last figures and the
    /// verdict announced.
    pub(super) fn finish(
        &mut self,
        at: Duration,
        verdict: Verdict,
        reasons: Vec<Reason>,
        out: &mut Decision,
    ) {
        let result = self.assemble(at, verdict, reasons);
        self.progress(at, out);
        let detail = match verdict {
            Verdict::NotAvailable => format!(
                "N/A: {}",
                result
                    .reasons
                    .iter()
                    .map(|r| r.kind().name())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            v => v.name().to_string(),
        };
        let detail = match self.run {
            Some(r) => format!("run {r}: {detail}"),
            None => detail,
        };
        let kind = if self.run.is_some() {
            EventKind::Run(Box::new(result.clone()))
        } else {
            EventKind::Verdict(Box::new(result.clone()))
        };
        self.phase(at, Stage::Done(Box::new(result)), detail, out);
        self.event(at, kind, out);
    }

    /// The point's result at `at`: every percentile reported with its CI (the method's
    /// kind), per agent, from the schedule, the host's stalls.
    fn assemble(&mut self, at: Duration, verdict: Verdict, reasons: Vec<Reason>) -> PointResult {
        let conf = self.config.ci.confidence;
        let all = self.merged_sorted();
        let percentiles = self.reported_percentiles();
        // Lancet's samples were thinned until independent: order-statistic CIs. vernier's
        // keep their dependence, and their CIs allow for it.
        let vernier = self.config.method == Method::Vernier;
        let every: Vec<usize> = (0..self.agents.len()).collect();
        let series = if vernier {
            self.concatenated(&every)
        } else {
            Vec::new()
        };
        let mut estimated: Vec<(Percentile, PercentileResult)> = percentiles
            .iter()
            .filter_map(|&p| Some((p, estimate(vernier, conf, &series, &all, p)?)))
            .collect();
        // Answered by an earlier look's CI: every request's target is that look's.
        let target = self.config.ci.percentile;
        if let Some(earned) = self.answering_earned().filter(|e| !e.without_stalls)
            && let Some((_, r)) = estimated.iter_mut().find(|(q, _)| q.same(target))
        {
            *r = earned.result(target);
        }
        let earned = self.earned_at_end().map(|(e, end)| e.said(end));
        let measured_s = at.saturating_sub(self.stage.round().started).as_secs_f64();
        let without_stalls = self.without_stalls(&percentiles);
        let agents = self.agent_results(at, vernier);
        let received = self.stage.round().received;
        let achieved_rate = if received > 0 && measured_s > 0.0 {
            received as f64 / measured_s
        } else {
            agents.iter().map(|a| a.achieved_rate).sum()
        };
        let more_time_s = (matches!(verdict, Verdict::NotAvailable | Verdict::Wide)
            && reasons.iter().any(|r| r.kind().more_samples_help()))
        .then(|| self.more_time())
        .flatten();
        // The tail asked for is the answer: what more time would buy it, when it has that.
        let without_stalls_more = (without_stalls.as_ref())
            .filter(|_| self.config.ci.tail == crate::scenario::Tail::WithoutStalls)
            .and_then(|w| w.more_time);
        let more_time_s = without_stalls_more.map(|m| m.seconds.get()).or(more_time_s);
        let drift = if vernier { self.drift_seen() } else { None };
        // A latency that drifts: no time would narrow the CI as 1/√n predicts, and the
        // point says none (its reasons keep what that prediction was).
        let drifting = drift.is_some_and(|d| d.drifting);
        let more_time_s = more_time_s.filter(|_| !drifting);
        let mut result = PointResult {
            answer: verdict,
            verdict,
            reasons,
            more_time_s,
            waived: self.stage.waived().to_vec(),
            target_rate: self.config.rate,
            achieved_rate,
            timestamps: self.config.timestamps.clone(),
            samples: all.len(),
            sampling_rate: self.rounds.sampling,
            duration_s: self.active(at).as_secs_f64(),
            ci_width_us: estimated
                .iter()
                .find(|(q, _)| q.same(self.config.ci.percentile))
                .and_then(|(_, r)| Some(r.ci_high? - r.ci_low?)),
            from_schedule: super::super::schedule::from_schedule(
                self.measuring()
                    .filter_map(|i| self.stage.tallies().get(i))
                    .map(|t| (&t.intended, &t.latency)),
                estimated.iter().map(|(p, _)| *p),
            ),
            percentiles: estimated.into_iter().map(|(_, r)| r).collect(),
            target_percentile: self.config.ci.percentile,
            tries: self.rounds.tries,
            min_samples: min_samples_for_ci(self.config.ci.percentile.fraction(), conf)
                .unwrap_or(0),
            round: self.rounds.round,
            agents,
            host: self
                .host()
                .iter()
                .map(StallReport::without_histogram)
                .collect(),
            budget: None,
            record: None,
            run: self.run,
            replication: None,
            without_stalls,
            drift,
            earned,
            tail: self.config.ci.tail,
        };
        result.settle_answer();
        result
    }

    /// How the target percentile moved over the round: every request's series of the
    /// first measuring agent, in send order ([`drift_of`]).
    pub(super) fn drift_seen(&mut self) -> Option<DriftSeen> {
        let first = self.measuring().next()?;
        let per_second = self.kept_per_agent();
        let series = self.latencies_in_send_order(first);
        drift_of(&series, self.config.ci.percentile, per_second)
    }

    /// The percentiles a result reports: the scenario's, with the target's among them.
    fn reported_percentiles(&self) -> Vec<Percentile> {
        let mut percentiles: Vec<Percentile> = self.config.percentiles.clone();
        if !percentiles
            .iter()
            .any(|p| p.same(self.config.ci.percentile))
        {
            percentiles.push(self.config.ci.percentile);
            percentiles.sort();
        }
        percentiles
    }

    /// Each agent's share of the result at `at`: its own estimate of the target percentile
    /// (with the method's kind of CI, `vernier` or not), its rate, lag, backlog and errors.
    fn agent_results(&mut self, at: Duration, vernier: bool) -> Vec<AgentResult> {
        let conf = self.config.ci.confidence;
        let point_s = self.active(at).as_secs_f64().max(1e-9);
        let p = self.config.ci.percentile;
        let series: Vec<Vec<f64>> = (0..self.agents.len())
            .map(|i| self.latencies_in_send_order(i))
            .collect();
        let tallies = self.stage.tallies();
        self.agents
            .iter()
            .zip(series)
            .enumerate()
            .map(|(i, (a, x))| AgentResult {
                percentile: {
                    let mut sorted = x.clone();
                    sorted.sort_by(f64::total_cmp);
                    estimate(vernier, conf, &x, &sorted, p)
                },
                lost: self.config.lost.get(i).cloned().flatten(),
                achieved_rate: a.load.received as f64 / point_s,
                interarrival: a.found.interarrival.clone(),
                send_lag_p99_us: tallies
                    .get(i)
                    .filter(|t| !t.send_lag.is_empty())
                    .map(|t| t.send_lag.value_at_quantile(0.99) as f64 / 1e3),
                backlog_max: a.load.backlog_max,
                errors: a.load.errors,
                retried: a.load.retried,
                samples: tallies.get(i).map_or(0, |t| t.samples.len()),
            })
            .collect()
    }
}

/// Percentile `p` of `series` (in send order; `sorted`, ascending) with its CI:
/// dependence-valid under `method: vernier` (`vernier`), order-statistic under Lancet's
/// (whose samples were thinned until independent).
fn estimate(
    vernier: bool,
    conf: f64,
    series: &[f64],
    sorted: &[f64],
    p: Percentile,
) -> Option<PercentileResult> {
    if vernier {
        Estimate::of_sorted(series, sorted, p, conf).map(|e| e.result(p))
    } else {
        checks::interval(sorted, p, conf).map(|(value, ci)| PercentileResult {
            p: p.percent(),
            value,
            ci_low: ci.map(|c| c.0),
            ci_high: ci.map(|c| c.1),
            dependence: None,
        })
    }
}

/// Percentile `p` of `series` (µs, in send order, kept at `per_second` a second) over the
/// round ([`vernier_stats::drift`], cut into the windows [`drift_windows`] gives), or `None`
/// when the series is too short for one window.
pub(super) fn drift_of(series: &[f64], p: Percentile, per_second: f64) -> Option<DriftSeen> {
    let windows = drift_windows(series.len(), per_second, p.tail());
    let d = vernier_stats::drift(series, p.fraction(), windows).ok()?;
    let (drifting, growth) = match d.verdict {
        DriftVerdict::Drifting { growth } => (true, Some(growth)),
        DriftVerdict::Steady { growth } => (false, Some(growth)),
        DriftVerdict::TooShort => (false, None),
    };
    let window_s = d.window_size as f64 / per_second.max(1e-9);
    Some(DriftSeen {
        p,
        drifting,
        growth,
        window_s,
        low_us: d.low.value,
        low_at_s: d.low.window as f64 * window_s,
        high_us: d.high.value,
        high_at_s: d.high.window as f64 * window_s,
    })
}
