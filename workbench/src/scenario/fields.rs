//! Readers of the field types several parts of phase 2 share, durations (with minutes and
//! hours) and percentiles, each error naming its field and giving an example.

use std::time::Duration;

use vernier_protocols::duration_from_spec;
use vernier_stats::Percentile;

use super::context::Context;
use super::error::ScenarioError;

/// A percentile strictly between 0 and 100: p0 and p100 are the extremes, which no finite
/// sample estimates with a confidence interval.
pub(crate) fn percentile_in_range(
    context: &Context<'_>,
    field: &str,
    percentile: f64,
) -> Result<Percentile, ScenarioError> {
    Percentile::from_percent(percentile).map_err(|_| {
        context.bad(
            field,
            percentile,
            "expected a percentile strictly between 0 and 100, as in 99",
        )
    })
}

/// A duration field, or its default.
pub(super) fn duration_or(
    context: &Context<'_>,
    field: &str,
    text: Option<String>,
    default: &str,
) -> Result<Duration, ScenarioError> {
    duration(context, field, text.as_deref().unwrap_or(default), default)
}

/// A positive duration as specs write it (`10us`, `1.5s`), plus minutes and hours (`5m`,
/// `1h`) for the limits of long runs.
pub(crate) fn duration(
    context: &Context<'_>,
    field: &str,
    text: &str,
    example: &str,
) -> Result<Duration, ScenarioError> {
    parse_duration(text).map_err(|expected| {
        context.bad(field, text, format!("expected {expected}, as in {example}"))
    })
}

/// How [`parse_duration`]'s message for text that is no duration at all starts.
pub(super) const UNREADABLE_DURATION: &str = "a duration with a unit";

/// The duration, or what was expected instead (without an example).
pub(super) fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let (spec, factor) = match (text.strip_suffix('m'), text.strip_suffix('h')) {
        (Some(minutes), _) => (format!("{minutes}s"), 60),
        (_, Some(hours)) => (format!("{hours}s"), 3600),
        _ => (text.to_owned(), 1),
    };
    match duration_from_spec(&spec) {
        Ok(duration) => duration
            .checked_mul(factor)
            .ok_or_else(|| "a duration under 584 years".to_owned()),
        Err(e) => {
            let expected = e.expected();
            let expected = expected.strip_prefix("expected ").unwrap_or(expected);
            let expected = expected.split(", as in").next().unwrap_or(expected);
            Err(expected.replace("(ns, us, ms, s)", "(ns, us, ms, s, m, h)"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_take_spec_units_and_minutes_and_hours() {
        assert_eq!(parse_duration("10us"), Ok(Duration::from_micros(10)));
        assert_eq!(parse_duration("5m"), Ok(Duration::from_secs(300)));
        assert_eq!(parse_duration("1.5m"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("2h"), Ok(Duration::from_secs(7200)));
        assert_eq!(parse_duration("5ms"), Ok(Duration::from_millis(5)));
        assert_eq!(
            parse_duration("10 parsecs"),
            Err("a duration with a unit (ns, us, ms, s, m, h)".into())
        );
        assert_eq!(parse_duration("0m"), Err("a positive duration".into()));
        // ci.width tells this message apart from a duration's other complaints.
        assert!(parse_duration("abc").is_err_and(|e| e.starts_with(UNREADABLE_DURATION)));
    }
}
