//! The latency CCDF: the plot tail-latency papers draw, a log y-axis so that the tail
//! (p99, p99.9, p99.99) gets as much room as the body.

use plotters::prelude::{
    ChartBuilder, Circle, Color, DashedLineSeries, DrawingBackend, IntoLogRange, LineSeries,
    PathElement, RGBColor, SeriesLabelPosition,
};
use serde::{Deserialize, Serialize};

use super::plot::{Area, CAPTION_SIZE, Chart, DrawError, Plot, color, fmt_num, fmt_percentile};

/// The deepest CCDF level drawn: 1e-4, the 99.99th percentile.
pub const DEEPEST: f64 = 1e-4;

/// Levels per decade: enough for a smooth curve on a log axis, few enough that a plot of a
/// million samples stays a small file.
const PER_DECADE: i32 = 20;

/// One point of a CCDF: a fraction `ccdf` of the samples took `latency_us` or longer.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CcdfPoint {
    /// The latency, µs.
    pub latency_us: f64,
    /// The fraction of samples at or above it.
    pub ccdf: f64,
}

/// The empirical CCDF of `latencies_ns` at log-spaced levels from 1 down to [`DEEPEST`],
/// or down to 1/n when the samples are too few to say anything deeper (the last point is
/// then the largest sample).
///
/// The level q is read at the sample with round(q·n) samples at or above it, so every
/// point is a sample and its level an exact count over n: the curve never claims a
/// fraction the samples do not show.
pub fn ccdf_points(latencies_ns: &[u64]) -> Vec<CcdfPoint> {
    let mut sorted = latencies_ns.to_vec();
    sorted.sort_unstable();
    let n = sorted.len();
    if n == 0 {
        return Vec::new();
    }
    let floor = DEEPEST.max(1.0 / n as f64);
    let mut counts: Vec<usize> = levels(floor)
        .map(|q| ((q * n as f64).round() as usize).clamp(1, n))
        .collect();
    if n as f64 * DEEPEST < 1.0 {
        // The samples end above the deepest level: end the curve at the largest.
        counts.push(1);
    }
    counts.dedup();
    counts
        .into_iter()
        .map(|above| CcdfPoint {
            latency_us: sorted[n - above] as f64 / 1e3,
            ccdf: above as f64 / n as f64,
        })
        .collect()
}

/// The CCDF's levels, log-spaced [`PER_DECADE`] a decade from 1 down to `floor`.
pub(super) fn levels(floor: f64) -> impl Iterator<Item = f64> {
    (0..)
        .map(|k| 10f64.powf(-f64::from(k) / f64::from(PER_DECADE)))
        // A little slack so that the floor itself, computed with rounding, is kept.
        .take_while(move |&q| q >= floor * (1.0 - 1e-9))
}

/// A CCDF level as the y axis shows it: a power of ten with the percentile it marks
/// (`1e-3 (p99.9)`), which is how tail latency is talked about.
fn level_label(y: f64) -> String {
    let e = y.log10().round();
    if (y.log10() - e).abs() > 1e-6 || e >= 0.0 {
        fmt_num(y)
    } else {
        format!("1e{e} ({})", fmt_percentile(100.0 - 10f64.powf(e + 2.0)))
    }
}

/// One curve: a load point's, or a compared side's.
#[derive(Debug, Clone)]
pub(crate) struct Series {
    /// The legend entry.
    pub(crate) label: String,
    /// The curve.
    pub(crate) points: Vec<CcdfPoint>,
    /// The series' value of the marked percentile, µs, drawn as a dot on the mark's level
    /// (none: no dot, as in a run's report, which marks no percentile).
    pub(crate) marked: Option<f64>,
}

/// Draws every point's CCDF on one plot.
pub(super) fn draw(series: &[Series]) -> Plot<CcdfChart<'_>> {
    let caption = vec![format!(
        "Each curve: the samples of a load point's measured round (the round its percentiles \
         came from). y: the fraction of those samples at or above the latency, down to {DEEPEST:.0e} \
         (p99.99) or to 1/n where n samples cannot say more. A curve \"without stalls\" is the \
         same round's requests no host stall touched, each weighted against the selection \
         (a longer request is likelier to meet a stall): the server's own tail; the gap \
         between the two is the host's."
    )];
    draw_marked(caption, series, None)
}

/// Draws the curves with `caption` under them and, when `mark` (a percentile, in percent)
/// is given, a dashed line across at its level with each series' value of it on the line:
/// where two curves cross that line is what a comparison of that percentile compares.
pub(crate) fn draw_marked(
    caption: Vec<String>,
    series: &[Series],
    mark: Option<f64>,
) -> Plot<CcdfChart<'_>> {
    Plot::new(caption, CcdfChart { series, mark })
}

/// The curves of [`draw`] and [`draw_marked`].
#[derive(Debug)]
pub(crate) struct CcdfChart<'a> {
    series: &'a [Series],
    mark: Option<f64>,
}

impl Chart for CcdfChart<'_> {
    fn draw<DB: DrawingBackend>(&self, area: &Area<DB>) -> Result<(), DrawError>
    where
        DB::ErrorType: 'static,
    {
        draw_chart(area, self.series, self.mark)
    }
}

/// The grey of the marked percentile's line.
const MARK_GREY: RGBColor = RGBColor(110, 110, 110);

fn draw_chart<DB: DrawingBackend>(
    area: &Area<DB>,
    series: &[Series],
    mark: Option<f64>,
) -> Result<(), DrawError>
where
    DB::ErrorType: 'static,
{
    let xmax = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.latency_us).chain(s.marked))
        .filter(|x| x.is_finite())
        .fold(0.0, f64::max);
    let xmax = if xmax > 0.0 { xmax * 1.05 } else { 1.0 };
    let mut chart = ChartBuilder::on(area)
        .caption("Latency CCDF", ("sans-serif", 22))
        .margin(14)
        .x_label_area_size(44)
        .y_label_area_size(110)
        // Just below the deepest level, so that its gridline and label are drawn.
        .build_cartesian_2d(0f64..xmax, (DEEPEST * 0.8..1f64).log_scale())?;
    chart
        .configure_mesh()
        .x_desc("latency (µs)")
        .y_desc("fraction of requests at or above (CCDF)")
        .x_label_formatter(&|x: &f64| fmt_num(*x))
        .y_label_formatter(&|y: &f64| level_label(*y))
        .axis_desc_style(("sans-serif", CAPTION_SIZE))
        .draw()?;
    for (i, s) in series.iter().enumerate() {
        let c = color(i);
        chart
            .draw_series(LineSeries::new(
                s.points.iter().map(|p| (p.latency_us, p.ccdf)),
                c.stroke_width(2),
            ))?
            .label(s.label.as_str())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(2)));
    }
    // A level below the axis (p99.999) is left unmarked rather than drawn off it.
    if let Some(p) = mark.filter(|p| (DEEPEST * 0.8..1.0).contains(&(1.0 - p / 100.0))) {
        let level = 1.0 - p / 100.0;
        chart
            .draw_series(DashedLineSeries::new(
                [(0.0, level), (xmax, level)],
                8,
                6,
                MARK_GREY.stroke_width(1),
            ))?
            .label(format!("{} compared", fmt_percentile(p)))
            .legend(|(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], MARK_GREY.stroke_width(1))
            });
        for (i, s) in series.iter().enumerate() {
            let dots = s.marked.filter(|v| v.is_finite()).map(|v| (v, level));
            chart.draw_series(dots.map(|at| Circle::new(at, 5, color(i).filled())))?;
        }
    }
    super::plot::legend(&mut chart, SeriesLabelPosition::UpperRight)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_are_exact_counts_down_to_the_deepest() {
        // 1..=100,000 µs: the level q sits at the sample with q·n samples at or above it.
        let ns: Vec<u64> = (1..=100_000u64).rev().map(|i| i * 1000).collect();
        let points = ccdf_points(&ns);
        assert_eq!(points.len(), 4 * 20 + 1);
        assert_eq!(
            points[0],
            CcdfPoint {
                latency_us: 1.0,
                ccdf: 1.0
            }
        );
        // 10% of samples at or above 90,001 µs.
        assert_eq!(
            points[20],
            CcdfPoint {
                latency_us: 90_001.0,
                ccdf: 0.1
            }
        );
        let last = points[points.len() - 1];
        assert_eq!(
            last,
            CcdfPoint {
                latency_us: 99_991.0,
                ccdf: DEEPEST
            }
        );
        assert!(
            points
                .windows(2)
                .all(|w| w[0].ccdf > w[1].ccdf && w[0].latency_us <= w[1].latency_us)
        );
    }

    #[test]
    fn levels_are_labelled_with_their_percentile() {
        assert_eq!(level_label(1.0), "1");
        assert_eq!(level_label(0.1), "1e-1 (p90)");
        assert_eq!(level_label(1e-3), "1e-3 (p99.9)");
        assert_eq!(level_label(1e-4), "1e-4 (p99.99)");
        assert_eq!(level_label(0.5), "0.5");
    }

    #[test]
    fn few_samples_end_at_their_largest() {
        let points = ccdf_points(&[5_000, 1_000, 3_000, 2_000, 4_000]);
        assert_eq!(
            points.first(),
            Some(&CcdfPoint {
                latency_us: 1.0,
                ccdf: 1.0
            })
        );
        assert_eq!(
            points.last(),
            Some(&CcdfPoint {
                latency_us: 5.0,
                ccdf: 0.2
            })
        );
        // Each count appears once, whatever the number of levels that round to it.
        let counts: Vec<f64> = points.iter().map(|p| p.ccdf).collect();
        assert_eq!(counts, vec![1.0, 0.8, 0.6, 0.4, 0.2]);
        assert!(ccdf_points(&[]).is_empty());
    }

    #[test]
    fn the_plot_has_a_curve_and_a_legend_per_point() {
        let series = [
            Series {
                label: "10000 req/s".into(),
                points: ccdf_points(&(1..=1000).map(|i| i * 100).collect::<Vec<_>>()),
                marked: None,
            },
            Series {
                label: "20000 req/s".into(),
                points: ccdf_points(&(1..=1000).map(|i| i * 200).collect::<Vec<_>>()),
                marked: None,
            },
        ];
        let svg = draw(&series).svg().unwrap();
        assert!(svg.contains("<svg") && svg.contains("Latency CCDF"));
        assert!(svg.contains("10000 req/s") && svg.contains("20000 req/s"));
        assert!(
            svg.contains("1e-4 (p99.99)"),
            "the y axis reaches the 99.99th percentile"
        );
        assert!(svg.contains("1e-2 (p99)"));
        assert!(svg.matches("<polyline").count() >= 2);
    }
}
