//! Overrides (`--set ci.width=5us`, `--load 30000`): changes to a scenario given on the
//! command line, applied to its parsed YAML before it is read, so that one file serves
//! many runs without editing.

use std::str::FromStr;

use serde_yaml::{Mapping, Value};

use super::error::ScenarioError;
use super::value::show;

/// One change to a scenario: the field at a dotted `path` (`ci.width`, `load`,
/// `agents.0.kind`) gets `value`, read as YAML once where it was given (so `load=[1000,
/// 2000]` is a list and `load=30000` a number). Maps missing on the way are created.
#[derive(Debug, Clone, PartialEq)]
pub struct Override {
    /// The dotted path of the field.
    pub path: String,
    /// Its new value.
    pub value: Value,
    /// The value as it was written, for the command line a scenario made from a URL
    /// quotes, and for errors.
    pub written: String,
}

/// What an override must look like, for its errors.
const EXPECTED: &str =
    "expected FIELD=VALUE, a dotted field path and a YAML value, as in ci.width=5us";

impl FromStr for Override {
    type Err = ScenarioError;

    /// Parses `FIELD=VALUE`, checking that VALUE is YAML so that a typo fails before
    /// anything is run.
    fn from_str(text: &str) -> Result<Override, ScenarioError> {
        let error = |expected: String| ScenarioError::Override {
            text: text.to_owned(),
            expected,
        };
        let (path, value) = text.split_once('=').ok_or_else(|| error(EXPECTED.into()))?;
        let path = path.trim();
        if path.is_empty() || path.split('.').any(str::is_empty) {
            return Err(error(EXPECTED.into()));
        }
        let written = value.trim();
        let value = serde_yaml::from_str(written)
            .map_err(|e| error(format!("the value is not YAML: {e}")))?;
        Ok(Override::new(path, value, written))
    }
}

impl Override {
    /// The field at `path` set to `value`, which was `written` so.
    pub fn new(path: &str, value: Value, written: &str) -> Override {
        Override {
            path: path.to_owned(),
            value,
            written: written.to_owned(),
        }
    }

    /// Sets the field in `document`, creating the maps on the way.
    ///
    /// A path may pass through a list by index (`agents.0.kind`), but not through a
    /// scalar: replacing `load: 20000` by a map because of `load.step.by=5` would hide the
    /// mistake.
    pub(crate) fn apply(&self, document: &mut Value) -> Result<(), ScenarioError> {
        set(document, &self.path, self.value.clone()).map_err(|expected| ScenarioError::Override {
            text: format!("{}={}", self.path, self.written),
            expected,
        })
    }
}

/// Sets the field at the dotted `path` in `document` to `value`, creating the maps on the
/// way and passing through lists by index; what was expected instead when the path goes
/// through a scalar or past a list's end.
pub(crate) fn set(document: &mut Value, path: &str, value: Value) -> Result<(), String> {
    let keys: Vec<&str> = path.split('.').collect();
    let mut node = document;
    for (depth, key) in keys.iter().enumerate() {
        if node.is_null() {
            *node = Value::Mapping(Mapping::new());
        }
        let here = keys[..depth].join(".");
        node = match node {
            Value::Mapping(map) => map
                .entry(Value::String((*key).to_owned()))
                .or_insert(Value::Null),
            Value::Sequence(items) => {
                let count = items.len();
                match key.parse::<usize>().ok().and_then(|i| items.get_mut(i)) {
                    Some(item) => item,
                    None => {
                        return Err(format!(
                            "{here} is a list of {count}: expected an index from 0 to {}",
                            count.saturating_sub(1)
                        ));
                    }
                }
            }
            other => {
                return Err(format!(
                    "{here} is {}, not a map of fields: set {here} itself instead",
                    show(other)
                ));
            }
        };
    }
    *node = value;
    Ok(())
}

/// `--load`'s text as the YAML value of `load:`: `5k,10k,20k` a list, `5k..50k/5k` a step
/// sweep (from 5k to 50k by 5k), anything else YAML as written (`20000`, `10k`,
/// `[1000, 2000]`, `{slo: {below: 1ms, to: 50k}}`), or the text itself where it is not
/// YAML, for validation to say what a load may be.
pub fn load_value(text: &str) -> Value {
    let text = text.trim();
    if !text.starts_with(['[', '{']) {
        if let Some((from, rest)) = text.split_once("..") {
            let (to, by) = rest.split_once('/').unwrap_or((rest, ""));
            let mut step = Mapping::new();
            for (key, value) in [("from", from), ("to", to), ("by", by)] {
                if !value.trim().is_empty() {
                    step.insert(key.into(), value.trim().into());
                }
            }
            let mut plan = Mapping::new();
            plan.insert("step".into(), Value::Mapping(step));
            return Value::Mapping(plan);
        }
        if text.contains(',') {
            return Value::Sequence(text.split(',').map(|r| r.trim().into()).collect());
        }
    }
    serde_yaml::from_str(text).unwrap_or_else(|_| text.into())
}

/// A field path's parts, with list indices as parts of their own: `agents[1].kind` and
/// `agents.1.kind` are both `["agents", "1", "kind"]`.
pub(crate) fn segments(path: &str) -> Vec<String> {
    path.split(['.', '[', ']'])
        .filter(|part| !part.is_empty())
        .map(str::to_owned)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(text: &str) -> Override {
        text.parse().unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    fn apply(yaml: &str, overrides: &[&str]) -> Result<Value, String> {
        let mut document: Value = serde_yaml::from_str(yaml).unwrap();
        for text in overrides {
            set(text).apply(&mut document).map_err(|e| e.to_string())?;
        }
        Ok(document)
    }

    #[test]
    fn parses_field_and_yaml_value() {
        assert_eq!(
            set("ci.width=5us"),
            Override {
                path: "ci.width".into(),
                value: "5us".into(),
                written: "5us".into(),
            }
        );
        // Only the first `=` splits.
        assert_eq!(set("name=a=b").value, "a=b");
        let list = set(" load = [1000, 2000] ");
        assert_eq!(list.written, "[1000, 2000]");
        assert_eq!(list.value, Value::Sequence(vec![1000.into(), 2000.into()]));
    }

    #[test]
    fn bad_override_text_says_what_is_expected() {
        let error = |text: &str| text.parse::<Override>().unwrap_err().to_string();
        let expected =
            "expected FIELD=VALUE, a dotted field path and a YAML value, as in ci.width=5us";
        assert_eq!(error("ci.width"), format!("--set \"ci.width\": {expected}"));
        assert_eq!(error("=5us"), format!("--set \"=5us\": {expected}"));
        assert_eq!(
            error("ci..width=5us"),
            format!("--set \"ci..width=5us\": {expected}")
        );
        assert!(
            error("load=[1000").starts_with("--set \"load=[1000\": the value is not YAML: "),
            "{}",
            error("load=[1000")
        );
    }

    #[test]
    fn sets_values_as_yaml_creating_maps() {
        let document = apply(
            "name: x\nload: 1000\n",
            &[
                "load=[1000, 2000]",
                "ci.width=5us",
                "warmup.max=1m",
                "name=y",
            ],
        )
        .unwrap();
        let expected: Value = serde_yaml::from_str(
            "name: y\nload: [1000, 2000]\nci: {width: 5us}\nwarmup: {max: 1m}\n",
        )
        .unwrap();
        assert_eq!(document, expected);
        let document = apply("agents: [local, {ssh: h}]\n", &["agents.1.kind=latency"]).unwrap();
        assert_eq!(document["agents"][1]["kind"], Value::from("latency"));
    }

    #[test]
    fn refuses_to_go_through_a_scalar_or_past_a_list() {
        assert_eq!(
            apply("load: 20000\n", &["load.step.by=5"]).unwrap_err(),
            "--set \"load.step.by=5\": load is 20000, not a map of fields: set load itself instead"
        );
        assert_eq!(
            apply("agents: [local]\n", &["agents.3.kind=latency"]).unwrap_err(),
            "--set \"agents.3.kind=latency\": agents is a list of 1: expected an index from 0 to 0"
        );
    }

    #[test]
    fn segments_treat_indices_as_parts() {
        assert_eq!(segments("agents[1].kind"), ["agents", "1", "kind"]);
        assert_eq!(segments("agents.1.kind"), ["agents", "1", "kind"]);
        assert_eq!(segments("load"), ["load"]);
    }
}
