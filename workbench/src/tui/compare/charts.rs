//! The comparison's three charts: both sides' CCDFs on a log-log scale, each block's
//! percentile against time (so that a drifting host shows), and the CI of B − A narrowing
//! look by look against zero and ± the width asked. Without colour B is told from A by its
//! marker, named in the legend.

use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::Style;
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::{
    Axis, Block, Borders, Chart, Dataset, GraphType, LegendPosition, Paragraph, Wrap,
};

use super::super::theme::{Palette, Theme};
use super::state::CompareView;
use crate::compare::{Comparison, Look, MIN_PAIRS_TO_LOOK, Side};
use crate::report::{CcdfPoint, fmt_percentile};

/// How far past a decade (log10, a factor of two) the deepest CCDF level may reach and
/// still be drawn at that decade.
const DECADE_SLACK: f64 = 0.3;

/// How B is drawn beside A (whose marker is `line` or `point`): with colour by its
/// colour, without by another marker, which its name shows.
fn side_b(view: &CompareView, theme: Theme, marker: Marker) -> (Marker, &'static str, Style) {
    if view.palette == Palette::Color {
        (marker, "B", theme.other_series())
    } else if marker == Marker::Braille {
        (Marker::Dot, "B •", theme.other_series())
    } else {
        (Marker::Bar, "B ▄", theme.other_series())
    }
}

/// The panel's frame.
fn frame_block(title: Line<'static>) -> Block<'static> {
    Block::default()
        .borders(Borders::TOP | Borders::LEFT)
        .title(title)
}

/// A panel with nothing to draw yet: why, in words.
fn empty(frame: &mut Frame, title: Line<'static>, text: String, area: Rect) {
    frame.render_widget(
        Paragraph::new(text)
            .wrap(Wrap { trim: true })
            .block(frame_block(title)),
        area,
    );
}

/// Which values an axis writes with a sign.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Sign {
    /// Only negative ones (latencies).
    Negative,
    /// Positive ones too, with a `+` (differences).
    Always,
}

/// A latency in µs as an axis writes it: `20µs`, `1.5ms`, `2s`, with a `+` if `sign` asks.
pub(super) fn micros(us: f64, sign: Sign) -> String {
    let (value, unit) = match us.abs() {
        a if a >= 1e6 => (us / 1e6, "s"),
        a if a >= 1e3 => (us / 1e3, "ms"),
        _ => (us, "µs"),
    };
    let digits = if value.abs() >= 10.0 || value == value.round() {
        0
    } else {
        1
    };
    if sign == Sign::Always && us > 0.0 {
        format!("+{value:.digits$}{unit}")
    } else {
        format!("{value:.digits$}{unit}")
    }
}

/// The CCDF level `10^-k` as the percentile it marks: `p0`, `p90`, `p99`, `p99.9`.
fn level(k: i32) -> String {
    if k <= 0 {
        "p0".into()
    } else {
        fmt_percentile(100.0 - 10f64.powi(2 - k))
    }
}

/// A CCDF as (log10 µs, −log10 share), its points that a log scale can show.
fn log_log(points: &[CcdfPoint]) -> Vec<(f64, f64)> {
    points
        .iter()
        .filter(|p| p.latency_us > 0.0 && p.ccdf > 0.0)
        .map(|p| (p.latency_us.log10(), -p.ccdf.log10()))
        .collect()
}

/// Both sides' latency CCDFs over all their blocks, x the latency (log), y how deep in
/// the tail (log), each decade labelled.
pub(super) fn ccdf(frame: &mut Frame, view: &CompareView, theme: Theme, area: Rect) {
    let title = Line::from(" latency CCDF (log-log) ");
    let (mut a, mut b) = match &view.comparison {
        Some(c) => (log_log(&c.ccdf_a), log_log(&c.ccdf_b)),
        None => (Vec::new(), Vec::new()),
    };
    if a.len() + b.len() < 2 {
        return empty(frame, title, "no block measured yet".into(), area);
    }
    // The y axis ends at a decade. The deepest level is a count over the samples, often a
    // little past one (7e-5 for 1 in 14,000): within a factor two of it, the curve ends at
    // the decade rather than the axis showing a decade it has no samples for.
    let deepest = a.iter().chain(&b).map(|p| p.1).fold(1.0, f64::max);
    let y_high = (deepest - DECADE_SLACK).ceil().max(1.0);
    for p in a.iter_mut().chain(b.iter_mut()) {
        p.1 = p.1.min(y_high);
    }
    let all = || a.iter().chain(&b);
    let x_low = all().map(|p| p.0).fold(f64::INFINITY, f64::min).floor();
    let x_high = all()
        .map(|p| p.0)
        .fold(f64::NEG_INFINITY, f64::max)
        .ceil()
        .max(x_low + 1.0);
    let (b_marker, b_name, b_style) = side_b(view, theme, Marker::Braille);
    let datasets = vec![
        Dataset::default()
            .name("A")
            .marker(Marker::Braille)
            .graph_type(GraphType::Line)
            .style(theme.series())
            .data(&a),
        Dataset::default()
            .name(b_name)
            .marker(b_marker)
            .graph_type(GraphType::Line)
            .style(b_style)
            .data(&b),
    ];
    let x_labels: Vec<Span> = (x_low as i32..=x_high as i32)
        .map(|k| Span::raw(micros(10f64.powi(k), Sign::Negative)))
        .collect();
    let y_labels: Vec<Span> = (0..=y_high as i32).map(|k| Span::raw(level(k))).collect();
    let chart = Chart::new(datasets)
        .block(frame_block(title))
        .legend_position(Some(LegendPosition::TopLeft))
        // The legend sits where a CCDF never goes (low latency, deep in the tail); it is
        // hidden only when it would take more than half the chart's width.
        .hidden_legend_constraints((Constraint::Ratio(1, 2), Constraint::Ratio(1, 1)))
        .x_axis(Axis::default().bounds([x_low, x_high]).labels(x_labels))
        .y_axis(Axis::default().bounds([0.0, y_high]).labels(y_labels));
    frame.render_widget(chart, area);
}

/// The blocks that measured something as (started, value): one side's that stand for it,
/// or (`side` none) those set aside (measured again, or ending the comparison).
fn points(c: &Comparison, side: Option<Side>) -> Vec<(f64, f64)> {
    c.blocks
        .iter()
        .filter(|b| b.value_of(c.tail).is_finite())
        .filter(|b| match side {
            Some(side) => b.side == side && b.problem.is_none(),
            None => b.problem.is_some(),
        })
        .map(|b| (b.started_s, b.value_of(c.tail)))
        .collect()
}

/// Each block's percentile against when it started, A's and B's apart: a host whose speed
/// drifts moves both alike, a real difference keeps them apart. Blocks set aside (the
/// client fell behind: measured again) stand out.
pub(super) fn blocks(frame: &mut Frame, view: &CompareView, theme: Theme, area: Rect) {
    let (b_marker, b_name, b_style) = side_b(view, theme, Marker::Dot);
    let a_name = if view.palette == Palette::Color {
        "A"
    } else {
        "A •"
    };
    let mut title = vec![
        Span::raw(format!(" {} of each block: ", view.setup.percentile)),
        Span::styled(a_name, theme.series()),
        Span::raw(" "),
        Span::styled(b_name, b_style),
        Span::raw(" "),
    ];
    let Some(c) = view.comparison.as_ref() else {
        return empty(
            frame,
            Line::from(title),
            "no block measured yet".into(),
            area,
        );
    };
    let (a, b, aside) = (
        points(c, Some(Side::A)),
        points(c, Some(Side::B)),
        points(c, None),
    );
    if !aside.is_empty() {
        title.push(Span::styled("█ set aside ", theme.bad()));
    }
    let values = || a.iter().chain(&b).chain(&aside).map(|p| p.1);
    let (Some(low), Some(high)) = (
        values().min_by(f64::total_cmp),
        values().max_by(f64::total_cmp),
    ) else {
        return empty(
            frame,
            Line::from(title),
            "no block measured yet".into(),
            area,
        );
    };
    let pad = ((high - low) * 0.1).max(high * 0.02).max(0.5);
    let (y_low, y_high) = ((low - pad).max(0.0), high + pad);
    let x_high =
        c.blocks.iter().map(|b| b.started_s).fold(0.0, f64::max) + view.setup.block_s.max(1.0);
    let scatter = |data, marker, style| {
        Dataset::default()
            .marker(marker)
            .graph_type(GraphType::Scatter)
            .style(style)
            .data(data)
    };
    let datasets = vec![
        scatter(&a, Marker::Dot, theme.series()),
        scatter(&b, b_marker, b_style),
        scatter(&aside, Marker::Block, theme.bad()),
    ];
    let chart = Chart::new(datasets)
        .block(frame_block(Line::from(title)))
        .x_axis(
            Axis::default()
                .bounds([0.0, x_high])
                .labels(vec![Span::raw("0 s"), Span::raw(format!("{x_high:.0} s"))]),
        )
        .y_axis(Axis::default().bounds([y_low, y_high]).labels(vec![
            Span::raw(micros(y_low, Sign::Negative)),
            Span::raw(micros((y_low + y_high) / 2.0, Sign::Negative)),
            Span::raw(micros(y_high, Sign::Negative)),
        ]));
    frame.render_widget(chart, area);
}

/// The last look's CI in words, with its width and the width asked (`asked` before it is
/// known in µs) where `room` allows, else with the pairs, else alone.
fn ci_title(last: &Look, width: f64, asked: &str, theme: Theme, room: u16) -> Line<'static> {
    let asked = if width.is_finite() {
        format!("≤ {width:.1} µs")
    } else {
        asked.to_string()
    };
    let ci = format!(
        "{:+.1} µs [{:+.1}, {:+.1}]",
        last.difference, last.low, last.high
    );
    let fits = |rest: &str| {
        " B − A ".chars().count() + ci.chars().count() + rest.chars().count() <= room.into()
    };
    let rest = [
        format!(
            ", {:.1} µs wide on {} pairs; asked {asked} ",
            last.high - last.low,
            last.pairs
        ),
        format!(" on {} pairs ", last.pairs),
    ]
    .into_iter()
    .find(|rest| fits(rest))
    .unwrap_or_else(|| " ".into());
    Line::from(vec![
        Span::raw(" B − A "),
        Span::styled(ci, theme.accent()),
        Span::raw(rest),
    ])
}

/// A line across `[x0, x1]` at `y`.
fn across(x0: f64, x1: f64, y: f64) -> [(f64, f64); 2] {
    [(x0, y), (x1, y)]
}

/// The CI of B − A at each look, against the pairs it was computed on: the difference
/// between its low and high ends, zero, and ± the width asked (within which the answer is
/// "no difference").
pub(super) fn ci(frame: &mut Frame, view: &CompareView, theme: Theme, area: Rect) {
    let looks = view
        .comparison
        .as_ref()
        .map_or(&[][..], |c| c.looks.as_slice());
    let (Some(first), Some(last)) = (looks.first(), looks.last()) else {
        let text = format!(
            "the CI of B − A comes after {MIN_PAIRS_TO_LOOK} pairs ({} measured)",
            view.pairs()
        );
        return empty(frame, Line::from(" B − A with its CI "), text, area);
    };
    // NaN before the width is known (a share of A's value, known at the first look).
    let width = view
        .comparison
        .as_ref()
        .map_or(f64::NAN, |c| c.width_us.get());
    let width = if width > 0.0 { width } else { f64::NAN };
    let title = ci_title(
        last,
        width,
        &view.setup.width,
        theme,
        area.width.saturating_sub(2),
    );
    let x0 = first.pairs as f64;
    let x1 = (last.pairs as f64).max(x0 + 1.0);
    let reach = looks
        .iter()
        .map(|l| l.low.abs().max(l.high.abs()))
        .fold(if width.is_finite() { width } else { 0.0 }, f64::max);
    let y = (reach * 1.15).max(1.0);
    let series = |f: fn(&Look) -> f64| -> Vec<(f64, f64)> {
        looks.iter().map(|l| (l.pairs as f64, f(l))).collect()
    };
    let (difference, low, high) = (
        series(|l| l.difference),
        series(|l| l.low),
        series(|l| l.high),
    );
    let (zero, plus, minus) = (
        across(x0, x1, 0.0),
        across(x0, x1, width),
        across(x0, x1, -width),
    );
    // One look is a point; lines need two.
    let graph = if looks.len() > 1 {
        GraphType::Line
    } else {
        GraphType::Scatter
    };
    let line = |data, style| {
        Dataset::default()
            .marker(Marker::Braille)
            .graph_type(GraphType::Line)
            .style(style)
            .data(data)
    };
    let mut datasets = vec![line(&zero, theme.dim())];
    if width.is_finite() {
        datasets.push(line(&plus, theme.good()));
        datasets.push(line(&minus, theme.good()));
    }
    for (data, style) in [(&low, theme.title()), (&high, theme.title())] {
        datasets.push(line(data, style).graph_type(graph));
    }
    datasets.push(
        line(&difference, theme.accent())
            .graph_type(graph)
            .marker(if looks.len() > 1 {
                Marker::Braille
            } else {
                Marker::Dot
            }),
    );
    let chart = Chart::new(datasets)
        .block(frame_block(title))
        .x_axis(Axis::default().bounds([x0, x1]).labels(vec![
            Span::raw(format!("{}", first.pairs)),
            Span::raw(format!("{} pairs", x1 as usize)),
        ]))
        .y_axis(Axis::default().bounds([-y, y]).labels(vec![
            Span::raw(micros(-y, Sign::Always)),
            Span::raw("0"),
            Span::raw(micros(y, Sign::Always)),
        ]));
    frame.render_widget(chart, area);
}
