//! Where a field's value came from, for its error: the text to find its line in, the
//! file's name, and the overrides and flags that may have set it.

use std::fmt;
use std::path::{Path, PathBuf};

use super::error::{Location, ScenarioError};
use super::flag::Flag;
use super::locate;
use super::overrides::{Override, segments};

/// What an error needs to say where a field is: the text to find its line in, the file's
/// name, and the overrides and flags that may have set it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Context<'a> {
    /// The scenario as written, before overrides (its lines are the user's).
    pub text: &'a str,
    /// The file it came from.
    pub source: Option<&'a Path>,
    /// The overrides applied to it.
    pub overrides: &'a [Override],
    /// The flags of `vernier run URL`, given or not: a field one of them sets is theirs to
    /// fix, even when the value at fault is its default (`--connections` for 16
    /// connections among 32 workers).
    pub flags: &'a [Flag],
}

impl Context<'_> {
    /// A path the scenario names, relative to the scenario file like any path in it (to
    /// the working directory for a scenario with no file).
    pub fn resolve(&self, path: &Path) -> PathBuf {
        match self.source.and_then(Path::parent) {
            Some(dir) if path.is_relative() => dir.join(path),
            _ => path.to_path_buf(),
        }
    }

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
        let at = match self.set_by(field) {
            Some(option) => Some(Location::Option(option)),
            None => line
                .or_else(|| locate::line_of(self.text, field))
                .map(Location::Line),
        };
        ScenarioError::Invalid {
            path: self.source.map(Path::to_path_buf),
            at,
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

    /// The option that gave a field its value (or replaced a parent or a child of it): an
    /// override, else a flag that sets it.
    fn set_by(&self, field: &str) -> Option<&'static str> {
        let field = segments(field);
        let sets = |path: &str| {
            let set = segments(path);
            set.starts_with(&field) || field.starts_with(&set)
        };
        if self.overrides.iter().any(|o| sets(&o.path)) {
            return Some("--set");
        }
        self.flags.iter().find(|f| sets(f.field)).map(|f| f.name)
    }
}
