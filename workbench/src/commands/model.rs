//! `vernier model`: the latency a perfect tool would report for a service-time
//! distribution at a load (the M/G/K queue, simulated), as JSON.

use std::fs::File;
use std::io::BufWriter;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use vernier_fixtures::{ModelConfig, simulate};
use vernier_protocols::Dist;

use super::stdout::{Json, print_json};
use crate::error::Error;

/// Options of `vernier model`.
#[derive(Debug, Args)]
pub struct ModelArgs {
    /// The service-time distribution, e.g. exp:25us, fixed:10us, bimodal:10us:100us:0.9.
    #[arg(long)]
    pub service: Dist,
    /// The load ρ = λ·E[S]/K, strictly between 0 and 1.
    #[arg(long)]
    pub load: f64,
    /// Workers K sharing the one FCFS queue.
    #[arg(long, default_value_t = 1)]
    pub workers: usize,
    /// Requests measured.
    #[arg(long, default_value_t = ModelConfig::DEFAULT_REQUESTS)]
    pub requests: usize,
    /// Requests simulated first and not measured [default: a tenth of --requests].
    #[arg(long)]
    pub warmup: Option<usize>,
    /// Seed of the arrivals and service times.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Write the sojourn time's CCDF to this file as CSV (latency_us,ccdf).
    #[arg(long)]
    pub ccdf: Option<PathBuf>,
    /// Indent the JSON.
    #[arg(long)]
    pub pretty: bool,
}

/// Simulates, writes the CCDF if asked, prints one JSON object; nothing reaches stdout
/// unless all of it succeeded.
pub fn run(args: ModelArgs) -> Result<ExitCode, Error> {
    let config = ModelConfig {
        workers: args.workers,
        requests: args.requests,
        warmup: args.warmup.unwrap_or(args.requests / 10),
        seed: args.seed,
        ccdf: args.ccdf.is_some(),
        ..ModelConfig::new(args.service, args.load)
    };
    let result = simulate(&config).map_err(|e| Error::Usage(e.to_string()))?;
    if let Some(path) = &args.ccdf {
        let io_error = |source| Error::Io {
            path: path.clone(),
            source,
        };
        let file = File::create(path).map_err(io_error)?;
        result.write_ccdf(BufWriter::new(file)).map_err(io_error)?;
    }
    print_json(&result, Json::pretty_if(args.pretty))?;
    Ok(ExitCode::SUCCESS)
}
