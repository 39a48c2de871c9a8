//! A request template, parsed once and written per request without allocating beyond the
//! output's growth.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::dist::Sampler;
use crate::protocol::vocab::{EncodeError, MAX_VALUE_LEN};

use super::error::{NAME, TemplateError};
use super::field::{self, Field, Format};
use super::text::{self, Form};

/// A request template: literal bytes and `{fields}`, parsed from text with escapes
/// ([`Template::text`]) or from hex ([`Template::hex`]). Parsing never panics, whatever
/// the text; a template that parses is checked against its framing by
/// [`Declared::new`](super::Declared::new).
#[derive(Debug, Clone)]
pub struct Template {
    /// The literal bytes, all of them, back to back.
    bytes: Vec<u8>,
    parts: Vec<Part>,
}

/// One piece of a template, in order.
#[derive(Debug, Clone, Copy)]
enum Part {
    /// `bytes[start..end]`.
    Literal(usize, usize),
    Key,
    KeyLen(Format),
    Seq(Format),
    Len(Format),
    /// Random bytes, as many as the sampler draws.
    Random(Sampler),
}

/// What `{len}` counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum LenRule {
    /// The bytes after the field.
    AfterField,
    /// The whole request, the field included.
    WholeRequest,
}

/// What one request is written from.
#[derive(Debug, Clone, Copy)]
pub(super) struct Input<'a> {
    pub(super) key: &'a [u8],
    pub(super) seq: u32,
    pub(super) entropy: u64,
}

impl Template {
    /// Parses a template written as text: characters are their UTF-8 bytes, `\r \n \t \0
    /// \\ \xHH` are escapes, `{{` and `}}` literal braces, and `{key}`, `{key_len:FMT}`,
    /// `{seq:FMT}`, `{len:FMT}` and `{random:SIZE}` fields.
    pub fn text(text: &str) -> Result<Template, TemplateError> {
        Template::parse(text, Form::Text)
    }

    /// Parses a template written as hex digits (whitespace ignored) and the same fields as
    /// [`Template::text`].
    pub fn hex(hex: &str) -> Result<Template, TemplateError> {
        Template::parse(hex, Form::Hex)
    }

    fn parse(text: &str, form: Form) -> Result<Template, TemplateError> {
        let scanned = text::scan(text, form)?;
        if scanned.bytes.is_empty() && scanned.fields.is_empty() {
            return Err(TemplateError::new(
                "empty: expected at least one byte or field",
            ));
        }
        let mut parts = Vec::with_capacity(2 * scanned.fields.len() + 1);
        let mut from = 0;
        for &(at, field) in &scanned.fields {
            if at > from {
                parts.push(Part::Literal(from, at));
            }
            from = at;
            parts.push(match field {
                Field::Key => Part::Key,
                Field::KeyLen(format) => Part::KeyLen(format),
                Field::Seq(format) => Part::Seq(format),
                Field::Len(format) => Part::Len(format),
                Field::Random(size) => Part::Random(size.sampler()),
            });
        }
        if scanned.bytes.len() > from {
            parts.push(Part::Literal(from, scanned.bytes.len()));
        }
        Ok(Template {
            bytes: scanned.bytes,
            parts,
        })
    }

    /// The format of its `{len}` field, if it has one.
    pub(super) fn len_format(&self) -> Option<Format> {
        self.parts.iter().find_map(|part| match part {
            Part::Len(format) => Some(*format),
            _ => None,
        })
    }

    /// The bytes every request has whatever its key and random draws: literals and binary
    /// fields (a decimal at least one digit).
    pub(super) fn fixed_len(&self) -> usize {
        self.parts
            .iter()
            .map(|part| match part {
                Part::Literal(start, end) => end - start,
                Part::KeyLen(format) | Part::Seq(format) | Part::Len(format) => {
                    format.width().unwrap_or(1)
                }
                Part::Key | Part::Random(_) => 0,
            })
            .sum()
    }

    /// Appends one request to `out`. On error `out` may hold part of it: the caller
    /// truncates.
    pub(super) fn write(
        &self,
        input: &Input<'_>,
        rule: LenRule,
        out: &mut Vec<u8>,
    ) -> Result<(), EncodeError> {
        let start = out.len();
        let mut rng = SmallRng::seed_from_u64(input.entropy);
        let mut len_at = None;
        for part in &self.parts {
            match *part {
                Part::Literal(from, to) => {
                    out.extend_from_slice(self.bytes.get(from..to).unwrap_or_default());
                }
                Part::Key => out.extend_from_slice(input.key),
                Part::KeyLen(format) => {
                    let len = u64::try_from(input.key.len()).unwrap_or(u64::MAX);
                    push(out, format, checked("key_len", format, len)?);
                }
                Part::Seq(format) => push(out, format, u64::from(input.seq) & format.max()),
                Part::Len(format) => {
                    len_at = Some((out.len(), format));
                    // A placeholder, overwritten once the length is known; a decimal is
                    // inserted instead, its width being its value's.
                    let width = format.width().unwrap_or(0);
                    out.resize(out.len() + width, 0);
                }
                Part::Random(sampler) => push_random(out, &sampler, &mut rng)?,
            }
        }
        match len_at {
            Some((at, format)) => patch_len(out, start, at, format, rule),
            None => Ok(()),
        }
    }
}

/// Appends `value` in `format`.
fn push(out: &mut Vec<u8>, format: Format, value: u64) {
    let (bytes, len) = format.bytes(value);
    out.extend_from_slice(bytes.get(..len).unwrap_or_default());
}

/// `value` if it fits `format`, else the error naming `field`.
fn checked(field: &'static str, format: Format, value: u64) -> Result<u64, EncodeError> {
    if value > format.max() {
        return Err(EncodeError::FieldOverflow {
            protocol: NAME,
            field,
            format: format.name(),
            value,
            max: format.max(),
        });
    }
    Ok(value)
}

/// Appends random bytes, as many as `sampler` draws.
fn push_random(
    out: &mut Vec<u8>,
    sampler: &Sampler,
    rng: &mut SmallRng,
) -> Result<(), EncodeError> {
    // `as` saturates (and makes NaN 0), so a wild draw is refused below, not wrapped.
    let len = sampler.sample(rng).round() as u64;
    let len = usize::try_from(len)
        .ok()
        .filter(|&len| len <= MAX_VALUE_LEN)
        .ok_or(EncodeError::ValueTooLarge {
            protocol: NAME,
            len: usize::try_from(len).unwrap_or(usize::MAX),
            max: MAX_VALUE_LEN,
        })?;
    let from = out.len();
    out.resize(from + len, 0);
    if let Some(random) = out.get_mut(from..) {
        rng.fill_bytes(random);
    }
    Ok(())
}

/// Writes the `{len}` field at `at`, the request having started at `start`.
fn patch_len(
    out: &mut Vec<u8>,
    start: usize,
    at: usize,
    format: Format,
    rule: LenRule,
) -> Result<(), EncodeError> {
    let end = out.len();
    let count = |len: usize| u64::try_from(len).unwrap_or(u64::MAX);
    match format.width() {
        Some(width) => {
            let value = match rule {
                LenRule::AfterField => count(end - (at + width)),
                LenRule::WholeRequest => count(end - start),
            };
            let (bytes, len) = format.bytes(checked("len", format, value)?);
            if let (Some(field), Some(bytes)) = (out.get_mut(at..at + width), bytes.get(..len)) {
                field.copy_from_slice(bytes);
            }
        }
        None => {
            let value = match rule {
                LenRule::AfterField => count(end - at),
                // The digits count themselves: the least width that holds the total.
                LenRule::WholeRequest => {
                    let rest = count(end - start);
                    (1..=20)
                        .map(|digits| rest.saturating_add(digits))
                        .find(|&total| field::decimal_digits(total) <= (total - rest) as usize)
                        .unwrap_or(u64::MAX)
                }
            };
            let (digits, len) = format.bytes(value);
            out.resize(end + len, 0);
            out.copy_within(at..end, at + len);
            if let (Some(field), Some(digits)) = (out.get_mut(at..at + len), digits.get(..len)) {
                field.copy_from_slice(digits);
            }
        }
    }
    Ok(())
}
