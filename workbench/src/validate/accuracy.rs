//! Part 1: vernier against the ideal model on the synthetic server, the precision runs
//! against the calibrated floor, and the plots of both percentiles against the model.

use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use vernier_fixtures::{ModelConfig, ModelResult, ServeConfig, ServeProtocol, Server, simulate};
use vernier_protocols::Dist;

use super::experiments::{self, LOADS, POINT_LIMIT_S, QUICK_POINT_LIMIT_S, Service, services};
use super::files::write;
use super::render;
use super::report::{AccuracyRow, PrecisionRow};
use super::setup::{Depth, Timestamps};
use crate::error::Error;
use crate::report::{AccuracyPoint, AccuracySeries, accuracy_svg};

/// What part 1 measured.
pub(super) struct Part1 {
    pub accuracy: Vec<AccuracyRow>,
    pub precision: Vec<PrecisionRow>,
    /// The distributions measured (one with `--quick`), for the plots.
    pub services: Vec<Service>,
}

/// The seconds each point of part 1 may take.
pub(super) fn point_limit_s(depth: Depth) -> u64 {
    match depth {
        Depth::Quick => QUICK_POINT_LIMIT_S,
        Depth::Full => POINT_LIMIT_S,
    }
}

/// Runs part 1 against a synthetic server pinned to `server_cpu`: every distribution at
/// every load with kernel timestamps and at 50% with user ones (`--quick`: the exponential
/// at 50%), then the precision runs.
pub(super) fn part1(
    runs: &Path,
    [agent_cpu, server_cpu]: [usize; 2],
    depth: Depth,
    say: &dyn Fn(&str),
) -> Result<Part1, Error> {
    let quick = depth == Depth::Quick;
    let server = Server::start(ServeConfig {
        workers: 1,
        cpus: Some(vec![server_cpu]),
        busy_poll: true,
        ..ServeConfig::new(
            SocketAddr::from(([127, 0, 0, 1], 0)),
            ServeProtocol::Synthetic,
        )
    })
    .map_err(|e| Error::Failed(format!("the synthetic server: {e}")))?;
    let target = server.local_addr();
    let loads: &[f64] = if quick { &[0.5] } else { &LOADS };
    let mut services = services()?;
    if quick {
        services.retain(|s| s.name == "exponential");
    }
    let limit = Duration::from_secs(point_limit_s(depth));
    let mut accuracy = Vec::new();
    for service in &services {
        let plan = loads
            .iter()
            .map(|&l| (l, Timestamps::Kernel))
            .chain(std::iter::once((0.5, Timestamps::User)));
        for (load, timestamps) in plan {
            let model = model(service.dist, load, depth)?;
            let (model_p50_us, model_p99_us) = (at(&model, 0.5)?, at(&model, 0.99)?);
            let scenario =
                experiments::accuracy(target, agent_cpu, service, load, timestamps, limit)?;
            let measurement = experiments::measure(&scenario, runs);
            say(&format!(
                "{} at {:.0}% ({}): {}; model p99 {model_p99_us:.1} µs",
                service.name,
                load * 100.0,
                timestamps.name(),
                render::summary(&measurement)
            ));
            accuracy.push(AccuracyRow {
                service: service.name.into(),
                spec: service.dist.to_string(),
                load,
                timestamps,
                model_p50_us,
                model_p99_us,
                measurement,
            });
        }
    }
    let mut precision = Vec::new();
    for timestamps in [Timestamps::Kernel, Timestamps::User] {
        let scenario = experiments::precision(target, agent_cpu, timestamps, limit)?;
        let measurement = experiments::measure(&scenario, runs);
        say(&format!(
            "1,000 req/s, no service ({}): {}",
            timestamps.name(),
            render::summary(&measurement)
        ));
        precision.push(PrecisionRow {
            timestamps,
            measurement,
        });
    }
    Ok(Part1 {
        accuracy,
        precision,
        services,
    })
}

/// The ideal model of `dist` at `load`.
fn model(dist: Dist, load: f64, depth: Depth) -> Result<ModelResult, Error> {
    let requests = match depth {
        Depth::Quick => 200_000,
        Depth::Full => 2_000_000,
    };
    simulate(&ModelConfig {
        requests,
        warmup: requests / 10,
        seed: 7,
        ..ModelConfig::new(dist, load)
    })
    .map_err(|e| Error::Failed(format!("model {dist} at {load}: {e}")))
}

/// The model's percentile `p` (a fraction), µs.
fn at(model: &ModelResult, p: f64) -> Result<f64, Error> {
    model
        .percentiles
        .iter()
        .find(|q| (q.p - p).abs() < 1e-9)
        .map(|q| q.value)
        .ok_or_else(|| Error::Failed(format!("the model reported no p{}", p * 100.0)))
}

/// Per distribution, p50 and p99 measured (kernel timestamps) against the model, drawn into
/// `plots`; returns the files' names.
pub(super) fn plots(part: &Part1, plots: &Path) -> Result<Vec<String>, Error> {
    let mut figures = Vec::new();
    for service in &part.services {
        let rows: Vec<&AccuracyRow> = part
            .accuracy
            .iter()
            .filter(|r| r.service == service.name && r.timestamps == Timestamps::Kernel)
            .collect();
        let series: Vec<AccuracySeries> = [(50.0, "p50"), (99.0, "p99")]
            .iter()
            .map(|&(p, name)| AccuracySeries {
                name: name.into(),
                points: rows
                    .iter()
                    .map(|r| AccuracyPoint {
                        load: r.load,
                        model: if p == 50.0 {
                            r.model_p50_us
                        } else {
                            r.model_p99_us
                        },
                        measured: r
                            .measurement
                            .percentile(p)
                            .map(|q| (q.value, q.ci_low.zip(q.ci_high))),
                    })
                    .collect(),
            })
            .collect();
        let spec = service.dist;
        let caption = vec![format!(
            "vernier's estimates (markers, with their 95% CI) against the ideal M/G/1 model (dashed) for {spec}, kernel timestamps; the load is the target's share of 40,000 req/s."
        )];
        let svg = accuracy_svg(
            &format!("{} service ({spec})", service.name),
            &series,
            &caption,
        )
        .map_err(|e| Error::Failed(format!("plot: {e}")))?;
        let file = format!("accuracy-{}.svg", service.name);
        write(&plots.join(&file), &svg)?;
        figures.push(file);
    }
    Ok(figures)
}
