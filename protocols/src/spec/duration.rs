//! Durations in spec strings: `10us`, `2.5ms`, `750ns`, `1s`.
//!
//! Parsing is exact decimal arithmetic on whole nanoseconds, not floating point, so that
//! `Display` round-trips: `1.1us` is 1100 ns and prints as `1.1us` again.

use std::time::Duration;

/// What a duration must look like; the callers add an example of the spec it sits in.
pub(crate) const EXPECTED_DURATION: &str = "a duration with a unit (ns, us, ms, s)";

/// Units, largest first (the order [`format_duration`] tries them in). `µs` (micro sign) and
/// `μs` (Greek mu) are both accepted because both are what people type.
const UNITS: [(&str, u64, u32); 6] = [
    ("s", 1_000_000_000, 9),
    ("ms", 1_000_000, 6),
    ("us", 1_000, 3),
    ("µs", 1_000, 3),
    ("μs", 1_000, 3),
    ("ns", 1, 0),
];

/// Parses `DIGITS[.DIGITS]UNIT`. The error is the expectation that was not met, phrased to
/// follow "expected" in a [`SpecError`](super::SpecError).
pub(crate) fn parse_duration(text: &str) -> Result<Duration, &'static str> {
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .ok_or(EXPECTED_DURATION)?;
    let (number, unit) = text.split_at(split);
    let &(_, ns_per_unit, unit_digits) = UNITS
        .iter()
        .find(|(name, _, _)| *name == unit)
        .ok_or(EXPECTED_DURATION)?;
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    let all_digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !all_digits(whole) || (number.contains('.') && !all_digits(fraction)) {
        return Err(EXPECTED_DURATION);
    }

    // The fraction contributes its first `unit_digits` digits as nanoseconds; any further
    // digit must be zero, since a part of a nanosecond cannot be represented.
    let (significant, rest) = fraction.split_at(fraction.len().min(unit_digits as usize));
    if rest.bytes().any(|b| b != b'0') {
        return Err("a duration in whole nanoseconds");
    }
    let mut fraction_ns: u64 = 0;
    for b in significant.bytes() {
        fraction_ns = fraction_ns * 10 + u64::from(b - b'0');
    }
    fraction_ns *= 10u64.pow(unit_digits - significant.len() as u32);

    const TOO_LARGE: &str = "a duration under 584 years";
    let whole: u64 = whole.parse().map_err(|_| TOO_LARGE)?;
    let nanos = whole
        .checked_mul(ns_per_unit)
        .and_then(|ns| ns.checked_add(fraction_ns))
        .ok_or(TOO_LARGE)?;
    Ok(Duration::from_nanos(nanos))
}

/// Prints a duration in the largest unit it is at least one of, with as many decimals as
/// needed to be exact (`1500ns` prints as `1.5us`).
///
/// Durations past `u64::MAX` nanoseconds cannot come from [`parse_duration`]; they print
/// saturated rather than wrong-by-wrapping.
pub(crate) fn format_duration(duration: Duration) -> String {
    let nanos = u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX);
    let (unit, ns_per_unit, unit_digits) = UNITS
        .iter()
        .copied()
        .find(|&(_, ns_per_unit, _)| nanos >= ns_per_unit)
        .unwrap_or(("ns", 1, 0));
    let whole = nanos / ns_per_unit;
    let fraction = nanos % ns_per_unit;
    if fraction == 0 {
        format!("{whole}{unit}")
    } else {
        let digits = format!("{fraction:0width$}", width = unit_digits as usize);
        format!("{whole}.{}{unit}", digits.trim_end_matches('0'))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_unit_exactly() {
        let cases = [
            ("750ns", 750),
            ("10us", 10_000),
            ("10µs", 10_000),
            ("10μs", 10_000),
            ("2.5us", 2_500),
            ("1.1us", 1_100),
            ("0.001ms", 1_000),
            ("1.000000001s", 1_000_000_001),
            ("3ms", 3_000_000),
            ("0ns", 0),
            ("2.50us", 2_500),
            ("1.0ns", 1),
        ];
        for (text, nanos) in cases {
            assert_eq!(
                parse_duration(text),
                Ok(Duration::from_nanos(nanos)),
                "{text}"
            );
        }
    }

    #[test]
    fn rejects_what_is_not_a_duration() {
        for text in [
            "", "10", "us", "10 us", "10u", "10US", ".5us", "5.us", "1.2.3us", "-1us", "+1us",
            "1e3us", "10usx", "inf",
        ] {
            assert_eq!(parse_duration(text), Err(EXPECTED_DURATION), "{text:?}");
        }
        assert_eq!(
            parse_duration("1.5ns"),
            Err("a duration in whole nanoseconds")
        );
        assert_eq!(
            parse_duration("18446744073709551616ns"),
            Err("a duration under 584 years")
        );
        assert_eq!(
            parse_duration("18446744074s"),
            Err("a duration under 584 years")
        );
        assert_eq!(
            parse_duration("18446744073709551615ns"),
            Ok(Duration::from_nanos(u64::MAX))
        );
    }

    #[test]
    fn formats_in_the_largest_whole_unit() {
        let cases = [
            (0, "0ns"),
            (999, "999ns"),
            (1_000, "1us"),
            (1_500, "1.5us"),
            (1_001, "1.001us"),
            (20_000_000, "20ms"),
            (1_000_000_001, "1.000000001s"),
            (90_000_000_000, "90s"),
        ];
        for (nanos, text) in cases {
            assert_eq!(format_duration(Duration::from_nanos(nanos)), text);
        }
    }

    #[test]
    fn formatting_round_trips() {
        for nanos in [
            0,
            1,
            7,
            999,
            1_000,
            1_234,
            999_999,
            1_000_001,
            123_456_789_012,
            u64::MAX,
        ] {
            let duration = Duration::from_nanos(nanos);
            assert_eq!(parse_duration(&format_duration(duration)), Ok(duration));
        }
    }
}
