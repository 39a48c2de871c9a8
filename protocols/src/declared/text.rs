//! Reading the user's bytes: text with escapes, or hex digits, either with `{fields}`.

use super::error::TemplateError;
use super::field::{self, Field};

/// How the bytes of a template are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Form {
    /// Characters stand for their UTF-8 bytes; `\r \n \t \0 \\ \xHH` escape, `{{` and `}}`
    /// are literal braces.
    Text,
    /// Pairs of hex digits, whitespace ignored.
    Hex,
}

/// A scanned template: its literal bytes, and its fields with the position in those bytes
/// where each goes, in order.
#[derive(Debug, Default)]
pub(super) struct Scanned {
    pub(super) bytes: Vec<u8>,
    pub(super) fields: Vec<(usize, Field)>,
}

/// Scans `text` written in `form`, fields allowed.
pub(super) fn scan(text: &str, form: Form) -> Result<Scanned, TemplateError> {
    let mut scanner = Scanner {
        text,
        form,
        scanned: Scanned::default(),
        nibble: None,
    };
    scanner.run()?;
    Ok(scanner.scanned)
}

/// The bytes of `text` written in `form`, where fields have no meaning (a delimiter, the
/// bytes of an ok reply).
pub(super) fn literal(text: &str, form: Form) -> Result<Vec<u8>, TemplateError> {
    let scanned = scan(text, form)?;
    match scanned.fields.first() {
        None => Ok(scanned.bytes),
        Some(_) => Err(TemplateError::new(
            "a {field} where fields have no meaning: write {{ and }} for literal braces",
        )),
    }
}

struct Scanner<'a> {
    text: &'a str,
    form: Form,
    scanned: Scanned,
    /// In hex, the first digit of a byte whose second has not come yet.
    nibble: Option<u8>,
}

impl Scanner<'_> {
    fn run(&mut self) -> Result<(), TemplateError> {
        let bytes = self.text.as_bytes();
        let mut at = 0;
        while let Some(&byte) = bytes.get(at) {
            let next = bytes.get(at + 1).copied();
            at = match (byte, next) {
                (b'{', Some(b'{')) if self.form == Form::Text => self.push(b'{', at + 2),
                (b'}', Some(b'}')) if self.form == Form::Text => self.push(b'}', at + 2),
                (b'{', _) => self.field(at)?,
                (b'}', _) => {
                    let literal = match self.form {
                        Form::Text => ": expected }} for a literal }",
                        Form::Hex => ": expected it to close a {field}",
                    };
                    return Err(TemplateError::new(format!("lone }} at byte {at}{literal}")));
                }
                (b'\\', _) if self.form == Form::Text => self.escape(at)?,
                (_, _) if self.form == Form::Text => self.push(byte, at + 1),
                (_, _) => self.hex_digit(at)?,
            };
        }
        self.no_half_byte("")
    }

    fn push(&mut self, byte: u8, next: usize) -> usize {
        self.scanned.bytes.push(byte);
        next
    }

    /// The field whose `{` is at `at`; returns where the text goes on.
    fn field(&mut self, at: usize) -> Result<usize, TemplateError> {
        self.no_half_byte(&format!(" before the field at byte {at}"))?;
        let rest = self.text.get(at + 1..).unwrap_or_default();
        let Some(close) = rest.find('}') else {
            let literal = match self.form {
                Form::Text => ", or {{ for a literal {",
                Form::Hex => "",
            };
            return Err(TemplateError::new(format!(
                "unclosed {{ at byte {at}: expected }}{literal}"
            )));
        };
        let body = rest.get(..close).unwrap_or_default();
        let parsed = field::parse(body, at)?;
        if matches!(parsed, Field::Len(_))
            && self
                .scanned
                .fields
                .iter()
                .any(|(_, field)| matches!(field, Field::Len(_)))
        {
            return Err(TemplateError::new(format!(
                "a second {{len}} at byte {at}: expected at most one"
            )));
        }
        self.scanned.fields.push((self.scanned.bytes.len(), parsed));
        Ok(at + 1 + close + 1)
    }

    /// The escape whose `\` is at `at`; returns where the text goes on.
    fn escape(&mut self, at: usize) -> Result<usize, TemplateError> {
        let rest = self.text.get(at + 1..).unwrap_or_default();
        let byte = match rest.chars().next() {
            Some('r') => b'\r',
            Some('n') => b'\n',
            Some('t') => b'\t',
            Some('0') => b'\0',
            Some('\\') => b'\\',
            Some('x') => {
                let digits = rest.as_bytes().get(1..3).unwrap_or_default();
                return match digits {
                    &[high, low] => match (hex_value(high), hex_value(low)) {
                        (Some(high), Some(low)) => Ok(self.push(high << 4 | low, at + 4)),
                        _ => Err(bad_hex_escape(at)),
                    },
                    _ => Err(bad_hex_escape(at)),
                };
            }
            Some(other) => {
                return Err(TemplateError::new(format!(
                    "unknown escape \\{other} at byte {at}: expected \\r, \\n, \\t, \\0, \\\\ or \\xHH"
                )));
            }
            None => {
                return Err(TemplateError::new(format!(
                    "a lone \\ at byte {at}, the end: expected \\r, \\n, \\t, \\0, \\\\ or \\xHH"
                )));
            }
        };
        Ok(self.push(byte, at + 2))
    }

    /// A hex digit or whitespace at `at`; returns where the text goes on.
    fn hex_digit(&mut self, at: usize) -> Result<usize, TemplateError> {
        let rest = self.text.get(at..).unwrap_or_default();
        let Some(character) = rest.chars().next() else {
            return Ok(at + 1);
        };
        if character.is_whitespace() {
            return Ok(at + character.len_utf8());
        }
        let Some(value) = u8::try_from(character).ok().and_then(hex_value) else {
            return Err(TemplateError::new(format!(
                "non-hex character {character:?} at byte {at}: expected hex digits, whitespace \
                 or {{fields}}"
            )));
        };
        match self.nibble.take() {
            Some(high) => self.scanned.bytes.push(high << 4 | value),
            None => self.nibble = Some(value),
        }
        Ok(at + 1)
    }

    /// In hex, an error if half a byte is pending; `before` says where, for the message.
    fn no_half_byte(&self, before: &str) -> Result<(), TemplateError> {
        match self.nibble {
            Some(_) => Err(TemplateError::new(format!(
                "odd number of hex digits{before}"
            ))),
            None => Ok(()),
        }
    }
}

fn bad_hex_escape(at: usize) -> TemplateError {
    TemplateError::new(format!(
        "\\x at byte {at} needs two hex digits, as in \\x00"
    ))
}

fn hex_value(digit: u8) -> Option<u8> {
    char::from(digit)
        .to_digit(16)
        .and_then(|value| u8::try_from(value).ok())
}
