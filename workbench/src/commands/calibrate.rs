//! `vernier calibrate`: can this host measure microsecond tails, on which cores, and what
//! to change. Its floor (clock read cost, busy-polling loopback RTT, timestamp sources,
//! each core's gaps and a sleeping thread's wake-ups) and a verdict ([`verdict`]), as a
//! table for people or as JSON, in a few seconds.

mod text;
pub mod verdict;

use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, ValueEnum};
use serde::Serialize;
use vernier_agent::calibrate::{CalibrateError, CalibrateOptions, Calibration, run as calibrate};

use super::stdout::{Json, print_json};
use crate::error::Error;

/// Options of `vernier calibrate`.
#[derive(Debug, Args)]
pub struct CalibrateArgs {
    /// Cores, comma-separated: the ping-pong client runs on the first and its server on
    /// the second; the spin and the wake-up probe run on each [default: the ping-pong on
    /// the first two this process may use, the spin and the probe on every one].
    #[arg(long, value_delimiter = ',')]
    pub cpus: Vec<usize>,
    /// Round trips of the ping-pong, after 1,000 of warm-up.
    #[arg(long, default_value_t = CalibrateOptions::default().round_trips)]
    pub round_trips: u64,
    /// Run the ping-pong for this long instead, e.g. 2s or 500ms.
    #[arg(long, value_parser = super::args::duration_arg)]
    pub duration: Option<Duration>,
    /// How long to spin on each core for the jitter test, e.g. 1s.
    #[arg(long, value_parser = super::args::duration_arg, default_value = "1s")]
    pub jitter: Duration,
    /// Report only this interface's timestamping (repeatable) [default: every interface].
    #[arg(long)]
    pub interface: Vec<String>,
    /// How to print: a table and a verdict for people, or one JSON object (the figures,
    /// with the verdict and the advice under `verdict`).
    #[arg(long, value_enum, default_value_t = CalibrationOutput::Text)]
    pub output: CalibrationOutput,
    /// Indent the JSON.
    #[arg(long)]
    pub pretty: bool,
    /// Print the contributors' table (the layout of "Where has my time gone?", Table 1:
    /// min, p50, p99, max and count per contributor) instead of the JSON.
    #[arg(long)]
    pub table: bool,
}

/// How `vernier calibrate` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CalibrationOutput {
    /// Each core's figures, the host's, a verdict and what to do.
    Text,
    /// One JSON object.
    Json,
}

/// The JSON `vernier calibrate --output json` prints: the figures, and the verdict.
#[derive(Debug, Serialize)]
pub struct CalibrationReport<'a> {
    /// The figures.
    #[serde(flatten)]
    pub calibration: &'a Calibration,
    /// The verdict and the advice.
    pub verdict: &'a verdict::HostVerdict,
}

/// Measures, then prints; nothing reaches stdout unless all of it succeeded.
pub fn run(args: CalibrateArgs) -> Result<ExitCode, Error> {
    let options = CalibrateOptions {
        cpus: args.cpus,
        round_trips: args.round_trips,
        duration: args.duration,
        jitter: args.jitter,
        interfaces: (!args.interface.is_empty()).then_some(args.interface),
    };
    let calibration = calibrate(&options).map_err(|e| match e {
        e if e.is_usage() => Error::Usage(e.to_string()),
        CalibrateError::Io { what, source } => Error::Io {
            path: format!("calibrate: {what}").into(),
            source,
        },
        other => Error::Failed(format!("calibrate: {other}")),
    })?;
    let verdict = verdict::judge(&calibration);
    if args.table {
        print!("{}", table(&calibration.contributors));
        for note in &calibration.notes {
            println!("note: {note}");
        }
    } else if args.output == CalibrationOutput::Json || args.pretty {
        let report = CalibrationReport {
            calibration: &calibration,
            verdict: &verdict,
        };
        print_json(&report, Json::pretty_if(args.pretty))?;
    } else {
        print!("{}", text::text(&calibration, &verdict));
    }
    Ok(ExitCode::SUCCESS)
}

/// The contributors as an aligned text table, each row's method below it.
fn table(rows: &[vernier_agent::calibrate::Contributor]) -> String {
    let mut out = format!(
        "{:<46} {:>4} {:>10} {:>10} {:>10} {:>10} {:>9}\n",
        "contributor", "unit", "min", "p50", "p99", "max", "count"
    );
    for r in rows {
        let s = r.spread;
        if s.count == 0 {
            out += &format!("{:<46} {:>4} {:>54}\n", r.contributor, r.unit, "none seen");
        } else {
            out += &format!(
                "{:<46} {:>4} {:>10.3} {:>10.3} {:>10.3} {:>10.3} {:>9}\n",
                r.contributor, r.unit, s.min, s.p50, s.p99, s.max, s.count
            );
        }
        out += &format!("    {}\n", r.how);
    }
    out
}

#[cfg(test)]
mod tests;
