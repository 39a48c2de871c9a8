//! What can be wrong with a declaration: where, and what was expected there.

/// The protocol's name in encode and parse errors.
pub(super) const NAME: &str = "declared";

/// A declaration that cannot be compiled into a protocol. The message starts with where the
/// mistake is, as a path into the declaration, and says what was expected, e.g.
/// `framing.length.bytes: 3: expected 1, 2, 4 or 8`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{at}: {problem}")]
pub struct DeclareError {
    at: String,
    problem: String,
}

impl DeclareError {
    pub(super) fn new(at: impl Into<String>, problem: impl Into<String>) -> DeclareError {
        DeclareError {
            at: at.into(),
            problem: problem.into(),
        }
    }

    /// Where the mistake is: `framing.length.bytes`, `requests[1].text`, `reply.ok`.
    pub fn at(&self) -> &str {
        &self.at
    }

    /// What was wrong and what was expected, without the where.
    pub fn problem(&self) -> &str {
        &self.problem
    }
}

/// A template (or a text with escapes, or hex) that cannot be parsed. The message says what
/// and at which byte of the text, e.g. `unclosed { at byte 4: expected }, or {{ for a
/// literal {`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct TemplateError(String);

impl TemplateError {
    pub(super) fn new(problem: impl Into<String>) -> TemplateError {
        TemplateError(problem.into())
    }

    /// The error where it was found: `at` is its path in the declaration.
    pub(super) fn at(self, at: impl Into<String>) -> DeclareError {
        DeclareError::new(at, self.0)
    }
}
