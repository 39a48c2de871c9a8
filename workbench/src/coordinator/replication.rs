//! Replicated points (`replications:`): the same load run again with fresh connections and
//! a fresh seed, each run to its own verdict, and the point's answer the CI across the
//! runs' estimates (TailBench's defence against performance hysteresis: a run's memory
//! layout, connection placement and cores bias the whole run, which no CI within it sees).
//!
//! Pure functions of the runs' results: the coordinator decides after each run whether to
//! run again, and what the point's result is.

use statrs::distribution::{ContinuousCDF, Normal};
use vernier_stats::{heterogeneity, mean_ci};

use super::{
    AcrossRuns, PercentileResult, PointResult, Reason, ReasonKind, Replication, SchedulePercentile,
    Spread, Verdict,
};
use crate::scenario::Replications;

/// How the across-run CIs are made, as results name it.
pub const METHOD: &str = "t-interval over runs";

/// The least share of the runs' spread beyond their own CIs (I²) that is called
/// hysteresis: below it, the runs' own noise explains most of their differences.
pub const HYSTERESIS_I2: f64 = 0.5;

/// What comes after a run.
#[derive(Debug)]
pub enum Next {
    /// Another run.
    Run,
    /// The point's result.
    Done(Box<PointResult>),
}

/// N/A reasons after which a run's estimate still stands among the others': the run
/// measured what it was asked, only not precisely enough on its own.
fn imprecise_only(run: &PointResult) -> bool {
    run.reasons.iter().all(|r| {
        matches!(
            r.check,
            ReasonKind::TooFewSamples
                | ReasonKind::Confidence
                | ReasonKind::HeavyTail
                | ReasonKind::HostStalls
        )
    })
}

/// Decides after the last of `runs` (in order, at least one).
pub fn next(runs: &[PointResult], plan: &Replications, confidence: f64) -> Next {
    let Some(last) = runs.last() else {
        return Next::Run;
    };
    let k = runs.len() as u32;
    // A run that did not measure what was asked (the load not reached, a closed loop, a
    // lost agent, the user's quit) ends the point with its reasons.
    if last.verdict == Verdict::NotAvailable && !imprecise_only(last) || last.target().is_none() {
        let mut reasons: Vec<Reason> = last
            .reasons
            .iter()
            .map(|r| Reason {
                detail: format!("run {k}: {}", r.detail),
                ..r.clone()
            })
            .collect();
        if reasons.is_empty() {
            reasons.push(Reason {
                check: ReasonKind::TooFewSamples,
                detail: format!("run {k} has no estimate of the target percentile"),
                figures: Default::default(),
            });
        }
        return Next::Done(Box::new(summary(
            last,
            runs,
            plan,
            confidence,
            Verdict::NotAvailable,
            reasons,
        )));
    }
    if k < plan.min {
        return Next::Run;
    }
    let target = summary(last, runs, plan, confidence, Verdict::Converged, Vec::new());
    let Some(replication) = target.replication.as_deref() else {
        return Next::Done(Box::new(target));
    };
    let width = target.ci_width_us.unwrap_or(f64::INFINITY);
    if width <= replication.width_target_us {
        return Next::Done(Box::new(target));
    }
    if k < plan.max {
        return Next::Run;
    }
    let p = target.target_percentile;
    let reason = match &replication.hysteresis {
        Some(s) => Reason {
            check: ReasonKind::Hysteresis,
            detail: format!(
                "the runs disagree beyond their own CIs: {p} per run {} µs, from {:.1} to {:.1}; \
                 I² = {:.2} ({:.0}% of the spread is between runs, τ = {:.1} µs); the CI across \
                 {k} runs is {width:.1} µs wide, {:.1} asked",
                per_run(runs, p.percent()),
                s.low,
                s.high,
                s.i2,
                s.i2 * 100.0,
                s.tau_us,
                replication.width_target_us
            ),
            figures: [
                ("runs", f64::from(k)),
                ("low_us", s.low),
                ("high_us", s.high),
                ("spread_us", s.high - s.low),
                ("i2", s.i2),
                ("tau_us", s.tau_us),
                ("width_us", width),
                ("width_target_us", replication.width_target_us),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
        },
        None => {
            // The half-width shrinks as 1/√runs (and t's quantile with it, a little).
            let needed = (f64::from(k) * (width / replication.width_target_us).powi(2)).ceil();
            Reason {
                check: ReasonKind::Replications,
                detail: format!(
                    "the CI of {p} across {k} runs is {width:.1} µs wide, {:.1} asked: \
                     about {needed:.0} runs would do ({p} per run {} µs; {})",
                    replication.width_target_us,
                    per_run(runs, p.percent()),
                    match &replication.spread {
                        Some(s) => format!("their own CIs explain the spread, I² = {:.2}", s.i2),
                        None => "fewer than two runs have a CI of their own, so whether \
                                 they disagree beyond it is not known"
                            .to_string(),
                    }
                ),
                figures: [
                    ("runs", f64::from(k)),
                    ("runs_needed", needed),
                    ("width_us", width),
                    ("width_target_us", replication.width_target_us),
                ]
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
            }
        }
    };
    let mut result = target;
    result.verdict = Verdict::NotAvailable;
    result.reasons = vec![reason];
    Next::Done(Box::new(result))
}

/// `80.3, 330.6, …`: each run's estimate of percentile `p`.
fn per_run(runs: &[PointResult], p: f64) -> String {
    runs.iter()
        .map(|r| {
            r.percentile(p)
                .map_or("-".to_string(), |q| format!("{:.1}", q.value))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The point's result from its `runs` (`last` the last of them): the across-run CIs in
/// place of the percentiles, totals of the samples, tries and time, the last run's agents
/// and host figures.
pub fn summary(
    last: &PointResult,
    runs: &[PointResult],
    plan: &Replications,
    confidence: f64,
    verdict: Verdict,
    reasons: Vec<Reason>,
) -> PointResult {
    let ps: Vec<f64> = last.percentiles.iter().map(|q| q.p).collect();
    let across: Vec<AcrossRuns> = ps.iter().map(|&p| across(runs, p, confidence)).collect();
    let target_p = last.target_percentile.percent();
    let target = across.iter().find(|a| (a.p - target_p).abs() < 1e-9);
    let width_target_us = target.map_or(f64::NAN, |a| plan.width.target_us(a.mean));
    let spread = spread(runs, target_p, confidence);
    let hysteresis = spread
        .clone()
        .filter(|s| s.i2 >= HYSTERESIS_I2 && !s.disjoint.is_empty());
    let from_schedule = last
        .from_schedule
        .iter()
        .map(|q| {
            let all: Vec<&SchedulePercentile> =
                runs.iter().filter_map(|r| r.from_schedule(q.p)).collect();
            let n = all.len().max(1) as f64;
            SchedulePercentile {
                p: q.p,
                value: all.iter().map(|s| s.value).sum::<f64>() / n,
                actual: all.iter().map(|s| s.actual).sum::<f64>() / n,
            }
        })
        .collect();
    PointResult {
        verdict,
        reasons,
        waived: runs.iter().flat_map(|r| r.waived.clone()).collect(),
        target_rate: last.target_rate,
        achieved_rate: runs.iter().map(|r| r.achieved_rate).sum::<f64>() / runs.len() as f64,
        timestamps: last.timestamps.clone(),
        samples: runs.iter().map(|r| r.samples).sum(),
        sampling_rate: last.sampling_rate,
        duration_s: runs.iter().map(|r| r.duration_s).sum(),
        percentiles: across
            .iter()
            .map(|a| PercentileResult {
                p: a.p,
                value: a.mean,
                ci_low: a.ci_low,
                ci_high: a.ci_high,
                dependence: None,
            })
            .collect(),
        from_schedule,
        target_percentile: last.target_percentile,
        ci_width_us: target.and_then(|a| Some(a.ci_high? - a.ci_low?)),
        tries: runs.iter().map(|r| r.tries).sum(),
        min_samples: last.min_samples,
        round: last.round,
        agents: last.agents.clone(),
        host: last.host.clone(),
        record: None,
        run: None,
        replication: Some(Box::new(Replication {
            method: METHOD.into(),
            runs: runs.to_vec(),
            across,
            width_target_us,
            spread,
            hysteresis,
        })),
    }
}

/// Percentile `p` across the runs that estimated it.
fn across(runs: &[PointResult], p: f64, confidence: f64) -> AcrossRuns {
    let estimates: Vec<f64> = runs
        .iter()
        .filter_map(|r| r.percentile(p).map(|q| q.value))
        .collect();
    match mean_ci(&estimates, confidence) {
        Ok(ci) => AcrossRuns {
            p,
            estimates,
            mean: ci.mean,
            sd: ci.sd,
            // A latency is not negative: the interval's low end is cut at 0 (a t-interval
            // over a few widely spread runs reaches below it).
            ci_low: Some(ci.low.max(0.0)),
            ci_high: Some(ci.high),
        },
        Err(_) => AcrossRuns {
            p,
            mean: estimates.iter().sum::<f64>() / estimates.len().max(1) as f64,
            estimates,
            sd: f64::NAN,
            ci_low: None,
            ci_high: None,
        },
    }
}

/// How the runs' estimates of `p` lie against their own CIs (the runs with a CI; `None`
/// with fewer than two).
fn spread(runs: &[PointResult], p: f64, confidence: f64) -> Option<Spread> {
    let z = Normal::standard().inverse_cdf((1.0 + confidence) / 2.0);
    let with_ci: Vec<(u32, f64, f64, f64)> = runs
        .iter()
        .enumerate()
        .filter_map(|(i, r)| {
            let q = r.percentile(p)?;
            Some((i as u32 + 1, q.value, q.ci_low?, q.ci_high?))
        })
        .collect();
    if with_ci.len() < 2 {
        return None;
    }
    let estimates: Vec<f64> = with_ci.iter().map(|r| r.1).collect();
    let errors: Vec<f64> = with_ci.iter().map(|r| (r.3 - r.2) / (2.0 * z)).collect();
    let h = heterogeneity(&estimates, &errors).ok()?;
    let mut disjoint = Vec::new();
    for (i, a) in with_ci.iter().enumerate() {
        for b in &with_ci[i + 1..] {
            if a.3 < b.2 || b.3 < a.2 {
                disjoint.push((a.0, b.0));
            }
        }
    }
    Some(Spread {
        p,
        low: estimates.iter().copied().fold(f64::INFINITY, f64::min),
        high: estimates.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        q: h.q,
        i2: h.i2,
        tau_us: h.tau,
        disjoint,
    })
}
