//! The target percentile of the tail each point answered for (without the host's stalls
//! when asked) against the achieved load, each point with its CI and its answer's verdict:
//! where the knee is, and how sure each point is; beside it, every request's (the host's
//! stalls included) when that is not the tail answered, and the same percentile timed
//! from the scheduled departures, which parts from it where the client falls behind.

use plotters::coord::types::RangedCoordf64;
use plotters::element::DashedPathElement;
use plotters::prelude::{
    BLACK, Cartesian2d, ChartBuilder, ChartContext, Circle, Color, Cross, DashedLineSeries,
    DrawingBackend, EmptyElement, ErrorBar, LineSeries, PathElement, RGBColor, SeriesLabelPosition,
    TriangleMarker,
};
use serde::Serialize;
use vernier_stats::Percentile;

use super::plot::{Area, CAPTION_SIZE, Chart, DrawError, Plot, color, fmt_num, fmt_rate};
use crate::coordinator::{PointResult, Verdict};

/// One load point on the plot.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LoadPoint {
    /// req/s asked for.
    pub target_rate: f64,
    /// req/s answered: the x of the point, because a server that cannot keep up answers
    /// fewer than asked and the knee is where that starts.
    pub achieved_rate: f64,
    /// The verdict of the tail the point answered for.
    pub verdict: Verdict,
    /// Whether that tail is the one without the host's stalls.
    pub without_stalls: bool,
    /// The percentile's estimate in that tail, µs (`None`: the point did not report it).
    pub value: Option<f64>,
    /// Its CI, µs (`None`: too few samples for one).
    pub ci: Option<(f64, f64)>,
    /// The same percentile of every request timed from its scheduled departure, µs
    /// (`None`: not reported, as in records that predate it).
    pub from_schedule: Option<f64>,
    /// Every request's estimate, µs, when the tail answered for is the one without stalls
    /// (`None` otherwise).
    pub every_request: Option<f64>,
}

/// The percentile plotted (the first point's target percentile, 99 if there is no point)
/// and each point's estimate of it, in the tail the point answered for.
pub fn load_points<R>(results: &[&PointResult<R>]) -> (Percentile, Vec<LoadPoint>) {
    let percentile = results
        .first()
        .map_or(Percentile::P99, |r| r.target_percentile);
    let points = results
        .iter()
        .map(|r| {
            let every = r
                .percentiles
                .iter()
                .find(|p| (p.p - percentile.percent()).abs() < 1e-9);
            let without_stalls = r.answers_without_stalls();
            let entry = if without_stalls {
                r.without_stalls
                    .as_ref()
                    .and_then(|w| w.percentile(percentile.percent()))
            } else {
                every
            };
            LoadPoint {
                target_rate: r.target_rate,
                achieved_rate: r.achieved_rate,
                verdict: r.answer,
                without_stalls,
                value: entry.map(|p| p.value),
                ci: entry.and_then(|p| p.ci_low.zip(p.ci_high)),
                from_schedule: r.from_schedule(percentile.percent()).map(|s| s.value),
                every_request: every.filter(|_| without_stalls).map(|p| p.value),
            }
        })
        .collect();
    (percentile, points)
}

/// The colour of a verdict's points.
fn verdict_color(verdict: Verdict) -> RGBColor {
    match verdict {
        Verdict::Converged => color(0),
        Verdict::NotAvailable => color(1),
        Verdict::Accepted => color(4),
        Verdict::Wide => color(5),
    }
}

/// Draws the points, their CIs, a line through them in rate order, and the SLO rate.
pub(super) fn draw(
    percentile: Percentile,
    points: &[LoadPoint],
    slo_rate: Option<f64>,
) -> Plot<LoadChart<'_>> {
    let name = if points.iter().any(|p| p.without_stalls) {
        format!("{percentile} without stalls")
    } else {
        percentile.to_string()
    };
    let mut caption = vec![format!(
        "Each marker: a load point's {name} estimate at the rate it achieved; bars: its \
         confidence interval; colour: its answer's verdict. Hollow markers have no CI (too \
         few samples for one)."
    )];
    if points.iter().any(|p| p.every_request.is_some()) {
        caption.push(format!(
            "Dotted, crosses: the {percentile} of every request, the host's stalls included: \
             how far the host moved it."
        ));
    }
    if points.iter().any(|p| p.from_schedule.is_some()) {
        caption.push(format!(
            "Dashed, triangles: the {percentile} of every request timed from its scheduled \
             departure rather than its actual one (coordinated omission included): where it \
             parts from the markers, the client fell behind its schedule."
        ));
    }
    let missing: Vec<String> = points
        .iter()
        .filter(|p| p.value.is_none())
        .map(|p| fmt_rate(p.target_rate))
        .collect();
    if !missing.is_empty() {
        caption.push(format!(
            "Not drawn (no {name} reported): {}.",
            missing.join(", ")
        ));
    }
    Plot::new(
        caption,
        LoadChart {
            name,
            points,
            slo_rate,
        },
    )
}

/// The points, bars and lines of [`draw`].
#[derive(Debug)]
pub(super) struct LoadChart<'a> {
    name: String,
    points: &'a [LoadPoint],
    slo_rate: Option<f64>,
}

impl Chart for LoadChart<'_> {
    fn draw<DB: DrawingBackend>(&self, area: &Area<DB>) -> Result<(), DrawError>
    where
        DB::ErrorType: 'static,
    {
        draw_chart(area, &self.name, self.points, self.slo_rate)
    }
}

/// A point that has a value to draw.
#[derive(Debug, Clone, Copy)]
struct Drawn {
    x: f64,
    y: f64,
    ci: Option<(f64, f64)>,
    verdict: Verdict,
}

/// The chart's coordinates: achieved req/s across, µs up.
type LoadAxes<'a, DB> = ChartContext<'a, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// Draws the points (with their CIs, by verdict), the tail from the schedule, the SLO's
/// rate and the legend.
fn draw_chart<DB: DrawingBackend>(
    area: &Area<DB>,
    name: &str,
    points: &[LoadPoint],
    slo_rate: Option<f64>,
) -> Result<(), DrawError>
where
    DB::ErrorType: 'static,
{
    let mut drawn: Vec<Drawn> = points
        .iter()
        .filter_map(|p| {
            p.value.map(|y| Drawn {
                x: p.achieved_rate,
                y,
                ci: p.ci,
                verdict: p.verdict,
            })
        })
        .collect();
    drawn.sort_by(|a, b| a.x.total_cmp(&b.x));
    let mut scheduled: Vec<(f64, f64)> = points
        .iter()
        .filter_map(|p| p.from_schedule.map(|y| (p.achieved_rate, y)))
        .collect();
    scheduled.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut every: Vec<(f64, f64)> = points
        .iter()
        .filter_map(|p| p.every_request.map(|y| (p.achieved_rate, y)))
        .collect();
    every.sort_by(|a, b| a.0.total_cmp(&b.0));
    let xmax = drawn
        .iter()
        .map(|d| d.x)
        .chain(scheduled.iter().chain(&every).map(|s| s.0))
        .chain(slo_rate)
        .fold(0.0, f64::max);
    let ymax = drawn
        .iter()
        .map(|d| d.ci.map_or(d.y, |ci| ci.1.max(d.y)))
        .chain(scheduled.iter().chain(&every).map(|s| s.1))
        .fold(0.0, f64::max);
    let xmax = if xmax > 0.0 { xmax * 1.1 } else { 1.0 };
    let ymax = if ymax > 0.0 { ymax * 1.15 } else { 1.0 };

    let mut chart = ChartBuilder::on(area)
        .caption(
            format!("{name} latency vs achieved load"),
            ("sans-serif", 22),
        )
        .margin(14)
        .x_label_area_size(44)
        .y_label_area_size(70)
        .build_cartesian_2d(0f64..xmax, 0f64..ymax)?;
    chart
        .configure_mesh()
        .x_desc("achieved rate (req/s)")
        .y_desc(format!("{name} (µs)"))
        .x_label_formatter(&|x: &f64| fmt_num(*x))
        .y_label_formatter(&|y: &f64| fmt_num(*y))
        .axis_desc_style(("sans-serif", CAPTION_SIZE))
        .draw()?;

    draw_points(&mut chart, &drawn)?;
    if !scheduled.is_empty() {
        draw_scheduled(&mut chart, every_request_name(name), &scheduled)?;
    }
    if !every.is_empty() {
        draw_every_request(&mut chart, name, &every)?;
    }
    if drawn.iter().any(|d| d.ci.is_none()) {
        // A legend entry for the hollow marker, drawn off the chart.
        chart
            .draw_series(std::iter::empty::<Circle<(f64, f64), i32>>())?
            .label("no CI")
            .legend(|(x, y)| Circle::new((x + 10, y), 5, BLACK.stroke_width(2)));
    }
    if let Some(rate) = slo_rate {
        let c = color(2);
        chart
            .draw_series(DashedLineSeries::new(
                [(rate, 0.0), (rate, ymax)],
                8,
                6,
                c.stroke_width(2),
            ))?
            .label(format!("SLO rate {}", fmt_rate(rate)))
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(2)));
    }
    super::plot::legend(&mut chart, SeriesLabelPosition::UpperLeft)
}

/// The points joined in order of load, then each verdict's points with their CIs
/// (filled with a CI, hollow without).
fn draw_points<'a, DB: DrawingBackend + 'a>(
    chart: &mut LoadAxes<'a, DB>,
    drawn: &[Drawn],
) -> Result<(), DrawError>
where
    DB::ErrorType: 'static,
{
    chart.draw_series(LineSeries::new(
        drawn.iter().map(|d| (d.x, d.y)),
        RGBColor(150, 150, 150).stroke_width(1),
    ))?;
    for verdict in [
        Verdict::Converged,
        Verdict::Wide,
        Verdict::Accepted,
        Verdict::NotAvailable,
    ] {
        let group: Vec<_> = drawn.iter().filter(|d| d.verdict == verdict).collect();
        if group.is_empty() {
            continue;
        }
        let c = verdict_color(verdict);
        chart.draw_series(group.iter().filter_map(|d| {
            d.ci.map(|(low, high)| {
                ErrorBar::new_vertical(d.x, low, d.y, high, c.stroke_width(2), 10)
            })
        }))?;
        chart
            .draw_series(group.iter().map(|d| {
                let style = if d.ci.is_some() {
                    c.filled()
                } else {
                    c.stroke_width(2)
                };
                Circle::new((d.x, d.y), 5, style)
            }))?
            .label(verdict.name())
            .legend(move |(x, y)| Circle::new((x + 10, y), 5, c.filled()));
    }
    Ok(())
}

/// The percentile's own name in a plot named for the tail without stalls (`p99 without
/// stalls`: `p99`), for the lines that are every request's.
fn every_request_name(name: &str) -> &str {
    name.trim_end_matches(" without stalls")
}

/// Every request's percentile beside the tail without stalls: a dotted grey line with
/// crosses.
fn draw_every_request<'a, DB: DrawingBackend + 'a>(
    chart: &mut LoadAxes<'a, DB>,
    name: &str,
    every: &[(f64, f64)],
) -> Result<(), DrawError>
where
    DB::ErrorType: 'static,
{
    let c = RGBColor(120, 120, 120);
    chart.draw_series(DashedLineSeries::new(
        every.iter().copied(),
        2,
        4,
        c.stroke_width(2),
    ))?;
    let label = format!("{} every request", every_request_name(name));
    chart
        .draw_series(
            every
                .iter()
                .map(|&(x, y)| Cross::new((x, y), 5, c.stroke_width(2))),
        )?
        .label(label)
        .legend(move |(x, y)| Cross::new((x + 10, y), 5, c.stroke_width(2)));
    Ok(())
}

/// The tail timed from the scheduled departures: a dashed line with triangles.
fn draw_scheduled<'a, DB: DrawingBackend + 'a>(
    chart: &mut LoadAxes<'a, DB>,
    name: &str,
    scheduled: &[(f64, f64)],
) -> Result<(), DrawError>
where
    DB::ErrorType: 'static,
{
    let c = color(3);
    chart.draw_series(DashedLineSeries::new(
        scheduled.iter().copied(),
        6,
        4,
        c.stroke_width(2),
    ))?;
    chart
        .draw_series(
            scheduled
                .iter()
                .map(|&(x, y)| TriangleMarker::new((x, y), 6, c.stroke_width(2))),
        )?
        .label(format!("{name} from schedule"))
        .legend(move |(x, y)| {
            EmptyElement::at((x, y))
                + DashedPathElement::new([(0, 0), (20, 0)], 6, 4, c.stroke_width(2))
                + TriangleMarker::new((10, 0), 6, c.stroke_width(2))
        });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coordinator::{PercentileResult, SchedulePercentile};

    fn result(rate: f64, verdict: Verdict, p99: Option<(f64, Option<(f64, f64)>)>) -> PointResult {
        let percentiles = p99
            .map(|(value, ci)| PercentileResult::example(99.0, value, ci))
            .into_iter()
            .collect();
        PointResult {
            achieved_rate: rate - 1.0,
            samples: 1000,
            duration_s: 1.0,
            ci_width_us: None,
            ..PointResult::example(rate, verdict, percentiles)
        }
    }

    #[test]
    fn each_point_gives_its_target_percentile_and_ci() {
        let a = result(1000.0, Verdict::Converged, Some((20.0, Some((19.0, 22.0)))));
        let b = result(2000.0, Verdict::NotAvailable, Some((50.0, None)));
        let c = result(3000.0, Verdict::NotAvailable, None);
        let (p, points) = load_points(&[&a, &b, &c]);
        assert!(points.iter().all(|p| p.from_schedule.is_none()));
        let svg = draw(p, &points, None).svg().unwrap();
        assert!(!svg.contains("from schedule") && !svg.contains("Dashed"));
        assert_eq!(p.percent(), 99.0);
        assert_eq!(points[0].achieved_rate, 999.0);
        assert_eq!(
            (points[0].value, points[0].ci),
            (Some(20.0), Some((19.0, 22.0)))
        );
        assert_eq!((points[1].value, points[1].ci), (Some(50.0), None));
        assert_eq!((points[2].value, points[2].ci), (None, None));

        let svg = draw(p, &points, Some(1000.0)).svg().unwrap();
        assert!(svg.contains("p99 latency vs achieved load"), "{svg}");
        assert!(svg.contains("converged") && svg.contains("n/a") && svg.contains("no CI"));
        assert!(svg.contains("SLO rate 1000 req/s"));
        assert!(svg.contains("Not drawn (no p99 reported): 3000 req/s."));
    }

    /// A point that answered for the tail without stalls is drawn at that tail's
    /// estimate and CI, coloured by its answer, with every request's beside it.
    #[test]
    fn a_point_answered_without_stalls_is_drawn_at_that_tail_with_every_request_s_beside() {
        use crate::coordinator::{Probed, WithoutStalls};
        let answered = |rate: f64, every: f64, own: f64| {
            let mut r = result(rate, Verdict::NotAvailable, Some((every, None)));
            r.tail = crate::scenario::Tail::WithoutStalls;
            r.without_stalls = Some(WithoutStalls {
                verdict: Verdict::Converged,
                short: None,
                percentiles: vec![PercentileResult::example(
                    99.0,
                    own,
                    Some((own - 2.0, own + 3.0)),
                )],
                ci_width_us: Some(5.0),
                touched_share: 0.02,
                touched_by_agent: vec![0.02],
                samples: 1000,
                stalls: 3,
                probed: Probed::ClientAndTarget,
                touched_call: None,
                more_time: None,
            });
            r.settle_answer();
            r
        };
        let (a, b) = (answered(1000.0, 80.0, 40.0), answered(2000.0, 95.0, 45.0));
        let (p, points) = load_points(&[&a, &b]);
        assert_eq!(points[0].verdict, Verdict::Converged);
        assert!(points[0].without_stalls);
        assert_eq!(
            (points[0].value, points[0].ci),
            (Some(40.0), Some((38.0, 43.0)))
        );
        assert_eq!(points[1].every_request, Some(95.0));
        let svg = draw(p, &points, None).svg().unwrap();
        assert!(
            svg.contains("p99 without stalls latency vs achieved load"),
            "{svg}"
        );
        assert!(svg.contains("p99 every request"), "{svg}");
        assert!(svg.contains("converged") && !svg.contains(">n/a<"), "{svg}");
        // Every request's own tail, when it is the one answered, has no second series.
        let c = result(1000.0, Verdict::Converged, Some((20.0, Some((19.0, 22.0)))));
        let (_, plain) = load_points(&[&c]);
        assert_eq!(plain[0].every_request, None);
    }

    #[test]
    fn the_target_percentile_from_the_schedule_is_a_second_series() {
        let sched = |p, value, actual| SchedulePercentile { p, value, actual };
        let mut a = result(1000.0, Verdict::Converged, Some((20.0, Some((19.0, 22.0)))));
        a.from_schedule = vec![sched(50.0, 9.0, 8.0), sched(99.0, 21.0, 20.1)];
        let mut b = result(2000.0, Verdict::NotAvailable, Some((50.0, None)));
        b.from_schedule = vec![sched(99.0, 900.0, 50.2)];
        let (p, points) = load_points(&[&a, &b]);
        assert_eq!(points[0].from_schedule, Some(21.0));
        assert_eq!(points[1].from_schedule, Some(900.0));
        let svg = draw(p, &points, None).svg().unwrap();
        assert!(svg.contains("p99 from schedule"), "the legend entry: {svg}");
        assert!(
            svg.contains("Dashed, triangles: the p99 of every request"),
            "{svg}"
        );
        // The latency axis reaches the scheduled 900 µs, well above every CI.
        assert!(svg.contains("\n900\n"), "{svg}");
    }
}
