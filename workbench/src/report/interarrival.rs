//! One agent's inter-departure gaps against the distribution it was asked for: the
//! picture behind the inter-arrival check, which a bare A² or p-value does not give (a
//! client that cannot keep up shows as a missing left edge, a timer as spikes).

use plotters::prelude::{
    ChartBuilder, Color, DrawingBackend, LineSeries, PathElement, Rectangle, SeriesLabelPosition,
};
use serde::Serialize;
use vernier_protocols::InterArrival;

use super::plot::{Area, CAPTION_SIZE, Chart, DrawError, Plot, color, fmt_num};
use crate::coordinator::text;
use crate::record::ShownCheck;

/// The gap histogram as a density, so that it can be laid over the target's.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GapDensity {
    /// The width of a bin, µs.
    pub bin_us: f64,
    /// Gaps per µs per gap in each bin from 0, the last (overflow) bin left out: it holds
    /// everything beyond and has no width to divide by.
    pub density: Vec<f64>,
    /// Gaps in the overflow bin.
    pub overflow: u64,
    /// Gaps in all.
    pub total: u64,
}

/// Normalises the check's histogram (`bin_ns` wide bins from 0, the last holding the rest)
/// to a density: count / (total · width), so that the bars drawn integrate to the share
/// of gaps they hold.
pub fn gap_density(bin_ns: f64, counts: &[u64]) -> GapDensity {
    let total: u64 = counts.iter().sum();
    let bin_us = bin_ns / 1e3;
    let (overflow, binned) = match counts.split_last() {
        Some((last, rest)) => (*last, rest),
        None => (0, counts),
    };
    let density = if total == 0 || !(bin_us > 0.0 && bin_us.is_finite()) {
        vec![0.0; binned.len()]
    } else {
        binned
            .iter()
            .map(|&c| c as f64 / (total as f64 * bin_us))
            .collect()
    };
    GapDensity {
        bin_us,
        density,
        overflow,
        total,
    }
}

/// What the target distribution looks like on the plot.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Target {
    /// A density curve: exponential with the mean, µs.
    Exp(f64),
    /// A vertical line at the gap every departure should have, µs.
    Fixed(f64),
    /// Another shape: only its mean is drawn.
    Mean(f64),
}

/// Draws the bars, the target and the check's verdict in words.
pub(super) fn draw<'a>(
    title: &'a str,
    density: &'a GapDensity,
    target_mean_ns: f64,
    shape: &'a InterArrival,
    check: &ShownCheck,
) -> Plot<GapChart<'a>> {
    let mean_us = target_mean_ns / 1e3;
    let target = match shape {
        InterArrival::Exp => Target::Exp(mean_us),
        InterArrival::Fixed => Target::Fixed(mean_us),
        InterArrival::Dist(_) => Target::Mean(mean_us),
    };
    let mut caption = vec![format!(
        "{}: {} (n = {}). {}",
        text::check_outcome_caption(check.outcome()),
        check.detail,
        check.n,
        match target {
            Target::Exp(_) => "Curve: the exponential density with the target mean.",
            Target::Fixed(_) => "Line: the fixed gap every departure should have.",
            Target::Mean(_) => "Line: the target mean (no density drawn for this shape).",
        }
    )];
    if density.overflow > 0 {
        caption.push(format!(
            "Not drawn: {} of {} gaps ({}%) at or beyond {} µs, in the histogram's last bin.",
            density.overflow,
            density.total,
            fmt_num(100.0 * density.overflow as f64 / density.total.max(1) as f64),
            fmt_num(density.bin_us * density.density.len() as f64)
        ));
    }
    Plot::new(
        caption,
        GapChart {
            title,
            density,
            target,
            shape,
        },
    )
}

/// The bars and the target of [`draw`].
#[derive(Debug)]
pub(super) struct GapChart<'a> {
    title: &'a str,
    density: &'a GapDensity,
    target: Target,
    shape: &'a InterArrival,
}

impl Chart for GapChart<'_> {
    fn draw<DB: DrawingBackend>(&self, area: &Area<DB>) -> Result<(), DrawError>
    where
        DB::ErrorType: 'static,
    {
        draw_chart(area, self.title, self.density, self.target, self.shape)
    }
}

fn draw_chart<DB: DrawingBackend>(
    area: &Area<DB>,
    title: &str,
    density: &GapDensity,
    target: Target,
    shape: &InterArrival,
) -> Result<(), DrawError>
where
    DB::ErrorType: 'static,
{
    let (Target::Exp(mean) | Target::Fixed(mean) | Target::Mean(mean)) = target;
    let mean = if mean.is_finite() && mean > 0.0 {
        mean
    } else {
        0.0
    };
    let xmax = (density.bin_us * density.density.len() as f64).max(mean * 1.2);
    let xmax = if xmax > 0.0 && xmax.is_finite() {
        xmax
    } else {
        1.0
    };
    let peak = density.density.iter().copied().fold(0.0, f64::max);
    let peak = match target {
        Target::Exp(_) if mean > 0.0 => peak.max(1.0 / mean),
        _ => peak,
    };
    let ymax = if peak > 0.0 { peak * 1.1 } else { 1.0 };

    let mut chart = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 20))
        .margin(14)
        .x_label_area_size(44)
        .y_label_area_size(80)
        .build_cartesian_2d(0f64..xmax, 0f64..ymax)?;
    chart
        .configure_mesh()
        .x_desc("gap between departures (µs)")
        .y_desc("density (per µs)")
        .x_label_formatter(&|x: &f64| fmt_num(*x))
        .axis_desc_style(("sans-serif", CAPTION_SIZE))
        .draw()?;

    let bars = color(0);
    chart
        .draw_series(density.density.iter().enumerate().map(|(i, &d)| {
            let x0 = i as f64 * density.bin_us;
            Rectangle::new(
                [(x0, 0.0), (x0 + density.bin_us, d)],
                bars.mix(0.55).filled(),
            )
        }))?
        .label("measured gaps")
        .legend(move |(x, y)| {
            Rectangle::new([(x, y - 5), (x + 20, y + 5)], bars.mix(0.55).filled())
        });

    let line = color(1);
    match target {
        Target::Exp(m) if m > 0.0 => {
            chart
                .draw_series(LineSeries::new(
                    (0..=200).map(|i| {
                        let x = xmax * f64::from(i) / 200.0;
                        (x, (-x / m).exp() / m)
                    }),
                    line.stroke_width(2),
                ))?
                .label(format!("target: exponential, mean {} µs", fmt_num(m)))
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], line.stroke_width(2))
                });
        }
        Target::Fixed(m) | Target::Mean(m) if m > 0.0 => {
            let label = if matches!(target, Target::Fixed(_)) {
                format!("target: fixed gap {} µs", fmt_num(m))
            } else {
                format!("target mean {} µs ({shape})", fmt_num(m))
            };
            chart
                .draw_series(LineSeries::new([(m, 0.0), (m, ymax)], line.stroke_width(2)))?
                .label(label)
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], line.stroke_width(2))
                });
        }
        _ => {}
    }
    super::plot::legend(&mut chart, SeriesLabelPosition::UpperRight)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coordinator::{CheckKind, CheckRole};

    fn check(pass: bool) -> ShownCheck {
        ShownCheck {
            check: CheckKind::Interarrival,
            agent: Some(0),
            pass,
            role: CheckRole::Gate,
            statistic: Some(0.4),
            pvalue: Some(0.8),
            n: 100,
            detail: "A² = 0.400, p = 0.8000".into(),
            decision: String::new(),
            data: None,
        }
    }

    #[test]
    fn the_bars_integrate_to_the_share_they_hold() {
        // 2 µs bins; 10 of 100 gaps in the overflow bin.
        let d = gap_density(2000.0, &[50, 30, 10, 10]);
        assert_eq!(d.bin_us, 2.0);
        assert_eq!(d.density, vec![0.25, 0.15, 0.05]);
        assert_eq!((d.overflow, d.total), (10, 100));
        let area: f64 = d.density.iter().map(|x| x * d.bin_us).sum();
        assert!((area + d.overflow as f64 / d.total as f64 - 1.0).abs() < 1e-12);
    }

    #[test]
    fn no_gaps_or_a_bad_bin_width_is_no_density_and_no_panic() {
        assert_eq!(gap_density(1000.0, &[0, 0, 0]).density, vec![0.0, 0.0]);
        assert_eq!(gap_density(0.0, &[3, 1]).density, vec![0.0]);
        assert!(gap_density(1000.0, &[]).density.is_empty());
        let svg = draw(
            "empty",
            &gap_density(f64::NAN, &[]),
            f64::NAN,
            &InterArrival::Exp,
            &check(false),
        )
        .svg()
        .unwrap();
        assert!(svg.contains("Fail"));
    }

    #[test]
    fn exp_gets_a_density_curve_and_fixed_a_line() {
        let d = gap_density(12_500.0, &[40, 30, 15, 8, 4, 3]);
        let svg = draw(
            "Inter-departure gaps: point 0",
            &d,
            100_000.0,
            &InterArrival::Exp,
            &check(true),
        )
        .svg()
        .unwrap();
        assert!(svg.contains("target: exponential, mean 100 µs"), "{svg}");
        assert!(svg.contains("Pass: A² = 0.400, p = 0.8000 (n = 100)"));
        assert!(svg.contains("Not drawn: 3 of 100 gaps (3%)"));
        let svg = draw("t", &d, 100_000.0, &InterArrival::Fixed, &check(true))
            .svg()
            .unwrap();
        assert!(svg.contains("target: fixed gap 100 µs"));
        let lognormal: InterArrival = "lognormal:100us:2".parse().unwrap();
        let svg = draw("t", &d, 100_000.0, &lognormal, &check(true))
            .svg()
            .unwrap();
        assert!(
            svg.contains(&format!("target mean 100 µs ({lognormal})")),
            "{svg}"
        );
    }
}
