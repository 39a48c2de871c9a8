//! `vernier replay RUN_DIR`: a recorded run played in the dashboard at its real pace or
//! faster (space pauses, ←/→ seek, [/] change the speed, `--until EVENT` jumps), or one
//! frame printed as text with `--screen 80x24` (or as an SVG picture, `--svg`).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use crate::error::Error;
use crate::tui::{self, ReplayOptions, Until};

/// Options of `vernier replay`.
#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// A run directory, as `vernier run` records it.
    pub run_dir: PathBuf,
    /// Jump to an event first and pause there: verdict, command, a phase (warm-up,
    /// measure...), a check (independence, confidence...), with :N for the N-th; or a
    /// time (12.5s); or end.
    #[arg(long, value_name = "EVENT")]
    pub until: Option<String>,
    /// Record seconds per wall second.
    #[arg(long, default_value_t = 1.0)]
    pub speed: f64,
    /// Print the frame at `--until` (default: the end) at this size, as text, and exit:
    /// no terminal needed.
    #[arg(long, value_name = "WxH")]
    pub screen: Option<String>,
    /// With `--screen`: print the frame as an SVG picture of a colour terminal instead of
    /// text (how docs/tui.svg is made).
    #[arg(long, requires = "screen")]
    pub svg: bool,
}

fn size(text: &str) -> Result<(u16, u16), Error> {
    let bad = || {
        Error::Usage(format!(
            "--screen {text:?}: expected WIDTHxHEIGHT, at least {}x{}, as in 80x24",
            tui::MIN_SIZE.0,
            tui::MIN_SIZE.1
        ))
    };
    let (w, h) = text.split_once('x').ok_or_else(bad)?;
    let (w, h) = (
        w.parse::<u16>().map_err(|_| bad())?,
        h.parse::<u16>().map_err(|_| bad())?,
    );
    if w < tui::MIN_SIZE.0 || h < tui::MIN_SIZE.1 || w > 1000 || h > 1000 {
        return Err(bad());
    }
    Ok((w, h))
}

/// Runs `vernier replay`.
pub fn run(args: ReplayArgs) -> Result<ExitCode, Error> {
    let until = args
        .until
        .as_deref()
        .map(|u| {
            u.parse::<Until>()
                .map_err(|e| Error::Usage(format!("--until {e}")))
        })
        .transpose()?;
    if !(args.speed > 0.0 && args.speed.is_finite()) {
        return Err(Error::Usage(format!(
            "--speed {}: expected a positive number",
            args.speed
        )));
    }
    let options = ReplayOptions {
        dir: args.run_dir,
        until,
        speed: args.speed,
    };
    if let Some(text) = &args.screen {
        let (w, h) = size(text)?;
        let frame = tui::replay_screen(&options, w, h, args.svg)?;
        let mut out = std::io::stdout().lock();
        return match out.write_all(frame.as_bytes()).and_then(|()| out.flush()) {
            Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(Error::Io {
                path: "<stdout>".into(),
                source: e,
            }),
            _ => Ok(ExitCode::SUCCESS),
        };
    }
    if !tui::available() {
        return Err(Error::Usage(
            "replay needs a terminal; --screen 80x24 prints one frame without one".into(),
        ));
    }
    tui::run_replay(&options)?;
    Ok(ExitCode::SUCCESS)
}
