//! `vernier report RUN_DIR`: the table of a recorded run on stdout (or JSON), its plots
//! as SVG or PNG files (or both), and the list of files written on stderr.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::stdout::{print, print_json};
use crate::error::Error;
use crate::report::{self, PlotFormat};

/// Options of `vernier report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// A run directory (run.json and samples.parquet/), as `vernier run` records it.
    pub run_dir: PathBuf,
    /// Where to write the plots [default: RUN_DIR/report/].
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
    let report = report::run(&args.run_dir, args.out.as_deref(), args.format)?;
    if args.json {
        print_json(&report, false)?;
    } else {
        print(report::render_table(&report.summary).as_bytes())?;
    }
    for note in &report.notes {
        eprintln!("note: {note}");
    }
    for plot in &report.plots {
        eprintln!("wrote {}", plot.display());
    }
    Ok(ExitCode::SUCCESS)
}
