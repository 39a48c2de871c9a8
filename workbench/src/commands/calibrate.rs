//! `vernier calibrate`: this host's floor (clock read cost, busy-polling loopback RTT,
//! timestamp sources, per-core jitter) as JSON, in a few seconds.

use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use vernier_agent::calibrate::{CalibrateError, CalibrateOptions, run as calibrate};

use super::print_json;
use crate::error::Error;

/// Options of `vernier calibrate`.
#[derive(Debug, Args)]
pub struct CalibrateArgs {
    /// Cores, comma-separated: the ping-pong client runs on the first and its server on
    /// the second; the jitter spin runs on each [default: the first two this process may
    /// use].
    #[arg(long, value_delimiter = ',')]
    pub cpus: Vec<usize>,
    /// Round trips of the ping-pong, after 1,000 of warm-up.
    #[arg(long, default_value_t = CalibrateOptions::default().round_trips)]
    pub round_trips: u64,
    /// Run the ping-pong for this long instead, e.g. 2s or 500ms.
    #[arg(long, value_parser = crate::cli::duration_arg)]
    pub duration: Option<Duration>,
    /// How long to spin on each core for the jitter test, e.g. 1s.
    #[arg(long, value_parser = crate::cli::duration_arg, default_value = "1s")]
    pub jitter: Duration,
    /// Report only this interface's timestamping (repeatable) [default: every interface].
    #[arg(long)]
    pub interface: Vec<String>,
    /// Indent the JSON.
    #[arg(long)]
    pub pretty: bool,
}

/// Measures, then prints one JSON object; nothing reaches stdout unless all of it
/// succeeded.
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
    print_json(&calibration, args.pretty)?;
    Ok(ExitCode::SUCCESS)
}
