//! The methodology in words: every sentence a reason says, and the findings of the checks
//! that reasons quote, rendered from their typed figures ([`super::reason`],
//! [`super::findings`]). Decisions return data; rewording a sentence touches this file
//! alone, and the figures a record carries are the ones its sentence quotes.

use std::time::Duration;

use vernier_stats::Percentile;

use super::event::CheckOutcome;
use super::findings::{
    AdfFinding, DepartureFinding, GapMisfit, GapTest, InterarrivalFinding, LateCause,
    SpearmanFinding,
};
use super::reason::{
    AgentLost, AgentsDisagree, ClosedLoop, Confidence, HeavyTail, HeavyTooFew, HeldClosedLoop,
    HostKept, HostStalls, Hysteresis, Independence, Interarrival, Moment, NoEstimate, NotReached,
    OutOfTime, Quit, Reason, ReasonKind, Recorded, Replications, TargetFailed, TooFewForCi,
    TooFewSamples, Why,
};
use super::result::WithoutStalls;

pub mod check;
mod ci;
mod over_run;
mod without_stalls;

use ci::{narrow, wide, wide_beyond, wide_found, wide_heavy};
pub use over_run::{drift, earned, host_fit, host_fit_short};
use without_stalls::{no_probe, thinned, touched, unsettled, untouched_few, untouched_wide};
pub use without_stalls::{without_stalls_call, without_stalls_scope};

impl Reason {
    /// The sentence a person reads.
    pub fn detail(&self) -> String {
        reason(self)
    }
}

impl serde::Serialize for Reason {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        Recorded {
            why: self.why.clone(),
            run: self.run,
            more_time: self.more_time,
            drifts: self.drifts,
            detail: self.detail(),
        }
        .serialize(serializer)
    }
}

/// The sentence of `reason`: what was found, with its figures, and for a replicated
/// point's run, which run.
pub fn reason(reason: &Reason) -> String {
    let mut text = why(&reason.why);
    if let Some(more) = &reason.more_time {
        text += &format!(
            "; the {} samples the precision asked needs would take {} more at this rate (c while it measures; or give more time: --duration on the command line, limits.max_duration in a file)",
            more.samples,
            humantime::format_duration(Duration::from_secs(more.seconds.ceil() as u64))
        );
    }
    if reason.drifts {
        text += "; but the latency drifts: its CI no longer narrows as 1/√n, and no time would bring the precision asked";
    }
    match reason.run {
        Some(k) => format!("run {k}: {text}"),
        None => text,
    }
}

/// The sentence of one kind of reason with its figures.
pub fn why(why: &Why) -> String {
    match why {
        Why::LoadNotReached(f) => not_reached(f),
        Why::ClosedLoop(ClosedLoop::Held(f)) => held_closed_loop(f),
        Why::ClosedLoop(ClosedLoop::Moment(f)) => format!(
            "closed loop for a moment: {}; the lateness moves the answer: {}",
            late_cause(&f.lateness),
            departures(&f.lateness)
        ),
        Why::Interarrival(Interarrival::Failed(f)) => match f.tries {
            Some(tries) => format!(
                "agent {} cannot generate the {} inter-arrival process after {tries} tries: {} (too few connections, or an overloaded client?)",
                f.agent,
                f.process,
                interarrival(&f.finding)
            ),
            None => format!(
                "agent {}'s departures are not {} (not enforced: interarrival_check: report): {}",
                f.agent,
                f.process,
                interarrival(&f.finding)
            ),
        },
        Why::Interarrival(Interarrival::OutOfTime(f)) => out_of_time(f, "inter-arrival"),
        Why::Departures(f) => format!(
            "the client's late departures move the answer: {}; cause: {}",
            departures(&f.lateness),
            late_cause(&f.lateness)
        ),
        Why::Independence(Independence::Stuck(f)) => format!(
            "agent {}'s samples stay correlated: {}",
            f.agent,
            spearman(&f.spearman)
        ),
        Why::Independence(Independence::Thinned(f)) => format!(
            "samples are independent only one in {}: {} samples at {:.4}% sampling would take {:.0}s, {}",
            f.lag,
            f.samples_wanted,
            f.sampling_rate * 100.0,
            f.seconds_needed,
            match (f.max_tries, f.seconds_left) {
                (Some(tries), _) => format!("and the {tries} tries are used up"),
                (None, left) => format!("beyond the {:.0}s left", left.unwrap_or(0.0)),
            }
        ),
        Why::Stationarity(f) => format!(
            "agent {}'s latencies are not stationary: {}",
            f.agent,
            adf(&f.adf)
        ),
        Why::WarmupStationarity(f) => format!(
            "the per-window latency never settled within the warm-up limit of {:?}: {} (a server saturated at this load?)",
            Duration::from_secs_f64(f.warmup_max_s.max(0.0)),
            adf(&f.adf)
        ),
        Why::AgentsDisagree(f) => agents_disagree(f),
        Why::TooFewSamples(TooFewSamples::Ci(f)) => too_few(f),
        Why::TooFewSamples(TooFewSamples::NoEstimate(NoEstimate {
            estimate_missing_in_run: k,
        })) => format!("run {k} has no estimate of the target percentile"),
        Why::TooFewSamples(TooFewSamples::Untouched(f)) => untouched_few(f),
        Why::HeavyTail(HeavyTail::TooFew(f)) => heavy_too_few(f),
        Why::HeavyTail(HeavyTail::Wide(f)) => wide_heavy(f),
        Why::HostStalls(f) => host_stalls(f),
        Why::Confidence(Confidence::Wide(f)) => wide(f),
        Why::Confidence(Confidence::Narrow(f)) => narrow(f),
        Why::Confidence(Confidence::OutOfTime(f)) => out_of_time(f, "measurement"),
        Why::Confidence(Confidence::UntouchedWide(f)) => untouched_wide(f),
        Why::Confidence(Confidence::Unsettled(f)) => unsettled(f),
        Why::Quit(Quit { moment }) => match moment {
            Moment::InRun => "the user quit; what was collected is kept".into(),
            Moment::BetweenRuns => "the user quit between runs; the runs so far are kept".into(),
        },
        Why::AgentLost(AgentLost {
            agent,
            moment,
            cause,
        }) => match moment {
            Moment::InRun => format!("agent {agent} was lost: {cause}"),
            Moment::BetweenRuns => format!("agent {agent} was lost between runs: {cause}"),
        },
        Why::TargetFailed(f) => target_failed(f),
        Why::AcceptedEmpty(_) => "accepted before any sample was measured".into(),
        Why::Hysteresis(f) => hysteresis(f),
        Why::Replications(f) => replications(f),
        Why::Touched(f) => touched(f),
        Why::NoProbe(_) => no_probe(),
        Why::Thinned(f) => thinned(f),
    }
}

/// Why the tail without stalls did not converge, in words (`None` when it did), with what
/// more time would buy it when it would.
pub fn without_stalls_short(tail: &WithoutStalls) -> Option<String> {
    let why = without_stalls_why(tail)?;
    Some(match tail.more_time {
        Some(more) => format!(
            "{why}; the {} untouched samples its precision needs would take {} more at this rate (c while it measures; or --duration, limits.max_duration)",
            more.samples,
            humantime::format_duration(std::time::Duration::from_secs(more.seconds.ceil() as u64))
        ),
        None => why,
    })
}

/// The tail without stalls in a line under a table's row of it, naming it when it was
/// the tail `asked` for.
pub fn without_stalls_line(tail: &WithoutStalls, asked: bool) -> String {
    without_stalls::line(tail, asked, without_stalls_short(tail))
}

/// Why the tail without stalls did not converge, in words: its reason's sentence.
fn without_stalls_why(tail: &WithoutStalls) -> Option<String> {
    tail.short.as_ref().map(why)
}

/// A check's outcome in a progress line: a check that gates nothing never says FAIL.
pub fn check_outcome(outcome: CheckOutcome) -> &'static str {
    match outcome {
        CheckOutcome::Passed => "pass",
        CheckOutcome::Failed => "FAIL",
        CheckOutcome::Reported => "reported (gates nothing)",
    }
}

/// A check's outcome leading a figure's caption.
pub fn check_outcome_caption(outcome: CheckOutcome) -> &'static str {
    match outcome {
        CheckOutcome::Passed => "Pass",
        CheckOutcome::Failed => "Fail",
        CheckOutcome::Reported => "Reported (gates nothing)",
    }
}

/// What a user can change so that the next run has an answer.
pub fn suggestion(kind: ReasonKind) -> &'static str {
    match kind {
        ReasonKind::LoadNotReached => {
            "the agents cannot send this rate: add workers or agents, or ask for less load"
        }
        ReasonKind::ClosedLoop => {
            "too few request slots for this load and latency: raise connections (or depth) to the figure above"
        }
        ReasonKind::Interarrival => {
            "departures do not follow the arrival process: pin the workers (cpus), add workers, or lower the load"
        }
        ReasonKind::Independence => {
            "latencies stay correlated: sample less (sampling.rate), allow more time (limits), or find the server's periodic stalls"
        }
        ReasonKind::Stationarity => {
            "latency drifts while measuring: warm up longer (warmup.max) or look for a trend on the server (GC, compaction)"
        }
        ReasonKind::WarmupStationarity => {
            "latency never settled: warm up longer (warmup.max), or the server cannot sustain this rate"
        }
        ReasonKind::AgentsDisagree => {
            "agents see different latencies: compare their paths to the target (NUMA, NIC queues, routes)"
        }
        ReasonKind::Departures => {
            "the client's late sends move the answer: pin the agent to a quiet core (cpus), add workers or agents, or lower the load"
        }
        ReasonKind::HostStalls => {
            "the host deschedules the server or the client for milliseconds: measure on a quieter host (dedicated cores, no CPU overcommit), or ask for a lower percentile or a wider CI"
        }
        ReasonKind::TooFewSamples | ReasonKind::Confidence | ReasonKind::HeavyTail => {
            "ask for less (a wider ci.width or a lower percentile) or allow more (--duration or limits.max_duration, max_tries; c continues live)"
        }
        ReasonKind::Quit => "stopped by the user: run again for a verdict",
        ReasonKind::AgentLost => {
            "an agent stopped answering: check its host and network, then run again"
        }
        ReasonKind::AcceptedEmpty => "accept once measurement has started",
        ReasonKind::Hysteresis => {
            "each run settles somewhere else (memory layout, connection placement, cores): report the across-run spread, pin the server and the agents (cpus, target_cpus), or allow more runs (replications.max)"
        }
        ReasonKind::Replications => {
            "allow more runs (replications.max) or a wider replications.width"
        }
        ReasonKind::TargetFailed => {
            "the target stopped answering: check that it is up and reachable, then run again"
        }
        ReasonKind::TooFewPairs => "allow more pairs of blocks (--pairs)",
        ReasonKind::Touched => {
            "stalls touch too many requests for the tail without them: measure on a quieter host (dedicated cores, no CPU overcommit), or ask for the tail with them (ci.tail: with_stalls)"
        }
        ReasonKind::NoProbe => {
            "no probe recorded stalls, so the tail without them cannot be told apart: ask for the tail with stalls (ci.tail: with_stalls)"
        }
        ReasonKind::Thinned => {
            "the tail without stalls needs every request kept: leave sampling.rate at 1 and share the load among more agents (each keeps only so many a second), or ask for the tail with stalls (ci.tail: with_stalls)"
        }
    }
}

fn not_reached(f: &NotReached) -> String {
    format!(
        "load not reached: achieved {:.0} req/s (sent {:.0}) of {:.0} with {} agent(s); {}more workers or agents are needed",
        f.achieved_rate,
        f.sent_rate,
        f.target_rate,
        f.agents,
        f.send_lag_p50_us.map_or(String::new(), |l| format!(
            "requests leave {l:.0} µs late (median); "
        )),
    )
}

fn held_closed_loop(f: &HeldClosedLoop) -> String {
    let needed = f.connections_needed;
    let cure = if needed <= f.connections {
        format!(
            "by Little's law {needed} connection(s) would carry it at that latency, so the backlog is the target's: it answered {:.0} req/s of the {:.0} asked, and more connections would only queue there; ask for less than it serves",
            f.achieved_rate, f.target_rate
        )
    } else {
        format!("about {needed} connections per agent would do")
    };
    let text = format!(
        "closed loop: {} connection(s) × depth {} per agent cannot carry {:.0} req/s at {:.1} µs mean latency (achieved {:.0} req/s, {} requests waiting for a free slot); {cure}",
        f.connections, f.depth, f.target_rate, f.latency_mean_us, f.achieved_rate, f.backlog,
    );
    match &f.lateness {
        Some(late) => format!(
            "{text}; the lateness moves the answer: {}",
            departures(late)
        ),
        None => text,
    }
}

/// The time limit ran out in `phase` (`inter-arrival`, `measurement`).
fn out_of_time(f: &OutOfTime, phase: &str) -> String {
    format!(
        "out of time: max_duration {:?} reached in the {phase} phase{}",
        Duration::from_secs_f64(f.max_duration_s.max(0.0)),
        f.ci_width_us
            .map_or(String::new(), |w| format!(" with the CI {w:.1} µs wide"))
    )
}

fn agents_disagree(f: &AgentsDisagree) -> String {
    format!(
        "the agents' {} intervals do not overlap: {}",
        f.p,
        agent_intervals(f.p, &f.intervals)
    )
}

/// `p99 per agent, µs: agent 0: 80.1 [78.0, 82.3]; agent 1: …`: the agreement check's
/// finding.
pub fn agent_intervals(p: Percentile, intervals: &[super::reason::AgentInterval]) -> String {
    let listing: Vec<String> = intervals
        .iter()
        .map(|c| {
            format!(
                "agent {}: {:.1} [{:.1}, {:.1}]",
                c.agent, c.value, c.low, c.high
            )
        })
        .collect();
    format!("{p} per agent, µs: {}", listing.join("; "))
}

/// Too few samples for the CI: the confidence check's finding, and the reason's.
pub fn too_few(f: &TooFewForCi) -> String {
    match &f.need {
        None => format!(
            "too few samples for the {} CI at {:.0}%: it needs at least {}, there are {}",
            f.p,
            f.confidence * 100.0,
            f.min_samples,
            f.samples
        ),
        Some(need) => format!(
            "too few samples for a dependence-valid {} CI at {:.0}%: {need}{}; about {} needed, there are {}",
            f.p,
            f.confidence * 100.0,
            f.correlated_over
                .zip(f.dependence_s)
                .map_or(String::new(), |(m, s)| format!(
                    "; batches of {m} samples span {s:.1} s of this load"
                )),
            f.min_samples,
            f.samples
        ),
    }
}

fn heavy_too_few(f: &HeavyTooFew) -> String {
    let p = f.too_few.p;
    format!(
        "heavy tail: {}; even as if the samples were independent, the {p} CI is {:.1} µs wide; \
         the latencies' own tail is {:.1}× wider than an exponential's at {p} and {:.1}× at {}, \
         so the slowest requests hold up those behind them and come in clusters",
        too_few(&f.too_few),
        f.ci_width_us,
        f.heaviness,
        f.heaviness_inside,
        f.inside
    )
}

fn host_stalls(f: &HostStalls) -> String {
    let h = &f.host;
    match &f.kept {
        HostKept::TooFew(t) => format!(
            "{}; the samples beyond {} ({:.1} µs) come in clusters because the host stalls: on {}, {h}",
            too_few(t),
            t.p,
            f.value_us,
            h.name()
        ),
        HostKept::Wide(w) => format!(
            "the host's stalls keep the {p} CI wide: {}; on {}, {h}: {p} ({:.1} µs) lies within their reach, so requests caught by a stall make the tail and come in clusters (variance ×{:.1}); {}",
            wide_found(w),
            h.name(),
            f.value_us,
            w.variance_inflation.unwrap_or(f64::NAN),
            wide_beyond(w),
            p = w.p,
        ),
        HostKept::OutOfTime(t) => format!(
            "{}; the host's stalls kept the {p} CI wide: on {}, {h}: {p} ({:.1} µs) lies within their reach",
            out_of_time(t, "measurement"),
            h.name(),
            f.value_us,
            p =
                t.p.map_or_else(|| "target percentile".to_string(), |p| p.to_string()),
        ),
    }
}

fn target_failed(f: &TargetFailed) -> String {
    format!(
        "the target stopped answering agent {} at {:.2}s: {} failed requests and {} failed connects since, and no reply for {:.1}s",
        f.agent, f.at_s, f.failed, f.connect_failures, f.for_s
    )
}

/// `80.3, 330.6, …`: each run's estimate.
fn per_run(estimates: &[Option<f64>]) -> String {
    estimates
        .iter()
        .map(|e| e.map_or("-".to_string(), |v| format!("{v:.1}")))
        .collect::<Vec<_>>()
        .join(", ")
}

fn hysteresis(f: &Hysteresis) -> String {
    let mut parts = Vec::new();
    if let (Some(i2), Some(tau), true) = (f.i2, f.tau_us, f.disjoint) {
        parts.push(format!(
            "I² = {i2:.2} ({:.0}% of the spread between the runs with a CI is beyond \
             what their CIs explain, τ = {tau:.1} µs)",
            i2 * 100.0
        ));
    }
    if !f.outside.is_empty() {
        let (lo, hi) = f.ci_hull;
        let one = f.outside.len() == 1;
        parts.push(format!(
            "run{} {} (no CI of {}: {}) outside every other run's CI ({lo:.1} to {hi:.1} µs)",
            if one { "" } else { "s" },
            f.outside
                .iter()
                .map(|(k, _)| k.to_string())
                .collect::<Vec<_>>()
                .join(", "),
            if one { "its own" } else { "their own" },
            f.outside
                .iter()
                .map(|(_, kind)| kind.map_or("-", ReasonKind::name))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    format!(
        "the runs disagree beyond their own CIs: {} per run {} µs, from {:.1} to \
         {:.1}; {}; the CI across {} runs is {:.1} µs wide, {:.1} asked",
        f.p,
        per_run(&f.per_run),
        f.low_us,
        f.high_us,
        parts.join("; "),
        f.runs,
        f.width_us,
        f.width_target_us
    )
}

fn replications(f: &Replications) -> String {
    format!(
        "the CI of {p} across {} runs is {:.1} µs wide, {:.1} asked: \
         about {:.0} runs would do ({p} per run {} µs; {})",
        f.runs,
        f.width_us,
        f.width_target_us,
        f.runs_needed,
        per_run(&f.per_run),
        match f.i2 {
            Some(i2) => format!("their own CIs explain the spread, I² = {i2:.2}"),
            None => "fewer than two runs have a CI of their own, so whether \
                     they disagree beyond it is not known"
                .to_string(),
        },
        p = f.p,
    )
}

// ---- the checks' findings that reasons quote ----

/// A p-value as people read them.
pub fn fmt_p(p: f64) -> String {
    if p < 1e-4 {
        format!("{p:.1e}")
    } else {
        format!("{p:.4}")
    }
}

/// The ADF test's finding.
pub fn adf(f: &AdfFinding) -> String {
    match f {
        AdfFinding::Tested {
            t,
            critical_5,
            pvalue,
            lags,
            stationary,
        } => format!(
            "ADF t = {t:.2} (5% critical {critical_5:.2}), p = {}, {lags} lags: {}",
            fmt_p(pvalue.get()),
            if *stationary {
                "stationary"
            } else {
                "a unit root cannot be ruled out"
            }
        ),
        AdfFinding::Flat => "the series does not vary: stationary".to_string(),
        AdfFinding::Failed { error } => format!("ADF could not run: {error}"),
    }
}

/// Spearman's finding.
pub fn spearman(f: &SpearmanFinding) -> String {
    match f {
        SpearmanFinding::Tested {
            rho,
            pvalue,
            lag,
            last_lag,
        } => match lag {
            Some(1) => format!(
                "Spearman ρ at lag 1 = {rho:.4}, p = {}: independent",
                fmt_p(pvalue.get())
            ),
            Some(lag) => format!(
                "Spearman ρ at lag 1 = {rho:.4}, p = {}: correlated; independent from lag {lag}",
                fmt_p(pvalue.get())
            ),
            None => format!(
                "Spearman ρ at lag 1 = {rho:.4}, p = {}: still correlated at lag {last_lag}",
                fmt_p(pvalue.get())
            ),
        },
        SpearmanFinding::TooFew => "too few samples to test".to_string(),
        SpearmanFinding::Failed { error } => format!("Spearman could not run: {error}"),
    }
}

/// The inter-arrival test's finding.
pub fn interarrival(f: &InterarrivalFinding) -> String {
    let (mean, target) = (f.mean_gap_us, f.target_gap_us);
    let mut text = match &f.test {
        GapTest::AndersonDarling {
            statistic,
            critical_5,
            pvalue,
            fits,
        } => format!(
            "Anderson-Darling A² = {statistic:.3} (5% critical {critical_5:.3}), p {} {}: {}; mean gap {mean:.1} µs, target {target:.1} µs",
            if *pvalue <= 0.01 || *pvalue >= 0.15 {
                "≈"
            } else {
                "="
            },
            fmt_p(pvalue.get()),
            if *fits {
                "exponential"
            } else {
                "not exponential"
            },
        ),
        GapTest::AndersonDarlingFailed { error } => {
            format!("Anderson-Darling could not run: {error}")
        }
        GapTest::Dispersion { cv, max_cv } => format!(
            "coefficient of variation {cv:.3} (fixed gaps allow {max_cv}); mean gap {mean:.1} µs, target {target:.1} µs"
        ),
        GapTest::MeanOnly { shape } => format!(
            "no goodness-of-fit test for {shape} gaps: mean gap {mean:.1} µs against {target:.1} µs"
        ),
    };
    if let Some(off) = f.mean_off {
        text += &format!("; the mean is {:.0}% off", off * 100.0);
    }
    if let Some(misfit) = &f.misfit {
        text += "; ";
        text += &gap_misfit(misfit);
    }
    text
}

/// Why exponential gaps do not fit.
pub fn gap_misfit(f: &GapMisfit) -> String {
    match *f {
        GapMisfit::Floor {
            floor_us,
            exponential_share,
        } => format!(
            "hardly any gap is shorter than {floor_us:.1} µs, where an exponential has {:.0}% of its gaps: \
             each request costs the agent about that much to send, so at this rate per worker \
             it cannot draw the short gaps (fewer requests per worker, on more cores, would)",
            exponential_share * 100.0
        ),
        GapMisfit::Bursts {
            share,
            short_us,
            exponential_share,
        } => format!(
            "{:.0}% of the gaps are under {short_us:.1} µs where an exponential has {:.0}%: departures \
             come in bursts (a worker that waits for a core sends late, then all at once: is \
             the client shared with the target or other busy threads?)",
            share * 100.0,
            exponential_share * 100.0
        ),
    }
}

/// The departure check's finding.
pub fn departures(f: &DepartureFinding) -> String {
    let on_text = match (f.on_schedule_us, f.on_schedule_ci) {
        (Some(v), Some((low, high))) => format!("{v:.1} µs [{low:.1}, {high:.1}]"),
        (Some(v), None) => format!("{v:.1} µs"),
        (None, _) => "too few to tell".to_string(),
    };
    format!(
        "{} of the {:.0}% of requests sent within {:.0} µs of schedule: {on_text}; of all: {:.1} µs \
         (allowed ±{:.1} µs, {:.0}% of the CI width asked); send lag p50 {:.1} µs, p99 {:.1} µs, max {:.1} µs",
        f.p,
        f.on_schedule_share * 100.0,
        f.on_schedule_within_us,
        f.all_us,
        f.allowed_us,
        f.share_of_width * 100.0,
        f.send_lag_p50_us,
        f.send_lag_p99_us,
        f.send_lag_max_us
    )
}

/// Why requests left late, as the departure check diagnosed it.
pub fn late_cause(f: &DepartureFinding) -> String {
    let (p50, p99, max) = (f.send_lag_p50_us, f.send_lag_p99_us, f.send_lag_max_us);
    match &f.cause {
        LateCause::TargetPaused {
            backlog,
            lag_max_us,
            through_pause,
            depth,
            connections,
        } => format!(
            "the target paused: every connection waited for a reply at once, so up to {backlog} due requests were held back, the longest {lag_max_us:.0} µs, while the client's host was quiet; \
             the requests the pause delayed are then measured from when they could leave, not from when they were due. \
             Keeping the load open through a pause of {lag_max_us:.0} µs takes about {through_pause} connections per agent at depth {depth} ({connections} given); \
             their latency will then include the pause"
        ),
        LateCause::WokenLate { host } => format!(
            "the client's host wakes it late: half the requests leave over {p50:.1} µs late (p99 {p99:.1} µs, max {max:.1} µs) with free slots, as the host probe's own wake-ups on {}: {host}; measure from a quieter host or core, or with `poll: spin`",
            host.name()
        ),
        LateCause::HostStalls { host } => format!(
            "stalls of the client's host: most requests leave on time (lag p50 {p50:.1} µs) but some wait for the core (p99 {p99:.1} µs, max {max:.1} µs), as the host probe saw on {}: {host}; measure from a quieter host or core",
            host.name()
        ),
        LateCause::Backlog {
            backlog,
            connections,
            depth,
        } => format!(
            "a backlog (up to {backlog} due requests waited for a free slot): {connections} connections × depth {depth} are too few for this load"
        ),
        LateCause::SendCost { per_worker_rate } => format!(
            "the per-request send cost: half the requests leave over {p50:.1} µs late, so one worker cannot keep pace with {per_worker_rate:.0} req/s (more workers, on more cores)"
        ),
        LateCause::UnseenStalls => format!(
            "stalls of the client's host: most requests leave on time (lag p50 {p50:.1} µs) but some wait for the core (p99 {p99:.1} µs, max {max:.1} µs); pin the agent to a quiet core"
        ),
    }
}
