//! `vernier report DIR`: the table of a recorded run on stdout (or JSON), its plots as SVG
//! or PNG files (or both), and the list of files written on stderr. A directory that holds
//! a recorded comparison (`vernier compare --record DIR`) gets the comparison's report the
//! same way.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;

use super::stdout::{Json, print, print_json};
use crate::compare::report::{self as comparison, COMPARISON_FILE};
use crate::error::Error;
use crate::report::{self, PlotFormat};

/// Options of `vernier report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// A run directory (run.json and samples.parquet/), as `vernier run` records it, or a
    /// comparison's (comparison.json), as `vernier compare --record` writes it.
    #[arg(value_name = "DIR")]
    pub run_dir: PathBuf,
    /// Where to write the plots [default: DIR/report/].
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Print the table as one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// Write each plot as SVG, PNG (900x600) or both.
    #[arg(long, value_enum, default_value_t = PlotFormat::Svg)]
    pub format: PlotFormat,
}

/// Makes the report, prints it, and lists what was written.
pub(crate) fn run(args: ReportArgs) -> Result<ExitCode, Error> {
    if is_comparison(&args.run_dir) {
        let report = comparison::run(&args.run_dir, args.out.as_deref(), args.format)?;
        if args.json {
            print_json(&report, Json::Compact)?;
        } else {
            print(comparison::render_table(&report.comparison).as_bytes())?;
        }
        list(&report.notes, &report.plots);
        return Ok(ExitCode::SUCCESS);
    }
    let report = report::run(&args.run_dir, args.out.as_deref(), args.format)?;
    if args.json {
        print_json(&report, Json::Compact)?;
    } else {
        print(report::render_table(&report.summary).as_bytes())?;
    }
    list(&report.notes, &report.plots);
    Ok(ExitCode::SUCCESS)
}

/// A comparison's directory: its record, and no run's (a run's record wins, as it did
/// before comparisons were recorded).
fn is_comparison(dir: &Path) -> bool {
    dir.join(COMPARISON_FILE).is_file() && !dir.join("run.json").exists()
}

/// What could not be drawn, then the files written, on stderr.
fn list(notes: &[String], plots: &[PathBuf]) {
    for note in notes {
        eprintln!("note: {note}");
    }
    for plot in plots {
        eprintln!("wrote {}", plot.display());
    }
}
