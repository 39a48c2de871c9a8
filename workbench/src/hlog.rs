//! HdrHistogram interval logs (`.hlog`), the format wrk2, memtier_benchmark and
//! HdrHistogram's own tools speak, through the `hdrhistogram` crate's interval-log support.
//!
//! A record keeps one log per load point, `point-NNN.hlog`: one interval per agent worker
//! and record flush (about a second; a point's or round's change starts a new one), holding
//! the latency of *every* request completed in it, in
//! nanoseconds (the samples in `samples.parquet` may be a systematic 1-in-k of them), tagged
//! `point<P>/round<R>/agent<A>/worker<W>` (round 0 is the warm-up; a point's result says
//! which round its answer used). Interval timestamps are seconds since the agent's engine
//! started, against the log's `BaseTime`, when the record was created.
//!
//! Reading one back gives percentiles only: a histogram keeps how many requests fell in
//! each value bucket, not the requests in the order they were sent, which the confidence
//! intervals and the independence and stationarity tests need.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use hdrhistogram::Histogram;
use hdrhistogram::serialization::V2DeflateSerializer;
use hdrhistogram::serialization::interval_log::{
    IntervalLogIterator, IntervalLogWriterBuilder, LogEntry, Tag,
};
use serde::Serialize;

use crate::error::Error;
use vernier_agent::Recorded;

/// A point's log file name in a record.
pub fn file_name(point: usize) -> String {
    format!("point-{point:03}.hlog")
}

/// Where a worker's report came from: which point, round, agent and worker. A record
/// files each interval (and each sample) under it, and an interval's tag spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Origin {
    /// The load point, counted from 0 in the order the run measured them.
    pub point: usize,
    /// The round of that point the coordinator counted the report in (0: the warm-up).
    pub round: u32,
    /// The agent, by its index in the run's list.
    pub agent: usize,
    /// The worker thread on that agent.
    pub worker: u32,
}

impl Origin {
    /// The interval's tag, `point<P>/round<R>/agent<A>/worker<W>`, by which `vernier
    /// analyze --tag` picks intervals out.
    pub fn tag(&self) -> String {
        let Origin {
            point,
            round,
            agent,
            worker,
        } = self;
        format!("point{point}/round{round}/agent{agent}/worker{worker}")
    }
}

/// Writes the interval logs of one record as batches come.
pub struct HlogWriter {
    dir: PathBuf,
    base: SystemTime,
    files: HashMap<usize, BufWriter<File>>,
    /// Where each worker's previous interval ended, since its engine started.
    last_end: HashMap<(usize, u32), Duration>,
    /// Each worker's reports since the last flush, gathered into one interval: a report
    /// (every 20 ms) serialized on its own cost about 0.1 ms (the compressor's state
    /// reset and a walk of every counter), half the coordinator's work at a light load.
    pending: HashMap<(usize, u32), Pending>,
    serializer: V2DeflateSerializer,
}

/// A worker's interval being gathered: from where, over what time, and its latencies.
struct Pending {
    origin: Origin,
    start: Duration,
    end: Duration,
    latency: Histogram<u64>,
}

impl std::fmt::Debug for HlogWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HlogWriter")
            .field("dir", &self.dir)
            .field("points", &self.files.len())
            .finish_non_exhaustive()
    }
}

impl HlogWriter {
    /// Logs go in `dir`, their timestamps counted from `base`.
    pub fn new(dir: &Path, base: SystemTime) -> HlogWriter {
        HlogWriter {
            dir: dir.to_path_buf(),
            base,
            files: HashMap::new(),
            last_end: HashMap::new(),
            pending: HashMap::new(),
            serializer: V2DeflateSerializer::new(),
        }
    }

    /// Adds one worker's report: `latency` (ns) of the requests completed between its
    /// previous report and `end` (since its engine started), to the worker's interval,
    /// written at the next [`flush`](HlogWriter::flush) or when the point or round
    /// changes. An empty report adds nothing.
    pub fn interval(
        &mut self,
        origin: Origin,
        end: Duration,
        latency: Recorded<'_>,
    ) -> Result<(), Error> {
        let key = (origin.agent, origin.worker);
        let start = self
            .last_end
            .insert(key, end)
            .filter(|&s| s <= end)
            .unwrap_or(end);
        // Another point's or round's, or from before its engine started again.
        if self
            .pending
            .get(&key)
            .is_some_and(|p| p.origin != origin || start < p.end)
        {
            self.write_pending(key)?;
        }
        if latency.is_empty() {
            return Ok(());
        }
        let pending = self.pending.entry(key).or_insert_with(|| Pending {
            origin,
            start,
            end,
            latency: vernier_agent::histogram(),
        });
        pending.end = end;
        latency.add_to(&mut pending.latency);
        Ok(())
    }

    /// Writes the interval gathered for `key` (agent, worker), if any.
    fn write_pending(&mut self, key: (usize, u32)) -> Result<(), Error> {
        match self.pending.remove(&key) {
            Some(p) => self.write(p.origin, p.start, p.end, &p.latency),
            None => Ok(()),
        }
    }

    /// Appends one interval to its point's log.
    fn write(
        &mut self,
        origin: Origin,
        start: Duration,
        end: Duration,
        latency: &Histogram<u64>,
    ) -> Result<(), Error> {
        let point = origin.point;
        let path = self.dir.join(file_name(point));
        let io = |source| Error::Io {
            path: path.clone(),
            source,
        };
        let file = match self.files.entry(point) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(e) => {
                let mut file = BufWriter::new(
                    OpenOptions::new()
                        .create(true)
                        .append(true)
                        .open(&path)
                        .map_err(io)?,
                );
                // The header: what the values are, and the time base.
                IntervalLogWriterBuilder::new()
                    .add_comment(&format!(
                        "vernier: point {point}, latency of every request in ns, one interval per worker and second; tags point/round/agent/worker (round 0 is the warm-up)"
                    ))
                    .with_base_time(self.base)
                    .with_start_time(self.base)
                    .begin_log_with(&mut file, &mut self.serializer)
                    .map_err(io)?;
                e.insert(file)
            }
        };
        let text = origin.tag();
        // A builder with nothing set writes no header: only the interval goes on.
        let mut log = IntervalLogWriterBuilder::new()
            .begin_log_with(file, &mut self.serializer)
            .map_err(io)?;
        log.write_histogram(latency, start, end - start, Tag::new(&text))
            .map_err(|e| Error::Failed(format!("{}: {e}", path.display())))
    }

    /// Writes the intervals gathered, and out what is buffered.
    pub fn flush(&mut self) -> Result<(), Error> {
        let mut keys: Vec<(usize, u32)> = self.pending.keys().copied().collect();
        keys.sort_unstable();
        for key in keys {
            self.write_pending(key)?;
        }
        for (point, file) in &mut self.files {
            file.flush().map_err(|source| Error::Io {
                path: self.dir.join(file_name(*point)),
                source,
            })?;
        }
        Ok(())
    }
}

/// What `vernier analyze` answers for an interval log.
#[derive(Debug, Serialize)]
pub struct HlogAnalysis {
    /// What was read, so that a reader of the JSON tells this answer from a samples
    /// file's, which has more in it.
    pub source: &'static str,
    /// The tag prefix the intervals were chosen by, if any.
    pub tag: Option<String>,
    /// How many intervals were merged: none would be an error, few a short log.
    pub intervals: usize,
    /// Requests in the merged intervals.
    pub count: u64,
    /// In the log's unit (vernier's logs: ns).
    pub min: u64,
    /// The largest value, in the log's unit (as the histogram keeps it: to its precision).
    pub max: u64,
    /// The mean, in the log's unit.
    pub mean: f64,
    /// The percentiles asked for, in the order asked.
    pub percentiles: Vec<HlogPercentile>,
    /// What an interval log cannot give, and why.
    pub not_computed: Vec<NotComputed>,
}

/// One percentile of the merged histogram: no confidence interval, which needs the
/// requests in the order they were sent.
#[derive(Debug, Serialize)]
pub struct HlogPercentile {
    /// As a fraction, as `vernier analyze` reports percentiles.
    pub p: f64,
    /// In the log's unit, to the histogram's precision (3 significant digits).
    pub value: u64,
}

/// A figure `vernier analyze` gives for a samples file but cannot for an interval log,
/// said in the answer so that its absence is not taken for a pass.
#[derive(Debug, Serialize)]
pub struct NotComputed {
    /// The figures left out.
    pub what: &'static str,
    /// What they need that a histogram does not keep.
    pub why: &'static str,
}

/// Reads the log at `path`, merging the intervals whose tag starts with `tag` (all when
/// `None`), and answers the `percentiles` (fractions) of the merged histogram. Errors name
/// the file and line.
pub fn analyze(path: &Path, tag: Option<&str>, percentiles: &[f64]) -> Result<HlogAnalysis, Error> {
    let bytes =
        std::fs::read(path).map_err(|e| Error::input(path, None, format!("cannot read: {e}")))?;
    let mut merged: Histogram<u64> =
        Histogram::new(3).map_err(|e| Error::Failed(format!("cannot make a histogram: {e}")))?;
    let mut intervals = 0;
    for (index, entry) in IntervalLogIterator::new(&bytes).enumerate() {
        let entry = entry.map_err(|e| {
            Error::input(
                path,
                None,
                format!(
                    "not an HdrHistogram interval log (entry {}): {e:?}",
                    index + 1
                ),
            )
        })?;
        let LogEntry::Interval(interval) = entry else {
            continue;
        };
        if let Some(prefix) = tag
            && !interval
                .tag()
                .is_some_and(|t| t.as_str().starts_with(prefix))
        {
            continue;
        }
        let bad =
            |what: String| Error::input(path, None, format!("interval {}: {what}", intervals + 1));
        use base64::Engine as _;
        let raw = base64::engine::general_purpose::STANDARD
            .decode(interval.encoded_histogram())
            .map_err(|e| bad(format!("not base64: {e}")))?;
        // Checked before hdrhistogram reads it: a few bytes claiming gigabytes would abort
        // the process.
        let h = vernier_agent::wire::read_histogram(&raw)
            .map_err(|e| bad(format!("not a histogram: {e}")))?;
        merged
            .add(&h)
            .map_err(|e| bad(format!("cannot be merged: {e:?}")))?;
        intervals += 1;
    }
    if intervals == 0 || merged.is_empty() {
        return Err(Error::input(
            path,
            None,
            match tag {
                Some(t) => format!("no interval with a tag starting {t:?} holds a value"),
                None => "no interval holds a value".to_string(),
            },
        ));
    }
    Ok(HlogAnalysis {
        source: "hdrhistogram interval log",
        tag: tag.map(String::from),
        intervals,
        count: merged.len(),
        min: merged.min(),
        max: merged.max(),
        mean: merged.mean(),
        percentiles: percentiles
            .iter()
            .map(|&p| HlogPercentile {
                p,
                value: merged.value_at_quantile(p),
            })
            .collect(),
        not_computed: vec![
            NotComputed {
                what: "confidence intervals of the percentiles",
                why: "a histogram keeps how many requests fell in each value bucket, not the requests in send order, which the order-statistic and dependence-valid intervals need",
            },
            NotComputed {
                what: "independence, stationarity and inter-arrival tests",
                why: "they test the series in send order, which a histogram does not keep",
            },
        ],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn histogram(values: &[u64]) -> Histogram<u64> {
        let mut h = Histogram::new(3).unwrap();
        for &v in values {
            h.record(v).unwrap();
        }
        h
    }

    #[test]
    fn a_written_log_reads_back_by_tag() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = HlogWriter::new(dir.path(), SystemTime::now());
        let ms = Duration::from_millis;
        let at = |round, worker| Origin {
            point: 0,
            round,
            agent: 0,
            worker,
        };
        w.interval(at(0, 0), ms(20), Recorded::whole(&histogram(&[1_000_000])))
            .unwrap();
        w.interval(
            at(1, 0),
            ms(40),
            Recorded::whole(&histogram(&[10_000, 20_000])),
        )
        .unwrap();
        w.interval(at(1, 1), ms(40), Recorded::whole(&histogram(&[30_000])))
            .unwrap();
        // Empty: skipped.
        w.interval(at(1, 1), ms(60), Recorded::whole(&histogram(&[])))
            .unwrap();
        w.flush().unwrap();
        let path = dir.path().join(file_name(0));
        let all = analyze(&path, None, &[0.5, 1.0]).unwrap();
        assert_eq!((all.intervals, all.count), (3, 4));
        assert_eq!(all.max, histogram(&[1_000_000]).max());
        let measured = analyze(&path, Some("point0/round1/"), &[0.5, 1.0]).unwrap();
        assert_eq!((measured.intervals, measured.count), (2, 3));
        assert!(
            histogram(&[20_000]).equivalent(measured.percentiles[0].value, 20_000),
            "{:?}",
            measured.percentiles
        );
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.contains("Tag=point0/round1/agent0/worker1,0.040,0.000,"),
            "{text}"
        );
        assert!(analyze(&path, Some("point1/"), &[0.5]).is_err());
    }

    #[test]
    fn a_workers_reports_gather_into_one_interval_until_the_flush() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = HlogWriter::new(dir.path(), SystemTime::now());
        let ms = Duration::from_millis;
        let at = Origin {
            point: 0,
            round: 1,
            agent: 0,
            worker: 0,
        };
        for (end, value) in [(20, 10_000), (40, 20_000), (60, 30_000)] {
            w.interval(at, ms(end), Recorded::whole(&histogram(&[value])))
                .unwrap();
        }
        w.flush().unwrap();
        w.interval(at, ms(80), Recorded::whole(&histogram(&[40_000])))
            .unwrap();
        // The engine started again (a replication's next run): its clock from zero.
        w.interval(at, ms(10), Recorded::whole(&histogram(&[50_000])))
            .unwrap();
        w.flush().unwrap();
        let path = dir.path().join(file_name(0));
        let all = analyze(&path, None, &[0.5]).unwrap();
        assert_eq!((all.intervals, all.count), (3, 5));
        let text = std::fs::read_to_string(&path).unwrap();
        let tag = "Tag=point0/round1/agent0/worker0";
        for span in [",0.020,0.040,", ",0.060,0.020,", ",0.010,0.000,"] {
            assert!(text.contains(&format!("{tag}{span}")), "{span}: {text}");
        }
    }

    #[test]
    fn garbage_is_an_error_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.hlog");
        std::fs::write(&path, "Tag=x,0.0,1.0,2.0,notbase64!!\n").unwrap();
        let err = analyze(&path, None, &[0.5]).unwrap_err().to_string();
        assert!(err.contains("bad.hlog"), "{err}");
        // A compressed histogram whose inner header claims 4 GB: an error, not an abort.
        let mut claim = Vec::new();
        use hdrhistogram::serialization::Serializer as _;
        hdrhistogram::serialization::V2Serializer::new()
            .serialize(&histogram(&[10_000]), &mut claim)
            .unwrap();
        claim[4..8].copy_from_slice(&u32::MAX.to_be_bytes());
        let mut packed = Vec::new();
        {
            use std::io::Write;
            let mut z =
                flate2::write::ZlibEncoder::new(&mut packed, flate2::Compression::default());
            z.write_all(&claim).unwrap();
            z.finish().unwrap();
        }
        let mut hostile = 0x1c84_9314u32.to_be_bytes().to_vec();
        hostile.extend_from_slice(&(packed.len() as u32).to_be_bytes());
        hostile.extend_from_slice(&packed);
        use base64::Engine as _;
        let line = format!(
            "Tag=x,0.000,1.000,1.0,{}\n",
            base64::engine::general_purpose::STANDARD.encode(&hostile)
        );
        std::fs::write(&path, line).unwrap();
        let err = analyze(&path, None, &[0.5]).unwrap_err().to_string();
        assert!(err.contains("bad.hlog") && err.contains("claimed"), "{err}");
        std::fs::write(&path, "#just a comment\n").unwrap();
        let err = analyze(&path, None, &[0.5]).unwrap_err().to_string();
        assert!(err.contains("no interval"), "{err}");
    }
}
