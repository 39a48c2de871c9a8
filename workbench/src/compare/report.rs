//! The report of a recorded comparison (written by `vernier compare --record DIR`).

/// The file a comparison is recorded in, inside the directory `--record` names.
pub const COMPARISON_FILE: &str = "comparison.json";
