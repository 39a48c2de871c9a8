//! `vernier demo`: the embedded default. It starts the synthetic server (exponential
//! service, 50 µs mean, one worker) and a local agent inside this process and runs the
//! bundled sweep; nothing to install, no flags.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use vernier_fixtures::{ServeConfig, ServeProtocol, Server};

use super::run::{Chatter, Output, View, exit_code, print_outcome, run_session};
use super::stdout::Json;
use crate::error::Error;
use crate::scenario::{Override, Scenario};
use crate::session::SessionOptions;

/// The bundled scenario; its target is replaced by the in-process server's address.
const DEMO: &str = include_str!("../../../scenarios/demo.yaml");

/// Options of `vernier demo` (none are needed).
#[derive(Debug, Args)]
pub struct DemoArgs {
    /// The run directory (default: runs/DATE-demo).
    #[arg(long)]
    pub record: Option<PathBuf>,
    /// How the result is printed.
    #[arg(long, value_enum, default_value_t = Output::Table)]
    pub output: Output,
    /// No terminal UI (also what happens without a terminal).
    #[arg(long)]
    pub headless: bool,
}

/// Runs the demo.
pub fn run(args: DemoArgs) -> Result<ExitCode, Error> {
    // The synthetic protocol carries each request's service time (the scenario's
    // `service: exp:20us`), so the server is told none.
    // The server sleeps in epoll, as servers are usually run: its wake-ups are part of
    // what the demo measures. Spinning would take them out, but on a two-vCPU virtual
    // machine a spinning server beside the agent's own spin before each departure gets the
    // vCPUs throttled: in side-by-side runs the host stalled 1.1-1.4% of the time with a
    // spinning server against 0.7% with a sleeping one, and the 4,000 req/s point's p99
    // CI then rarely narrowed in time.
    let config = ServeConfig {
        workers: 1,
        busy_poll: false,
        ..ServeConfig::new(
            SocketAddr::from(([127, 0, 0, 1], 0)),
            ServeProtocol::Synthetic,
        )
    };
    let server =
        Server::start(config).map_err(|e| Error::Failed(format!("the demo's server: {e}")))?;
    let address = server.local_addr().to_string();
    let target = Override::new("target", address.as_str().into(), &address);
    let scenario = Scenario::from_yaml(DEMO, None, &[target])?;
    let headless = args.headless || !crate::tui::available();
    if headless {
        eprintln!(
            "vernier demo: a synthetic server (exp service, 50 µs mean) on {} and a local agent; the sweep: {:?}",
            server.local_addr(),
            scenario.load
        );
    }
    let options = SessionOptions {
        record: args.record.clone(),
        ..SessionOptions::default()
    };
    let view = if headless {
        View::Headless
    } else {
        View::Dashboard
    };
    let outcome = run_session(&scenario, &options, view, Chatter::Progress);
    let _ = server.stop();
    let outcome = outcome?;
    print_outcome(&scenario, &outcome, args.output, Json::Compact)?;
    exit_code(&outcome)
}
