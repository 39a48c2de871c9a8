//! A record's samples read back: every part of `samples.parquet` in the order written,
//! and one point's round of them, as latencies or as each agent's requests for the tail
//! without stalls (the columns: [`crate::record`]).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use polars::prelude::{DataFrame, ParquetReader, PolarsError, SerReader};

use crate::error::Error;

/// Reads every part of a run directory's samples, in the order written. Parts that are
/// not Parquet (a run killed mid-write leaves only `.tmp` files, which are skipped) are
/// errors naming the file.
pub fn read_samples(dir: &Path) -> Result<DataFrame, Error> {
    let parts_dir = dir.join("samples.parquet");
    let io = |source| Error::Io {
        path: parts_dir.clone(),
        source,
    };
    let mut parts: Vec<PathBuf> = fs::read_dir(&parts_dir)
        .map_err(io)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "parquet"))
        .collect();
    parts.sort();
    let mut all: Option<DataFrame> = None;
    for part in parts {
        let file = fs::File::open(&part).map_err(|source| Error::Io {
            path: part.clone(),
            source,
        })?;
        let frame = ParquetReader::new(file)
            .finish()
            .map_err(|e| Error::input(&part, None, format!("not a samples part: {e}")))?;
        all = Some(match all {
            None => frame,
            Some(mut acc) => {
                acc.vstack_mut(&frame)
                    .map_err(|e| Error::input(&part, None, format!("columns differ: {e}")))?;
                acc
            }
        });
    }
    Ok(all.unwrap_or_default())
}

/// The latencies (ns) of one point's round, in the order recorded.
pub fn point_latencies(samples: &DataFrame, point: usize, round: u32) -> Result<Vec<u64>, Error> {
    if samples.height() == 0 {
        return Ok(Vec::new());
    }
    let bad = |e: PolarsError| Error::Failed(format!("samples.parquet: {e}"));
    let points = samples.column("point").map_err(bad)?.u32().map_err(bad)?;
    let rounds = samples.column("round").map_err(bad)?.u32().map_err(bad)?;
    let latency = samples
        .column("latency_ns")
        .map_err(bad)?
        .u64()
        .map_err(bad)?;
    Ok(points
        .iter()
        .zip(rounds.iter())
        .zip(latency.iter())
        .filter_map(|((p, r), l)| {
            (p == Some(point as u32) && r == Some(round))
                .then_some(l)
                .flatten()
        })
        .collect())
}

/// The requests of one point's round as the record holds them, for the tail without
/// stalls.
#[derive(Debug, Default)]
pub struct PointRequests {
    /// Each request as its agent's client recorded it: the agent, and the request on its
    /// clock with its busy stretch.
    pub requests: Vec<(u32, vernier_stats::Kept)>,
    /// Whether the record says the busy stretches (an older record does not: each is then
    /// 0).
    pub stretches: bool,
    /// How many workers each agent's requests came from.
    pub workers: BTreeMap<u32, usize>,
}

impl PointRequests {
    /// Where agent `agent`'s stretches come from, its point `thinned` or not.
    pub fn stretches_of(&self, agent: u32, thinned: bool) -> vernier_stats::Stretches {
        let workers = self.workers.get(&agent).copied().unwrap_or(1);
        vernier_stats::Stretches::of(thinned, workers)
    }
}

/// The requests of one point's round ([`PointRequests`]).
pub fn point_requests(
    samples: &DataFrame,
    point: usize,
    round: u32,
) -> Result<PointRequests, Error> {
    if samples.height() == 0 {
        return Ok(PointRequests {
            stretches: true,
            ..PointRequests::default()
        });
    }
    let bad = |e: PolarsError| Error::Failed(format!("samples.parquet: {e}"));
    let column = |name: &str| samples.column(name).map_err(bad);
    let points = column("point")?.u32().map_err(bad)?;
    let rounds = column("round")?.u32().map_err(bad)?;
    let agents = column("agent")?.u32().map_err(bad)?;
    let departure = column("departure_ns")?.u64().map_err(bad)?;
    let latency = column("latency_ns")?.u64().map_err(bad)?;
    let late = column("queueing_ns")?.u64().map_err(bad)?;
    let busy = match samples.column("busy_ns") {
        Ok(c) => Some(c.u64().map_err(bad)?),
        Err(_) => None,
    };
    // A record without the column is taken as one worker's.
    let workers = match samples.column("worker") {
        Ok(c) => Some(c.u32().map_err(bad)?),
        Err(_) => None,
    };
    let mut out = Vec::new();
    let mut seen: BTreeSet<(u32, u32)> = BTreeSet::new();
    for i in 0..samples.height() {
        if points.get(i) != Some(point as u32) || rounds.get(i) != Some(round) {
            continue;
        }
        if let (Some(agent), Some(worker)) = (agents.get(i), workers.and_then(|w| w.get(i))) {
            seen.insert((agent, worker));
        }
        if let (Some(agent), Some(departure_ns), Some(latency_ns), Some(late_ns), Some(busy_ns)) = (
            agents.get(i),
            departure.get(i),
            latency.get(i),
            late.get(i),
            busy.map_or(Some(0), |b| b.get(i)),
        ) {
            let sent = vernier_stats::Sent {
                departure_ns,
                late_ns,
                latency_ns,
            };
            out.push((agent, vernier_stats::Kept { sent, busy_ns }));
        }
    }
    let mut by_agent = BTreeMap::new();
    for (agent, _) in seen {
        *by_agent.entry(agent).or_insert(0) += 1;
    }
    Ok(PointRequests {
        requests: out,
        stretches: busy.is_some(),
        workers: by_agent,
    })
}
