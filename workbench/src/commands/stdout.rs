//! Writing a command's result on stdout, where a reader that stopped early (`| head`) is
//! not an error of ours.

use std::io::Write;

use serde::Serialize;

use crate::error::Error;

/// How a JSON result is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Json {
    /// On one line: what a script reads, the default.
    Compact,
    /// Indented over many lines (`--pretty`): what a person reads.
    Pretty,
}

impl Json {
    /// The layout a command's `--pretty` flag asks for: the flag turned into a kind once,
    /// at the command line's edge.
    pub(crate) fn pretty_if(pretty: bool) -> Json {
        if pretty { Json::Pretty } else { Json::Compact }
    }
}

/// Prints one JSON object on stdout, laid out as `json` says. A reader that stopped
/// early (`| head`) is not an error of ours.
pub(crate) fn print_json<T: Serialize>(value: &T, json: Json) -> Result<(), Error> {
    let json = match json {
        Json::Pretty => serde_json::to_string_pretty(value),
        Json::Compact => serde_json::to_string(value),
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
