//! The report's table: one row per load point with each percentile and its CI, under it
//! the same percentiles timed from the scheduled departures and the reasons for an N/A,
//! and the run's verdict. [`summarize`] picks the figures (also printed as JSON);
//! [`render_table`] lays them out as text.

use std::path::Path;

use serde::Serialize;

use super::plot::{fmt_num, fmt_percentile, fmt_rate};
use vernier_agent::StallReport;
use vernier_stats::Percentile;

use crate::coordinator::{PercentileResult, SchedulePercentile, Verdict, WithoutStalls, text};
use crate::record::{RunRecord, ShownReason};

/// The run and its load points, as the table shows them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    /// The scenario's name.
    pub name: String,
    /// The run directory.
    pub dir: String,
    /// When the run started.
    pub started: String,
    /// `finished`, or `running` for a run that was killed.
    pub status: String,
    /// The timestamp source.
    pub timestamps: String,
    /// The run's verdict (`None` if it did not finish).
    pub verdict: Option<Verdict>,
    /// For an SLO search, the highest rate found meeting the objective.
    pub slo_rate: Option<f64>,
    /// Each load point, in the order measured.
    pub points: Vec<PointRow>,
}

/// One load point's row, or one run's of a replicated point (right under the point's).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PointRow {
    /// Its position in the run.
    pub point: usize,
    /// Which run of the point this row is (from 1); `None` for the point's own row.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run: Option<u32>,
    /// req/s asked for, all agents.
    pub target_rate: f64,
    /// req/s answered, all agents.
    pub achieved_rate: f64,
    /// The answer's verdict: that of the tail the CI target was for (the run's exit code
    /// followed it).
    pub verdict: Verdict,
    /// Every request's verdict, that of the row's percentiles.
    pub every_request: Verdict,
    /// The tail without the host's stalls, when the point measured it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub without_stalls: Option<WithoutStalls>,
    /// Whether the CI target was for the tail without stalls.
    #[serde(skip)]
    pub asked_without_stalls: bool,
    /// Samples the percentiles came from.
    pub samples: usize,
    /// The percentile the CI target was set on.
    pub target_percentile: Percentile,
    /// Every reported percentile with its CI, µs.
    pub percentiles: Vec<PercentileResult>,
    /// The percentiles of every request timed from its scheduled departure, beside the
    /// same from its actual departure, µs (empty in records that predate them).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub from_schedule: Vec<SchedulePercentile>,
    /// Why N/A (or what was doubtful about an accepted result).
    pub reasons: Vec<ShownReason>,
    /// The host's stalls while the point measured, per probe (empty in records that
    /// predate the probes).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub host: Vec<StallReport>,
}

/// The table's figures from a record.
pub fn summarize(dir: &Path, record: &RunRecord) -> Summary {
    Summary {
        name: record.name.clone(),
        dir: dir.display().to_string(),
        started: record.started.clone(),
        status: record.status.clone(),
        timestamps: record.timestamps.clone(),
        verdict: record.verdict,
        slo_rate: record.slo_rate,
        points: super::points::point_numbers(record)
            .into_iter()
            .zip(&record.points)
            .flat_map(|(point, r)| {
                let runs = r
                    .replication
                    .as_deref()
                    .map_or(&[][..], |rep| &rep.runs[..]);
                std::iter::once(row(point, r)).chain(runs.iter().map(move |run| row(point, run)))
            })
            .collect(),
    }
}

fn row(point: usize, r: &crate::record::ShownPoint) -> PointRow {
    PointRow {
        point,
        run: r.run,
        target_rate: r.target_rate,
        achieved_rate: r.achieved_rate,
        verdict: r.answer,
        every_request: r.verdict,
        without_stalls: r.without_stalls.clone(),
        asked_without_stalls: r.tail == crate::scenario::Tail::WithoutStalls,
        samples: r.samples,
        target_percentile: r.target_percentile,
        percentiles: r.percentiles.clone(),
        from_schedule: r.from_schedule.clone(),
        reasons: r.reasons.clone(),
        host: r.host.clone(),
    }
}

/// A latency in µs: a tenth of a µs above 10 µs, a hundredth below, where microsecond
/// services live.
fn fmt_us(us: f64) -> String {
    if us.abs() >= 10.0 {
        format!("{us:.1}")
    } else {
        format!("{us:.2}")
    }
}

/// `value [low, high]`, or `value (no CI)` when there were too few samples for one.
fn fmt_cell(p: &PercentileResult) -> String {
    match (p.ci_low, p.ci_high) {
        (Some(low), Some(high)) => {
            format!("{} [{}, {}]", fmt_us(p.value), fmt_us(low), fmt_us(high))
        }
        _ => format!("{} (no CI)", fmt_us(p.value)),
    }
}

/// `61.3 (45.2 actual)`: the percentile from the scheduled departures, then from the
/// actual ones.
fn fmt_schedule(s: &SchedulePercentile) -> String {
    format!("{} ({} actual)", fmt_us(s.value), fmt_us(s.actual))
}

/// The columns before the percentiles.
const LEADING: usize = 5;

/// Whether two percentiles are the same one (they went through arithmetic and JSON).
fn same_p(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

/// The table as text: a heading, a row per point with the reasons under it, the verdict.
pub fn render_table(summary: &Summary) -> String {
    let mut out = format!(
        "run {} ({}), started {}, timestamps: {}\n{}\n\n",
        summary.name,
        if summary.status == "finished" {
            "finished".to_string()
        } else {
            format!("status {:?}: the run did not finish", summary.status)
        },
        summary.started,
        if summary.timestamps.is_empty() {
            "unknown"
        } else {
            &summary.timestamps
        },
        summary.dir
    );
    if summary.points.is_empty() {
        out.push_str("no load point finished\n");
    } else {
        out.push_str(&points_table(&summary.points));
    }
    out.push('\n');
    out.push_str(&format!(
        "verdict: {}\n",
        summary
            .verdict
            .map_or("none (the run did not finish)", Verdict::name)
    ));
    if let Some(rate) = summary.slo_rate {
        out.push_str(&format!(
            "slo rate: {} (the highest load meeting the objective)\n",
            fmt_rate(rate)
        ));
    }
    out
}

/// The rows, their columns padded to line up, each point's percentiles from the schedule
/// under its own, and the legend of the cells.
fn points_table(points: &[PointRow]) -> String {
    let columns = percentile_columns(points);
    let header = header(points, &columns);
    let rows: Vec<Vec<String>> = points.iter().map(|r| cells(r, &columns)).collect();
    let scheduled: Vec<Option<Vec<String>>> =
        points.iter().map(|r| schedule_cells(r, &columns)).collect();
    let untouched: Vec<Option<Vec<String>>> = points
        .iter()
        .map(|r| without_stalls_cells(r, &columns))
        .collect();
    let under: Vec<Option<Vec<String>>> = scheduled.iter().chain(&untouched).cloned().collect();
    let layout = Padding::new(&header, &rows, &under);

    let mut out = layout.line(&header);
    for (((row, point), scheduled), untouched) in
        rows.iter().zip(points).zip(&scheduled).zip(&untouched)
    {
        out.push_str(&layout.line(row));
        if let Some(cells) = scheduled {
            out.push_str(&layout.under("from schedule", cells));
        }
        if let (Some(cells), Some(own)) = (untouched, &point.without_stalls) {
            let label = format!(
                "without stalls {}, {:.1}% touched",
                own.verdict.name(),
                own.touched_share * 100.0
            );
            out.push_str(&layout.under(&label, cells));
            let asked = point.asked_without_stalls;
            out.push_str(&format!(
                "        {}\n",
                text::without_stalls_line(own, asked)
            ));
        }
        let label = match point.every_request {
            Verdict::NotAvailable => "N/A",
            Verdict::Wide => "wide",
            _ => "doubtful",
        };
        // Beside the tail without stalls, the point's reasons are every request's.
        let whose = if point.without_stalls.is_some() {
            "every request, "
        } else {
            ""
        };
        for reason in &point.reasons {
            out.push_str(&format!(
                "        {whose}{label}: {}: {}\n",
                reason.kind(),
                reason.detail()
            ));
        }
        if !point.host.is_empty() {
            let probes: Vec<String> = point
                .host
                .iter()
                .map(|h| format!("{} {}", h.name(), h.short()))
                .collect();
            out.push_str(&format!("        host: {}\n", probes.join(" · ")));
        }
    }
    out.push_str(&legend(points, &columns, &scheduled));
    out
}

/// Every percentile any point reported, ascending, so that columns line up across points.
fn percentile_columns(points: &[PointRow]) -> Vec<f64> {
    let mut columns: Vec<f64> = Vec::new();
    for p in points.iter().flat_map(|r| &r.percentiles) {
        if !columns.iter().any(|&c| same_p(c, p.p)) {
            columns.push(p.p);
        }
    }
    columns.sort_by(f64::total_cmp);
    columns
}

/// Whether percentile `c` is some point's target (marked `*`).
fn is_target(points: &[PointRow], c: f64) -> bool {
    points
        .iter()
        .any(|r| same_p(r.target_percentile.percent(), c))
}

/// The header row: the leading columns, then a column per percentile.
fn header(points: &[PointRow], columns: &[f64]) -> Vec<String> {
    let mut header = vec![
        "point".to_string(),
        "target/s".into(),
        "achieved/s".into(),
        "verdict".into(),
        "samples".into(),
    ];
    header.extend(columns.iter().map(|&c| {
        format!(
            "{} µs{}",
            fmt_percentile(c),
            if is_target(points, c) { "*" } else { "" }
        )
    }));
    header
}

/// A point's (or run's) row: the leading cells, then its value and CI per column.
fn cells(r: &PointRow, columns: &[f64]) -> Vec<String> {
    let mut row = vec![
        r.run
            .map_or_else(|| r.point.to_string(), |k| format!(" run {k}")),
        fmt_num(r.target_rate),
        format!("{:.1}", r.achieved_rate),
        r.every_request.name().to_string(),
        r.samples.to_string(),
    ];
    row.extend(columns.iter().map(|&c| {
        r.percentiles
            .iter()
            .find(|p| same_p(p.p, c))
            .map_or_else(|| "-".to_string(), fmt_cell)
    }));
    row
}

/// The percentile cells of the line under a row (`None`: the point has none).
fn schedule_cells(r: &PointRow, columns: &[f64]) -> Option<Vec<String>> {
    (!r.from_schedule.is_empty() && !columns.is_empty()).then(|| {
        column_cells(columns, |c| {
            let s = r.from_schedule.iter().find(|s| same_p(s.p, c))?;
            Some(fmt_schedule(s))
        })
    })
}

/// The percentile cells of the tail without stalls under a row (`None`: the point has
/// none).
fn without_stalls_cells(r: &PointRow, columns: &[f64]) -> Option<Vec<String>> {
    let own = r.without_stalls.as_ref()?;
    Some(column_cells(columns, |c| {
        own.percentiles
            .iter()
            .find(|p| same_p(p.p, c))
            .map(fmt_cell)
    }))
}

/// A line's cells, one per percentile column: `cell` of its percentile, `-` without one.
fn column_cells(columns: &[f64], cell: impl Fn(f64) -> Option<String>) -> Vec<String> {
    columns
        .iter()
        .map(|&c| cell(c).unwrap_or_else(|| "-".to_string()))
        .collect()
}

/// The columns' widths, wide enough for every cell above and under.
#[derive(Debug)]
struct Padding {
    widths: Vec<usize>,
}

impl Padding {
    /// The widths of `header`, `rows` and the lines under them.
    fn new(header: &[String], rows: &[Vec<String>], scheduled: &[Option<Vec<String>>]) -> Padding {
        let widths: Vec<usize> = (0..header.len())
            .map(|i| {
                let under = scheduled
                    .iter()
                    .flatten()
                    .filter_map(|cells| i.checked_sub(LEADING).map(|j| cells[j].chars().count()));
                std::iter::once(header)
                    .chain(rows.iter().map(Vec::as_slice))
                    .map(|row| row[i].chars().count())
                    .chain(under)
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        Padding { widths }
    }

    /// A row padded: counts and rates are right-aligned; words and percentile cells
    /// left-aligned.
    fn line(&self, row: &[String]) -> String {
        let right = |i: usize| matches!(i, 0 | 1 | 2 | 4);
        let cells: Vec<String> = row
            .iter()
            .enumerate()
            .map(|(i, cell)| {
                let pad = " ".repeat(self.widths[i] - cell.chars().count());
                if right(i) {
                    format!("{pad}{cell}")
                } else {
                    format!("{cell}{pad}")
                }
            })
            .collect();
        format!("{}\n", cells.join("  ").trim_end())
    }

    /// The line under a row: its `label` right-aligned under the leading columns.
    fn under(&self, label: &str, cells: &[String]) -> String {
        let label_width = self.widths[..LEADING].iter().sum::<usize>() + 2 * (LEADING - 1);
        let mut row = vec![format!("{label:>label_width$}")];
        row.extend(cells.iter().enumerate().map(|(j, cell)| {
            let pad = " ".repeat(self.widths[LEADING + j] - cell.chars().count());
            format!("{cell}{pad}")
        }));
        format!("{}\n", row.join("  ").trim_end())
    }
}

/// What the cells mean, for the kinds of cells the table has.
fn legend(points: &[PointRow], columns: &[f64], scheduled: &[Option<Vec<String>>]) -> String {
    let mut out = String::new();
    if !columns.is_empty() {
        out.push_str("\nlatencies in µs: estimate [CI low, CI high]");
        if columns.iter().any(|&c| is_target(points, c)) {
            out.push_str("; * the target percentile");
        }
        out.push('\n');
    }
    if scheduled.iter().any(Option::is_some) {
        out.push_str(
            "from schedule: every request timed from its scheduled departure (coordinated \
             omission included), then from its actual one\n",
        );
    }
    if points.iter().any(|p| !p.host.is_empty()) {
        out.push_str(
            "host: the host's stalls while the point measured, per probe: how late timer \
             wake-ups came (p99, max), those over 1 ms, and the share of time the core was \
             not ours\n",
        );
    }
    out
}

#[cfg(test)]
mod tests;
