//! Replicated points (`replications:`): the same load run again with fresh connections and
//! a fresh seed, each run to its own verdict, and the point's answer the CI across the
//! runs' estimates (TailBench's defence against performance hysteresis: a run's memory
//! layout, connection placement and cores bias the whole run, which no CI within it sees).
//!
//! Pure functions of the runs' results: the coordinator decides after each run whether to
//! run again, and what the point's result is.

use statrs::distribution::{ContinuousCDF, Normal};
use vernier_stats::{Percentile, heterogeneity, mean_ci};

use super::reason::{
    Hysteresis, NoEstimate, Reason, Replications as TooFewRuns, TooFewSamples, Why,
};
use super::result::{
    AcrossMethod, AcrossRuns, PercentileResult, PointResult, Replication, SchedulePercentile,
    Spread, Verdict,
};
use crate::scenario::Replications;

pub use super::policy::HYSTERESIS_I2;

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
    run.reasons.iter().all(|r| r.kind().more_samples_help())
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
        return Next::Done(Box::new(failed_run(last, runs, plan, confidence)));
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
    let reason = match replication.disagreement() {
        Some(s) => hysteresis_reason(s, runs, p, width, replication.width_target_us),
        None => too_few_runs_reason(replication, runs, p, width),
    };
    let mut result = target;
    result.verdict = Verdict::NotAvailable;
    result.settle_answer();
    result.reasons = vec![reason];
    Next::Done(Box::new(result))
}

/// The point's N/A result after its last run (the `k`-th) did not measure what was asked:
/// that run's reasons, each naming it.
fn failed_run(
    last: &PointResult,
    runs: &[PointResult],
    plan: &Replications,
    confidence: f64,
) -> PointResult {
    let k = runs.len() as u32;
    let mut reasons: Vec<Reason> = last
        .reasons
        .iter()
        .map(|r| Reason {
            run: Some(k),
            ..r.clone()
        })
        .collect();
    if reasons.is_empty() {
        reasons.push(Reason::new(Why::TooFewSamples(TooFewSamples::NoEstimate(
            NoEstimate {
                estimate_missing_in_run: k,
            },
        ))));
    }
    summary(last, runs, plan, confidence, Verdict::NotAvailable, reasons)
}

/// `hysteresis`: the runs' estimates of `p` disagree beyond their own CIs (`s`), and the
/// CI across them is `width` µs wide where `width_target_us` was asked.
fn hysteresis_reason(
    s: &Spread,
    runs: &[PointResult],
    p: Percentile,
    width: f64,
    width_target_us: f64,
) -> Reason {
    Reason::new(Why::Hysteresis(Hysteresis {
        p,
        runs: runs.len() as u32,
        per_run: per_run(runs, p.percent()),
        low_us: s.low.into(),
        high_us: s.high.into(),
        spread_us: (s.high - s.low).into(),
        width_us: width.into(),
        width_target_us: width_target_us.into(),
        i2: s.i2,
        tau_us: s.tau_us,
        disjoint: !s.disjoint.is_empty(),
        outside: s
            .outside
            .iter()
            .map(|&k| {
                let kind = runs
                    .get(k as usize - 1)
                    .and_then(|r| r.reasons.first())
                    .map(Reason::kind);
                (k, kind)
            })
            .collect(),
        ci_hull: s.ci_hull,
    }))
}

/// `replications`: the runs agree, but `runs` of them are too few for a CI of `p` as
/// narrow as asked (it is `width` µs wide): about how many would do.
fn too_few_runs_reason(
    replication: &Replication,
    runs: &[PointResult],
    p: Percentile,
    width: f64,
) -> Reason {
    let k = runs.len() as u32;
    // The half-width shrinks as 1/√runs (and t's quantile with it, a little).
    let needed = (f64::from(k) * (width / replication.width_target_us).powi(2)).ceil();
    Reason::new(Why::Replications(TooFewRuns {
        p,
        runs: k,
        runs_needed: needed.into(),
        per_run: per_run(runs, p.percent()),
        width_us: width.into(),
        width_target_us: replication.width_target_us.into(),
        i2: replication.spread.as_ref().and_then(|s| s.i2),
    }))
}

/// Each run's estimate of percentile `p`, µs (none: the run had none).
fn per_run(runs: &[PointResult], p: f64) -> Vec<Option<f64>> {
    runs.iter()
        .map(|r| r.percentile(p).map(|q| q.value))
        .collect()
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
    let hysteresis = spread.as_ref().is_some_and(|s| s.disagrees(HYSTERESIS_I2));
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
        answer: verdict,
        verdict,
        reasons,
        more_time_s: None,
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
        // The session's, as for every point's verdict.
        budget: None,
        record: None,
        run: None,
        // Each run's own is in its result.
        without_stalls: None,
        drift: None,
        earned: None,
        // Replications decide on the runs' estimates of every request's tail.
        tail: crate::scenario::Tail::WithStalls,
        replication: Some(Box::new(Replication {
            method: AcrossMethod::TIntervalOverRuns,
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

/// How the runs' estimates of `p` lie against their own CIs (`None` with fewer than two
/// runs, or none with a CI).
fn spread(runs: &[PointResult], p: f64, confidence: f64) -> Option<Spread> {
    let z = Normal::standard().inverse_cdf((1.0 + confidence) / 2.0);
    // (run, estimate, its CI)
    type Run = (u32, f64, Option<(f64, f64)>);
    let all: Vec<Run> = runs
        .iter()
        .enumerate()
        .filter_map(|(i, r)| {
            let q = r.percentile(p)?;
            Some((i as u32 + 1, q.value, q.ci_low.zip(q.ci_high)))
        })
        .collect();
    let with_ci: Vec<(u32, f64, f64, f64)> = all
        .iter()
        .filter_map(|&(run, x, ci)| ci.map(|(lo, hi)| (run, x, lo, hi)))
        .collect();
    if all.len() < 2 || with_ci.is_empty() {
        return None;
    }
    let estimates: Vec<f64> = with_ci.iter().map(|r| r.1).collect();
    let errors: Vec<f64> = with_ci.iter().map(|r| (r.3 - r.2) / (2.0 * z)).collect();
    let h = heterogeneity(&estimates, &errors).ok();
    let mut disjoint = Vec::new();
    for (i, a) in with_ci.iter().enumerate() {
        for b in &with_ci[i + 1..] {
            if a.3 < b.2 || b.3 < a.2 {
                disjoint.push((a.0, b.0));
            }
        }
    }
    let hull = (
        with_ci.iter().map(|r| r.2).fold(f64::INFINITY, f64::min),
        with_ci
            .iter()
            .map(|r| r.3)
            .fold(f64::NEG_INFINITY, f64::max),
    );
    let outside = all
        .iter()
        .filter(|(_, x, ci)| ci.is_none() && (*x < hull.0 || *x > hull.1))
        .map(|(run, ..)| *run)
        .collect();
    Some(Spread {
        p,
        low: all.iter().map(|r| r.1).fold(f64::INFINITY, f64::min),
        high: all.iter().map(|r| r.1).fold(f64::NEG_INFINITY, f64::max),
        q: h.map(|h| h.q),
        i2: h.map(|h| h.i2),
        tau_us: h.map(|h| h.tau),
        disjoint,
        outside,
        ci_hull: hull,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coordinator::ReasonKind;
    use crate::coordinator::reason::{Confidence, HostKept, HostStalls, OutOfTime};
    use crate::scenario::CiWidth;

    fn run(k: u32, value: f64, ci: Option<(f64, f64)>, why: Option<ReasonKind>) -> PointResult {
        let mut r = PointResult::example(
            10_000.0,
            if why.is_some() {
                Verdict::NotAvailable
            } else {
                Verdict::Converged
            },
            vec![PercentileResult {
                p: 99.0,
                value,
                ci_low: ci.map(|c| c.0),
                ci_high: ci.map(|c| c.1),
                dependence: None,
            }],
        );
        r.run = Some(k);
        r.reasons = why
            .map(|kind| Reason::new(of_kind(kind)))
            .into_iter()
            .collect();
        r
    }

    /// A reason of `kind` with made-up figures (a run that ended with it).
    fn of_kind(kind: ReasonKind) -> Why {
        let timed_out = OutOfTime {
            p: Some(Percentile::P99),
            max_duration_s: 10.0.into(),
            ci_width_us: None,
        };
        match kind {
            ReasonKind::TooFewSamples => {
                Why::TooFewSamples(TooFewSamples::NoEstimate(NoEstimate {
                    estimate_missing_in_run: 1,
                }))
            }
            ReasonKind::Confidence => Why::Confidence(Confidence::OutOfTime(timed_out)),
            ReasonKind::HostStalls => Why::HostStalls(HostStalls {
                host: vernier_agent::StallReport::default(),
                value_us: 600.0.into(),
                host_late_p99_us: 900.0.into(),
                host_late_max_us: 9_000.0.into(),
                host_stalled_share: 0.02.into(),
                kept: HostKept::OutOfTime(timed_out),
            }),
            other => panic!("no made-up figures for {other}"),
        }
    }

    fn plan(min: u32, max: u32, width: f64) -> Replications {
        Replications {
            min,
            max,
            width: CiWidth::Relative(width),
            pause: std::time::Duration::ZERO,
        }
    }

    #[test]
    fn runs_without_a_ci_far_outside_the_others_are_hysteresis() {
        // As memcached at 10,000 req/s gave on this host: four runs agreeing within
        // their CIs, two (disturbed by the host, no CI of their own) far above.
        let runs = vec![
            run(1, 69.1, Some((65.2, 78.4)), None),
            run(2, 67.7, Some((64.8, 72.8)), None),
            run(3, 64.5, Some((63.1, 69.6)), None),
            run(4, 439.8, None, Some(ReasonKind::TooFewSamples)),
            run(5, 684.8, None, Some(ReasonKind::HostStalls)),
            run(6, 71.8, Some((69.4, 78.7)), None),
        ];
        let Next::Done(result) = next(&runs, &plan(3, 6, 0.1), 0.95) else {
            panic!("six runs of six")
        };
        assert_eq!(result.verdict, Verdict::NotAvailable);
        let reason = &result.reasons[0];
        assert_eq!(reason.kind(), ReasonKind::Hysteresis, "{reason:#?}");
        let rep = result.replication.as_deref().unwrap();
        let s = rep.disagreement().unwrap();
        assert_eq!(s.outside, [4, 5]);
        // The four with a CI agree among themselves.
        assert!(
            s.i2.unwrap() < HYSTERESIS_I2 || s.disjoint.is_empty(),
            "{s:?}"
        );
        assert_eq!(s.ci_hull, (63.1, 78.7));
        let Why::Hysteresis(f) = &reason.why else {
            panic!("{reason:#?}")
        };
        assert_eq!(
            f.outside,
            [
                (4, Some(ReasonKind::TooFewSamples)),
                (5, Some(ReasonKind::HostStalls))
            ]
        );
        assert_eq!(f.ci_hull, (63.1, 78.7));
        assert_eq!((s.low, s.high), (64.5, 684.8));
        // The answer across runs: their mean, the t-interval cut at 0.
        let p99 = result.target().unwrap();
        assert!((p99.value - 232.95).abs() < 0.01, "{p99:?}");
        assert_eq!(p99.ci_low, Some(0.0));
    }

    #[test]
    fn a_run_without_a_ci_inside_the_others_is_not() {
        let runs = vec![
            run(1, 69.1, Some((65.2, 78.4)), None),
            run(2, 70.0, None, Some(ReasonKind::Confidence)),
            run(3, 67.7, Some((64.8, 72.8)), None),
        ];
        let Next::Done(result) = next(&runs, &plan(3, 3, 0.2), 0.95) else {
            panic!("three runs of three")
        };
        assert_eq!(result.verdict, Verdict::Converged, "{:#?}", result.reasons);
        let rep = result.replication.as_deref().unwrap();
        assert!(!rep.hysteresis);
        assert!(rep.spread.as_ref().unwrap().outside.is_empty());
    }
}
