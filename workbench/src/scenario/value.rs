//! A YAML value as the user wrote it, for quoting in errors: shared by the overrides, the
//! plans and the checks of phase 2.

use serde_yaml::Value;

/// A YAML value as the user wrote it, for quoting in errors.
pub(crate) fn show(value: &Value) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => s.clone(),
        other => serde_json::to_string(other).unwrap_or_else(|_| format!("{other:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_shown_as_written() {
        let value: Value = serde_yaml::from_str("[1000, -5, {a: x}]").unwrap();
        assert_eq!(show(&value), r#"[1000,-5,{"a":"x"}]"#);
        assert_eq!(show(&Value::from(2.5)), "2.5");
    }
}
