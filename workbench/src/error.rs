//! What can go wrong in a `vernier` command, and the exit code each answer maps to.

use std::path::PathBuf;
use std::process::ExitCode;

use thiserror::Error;

/// An error from a `vernier` command.
#[derive(Debug, Error)]
pub enum Error {
    /// A file's content was unusable: it names the file and, where there is one, the line.
    #[error("{}{}: {message}", path.display(), line.map(|l| format!(":{l}")).unwrap_or_default())]
    Input {
        /// The file.
        path: PathBuf,
        /// The 1-based line (or row, for Parquet).
        line: Option<usize>,
        /// What was wrong, quoting the value.
        message: String,
    },
    /// An option's value was unusable.
    #[error("{0}")]
    Usage(String),
    /// Reading or writing failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// Something that was asked for correctly could not be done (a server that could not
    /// listen, a worker that failed, a measurement that broke).
    #[error("{0}")]
    Failed(String),
    /// A scenario was unusable: it names the file, the line and the field.
    #[error(transparent)]
    Scenario(#[from] crate::scenario::ScenarioError),
    /// The statistics refused the input as a whole.
    #[error(transparent)]
    Stats(#[from] vernier_stats::StatsError),
}

impl Error {
    /// 2 for bad input (a file, an option), 1 for everything else.
    pub fn exit_code(&self) -> ExitCode {
        match self {
            Error::Input { .. } | Error::Usage(_) | Error::Stats(_) | Error::Scenario(_) => {
                ExitCode::from(2)
            }
            Error::Io { .. } | Error::Failed(_) => ExitCode::from(1),
        }
    }

    pub(crate) fn input(
        path: &std::path::Path,
        line: Option<usize>,
        message: impl Into<String>,
    ) -> Self {
        Error::Input {
            path: path.to_path_buf(),
            line,
            message: message.into(),
        }
    }
}
