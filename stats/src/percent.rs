//! How a percentile is written for people: "99.9", not `99.90000000000001`, shared by the
//! errors and the percentiles' own display.

/// "99.99" for 0.9999: a fraction written as the percent a person would type.
pub(crate) fn format_percentile(p: f64) -> String {
    percent_text(p * 100.0)
}

/// A percent as a person would type it, to a millionth of a percent: "99.9" for a value
/// that went through arithmetic (`0.999 * 100.0` is `99.90000000000001`), "50" for 50.
pub(crate) fn percent_text(percent: f64) -> String {
    let s = format!("{percent:.6}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}
