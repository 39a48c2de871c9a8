//! A tool's output that its parser cannot read, shared by the parsers of every tool.

use thiserror::Error as ThisError;

use crate::validate::servers::Tool;

/// A tool's output that its parser cannot read: the tool, the line (1-based) when one is
/// to blame, and what was wrong.
#[derive(Debug, Clone, PartialEq, ThisError)]
#[error("{tool}'s output{}: {what}", line.map(|l| format!(", line {l}")).unwrap_or_default())]
pub struct OutputError {
    /// The tool.
    pub tool: Tool,
    /// The line, 1-based.
    pub line: Option<usize>,
    /// What was wrong, quoting what was found.
    pub what: String,
}

impl OutputError {
    pub(super) fn new(tool: Tool, line: Option<usize>, what: impl Into<String>) -> OutputError {
        OutputError {
            tool,
            line,
            what: what.into(),
        }
    }
}

/// A tool's output as text, or an error naming the first byte that is not UTF-8.
pub(super) fn text(tool: Tool, output: &[u8]) -> Result<&str, OutputError> {
    std::str::from_utf8(output).map_err(|e| {
        OutputError::new(
            tool,
            None,
            format!("not UTF-8 text (byte {})", e.valid_up_to()),
        )
    })
}
