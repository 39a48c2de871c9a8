//! Reading and writing the building blocks the protocols share: CRLF-terminated lines,
//! length-prefixed blocks, decimal numbers, key checks.
//!
//! Parsers are written as straight-line code over a [`Reader`] whose methods fail with
//! [`Stop::Incomplete`] when the buffer ends early, so `?` carries "need more bytes" out as
//! readily as a malformed reply (the approach of mini-redis's frame parser).

use super::vocab::{EncodeError, MAX_VALUE_LEN, ParseError, Reply};

/// The longest line accepted. Reply lines in these protocols are short (a memcached `VALUE`
/// line with a 250-byte key is under 300 bytes); without a limit, a peer that never sends
/// CRLF would have the agent buffer forever.
pub(super) const MAX_LINE: usize = 8 << 10;

/// Why a parser stopped without a reply.
#[derive(Debug)]
pub(super) enum Stop {
    /// The buffer ends inside the reply.
    Incomplete,
    /// The reply is not valid.
    Malformed(ParseError),
}

impl From<ParseError> for Stop {
    fn from(error: ParseError) -> Stop {
        Stop::Malformed(error)
    }
}

/// A parser's outcome before it is turned into the public answer by [`finish`].
pub(super) type Step<T> = Result<T, Stop>;

/// "Need more bytes" is a normal answer, not an error.
pub(super) fn finish(step: Step<(Reply, usize)>) -> Result<Option<(Reply, usize)>, ParseError> {
    match step {
        Ok(parsed) => Ok(Some(parsed)),
        Err(Stop::Incomplete) => Ok(None),
        Err(Stop::Malformed(error)) => Err(error),
    }
}

/// A cursor over a buffer that may end anywhere.
pub(super) struct Reader<'a> {
    protocol: &'static str,
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub(super) fn new(protocol: &'static str, buf: &'a [u8]) -> Reader<'a> {
        Reader {
            protocol,
            buf,
            pos: 0,
        }
    }

    /// The bytes read so far.
    pub(super) fn consumed(&self) -> usize {
        self.pos
    }

    /// The next line, without its CRLF; the reader moves past the CRLF.
    pub(super) fn line(&mut self) -> Step<&'a [u8]> {
        let rest = &self.buf[self.pos..];
        let Some(lf) = rest.iter().take(MAX_LINE + 2).position(|&b| b == b'\n') else {
            return Err(if rest.len() > MAX_LINE + 1 {
                self.malformed(format!("no CRLF within {MAX_LINE} bytes"), self.pos)
            } else {
                Stop::Incomplete
            });
        };
        if lf == 0 || rest[lf - 1] != b'\r' {
            return Err(self.malformed("line ends in a bare LF, not CRLF", self.pos));
        }
        self.pos += lf + 1;
        Ok(&rest[..lf - 1])
    }

    /// The next `len` bytes.
    pub(super) fn take(&mut self, len: usize) -> Step<&'a [u8]> {
        let rest = &self.buf[self.pos..];
        let taken = rest.get(..len).ok_or(Stop::Incomplete)?;
        self.pos += len;
        Ok(taken)
    }

    /// The next bytes must be `literal` (such as the CRLF after a value). A mismatch is
    /// reported as soon as a differing byte has arrived, not only once all have.
    pub(super) fn expect(&mut self, literal: &[u8], problem: &'static str) -> Step<()> {
        let rest = &self.buf[self.pos..];
        let common = rest.len().min(literal.len());
        if rest[..common] != literal[..common] {
            return Err(self.malformed(problem, self.pos));
        }
        self.take(literal.len()).map(drop)
    }

    /// A malformed-reply stop quoting the bytes from `at`.
    pub(super) fn malformed(&self, problem: impl Into<String>, at: usize) -> Stop {
        let at = at.min(self.buf.len());
        Stop::Malformed(ParseError::new(self.protocol, problem, &self.buf[at..]))
    }

    /// `len` checked against [`MAX_VALUE_LEN`]; the error quotes the bytes from `at`.
    pub(super) fn value_len(&self, len: u64, at: usize) -> Step<usize> {
        usize::try_from(len)
            .ok()
            .filter(|&len| len <= MAX_VALUE_LEN)
            .ok_or_else(|| {
                self.malformed(
                    format!("a value of {len} bytes, over the {MAX_VALUE_LEN}-byte limit"),
                    at,
                )
            })
    }
}

/// An unsigned decimal number: one or more ASCII digits, no sign, no overflow.
pub(super) fn decimal(digits: &[u8]) -> Option<u64> {
    if digits.is_empty() {
        return None;
    }
    digits.iter().try_fold(0u64, |n, &b| {
        let digit = b.checked_sub(b'0').filter(|&d| d < 10)?;
        n.checked_mul(10)?.checked_add(u64::from(digit))
    })
}

/// A signed decimal number, as in `-42`: an optional `-`, then [`decimal`] digits.
pub(super) fn signed_decimal(text: &[u8]) -> Option<i64> {
    match text.strip_prefix(b"-") {
        // i64::MIN's magnitude is one more than i64::MAX.
        Some(digits) => decimal(digits)
            .filter(|&n| n <= i64::MIN.unsigned_abs())
            .map(|n| 0i64.wrapping_sub_unsigned(n)),
        None => decimal(text).and_then(|n| i64::try_from(n).ok()),
    }
}

/// Appends `n` in decimal, without the formatting machinery.
pub(super) fn push_decimal(out: &mut Vec<u8>, n: u64) {
    let (digits, start) = decimal_digits(n);
    out.extend_from_slice(&digits[start..]);
}

/// `n`'s decimal digits, right-aligned in the buffer, and where they start.
pub(crate) fn decimal_digits(mut n: u64) -> ([u8; 20], usize) {
    let mut digits = [0u8; 20];
    let mut start = digits.len();
    loop {
        start -= 1;
        digits[start] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    (digits, start)
}

/// Appends `len` filler bytes: a value whose content does not matter, only its size.
pub(super) fn push_filler(out: &mut Vec<u8>, len: usize) {
    out.resize(out.len() + len, b'x');
}

/// Refuses values over [`MAX_VALUE_LEN`].
pub(super) fn check_value_len(protocol: &'static str, len: usize) -> Result<(), EncodeError> {
    if len > MAX_VALUE_LEN {
        return Err(EncodeError::ValueTooLarge {
            protocol,
            len,
            max: MAX_VALUE_LEN,
        });
    }
    Ok(())
}

/// The longest key memcached accepts (`KEY_MAX_LENGTH`), in both its protocols.
pub(super) const MEMCACHED_MAX_KEY: usize = 250;

/// Checks a key against a protocol's rules: a length range and the bytes it may contain.
pub(super) fn check_key(
    protocol: &'static str,
    key: &[u8],
    max_len: usize,
    allowed: fn(u8) -> bool,
    rule: &'static str,
) -> Result<(), EncodeError> {
    if key.len() > max_len {
        return Err(EncodeError::invalid_key(
            protocol,
            key,
            "longer than the protocol allows",
        ));
    }
    if !key.iter().all(|&b| allowed(b)) {
        return Err(EncodeError::invalid_key(protocol, key, rule));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals() {
        assert_eq!(decimal(b"0"), Some(0));
        assert_eq!(decimal(b"007"), Some(7));
        assert_eq!(decimal(b"18446744073709551615"), Some(u64::MAX));
        for bad in [
            &b""[..],
            b"18446744073709551616",
            b"-1",
            b"+1",
            b"1 ",
            b"1a",
            b" 1",
        ] {
            assert_eq!(decimal(bad), None, "{:?}", bad.escape_ascii().to_string());
        }
        assert_eq!(signed_decimal(b"-42"), Some(-42));
        assert_eq!(signed_decimal(b"42"), Some(42));
        assert_eq!(signed_decimal(b"-9223372036854775808"), Some(i64::MIN));
        assert_eq!(signed_decimal(b"9223372036854775807"), Some(i64::MAX));
        for bad in [
            &b"-"[..],
            b"--1",
            b"9223372036854775808",
            b"-9223372036854775809",
        ] {
            assert_eq!(signed_decimal(bad), None);
        }
    }

    #[test]
    fn push_decimal_writes_every_magnitude() {
        for n in [0, 1, 9, 10, 99, 100, 12345, u64::MAX] {
            let mut out = b"#".to_vec();
            push_decimal(&mut out, n);
            assert_eq!(out, format!("#{n}").as_bytes());
        }
    }

    #[test]
    fn lines_need_crlf_and_a_bound() {
        let mut reader = Reader::new("test", b"ab\r\ncd\r");
        assert_eq!(reader.line().ok(), Some(&b"ab"[..]));
        assert_eq!(reader.consumed(), 4);
        assert!(matches!(reader.line(), Err(Stop::Incomplete)));

        assert!(matches!(
            Reader::new("test", b"ab\ncd").line(),
            Err(Stop::Malformed(_))
        ));
        assert!(matches!(
            Reader::new("test", b"\n").line(),
            Err(Stop::Malformed(_))
        ));

        let long = vec![b'a'; MAX_LINE + 1];
        assert!(matches!(
            Reader::new("test", &long).line(),
            Err(Stop::Incomplete)
        ));
        let mut longer = long.clone();
        longer.push(b'a');
        assert!(matches!(
            Reader::new("test", &longer).line(),
            Err(Stop::Malformed(_))
        ));
        // The longest line accepted, with its CRLF.
        let mut longest = vec![b'a'; MAX_LINE];
        longest.extend_from_slice(b"\r\n");
        assert_eq!(
            Reader::new("test", &longest).line().ok().map(<[u8]>::len),
            Some(MAX_LINE)
        );
    }

    #[test]
    fn expect_fails_on_the_first_wrong_byte() {
        assert!(matches!(
            Reader::new("test", b"\r").expect(b"\r\n", "x"),
            Err(Stop::Incomplete)
        ));
        assert!(matches!(
            Reader::new("test", b"x").expect(b"\r\n", "x"),
            Err(Stop::Malformed(_))
        ));
        let mut reader = Reader::new("test", b"\r\nrest");
        assert!(reader.expect(b"\r\n", "x").is_ok());
        assert_eq!(reader.consumed(), 2);
    }
}
