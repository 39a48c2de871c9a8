//! Opening a samples file and reading one of its fields as a number, with errors that
//! name the file and the line.

use std::fs::File;
use std::path::Path;

use crate::error::Error;

/// Opens `path`, or says it cannot.
pub(super) fn open(path: &Path) -> Result<File, Error> {
    File::open(path).map_err(|e| Error::input(path, None, format!("cannot open: {e}")))
}

/// Parses one field as a finite number.
pub(super) fn number(path: &Path, line: usize, field: &str) -> Result<f64, Error> {
    let text = field.trim();
    match text.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        Ok(_) => Err(Error::input(
            path,
            Some(line),
            format!("{text:?} is not a finite number"),
        )),
        Err(_) => Err(Error::input(
            path,
            Some(line),
            format!("{text:?} is not a number"),
        )),
    }
}
