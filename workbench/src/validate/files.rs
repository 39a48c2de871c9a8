//! Writing the harness's outputs, an error naming the file.

use std::path::Path;

use serde::Serialize;

use crate::error::Error;

/// `text` in `path`, an error naming the path.
pub(super) fn write(path: &Path, text: &str) -> Result<(), Error> {
    std::fs::write(path, text).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// `value` as pretty JSON in `path`, its directory created if missing.
pub(super) fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<(), Error> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|source| Error::Io {
            path: dir.to_path_buf(),
            source,
        })?;
    }
    let json = serde_json::to_string_pretty(value)
        .map_err(|e| Error::Failed(format!("{}: cannot encode as JSON: {e}", path.display())))?;
    write(path, &json)
}
