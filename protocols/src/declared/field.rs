//! The `{fields}` of a request template and the formats numbers are written in.

use crate::dist::SizeDist;

use super::error::TemplateError;

/// How a number is written: binary of a fixed width and order, or ASCII decimal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Format {
    U8,
    U16Be,
    U16Le,
    U32Be,
    U32Le,
    U64Be,
    U64Le,
    Dec,
}

/// Every format, for parsing by name.
const FORMATS: [Format; 8] = [
    Format::U8,
    Format::U16Be,
    Format::U16Le,
    Format::U32Be,
    Format::U32Le,
    Format::U64Be,
    Format::U64Le,
    Format::Dec,
];

const EXPECTED_FORMAT: &str = "expected u8, u16be, u16le, u32be, u32le, u64be, u64le or dec";

impl Format {
    pub(super) fn name(self) -> &'static str {
        match self {
            Format::U8 => "u8",
            Format::U16Be => "u16be",
            Format::U16Le => "u16le",
            Format::U32Be => "u32be",
            Format::U32Le => "u32le",
            Format::U64Be => "u64be",
            Format::U64Le => "u64le",
            Format::Dec => "dec",
        }
    }

    /// The width in bytes; `None` for decimal, whose width is its number's.
    pub(super) fn width(self) -> Option<usize> {
        match self {
            Format::U8 => Some(1),
            Format::U16Be | Format::U16Le => Some(2),
            Format::U32Be | Format::U32Le => Some(4),
            Format::U64Be | Format::U64Le => Some(8),
            Format::Dec => None,
        }
    }

    /// The largest number the format holds.
    pub(super) fn max(self) -> u64 {
        match self.width() {
            Some(width @ 1..8) => (1u64 << (8 * width)) - 1,
            _ => u64::MAX,
        }
    }

    /// `value` in this format, in the first `len` bytes of the array: no allocation, no
    /// formatting machinery. `value` must fit ([`Format::max`]); higher bits are dropped.
    pub(super) fn bytes(self, value: u64) -> ([u8; 20], usize) {
        let mut out = [0u8; 20];
        let (wide, width) = match self {
            Format::Dec => return decimal(value),
            Format::U8 => (value.to_le_bytes(), 1),
            Format::U16Le => (value.to_le_bytes(), 2),
            Format::U32Le => (value.to_le_bytes(), 4),
            Format::U64Le => (value.to_le_bytes(), 8),
            // The big-endian forms are the last bytes of the big-endian u64.
            Format::U16Be => (value.to_be_bytes(), 2),
            Format::U32Be => (value.to_be_bytes(), 4),
            Format::U64Be => (value.to_be_bytes(), 8),
        };
        let taken = match self {
            Format::U16Be | Format::U32Be | Format::U64Be => &wide[8 - width..],
            _ => &wide[..width],
        };
        out[..width].copy_from_slice(taken);
        (out, width)
    }
}

/// `value` in ASCII decimal, in the first `len` bytes.
fn decimal(value: u64) -> ([u8; 20], usize) {
    let (mut digits, start) = crate::protocol::wire::decimal_digits(value);
    let len = digits.len() - start;
    digits.copy_within(start.., 0);
    (digits, len)
}

/// The number of decimal digits of `value`.
pub(super) fn decimal_digits(value: u64) -> usize {
    value.checked_ilog10().map_or(1, |log| log as usize + 1)
}

/// One `{field}` of a template.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Field {
    /// The workload's key.
    Key,
    /// The key's length.
    KeyLen(Format),
    /// The request's sequence number, truncated to the format's width.
    Seq(Format),
    /// The frame's length, written once the rest of the request is.
    Len(Format),
    /// Random bytes, as many as drawn from the distribution.
    Random(SizeDist),
}

const EXPECTED_FIELD: &str = "expected key, key_len:FMT, seq:FMT, len:FMT or random:SIZE";

/// Parses the text between `{` and `}`; `at` is the byte of the `{`, for messages.
pub(super) fn parse(body: &str, at: usize) -> Result<Field, TemplateError> {
    let (name, argument) = match body.split_once(':') {
        Some((name, argument)) => (name, Some(argument)),
        None => (body, None),
    };
    let format = |argument: Option<&str>| {
        let Some(argument) = argument else {
            return Err(TemplateError::new(format!(
                "{{{name}}} at byte {at} needs a format, as in {{{name}:u32be}}: \
                 {EXPECTED_FORMAT}"
            )));
        };
        FORMATS
            .into_iter()
            .find(|format| format.name() == argument)
            .ok_or_else(|| {
                TemplateError::new(format!(
                    "unknown format {{{body}}} at byte {at}: {EXPECTED_FORMAT}"
                ))
            })
    };
    match (name, argument) {
        ("key", None) => Ok(Field::Key),
        ("key", Some(_)) => Err(TemplateError::new(format!(
            "{{{body}}} at byte {at}: {{key}} takes no format, the key's bytes are written as they are"
        ))),
        ("key_len", _) => format(argument).map(Field::KeyLen),
        ("seq", _) => format(argument).map(Field::Seq),
        ("len", _) => format(argument).map(Field::Len),
        ("random", Some(size)) => size
            .parse::<SizeDist>()
            .map(Field::Random)
            .map_err(|error| {
                TemplateError::new(format!("bad size {{{body}}} at byte {at}: {error}"))
            }),
        ("random", None) => Err(TemplateError::new(format!(
            "{{random}} at byte {at} needs a size, as in {{random:fixed:100}} or \
             {{random:uniform:10:100}}"
        ))),
        _ => Err(TemplateError::new(format!(
            "unknown field {{{body}}} at byte {at}: {EXPECTED_FIELD}"
        ))),
    }
}
