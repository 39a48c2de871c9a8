//! The latency budget plot: one stacked bar per load point, the measured p50 beside it.

use plotters::prelude::{
    BLACK, ChartBuilder, Circle, Color, DrawingBackend, ErrorBar, Rectangle, SeriesLabelPosition,
};

use super::plot::{Area, CAPTION_SIZE, Chart, DrawError, Plot, color, fmt_num, fmt_rate};
use crate::budget::Budget;
use crate::coordinator::PointResult;

/// One load point's bar.
#[derive(Debug, Clone, PartialEq)]
pub struct BudgetBar {
    /// The point's target rate, req/s.
    pub target_rate: f64,
    /// The segments, bottom up: (name, µs), known parts only.
    pub segments: Vec<(&'static str, f64)>,
    /// The parts unknown on this point, by name.
    pub unknown: Vec<&'static str>,
    /// The measured p50 and its CI, µs.
    pub measured: Option<(f64, Option<(f64, f64)>)>,
}

/// The segment names, in stacking order, each with its colour index.
const SEGMENTS: [(&str, usize); 8] = [
    ("floor", 0),
    ("client", 5),
    ("path moved", 6),
    ("host", 1),
    ("server (model)", 2),
    ("queue beyond", 4),
    ("service beyond", 3),
    ("unexplained", 7),
];

/// The bars of the points that have a budget, in the order measured.
pub fn budget_bars<R>(results: &[&PointResult<R>]) -> Vec<BudgetBar> {
    results
        .iter()
        .filter_map(|r| r.budget.as_ref().map(|b| bar(r.target_rate, b)))
        .collect()
}

fn bar(target_rate: f64, b: &Budget) -> BudgetBar {
    let mut segments = Vec::new();
    let mut unknown = Vec::new();
    for (name, us) in b.parts() {
        match us {
            Some(us) => segments.push((name, us)),
            None => unknown.push(name),
        }
    }
    if let Some(left) = b.unexplained_us() {
        segments.push(("unexplained", left));
    }
    BudgetBar {
        target_rate,
        segments,
        unknown,
        measured: b.measured_us.map(|m| (m, b.ci_us)),
    }
}

/// The stacked bars with their captions.
pub(super) fn draw(bars: &[BudgetBar]) -> Plot<BudgetChart<'_>> {
    let mut caption = vec![
        "Where each load point's median went. Bars, bottom up: the floor (a busy-polling \
         ping-pong between the agent's and the target's cores, at the run's start), the \
         client (the agent against a server that answers at once, less the floor: \
         calibrated, not per request), with the path probe how far the path it met moved \
         from that calibration, the host (how far the probes' stalls move the \
         median), the server and its queue by the ideal model, with the path probe the \
         queue beyond the model, where the server says how long it served each request \
         the service beyond what was asked, and what the parts leave unexplained. A negative part is drawn over the top of the parts under it. Black: \
         the measured p50 with its CI."
            .to_string(),
    ];
    for b in bars.iter().filter(|b| !b.unknown.is_empty()) {
        caption.push(format!(
            "{}: unknown {} (not drawn; run.json says why).",
            fmt_rate(b.target_rate),
            b.unknown.join(", ")
        ));
    }
    Plot::new(caption, BudgetChart { bars })
}

/// The chart of [`draw`].
#[derive(Debug)]
pub(super) struct BudgetChart<'a> {
    bars: &'a [BudgetBar],
}

impl Chart for BudgetChart<'_> {
    fn draw<DB: DrawingBackend>(&self, area: &Area<DB>) -> Result<(), DrawError>
    where
        DB::ErrorType: 'static,
    {
        draw_chart(area, self.bars)
    }
}

/// The bottom and top of each segment of `bar`, stacked: a negative one runs down from
/// the top of those under it.
fn stack(bar: &BudgetBar) -> Vec<(&'static str, f64, f64)> {
    let mut top = 0.0;
    bar.segments
        .iter()
        .map(|&(name, us)| {
            let from = top;
            top += us;
            (name, from.min(top), from.max(top))
        })
        .collect()
}

fn draw_chart<DB: DrawingBackend>(area: &Area<DB>, bars: &[BudgetBar]) -> Result<(), DrawError>
where
    DB::ErrorType: 'static,
{
    let n = bars.len().max(1);
    let ymax = bars
        .iter()
        .flat_map(|b| {
            stack(b)
                .into_iter()
                .map(|(_, _, top)| top)
                .chain(b.measured.map(|(m, ci)| ci.map_or(m, |c| c.1.max(m))))
        })
        .fold(0.0, f64::max);
    let ymax = if ymax > 0.0 { ymax * 1.15 } else { 1.0 };
    let labels: Vec<String> = bars.iter().map(|b| fmt_rate(b.target_rate)).collect();
    let mut chart = ChartBuilder::on(area)
        .caption("p50 latency budget per load", ("sans-serif", 22))
        .margin(14)
        .x_label_area_size(44)
        .y_label_area_size(70)
        .build_cartesian_2d(0f64..n as f64, 0f64..ymax)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(n * 2 + 1)
        .x_desc("load point (target rate)")
        .y_desc("µs")
        .x_label_formatter(&|x: &f64| {
            // Labels at the bars' centres only.
            let i = x - 0.5;
            if (i - i.round()).abs() < 1e-6 && i >= 0.0 {
                labels.get(i.round() as usize).cloned().unwrap_or_default()
            } else {
                String::new()
            }
        })
        .y_label_formatter(&|y: &f64| fmt_num(*y))
        .axis_desc_style(("sans-serif", CAPTION_SIZE))
        .draw()?;
    for (name, c) in SEGMENTS {
        let c = color(c);
        let rects: Vec<Rectangle<(f64, f64)>> = bars
            .iter()
            .enumerate()
            .flat_map(|(i, b)| {
                stack(b)
                    .into_iter()
                    .filter(move |(n, _, _)| *n == name)
                    .map(move |(_, low, high)| {
                        let x = i as f64;
                        Rectangle::new([(x + 0.2, low), (x + 0.7, high)], c.mix(0.85).filled())
                    })
            })
            .collect();
        if rects.is_empty() {
            continue;
        }
        chart
            .draw_series(rects)?
            .label(name)
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 14, y + 5)], c.filled()));
    }
    // (x, the measured p50, its CI), right of each bar.
    let measured: Vec<_> = bars
        .iter()
        .enumerate()
        .filter_map(|(i, b)| b.measured.map(|(m, ci)| (i as f64 + 0.82, m, ci)))
        .collect();
    if !measured.is_empty() {
        chart.draw_series(measured.iter().filter_map(|&(x, m, ci)| {
            ci.map(|(low, high)| ErrorBar::new_vertical(x, low, m, high, BLACK.stroke_width(2), 10))
        }))?;
        chart
            .draw_series(
                measured
                    .iter()
                    .map(|&(x, m, _)| Circle::new((x, m), 5, BLACK.filled())),
            )?
            .label("measured p50 (CI)")
            .legend(|(x, y)| Circle::new((x + 7, y), 5, BLACK.filled()));
    }
    super::plot::legend(&mut chart, SeriesLabelPosition::UpperLeft)
}

#[cfg(test)]
mod tests;
