//! `vernier report RUN_DIR`: the table of a recorded run on stdout (or JSON), its plots
//! as SVG files, and the list of files written on stderr.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::print_json;
use crate::error::Error;
use crate::report;

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
}

/// Makes the report, prints it, and lists what was written.
pub(crate) fn run(args: ReportArgs) -> Result<ExitCode, Error> {
    let report = report::run(&args.run_dir, args.out.as_deref())?;
    if args.json {
        print_json(&report, false)?;
    } else {
        let mut out = std::io::stdout().lock();
        match out
            .write_all(report::render_table(&report.summary).as_bytes())
            .and_then(|()| out.flush())
        {
            // A reader that stopped early (`| head`) is not an error of ours.
            Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                return Err(Error::Io {
                    path: "<stdout>".into(),
                    source: e,
                });
            }
            _ => {}
        }
    }
    for note in &report.notes {
        eprintln!("note: {note}");
    }
    for plot in &report.plots {
        eprintln!("wrote {}", plot.display());
    }
    Ok(ExitCode::SUCCESS)
}
