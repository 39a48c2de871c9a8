//! The properties the scenario loader must have on any text, checked by the fuzz target.

use std::path::Path;

use vernier_workbench::scenario::{Scenario, ScenarioError};

/// The file name the fuzzed text is loaded as, which every error must name.
pub const SOURCE: &str = "fuzz/scenario.yaml";

/// Loads `text` as the scenario file [`SOURCE`] and checks: no panic; an error names the
/// file, and the line it gives is one of the text's (as YAML counts them), written after
/// the file's name; a field error names a field; a scenario keeps its text verbatim, loads
/// the same again from it, and loads the same from its YAML written back (what `--set`
/// does to a file).
pub fn check_scenario(text: &str) {
    let source = Path::new(SOURCE);
    match Scenario::from_yaml(text, Some(source), &[]) {
        Err(error) => check_error(text, &error),
        Ok(scenario) => {
            assert_eq!(scenario.yaml, text, "the scenario's text is not the file's");
            assert_eq!(
                Scenario::from_yaml(&scenario.yaml, Some(source), &[]).ok(),
                Some(scenario.clone()),
                "the scenario loads differently from its own text"
            );
            check_written_back(text, &scenario);
        }
    }
}

/// What every error from a file (no overrides) says: where it is.
fn check_error(text: &str, error: &ScenarioError) {
    let shown = error.to_string();
    assert_eq!(error.path(), Some(Path::new(SOURCE)), "{shown}");
    match error.line() {
        Some(line) => {
            // YAML's lines: "\r\n", and (YAML 1.1, as libyaml reads it) a lone "\r", NEL,
            // LS and PS each end one, as "\n" does; and libyaml ends the last line itself at
            // the end of the text, so that an unfinished value is one line past it.
            let lines = text
                .replace("\r\n", "\n")
                .split(['\n', '\r', '\u{85}', '\u{2028}', '\u{2029}'])
                .count()
                + 1;
            assert!(
                (1..=lines).contains(&line),
                "line {line} of a {lines}-line text: {shown}"
            );
            assert!(shown.starts_with(&format!("{SOURCE}:{line}: ")), "{shown}");
        }
        None => assert!(shown.starts_with(&format!("{SOURCE}: ")), "{shown}"),
    }
    match error {
        ScenarioError::Syntax { .. } => {}
        ScenarioError::Invalid { field, .. } => {
            assert!(!field.is_empty(), "no field named: {shown}");
        }
        other => panic!("a file without overrides gave {other:?}"),
    }
}

/// `--set` writes the scenario back as YAML (`serde_yaml::to_string`) before reading it: the
/// same document must give the same scenario, but for the text it keeps.
fn check_written_back(text: &str, scenario: &Scenario) {
    let Ok(document) = serde_yaml::from_str::<serde_yaml::Value>(text) else {
        panic!("a scenario loaded from text that is not YAML");
    };
    let Ok(written) = serde_yaml::to_string(&document) else {
        return;
    };
    match Scenario::from_yaml(&written, Some(Path::new(SOURCE)), &[]) {
        Ok(again) => assert_eq!(
            Scenario {
                yaml: text.to_owned(),
                ..again
            },
            *scenario,
            "written back as {written:?}"
        ),
        Err(e) if is_leading_zero_number(&e) => {}
        Err(e) => panic!("written back as {written:?}, it no longer loads: {e}"),
    }
}

/// Known, and left as it is: serde_yaml reads a plain `021` into a number field as 21, but
/// into a `Value` as the text "021", which it writes back quoted; so a number written with
/// a leading zero loads from the file, and is refused ("expected a number") once `--set`
/// has rewritten it.
fn is_leading_zero_number(error: &ScenarioError) -> bool {
    let ScenarioError::Invalid {
        value: Some(value), ..
    } = error
    else {
        return false;
    };
    let digits = value.trim_start_matches(['+', '-']);
    digits.starts_with('0')
        && digits.as_bytes().get(1).is_some_and(u8::is_ascii_digit)
        && digits.parse::<f64>().is_ok()
}
