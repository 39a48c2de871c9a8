//! `stalls.csv`: every stall the run's probes saw, one interval a line, on the clock of
//! the samples' `departure_ns` (ns since the agent's engine started, so each row names
//! its agent), written beside `samples.parquet` as the run goes (appended at each flush:
//! a killed run loses at most its last second).
//!
//! ```text
//! start_ns,end_ns,core,source,agent,point
//! 1520331,4870112,1,probe,0,0
//! 2000040,2213417,1,spin,0,0
//! ```
//!
//! `core` is empty for an unpinned probe (the coordinator's thread); `source` is `probe`
//! (a host probe's late wake-up: from the deadline it was due at, the stall having begun
//! up to a period, 1 ms, before; every request it held was in flight then) or `spin`
//! (a spinning worker's long poll: both ends known to the µs); `point` is the load point
//! during which the interval reached the coordinator (the record's `point` column: a
//! replicated point's runs restart the agents' clocks, so a row's clock is its point's
//! and agent's). The first two columns are what `vernier analyze --stalls` reads.

use std::fs;
use std::io::Write;
use std::path::Path;

use vernier_agent::{StallInterval, StallLog, StallSource};

use crate::error::Error;

/// The file's name in a run directory.
pub const STALLS_FILE: &str = "stalls.csv";

/// Its header line.
pub const STALLS_HEADER: &str = "start_ns,end_ns,core,source,agent,point";

/// One line of `stalls.csv`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordedStall {
    /// The interval, on its agent's samples' clock.
    pub interval: StallInterval,
    /// The agent whose clock it is on.
    pub agent: u32,
    /// The load point it arrived in.
    pub point: u32,
}

/// The lines waiting for the next flush.
#[derive(Debug, Default)]
pub(super) struct StallRows {
    text: String,
}

impl StallRows {
    /// Writes the file with its header alone, in `dir`.
    pub(super) fn create(dir: &Path) -> Result<(), Error> {
        let path = dir.join(STALLS_FILE);
        fs::write(&path, format!("{STALLS_HEADER}\n")).map_err(|source| Error::Io { path, source })
    }

    /// Buffers `stalls` of `agent`, which arrived during `point`.
    pub(super) fn push(&mut self, agent: u32, point: u32, stalls: &StallLog) {
        for s in &stalls.intervals {
            let core = s.core.map_or(String::new(), |c| c.to_string());
            self.text.push_str(&format!(
                "{},{},{core},{},{agent},{point}\n",
                s.start_ns,
                s.end_ns,
                s.source.name()
            ));
        }
    }

    /// Appends the buffered lines to the file in `dir`.
    pub(super) fn flush(&mut self, dir: &Path) -> Result<(), Error> {
        if self.text.is_empty() {
            return Ok(());
        }
        let path = dir.join(STALLS_FILE);
        let io = |source| Error::Io {
            path: path.clone(),
            source,
        };
        let mut file = fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .map_err(io)?;
        file.write_all(self.text.as_bytes()).map_err(io)?;
        self.text.clear();
        Ok(())
    }
}

/// Reads a record's `stalls.csv` (the file at `path`): every line, or an error naming the
/// file, the line and what was wrong with it.
pub fn read_stalls(path: &Path) -> Result<Vec<RecordedStall>, Error> {
    let text = fs::read_to_string(path).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let mut lines = text.lines();
    if lines.next() != Some(STALLS_HEADER) {
        return Err(Error::input(
            path,
            Some(1),
            format!("not a record's stalls: the header must be {STALLS_HEADER}"),
        ));
    }
    lines
        .enumerate()
        .filter(|(_, line)| !line.is_empty())
        .map(|(i, line)| parse_line(line).map_err(|m| Error::input(path, Some(i + 2), m)))
        .collect()
}

/// One line's fields, or what was wrong with them.
fn parse_line(line: &str) -> Result<RecordedStall, String> {
    let fields: Vec<&str> = line.split(',').collect();
    let [start, end, core, source, agent, point] = fields[..] else {
        return Err(format!("{} fields, expected 6: {line:?}", fields.len()));
    };
    let number = |name: &str, v: &str| {
        v.parse::<u64>()
            .map_err(|_| format!("{name} {v:?} is not a whole number of ns"))
    };
    let (start_ns, end_ns) = (number("start_ns", start)?, number("end_ns", end)?);
    if end_ns < start_ns {
        return Err(format!("end_ns {end_ns} is before start_ns {start_ns}"));
    }
    let small = |name: &str, v: &str| {
        v.parse::<u32>()
            .map_err(|_| format!("{name} {v:?} is not a whole number"))
    };
    Ok(RecordedStall {
        interval: StallInterval {
            start_ns,
            end_ns,
            core: if core.is_empty() {
                None
            } else {
                Some(small("core", core)?)
            },
            source: StallSource::from_name(source)
                .ok_or_else(|| format!("source {source:?} is neither probe nor spin"))?,
        },
        agent: small("agent", agent)?,
        point: small("point", point)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log() -> StallLog {
        StallLog {
            intervals: vec![
                StallInterval {
                    start_ns: 1_520_331,
                    end_ns: 4_870_112,
                    core: Some(1),
                    source: StallSource::Probe,
                },
                StallInterval {
                    start_ns: 2_000_040,
                    end_ns: 2_213_417,
                    core: None,
                    source: StallSource::Spin,
                },
            ],
            dropped: 0,
        }
    }

    #[test]
    fn written_then_read_back() {
        let dir = tempfile::tempdir().unwrap();
        StallRows::create(dir.path()).unwrap();
        let mut rows = StallRows::default();
        rows.push(0, 0, &log());
        rows.flush(dir.path()).unwrap();
        rows.push(2, 1, &log());
        rows.flush(dir.path()).unwrap();
        rows.flush(dir.path()).unwrap();
        let path = dir.path().join(STALLS_FILE);
        let text = fs::read_to_string(&path).unwrap();
        assert_eq!(
            text.lines().take(3).collect::<Vec<_>>(),
            [
                STALLS_HEADER,
                "1520331,4870112,1,probe,0,0",
                "2000040,2213417,,spin,0,0"
            ]
        );
        let back = read_stalls(&path).unwrap();
        assert_eq!(back.len(), 4);
        assert_eq!(
            back.iter().map(|r| r.interval).collect::<Vec<_>>(),
            [log().intervals, log().intervals].concat()
        );
        assert_eq!(
            back.iter().map(|r| (r.agent, r.point)).collect::<Vec<_>>(),
            [(0, 0), (0, 0), (2, 1), (2, 1)]
        );
    }

    #[test]
    fn a_bad_line_is_an_error_naming_the_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(STALLS_FILE);
        let cases = [
            ("start_ns,end_ns\n", "1: not a record's stalls"),
            (
                "start_ns,end_ns,core,source,agent,point\n1,2,,probe,0,0\n5,4,,probe,0,0\n",
                "3: end_ns 4 is before start_ns 5",
            ),
            (
                "start_ns,end_ns,core,source,agent,point\n1,2,,nap,0,0\n",
                "2: source \"nap\" is neither probe nor spin",
            ),
            (
                "start_ns,end_ns,core,source,agent,point\n1,2,x,probe,0,0\n",
                "2: core \"x\" is not a whole number",
            ),
            (
                "start_ns,end_ns,core,source,agent,point\n1,2,probe\n",
                "2: 3 fields, expected 6",
            ),
        ];
        for (text, expected) in cases {
            fs::write(&path, text).unwrap();
            let e = read_stalls(&path).unwrap_err().to_string();
            let want = format!("{}:{expected}", path.display());
            assert!(e.starts_with(&want), "{e}\nwanted {want}");
        }
    }
}
