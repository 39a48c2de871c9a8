//! `vernier calibrate`: this host's floor (clock read cost, busy-polling loopback RTT,
//! timestamp sources, per-core jitter) as JSON, in a few seconds.

use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use vernier_agent::calibrate::{CalibrateError, CalibrateOptions, run as calibrate};

use super::stdout::{Json, print_json};
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
    #[arg(long, value_parser = super::args::duration_arg)]
    pub duration: Option<Duration>,
    /// How long to spin on each core for the jitter test, e.g. 1s.
    #[arg(long, value_parser = super::args::duration_arg, default_value = "1s")]
    pub jitter: Duration,
    /// Report only this interface's timestamping (repeatable) [default: every interface].
    #[arg(long)]
    pub interface: Vec<String>,
    /// Indent the JSON.
    #[arg(long)]
    pub pretty: bool,
    /// Print the contributors' table (the layout of "Where has my time gone?", Table 1:
    /// min, p50, p99, max and count per contributor) instead of the JSON.
    #[arg(long)]
    pub table: bool,
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
    if args.table {
        print!("{}", table(&calibration.contributors));
        for note in &calibration.notes {
            println!("note: {note}");
        }
    } else {
        print_json(&calibration, Json::pretty_if(args.pretty))?;
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
mod tests {
    use super::*;
    use vernier_agent::calibrate::{Contributor, Spread};

    #[test]
    fn the_table_has_a_row_per_contributor() {
        let rows = [
            Contributor {
                contributor: "clock read (user-space timestamp)".into(),
                how: "each value the mean of 1,000 reads".into(),
                unit: "ns",
                spread: Spread::of_sorted(&[20.5, 21.0, 30.25]),
            },
            Contributor {
                contributor: "host interference on CPU 1".into(),
                how: "gaps over 10 µs".into(),
                unit: "µs",
                spread: Spread::default(),
            },
        ];
        let text = table(&rows);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 5, "{text}");
        assert!(lines[0].starts_with("contributor") && lines[0].ends_with("count"));
        assert!(
            lines[1].contains("20.500") && lines[1].contains("30.250") && lines[1].ends_with(" 3"),
            "{text}"
        );
        assert!(lines[3].ends_with("none seen"), "{text}");
    }
}
