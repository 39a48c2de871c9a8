//! Writing a command's result on stdout, where a reader that stopped early (`| head`) is
//! not an error of ours.

use std::io::Write;

use serde::Serialize;

use crate::error::Error;

/// Prints one JSON object on stdout. A reader that stopped early (`| head`) is not an
/// error of ours.
pub(crate) fn print_json<T: Serialize>(value: &T, pretty: bool) -> Result<(), Error> {
    let json = if pretty {
        serde_json::to_string_pretty(value)
    } else {
        serde_json::to_string(value)
    }
    .map_err(|e| Error::Failed(format!("cannot encode the result as JSON: {e}")))?;
    print(format!("{json}\n").as_bytes())
}

/// Writes `bytes` to stdout. A reader that stopped early (`| head`) is not an error of
/// ours.
pub(crate) fn print(bytes: &[u8]) -> Result<(), Error> {
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(Error::Io {
            path: "<stdout>".into(),
            source: e,
        }),
        _ => Ok(()),
    }
}
