//! Run records: one directory per run, the interface for replay, reports and users' own
//! analysis in pandas or polars.
//!
//! - `run.json` ([`RunRecord`]): the scenario, the machine, the timestamp source, every
//!   coordinator event with its figures as displays show them ([`ShownEvent`]: a check's
//!   words, a point's reasons), each load point's result and the verdict; read back, from
//!   any format, by [`read_record`]. Rewritten whole (written
//!   to a temporary file, then renamed) at least once a second while the run goes on and
//!   at every verdict, so a killed run leaves a complete, parseable file up to its last
//!   second.
//! - `samples.parquet/`: a Parquet dataset, one `part-NNNNNN.parquet` file per flush (about
//!   once a second), each complete on its own: `pl.read_parquet("samples.parquet/*.parquet")`
//!   or `pd.read_parquet("samples.parquet")`. A killed run loses at most the last second.
//!
//! - `stalls.csv`: every stall the run's probes saw, as an interval on the samples'
//!   clock (`departure_ns`), with its core, its source, its agent and its point: see
//!   [`read_stalls`].
//! - `point-NNN.hlog`: each load point's HdrHistogram interval log, the latency of every
//!   request (not only the samples kept), one interval per worker report, tagged by point,
//!   round, agent and worker: see [`crate::hlog`].
//!
//! Columns of the samples: `point` and `round` (u32: the load point, and the measurement
//! round within it, 0 for warm-up; a point's result says which round it used), `agent`,
//! `worker` (u32), `departure_ns` (u64, since the agent's engine started), `latency_ns`
//! (u64), `queueing_ns` (u64: actual minus scheduled departure), `conn` (u32), `request`
//! (`get`, `set`, `other`), `outcome` (`hit`, `miss`, `ok`, `error`), `busy_ns` (u64: from
//! the start of the worker's busy stretch to the request's scheduled departure) and
//! `in_flight` (u32: the worker's requests awaiting a reply as it left); older records
//! have neither of the last two.

mod content;
mod read;
mod samples;
mod shown;
mod stalls;

pub use content::{FORMAT, Machine, RunRecord, set_version};
pub use read::read_record;
pub use samples::{PointRequests, point_latencies, point_requests, read_samples};
pub use shown::{ShownCheck, ShownEvent, ShownPoint, ShownReason, UntypedReason};
pub use stalls::{RecordedStall, STALLS_FILE, STALLS_HEADER, read_stalls};

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use polars::prelude::{Column, DataFrame, ParquetWriter, PolarsResult};
use vernier_agent::{Sample, StallLog};

use crate::coordinator::{Event, EventKind, Verdict};
use crate::error::Error;
use crate::hlog::Origin;
use stalls::StallRows;

/// The samples of one flush, column by column.
#[derive(Debug, Default)]
struct Columns {
    point: Vec<u32>,
    round: Vec<u32>,
    agent: Vec<u32>,
    worker: Vec<u32>,
    departure_ns: Vec<u64>,
    latency_ns: Vec<u64>,
    queueing_ns: Vec<u64>,
    conn: Vec<u32>,
    request: Vec<&'static str>,
    outcome: Vec<&'static str>,
    busy_ns: Vec<u64>,
    in_flight: Vec<u32>,
}

impl Columns {
    fn len(&self) -> usize {
        self.point.len()
    }

    fn push(&mut self, point: u32, round: u32, agent: u32, worker: u32, s: &Sample) {
        self.point.push(point);
        self.round.push(round);
        self.agent.push(agent);
        self.worker.push(worker);
        self.departure_ns.push(s.departure_ns);
        self.latency_ns.push(s.latency_ns);
        self.queueing_ns.push(u64::from(s.queueing_ns));
        self.conn.push(u32::from(s.conn));
        self.request.push(match s.request {
            0 => "get",
            1 => "set",
            _ => "other",
        });
        self.outcome.push(match s.outcome {
            0 => "hit",
            1 => "miss",
            2 => "ok",
            _ => "error",
        });
        self.busy_ns.push(u64::from(s.busy_ns));
        self.in_flight.push(s.in_flight);
    }

    fn take_frame(&mut self) -> PolarsResult<DataFrame> {
        let c = std::mem::take(self);
        let height = c.point.len();
        DataFrame::new(
            height,
            vec![
                Column::new("point".into(), c.point),
                Column::new("round".into(), c.round),
                Column::new("agent".into(), c.agent),
                Column::new("worker".into(), c.worker),
                Column::new("departure_ns".into(), c.departure_ns),
                Column::new("latency_ns".into(), c.latency_ns),
                Column::new("queueing_ns".into(), c.queueing_ns),
                Column::new("conn".into(), c.conn),
                Column::new("request".into(), c.request),
                Column::new("outcome".into(), c.outcome),
                Column::new("busy_ns".into(), c.busy_ns),
                Column::new("in_flight".into(), c.in_flight),
            ],
        )
    }
}

/// How often buffered samples and the record are written out.
const FLUSH_EVERY: Duration = Duration::from_secs(1);

/// Writes a run directory as the run goes.
#[derive(Debug)]
pub struct Recorder {
    dir: PathBuf,
    record: RunRecord,
    columns: Columns,
    parts: usize,
    last_flush: Instant,
    dirty: bool,
    hlog: crate::hlog::HlogWriter,
    stalls: StallRows,
}

impl Recorder {
    /// Creates the directory (it must not exist, or be empty) and writes a first run.json.
    pub fn create(dir: &Path, record: RunRecord) -> Result<Recorder, Error> {
        let io = |source| Error::Io {
            path: dir.to_path_buf(),
            source,
        };
        if dir.exists() && fs::read_dir(dir).map_err(io)?.next().is_some() {
            return Err(Error::Usage(format!(
                "record directory {} exists and is not empty: choose another with --record",
                dir.display()
            )));
        }
        fs::create_dir_all(dir.join("samples.parquet")).map_err(io)?;
        StallRows::create(dir)?;
        let mut recorder = Recorder {
            dir: dir.to_path_buf(),
            record,
            columns: Columns::default(),
            parts: 0,
            last_flush: Instant::now(),
            dirty: true,
            hlog: crate::hlog::HlogWriter::new(dir, std::time::SystemTime::now()),
            stalls: StallRows::default(),
        };
        recorder.write_json()?;
        Ok(recorder)
    }

    /// The run directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Buffers samples that all belong to one round (the coordinator's decision on their
    /// batch: see `coordinator::Taken`).
    pub fn samples(&mut self, origin: Origin, samples: &[Sample]) {
        let Origin {
            point,
            round,
            agent,
            worker,
        } = origin;
        for s in samples {
            self.columns
                .push(point as u32, round, agent as u32, worker, s);
        }
    }

    /// Buffers the stalls a batch of `origin`'s agent brought (on its samples' clock),
    /// for `stalls.csv`.
    pub fn stalls(&mut self, origin: Origin, stalls: &StallLog) {
        self.stalls
            .push(origin.agent as u32, origin.point as u32, stalls);
    }

    /// Appends a worker's report interval to the point's interval log: `latency` (ns) of
    /// every request completed in it, up to `end` since its engine started.
    pub fn latency(
        &mut self,
        origin: Origin,
        end: Duration,
        latency: vernier_agent::Recorded<'_>,
    ) -> Result<(), Error> {
        self.hlog.interval(origin, end, latency)
    }

    /// Adds an event (a verdict also records the point's result and writes at once).
    pub fn event(&mut self, event: &Event) -> Result<(), Error> {
        let event = ShownEvent::from(event);
        self.dirty = true;
        if let EventKind::Verdict(result) = &event.kind {
            let mut result = (**result).clone();
            result.record = Some(self.dir.display().to_string());
            self.record.points.push(result);
            self.record.events.push(event);
            return self.flush();
        }
        self.record.events.push(event);
        Ok(())
    }

    /// Sets the timestamp source once the agents have said which is in use.
    pub fn set_timestamps(&mut self, source: &str) {
        self.record.timestamps = source.to_string();
        self.dirty = true;
    }

    /// Writes out what is due (call it often; it writes about once a second).
    pub fn tick(&mut self) -> Result<(), Error> {
        if self.last_flush.elapsed() >= FLUSH_EVERY {
            self.flush()?;
        }
        Ok(())
    }

    /// Writes buffered samples and run.json now.
    pub fn flush(&mut self) -> Result<(), Error> {
        self.last_flush = Instant::now();
        self.hlog.flush()?;
        self.stalls.flush(&self.dir)?;
        if self.columns.len() > 0 {
            let path = self
                .dir
                .join("samples.parquet")
                .join(format!("part-{:06}.parquet", self.parts));
            let mut frame = self
                .columns
                .take_frame()
                .map_err(|e| Error::Failed(format!("samples for {}: {e}", path.display())))?;
            write_atomically(&path, |file| {
                ParquetWriter::new(file)
                    .finish(&mut frame)
                    .map(|_| ())
                    .map_err(std::io::Error::other)
            })?;
            self.parts += 1;
        }
        if self.dirty {
            self.write_json()?;
        }
        Ok(())
    }

    /// Records the run's end and writes everything.
    pub fn finish(
        mut self,
        slo_rate: Option<f64>,
        verdict: Option<Verdict>,
    ) -> Result<PathBuf, Error> {
        self.record.status = "finished".into();
        self.record.slo_rate = slo_rate;
        self.record.verdict = verdict;
        self.dirty = true;
        self.flush()?;
        Ok(self.dir)
    }

    fn write_json(&mut self) -> Result<(), Error> {
        let json = serde_json::to_vec_pretty(&self.record)
            .map_err(|e| Error::Failed(format!("cannot encode run.json: {e}")))?;
        write_atomically(&self.dir.join("run.json"), |file| {
            std::io::Write::write_all(file, &json)
        })?;
        self.dirty = false;
        Ok(())
    }
}

/// Writes `path` through a temporary file renamed into place, so readers never see half.
fn write_atomically(
    path: &Path,
    write: impl FnOnce(&mut fs::File) -> std::io::Result<()>,
) -> Result<(), Error> {
    let tmp = path.with_extension("tmp");
    let io = |source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut file = fs::File::create(&tmp).map_err(io)?;
    write(&mut file).map_err(io)?;
    file.sync_data().map_err(io)?;
    fs::rename(&tmp, path).map_err(io)
}
