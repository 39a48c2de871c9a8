//! `vernier validate`: how close vernier comes to the truth on this machine, written up as
//! `docs/RESULTS.md` with its plots, and as `results/validate.json` beside them.
//!
//! 1. Accuracy against the ideal model (Lancet's Figures 6 and 9): the synthetic server,
//!    one pinned busy-polling worker, service fixed, exponential and bimodal (10% of
//!    requests 10× longer), mean 25 µs, at 10% to 80% of its capacity; vernier's p50 and
//!    p99 with their CIs beside the M/G/1 model's at the load vernier achieved, with
//!    kernel timestamps, and at 50% with user-space ones too. The calibrated loopback
//!    floor, measured in the same run, says how much of the difference is the stack.
//! 2. Other tools on the same targets, interleaved with vernier: memcached (memaslap),
//!    redis-server (redis-benchmark) and nginx (wrk), each at what it can be asked for.
//! 3. The methodology's own dynamics (Figure 7): the sampling rate the independence test
//!    settled on, and the samples a 10 µs p99 CI would need, for each point of part 1.
//!
//! Each experiment is a normal vernier run, recorded under `--runs`; what is reported is
//! what those runs' results say. Every load goes to 127.0.0.1 and stops by itself.
//!
//! By concept: `setup` (what every part shares: the mean service, connections, rates and
//! timestamp sources), `servers` (the real servers and their tools), `experiments` (each
//! experiment a typed [`Scenario`](crate::scenario::Scenario) and the limits they run
//! under), `accuracy` (part 1), `tools` (part 2, a driver and an output parser per tool),
//! `report` (the typed [`Evidence`]), `render` (the report as markdown), `coverage` (the
//! section `--coverage` reruns alone) and `files` (writing them).

mod accuracy;
mod coverage;
mod experiments;
mod files;
mod render;
mod report;
mod servers;
mod setup;
mod stall_coverage;
mod tools;

pub(crate) use tools::memaslap_rate;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use vernier_agent::calibrate::{CalibrateOptions, Calibration};

pub use coverage::CoverageReport;
pub use render::{headline, markdown};
pub use report::{
    AccuracyRow, Answered, CoreJitter, Evidence, Floor, Latency, Measured, Measurement,
    PrecisionRow, ToolFigures, ToolOutcome, ToolRow, ToolRun,
};
pub use servers::{Server, Tool};
pub use setup::Timestamps;
pub use stall_coverage::{MOST_TOUCHED, StallCoverageReport, TARGET as STALL_COVERAGE_TARGET};
pub use tools::{OutputError, ToolError};

use files::{write, write_json};
use setup::Depth;

use crate::error::Error;
use crate::record::Machine;

/// What `vernier validate` is asked.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// Where RESULTS.md and its plots and JSON (under results/) are written.
    pub out: PathBuf,
    /// Where the runs' records go (`None`: runs/DATE-validate).
    pub runs: Option<PathBuf>,
    /// The agent's core (and the other tools'), then the server's.
    pub cpus: Vec<usize>,
    /// One load per distribution and short limits: the harness end to end in a couple of
    /// minutes; its figures are not evidence.
    pub quick: bool,
    /// Replications per process of the coverage section (`None`: 400; 40 with `quick`).
    pub replications: Option<usize>,
}

impl Options {
    /// How much is run: `--quick` turned into a kind once, for the parts to match on.
    fn depth(&self) -> Depth {
        if self.quick {
            Depth::Quick
        } else {
            Depth::Full
        }
    }
}

/// Runs every experiment, writes RESULTS.md (the coverage section included), its plots and
/// results/validate.json under `options.out`, and returns the report. Progress goes to
/// stderr.
pub fn run(options: &Options) -> Result<Evidence, Error> {
    let started = Instant::now();
    let cores = cores(options)?;
    let [agent_cpu, server_cpu] = cores;
    let (runs, plots) = directories(options)?;
    let say = |text: &str| {
        eprintln!(
            "vernier validate [{:>4.0}s] {text}",
            started.elapsed().as_secs_f64()
        )
    };

    let floor = calibrate(options, cores, &say)?;
    let part1 = accuracy::part1(&runs, cores, options.depth(), &say)?;
    let tools = tools::part2(&runs, cores, options.depth(), &say)?;

    let mut figures = accuracy::plots(&part1, &plots)?;
    figures.extend(report_plots(&part1, &plots, &say));

    let report = Evidence {
        quick: options.quick,
        took_s: started.elapsed().as_secs_f64(),
        runs,
        machine: Machine::this(),
        agent_cpu,
        server_cpu,
        floor: report::Floor::of(&floor),
        point_limit_s: accuracy::point_limit_s(options.depth()),
        accuracy: part1.accuracy,
        precision: part1.precision,
        tools,
        figures,
    };
    let path = write_results(options, &report, &plots)?;
    coverage_sections(options)?;
    say(&format!(
        "wrote {} and {} plot(s) under {}",
        path.display(),
        report.figures.len(),
        plots.display()
    ));
    Ok(report)
}

/// The agent's core and the server's, from `--cpus`: two different cores.
fn cores(options: &Options) -> Result<[usize; 2], Error> {
    match options.cpus.as_slice() {
        [a, s] if a != s => Ok([*a, *s]),
        other => Err(Error::Usage(format!(
            "--cpus {other:?}: expected two different cores, as in 0,1"
        ))),
    }
}

/// Where the runs' records go and where the plots and JSON go (results/ under
/// `options.out`), both created.
fn directories(options: &Options) -> Result<(PathBuf, PathBuf), Error> {
    let runs = options.runs.clone().unwrap_or_else(|| {
        crate::session::default_record_dir(if options.quick {
            "validate-quick"
        } else {
            "validate"
        })
    });
    let plots = options.out.join("results");
    for dir in [&runs, &plots] {
        std::fs::create_dir_all(dir).map_err(|source| Error::Io {
            path: dir.clone(),
            source,
        })?;
    }
    Ok((runs, plots))
}

/// The loopback floor between the agent's core and the server's, calibrated (briefly with
/// `--quick`).
fn calibrate(
    options: &Options,
    [agent_cpu, server_cpu]: [usize; 2],
    say: &dyn Fn(&str),
) -> Result<Calibration, Error> {
    say(&format!(
        "calibrating the loopback floor on cores {agent_cpu},{server_cpu}"
    ));
    vernier_agent::calibrate::run(&CalibrateOptions {
        cpus: vec![agent_cpu, server_cpu],
        round_trips: if options.quick { 20_000 } else { 100_000 },
        jitter: Duration::from_millis(if options.quick { 200 } else { 1000 }),
        ..CalibrateOptions::default()
    })
    .map_err(|e| Error::Failed(format!("calibrate: {e}")))
}

/// vernier report's own plots of one run, the exponential point at 50%, under
/// `plots/exp-50pct`: their paths relative to `plots`; none when there is no such run or
/// its report fails (which is said).
fn report_plots(part1: &accuracy::Part1, plots: &Path, say: &dyn Fn(&str)) -> Vec<String> {
    let mut figures = Vec::new();
    if let Some(row) = part1
        .accuracy
        .iter()
        .find(|r| r.service == "exponential" && r.load == 0.5 && r.timestamps == Timestamps::Kernel)
    {
        match crate::report::run(
            &row.measurement.record,
            Some(&plots.join("exp-50pct")),
            crate::report::PlotFormat::Svg,
        ) {
            Ok(report) => figures.extend(
                report
                    .plots
                    .iter()
                    .filter_map(|p| Some(p.strip_prefix(plots).ok()?.display().to_string())),
            ),
            Err(e) => say(&format!(
                "vernier report's plots of the exponential run: {e}"
            )),
        }
    }
    figures
}

/// Writes `report` as RESULTS.md under `options.out` (keeping its sections measured by
/// hand) and as validate.json under `plots`; returns RESULTS.md's path.
fn write_results(options: &Options, report: &Evidence, plots: &Path) -> Result<PathBuf, Error> {
    let path = options.out.join("RESULTS.md");
    // Sections measured by hand (their commands given in them) outlive a new run.
    let previous = std::fs::read_to_string(&path).unwrap_or_default();
    let mut text = markdown(report);
    if let Some(kept) = hand_measured(&previous) {
        text.push('\n');
        text.push_str(kept);
        text.push('\n');
    }
    write(&path, &text)?;
    write_json(&plots.join("validate.json"), report)?;
    Ok(path)
}

/// Runs the coverage section and the section on the tail without stalls, each writing
/// itself under `options.out`, and prints their rows to stderr.
fn coverage_sections(options: &Options) -> Result<(), Error> {
    let coverage = coverage::run(&options.out, options.depth(), options.replications)?;
    // The headline is the command's answer on stdout; the coverage rows go to stderr with
    // the progress.
    for line in coverage.lines() {
        eprintln!("{line}");
    }
    let stalls = stall_coverage::run(&options.out, options.depth(), options.replications)?;
    for line in stalls.lines() {
        eprintln!("{line}");
    }
    Ok(())
}

/// Only the coverage section: runs it, writes it into RESULTS.md in place of the previous
/// one and as results/coverage.json, and returns it.
pub fn coverage(options: &Options) -> Result<CoverageReport, Error> {
    std::fs::create_dir_all(&options.out).map_err(|source| Error::Io {
        path: options.out.clone(),
        source,
    })?;
    coverage::run(&options.out, options.depth(), options.replications)
}

/// Only the section on the tail without the host's stalls: runs it, writes it into
/// RESULTS.md in place of the previous one and as results/stall-coverage.json, and returns
/// it.
pub fn stall_coverage(options: &Options) -> Result<StallCoverageReport, Error> {
    std::fs::create_dir_all(&options.out).map_err(|source| Error::Io {
        path: options.out.clone(),
        source,
    })?;
    stall_coverage::run(&options.out, options.depth(), options.replications)
}

/// Where RESULTS.md keeps what was measured by hand rather than by this harness.
const HAND_BEGIN: &str = "<!-- measured by hand:begin (kept by vernier validate) -->";
const HAND_END: &str = "<!-- measured by hand:end -->";

/// The hand-measured sections of a RESULTS.md, markers included.
fn hand_measured(text: &str) -> Option<&str> {
    let start = text.find(HAND_BEGIN)?;
    let end = text[start..].find(HAND_END)? + start + HAND_END.len();
    Some(&text[start..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_measured_sections_are_found_between_their_markers() {
        let text = format!(
            "# Results\n\ngenerated\n\n{HAND_BEGIN}\n## By hand\n\nfigures\n{HAND_END}\nafter\n"
        );
        let kept = hand_measured(&text).unwrap_or_default();
        assert!(
            kept.starts_with(HAND_BEGIN) && kept.ends_with(HAND_END),
            "{kept}"
        );
        assert!(kept.contains("## By hand\n\nfigures"));
        assert_eq!(hand_measured("# Results\n"), None);
        assert_eq!(
            hand_measured(HAND_BEGIN),
            None,
            "an unclosed section is not kept"
        );
    }
}
