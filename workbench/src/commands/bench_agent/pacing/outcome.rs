//! What a `vernier run` child answered: the JSON result it printed on stdout, and from
//! the samples it recorded, how close to schedule its requests left.
//!
//! The child may be an older build, so its JSON is read by field name, taking what is
//! there, rather than as this build's result type.

use std::path::Path;

use serde::Serialize;
use serde_json::Value;

use crate::error::Error;

/// The bands of send lag (actual minus scheduled departure) whose shares are reported, µs:
/// 5 is about one send's cost, 10 the methodology's on-schedule limit, 50 a client that
/// is plainly behind.
pub(super) const SEND_LAG_BANDS_US: [u64; 3] = [5, 10, 50];

/// The child's own answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(super) struct RunAnswer {
    /// As it wrote it (`converged`, `n/a`).
    pub verdict: String,
    /// Replies per second during the point.
    pub achieved_rate: f64,
    /// The p50 and p99 of all requests it reported, µs, where it reported them.
    pub p50_us: Option<f64>,
    pub p99_us: Option<f64>,
}

/// Reads the result `vernier run --headless --output json` printed: one point's object for
/// a fixed load, or `{"verdict", "points": [...]}`, of which the last point is taken.
pub(super) fn parse_answer(stdout: &str) -> Result<RunAnswer, String> {
    let value: Value =
        serde_json::from_str(stdout.trim()).map_err(|e| format!("its output is not JSON: {e}"))?;
    let point = match value.get("points").and_then(Value::as_array) {
        Some(points) => points.last().ok_or("its result has no points")?,
        None => &value,
    };
    let verdict = value
        .get("verdict")
        .or_else(|| point.get("verdict"))
        .and_then(Value::as_str)
        .ok_or("its result has no verdict")?;
    let achieved_rate = point
        .get("achieved_rate")
        .and_then(Value::as_f64)
        .ok_or("its result has no achieved_rate")?;
    let percentile = |p: f64| {
        point
            .get("percentiles")?
            .as_array()?
            .iter()
            .find(|q| q.get("p").and_then(Value::as_f64) == Some(p))?
            .get("value")?
            .as_f64()
    };
    Ok(RunAnswer {
        verdict: verdict.to_string(),
        achieved_rate,
        p50_us: percentile(50.0),
        p99_us: percentile(99.0),
    })
}

/// The share of requests whose send lag was within a band.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub(super) struct Within {
    pub limit_us: u64,
    pub share: f64,
}

/// How precisely the kept samples left, and their latency.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(super) struct SendPrecision {
    /// Samples kept, over every point and round of the record.
    pub samples: usize,
    /// For each of [`SEND_LAG_BANDS_US`].
    pub within: Vec<Within>,
    /// Send lag percentiles, µs.
    pub send_lag_p50_us: f64,
    pub send_lag_p90_us: f64,
    pub send_lag_p99_us: f64,
    /// Latency percentiles of the same samples, µs.
    pub latency_p50_us: f64,
    pub latency_p99_us: f64,
}

/// Whether a request whose send lag was `lag_ns` left within `limit_us` of schedule.
fn within(lag_ns: u64, limit_us: u64) -> bool {
    lag_ns <= limit_us * 1_000
}

/// The figures of samples' send lags and latencies (ns); `None` without samples.
/// Percentiles by linear interpolation (Hyndman-Fan type 7, numpy's default).
pub(super) fn send_precision(queueing_ns: &[u64], latency_ns: &[u64]) -> Option<SendPrecision> {
    if queueing_ns.is_empty() || latency_ns.is_empty() {
        return None;
    }
    let sorted_us = |ns: &[u64]| {
        let mut us: Vec<f64> = ns.iter().map(|&n| n as f64 / 1e3).collect();
        us.sort_by(f64::total_cmp);
        us
    };
    let (lag, latency) = (sorted_us(queueing_ns), sorted_us(latency_ns));
    let at = |sorted: &[f64], p: f64| vernier_stats::percentile(sorted, p).unwrap_or(f64::NAN);
    let n = queueing_ns.len();
    Some(SendPrecision {
        samples: n,
        within: SEND_LAG_BANDS_US
            .iter()
            .map(|&limit_us| Within {
                limit_us,
                share: queueing_ns.iter().filter(|&&l| within(l, limit_us)).count() as f64
                    / n as f64,
            })
            .collect(),
        send_lag_p50_us: at(&lag, 0.50),
        send_lag_p90_us: at(&lag, 0.90),
        send_lag_p99_us: at(&lag, 0.99),
        latency_p50_us: at(&latency, 0.50),
        latency_p99_us: at(&latency, 0.99),
    })
}

/// The send lags and latencies (ns) of every sample in the record at `dir`.
pub(super) fn read_samples(dir: &Path) -> Result<(Vec<u64>, Vec<u64>), Error> {
    let frame = crate::record::read_samples(dir)?;
    if frame.height() == 0 {
        return Ok((Vec::new(), Vec::new()));
    }
    let bad = |e: polars::prelude::PolarsError| {
        Error::input(&dir.join("samples.parquet"), None, e.to_string())
    };
    let column = |name: &str| -> Result<Vec<u64>, Error> {
        Ok(frame
            .column(name)
            .map_err(bad)?
            .u64()
            .map_err(bad)?
            .iter()
            .flatten()
            .collect())
    };
    Ok((column("queueing_ns")?, column("latency_ns")?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fixed_load_s_point_gives_its_verdict_rate_and_percentiles() {
        let stdout = r#"{"verdict":"converged","reasons":[],"target_rate":10000.0,
            "achieved_rate":9987.5,"percentiles":[{"p":50.0,"value":31.5,"ci_low":31.0,"ci_high":32.0},
            {"p":99.0,"value":88.25,"ci_low":80.0,"ci_high":95.0}]}"#;
        assert_eq!(
            parse_answer(stdout),
            Ok(RunAnswer {
                verdict: "converged".into(),
                achieved_rate: 9987.5,
                p50_us: Some(31.5),
                p99_us: Some(88.25),
            })
        );
    }

    #[test]
    fn a_sweep_gives_its_last_point_and_a_missing_percentile_is_none() {
        let stdout = r#"{"verdict":"n/a","points":[{"verdict":"converged","achieved_rate":1.0},
            {"verdict":"n/a","achieved_rate":2.0,"percentiles":[{"p":99.0,"value":7.0}]}]}"#;
        let answer = parse_answer(stdout).unwrap();
        assert_eq!(answer.verdict, "n/a");
        assert_eq!(answer.achieved_rate, 2.0);
        assert_eq!((answer.p50_us, answer.p99_us), (None, Some(7.0)));
    }

    #[test]
    fn output_that_is_not_a_result_is_an_error() {
        assert!(parse_answer("").is_err());
        assert!(parse_answer("vernier: no such mode").is_err());
        assert!(parse_answer(r#"{"points":[]}"#).is_err());
        assert!(parse_answer(r#"{"verdict":"converged"}"#).is_err());
    }

    #[test]
    fn shares_within_each_band_and_percentiles_of_the_samples() {
        // Lags 0..99 µs, one each: 6 within 5 µs (0..=5), 11 within 10, 51 within 50.
        let lags: Vec<u64> = (0..100).map(|us| us * 1_000).collect();
        let latency: Vec<u64> = (1..=100).map(|us| us * 1_000).collect();
        let p = send_precision(&lags, &latency).unwrap();
        assert_eq!(p.samples, 100);
        let shares: Vec<(u64, f64)> = p.within.iter().map(|w| (w.limit_us, w.share)).collect();
        assert_eq!(shares, [(5, 0.06), (10, 0.11), (50, 0.51)]);
        assert!((p.send_lag_p50_us - 49.5).abs() < 1e-9);
        assert!((p.send_lag_p99_us - 98.01).abs() < 1e-9);
        assert!((p.latency_p50_us - 50.5).abs() < 1e-9);
        assert_eq!(send_precision(&[], &[]), None);
    }
}
