//! Run records: one directory per run, the interface for replay, reports and users' own
//! analysis in pandas or polars.
//!
//! - `run.json`: the scenario, the machine, the timestamp source, every coordinator event
//!   with its figures, each load point's result and the verdict. Rewritten whole (written
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

mod samples;
mod stalls;

pub use samples::{PointRequests, point_latencies, point_requests, read_samples};
pub use stalls::{RecordedStall, STALLS_FILE, STALLS_HEADER, read_stalls};

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use polars::prelude::{Column, DataFrame, ParquetWriter, PolarsResult};
use serde::{Deserialize, Serialize};
use vernier_agent::{Sample, StallLog};

use crate::coordinator::{CheckRole, Event, EventKind, PointResult, Verdict};
use crate::error::Error;
use crate::hlog::Origin;
use crate::scenario::Scenario;
use stalls::StallRows;

/// The format name written in every run.json. Format 2 writes a point's answer (the tail
/// asked) as `verdict` and every request's as `every_request`; format 1 wrote every
/// request's as `verdict` and is read into today's types ([`read_record`]).
pub const FORMAT: &str = "vernier-run/2";

/// The format before a point's `verdict` was its answer's.
const FORMAT_1: &str = "vernier-run/1";

/// The content of run.json.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// [`FORMAT`].
    pub format: String,
    /// The scenario's name.
    pub name: String,
    /// When the run started (RFC 3339, UTC).
    pub started: String,
    /// `running` while it goes on (a record left `running` was killed), then `finished`.
    pub status: String,
    /// The scenario file, if there was one.
    pub scenario_file: Option<String>,
    /// The scenario as run (overrides applied), YAML.
    pub scenario: String,
    /// Where the run ran.
    pub machine: Machine,
    /// The timestamp source in use.
    pub timestamps: String,
    /// Every event, in order.
    pub events: Vec<Event>,
    /// Each load point's result, in the order measured.
    pub points: Vec<PointResult>,
    /// For an SLO search: the highest rate found meeting the objective.
    pub slo_rate: Option<f64>,
    /// The run's verdict (a sweep's is N/A if any point is).
    pub verdict: Option<Verdict>,
}

/// The coordinating host.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Machine {
    /// Its name.
    pub hostname: String,
    /// `uname -r`.
    pub kernel: String,
    /// CPUs online.
    pub cpus: usize,
    /// The vernier version.
    pub vernier: String,
    /// How idle cores waited at the start of the run (a virtual machine's halt polling
    /// decides what a sleeping server's wake-up costs).
    #[serde(default)]
    pub idle: vernier_agent::sys::IdleState,
}

/// The binary's version with its commit (`0.1.0 (abc1234)`), when the binary said it
/// ([`set_version`]): records and `vernier validate`'s page then name the build.
static VERSION: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// Sets the version records name (the binary's, with its commit, which only its `main.rs`
/// reads, so that a new commit relinks the binary rather than rebuilding the library).
/// The first call wins.
pub fn set_version(version: &str) {
    let _ = VERSION.set(version.to_string());
}

impl Machine {
    /// This host.
    pub fn this() -> Machine {
        let read = |p: &str| {
            fs::read_to_string(p)
                .map(|s| s.trim().to_string())
                .unwrap_or_default()
        };
        Machine {
            hostname: read("/proc/sys/kernel/hostname"),
            kernel: read("/proc/sys/kernel/osrelease"),
            cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
            vernier: VERSION
                .get()
                .cloned()
                .unwrap_or_else(|| env!("CARGO_PKG_VERSION").to_string()),
            idle: vernier_agent::sys::IdleState::read(),
        }
    }
}

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
        self.record.events.push(event.clone());
        self.dirty = true;
        if let crate::coordinator::EventKind::Verdict(result) = &event.kind {
            let mut result = (**result).clone();
            result.record = Some(self.dir.display().to_string());
            self.record.points.push(result);
            return self.flush();
        }
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

/// Reads a run directory's run.json.
pub fn read_record(dir: &Path) -> Result<RunRecord, Error> {
    let path = dir.join("run.json");
    let text = fs::read_to_string(&path).map_err(|source| Error::Io {
        path: path.clone(),
        source,
    })?;
    let not_a_record = |e: serde_json::Error| {
        Error::input(
            &path,
            Some(e.line()),
            format!("not a vernier run record: {e}"),
        )
    };
    let mut value: serde_json::Value = serde_json::from_str(&text).map_err(not_a_record)?;
    let format = value
        .get("format")
        .and_then(|f| f.as_str())
        .map(str::to_string);
    let first = format.as_deref() == Some(FORMAT_1);
    if first {
        every_request_verdict_of_format_1(&mut value);
    }
    let roleless = checks_without_role(&value);
    let mut record: RunRecord = serde_json::from_value(value)
        .map_err(|e| Error::input(&path, None, format!("not a vernier run record: {e}")))?;
    if first {
        record.format = FORMAT.to_string();
        settle_answers(&mut record);
    } else if record.format != FORMAT {
        return Err(Error::input(
            &path,
            None,
            format!(
                "format {:?}: this vernier reads {FORMAT:?} and {FORMAT_1:?}",
                record.format
            ),
        ));
    }
    infer_check_roles(&mut record, &roleless);
    Ok(record)
}

/// The events of a record's JSON that are checks written before checks carried their role
/// (format 1 only: from format 2 on every check has one), by index.
fn checks_without_role(value: &serde_json::Value) -> Vec<usize> {
    let events = value.get("events").and_then(|e| e.as_array());
    (events.into_iter().flatten().enumerate())
        .filter(|(_, e)| e.get("kind").and_then(|k| k.as_str()) == Some("check"))
        .filter(|(_, e)| e.get("role").is_none())
        .map(|(i, _)| i)
        .collect()
}

/// A format-1 record's points (every object with a point's `target_percentile` and
/// `percentiles`, wherever it sits: the points, the verdict events, a replicated point's
/// runs) wrote every request's verdict as `verdict`: it becomes `every_request`, and the
/// answer is worked out once the record is read ([`settle_answers`]).
fn every_request_verdict_of_format_1(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::Object(map) => {
            let a_point = map.contains_key("target_percentile") && map.contains_key("percentiles");
            if a_point
                && !map.contains_key("every_request")
                && let Some(verdict) = map.get("verdict").cloned()
            {
                map.insert("every_request".into(), verdict);
            }
            for v in map.values_mut() {
                every_request_verdict_of_format_1(v);
            }
        }
        serde_json::Value::Array(items) => {
            items.iter_mut().for_each(every_request_verdict_of_format_1)
        }
        _ => {}
    }
}

/// Works out every point's answer from its verdicts ([`PointResult::settle_answer`]): the
/// points, the verdict and run events, and a replicated point's runs.
fn settle_answers(record: &mut RunRecord) {
    fn settle(point: &mut PointResult) {
        if let Some(replication) = &mut point.replication {
            replication.runs.iter_mut().for_each(settle);
        }
        point.settle_answer();
    }
    record.points.iter_mut().for_each(settle);
    for event in &mut record.events {
        if let EventKind::Verdict(point) | EventKind::Run(point) = &mut event.kind {
            settle(point);
        }
    }
}

/// Gives each check of `record` at the event indices `roleless` the role its scenario gives
/// it ([`CheckRole::of`]); a record whose scenario no longer reads keeps them as read
/// (gates).
fn infer_check_roles(record: &mut RunRecord, roleless: &[usize]) {
    if roleless.is_empty() {
        return;
    }
    let Ok(scenario) = Scenario::from_yaml(&record.scenario, None, &[]) else {
        return;
    };
    for &i in roleless {
        if let Some(EventKind::Check(check)) = record.events.get_mut(i).map(|e| &mut e.kind) {
            check.role =
                CheckRole::of(check.check, scenario.method, scenario.interarrival_enforced);
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use std::path::Path;

    use serde_json::Value;

    use super::*;
    use crate::coordinator::Verdict;
    use crate::scenario::Tail;

    fn demo_sweep() -> (String, Value) {
        let path =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/runs/demo-sweep/run.json");
        let text = fs::read_to_string(path).unwrap();
        let value = serde_json::from_str(&text).unwrap();
        (text, value)
    }

    /// A record of format 1 wrote every request's verdict as a point's `verdict`: read
    /// today, that is `every_request` (`PointResult::verdict`), and the answer is worked
    /// out from it and the tail asked, in the points and in the verdict events alike.
    #[test]
    fn a_format_1_record_reads_every_request_s_verdict_and_works_out_the_answer() {
        let (text, value) = demo_sweep();
        assert_eq!(value["format"], FORMAT_1);
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("run.json"), &text).unwrap();
        let record = read_record(dir.path()).unwrap();
        assert_eq!(record.format, FORMAT);
        assert_eq!(
            record.points.len(),
            value["points"].as_array().unwrap().len()
        );
        for (point, written) in record
            .points
            .iter()
            .zip(value["points"].as_array().unwrap())
        {
            let verdict: Verdict = serde_json::from_value(written["verdict"].clone()).unwrap();
            assert_eq!(point.verdict, verdict);
            // The demo's record predates the tail asked: every request's is the answer.
            assert_eq!(point.tail, Tail::WithStalls);
            assert_eq!(point.answer(), verdict);
        }

        // The same point asked for the tail without stalls, which converged while every
        // request's did not: the answer is the tail without stalls'.
        let mut asked = value.clone();
        let point = &mut asked["points"][0];
        point["tail"] = "without_stalls".into();
        point["verdict"] = "n/a".into();
        point["without_stalls"] = serde_json::json!({
            "verdict": "converged",
            "percentiles": [],
            "ci_width_us": 1.0,
            "touched_share": 0.01,
            "touched_by_agent": [0.01],
            "samples": 1000,
            "stalls": 3,
            "probed": "client_and_target",
        });
        fs::write(dir.path().join("run.json"), asked.to_string()).unwrap();
        let record = read_record(dir.path()).unwrap();
        assert_eq!(record.points[0].verdict, Verdict::NotAvailable);
        assert_eq!(record.points[0].answer(), Verdict::Converged);
    }

    /// Today's records write the answer as `verdict` and every request's as
    /// `every_request`, and read back the same.
    #[test]
    fn a_record_writes_the_answer_as_verdict_and_reads_back_the_same() {
        let dir = tempfile::tempdir().unwrap();
        let (text, _) = demo_sweep();
        fs::write(dir.path().join("run.json"), &text).unwrap();
        let mut record = read_record(dir.path()).unwrap();
        let point = &mut record.points[0];
        point.verdict = Verdict::Wide;
        point.tail = Tail::WithStalls;
        point.settle_answer();
        let written = serde_json::to_value(&record).unwrap();
        assert_eq!(written["format"], FORMAT);
        assert_eq!(written["points"][0]["verdict"], "wide");
        assert_eq!(written["points"][0]["every_request"], "wide");
        fs::write(dir.path().join("run.json"), written.to_string()).unwrap();
        let back = read_record(dir.path()).unwrap();
        assert_eq!(back.points[0].verdict, Verdict::Wide);
        assert_eq!(back.points[0].answer(), Verdict::Wide);
        let again = serde_json::to_value(&back).unwrap();
        assert_eq!(
            again["points"][1]["verdict"],
            written["points"][1]["verdict"]
        );
        assert_eq!(
            again["points"][1]["every_request"],
            written["points"][1]["every_request"]
        );
    }

    /// A check written before checks carried their role gets the one its scenario gives it
    /// (the demo's inter-arrival test, under `method: vernier`, is only reported); one that
    /// says its role keeps it, whatever the others say.
    #[test]
    fn a_check_without_its_role_gets_its_scenario_s_and_one_with_a_role_keeps_it() {
        let (_, mut value) = demo_sweep();
        let events = value["events"].as_array_mut().unwrap();
        let interarrival: Vec<usize> = (events.iter().enumerate())
            .filter(|(_, e)| e["kind"] == "check" && e["check"] == "interarrival")
            .map(|(i, _)| i)
            .collect();
        events[interarrival[0]]["role"] = "gate".into();
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("run.json"), value.to_string()).unwrap();
        let record = read_record(dir.path()).unwrap();
        let role = |i: usize| match &record.events[i].kind {
            EventKind::Check(c) => c.role,
            other => panic!("{other:?}"),
        };
        assert_eq!(role(interarrival[0]), CheckRole::Gate);
        for &i in &interarrival[1..] {
            assert_eq!(role(i), CheckRole::Report);
        }
    }
}
