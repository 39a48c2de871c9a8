//! Reading latency samples, in send order, from the files users have: one number a line, or
//! columns split by blanks or commas chosen by number (as `mutilate --save` writes: send
//! time and latency), a CSV with a header, or Parquet (as vernier's own records and
//! pandas/polars write). HdrHistogram interval logs are histograms, not series: see
//! [`crate::hlog`].

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use crate::error::Error;

mod parse;
mod stalls;

use parse::{number, open};
pub(crate) use stalls::stall_of;
pub use stalls::{check_clock, read_stalls};

/// The layout of a samples file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// One number a line, or columns split by blanks or commas with `--column N` (blank
    /// lines and lines starting with `#` are skipped).
    Lines,
    /// Comma-separated with a header row; needs a column name.
    Csv,
    /// Apache Parquet; needs a column name.
    Parquet,
    /// An HdrHistogram interval log (wrk2, memtier, HdrHistogram's own tools, vernier's
    /// records): percentiles only, from the histograms.
    Hlog,
}

impl Format {
    /// The format a file's name implies: `.csv`, `.parquet`/`.pq`, else lines.
    pub fn from_path(path: &Path) -> Format {
        match path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase)
            .as_deref()
        {
            Some("csv") => Format::Csv,
            Some("parquet" | "pq") => Format::Parquet,
            Some("hlog") => Format::Hlog,
            _ => Format::Lines,
        }
    }
}

/// Where to read one series from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SampleSource {
    /// The file.
    pub path: PathBuf,
    /// Its layout.
    pub format: Format,
    /// The column: a name (CSV, Parquet) or a number from 1 (any layout but Parquet).
    pub column: Option<String>,
}

/// Reads the series, refusing anything that is not a finite number with an error naming
/// the file, the line (or row) and the value.
pub fn read_samples(source: &SampleSource) -> Result<Vec<f64>, Error> {
    let path = &source.path;
    let values = match (source.format, source.column.as_deref()) {
        (Format::Lines, None) => read_lines(path, None)?,
        (Format::Lines, Some(column)) => match column_number(column) {
            Some(n) => read_lines(path, Some(n))?,
            None => {
                return Err(Error::Usage(format!(
                    "{}: a file without a header has no column names: --column takes a number from 1, or name the file .csv or .parquet (or pass --format) to choose {column:?} by name",
                    path.display()
                )));
            }
        },
        (Format::Hlog, _) => {
            return Err(Error::Usage(format!(
                "{}: an HdrHistogram interval log holds histograms, not samples in send order",
                path.display()
            )));
        }
        (Format::Csv, column) => read_csv(path, column)?,
        (Format::Parquet, column) if path.is_dir() => read_parquet_parts(path, column)?,
        (Format::Parquet, column) => read_parquet(path, column)?,
    };
    if values.is_empty() {
        return Err(Error::input(path, None, "no samples in the file"));
    }
    Ok(values)
}

/// `--column`'s value as a column number from 1, if it is one.
fn column_number(column: &str) -> Option<usize> {
    column.trim().parse::<usize>().ok().filter(|&n| n >= 1)
}

/// One number a line, or with `column` (from 1) that field of lines split by blanks or
/// commas; a line with several fields and no column chosen is an error saying how to
/// choose.
fn read_lines(path: &Path, column: Option<usize>) -> Result<Vec<f64>, Error> {
    let reader = BufReader::new(open(path)?);
    let mut values = Vec::new();
    for (i, line) in reader.lines().enumerate() {
        let line =
            line.map_err(|e| Error::input(path, Some(i + 1), format!("cannot read: {e}")))?;
        let text = line.trim();
        if text.is_empty() || text.starts_with('#') {
            continue;
        }
        let mut fields = text
            .split(|c: char| c.is_whitespace() || c == ',')
            .filter(|f| !f.is_empty());
        let field = match column {
            None => {
                let count = fields.count();
                if count > 1 {
                    return Err(Error::input(
                        path,
                        Some(i + 1),
                        format!(
                            "{text:?} has {count} columns: choose one with --column N (from 1; `mutilate --save` writes send time and latency: --column 2)"
                        ),
                    ));
                }
                text
            }
            Some(n) => fields.nth(n - 1).ok_or_else(|| {
                Error::input(path, Some(i + 1), format!("{text:?} has no column {n}"))
            })?,
        };
        values.push(number(path, i + 1, field)?);
    }
    Ok(values)
}

fn missing_column(path: &Path, column: Option<&str>, available: &[String]) -> Error {
    let list = available.join(", ");
    match column {
        Some(c) => Error::input(path, None, format!("no column {c:?} (columns: {list})")),
        None => Error::Usage(format!(
            "{}: which column? pass --column NAME (columns: {list})",
            path.display()
        )),
    }
}

fn read_csv(path: &Path, column: Option<&str>) -> Result<Vec<f64>, Error> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .from_reader(open(path)?);
    let headers: Vec<String> = reader
        .headers()
        .map_err(|e| Error::input(path, Some(1), format!("cannot read the header: {e}")))?
        .iter()
        .map(|h| h.trim().to_string())
        .collect();
    let index = match column {
        Some(c) => headers.iter().position(|h| h == c).or_else(|| {
            column_number(c)
                .filter(|&n| n <= headers.len())
                .map(|n| n - 1)
        }),
        None if headers.len() == 1 => Some(0),
        None => None,
    }
    .ok_or_else(|| missing_column(path, column, &headers))?;
    let mut values = Vec::new();
    for record in reader.records() {
        let record = record.map_err(|e| {
            let line = e.position().map(|p| p.line() as usize);
            Error::input(path, line, format!("malformed CSV: {e}"))
        })?;
        let line = record.position().map_or(0, |p| p.line() as usize);
        let field = record.get(index).ok_or_else(|| {
            Error::input(
                path,
                Some(line),
                format!("the row has no field {} ({:?})", index + 1, headers[index]),
            )
        })?;
        values.push(number(path, line, field)?);
    }
    Ok(values)
}

/// A directory of Parquet parts, as a record's `samples.parquet` is: every `*.parquet` in
/// it, in name order (the order the record wrote them), one after another.
fn read_parquet_parts(dir: &Path, column: Option<&str>) -> Result<Vec<f64>, Error> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| Error::input(dir, None, format!("cannot list the directory: {e}")))?;
    let mut parts: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "parquet"))
        .collect();
    parts.sort();
    if parts.is_empty() {
        return Err(Error::input(
            dir,
            None,
            "a directory with no .parquet parts in it",
        ));
    }
    let mut values = Vec::new();
    for part in &parts {
        values.extend(read_parquet(part, column)?);
    }
    Ok(values)
}

fn read_parquet(path: &Path, column: Option<&str>) -> Result<Vec<f64>, Error> {
    use polars::prelude::{DataType, ParquetReader, PolarsError, SerReader};
    let bad =
        |e: PolarsError| Error::input(path, None, format!("not a readable Parquet file: {e}"));
    let mut reader = ParquetReader::new(open(path)?);
    let schema = reader.schema().map_err(bad)?;
    let names: Vec<String> = schema.iter_names().map(|n| n.to_string()).collect();
    let name = match column {
        Some(c) if names.iter().any(|n| n == c) => c.to_string(),
        None if names.len() == 1 => names[0].clone(),
        _ => return Err(missing_column(path, column, &names)),
    };
    let frame = ParquetReader::new(open(path)?)
        .with_columns(Some(vec![name.clone()]))
        .finish()
        .map_err(bad)?;
    let series = frame.column(&name).map_err(bad)?;
    let floats = series
        .cast(&DataType::Float64)
        .map_err(|e| Error::input(path, None, format!("column {name:?} is not numeric: {e}")))?;
    let floats = floats.f64().map_err(bad)?;
    floats
        .iter()
        .enumerate()
        .map(|(row, v)| match v {
            Some(v) if v.is_finite() => Ok(v),
            Some(v) => Err(Error::input(
                path,
                None,
                format!("row {} of {name:?}: {v} is not a finite number", row + 1),
            )),
            None => Err(Error::input(
                path,
                None,
                format!("row {} of {name:?} is null", row + 1),
            )),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::fs::File;

    use super::*;

    fn write(dir: &tempfile::TempDir, name: &str, text: &str) -> PathBuf {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    fn source(path: PathBuf, column: Option<&str>) -> SampleSource {
        SampleSource {
            format: Format::from_path(&path),
            path,
            column: column.map(String::from),
        }
    }

    #[test]
    fn lines_skip_blanks_and_comments() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(&dir, "lat.txt", "# latency in us\n12.5\n\n 13 \n1e2\n");
        assert_eq!(
            read_samples(&source(path, None)).unwrap(),
            vec![12.5, 13.0, 100.0]
        );
    }

    #[test]
    fn bad_lines_name_file_line_and_value() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(&dir, "lat.txt", "1\n2\nabc\n");
        let err = read_samples(&source(path.clone(), None))
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            format!("{}:3: \"abc\" is not a number", path.display())
        );
        let path = write(&dir, "nan.txt", "1\nNaN\n");
        let err = read_samples(&source(path.clone(), None))
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            format!("{}:2: \"NaN\" is not a finite number", path.display())
        );
        let path = write(&dir, "empty.txt", "\n# nothing\n");
        let err = read_samples(&source(path.clone(), None))
            .unwrap_err()
            .to_string();
        assert_eq!(err, format!("{}: no samples in the file", path.display()));
    }

    #[test]
    fn columns_by_number_as_mutilate_saves_them() {
        let dir = tempfile::tempdir().unwrap();
        // `mutilate --save`: send time (s) and latency (µs), one request a line.
        let path = write(
            &dir,
            "mutilate.txt",
            "0.014158 38.862228\n0.014302\t41.5\n\n0.0151,40\n",
        );
        assert_eq!(
            read_samples(&source(path.clone(), Some("2"))).unwrap(),
            vec![38.862228, 41.5, 40.0]
        );
        let err = read_samples(&source(path.clone(), None))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("mutilate.txt:1")
                && err.contains("\"0.014158 38.862228\" has 2 columns")
                && err.contains("--column 2"),
            "{err}"
        );
        let err = read_samples(&source(path.clone(), Some("3")))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("mutilate.txt:1") && err.contains("has no column 3"),
            "{err}"
        );
        let err = read_samples(&source(path, Some("latency")))
            .unwrap_err()
            .to_string();
        assert!(err.contains("--column takes a number"), "{err}");
        let bad = write(&dir, "bad.txt", "0.1 38\n0.2 x\n");
        let err = read_samples(&source(bad, Some("2")))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("bad.txt:2") && err.contains("\"x\" is not a number"),
            "{err}"
        );
    }

    #[test]
    fn csv_column_by_number() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(&dir, "run.csv", "send_ns,latency_us\n1,10.5\n2,11\n");
        assert_eq!(
            read_samples(&source(path.clone(), Some("2"))).unwrap(),
            vec![10.5, 11.0]
        );
        assert!(read_samples(&source(path, Some("3"))).is_err());
    }

    #[test]
    fn csv_column_by_name_with_line_numbers() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(&dir, "run.csv", "send_ns,latency_us\n1,10.5\n2,11\n3,x\n");
        let err = read_samples(&source(path.clone(), Some("latency_us")))
            .unwrap_err()
            .to_string();
        assert_eq!(err, format!("{}:4: \"x\" is not a number", path.display()));
        let path = write(&dir, "ok.csv", "send_ns,latency_us\n1,10.5\n2,11\n");
        assert_eq!(
            read_samples(&source(path.clone(), Some("latency_us"))).unwrap(),
            vec![10.5, 11.0]
        );
        let err = read_samples(&source(path.clone(), Some("latency")))
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            format!(
                "{}: no column \"latency\" (columns: send_ns, latency_us)",
                path.display()
            )
        );
        let err = read_samples(&source(path, None)).unwrap_err().to_string();
        assert!(
            err.contains("pass --column NAME (columns: send_ns, latency_us)"),
            "{err}"
        );
    }

    #[test]
    fn a_directory_of_parts_reads_as_one_series_in_name_order() {
        use polars::prelude::*;
        let dir = tempfile::tempdir().unwrap();
        let parts = dir.path().join("samples.parquet");
        std::fs::create_dir(&parts).unwrap();
        for (name, values) in [
            ("part-000002.parquet", [3.0, 4.0]),
            ("part-000001.parquet", [1.0, 2.0]),
        ] {
            let mut frame = df!("latency_ns" => values).unwrap();
            ParquetWriter::new(File::create(parts.join(name)).unwrap())
                .finish(&mut frame)
                .unwrap();
        }
        std::fs::write(parts.join("notes.txt"), "not a part").unwrap();
        let whole = source(parts.clone(), Some("latency_ns"));
        assert_eq!(read_samples(&whole).unwrap(), vec![1.0, 2.0, 3.0, 4.0]);
        let empty = dir.path().join("empty.parquet");
        std::fs::create_dir(&empty).unwrap();
        let err = read_samples(&source(empty, Some("latency_ns")))
            .unwrap_err()
            .to_string();
        assert!(err.contains("no .parquet parts"), "{err}");
    }

    #[test]
    fn parquet_round_trip_and_nulls() {
        use polars::prelude::*;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("samples.parquet");
        let mut frame =
            df!("latency_us" => [Some(10.0f64), Some(12.0), None], "conn" => [1u32, 2, 3]).unwrap();
        ParquetWriter::new(File::create(&path).unwrap())
            .finish(&mut frame)
            .unwrap();
        let err = read_samples(&source(path.clone(), Some("latency_us")))
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            format!("{}: row 3 of \"latency_us\" is null", path.display())
        );
        assert_eq!(
            read_samples(&source(path.clone(), Some("conn"))).unwrap(),
            vec![1.0, 2.0, 3.0]
        );
        let err = read_samples(&source(path.clone(), Some("nope")))
            .unwrap_err()
            .to_string();
        assert!(
            err.ends_with("no column \"nope\" (columns: latency_us, conn)"),
            "{err}"
        );
    }
}
