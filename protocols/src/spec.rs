//! What the spec strings of scenario files (`exp:10us`, `zipf:0.99`, `memcached`) share: their
//! error, the duration syntax, and serde as the string itself.

mod duration;

pub(crate) use duration::{format_duration, parse_duration};

/// Parses a positive duration as scenario files and command lines write it: `10us`,
/// `2.5ms`, `750ns`, `30s` (units ns, us, µs, ms, s; exact to the nanosecond).
pub fn duration_from_spec(text: &str) -> Result<std::time::Duration, SpecError> {
    match parse_duration(text) {
        Ok(d) if !d.is_zero() => Ok(d),
        Ok(_) => Err(SpecError::new(
            "duration",
            text,
            "expected a positive duration, as in 30s",
        )),
        Err(expected) => Err(SpecError::new(
            "duration",
            text,
            format!("expected {expected}, as in 30s"),
        )),
    }
}

/// A spec string (distribution, inter-arrival process, protocol, key selection) that could not
/// be parsed.
///
/// The message quotes the spec and says what was expected, with an example, because it is
/// read by someone editing a scenario file who needs to know what to type instead:
/// `invalid distribution "exp:10": expected a duration with a unit (ns, us, ms, s), as in exp:10us`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid {what} {spec:?}: {expected}")]
pub struct SpecError {
    what: &'static str,
    spec: String,
    expected: String,
}

impl SpecError {
    pub(crate) fn new(what: &'static str, spec: &str, expected: impl Into<String>) -> Self {
        SpecError {
            what,
            spec: spec.to_owned(),
            expected: expected.into(),
        }
    }

    /// The spec as it was given.
    pub fn spec(&self) -> &str {
        &self.spec
    }

    /// What was expected instead, with an example of a valid spec.
    pub fn expected(&self) -> &str {
        &self.expected
    }
}

/// Implements `Serialize` and `Deserialize` as the type's spec string (its `Display` and
/// `FromStr`), so scenario files say `service: exp:20us` rather than a nested map, and a bad
/// spec's error is the [`SpecError`] message.
macro_rules! serde_as_spec_string {
    ($ty:ty, $expecting:literal) => {
        impl serde::Serialize for $ty {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.collect_str(self)
            }
        }

        impl<'de> serde::Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                struct SpecVisitor;

                impl serde::de::Visitor<'_> for SpecVisitor {
                    type Value = $ty;

                    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        f.write_str($expecting)
                    }

                    fn visit_str<E: serde::de::Error>(self, spec: &str) -> Result<$ty, E> {
                        spec.parse().map_err(E::custom)
                    }
                }

                deserializer.deserialize_str(SpecVisitor)
            }
        }
    };
}

pub(crate) use serde_as_spec_string;
