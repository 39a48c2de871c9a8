//! The flags of `vernier run URL`, each the field of a scenario it sets.

use serde_yaml::Value;

/// A field a flag of `vernier run URL` sets: `--width 20%` is `ci.width: 20%`.
#[derive(Debug, Clone, PartialEq)]
pub struct Flag {
    /// The flag, as in `--width`.
    pub name: &'static str,
    /// The dotted field it sets, as in `ci.width`.
    pub field: &'static str,
    /// Its value, if the flag was given: as typed (the document's first line repeats the
    /// command) and as the YAML it sets.
    pub given: Option<(String, Value)>,
}
