//! Every case of the reference answers in fixtures/golden/ (SciPy, statsmodels, NumPy),
//! at the tolerances its README sets: relative 1e-6, absolute 1e-9 near zero, and 1e-3
//! absolute for the interpolated Anderson-Darling p-value.

#![allow(clippy::unwrap_used)]

use std::path::PathBuf;

use serde_json::Value;
use vernier_stats::*;

fn load(name: &str) -> Vec<Value> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/golden/stats")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let doc: Value = serde_json::from_str(&text).unwrap();
    doc["cases"].as_array().unwrap().clone()
}

fn floats(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

#[track_caller]
fn close(what: &str, got: f64, want: f64) {
    let ok = (got - want).abs() <= 1e-9 || (got - want).abs() <= 1e-6 * want.abs();
    assert!(
        ok,
        "{what}: got {got:e}, want {want:e} (rel {:e})",
        ((got - want) / want).abs()
    );
}

#[test]
fn percentiles_match_numpy() {
    let cases = load("percentile.json");
    assert_eq!(cases.len(), 15);
    for case in &cases {
        let x = floats(&case["x"]);
        let sorted = sort_samples(&x).unwrap();
        for (q, want) in floats(&case["q"]).into_iter().zip(floats(&case["linear"])) {
            let what = format!("{} n={} q={q}", case["kind"], x.len());
            close(&what, percentile(&sorted, q).unwrap(), want);
        }
    }
}

#[test]
fn order_statistic_ranks_match_the_formula() {
    let cases = load("order_stat_ci.json");
    assert_eq!(cases.len(), 90);
    for case in &cases {
        let n = case["n"].as_u64().unwrap() as usize;
        let p = case["p"].as_f64().unwrap();
        let g = case["confidence"].as_f64().unwrap();
        let r = order_statistic_ranks(n, p, g);
        let what = format!("n={n} p={p} confidence={g}");
        assert_eq!(r.j, case["j"].as_i64().unwrap(), "{what}: j");
        assert_eq!(r.k, case["k"].as_i64().unwrap(), "{what}: k");
        let in_range =
            case["j_in_range"].as_bool().unwrap() && case["k_in_range"].as_bool().unwrap();
        assert_eq!(r.in_range(n), in_range, "{what}: in range");
        // The interval itself: the j-th and k-th smallest, or a refusal naming the count needed.
        let sorted: Vec<f64> = (1..=n).map(|i| i as f64).collect();
        match percentile_ci(&sorted, p, g) {
            Ok((lo, hi)) => {
                assert!(in_range, "{what}: an interval where none exists");
                assert_eq!((lo, hi), (r.j as f64, r.k as f64), "{what}");
            }
            Err(StatsError::NotEnoughSamples { needed, have, .. }) => {
                assert!(!in_range, "{what}: refused an interval that exists");
                assert_eq!(have, n);
                assert!(
                    needed > n && order_statistic_ranks(needed, p, g).in_range(needed),
                    "{what}: needed {needed}"
                );
            }
            Err(e) => panic!("{what}: {e}"),
        }
    }
}

#[test]
fn anderson_darling_matches_scipy() {
    let cases = load("anderson_expon.json");
    assert_eq!(cases.len(), 16);
    for case in &cases {
        let x = floats(&case["x"]);
        let what = format!("{} n={}", case["kind"], x.len());
        let r = anderson_exponential(&x).unwrap();
        close(
            &format!("{what} statistic"),
            r.statistic,
            case["statistic"].as_f64().unwrap(),
        );
        close(
            &format!("{what} scale"),
            r.scale,
            case["scale"].as_f64().unwrap(),
        );
        for (got, want) in r
            .critical_values
            .iter()
            .zip(floats(&case["critical_values"]))
        {
            close(&format!("{what} critical value"), *got, want);
        }
        assert_eq!(
            r.significance_levels.to_vec(),
            floats(&case["significance_levels"]),
            "{what}"
        );
        let want_p = case["pvalue_interpolated"].as_f64().unwrap();
        assert!(
            (r.pvalue - want_p).abs() <= 1e-3,
            "{what}: pvalue {} vs {want_p}",
            r.pvalue
        );
    }
}

#[test]
fn spearman_lags_match_scipy() {
    let cases = load("spearman_lag.json");
    assert_eq!(cases.len(), 15);
    for case in &cases {
        let x = floats(&case["x"]);
        let ranked = SendOrder::new(&x).unwrap();
        let lags = case["lags"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l.as_u64().unwrap() as usize);
        for ((lag, rho), p) in lags.zip(floats(&case["rho"])).zip(floats(&case["pvalue"])) {
            let what = format!("{} n={} lag={lag}", case["kind"], x.len());
            let c = ranked.lag(lag).unwrap();
            close(&format!("{what} rho"), c.rho, rho);
            close(&format!("{what} pvalue"), c.pvalue, p);
            assert_eq!(
                spearman_lag(&x, lag).unwrap(),
                c,
                "{what}: one-off and reused ranking differ"
            );
        }
    }
}

#[test]
fn adf_matches_statsmodels() {
    let cases = load("adf.json");
    assert_eq!(cases.len(), 18);
    for case in &cases {
        let x = floats(&case["x"]);
        for run in case["runs"].as_array().unwrap() {
            let regression = match run["regression"].as_str().unwrap() {
                "c" => Regression::C,
                "ct" => Regression::Ct,
                "n" => Regression::N,
                other => panic!("unknown regression {other}"),
            };
            let (lags, maxlag) = match run["autolag"].as_str() {
                Some("AIC") => (LagSelection::Aic, None),
                Some("BIC") => (LagSelection::Bic, None),
                Some(other) => panic!("unknown autolag {other}"),
                None => (
                    LagSelection::Fixed,
                    Some(run["maxlag"].as_u64().unwrap() as usize),
                ),
            };
            let what = format!("{} n={} {:?} {:?}", case["kind"], x.len(), regression, lags);
            let r = adf(
                &x,
                &AdfOptions {
                    regression,
                    lags,
                    maxlag,
                },
            )
            .unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_eq!(
                r.usedlag as u64,
                run["usedlag"].as_u64().unwrap(),
                "{what}: usedlag"
            );
            assert_eq!(r.nobs as u64, run["nobs"].as_u64().unwrap(), "{what}: nobs");
            close(
                &format!("{what} stat"),
                r.stat,
                run["stat"].as_f64().unwrap(),
            );
            close(
                &format!("{what} pvalue"),
                r.pvalue,
                run["pvalue"].as_f64().unwrap(),
            );
            let cv = &run["critical_values"];
            close(
                &format!("{what} 1%"),
                r.critical_values.one,
                cv["1%"].as_f64().unwrap(),
            );
            close(
                &format!("{what} 5%"),
                r.critical_values.five,
                cv["5%"].as_f64().unwrap(),
            );
            close(
                &format!("{what} 10%"),
                r.critical_values.ten,
                cv["10%"].as_f64().unwrap(),
            );
            match run.get("icbest").and_then(Value::as_f64) {
                Some(ic) => close(&format!("{what} icbest"), r.icbest.unwrap(), ic),
                None => assert_eq!(r.icbest, None, "{what}"),
            }
        }
    }
}
