//! Where a frame ends: by a length field, a delimiter, or a fixed size, never past
//! `max_frame`.

use crate::protocol::vocab::{MAX_VALUE_LEN, ParseError};

use super::declaration::{ByteOrder, Framing};
use super::error::{DeclareError, NAME};
use super::text::{self, Form};

/// A declaration's framing, checked.
#[derive(Debug, Clone)]
pub(super) struct Framer {
    rule: Rule,
    max_frame: usize,
}

#[derive(Debug, Clone)]
enum Rule {
    Length {
        offset: usize,
        width: usize,
        order: ByteOrder,
        counts_header: bool,
    },
    Delimiter(Vec<u8>),
    Fixed(usize),
}

impl Framer {
    /// Checks `framing` under `max_frame`.
    pub(super) fn new(framing: &Framing, max_frame: u64) -> Result<Framer, DeclareError> {
        let max_frame = usize::try_from(max_frame)
            .ok()
            .filter(|max| (1..=MAX_VALUE_LEN).contains(max))
            .ok_or_else(|| {
                DeclareError::new(
                    "max_frame",
                    format!("{max_frame}: expected from 1 to {MAX_VALUE_LEN} bytes"),
                )
            })?;
        let within = |at: &str, end: u64, what: &str| {
            if end > max_frame as u64 {
                return Err(DeclareError::new(
                    at,
                    format!(
                        "{what} ends at byte {end}, past max_frame ({max_frame}): expected it inside a frame"
                    ),
                ));
            }
            Ok(end as usize)
        };
        let rule = match (&framing.length, &framing.delimiter, framing.fixed) {
            (Some(length), None, None) => {
                let width = int_width("framing.length.bytes", length.bytes)?;
                let end = length.offset.saturating_add(width as u64);
                let end = within("framing.length.offset", end, "the length field")?;
                Rule::Length {
                    offset: end - width,
                    width,
                    order: length.order,
                    counts_header: length.counts_header,
                }
            }
            (None, Some(delimiter), None) => {
                let at = "framing.delimiter";
                let bytes = text::literal(delimiter, Form::Text).map_err(|e| e.at(at))?;
                if bytes.is_empty() {
                    return Err(DeclareError::new(
                        at,
                        r#"empty: expected at least one byte, as in "\r\n""#,
                    ));
                }
                within(at, bytes.len() as u64, "the delimiter")?;
                Rule::Delimiter(bytes)
            }
            (None, None, Some(fixed)) => {
                if fixed == 0 {
                    return Err(DeclareError::new(
                        "framing.fixed",
                        format!("0: expected a frame size from 1 to max_frame ({max_frame})"),
                    ));
                }
                Rule::Fixed(within("framing.fixed", fixed, "the frame")?)
            }
            (length, delimiter, fixed) => {
                let given: Vec<&str> = [
                    (length.is_some(), "length"),
                    (delimiter.is_some(), "delimiter"),
                    (fixed.is_some(), "fixed"),
                ]
                .into_iter()
                .filter_map(|(given, name)| given.then_some(name))
                .collect();
                let given = match given.as_slice() {
                    [] => "none".to_owned(),
                    names => names.join(" and "),
                };
                return Err(DeclareError::new(
                    "framing",
                    format!("exactly one of length, delimiter or fixed: got {given}"),
                ));
            }
        };
        Ok(Framer { rule, max_frame })
    }

    /// The length of the first frame in `buf`: `Ok(None)` if it has not all arrived, an
    /// error as soon as the bytes say it will be over `max_frame`. Reads nothing past the
    /// frame's end, so a frame is the same whether or not bytes follow it.
    pub(super) fn frame_len(&self, buf: &[u8]) -> Result<Option<usize>, ParseError> {
        let len = match self.rule {
            Rule::Length {
                offset,
                width,
                order,
                counts_header,
            } => {
                let header = offset + width;
                let Some(field) = buf.get(offset..header) else {
                    return Ok(None);
                };
                let value = read_uint(field, order);
                let total = if counts_header {
                    if value < header as u64 {
                        return Err(ParseError::new(
                            NAME,
                            format!(
                                "a length of {value}, shorter than the {header}-byte header it counts"
                            ),
                            buf,
                        ));
                    }
                    u128::from(value)
                } else {
                    u128::from(value) + header as u128
                };
                self.at_most_max(total, buf)?
            }
            Rule::Delimiter(ref delimiter) => {
                let window = buf.get(..self.max_frame).unwrap_or(buf);
                match find(window, delimiter) {
                    Some(at) => at + delimiter.len(),
                    None if buf.len() >= self.max_frame => {
                        return Err(ParseError::new(
                            NAME,
                            format!("no delimiter in {} bytes, the max_frame", self.max_frame),
                            buf,
                        ));
                    }
                    None => return Ok(None),
                }
            }
            Rule::Fixed(len) => len,
        };
        Ok((buf.len() >= len).then_some(len))
    }

    /// `total` if it is at most `max_frame`, else the error.
    fn at_most_max(&self, total: u128, buf: &[u8]) -> Result<usize, ParseError> {
        usize::try_from(total)
            .ok()
            .filter(|&total| total <= self.max_frame)
            .ok_or_else(|| {
                ParseError::new(
                    NAME,
                    format!(
                        "a frame of {total} bytes, over max_frame ({} bytes)",
                        self.max_frame
                    ),
                    buf,
                )
            })
    }

    /// The width of the length field, for length framing.
    pub(super) fn length_width(&self) -> Option<usize> {
        match self.rule {
            Rule::Length { width, .. } => Some(width),
            _ => None,
        }
    }

    /// Whether the length counts the whole frame.
    pub(super) fn counts_header(&self) -> bool {
        matches!(
            self.rule,
            Rule::Length {
                counts_header: true,
                ..
            }
        )
    }

    /// The size of every frame, for fixed framing.
    pub(super) fn fixed(&self) -> Option<usize> {
        match self.rule {
            Rule::Fixed(len) => Some(len),
            _ => None,
        }
    }

    /// The longest a frame can be, and how to name that in messages.
    pub(super) fn longest(&self) -> (usize, String) {
        match self.rule {
            Rule::Fixed(len) => (len, format!("the fixed {len}-byte frame")),
            _ => (self.max_frame, format!("max_frame ({})", self.max_frame)),
        }
    }
}

/// The width of a binary field given as `bytes`: 1, 2, 4 or 8; `at` names it.
pub(super) fn int_width(at: &str, bytes: u64) -> Result<usize, DeclareError> {
    match bytes {
        1 | 2 | 4 | 8 => Ok(bytes as usize),
        _ => Err(DeclareError::new(
            at,
            format!("{bytes}: expected 1, 2, 4 or 8"),
        )),
    }
}

/// The unsigned number in `bytes` (at most 8 of them) in `order`.
pub(super) fn read_uint(bytes: &[u8], order: ByteOrder) -> u64 {
    let shift_in = |n: u64, &byte: &u8| n << 8 | u64::from(byte);
    match order {
        ByteOrder::Big => bytes.iter().fold(0, shift_in),
        ByteOrder::Little => bytes.iter().rev().fold(0, shift_in),
    }
}

/// Where `needle` first occurs in `haystack`.
fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    let (&first, rest) = needle.split_first()?;
    let mut from = 0;
    while let Some(skipped) = haystack.get(from..)?.iter().position(|&b| b == first) {
        let at = from + skipped;
        // Past the end, no later start can match either.
        if haystack.get(at + 1..at + needle.len())? == rest {
            return Some(at);
        }
        from = at + 1;
    }
    None
}
