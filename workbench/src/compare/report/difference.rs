//! The CI of B − A look by look: how the interval narrowed as pairs were added, against
//! zero (a CI that leaves it is a difference) and ± the width asked (a CI inside it is no
//! difference worth the name). The verdict was read off the last look.

use plotters::prelude::{
    BLACK, ChartBuilder, Circle, Color, DashedLineSeries, DrawingBackend, ErrorBar, LineSeries,
    PathElement, Polygon, SeriesLabelPosition,
};

use crate::compare::comparison::{Comparison, Look};
use crate::report::{Area, CAPTION_SIZE, Chart, DrawError, Plot, color, fmt_num, legend};

/// Draws every look of `c`: B − A with its CI as a bar and, across the looks, a band.
pub(super) fn draw(c: &Comparison) -> Plot<DifferenceChart> {
    let name = super::table::compared_name(c);
    let confidence = c.ci.map_or(95.0, |ci| ci.confidence * 100.0);
    let mut looks = c.looks.clone();
    looks.sort_by_key(|l| l.pairs);
    let mut caption = vec![format!(
        "Each look: after a pair of blocks, B − A of the {name} (dot) with its {}% CI (bar, \
         and the band across looks), by sectioning over the pairs measured so far.",
        fmt_num(confidence)
    )];
    let width = (c.width_us.is_finite() && c.width_us > 0.0).then_some(c.width_us.get());
    if let Some(w) = width {
        caption.push(format!(
            "Dashed: ± the width asked, {} µs. A CI that leaves zero is a difference; one \
             inside the dashed lines, none worth the name.",
            fmt_num(w)
        ));
    }
    caption.push(format!("Verdict: {}: {}", c.verdict.text(), c.reason));
    Plot::new(caption, DifferenceChart { name, looks, width })
}

/// The looks, band, bars and lines of [`draw`].
#[derive(Debug)]
pub(super) struct DifferenceChart {
    name: String,
    /// In order of pairs.
    looks: Vec<Look>,
    /// The width asked, µs (none: not known, as when no look was made).
    width: Option<f64>,
}

impl Chart for DifferenceChart {
    fn draw<DB: DrawingBackend>(&self, area: &Area<DB>) -> Result<(), DrawError>
    where
        DB::ErrorType: 'static,
    {
        draw_chart(area, self)
    }
}

/// The y range: every CI, zero and ± the width, with a little room around.
fn y_range(chart: &DifferenceChart) -> (f64, f64) {
    let ends = chart
        .looks
        .iter()
        .flat_map(|l| [l.low, l.high, l.difference])
        .chain(chart.width.into_iter().flat_map(|w| [-w, w]))
        .chain([0.0])
        .filter(|y| y.is_finite());
    let (low, high) = ends.fold((0.0f64, 0.0f64), |(lo, hi), y| (lo.min(y), hi.max(y)));
    let room = if high > low { (high - low) * 0.1 } else { 1.0 };
    (low - room, high + room)
}

fn draw_chart<DB: DrawingBackend>(area: &Area<DB>, chart: &DifferenceChart) -> Result<(), DrawError>
where
    DB::ErrorType: 'static,
{
    let looks = &chart.looks;
    let first = looks.first().map_or(0.0, |l| l.pairs as f64);
    let last = looks.last().map_or(1.0, |l| l.pairs as f64);
    let (x0, x1) = (first - 0.5, last + 0.5);
    let (y0, y1) = y_range(chart);
    let mut axes = ChartBuilder::on(area)
        .caption(
            format!("B − A of the {}, look by look", chart.name),
            ("sans-serif", 22),
        )
        .margin(14)
        .x_label_area_size(44)
        .y_label_area_size(70)
        .build_cartesian_2d(x0..x1, y0..y1)?;
    axes.configure_mesh()
        .x_desc("pairs of blocks measured")
        .y_desc(format!("B − A of the {} (µs)", chart.name))
        .x_label_formatter(&|x: &f64| fmt_num(*x))
        .y_label_formatter(&|y: &f64| fmt_num(*y))
        .axis_desc_style(("sans-serif", CAPTION_SIZE))
        .draw()?;

    let c = color(0);
    let band: Vec<(f64, f64)> = looks
        .iter()
        .map(|l| (l.pairs as f64, l.low))
        .chain(looks.iter().rev().map(|l| (l.pairs as f64, l.high)))
        .collect();
    axes.draw_series(std::iter::once(Polygon::new(band, c.mix(0.15).filled())))?;
    axes.draw_series(LineSeries::new(
        [(x0, 0.0), (x1, 0.0)],
        BLACK.stroke_width(1),
    ))?;
    if let Some(w) = chart.width {
        let grey = color(6).mix(0.6);
        for y in [-w, w] {
            let line = axes.draw_series(DashedLineSeries::new(
                [(x0, y), (x1, y)],
                8,
                6,
                grey.stroke_width(1),
            ))?;
            if y > 0.0 {
                line.label(format!("± {} µs asked", fmt_num(w)))
                    .legend(move |(x, y)| {
                        PathElement::new(vec![(x, y), (x + 20, y)], grey.stroke_width(1))
                    });
            }
        }
    }
    axes.draw_series(looks.iter().map(|l| {
        ErrorBar::new_vertical(
            l.pairs as f64,
            l.low,
            l.difference,
            l.high,
            c.stroke_width(2),
            10,
        )
    }))?;
    axes.draw_series(LineSeries::new(
        looks.iter().map(|l| (l.pairs as f64, l.difference)),
        c.stroke_width(1),
    ))?;
    axes.draw_series(
        looks
            .iter()
            .map(|l| Circle::new((l.pairs as f64, l.difference), 5, c.filled())),
    )?
    .label("B − A and its CI")
    .legend(move |(x, y)| Circle::new((x + 10, y), 5, c.filled()));
    legend(&mut axes, SeriesLabelPosition::UpperRight)
}
