//! A replicated point's runs side by side: each run's estimate of the target percentile
//! with its own CI, and the CI across the runs. Where the runs' bars do not overlap, each
//! run settled somewhere else (hysteresis), which no single run's CI shows.

use plotters::prelude::{
    ChartBuilder, Circle, Color, DashedLineSeries, DrawingBackend, ErrorBar, LineSeries,
    SeriesLabelPosition,
};
use serde::Serialize;
use vernier_stats::Percentile;

use super::plot::{Area, CAPTION_SIZE, Chart, DrawError, Plot, color, fmt_num, fmt_rate};
use crate::coordinator::{PointResult, Verdict};

/// One replicated load point on the plot.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunsPoint {
    /// req/s asked for.
    pub target_rate: f64,
    /// The point's verdict (across its runs).
    pub verdict: Verdict,
    /// Each run's estimate.
    pub runs: Vec<RunEstimate>,
    /// The runs' mean and the CI across them, µs.
    pub across: Option<(f64, Option<(f64, f64)>)>,
    /// Whether the runs disagree beyond their own CIs.
    pub hysteresis: bool,
}

/// One run's estimate on the plot.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RunEstimate {
    /// The run's number (from 1).
    pub run: u32,
    /// Its estimate, µs.
    pub value: f64,
    /// Its own CI, µs.
    pub ci: Option<(f64, f64)>,
}

/// The replicated points among `results`, with the percentile plotted (the first one's
/// target percentile).
pub fn runs_points<R>(results: &[&PointResult<R>]) -> (Percentile, Vec<RunsPoint>) {
    let replicated: Vec<(&PointResult<R>, &crate::coordinator::Replication<R>)> = results
        .iter()
        .filter_map(|r| r.replication.as_deref().map(|rep| (*r, rep)))
        .collect();
    let percentile = replicated
        .first()
        .map_or(Percentile::P99, |(r, _)| r.target_percentile);
    let p = percentile.percent();
    let points = replicated
        .iter()
        .map(|(r, rep)| RunsPoint {
            target_rate: r.target_rate,
            verdict: r.verdict,
            runs: rep
                .runs
                .iter()
                .enumerate()
                .filter_map(|(i, run)| {
                    let q = run.percentile(p)?;
                    Some(RunEstimate {
                        run: run.run.unwrap_or(i as u32 + 1),
                        value: q.value,
                        ci: q.ci_low.zip(q.ci_high),
                    })
                })
                .collect(),
            across: r.percentile(p).map(|q| (q.value, q.ci_low.zip(q.ci_high))),
            hysteresis: rep.hysteresis,
        })
        .collect();
    (percentile, points)
}

/// Draws every replicated point's runs (x: the run number), one colour per load.
pub(super) fn draw(percentile: Percentile, points: &[RunsPoint]) -> Plot<RunsChart<'_>> {
    let name = percentile.to_string();
    let mut caption = vec![format!(
        "Each marker: one run's {name} with its own confidence interval (bars), the runs in \
         the order they ran, each with fresh connections and its own seed. Solid line: the \
         runs' mean; dashed: the 95% t-interval across the runs, the point's answer."
    )];
    for p in points {
        let estimates: Vec<String> = p.runs.iter().map(|r| fmt_num(r.value)).collect();
        caption.push(format!(
            "{}: {} runs ({} µs), {}{}.",
            fmt_rate(p.target_rate),
            p.runs.len(),
            estimates.join(", "),
            p.verdict.name(),
            if p.hysteresis {
                "; the runs disagree beyond their own CIs (hysteresis)"
            } else {
                ""
            }
        ));
    }
    Plot::new(caption, RunsChart { name, points })
}

/// The markers, bars and lines of [`draw`].
#[derive(Debug)]
pub(super) struct RunsChart<'a> {
    name: String,
    points: &'a [RunsPoint],
}

impl Chart for RunsChart<'_> {
    fn draw<DB: DrawingBackend>(&self, area: &Area<DB>) -> Result<(), DrawError>
    where
        DB::ErrorType: 'static,
    {
        let runs = self
            .points
            .iter()
            .flat_map(|p| p.runs.iter().map(|r| r.run))
            .max()
            .unwrap_or(1);
        let ymax = self
            .points
            .iter()
            .flat_map(|p| {
                p.runs
                    .iter()
                    .map(|r| r.ci.map_or(r.value, |ci| ci.1.max(r.value)))
                    .chain(p.across.map(|a| a.1.map_or(a.0, |ci| ci.1.max(a.0))))
            })
            .fold(0.0, f64::max);
        let ymax = if ymax > 0.0 { ymax * 1.15 } else { 1.0 };
        let xmax = f64::from(runs) + 0.5;
        let mut chart = ChartBuilder::on(area)
            .caption(
                format!("{} per run of each replicated point", self.name),
                ("sans-serif", 22),
            )
            .margin(14)
            .x_label_area_size(44)
            .y_label_area_size(70)
            .build_cartesian_2d(0.5f64..xmax, 0f64..ymax)?;
        chart
            .configure_mesh()
            .x_desc("run")
            .y_desc(format!("{} (µs)", self.name))
            .x_labels(runs as usize)
            .x_label_formatter(&|x: &f64| format!("{x:.0}"))
            .y_label_formatter(&|y: &f64| fmt_num(*y))
            .axis_desc_style(("sans-serif", CAPTION_SIZE))
            .draw()?;
        for (i, p) in self.points.iter().enumerate() {
            let c = color(i);
            // Offset each load a little, so that points at the same run do not hide each
            // other's bars.
            let dx = (i as f64 - (self.points.len() as f64 - 1.0) / 2.0) * 0.08;
            if let Some((mean, ci)) = p.across {
                chart.draw_series(LineSeries::new(
                    [(0.5, mean), (xmax, mean)],
                    c.stroke_width(2),
                ))?;
                if let Some((low, high)) = ci {
                    for y in [low, high] {
                        chart.draw_series(DashedLineSeries::new(
                            [(0.5, y), (xmax, y)],
                            6,
                            4,
                            c.stroke_width(1),
                        ))?;
                    }
                }
            }
            chart.draw_series(
                p.runs
                    .iter()
                    .filter_map(|&RunEstimate { run, value: y, ci }| {
                        ci.map(|(low, high)| {
                            ErrorBar::new_vertical(
                                f64::from(run) + dx,
                                low,
                                y,
                                high,
                                c.stroke_width(2),
                                10,
                            )
                        })
                    }),
            )?;
            chart
                .draw_series(p.runs.iter().map(|&RunEstimate { run, value: y, ci }| {
                    let style = if ci.is_some() {
                        c.filled()
                    } else {
                        c.stroke_width(2)
                    };
                    Circle::new((f64::from(run) + dx, y), 5, style)
                }))?
                .label(format!(
                    "{} ({})",
                    fmt_rate(p.target_rate),
                    p.verdict.name()
                ))
                .legend(move |(x, y)| Circle::new((x + 10, y), 5, c.filled()));
        }
        super::plot::legend(&mut chart, SeriesLabelPosition::UpperLeft)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coordinator::{PercentileResult, Replication};

    fn run(k: u32, value: f64) -> PointResult {
        PointResult {
            run: Some(k),
            ..PointResult::example(
                10_000.0,
                Verdict::Converged,
                vec![PercentileResult::example(
                    99.0,
                    value,
                    Some((value - 5.0, value + 5.0)),
                )],
            )
        }
    }

    #[test]
    fn each_run_is_drawn_with_its_ci_and_the_ci_across_runs() {
        let runs = vec![run(1, 80.0), run(2, 200.0), run(3, 330.0)];
        let point = PointResult {
            replication: Some(Box::new(Replication {
                method: crate::coordinator::AcrossMethod::TIntervalOverRuns,
                runs,
                across: Vec::new(),
                width_target_us: 20.0,
                spread: None,
                hysteresis: false,
            })),
            ..PointResult::example(
                10_000.0,
                Verdict::NotAvailable,
                vec![PercentileResult::example(
                    99.0,
                    203.3,
                    Some((-107.0, 513.7)),
                )],
            )
        };
        let plain = PointResult::example(20_000.0, Verdict::Converged, Vec::new());
        let (p, points) = runs_points(&[&point, &plain]);
        assert_eq!(p, Percentile::P99);
        assert_eq!(points.len(), 1, "only the replicated point");
        assert_eq!(
            points[0].runs,
            [(1, 80.0), (2, 200.0), (3, 330.0)]
                .map(|(run, value)| RunEstimate {
                    run,
                    value,
                    ci: Some((value - 5.0, value + 5.0))
                })
                .to_vec()
        );
        assert_eq!(points[0].across, Some((203.3, Some((-107.0, 513.7)))));
        let svg = draw(p, &points).svg().unwrap();
        assert!(
            svg.contains("p99 per run of each replicated point"),
            "{svg}"
        );
        assert!(
            svg.contains("10000 req/s: 3 runs (80, 200, 330 µs), n/a."),
            "{svg}"
        );
        assert!(svg.contains("10000 req/s (n/a)"), "{svg}");
        // Three runs' markers (and the legend's), each with its bar (whose centre plotters
        // marks with a ring).
        assert_eq!(
            svg.matches(r##"fill="#0072B2" stroke="none""##).count(),
            3 + 1
        );
        assert_eq!(svg.matches(r##"fill="none" stroke="#0072B2""##).count(), 3);
    }
}
