//! One agent's correlogram: Spearman's ρ of the latencies in send order at each lag the
//! independence check tried, against the band inside which independent samples fall. It
//! shows why the sampling rate was divided, and by how much.

use plotters::prelude::{
    ChartBuilder, Circle, Color, DashedLineSeries, DrawingBackend, IntoLogRange, LineSeries,
    PathElement, RGBColor, SeriesLabelPosition,
};

use super::plot::{Area, CAPTION_SIZE, Chart, DrawError, Plot, color, fmt_num};
use crate::coordinator::text;
use crate::record::ShownCheck;

/// The two-sided 5% quantile of the standard normal.
const Z_975: f64 = 1.959_963_984_540_054;

/// The half-width of the band ρ stays within for `n` independent samples, by the
/// large-sample normal approximation of Spearman's ρ under independence: ±1.96/√n.
/// (The bound at lag k has n − k pairs; for the lags tried, k ≤ n/10, the difference is
/// at most 5% and not worth a band per lag.)
pub(super) fn band(n: usize) -> Option<f64> {
    (n > 0).then(|| Z_975 / (n as f64).sqrt())
}

/// The p-value below which a lag's marker is filled: the methodology's usual α.
const ALPHA: f64 = 0.05;

/// Draws ρ per lag as stems, the band, and which lags the test itself found significant.
pub(super) fn draw<'a>(
    title: &'a str,
    lags: &'a [(usize, f64, f64)],
    check: &ShownCheck,
) -> Plot<Correlogram<'a>> {
    let band = band(check.n);
    let mut caption = vec![format!(
        "{}: {} (n = {}).",
        text::check_outcome_caption(check.outcome()),
        check.detail,
        check.n
    )];
    caption.push(match band {
        Some(b) => format!(
            "Band: ±1.96/√n = ±{} with n = {}, the approximate 95% range of ρ for independent \
             samples (normal approximation). Filled markers: lags whose own p-value, from the \
             test, is below {ALPHA}.",
            fmt_num(b),
            check.n
        ),
        None => format!("No band: the check saw no samples. Filled markers: p < {ALPHA}."),
    });
    Plot::new(caption, Correlogram { title, lags, band })
}

/// The stems and the band of [`draw`].
#[derive(Debug)]
pub(super) struct Correlogram<'a> {
    title: &'a str,
    lags: &'a [(usize, f64, f64)],
    band: Option<f64>,
}

impl Chart for Correlogram<'_> {
    fn draw<DB: DrawingBackend>(&self, area: &Area<DB>) -> Result<(), DrawError>
    where
        DB::ErrorType: 'static,
    {
        draw_chart(area, self.title, self.lags, self.band)
    }
}

fn draw_chart<DB: DrawingBackend>(
    area: &Area<DB>,
    title: &str,
    lags: &[(usize, f64, f64)],
    band: Option<f64>,
) -> Result<(), DrawError>
where
    DB::ErrorType: 'static,
{
    let max_lag = lags.iter().map(|l| l.0).max().unwrap_or(1).max(1) as f64;
    let bound = lags
        .iter()
        .map(|l| l.1.abs())
        .filter(|r| r.is_finite())
        .chain(band)
        .fold(0.05, f64::max)
        .min(1.0)
        * 1.2;
    // Lags climb a 1-2-5-like ladder, so a log axis spaces them evenly.
    let mut chart = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 20))
        .margin(14)
        .x_label_area_size(44)
        .y_label_area_size(70)
        .build_cartesian_2d((0.7..max_lag * 1.5).log_scale(), -bound..bound)?;
    chart
        .configure_mesh()
        .x_desc("lag (samples apart, in send order)")
        .y_desc("Spearman ρ")
        .x_label_formatter(&|x: &f64| fmt_num(*x))
        // Ticks computed across zero land a rounding error off it (-2.78e-17).
        .y_label_formatter(&|y: &f64| fmt_num(if y.abs() < 1e-9 { 0.0 } else { *y }))
        .axis_desc_style(("sans-serif", CAPTION_SIZE))
        .draw()?;

    let axis = RGBColor(120, 120, 120);
    chart.draw_series(LineSeries::new(
        [(0.7, 0.0), (max_lag * 1.5, 0.0)],
        axis.stroke_width(1),
    ))?;
    if let Some(b) = band {
        let c = color(2);
        for sign in [1.0, -1.0] {
            let series = chart.draw_series(DashedLineSeries::new(
                [(0.7, sign * b), (max_lag * 1.5, sign * b)],
                8,
                6,
                c.stroke_width(2),
            ))?;
            if sign > 0.0 {
                series.label("±1.96/√n").legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(2))
                });
            }
        }
    }
    let stems = color(0);
    let finite: Vec<&(usize, f64, f64)> = lags.iter().filter(|l| l.1.is_finite()).collect();
    for l in &finite {
        chart.draw_series(LineSeries::new(
            [(l.0 as f64, 0.0), (l.0 as f64, l.1)],
            stems.stroke_width(2),
        ))?;
    }
    // Two groups, so that the legend has an entry only for markers that are drawn.
    let (significant, not): (Vec<&(usize, f64, f64)>, Vec<_>) =
        finite.iter().partition(|l| l.2 < ALPHA);
    if !significant.is_empty() {
        chart
            .draw_series(
                significant
                    .iter()
                    .map(|l| Circle::new((l.0 as f64, l.1), 5, stems.filled())),
            )?
            .label(format!("ρ, p < {ALPHA}"))
            .legend(move |(x, y)| Circle::new((x + 10, y), 5, stems.filled()));
    }
    if !not.is_empty() {
        chart
            .draw_series(
                not.iter()
                    .map(|l| Circle::new((l.0 as f64, l.1), 5, stems.stroke_width(2))),
            )?
            .label(format!("ρ, p ≥ {ALPHA}"))
            .legend(move |(x, y)| Circle::new((x + 10, y), 5, stems.stroke_width(2)));
    }
    super::plot::legend(&mut chart, SeriesLabelPosition::UpperRight)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coordinator::Check;
    use crate::coordinator::check_next::Found;
    use crate::coordinator::findings::SpearmanFinding;
    use crate::coordinator::{CheckKind, CheckRole};

    #[test]
    fn the_band_narrows_as_one_over_root_n() {
        assert_eq!(band(0), None);
        let b = band(10_000).unwrap();
        assert!((b - 0.0196).abs() < 1e-4, "{b}");
        assert!((band(40_000).unwrap() * 2.0 - b).abs() < 1e-12);
    }

    #[test]
    fn the_plot_has_the_band_and_the_lags() {
        let check = Check {
            check: CheckKind::Independence,
            agent: Some(1),
            pass: false,
            role: CheckRole::Gate,
            statistic: Some(0.3),
            pvalue: Some(1e-9),
            n: 10_000,
            found: Found::Spearman(SpearmanFinding::Tested {
                rho: 0.3.into(),
                pvalue: 1e-9.into(),
                lag: Some(4),
                last_lag: 4,
            }),
            next: None,
            data: None,
        };
        let lags = [
            (1, 0.3, 1e-9),
            (2, 0.1, 1e-4),
            (3, 0.03, 0.01),
            (4, 0.01, 0.3),
        ];
        let svg = draw(
            "Spearman correlogram: point 1 (2000 req/s), agent 1",
            &lags,
            &ShownCheck::from(&check),
        )
        .svg()
        .unwrap();
        assert!(svg.contains("<svg"));
        assert!(svg.contains("Spearman correlogram: point 1 (2000 req/s), agent 1"));
        assert!(svg.contains("±1.96/√n = ±0.0196 with n = 10000"), "{svg}");
        assert!(svg.contains("ρ, p &lt; 0.05") || svg.contains("ρ, p < 0.05"));
        assert!(svg.contains("Fail: Spearman ρ at lag 1 = 0.3000"));
    }
}
