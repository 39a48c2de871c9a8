//! What can be wrong with a scenario, said so that the user can fix it without reading the
//! code: where (file and line, or the override), which field, the value, and what is allowed.

use std::fmt;
use std::path::{Path, PathBuf};

/// A scenario that cannot be read or run.
///
/// Displayed as `scenarios/x.yaml:12: ci.width: "0us": expected a positive duration, as in
/// 10us`; a value that came from an override or a flag names it instead of a line
/// (`--set ci.width: "abc": ...`, `--width ci.width: "abc": ...`). Every variant is the
/// user's input to fix, so a command maps all of them to its bad-input exit code.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    /// The scenario file could not be read.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// The text is not YAML, or not a mapping of fields.
    #[error("{}{message}", Where { path: path.as_deref(), at: line.map(Location::Line) })]
    Syntax {
        /// The file, if the scenario came from one.
        path: Option<PathBuf>,
        /// The 1-based line YAML's parser stopped at.
        line: Option<usize>,
        /// What the parser said.
        message: String,
    },
    /// A field is missing, unknown, or has a value that is not allowed.
    #[error(
        "{}{field}: {}{expected}",
        Where { path: path.as_deref(), at: *at },
        value.as_ref().map(|v| format!("{v:?}: ")).unwrap_or_default()
    )]
    Invalid {
        /// The file, if the scenario came from one.
        path: Option<PathBuf>,
        /// Its line in the file, or the option that gave it; `None` when neither is known
        /// (a missing field of a file, a field of a built-in scenario).
        at: Option<Location>,
        /// The dotted path of the field, as in `ci.width` or `load[1]`.
        field: String,
        /// The value given, if there was one.
        value: Option<String>,
        /// What is allowed instead, with an example.
        expected: String,
    },
    /// An override that is not `FIELD=VALUE`.
    #[error("--set {text:?}: {expected}")]
    Override {
        /// The override as given.
        text: String,
        /// What is allowed instead.
        expected: String,
    },
    /// A URL (`vernier run URL`) that names no server vernier can measure.
    #[error("{url}: {expected}")]
    Url {
        /// The URL as given.
        url: String,
        /// What is wrong and what is allowed instead.
        expected: String,
    },
}

impl ScenarioError {
    /// The scenario file the error is in, so that a command can report it in its own terms.
    pub fn path(&self) -> Option<&Path> {
        match self {
            ScenarioError::Io { path, .. } => Some(path),
            ScenarioError::Syntax { path, .. } | ScenarioError::Invalid { path, .. } => {
                path.as_deref()
            }
            ScenarioError::Override { .. } | ScenarioError::Url { .. } => None,
        }
    }

    /// The 1-based line of the error in the file, where it has one.
    pub fn line(&self) -> Option<usize> {
        match self {
            ScenarioError::Syntax { line, .. } => *line,
            ScenarioError::Invalid { at, .. } => match at {
                Some(Location::Line(line)) => Some(*line),
                _ => None,
            },
            ScenarioError::Io { .. }
            | ScenarioError::Override { .. }
            | ScenarioError::Url { .. } => None,
        }
    }
}

/// Where a field's value is, for its error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Location {
    /// The 1-based line of the field in the file (or of the nearest enclosing field
    /// written on a line of its own).
    Line(usize),
    /// The option that gave it: `--set`, or a flag of `vernier run URL` such as `--width`
    /// (which also takes the blame for a default it could have replaced).
    Option(&'static str),
}

/// The prefix saying where an error is: `file:line: `, `file: `, `line 3: `, `--set ` or
/// a flag (`--width `).
struct Where<'a> {
    path: Option<&'a Path>,
    at: Option<Location>,
}

impl fmt::Display for Where<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.path, self.at) {
            (_, Some(Location::Option(option))) => write!(f, "{option} "),
            (Some(path), Some(Location::Line(line))) => write!(f, "{}:{line}: ", path.display()),
            (Some(path), None) => write!(f, "{}: ", path.display()),
            (None, Some(Location::Line(line))) => write!(f, "line {line}: "),
            (None, None) => Ok(()),
        }
    }
}
