//! `vernier serve`: the synthetic server, until SIGINT or SIGTERM (or `--duration`), with
//! its service-time distribution as JSON on stdout at the end and on SIGUSR1.

use std::net::SocketAddr;
use std::process::ExitCode;
use std::thread;
use std::time::{Duration, Instant};

use clap::Args;
use clap::builder::{PossibleValuesParser, TypedValueParser};
use signal_hook::consts::{SIGINT, SIGTERM, SIGUSR1};
use signal_hook::iterator::Signals;
use vernier_fixtures::{ServeConfig, ServeError, ServeProtocol, Server, Transport};
use vernier_protocols::Dist;

use super::stdout::{Json, print_json};
use crate::error::Error;

/// How often the command looks for signals, the deadline and failed workers. Serving is
/// the workers' business; this is only how quickly the command reacts.
const TICK: Duration = Duration::from_millis(20);

/// Options of `vernier serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The address to listen on; port 0 picks a free one (see the `listening on` line).
    #[arg(long)]
    pub listen: SocketAddr,
    /// The protocol.
    #[arg(long, value_parser = PossibleValuesParser::new(ServeProtocol::ALL.map(ServeProtocol::name))
        .try_map(|name| name.parse::<ServeProtocol>()))]
    pub protocol: ServeProtocol,
    /// The service-time distribution of memcached, http and framed requests, e.g. exp:25us
    /// [default: none, answer at once]. Synthetic requests carry their own.
    #[arg(long)]
    pub service: Option<Dist>,
    /// Worker threads.
    #[arg(long, default_value_t = 1)]
    pub workers: usize,
    /// Cores to pin the workers to, comma-separated; worker i gets the i-th, round robin.
    #[arg(long, value_delimiter = ',')]
    pub cpus: Option<Vec<usize>>,
    /// The transport.
    #[arg(long, default_value = "tcp", value_parser = PossibleValuesParser::new(["tcp", "udp", "both"])
        .try_map(|name| name.parse::<Transport>()))]
    pub transport: Transport,
    /// Stop after this long, e.g. 30s or 500ms [default: at SIGINT or SIGTERM].
    #[arg(long, value_parser = super::args::duration_arg)]
    pub duration: Option<Duration>,
    /// Seed of the service-time draws.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Spin instead of sleeping between requests (a core per worker; no wake-up latency).
    #[arg(long)]
    pub busy_poll: bool,
    /// Indent the JSON.
    #[arg(long)]
    pub pretty: bool,
}

/// Serves until a signal to stop or the deadline; prints `listening on ADDR` on stderr
/// once clients can connect.
pub fn run(args: ServeArgs) -> Result<ExitCode, Error> {
    let config = ServeConfig {
        service: args.service,
        workers: args.workers,
        cpus: args.cpus,
        transport: args.transport,
        seed: args.seed,
        busy_poll: args.busy_poll,
        ..ServeConfig::new(args.listen, args.protocol)
    };
    // Before the server starts, so that a signal right after the `listening on` line is
    // handled rather than killing the process without its report.
    let mut signals = Signals::new([SIGINT, SIGTERM, SIGUSR1]).map_err(|e| Error::Io {
        path: "<signal handlers>".into(),
        source: e,
    })?;
    let server = match Server::start(config) {
        Ok(server) => server,
        Err(e) => return failure(e),
    };
    eprintln!("listening on {}", server.local_addr());
    let deadline = args.duration.map(|d| Instant::now() + d);
    'serving: while server.is_running() && deadline.is_none_or(|d| Instant::now() < d) {
        for signal in signals.pending() {
            if signal != SIGUSR1 {
                break 'serving;
            }
            print_json(&server.stats(), Json::pretty_if(args.pretty))?;
        }
        thread::sleep(TICK);
    }
    match server.stop() {
        Ok(stats) => {
            print_json(&stats, Json::pretty_if(args.pretty))?;
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => failure(e),
    }
}

/// A configuration the server refuses is a usage error (exit 2); a server that could not
/// listen or whose worker failed is a failure (exit 1).
fn failure(error: ServeError) -> Result<ExitCode, Error> {
    match error {
        ServeError::ServiceWithSynthetic
        | ServeError::ServiceWithEcho
        | ServeError::HttpOverUdp
        | ServeError::NoWorkers
        | ServeError::NoCpus
        | ServeError::Cpu { .. } => Err(Error::Usage(error.to_string())),
        _ => Err(Error::Failed(error.to_string())),
    }
}
