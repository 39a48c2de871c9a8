//! A figure that may be absent: a number, or NaN where it could not be computed. JSON has
//! no NaN, so serde_json writes such a figure as `null`, and [`Figure`] reads `null` back as
//! NaN. Reasons, findings and comparisons carry their figures as this type.

use std::fmt;
use std::ops::{Add, Deref, Div, Mul, Neg, Sub};

use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A number that may be absent (NaN inside, `null` in JSON).
#[derive(Clone, Copy, Default, PartialEq, PartialOrd)]
pub struct Figure(f64);

impl Figure {
    /// No figure: NaN, written as `null`.
    pub const ABSENT: Figure = Figure(f64::NAN);

    /// The figure `value` (NaN for none).
    pub const fn new(value: f64) -> Self {
        Figure(value)
    }

    /// The number, NaN when absent.
    pub const fn get(self) -> f64 {
        self.0
    }
}

impl From<f64> for Figure {
    fn from(value: f64) -> Self {
        Figure(value)
    }
}

impl From<Figure> for f64 {
    fn from(figure: Figure) -> Self {
        figure.0
    }
}

impl Deref for Figure {
    type Target = f64;
    fn deref(&self) -> &f64 {
        &self.0
    }
}

impl fmt::Display for Figure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl fmt::Debug for Figure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl PartialEq<f64> for Figure {
    fn eq(&self, other: &f64) -> bool {
        self.0 == *other
    }
}

impl PartialOrd<f64> for Figure {
    fn partial_cmp(&self, other: &f64) -> Option<std::cmp::Ordering> {
        self.0.partial_cmp(other)
    }
}

impl PartialEq<Figure> for f64 {
    fn eq(&self, other: &Figure) -> bool {
        *self == other.0
    }
}

impl PartialOrd<Figure> for f64 {
    fn partial_cmp(&self, other: &Figure) -> Option<std::cmp::Ordering> {
        self.partial_cmp(&other.0)
    }
}

macro_rules! arithmetic {
    ($($op:ident $method:ident),*) => {$(
        impl $op<f64> for Figure {
            type Output = f64;
            fn $method(self, other: f64) -> f64 {
                self.0.$method(other)
            }
        }
        impl $op<Figure> for f64 {
            type Output = f64;
            fn $method(self, other: Figure) -> f64 {
                self.$method(other.0)
            }
        }
        impl $op<Figure> for Figure {
            type Output = f64;
            fn $method(self, other: Figure) -> f64 {
                self.0.$method(other.0)
            }
        }
    )*};
}
arithmetic!(Add add, Sub sub, Mul mul, Div div);

impl Neg for Figure {
    type Output = f64;
    fn neg(self) -> f64 {
        -self.0
    }
}

impl Serialize for Figure {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(self.0)
    }
}

impl<'de> Deserialize<'de> for Figure {
    /// A number, or `null` (what serde_json writes for NaN) read back as NaN.
    /// A missing field is not read as absent: that keeps an untagged enum choosing the
    /// variant whose fields are all there.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(FigureVisitor)
    }
}

struct FigureVisitor;

impl<'de> Visitor<'de> for FigureVisitor {
    type Value = Figure;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a number or null")
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Figure, E> {
        Ok(Figure(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Figure, E> {
        Ok(Figure(v as f64))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Figure, E> {
        Ok(Figure(v as f64))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Figure, E> {
        Ok(Figure::ABSENT)
    }

    fn visit_none<E: de::Error>(self) -> Result<Figure, E> {
        Ok(Figure::ABSENT)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Figure, D::Error> {
        d.deserialize_any(FigureVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::Figure;

    #[test]
    fn a_figure_writes_nan_as_null_and_reads_it_back() {
        let written = serde_json::to_string(&[Figure::new(1.5), Figure::ABSENT]).unwrap();
        assert_eq!(written, "[1.5,null]");
        let read: Vec<Figure> = serde_json::from_str(&written).unwrap();
        assert_eq!(read[0], 1.5);
        assert!(read[1].is_nan());
        assert!(serde_json::from_str::<Figure>("\"x\"").is_err());
        #[derive(serde::Deserialize)]
        struct Holder {
            #[allow(dead_code)]
            figure: Figure,
        }
        assert!(serde_json::from_str::<Holder>("{}").is_err());
        assert!(serde_json::from_str::<Holder>("{\"figure\": 2}").is_ok());
    }
}
