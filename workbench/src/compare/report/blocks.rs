//! The blocks over time: each block's percentile at the time it started, A and B as two
//! series. Interleaving reaches both sides alike only if the host drifts slowly against a
//! pair's length; this is where a drift, a step, or one block that went wrong shows.

use plotters::prelude::{
    BLACK, ChartBuilder, Circle, Color, Cross, DrawingBackend, LineSeries, SeriesLabelPosition,
    TriangleMarker,
};

use crate::compare::comparison::{Comparison, Design, Side as CompareSide};
use crate::report::{Area, CAPTION_SIZE, Chart, DrawError, Plot, color, fmt_num, legend};

/// One side's blocks that have a value: (start, s; percentile, µs; whether it has a problem).
#[derive(Debug)]
struct Side {
    label: String,
    points: Vec<(f64, f64, bool)>,
}

/// Draws every block of `c` that has a value, A's as circles and B's as triangles, each
/// side's joined in time order; blocks with a problem hollow and crossed.
pub(super) fn draw(c: &Comparison, label_a: String, label_b: String) -> Plot<BlocksChart> {
    let name = super::table::compared_name(c);
    let side = |side: CompareSide, label: String| Side {
        label,
        points: c
            .blocks
            .iter()
            .filter(|b| b.side == side && b.value_of(c.tail).is_finite())
            .map(|b| (b.started_s, b.value_of(c.tail), b.problem.is_some()))
            .collect(),
    };
    let design = match c.design {
        Design::Duet => "windows of one stream, A and B at the same moments (a duet)",
        Design::Blocks => "pairs of blocks, A and B in a random order within each",
        Design::Sequential => "every block of A, then every block of B",
    };
    let mut caption = vec![format!(
        "Each marker: one block's {name} at {:.0} req/s, at the time it started measuring \
         (seconds from the comparison's start); measured as {design}. A drift of the host \
         shows as a trend both sides share; a block far from its side's others, as one that \
         went wrong.",
        c.rate
    )];
    let problems: Vec<String> = c
        .blocks
        .iter()
        .filter(|b| b.problem.is_some())
        .map(|b| format!("{} {}", b.side, b.pair + 1))
        .collect();
    if !problems.is_empty() {
        caption.push(format!(
            "Hollow and crossed: blocks that cannot stand for their side ({}); the table says why.",
            problems.join(", ")
        ));
    }
    let chart = BlocksChart {
        name,
        sides: [side(CompareSide::A, label_a), side(CompareSide::B, label_b)],
        seconds: c.seconds,
    };
    Plot::new(caption, chart)
}

/// The markers and lines of [`draw`].
#[derive(Debug)]
pub(super) struct BlocksChart {
    name: String,
    sides: [Side; 2],
    seconds: f64,
}

impl Chart for BlocksChart {
    fn draw<DB: DrawingBackend>(&self, area: &Area<DB>) -> Result<(), DrawError>
    where
        DB::ErrorType: 'static,
    {
        draw_chart(area, self)
    }
}

fn draw_chart<DB: DrawingBackend>(area: &Area<DB>, chart: &BlocksChart) -> Result<(), DrawError>
where
    DB::ErrorType: 'static,
{
    let points = || chart.sides.iter().flat_map(|s| s.points.iter());
    let xmax = points().map(|p| p.0).fold(chart.seconds, f64::max);
    let ymax = points().map(|p| p.1).fold(0.0, f64::max);
    let xmax = if xmax > 0.0 { xmax * 1.03 } else { 1.0 };
    let ymax = if ymax > 0.0 { ymax * 1.15 } else { 1.0 };
    let mut axes = ChartBuilder::on(area)
        .caption(
            format!("{} of each block over time", chart.name),
            ("sans-serif", 22),
        )
        .margin(14)
        .x_label_area_size(44)
        .y_label_area_size(70)
        .build_cartesian_2d(0f64..xmax, 0f64..ymax)?;
    axes.configure_mesh()
        .x_desc("block start (s from the comparison's start)")
        .y_desc(format!("the block's {} (µs)", chart.name))
        .x_label_formatter(&|x: &f64| fmt_num(*x))
        .y_label_formatter(&|y: &f64| fmt_num(*y))
        .axis_desc_style(("sans-serif", CAPTION_SIZE))
        .draw()?;
    for (i, side) in chart.sides.iter().enumerate() {
        let c = color(i);
        let mut line: Vec<(f64, f64)> = side.points.iter().map(|p| (p.0, p.1)).collect();
        line.sort_by(|a, b| a.0.total_cmp(&b.0));
        axes.draw_series(LineSeries::new(line, c.mix(0.5).stroke_width(1)))?;
        // Filled where the block stands for its side, hollow where it cannot.
        let style = |problem: bool| {
            if problem {
                c.stroke_width(2)
            } else {
                c.filled()
            }
        };
        let at = side
            .points
            .iter()
            .map(|&(x, y, problem)| ((x, y), style(problem)));
        // A circles, B triangles: the two sides read apart without their colours.
        if i == 0 {
            axes.draw_series(at.map(|(xy, s)| Circle::new(xy, 5, s)))?
                .label(side.label.as_str())
                .legend(move |(x, y)| Circle::new((x + 10, y), 5, c.filled()));
        } else {
            axes.draw_series(at.map(|(xy, s)| TriangleMarker::new(xy, 7, s)))?
                .label(side.label.as_str())
                .legend(move |(x, y)| TriangleMarker::new((x + 10, y), 7, c.filled()));
        }
    }
    let problems: Vec<(f64, f64)> = points().filter(|p| p.2).map(|p| (p.0, p.1)).collect();
    if !problems.is_empty() {
        axes.draw_series(
            problems
                .into_iter()
                .map(|xy| Cross::new(xy, 7, BLACK.stroke_width(2))),
        )?
        .label("cannot stand for its side")
        .legend(|(x, y)| Cross::new((x + 10, y), 7, BLACK.stroke_width(2)));
    }
    legend(&mut axes, SeriesLabelPosition::UpperRight)
}
