//! The methodology's tests, each a pure function from data to a [`Check`] with its
//! figures. The state machine decides what to do with them.

use vernier_protocols::InterArrival;
use vernier_stats::{
    AdfOptions, LagSelection, Percentile, Regression, StatsError, adf, anderson_exponential,
    coefficient_of_variation, decorrelation_lag, default_lag_ladder, percentile, percentile_ci,
};

use super::check_next::Found;
use super::event::{Check, CheckData, CheckKind, CheckRole};
use super::findings::{AdfFinding, GapMisfit, GapTest, InterarrivalFinding, SpearmanFinding};
use super::policy::{
    FIXED_MAX_CV, GAP_FLOOR_RANK, SHORT_GAP_SHARE, bursty, fixed_gaps_fit, floor_testable,
    has_gap_floor, rate_error_allowed,
};
use super::result::InterarrivalResult;

/// Bins in the inter-arrival histogram a check carries.
const HISTOGRAM_BINS: usize = 40;
/// The histogram spans this many target means (the last bin holds the rest).
const HISTOGRAM_SPAN: f64 = 5.0;

/// The ADF test of a series: stationary when a unit root is rejected at `alpha`. A series
/// with no variation at all is stationary (the regression is singular, not the series).
/// The check, and its finding for the reasons that quote it.
pub(crate) fn stationarity(
    check: CheckKind,
    agent: Option<usize>,
    series: &[f64],
    alpha: f64,
    maxlag: Option<usize>,
) -> (Check, AdfFinding) {
    let options = AdfOptions {
        regression: Regression::C,
        lags: LagSelection::Aic,
        maxlag,
    };
    let n = series.len();
    let flat = series
        .iter()
        .all(|&x| (x - series.first().copied().unwrap_or(0.0)).abs() < 1e-12);
    let (pass, statistic, pvalue, finding) = match adf(series, &options) {
        Ok(r) => {
            let pass = r.pvalue < alpha;
            let finding = AdfFinding::Tested {
                t: r.stat.into(),
                critical_5: r.critical_values.five.into(),
                pvalue: r.pvalue.into(),
                lags: r.usedlag,
                stationary: pass,
            };
            (pass, Some(r.stat), Some(r.pvalue), finding)
        }
        Err(_) if flat => (true, None, None, AdfFinding::Flat),
        Err(e) => (
            false,
            None,
            None,
            AdfFinding::Failed {
                error: e.to_string(),
            },
        ),
    };
    let check = Check {
        check,
        agent,
        pass,
        role: CheckRole::Gate,
        statistic,
        pvalue,
        n,
        found: Found::Adf(finding.clone()),
        next: None,
        data: None,
    };
    (check, finding)
}

/// Why gaps of mean `mean` (ns) are not exponential, when the shape says: a floor under
/// them (the agent cannot send faster than its per-request cost), or too many short ones
/// (departures in bursts). `None` when neither stands out.
pub(crate) fn exponential_misfit(gaps_ns: &[f64], mean: f64) -> Option<GapMisfit> {
    if !floor_testable(gaps_ns.len()) || mean <= 0.0 {
        return None;
    }
    let mut sorted = gaps_ns.to_vec();
    sorted.sort_by(f64::total_cmp);
    // The 0.5th percentile: an exponential's is 0.005·mean.
    let floor = sorted[sorted.len() / GAP_FLOOR_RANK];
    let below_floor = 1.0 - (-floor / mean).exp();
    if has_gap_floor(floor, mean, below_floor) {
        return Some(GapMisfit::Floor {
            floor_us: (floor / 1e3).into(),
            exponential_share: below_floor.into(),
        });
    }
    let short = SHORT_GAP_SHARE * mean;
    let expected = 1.0 - (-SHORT_GAP_SHARE).exp();
    let seen = sorted.partition_point(|&g| g < short) as f64 / sorted.len() as f64;
    if bursty(seen, expected) {
        return Some(GapMisfit::Bursts {
            share: seen.into(),
            short_us: (short / 1e3).into(),
            exponential_share: expected.into(),
        });
    }
    None
}

/// Tests one agent's inter-departure gaps (ns) against the target process whose mean gap
/// per worker is `target_mean_ns`: Anderson-Darling with estimated scale for exponential
/// gaps (SciPy's `anderson(dist="expon")`), the coefficient of variation for fixed gaps,
/// and the mean alone for other shapes (there is no tabulated AD test for them).
pub(crate) fn interarrival(
    agent: usize,
    gaps_ns: &[u64],
    shape: &InterArrival,
    target_mean_ns: f64,
    alpha: f64,
    tolerance: f64,
) -> (Check, InterarrivalResult, InterarrivalFinding) {
    let x: Vec<f64> = gaps_ns.iter().map(|&g| g as f64).collect();
    let n = x.len();
    let mean = x.iter().sum::<f64>() / n.max(1) as f64;
    let mean_off = (mean - target_mean_ns).abs() / target_mean_ns;
    let mean_ok = mean_off <= rate_error_allowed(tolerance, n as f64);
    let data = Some(histogram(&x, target_mean_ns, shape));
    let (pass, statistic, pvalue, test) = match shape {
        InterArrival::Exp => match anderson_exponential(&x) {
            Ok(ad) => {
                let fits = ad.pvalue > alpha;
                let test = GapTest::AndersonDarling {
                    statistic: ad.statistic.into(),
                    critical_5: ad.critical_values[2].into(),
                    pvalue: ad.pvalue.into(),
                    fits,
                };
                (fits && mean_ok, ad.statistic, Some(ad.pvalue), test)
            }
            Err(e) => (
                false,
                f64::NAN,
                None,
                GapTest::AndersonDarlingFailed {
                    error: e.to_string(),
                },
            ),
        },
        InterArrival::Fixed => {
            // Fewer than two gaps have no dispersion to judge: fail rather than pass.
            let cv = coefficient_of_variation(&x).unwrap_or(f64::INFINITY);
            let test = GapTest::Dispersion {
                cv: cv.into(),
                max_cv: FIXED_MAX_CV.into(),
            };
            (fixed_gaps_fit(cv) && mean_ok, cv, None, test)
        }
        InterArrival::Dist(_) => (mean_ok, mean_off, None, GapTest::MeanOnly { shape: *shape }),
    };
    let has_fit = matches!(shape, InterArrival::Exp | InterArrival::Fixed);
    let finding = InterarrivalFinding {
        test,
        mean_gap_us: (mean / 1e3).into(),
        target_gap_us: (target_mean_ns / 1e3).into(),
        mean_off: (!mean_ok && has_fit).then_some(mean_off),
        misfit: match (shape, pass) {
            (InterArrival::Exp, false) => exponential_misfit(&x, mean),
            _ => None,
        },
    };
    let check = Check {
        check: CheckKind::Interarrival,
        agent: Some(agent),
        pass,
        role: CheckRole::Gate,
        statistic: Some(statistic).filter(|s| s.is_finite()),
        pvalue,
        n,
        found: Found::Gaps(finding.clone()),
        next: None,
        data,
    };
    let result = InterarrivalResult {
        statistic,
        pvalue,
        pass,
    };
    (check, result, finding)
}

fn histogram(x: &[f64], target_mean_ns: f64, shape: &InterArrival) -> CheckData {
    let bin_ns = HISTOGRAM_SPAN * target_mean_ns / HISTOGRAM_BINS as f64;
    let mut counts = vec![0u64; HISTOGRAM_BINS];
    for &g in x {
        let i = ((g / bin_ns) as usize).min(HISTOGRAM_BINS - 1);
        counts[i] += 1;
    }
    CheckData::Histogram {
        bin_ns,
        counts,
        target_mean_ns,
        shape: *shape,
    }
}

/// Spearman's correlation of latencies in send order, climbing the lag ladder until the
/// correlation is not significant: the check, the lag found (`None`: none on the ladder)
/// and the finding.
pub(crate) fn independence(agent: usize, latencies: &[f64], alpha: f64) -> Independent {
    let n = latencies.len();
    let (pass, lag, first, finding, data) =
        match decorrelation_lag(latencies, alpha, &default_lag_ladder(n)) {
            Ok(search) => {
                let first = search.tested.first().map(|c| (c.rho, c.pvalue));
                let finding = match first {
                    Some((rho, pvalue)) => SpearmanFinding::Tested {
                        rho: rho.into(),
                        pvalue: pvalue.into(),
                        lag: search.lag,
                        last_lag: search.tested.last().map_or(1, |c| c.lag),
                    },
                    None => SpearmanFinding::TooFew,
                };
                let data = CheckData::Correlogram {
                    lags: search
                        .tested
                        .iter()
                        .map(|c| (c.lag, c.rho, c.pvalue))
                        .collect(),
                };
                (
                    search.lag == Some(1),
                    search.lag,
                    first,
                    finding,
                    Some(data),
                )
            }
            // Latencies all equal are as independent as they can be.
            Err(e) => {
                let constant = matches!(e, StatsError::Constant { .. });
                let finding = SpearmanFinding::Failed {
                    error: e.to_string(),
                };
                (constant, constant.then_some(1), None, finding, None)
            }
        };
    let check = Check {
        check: CheckKind::Independence,
        agent: Some(agent),
        pass,
        role: CheckRole::Gate,
        statistic: first.map(|f| f.0),
        pvalue: first.map(|f| f.1),
        n,
        found: Found::Spearman(finding.clone()),
        next: None,
        data,
    };
    Independent {
        check,
        lag,
        finding,
    }
}

/// What [`independence`] found.
#[derive(Debug)]
pub(crate) struct Independent {
    /// The check as reported.
    pub(crate) check: Check,
    /// The lag from which the samples are independent (`None`: none on the ladder).
    pub(crate) lag: Option<usize>,
    /// Spearman's finding.
    pub(crate) finding: SpearmanFinding,
}

/// The order-statistic CI of percentile `p` of sorted µs values.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Interval {
    pub(crate) value: f64,
    pub(crate) low: f64,
    pub(crate) high: f64,
}

impl Interval {
    pub(crate) fn width(&self) -> f64 {
        self.high - self.low
    }
}

/// The estimate and CI of `p` from sorted values; `None` for the CI when the samples are
/// too few for one.
pub(crate) fn interval(
    sorted: &[f64],
    p: Percentile,
    confidence: f64,
) -> Option<(f64, Option<(f64, f64)>)> {
    let q = p.fraction();
    let value = percentile(sorted, q)?;
    Some((value, percentile_ci(sorted, q, confidence).ok()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::SmallRng;
    use rand::{RngExt, SeedableRng};

    fn exp_gaps(n: usize, mean: f64, seed: u64) -> Vec<u64> {
        let mut rng = SmallRng::seed_from_u64(seed);
        (0..n)
            .map(|_| (-mean * (1.0 - rng.random::<f64>()).ln()) as u64)
            .collect()
    }

    #[test]
    fn a_send_floor_and_bursts_are_named_when_the_exponential_test_fails() {
        // An agent that needs 6 µs per request: scheduled exponential gaps of mean 50 µs,
        // each departure no sooner than 6 µs after the last.
        let scheduled = exp_gaps(2000, 50_000.0, 3);
        let (mut due, mut sent, mut last) = (0u64, Vec::new(), 0u64);
        for g in &scheduled {
            due += g;
            let at = due.max(last + 6_000);
            sent.push(at - last);
            last = at;
        }
        let (check, _, finding) =
            interarrival(0, &sent[1..], &InterArrival::Exp, 50_000.0, 0.05, 0.05);
        assert!(!check.pass);
        let Some(GapMisfit::Floor {
            floor_us,
            exponential_share,
        }) = finding.misfit
        else {
            panic!("{finding:?}")
        };
        assert!((floor_us - 6.0).abs() < 0.05, "{floor_us}");
        assert!(
            (exponential_share - 0.11).abs() < 0.005,
            "{exponential_share}"
        );

        // Bursts: a fifth of the departures held back and sent right after the next.
        let mut bursty = exp_gaps(2000, 50_000.0, 4);
        for pair in bursty.chunks_mut(5) {
            pair[0] += pair[1].saturating_sub(500);
            pair[1] = 500;
        }
        let (check, _, finding) =
            interarrival(0, &bursty, &InterArrival::Exp, 50_000.0, 0.05, 0.05);
        assert!(!check.pass);
        assert!(
            matches!(finding.misfit, Some(GapMisfit::Bursts { .. })),
            "{finding:?}"
        );

        // Exponential gaps get no diagnosis.
        assert_eq!(
            exponential_misfit(
                &exp_gaps(2000, 50_000.0, 5)
                    .iter()
                    .map(|&g| g as f64)
                    .collect::<Vec<_>>(),
                50_000.0
            ),
            None
        );
    }

    #[test]
    fn exponential_gaps_pass_and_fixed_gaps_fail_the_exponential_test() {
        let gaps = exp_gaps(2000, 50_000.0, 1);
        let (check, result, _) = interarrival(0, &gaps, &InterArrival::Exp, 50_000.0, 0.05, 0.05);
        assert!(check.pass, "{}", check.detail());
        assert!(result.pvalue.is_some_and(|p| p > 0.05));
        let fixed = vec![50_000u64; 2000];
        let (check, _, _) = interarrival(0, &fixed, &InterArrival::Exp, 50_000.0, 0.05, 0.05);
        assert!(!check.pass, "{}", check.detail());
        // Exponential gaps at twice the rate fit the shape but not the rate.
        let (check, _, finding) = interarrival(0, &gaps, &InterArrival::Exp, 25_000.0, 0.05, 0.05);
        assert!(!check.pass, "{finding:?}");
        assert!(
            finding.mean_off.is_some_and(|off| (off - 1.0).abs() < 0.1),
            "{finding:?}"
        );
    }

    #[test]
    fn fixed_gaps_are_judged_by_dispersion() {
        let fixed: Vec<u64> = (0..1000).map(|i| 50_000 + (i % 7) * 100).collect();
        let (check, result, _) =
            interarrival(0, &fixed, &InterArrival::Fixed, 50_300.0, 0.05, 0.05);
        assert!(check.pass, "{}", check.detail());
        assert!(result.statistic < 0.1);
        let gaps = exp_gaps(1000, 50_000.0, 2);
        let (check, _, _) = interarrival(0, &gaps, &InterArrival::Fixed, 50_000.0, 0.05, 0.05);
        assert!(!check.pass);
        match check.data {
            Some(CheckData::Histogram { counts, .. }) => {
                assert_eq!(counts.iter().sum::<u64>(), 1000)
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_ar1_series_needs_a_lag_and_white_noise_does_not() {
        let mut rng = SmallRng::seed_from_u64(3);
        let noise: Vec<f64> = (0..10_000).map(|_| rng.random::<f64>()).collect();
        let Independent { check, lag, .. } = independence(0, &noise, 0.05);
        // White noise passes at lag 1 most of the time; this seed does.
        assert_eq!(lag, Some(1), "{}", check.detail());
        let mut x = 0.0;
        let ar: Vec<f64> = noise
            .iter()
            .map(|e| {
                x = 0.9 * x + e;
                x
            })
            .collect();
        let Independent { check, lag, .. } = independence(0, &ar, 0.05);
        assert!(!check.pass);
        assert!(lag.is_some_and(|l| l > 10), "{lag:?}: {}", check.detail());
        let series = std::iter::repeat_n(5.0, 100).collect::<Vec<_>>();
        assert!(
            stationarity(CheckKind::Stationarity, None, &series, 0.05, None)
                .0
                .pass
        );
        let walk: Vec<f64> = noise
            .iter()
            .scan(0.0, |s, e| {
                *s += e - 0.5;
                Some(*s)
            })
            .collect();
        let (check, _) = stationarity(CheckKind::Stationarity, None, &walk, 0.05, None);
        assert!(!check.pass, "{}", check.detail());
        assert!(
            stationarity(CheckKind::Stationarity, None, &noise, 0.05, None)
                .0
                .pass
        );
    }
}
