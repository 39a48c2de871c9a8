//! A stalls file (`vernier analyze --stalls FILE`, a record's `stalls.csv`): a CSV whose
//! header names `start_ns` and `end_ns` (nanoseconds in the clock of the samples' send
//! column), and optionally `core`. Rows are sorted by start and do not overlap (on one
//! core, when a `core` column says which); anything else is an error naming the file and
//! the line.
//!
//! A record's `stalls.csv` also names each row's `source`, `agent` and `point`: its rows
//! come from several probes (a core's host probe and its spinning worker see the same
//! stall, each in its own order), so each probe's rows are checked on their own. Its
//! clock is its agent's in its point (an engine's clock restarts with each point), so a
//! file of several agents or points is refused: its stalls cannot be laid on one send
//! column.

use std::collections::HashMap;
use std::fs::File;
use std::path::Path;

use vernier_stats::Stall;

use super::parse::{number, open};
use crate::error::Error;

/// A probe's or a spin's stall as the statistics mark requests with it, in ns on its
/// samples' clock.
pub(crate) fn stall_of(s: &vernier_agent::StallInterval) -> Stall {
    Stall {
        start: s.start_ns as f64,
        end: s.end_ns as f64,
    }
}

/// The stalls of `path`, checked (see the module's documentation).
pub fn read_stalls(path: &Path) -> Result<Vec<Stall>, Error> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .from_reader(open(path)?);
    let columns = columns(path, &mut reader)?;
    // The first row's (agent, point): every row's must be the same.
    let mut clock_of_first: Option<Vec<String>> = None;
    // The last stall's end per core and probe (one key for all when no core column).
    let mut last: HashMap<(String, String), (f64, f64)> = HashMap::new();
    let mut stalls = Vec::new();
    for record in reader.records() {
        let record = record.map_err(|e| {
            let line = e.position().map(|p| p.line() as usize);
            Error::input(path, line, format!("malformed CSV: {e}"))
        })?;
        let row = Row {
            path,
            line: record.position().map_or(0, |p| p.line() as usize),
            record: &record,
            columns: &columns,
        };
        let (s, e) = row.times()?;
        let key = (row.text(columns.core)?, row.text(columns.probe)?);
        let this_clock = row.clock()?;
        let first = clock_of_first.get_or_insert_with(|| this_clock.clone());
        if *first != this_clock {
            return Err(row.error(
                "another agent or point than the rows above (agent, point): each agent's clock \
                 starts again with each point, so the stalls of several cannot be laid on one \
                 send column; give the stalls and the samples of one agent in one point"
                    .to_string(),
            ));
        }
        if let Some(&above) = last.get(&key) {
            row.follows(&key, above, s)?;
        }
        last.insert(key, (s, e));
        stalls.push(Stall { start: s, end: e });
    }
    Ok(stalls)
}

/// Where a stalls file's columns are, by its header's names.
struct Columns {
    /// The header's names, trimmed.
    headers: Vec<String>,
    /// `start_ns`.
    start: usize,
    /// `end_ns`.
    end: usize,
    /// `core`, if there is one.
    core: Option<usize>,
    /// A record's own columns: which probe saw a row (`source`)...
    probe: Option<usize>,
    /// ...and whose clock it is on (`agent` and `point`).
    clock: [Option<usize>; 2],
}

/// Reads the header of `path` and finds its columns: `start_ns` and `end_ns` are required.
fn columns(path: &Path, reader: &mut csv::Reader<File>) -> Result<Columns, Error> {
    let headers: Vec<String> = reader
        .headers()
        .map_err(|e| Error::input(path, Some(1), format!("cannot read the header: {e}")))?
        .iter()
        .map(|h| h.trim().to_string())
        .collect();
    let find = |name: &str| headers.iter().position(|h| h == name);
    let (Some(start), Some(end)) = (find("start_ns"), find("end_ns")) else {
        return Err(Error::input(
            path,
            Some(1),
            format!("the header must name start_ns and end_ns (it has {headers:?})"),
        ));
    };
    let core = find("core");
    let probe = find("source");
    let clock = [find("agent"), find("point")];
    Ok(Columns {
        headers,
        start,
        end,
        core,
        probe,
        clock,
    })
}

/// One row of a stalls file, with where it is for its errors.
struct Row<'a> {
    path: &'a Path,
    line: usize,
    record: &'a csv::StringRecord,
    columns: &'a Columns,
}

impl Row<'_> {
    /// An error at this row.
    fn error(&self, message: String) -> Error {
        Error::input(self.path, Some(self.line), message)
    }

    /// The field in column `i`, which the row must have.
    fn field(&self, i: usize) -> Result<&str, Error> {
        self.record
            .get(i)
            .ok_or_else(|| self.error(format!("the row has no {:?}", self.columns.headers[i])))
    }

    /// The trimmed text of an optional column: empty when the file has no such column.
    fn text(&self, column: Option<usize>) -> Result<String, Error> {
        Ok(match column {
            Some(i) => self.field(i)?.trim().to_string(),
            None => String::new(),
        })
    }

    /// The stall's start and end, ns: not negative, and the end not before the start.
    fn times(&self) -> Result<(f64, f64), Error> {
        let (path, line) = (self.path, self.line);
        let (s, e) = (
            number(path, line, self.field(self.columns.start)?)?,
            number(path, line, self.field(self.columns.end)?)?,
        );
        if s < 0.0 || e < 0.0 {
            return Err(self.error(format!(
                "a negative time ({s}, {e}): start_ns and end_ns are times in the samples' clock"
            )));
        }
        if e < s {
            return Err(self.error(format!("ends ({e}) before it starts ({s})")));
        }
        Ok((s, e))
    }

    /// Whose clock the row is on: its agent and point, each empty without its column.
    fn clock(&self) -> Result<Vec<String>, Error> {
        self.columns
            .clock
            .iter()
            .map(|&c| self.text(c))
            .collect::<Result<Vec<_>, _>>()
    }

    /// Checks that the stall starting at `s` comes after the stall above it of the same
    /// core and probe (`key`), which started and ended at `above`: sorted, and not
    /// overlapping it.
    fn follows(&self, key: &(String, String), above: (f64, f64), s: f64) -> Result<(), Error> {
        let (ps, pe) = above;
        let on = match (key.0.is_empty(), key.1.is_empty()) {
            (true, true) => String::new(),
            (false, true) => format!(" on core {}", key.0),
            (true, false) => format!(" from the {}", key.1),
            (false, false) => format!(" on core {} from the {}", key.0, key.1),
        };
        if s < ps {
            return Err(self.error(format!(
                "not sorted: starts at {s}, before the stall above{on} ({ps})"
            )));
        }
        if s < pe {
            return Err(self.error(format!(
                "overlaps the stall above{on} (which ends at {pe}, after this one starts at {s})"
            )));
        }
        Ok(())
    }
}

/// Checks that the `stalls` of `path` are in the clock of the requests sent at `send`:
/// some request's span (send to reply) meets the stalls' span.
pub fn check_clock(
    path: &Path,
    stalls: &[Stall],
    send: &[f64],
    latency: &[f64],
) -> Result<(), Error> {
    let (Some(first), Some(last)) = (
        stalls.iter().map(|s| s.start).reduce(f64::min),
        stalls.iter().map(|s| s.end).reduce(f64::max),
    ) else {
        return Ok(());
    };
    let from = send.iter().copied().reduce(f64::min).unwrap_or(f64::NAN);
    let to = send
        .iter()
        .zip(latency)
        .map(|(s, l)| s + l)
        .reduce(f64::max)
        .unwrap_or(f64::NAN);
    if first <= to && last >= from {
        return Ok(());
    }
    Err(Error::input(
        path,
        None,
        format!(
            "no sample within the stalls' span ({first:.0} to {last:.0} ns; the samples run from {from:.0} to {to:.0} ns): \
             are the stalls in the send column's clock?"
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(text: &str) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("stalls.csv");
        std::fs::write(&path, text).unwrap();
        (dir, path)
    }

    fn error(text: &str) -> String {
        let (_dir, path) = file(text);
        read_stalls(&path).unwrap_err().to_string()
    }

    #[test]
    fn reads_stalls_and_allows_overlap_across_cores() {
        let (_dir, path) =
            file("start_ns,end_ns,core,source\n10,20,0,host\n15,30,1,host\n25,40,0,spin\n");
        let stalls = read_stalls(&path).unwrap();
        assert_eq!(stalls.len(), 3);
        assert_eq!(
            stalls[1],
            Stall {
                start: 15.0,
                end: 30.0
            }
        );
    }

    #[test]
    fn a_records_rows_are_checked_per_probe_and_on_one_clock() {
        // A core's host probe and its spinning worker see one stall, each in its order.
        let (_dir, path) = file(
            "start_ns,end_ns,core,source,agent,point\n\
             300,900,1,spin,0,0\n100,1000,1,probe,0,0\n1200,1300,1,probe,0,0\n",
        );
        assert_eq!(read_stalls(&path).unwrap().len(), 3);
        let e = error(
            "start_ns,end_ns,core,source,agent,point\n100,200,1,probe,0,0\n50,80,1,probe,0,1\n",
        );
        assert!(
            e.contains("stalls.csv:3") && e.contains("another agent or point"),
            "{e}"
        );
        let e = error("start_ns,end_ns,core,source\n100,200,1,probe\n150,300,1,probe\n");
        assert!(
            e.contains("stalls.csv:3") && e.contains("on core 1 from the probe"),
            "{e}"
        );
    }

    #[test]
    fn bad_files_name_the_line() {
        let e = error("start_ns,end_ns\n10,20\n5,8\n");
        assert!(
            e.contains("stalls.csv:3") && e.contains("not sorted"),
            "{e}"
        );
        let e = error("start_ns,end_ns\n10,20\n15,30\n");
        assert!(e.contains("stalls.csv:3") && e.contains("overlaps"), "{e}");
        let e = error("start_ns,end_ns\n-10,20\n");
        assert!(e.contains("stalls.csv:2") && e.contains("negative"), "{e}");
        let e = error("start_ns,end_ns\n30,20\n");
        assert!(
            e.contains("stalls.csv:2") && e.contains("before it starts"),
            "{e}"
        );
        let e = error("begin,finish\n1,2\n");
        assert!(
            e.contains("stalls.csv:1") && e.contains("start_ns and end_ns"),
            "{e}"
        );
        let e = error("start_ns,end_ns\n1,x\n");
        assert!(
            e.contains("stalls.csv:2") && e.contains("not a number"),
            "{e}"
        );
        let e = read_stalls(Path::new("/nonexistent/stalls.csv"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("/nonexistent/stalls.csv") && e.contains("cannot open"),
            "{e}"
        );
    }

    #[test]
    fn stalls_in_another_clock_are_refused() {
        let (_dir, path) = file("start_ns,end_ns\n1,2\n");
        let stalls = [Stall {
            start: 1e15,
            end: 1e15 + 5.0,
        }];
        let e = check_clock(&path, &stalls, &[0.0, 100.0], &[5.0, 5.0])
            .unwrap_err()
            .to_string();
        assert!(e.contains("send column's clock"), "{e}");
        let near = [Stall {
            start: 50.0,
            end: 60.0,
        }];
        assert!(check_clock(&path, &near, &[0.0, 100.0], &[5.0, 5.0]).is_ok());
    }
}
