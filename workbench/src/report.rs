//! Reports on a recorded run: a table of the load points (each percentile with its CI,
//! the verdict and the reasons for an N/A) and plots (SVG, PNG or both) of what the
//! methodology saw: the
//! latency CCDF, the tail percentile against the achieved load, a replicated point's runs
//! side by side, each agent's inter-departure gaps against the target distribution, and
//! each agent's correlogram.
//!
//! Everything here works from the record alone (`run.json` and `samples.parquet/`), so a
//! report can be made long after the run, on another machine, or from a run that was
//! killed half-way. The pieces that decide what is drawn are pure functions over the
//! record's values ([`summarize`], [`ccdf_points`], [`gap_density`]...), tested without a
//! file system; [`run`] only adds reading the record and writing the files.

mod accuracy;
mod budget;
mod ccdf;
mod correlogram;
mod interarrival;
mod load;
mod plot;
mod points;
mod runs;
mod table;
mod without_stalls;

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::coordinator::{CheckData, CheckKind};
use crate::error::Error;
use crate::record::{self, RunRecord};
use crate::record::{ShownEvent, ShownPoint};

pub(crate) use accuracy::accuracy_svg;
pub use accuracy::{AccuracyPoint, AccuracySeries};
pub use budget::{BudgetBar, budget_bars};
pub use ccdf::{CcdfPoint, DEEPEST, ccdf_points};
pub(crate) use ccdf::{Series as CcdfSeries, draw_marked as ccdf_figure};
pub use interarrival::{GapDensity, gap_density};
pub use load::{LoadPoint, load_points};
pub(crate) use plot::{
    Area, CAPTION_SIZE, Chart, DrawError, Plot, color, fmt_num, fmt_percentile, legend,
};
use points::{Measured, last_checks, measured_points};
pub use runs::{RunEstimate, RunsPoint, runs_points};
pub use table::{PointRow, Summary, render_table, summarize};

/// What `vernier report` made of a run directory.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// The table's content.
    #[serde(flatten)]
    pub summary: Summary,
    /// The plots written, in the order written.
    pub plots: Vec<PathBuf>,
    /// What could not be drawn, and why (a run without samples has no CCDF...).
    pub notes: Vec<String>,
}

/// The files each plot is written as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum PlotFormat {
    /// `NAME.svg`: scalable, text kept as text.
    #[default]
    Svg,
    /// `NAME.png`: 900x600 pixels, for slides and documents that take no SVG.
    Png,
    /// Both files, from one drawing.
    Both,
}

impl PlotFormat {
    /// The extensions written, in the order written.
    fn extensions(self) -> &'static [&'static str] {
        match self {
            PlotFormat::Svg => &["svg"],
            PlotFormat::Png => &["png"],
            PlotFormat::Both => &["svg", "png"],
        }
    }

    /// The file names of plot `stem`, as notes name them (`ccdf.svg`, `ccdf.svg/.png`).
    pub(crate) fn names(self, stem: &str) -> String {
        format!("{stem}.{}", self.extensions().join("/."))
    }
}

/// Writes plots into one directory in the chosen formats and lists the files written
/// (a comparison's report writes its plots with it too).
pub(crate) struct Writer<'a> {
    out: &'a Path,
    format: PlotFormat,
    written: Vec<PathBuf>,
}

impl<'a> Writer<'a> {
    /// A writer into `out`, made if missing.
    pub(crate) fn create(out: &'a Path, format: PlotFormat) -> Result<Writer<'a>, Error> {
        std::fs::create_dir_all(out).map_err(|source| Error::Io {
            path: out.to_path_buf(),
            source,
        })?;
        Ok(Writer {
            out,
            format,
            written: Vec::new(),
        })
    }

    /// The formats each plot is written in.
    pub(crate) fn format(&self) -> PlotFormat {
        self.format
    }

    /// The files written, in the order written.
    pub(crate) fn written(self) -> Vec<PathBuf> {
        self.written
    }

    /// Draws `figure` once per format and writes it as `out/STEM.EXT`.
    pub(crate) fn write<C: Chart>(&mut self, stem: &str, figure: Plot<C>) -> Result<(), Error> {
        for &ext in self.format.extensions() {
            let path = self.out.join(format!("{stem}.{ext}"));
            let bytes = match ext {
                "png" => figure.png(),
                _ => figure.svg().map(String::into_bytes),
            }
            .map_err(|e| Error::Failed(format!("{}: cannot draw: {e}", path.display())))?;
            std::fs::write(&path, bytes).map_err(|source| Error::Io {
                path: path.clone(),
                source,
            })?;
            self.written.push(path);
        }
        Ok(())
    }
}

/// Reads `dir` (a run directory), writes the plots into `out` (default `dir/report/`) as
/// `format` says and returns the table and the list of files written.
///
/// Bad input (no such directory, a run.json that is not a vernier record, a samples part
/// that is not Parquet) is an error naming the file; a run that ended early is not: its
/// report says what is missing in [`Report::notes`].
pub fn run(dir: &Path, out: Option<&Path>, format: PlotFormat) -> Result<Report, Error> {
    if !dir.is_dir() {
        let source = match std::fs::metadata(dir) {
            Ok(_) => std::io::Error::other("not a directory (expected a run directory)"),
            Err(e) => e,
        };
        return Err(Error::Io {
            path: dir.to_path_buf(),
            source,
        });
    }
    let record = record::read_record(dir)?;
    let mut notes = Vec::new();
    let samples = if dir.join("samples.parquet").is_dir() {
        Some(record::read_samples(dir)?)
    } else {
        notes.push(format!(
            "{}: not found; plots that need samples are skipped",
            dir.join("samples.parquet").display()
        ));
        None
    };
    let summary = summarize(dir, &record);
    let stalls = recorded_stalls(dir, &mut notes);

    let out = out.map_or_else(|| dir.join("report"), Path::to_path_buf);
    let mut plots = Writer::create(&out, format)?;

    let measured = measured_points(&record);
    if measured.is_empty() {
        notes.push("no load point finished: no CCDF and no latency-vs-load plot".into());
    } else {
        let recorded = Recorded {
            samples: samples.as_ref(),
            stalls: stalls.as_deref(),
        };
        point_plots(&mut plots, &record, recorded, &measured, &mut notes)?;
    }

    let results: Vec<&ShownPoint> = record.points.iter().collect();
    let (percentile, replicated) = runs_points(&results);
    if !replicated.is_empty() {
        plots.write("runs", runs::draw(percentile, &replicated))?;
    }

    check_plots(&mut plots, &record)?;

    Ok(Report {
        summary,
        plots: plots.written(),
        notes,
    })
}

/// What a run recorded beside its events: the samples and the stalls, each when it could
/// be read.
#[derive(Clone, Copy)]
struct Recorded<'a> {
    samples: Option<&'a polars::prelude::DataFrame>,
    stalls: Option<&'a [record::RecordedStall]>,
}

/// The record's `stalls.csv`, or `None` with a note when it is missing (records before
/// it) or unreadable (the line named): the tail without stalls is then not drawn.
fn recorded_stalls(dir: &Path, notes: &mut Vec<String>) -> Option<Vec<record::RecordedStall>> {
    let path = dir.join(record::STALLS_FILE);
    if !path.is_file() {
        return None;
    }
    match record::read_stalls(&path) {
        Ok(stalls) => Some(stalls),
        Err(e) => {
            notes.push(format!("{e}; the tail without stalls is not drawn"));
            None
        }
    }
}

/// The plots over the finished points: their CCDFs (from the samples, and beside each the
/// tail without stalls when the stalls were recorded), the tail against the load, and the
/// latency budgets; what could not be drawn goes to `notes`.
fn point_plots(
    plots: &mut Writer<'_>,
    record: &RunRecord,
    recorded: Recorded<'_>,
    measured: &[Measured<'_>],
    notes: &mut Vec<String>,
) -> Result<(), Error> {
    let format = plots.format;
    let series = match recorded.samples {
        Some(samples) => ccdf_series(samples, recorded.stalls, measured, notes)?,
        None => Vec::new(),
    };
    if series.is_empty() {
        notes.push(format!(
            "no measured samples for any load point: {} skipped",
            format.names("ccdf")
        ));
    } else {
        plots.write("ccdf", ccdf::draw(&series))?;
    }

    let results: Vec<&ShownPoint> = measured.iter().map(|m| m.result).collect();
    let (percentile, points) = load_points(&results);
    let drawable = points.iter().filter(|p| p.value.is_some()).count();
    if drawable >= 2 {
        plots.write(
            "latency-vs-load",
            load::draw(percentile, &points, record.slo_rate),
        )?;
        let without_ci: Vec<String> = points
            .iter()
            .filter(|p| p.value.is_some() && p.ci.is_none())
            .map(|p| plot::fmt_rate(p.target_rate))
            .collect();
        if !without_ci.is_empty() {
            notes.push(format!(
                "{}: no CI at {} (drawn hollow)",
                format.names("latency-vs-load"),
                without_ci.join(", ")
            ));
        }
    } else {
        notes.push(format!(
            "{} skipped: {drawable} point(s) with a {} (2 needed)",
            format.names("latency-vs-load"),
            percentile
        ));
    }

    match budget_bars(&results) {
        bars if bars.is_empty() => notes.push(format!(
            "{} skipped: no finished point has a latency budget (records before budgets have none)",
            format.names("budget")
        )),
        bars => plots.write("budget", budget::draw(&bars))?,
    }
    Ok(())
}

/// The plots of the checks the points rest on: each agent's inter-departure gaps and
/// correlogram, from the last such check of each point.
fn check_plots(plots: &mut Writer<'_>, record: &RunRecord) -> Result<(), Error> {
    for ((point, agent), (event, check)) in last_checks(&record.events, CheckKind::Interarrival) {
        if let Some(CheckData::Histogram {
            bin_ns,
            counts,
            target_mean_ns,
            shape,
        }) = &check.data
        {
            let density = gap_density(*bin_ns, counts);
            let title = check_title("Inter-departure gaps", event, agent);
            plots.write(
                &format!("interarrival-p{point}-a{}", agent_name(agent)),
                interarrival::draw(&title, &density, *target_mean_ns, shape, check),
            )?;
        }
    }
    for ((point, agent), (event, check)) in last_checks(&record.events, CheckKind::Independence) {
        if let Some(CheckData::Correlogram { lags }) = &check.data {
            if lags.is_empty() {
                continue;
            }
            let title = check_title("Spearman correlogram", event, agent);
            plots.write(
                &format!("correlogram-p{point}-a{}", agent_name(agent)),
                correlogram::draw(&title, lags, check),
            )?;
        }
    }
    Ok(())
}

/// One CCDF curve per point, from the samples of the round its result used, and after
/// it the point's tail without stalls when its result has one and `stalls` were recorded.
/// Points without such samples are left out with a note.
fn ccdf_series(
    samples: &polars::prelude::DataFrame,
    stalls: Option<&[record::RecordedStall]>,
    measured: &[Measured<'_>],
    notes: &mut Vec<String>,
) -> Result<Vec<ccdf::Series>, Error> {
    let mut series = Vec::new();
    for m in measured {
        let name = format!(
            "point {} ({})",
            m.point,
            plot::fmt_rate(m.result.target_rate)
        );
        if m.result.round == 0 {
            // Round 0 is warm-up: a point N/A before measuring has no measured round, and
            // its warm-up samples are not the latency it was asked about.
            notes.push(format!("{name}: ended before measuring; not in the CCDF"));
            continue;
        }
        let latencies = record::point_latencies(samples, m.point, m.result.round)?;
        if latencies.is_empty() {
            notes.push(format!(
                "{name}: no samples in its round {}; not in the CCDF",
                m.result.round
            ));
            continue;
        }
        // Where the point answered for the tail without stalls, each curve says which tail
        // it is, and that one is the answer.
        let asked = m.result.answers_without_stalls();
        let whose = if asked { "every request, " } else { "" };
        series.push(ccdf::Series {
            label: format!(
                "{}, {whose}{}, n = {}",
                plot::fmt_rate(m.result.target_rate),
                m.result.verdict.name(),
                latencies.len()
            ),
            points: ccdf_points(&latencies),
            marked: None,
        });
        let Some(stalls) = stalls.filter(|_| m.result.without_stalls.is_some()) else {
            continue;
        };
        if let Some((values, weights, touched)) = without_stalls::untouched(
            samples,
            stalls,
            m.point,
            m.result.round,
            m.result.sampling_rate < 1.0,
        )? {
            series.push(ccdf::Series {
                label: format!(
                    "{}, without stalls{} ({:.0}% touched), n = {}",
                    plot::fmt_rate(m.result.target_rate),
                    if asked {
                        format!(", the answer: {}", m.result.answer().name())
                    } else {
                        String::new()
                    },
                    touched * 100.0,
                    values.len()
                ),
                points: without_stalls::weighted_ccdf_points(&values, &weights),
                marked: None,
            });
        }
    }
    Ok(series)
}

/// How plot file names name an agent (`all`: the agents together).
fn agent_name(agent: Option<usize>) -> String {
    agent.map_or_else(|| "all".to_string(), |a| a.to_string())
}

/// The title of a check's plot: what, which point at which load, which agent.
fn check_title(what: &str, event: &ShownEvent, agent: Option<usize>) -> String {
    let agent = agent.map_or_else(|| "all agents".to_string(), |a| format!("agent {a}"));
    format!(
        "{what}: point {} ({}), {agent}",
        event.point,
        plot::fmt_rate(event.rate)
    )
}

#[cfg(test)]
mod tests {
    use super::points::point_numbers;
    use super::*;
    use crate::coordinator::{CheckRole, Event, EventKind, Phase, PointResult, Verdict};
    use crate::record::{FORMAT, Machine, ShownCheck};

    fn event(point: usize, kind: EventKind<ShownCheck, ShownPoint>) -> ShownEvent {
        Event {
            at: 0.0,
            point,
            rate: 1000.0 * (point + 1) as f64,
            kind,
        }
    }

    fn check(
        kind: CheckKind,
        agent: usize,
        statistic: f64,
        data: bool,
    ) -> EventKind<ShownCheck, ShownPoint> {
        EventKind::Check(ShownCheck {
            check: kind,
            agent: Some(agent),
            pass: true,
            role: CheckRole::Gate,
            statistic: Some(statistic),
            pvalue: None,
            n: 10,
            detail: String::new(),
            decision: String::new(),
            data: data.then(|| CheckData::Correlogram {
                lags: vec![(1, 0.0, 1.0)],
            }),
        })
    }

    fn result(rate: f64) -> ShownPoint {
        PointResult {
            samples: 0,
            duration_s: 0.0,
            ci_width_us: None,
            min_samples: 0,
            ..PointResult::example(rate, Verdict::Converged, Vec::new())
        }
        .into()
    }

    fn record(events: Vec<ShownEvent>, points: Vec<ShownPoint>) -> RunRecord {
        RunRecord {
            format: FORMAT.into(),
            name: "t".into(),
            started: String::new(),
            status: "finished".into(),
            scenario_file: None,
            scenario: String::new(),
            machine: Machine {
                hostname: String::new(),
                kernel: String::new(),
                cpus: 1,
                vernier: String::new(),
                idle: Default::default(),
            },
            timestamps: String::new(),
            events,
            points,
            slo_rate: None,
            verdict: None,
        }
    }

    #[test]
    fn results_take_their_point_number_from_their_verdict_event() {
        // Point 1 was restarted as point 2 (the user changed the load): no verdict for 1.
        let events = vec![
            event(0, EventKind::Verdict(Box::new(result(1000.0)))),
            event(
                1,
                EventKind::Phase {
                    phase: Phase::Warmup,
                    detail: String::new(),
                },
            ),
            event(2, EventKind::Verdict(Box::new(result(3000.0)))),
        ];
        let rec = record(events, vec![result(1000.0), result(3000.0)]);
        assert_eq!(point_numbers(&rec), vec![0, 2]);
        // A record written by hand, without events, falls back to positions.
        assert_eq!(
            point_numbers(&record(Vec::new(), vec![result(1.0), result(2.0)])),
            vec![0, 1]
        );
    }

    #[test]
    fn the_last_check_with_data_per_point_and_agent_is_plotted() {
        let events = vec![
            event(0, check(CheckKind::Independence, 0, 1.0, true)),
            event(0, check(CheckKind::Independence, 0, 2.0, true)),
            event(0, check(CheckKind::Independence, 0, 3.0, false)),
            event(0, check(CheckKind::Independence, 1, 4.0, true)),
            event(1, check(CheckKind::Interarrival, 0, 5.0, true)),
        ];
        let last = last_checks(&events, CheckKind::Independence);
        let stats: Vec<_> = last
            .iter()
            .map(|(key, (_, c))| (*key, c.statistic))
            .collect();
        assert_eq!(
            stats,
            vec![((0, Some(0)), Some(2.0)), ((0, Some(1)), Some(4.0))]
        );
    }
}
