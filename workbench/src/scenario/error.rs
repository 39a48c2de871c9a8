//! What can be wrong with a scenario, said so that the user can fix it without reading the
//! code: where (file and line, or the override), which field, the value, and what is allowed.

use std::fmt;
use std::path::{Path, PathBuf};

use super::locate;
use super::overrides::{Override, segments};

/// A scenario that cannot be read or run.
///
/// Displayed as `scenarios/x.yaml:12: ci.width: "0us": expected a positive duration, as in
/// 10us`; a value that came from an override names it instead of a line
/// (`--set ci.width: "abc": ...`). Every variant is the user's input to fix, so a command
/// maps all of them to its bad-input exit code.
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
    #[error("{}{message}", Where { path: path.as_deref(), line: *line, by_override: false })]
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
        Where { path: path.as_deref(), line: *line, by_override: *by_override },
        value.as_ref().map(|v| format!("{v:?}: ")).unwrap_or_default()
    )]
    Invalid {
        /// The file, if the scenario came from one.
        path: Option<PathBuf>,
        /// The 1-based line of the field (or of the nearest enclosing field written on a
        /// line of its own), if it is in the file.
        line: Option<usize>,
        /// The value came from an override (`--set`, `--load`), not the file.
        by_override: bool,
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
}

impl ScenarioError {
    /// The scenario file the error is in, so that a command can report it in its own terms.
    pub fn path(&self) -> Option<&Path> {
        match self {
            ScenarioError::Io { path, .. } => Some(path),
            ScenarioError::Syntax { path, .. } | ScenarioError::Invalid { path, .. } => {
                path.as_deref()
            }
            ScenarioError::Override { .. } => None,
        }
    }

    /// The 1-based line of the error in the file, where it has one.
    pub fn line(&self) -> Option<usize> {
        match self {
            ScenarioError::Syntax { line, .. } | ScenarioError::Invalid { line, .. } => *line,
            ScenarioError::Io { .. } | ScenarioError::Override { .. } => None,
        }
    }
}

/// The prefix saying where an error is: `file:line: `, `file: `, `line 3: ` or `--set `.
struct Where<'a> {
    path: Option<&'a Path>,
    line: Option<usize>,
    by_override: bool,
}

impl fmt::Display for Where<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.by_override {
            return f.write_str("--set ");
        }
        match (self.path, self.line) {
            (Some(path), Some(line)) => write!(f, "{}:{line}: ", path.display()),
            (Some(path), None) => write!(f, "{}: ", path.display()),
            (None, Some(line)) => write!(f, "line {line}: "),
            (None, None) => Ok(()),
        }
    }
}

/// What an error needs to say where a field is: the text to find its line in, the file's
/// name, and the overrides that may have set it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Context<'a> {
    /// The scenario as written, before overrides (its lines are the user's).
    pub text: &'a str,
    /// The file it came from.
    pub source: Option<&'a Path>,
    /// The overrides applied to it.
    pub overrides: &'a [Override],
}

impl Context<'_> {
    /// An error about `field`, located in the file or blamed on the override that set it.
    pub fn invalid(
        &self,
        field: &str,
        value: Option<String>,
        expected: impl Into<String>,
    ) -> ScenarioError {
        self.located(field, None, value, expected)
    }

    /// As [`invalid`](Self::invalid), with a line already known (from YAML's parser), used
    /// unless an override set the field.
    pub fn located(
        &self,
        field: &str,
        line: Option<usize>,
        value: Option<String>,
        expected: impl Into<String>,
    ) -> ScenarioError {
        let by_override = self.set_by_override(field);
        let line = match line {
            _ if by_override => None,
            Some(line) => Some(line),
            None => locate::line_of(self.text, field),
        };
        ScenarioError::Invalid {
            path: self.source.map(Path::to_path_buf),
            line,
            by_override,
            field: field.to_owned(),
            value,
            expected: expected.into(),
        }
    }

    /// A value that is not allowed: `field: "value": expected`.
    pub fn bad(
        &self,
        field: &str,
        value: impl fmt::Display,
        expected: impl Into<String>,
    ) -> ScenarioError {
        self.invalid(field, Some(value.to_string()), expected)
    }

    /// A required field that is absent: `field: missing: expected ...`.
    pub fn missing(&self, field: &str, what: &str) -> ScenarioError {
        self.invalid(field, None, format!("missing: expected {what}"))
    }

    /// A field whose value an override gave (or replaced a parent or a child of).
    fn set_by_override(&self, field: &str) -> bool {
        let field = segments(field);
        self.overrides.iter().any(|o| {
            let set = segments(&o.path);
            set.starts_with(&field) || field.starts_with(&set)
        })
    }
}
