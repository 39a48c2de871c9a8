//! Scenarios: what to load, how, and what answer is wanted, read from YAML in two phases
//! (a serde file struct with `deny_unknown_fields`, then validation into the typed
//! [`Scenario`]). Every error names the file, the line, the field, the bad value and what
//! is allowed.

mod check;
mod context;
pub mod declared_flags;
mod defaults;
mod error;
mod fields;
mod file;
mod flag;
mod grpc;
mod locate;
mod overrides;
mod plan;
pub mod proto;
mod protocol;
mod tail;
mod types;
mod url;
mod value;

#[cfg(test)]
mod tests;

use std::path::Path;

use serde_yaml::{Mapping, Value};

pub use error::{Location, ScenarioError};
pub use flag::Flag;
pub use overrides::{Override, load_value};
pub use types::{
    AgentSpec, CiTarget, CiWidth, Limits, LoadPlan, Method, OnAgentLoss, Replications, Sampling,
    Scenario, SloSearch, Tail, Warmup,
};
pub(crate) use value::show;

use context::Context;
use file::{File, Lines};

impl Scenario {
    /// Reads a scenario from YAML `text`, with `overrides` applied first (`--set`,
    /// `--load`), so that one file serves many runs. `source` is the file the text came
    /// from, named in errors and kept in the record; `None` for built-in scenarios.
    ///
    /// Phase 1 reads the fields with serde, refusing unknown ones; phase 2 checks and types
    /// them. Errors name the file, the line (or the override) and the field.
    pub fn from_yaml(
        text: &str,
        source: Option<&Path>,
        overrides: &[Override],
    ) -> Result<Scenario, ScenarioError> {
        let context = Context {
            text,
            source,
            overrides,
            flags: &[],
        };
        let mut document: Value = serde_yaml::from_str(text).map_err(|e| {
            let message = e.to_string();
            // This one error's position is the document's start, not the key's.
            let duplicate = message
                .strip_prefix("duplicate entry with key ")
                .and_then(|key| locate::duplicate_line(text, key.trim_matches('"')));
            ScenarioError::Syntax {
                path: source.map(Path::to_path_buf),
                line: duplicate.or(e.location().map(|l| l.line())),
                message: format!("invalid YAML: {message}"),
            }
        })?;
        match &document {
            // An empty file: every required field is reported missing, in order.
            Value::Null => document = Value::Mapping(Mapping::new()),
            Value::Mapping(_) => {}
            other => {
                return Err(ScenarioError::Syntax {
                    path: source.map(Path::to_path_buf),
                    line: Some(1),
                    message: format!(
                        "expected a map of fields (name: ..., target: ...), not {}",
                        match other {
                            Value::Sequence(_) => "a list",
                            _ => "a single value",
                        }
                    ),
                });
            }
        }
        let yaml = if overrides.is_empty() {
            text.to_owned()
        } else {
            for o in overrides {
                o.apply(&mut document)?;
            }
            serde_yaml::to_string(&document).map_err(|e| ScenarioError::Syntax {
                path: source.map(Path::to_path_buf),
                line: None,
                message: format!("cannot write the scenario back as YAML: {e}"),
            })?
        };
        let lines = if overrides.is_empty() {
            Lines::AsWritten
        } else {
            Lines::Rewritten
        };
        let file = File::parse(&yaml, lines, &context)?;
        check::scenario(file, yaml, &context)
    }

    /// Reads the scenario file at `path`, with `overrides` applied.
    pub fn load(path: &Path, overrides: &[Override]) -> Result<Scenario, ScenarioError> {
        let text = std::fs::read_to_string(path).map_err(|source| ScenarioError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Scenario::from_yaml(&text, Some(path), overrides)
    }
}
