//! Parsers of argument values that several subcommands share, for clap's `value_parser`.

/// A positive duration as scenario files write it (`30s`, `500ms`, `1.5s`), for clap.
pub(crate) fn duration_arg(text: &str) -> Result<std::time::Duration, String> {
    vernier_protocols::duration_from_spec(text).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_are_written_as_in_specs() {
        assert_eq!(duration_arg("30s"), Ok(std::time::Duration::from_secs(30)));
        assert_eq!(
            duration_arg("1.5ms"),
            Ok(std::time::Duration::from_micros(1500))
        );
        for bad in ["30", "0s", "-1s", "soon"] {
            let err = duration_arg(bad).unwrap_err();
            assert!(
                err.starts_with(&format!("invalid duration {bad:?}: expected a")),
                "{bad}: {err}"
            );
        }
    }
}
