use std::time::Duration;

use rand::SeedableRng;
use rand::rngs::SmallRng;

use super::*;

fn us(n: u64) -> Duration {
    Duration::from_micros(n)
}

fn parse(spec: &str) -> Dist {
    spec.parse()
        .unwrap_or_else(|e| panic!("{spec:?} should parse: {e}"))
}

fn error(spec: &str) -> String {
    match spec.parse::<Dist>() {
        Ok(dist) => panic!("{spec:?} should not parse, got {dist:?}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn parses_every_form() {
    assert_eq!(parse("fixed:10us"), Dist::fixed(us(10)));
    assert_eq!(parse("exp:10us"), Dist::Exp { mean: us(10) });
    assert_eq!(
        parse("bimodal:10us:100us:0.9"),
        Dist::Bimodal {
            first: us(10),
            second: us(100),
            p_first: 0.9
        }
    );
    assert_eq!(
        parse("lognormal:2.5ms:0.5"),
        Dist::Lognormal {
            mean: Duration::from_micros(2_500),
            sigma: 0.5
        }
    );
    assert_eq!(
        parse("uniform:500ns:1.5us"),
        Dist::Uniform {
            lo: Duration::from_nanos(500),
            hi: Duration::from_nanos(1_500)
        }
    );
    assert_eq!(
        parse("pareto:1s:2.5"),
        Dist::Pareto {
            mean: Duration::from_secs(1),
            alpha: 2.5
        }
    );
    assert_eq!(parse("  exp:10µs "), Dist::Exp { mean: us(10) });
}

#[test]
fn display_round_trips() {
    for spec in [
        "fixed:0ns",
        "fixed:10us",
        "exp:1.5us",
        "bimodal:10us:100us:0.9",
        "bimodal:1ns:1s:0",
        "bimodal:1ns:1s:1",
        "lognormal:20us:0.25",
        "uniform:5us:5us",
        "uniform:1.234567ms:2s",
        "pareto:10us:1.0000001",
    ] {
        let dist = parse(spec);
        assert_eq!(dist.to_string(), spec);
        assert_eq!(parse(&dist.to_string()), dist);
    }
    // Equivalent spellings print in the canonical form.
    assert_eq!(parse("exp:1000ns").to_string(), "exp:1us");
    assert_eq!(
        parse("bimodal:0.01ms:100us:0.90").to_string(),
        "bimodal:10us:100us:0.9"
    );
}

#[test]
fn errors_quote_the_spec_and_say_what_was_expected() {
    let cases = [
        (
            "exp:10",
            r#"invalid distribution "exp:10": expected a duration with a unit (ns, us, ms, s), as in exp:10us"#,
        ),
        (
            "normal:10us",
            r#"invalid distribution "normal:10us": expected fixed:, exp:, bimodal:, lognormal:, uniform: or pareto:, as in exp:10us"#,
        ),
        (
            "",
            r#"invalid distribution "": expected fixed:, exp:, bimodal:, lognormal:, uniform: or pareto:, as in exp:10us"#,
        ),
        (
            "bimodal:10us:100us",
            r#"invalid distribution "bimodal:10us:100us": expected bimodal:FIRST:SECOND:P_FIRST, as in bimodal:10us:100us:0.9"#,
        ),
        (
            "fixed",
            r#"invalid distribution "fixed": expected fixed:VALUE, as in fixed:10us"#,
        ),
        (
            "exp:10us:3",
            r#"invalid distribution "exp:10us:3": expected exp:MEAN, as in exp:10us"#,
        ),
        (
            "exp:0us",
            r#"invalid distribution "exp:0us": expected MEAN > 0, as in exp:10us"#,
        ),
        (
            "bimodal:10us:100us:1.5",
            r#"invalid distribution "bimodal:10us:100us:1.5": expected P_FIRST to be a probability, from 0 to 1, as in bimodal:10us:100us:0.9"#,
        ),
        (
            "bimodal:10us:100us:most",
            r#"invalid distribution "bimodal:10us:100us:most": expected P_FIRST to be a number, as in bimodal:10us:100us:0.9"#,
        ),
        (
            "lognormal:10us:-1",
            r#"invalid distribution "lognormal:10us:-1": expected SIGMA to be a number from 0 to 10, as in lognormal:10us:0.5"#,
        ),
        (
            "lognormal:10us:NaN",
            r#"invalid distribution "lognormal:10us:NaN": expected SIGMA to be a number from 0 to 10, as in lognormal:10us:0.5"#,
        ),
        (
            "uniform:2us:1us",
            r#"invalid distribution "uniform:2us:1us": expected LO ≤ HI, as in uniform:10us:100us"#,
        ),
        (
            "pareto:10us:1",
            r#"invalid distribution "pareto:10us:1": expected ALPHA to be a number > 1 (the mean is infinite otherwise), as in pareto:10us:2.5"#,
        ),
        (
            "pareto:10us:inf",
            r#"invalid distribution "pareto:10us:inf": expected ALPHA to be a number > 1 (the mean is infinite otherwise), as in pareto:10us:2.5"#,
        ),
        (
            "fixed:1.5ns",
            r#"invalid distribution "fixed:1.5ns": expected a duration in whole nanoseconds, as in fixed:10us"#,
        ),
    ];
    for (spec, message) in cases {
        assert_eq!(error(spec), message);
    }
}

#[test]
fn checked_constructors_refuse_what_parsing_refuses() {
    assert!(Dist::exp(Duration::ZERO).is_err());
    assert!(Dist::bimodal(us(1), us(2), -0.1).is_err());
    assert!(Dist::lognormal(us(1), 11.0).is_err());
    assert!(Dist::uniform(us(2), us(1)).is_err());
    assert!(Dist::pareto(us(1), f64::NAN).is_err());
    let e = Dist::pareto(us(1), 0.5).unwrap_err();
    assert_eq!(e.spec(), "pareto:1us:0.5");
    assert_eq!(Dist::exp(us(3)), Ok(parse("exp:3us")));
}

#[test]
fn means_are_exact() {
    assert_eq!(parse("fixed:10us").mean_ns(), 10_000.0);
    assert_eq!(parse("exp:10us").mean_ns(), 10_000.0);
    assert_eq!(parse("bimodal:10us:100us:0.9").mean_ns(), 19_000.0);
    assert_eq!(parse("lognormal:7us:1.5").mean_ns(), 7_000.0);
    assert_eq!(parse("uniform:1us:4us").mean_ns(), 2_500.0);
    assert_eq!(parse("pareto:3us:1.5").mean_ns(), 3_000.0);
}

/// Draws `n` samples with a fixed seed; fixed so a failure reproduces.
fn draw<M: Magnitude>(dist: &Dist<M>, n: usize) -> Vec<f64> {
    let sampler = dist.sampler();
    let mut rng = SmallRng::seed_from_u64(7);
    (0..n).map(|_| sampler.sample(&mut rng)).collect()
}

fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len() as f64
}

fn assert_close(actual: f64, expected: f64, relative: f64, what: &str) {
    assert!(
        (actual - expected).abs() <= relative * expected.abs(),
        "{what}: {actual} is not within {relative} of {expected}"
    );
}

#[test]
fn samples_have_the_stated_mean() {
    // 200,000 draws: the relative standard error of the mean is cv/447, so 2% is several
    // standard errors for every distribution here (Pareto 3.5 has cv ≈ 0.53, lognormal 1 has
    // cv ≈ 1.3) while a wrong scale (e.g. using the normal's mean for mu) misses by far more.
    for spec in [
        "exp:10us",
        "bimodal:10us:100us:0.9",
        "lognormal:10us:0.5",
        "lognormal:10us:1",
        "uniform:5us:15us",
        "pareto:10us:3.5",
    ] {
        let dist = parse(spec);
        assert_close(mean(&draw(&dist, 200_000)), dist.mean_ns(), 0.02, spec);
    }
}

#[test]
fn samples_have_the_stated_shape() {
    let n = 100_000;
    assert!(draw(&parse("fixed:3us"), 100).iter().all(|&x| x == 3_000.0));

    let bimodal = draw(&parse("bimodal:10us:100us:0.9"), n);
    assert!(bimodal.iter().all(|&x| x == 10_000.0 || x == 100_000.0));
    let first = bimodal.iter().filter(|&&x| x == 10_000.0).count() as f64 / n as f64;
    assert_close(first, 0.9, 0.01, "share of the first mode");

    let uniform = draw(&parse("uniform:5us:15us"), n);
    assert!(uniform.iter().all(|&x| (5_000.0..=15_000.0).contains(&x)));

    // Exponential: P(X > mean) = 1/e.
    let exp = draw(&parse("exp:10us"), n);
    let above = exp.iter().filter(|&&x| x > 10_000.0).count() as f64 / n as f64;
    assert_close(above, (-1.0f64).exp(), 0.02, "exp tail at the mean");

    // Pareto: nothing below the scale mean·(alpha−1)/alpha; P(X > 2·scale) = 2^−alpha.
    let pareto = draw(&parse("pareto:10us:2"), n);
    assert!(pareto.iter().all(|&x| x >= 5_000.0));
    let above = pareto.iter().filter(|&&x| x > 10_000.0).count() as f64 / n as f64;
    assert_close(above, 0.25, 0.03, "pareto tail at twice the scale");

    // Lognormal: the median is exp(mu) = mean·exp(−sigma²/2).
    let mut lognormal = draw(&parse("lognormal:10us:1"), n);
    lognormal.sort_by(f64::total_cmp);
    assert_close(
        lognormal[n / 2],
        10_000.0 * (-0.5f64).exp(),
        0.02,
        "lognormal median",
    );
}

#[test]
fn extreme_parameters_sample_finite_non_negative_values() {
    for spec in [
        "lognormal:1ns:10",
        "lognormal:500s:10",
        "pareto:1ns:1.0000001",
        "pareto:18446744073s:1.01",
        "exp:18446744073s",
        "uniform:0ns:18446744073s",
    ] {
        for x in draw(&parse(spec), 10_000) {
            assert!(x.is_finite() && x >= 0.0, "{spec}: {x}");
        }
    }
}

#[test]
fn with_mean_keeps_the_shape() {
    let cases = [
        ("fixed:10us", "fixed:1us"),
        ("exp:10us", "exp:1us"),
        ("bimodal:10us:100us:0.9", "bimodal:526ns:5.263us:0.9"),
        ("lognormal:10us:2", "lognormal:1us:2"),
        ("uniform:10us:30us", "uniform:500ns:1.5us"),
        ("pareto:10us:1.5", "pareto:1us:1.5"),
        // No shape to keep.
        ("fixed:0ns", "fixed:1us"),
        ("uniform:0ns:0ns", "fixed:1us"),
    ];
    for (spec, scaled) in cases {
        assert_eq!(parse(spec).with_mean(us(1)).to_string(), scaled, "{spec}");
    }
    // A positive mean stays positive however small the target.
    assert_eq!(
        parse("exp:10us").with_mean(Duration::ZERO),
        parse("exp:1ns")
    );
}

#[test]
fn serde_is_the_spec_string() {
    let dist = parse("bimodal:10us:100us:0.9");
    assert_eq!(
        serde_json::to_string(&dist).unwrap(),
        r#""bimodal:10us:100us:0.9""#
    );
    assert_eq!(
        serde_json::from_str::<Dist>(r#""exp:20us""#).unwrap(),
        parse("exp:20us")
    );
    let e = serde_json::from_str::<Dist>(r#""exp:20""#).unwrap_err();
    assert!(
        e.to_string()
            .starts_with(r#"invalid distribution "exp:20": expected a duration"#),
        "{e}"
    );
    let e = serde_json::from_str::<Dist>("20").unwrap_err();
    assert!(
        e.to_string()
            .contains("a distribution spec such as exp:10us"),
        "{e}"
    );
}

#[test]
fn sizes_use_the_same_forms_in_bytes() {
    let size: SizeDist = "pareto:200:2".parse().unwrap();
    assert_eq!(
        size,
        Dist::Pareto {
            mean: 200,
            alpha: 2.0
        }
    );
    assert_eq!(size.to_string(), "pareto:200:2");
    assert_eq!(size.mean(), 200.0);
    assert_eq!(
        "uniform:16:64"
            .parse::<SizeDist>()
            .unwrap()
            .with_mean(20)
            .to_string(),
        "uniform:8:32"
    );
    let error = |spec: &str| spec.parse::<SizeDist>().unwrap_err().to_string();
    assert_eq!(
        error("fixed:32B"),
        r#"invalid size distribution "fixed:32B": expected a size as a whole number of bytes, as in fixed:32"#
    );
    assert_eq!(
        error("uniform:64:16"),
        r#"invalid size distribution "uniform:64:16": expected LO ≤ HI, as in uniform:32:1024"#
    );
    assert_eq!(
        error("fixed:+3"),
        r#"invalid size distribution "fixed:+3": expected a size as a whole number of bytes, as in fixed:32"#
    );
    assert_eq!(
        serde_json::from_str::<SizeDist>(r#""fixed:32""#).unwrap(),
        Dist::fixed(32)
    );
    let size: SizeDist = "pareto:200:3.5".parse().unwrap();
    assert_close(mean(&draw(&size, 200_000)), 200.0, 0.02, "pareto sizes");
}
