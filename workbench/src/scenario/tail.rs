//! `ci.tail`: which tail a point's CI target is for.

use super::context::Context;
use super::error::ScenarioError;
use super::types::{Method, Tail};

/// Which tail the CI is for: without the host's stalls unless the file asks for every
/// request, or asks for Lancet's method, which knows only that tail.
pub(super) fn tail(
    context: &Context<'_>,
    tail: Option<&str>,
    method: Method,
) -> Result<Tail, ScenarioError> {
    let lancet = method == Method::Lancet;
    match tail.map(|t| t.replace('-', "_")).as_deref() {
        None if lancet => Ok(Tail::WithStalls),
        None => Ok(Tail::default()),
        Some("with_stalls") => Ok(Tail::WithStalls),
        Some("without_stalls") if lancet => Err(context.bad(
            "ci.tail",
            "without_stalls",
            "expected with_stalls under method: lancet, whose procedure has no tail without \
             the host's stalls",
        )),
        Some("without_stalls") => Ok(Tail::WithoutStalls),
        Some(_) => Err(context.bad(
            "ci.tail",
            tail.unwrap_or_default(),
            "expected without_stalls (the server's own tail: the requests no stall of the \
             host touched) or with_stalls (every request)",
        )),
    }
}
