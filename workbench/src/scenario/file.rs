//! Phase 1: the scenario file as written, read by serde with `deny_unknown_fields`, so that a
//! misspelt field is an error rather than a silently applied default.
//!
//! Every field is optional here (phase 2 says which are required, with an example of each),
//! durations and specs are text (phase 2 says what is wrong with them), and the polymorphic
//! fields (`target`, `agents`, `load`) are YAML values interpreted by hand: serde's errors
//! for untagged enums ("data did not match any variant") would not help anyone.

use serde::Deserialize;
use serde_yaml::Value;
use vernier_protocols::{KeyDist, SizeDist};

use super::context::Context;
use super::error::ScenarioError;

/// A scenario file's top level.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct File {
    pub name: Option<String>,
    pub target: Option<Value>,
    pub protocol: Option<Value>,
    pub service: Option<String>,
    pub workload: Option<WorkloadFile>,
    pub path: Option<String>,
    pub transport: Option<String>,
    pub agents: Option<Value>,
    pub workers: Option<usize>,
    pub cpus: Option<Vec<usize>>,
    pub target_cpus: Option<Vec<usize>>,
    pub connections: Option<usize>,
    pub depth: Option<usize>,
    pub interarrival: Option<String>,
    pub load: Option<Value>,
    pub ci: Option<CiFile>,
    pub percentiles: Option<Vec<f64>>,
    pub timestamps: Option<String>,
    pub interface: Option<String>,
    pub poll: Option<String>,
    pub halt_poll: Option<String>,
    pub limits: Option<LimitsFile>,
    pub sampling: Option<SamplingFile>,
    pub warmup: Option<WarmupFile>,
    pub alpha: Option<f64>,
    pub timeout: Option<String>,
    pub seed: Option<u64>,
    pub on_agent_loss: Option<String>,
    pub interarrival_check: Option<String>,
    pub method: Option<String>,
    pub replications: Option<ReplicationsFile>,
    pub budget: Option<BudgetFile>,
}

/// `workload:`: the keys and values a key-value protocol asks for (every field but
/// `key_dist` required there), or the keys alone a declared protocol draws; phase 2 says
/// which fields each takes.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct WorkloadFile {
    pub keys: Option<u64>,
    pub key_size: Option<SizeDist>,
    pub value_size: Option<SizeDist>,
    pub read_ratio: Option<f64>,
    pub key_dist: Option<KeyDist>,
}

/// `ci:`, the answer wanted.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct CiFile {
    pub percentile: Option<f64>,
    pub width: Option<String>,
    pub confidence: Option<f64>,
    pub tail: Option<String>,
}

/// `replications:`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ReplicationsFile {
    pub min: Option<u32>,
    pub max: Option<u32>,
    pub width: Option<String>,
    pub pause: Option<String>,
}

/// `budget:`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct BudgetFile {
    pub probe: Option<Value>,
}

/// `limits:`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct LimitsFile {
    pub max_tries: Option<u32>,
    pub max_duration: Option<String>,
}

/// `sampling:`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SamplingFile {
    pub rate: Option<f64>,
    pub samples: Option<usize>,
    pub interarrival_samples: Option<usize>,
}

/// `warmup:`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct WarmupFile {
    pub window: Option<String>,
    pub windows: Option<usize>,
    pub tolerance: Option<f64>,
    pub max: Option<String>,
}

/// Whose lines the YAML given to [`File::parse`] has, which says where an error's line
/// comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lines {
    /// The file's as written (no override): YAML's position is the user's line.
    AsWritten,
    /// None of the user's (re-serialised after overrides, or built from a URL): the field
    /// is looked up in the file's text instead.
    Rewritten,
}

impl File {
    /// Reads `yaml` (the text as run: the file's, or its re-serialised form after
    /// overrides), whose `lines` say whether YAML's positions are the file's.
    pub fn parse(yaml: &str, lines: Lines, context: &Context<'_>) -> Result<File, ScenarioError> {
        serde_yaml::from_str(yaml).map_err(|error| {
            let line = (lines == Lines::AsWritten)
                .then(|| error.location().map(|l| l.line()))
                .flatten();
            let (path, message) = split_message(&error);
            let (field, value, expected) = explain(&path, &message);
            // An error about a key of the file's own map (`? {a: 1}`) is about no field.
            let field = if field.is_empty() {
                "(top level)".into()
            } else {
                field
            };
            context.located(&field, line, value, expected)
        })
    }
}

/// serde_yaml's message without its position, split into the path it starts with (`ci.`
/// in `ci: unknown field ...`; empty at the top level) and the rest.
fn split_message(error: &serde_yaml::Error) -> (String, String) {
    let mut message = error.to_string();
    if let Some(at) = error.location() {
        let suffix = format!(" at line {} column {}", at.line(), at.column());
        if let Some(stripped) = message.strip_suffix(&suffix) {
            message = stripped.to_owned();
        }
    }
    let is_path = |p: &str| {
        !p.is_empty()
            && p.chars()
                .all(|c| c.is_alphanumeric() || "_-.[]?".contains(c))
    };
    match message.split_once(": ") {
        Some((path, rest)) if is_path(path) => (format!("{path}."), rest.to_owned()),
        _ => (String::new(), message),
    }
}

/// serde's message, restated as the field it is about, the value if it names one, and what
/// is expected in the scenario's own words.
fn explain(path: &str, message: &str) -> (String, Option<String>, String) {
    let parent = path.trim_end_matches('.').to_owned();
    let backticked = |text: &str| {
        let rest = text.split_once('`')?.1;
        let (name, after) = rest.split_once('`')?;
        Some((name.to_owned(), after.to_owned()))
    };
    if let Some(rest) = message.strip_prefix("unknown field ")
        && let Some((name, after)) = backticked(rest)
    {
        let expected = after.trim_start_matches(", ").replace('`', "");
        // A key with no name (`?` alone, `"": 1`) is named as it can be written.
        let name = if name.is_empty() { "\"\"".into() } else { name };
        return (
            format!("{path}{name}"),
            None,
            format!("unknown field; {expected}"),
        );
    }
    if let Some(rest) = message.strip_prefix("missing field ")
        && let Some((name, _)) = backticked(rest)
    {
        let example = match parent.as_str() {
            "workload" => {
                ", as in workload: {keys: 10000, key_size: fixed:30, value_size: fixed:200, read_ratio: 0.9}"
            }
            _ => "",
        };
        return (
            format!("{path}{name}"),
            None,
            format!("missing: expected a value{example}"),
        );
    }
    if let Some(rest) = message.strip_prefix("duplicate field ")
        && let Some((name, _)) = backticked(rest)
    {
        return (
            format!("{path}{name}"),
            None,
            "given twice: expected it once".into(),
        );
    }
    let invalid = message
        .strip_prefix("invalid type: ")
        .or_else(|| message.strip_prefix("invalid value: "));
    if let Some(rest) = invalid
        && let Some((found, wanted)) = rest.rsplit_once(", expected ")
    {
        let wanted = match wanted {
            "usize" | "u64" | "u32" => "a whole number ≥ 0",
            "f64" => "a number",
            "a string" => "text",
            "a sequence" => "a list",
            "field identifier" => "a field name",
            "u8" | "i64" => "a whole number",
            w if w.starts_with("struct ") => "a map of fields",
            w => w,
        };
        let value = backticked(found).map(|(v, _)| v).or_else(|| {
            found
                .strip_prefix("string ")
                .map(|s| s.trim_matches('"').to_owned())
        });
        let expected = match (&value, found) {
            (Some(_), _) => format!("expected {wanted}"),
            (None, "sequence") => format!("expected {wanted}, not a list"),
            (None, "map") => format!("expected {wanted}, not a map"),
            (None, found) => format!("expected {wanted}, not {found}"),
        };
        return (parent, value, expected);
    }
    // A spec's own message (from KvWorkload's fields) quotes the value and says what to
    // write instead.
    (parent, None, message.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(yaml: &str) -> String {
        let context = Context {
            text: yaml,
            source: Some(std::path::Path::new("s.yaml")),
            overrides: &[],
            flags: &[],
        };
        File::parse(yaml, Lines::AsWritten, &context)
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn serde_errors_name_the_line_the_field_and_the_value() {
        assert_eq!(
            error("name: x\nci:\n  percentile: 99\n  widht: 1us\n"),
            "s.yaml:4: ci.widht: unknown field; expected one of percentile, width, confidence, tail"
        );
        assert_eq!(
            error("name: x\nworkers: -1\n"),
            "s.yaml:2: workers: \"-1\": expected a whole number ≥ 0"
        );
        assert_eq!(
            error("name: x\nworkers: many\n"),
            "s.yaml:2: workers: \"many\": expected a whole number ≥ 0"
        );
        assert_eq!(
            error("cpus: [0, 1.5]\n"),
            "s.yaml:1: cpus[1]: \"1.5\": expected a whole number ≥ 0"
        );
        // Found by fuzzing (workbench/fuzz): an empty key was an error naming no field.
        assert!(
            error("name: x\n?\n")
                .starts_with("s.yaml:2: \"\": unknown field; expected one of name, target, "),
            "{}",
            error("name: x\n?\n")
        );
        assert_eq!(
            error("name: x\n? {a: 1}\n"),
            "s.yaml:2: (top level): expected a field name, not a map"
        );
        assert_eq!(
            error("ci: [99]\n"),
            "s.yaml:1: ci: expected a map of fields, not a list"
        );
        assert_eq!(
            error("workload: {keys: 10, key_size: fixd:3, value_size: fixed:2, read_ratio: 1}\n"),
            "s.yaml:1: workload.key_size: invalid size distribution \"fixd:3\": expected \
             fixed:, exp:, bimodal:, lognormal:, uniform: or pareto:, as in exp:32"
        );
    }
}
