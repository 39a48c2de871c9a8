//! Declared protocols: framing, request templates and reply matching written in a
//! scenario, no Rust.
//!
//! ```yaml
//! protocol:
//!   framing:                  # exactly one of length, delimiter or fixed
//!     length: {bytes: 4, order: big, offset: 0, counts_header: false}
//!     # delimiter: '\r\n'
//!     # fixed: 64
//!   max_frame: 16777216       # bytes; a longer frame is a malformed reply (default 16 MiB)
//!   requests:                 # one or more, drawn by ratio
//!     - name: get             # default request, request2, ...
//!       ratio: 0.9            # default 1; weights, > 0, need not sum to 1
//!       text: '{len:u32be}{seq:u32be}\x00GET {key}'
//!     - name: put
//!       ratio: 0.1
//!       hex: '{len:u32be} {seq:u32be} 01 {random:fixed:100}'
//!   reply:
//!     match: in_order         # the default; or {id: {offset: 4, bytes: 4, order: big}}
//!     ok: {offset: 8, equals: '\x00'}   # or hex: '00'; absent, every reply is ok
//! ```
//!
//! - **Framing**. `length`: a `bytes`-wide (1, 2, 4, 8) field at `offset` in `order` (`big`
//!   or `little`); it counts the bytes after itself, or with `counts_header: true` the whole
//!   frame from byte 0. `delimiter`: a frame ends just after the first occurrence of these
//!   bytes. `fixed`: every frame is N bytes. A frame is one reply.
//! - **Text** (`text`, `delimiter`, `equals`): characters are their UTF-8 bytes; `\r \n \t
//!   \0 \\ \xHH` are escapes and `{{` `}}` literal braces. Write it in YAML in single quotes
//!   or unquoted, so that the backslashes reach vernier: in double quotes YAML reads the
//!   escapes itself, and `"\xff"` becomes the character ÿ, two bytes in UTF-8.
//! - **Hex** (`hex`): pairs of hex digits, whitespace ignored.
//! - **Fields**, in request templates only: `{key}` the workload's key; `{key_len:FMT}` its
//!   length; `{seq:FMT}` the request's sequence number, truncated to the format's width;
//!   `{len:FMT}` the frame's length as the framing counts it (with `counts_header` the whole
//!   request, otherwise the bytes after the field), at most one; `{random:SIZE}` random
//!   bytes, as many as drawn from a size distribution (`fixed:100`, `uniform:10:100`). FMT is
//!   `u8`, `u16be`, `u16le`, `u32be`, `u32le`, `u64be`, `u64le` or `dec` (ASCII decimal).
//! - **Replies**: `match: {id: ...}` reads the id each reply carries (the request's `{seq}`)
//!   into [`Reply::opaque`]; `ok` names bytes an ok reply holds at an offset, any other
//!   reply being an error.
//!
//! Requests are not checked against the framing beyond their `{len}` field's width and, for
//! fixed framing, their fixed bytes: the framing is how replies are read.

mod declaration;
mod error;
mod field;
mod framing;
mod reply;
mod template;
mod text;

pub use declaration::{
    ByteOrder, Declaration, Framing, IdField, LengthField, OkCheck, ReplyDeclaration, ReplyMatch,
    RequestDeclaration,
};
pub use error::{DeclareError, TemplateError};
pub use template::Template;

use crate::protocol::vocab::{EncodeError, ParseError, Reply};

use error::NAME;
use field::Format;
use framing::Framer;
use reply::Matcher;
use template::{Input, LenRule};

/// A declared protocol, checked and compiled from its [`Declaration`]: encodes requests
/// into the caller's buffer and parses replies incrementally, as
/// [`Protocol`](crate::Protocol) does. Its serde form is the declaration's, checked when
/// read.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(try_from = "Declaration", into = "Declaration")]
pub struct Declared {
    declaration: Declaration,
    framer: Framer,
    len_rule: LenRule,
    requests: Vec<Compiled>,
    /// The requests' cumulative shares, the last 1 (within rounding).
    cumulative: Vec<f64>,
    matcher: Matcher,
}

#[derive(Debug, Clone)]
struct Compiled {
    name: String,
    template: Template,
}

impl Declared {
    /// Checks and compiles `declaration`. The error says where the first mistake is and
    /// what was expected there.
    pub fn new(declaration: Declaration) -> Result<Declared, DeclareError> {
        let framer = Framer::new(&declaration.framing, declaration.max_frame)?;
        if declaration.requests.is_empty() {
            return Err(DeclareError::new(
                "requests",
                "none: expected at least one request",
            ));
        }
        let mut requests: Vec<Compiled> = Vec::with_capacity(declaration.requests.len());
        for (i, request) in declaration.requests.iter().enumerate() {
            let compiled = compile(i, request, &framer)?;
            if let Some(first) = requests.iter().position(|r| r.name == compiled.name) {
                return Err(DeclareError::new(
                    format!("requests[{i}].name"),
                    format!(
                        "{} is also requests[{first}]'s name: expected distinct names",
                        compiled.name
                    ),
                ));
            }
            requests.push(compiled);
        }
        let cumulative = cumulative(&declaration.requests)?;
        let matcher = Matcher::new(&declaration.reply, &framer)?;
        let len_rule = if framer.counts_header() {
            LenRule::WholeRequest
        } else {
            LenRule::AfterField
        };
        Ok(Declared {
            declaration,
            framer,
            len_rule,
            requests,
            cumulative,
            matcher,
        })
    }

    /// The declaration it was compiled from, as the user wrote it.
    pub fn declaration(&self) -> &Declaration {
        &self.declaration
    }

    /// How many kinds of request it declares (at least one).
    pub fn requests(&self) -> usize {
        self.requests.len()
    }

    /// The name of request `i` (its declared name, or `request`, `request2`, ...); empty
    /// if there is no request `i`.
    pub fn request_name(&self, i: usize) -> &str {
        self.requests.get(i).map_or("", |r| r.name.as_str())
    }

    /// The request to send for `draw`, a uniformly random `u64`: each request's share of
    /// draws is its ratio over the ratios' sum.
    pub fn pick(&self, draw: u64) -> usize {
        // The top 53 bits, a uniform draw in [0, 1).
        let unit = (draw >> 11) as f64 / (1u64 << 53) as f64;
        let i = self.cumulative.partition_point(|&share| share <= unit);
        i.min(self.requests.len().saturating_sub(1))
    }

    /// Appends request `template` to `out`, ready to send: `key` in its `{key}`, `seq` in
    /// its `{seq}` (the id a reply carries back, when replies are matched by id), and random
    /// sizes and bytes drawn from `entropy`, a random `u64` the caller draws per request, so
    /// the same arguments give the same bytes. Nothing is allocated beyond `out`'s growth.
    ///
    /// On error (no such request, a `{len}` or `{key_len}` the field cannot hold, a random
    /// size over [`MAX_VALUE_LEN`](crate::MAX_VALUE_LEN)) `out` is left as it was.
    pub fn encode(
        &self,
        template: usize,
        key: &[u8],
        seq: u32,
        entropy: u64,
        out: &mut Vec<u8>,
    ) -> Result<(), EncodeError> {
        let Some(request) = self.requests.get(template) else {
            return Err(EncodeError::NoSuchRequest {
                protocol: NAME,
                index: template,
                count: self.requests.len(),
            });
        };
        let start = out.len();
        let input = Input { key, seq, entropy };
        let result = request.template.write(&input, self.len_rule, out);
        if result.is_err() {
            out.truncate(start);
        }
        result
    }

    /// Parses the first reply (one frame) in `buf`, with [`Protocol::parse`]'s contract:
    /// `Ok(None)` when only part of it has arrived; `Ok(Some((reply, n)))` when it took the
    /// first `n` bytes (never 0); `Err` when the bytes cannot be a reply (a frame over
    /// `max_frame`, a length shorter than the header it counts, a frame too short for its
    /// id).
    ///
    /// The reply's kind is [`Ok`](crate::ReplyKind::Ok) or, if the ok check fails,
    /// [`Error`](crate::ReplyKind::Error); its `value_len` is the frame's length; its
    /// `opaque` the id, when replies carry one.
    ///
    /// [`Protocol::parse`]: crate::Protocol::parse
    pub fn parse(&self, buf: &[u8]) -> Result<Option<(Reply, usize)>, ParseError> {
        let Some(len) = self.framer.frame_len(buf)? else {
            return Ok(None);
        };
        let frame = buf.get(..len).unwrap_or(buf);
        let reply = self.matcher.read(frame)?;
        Ok(Some((reply, len)))
    }

    /// The bits of a sequence number a reply's id carries back: `None` when replies come in
    /// order, else 0xFF, 0xFFFF or 0xFFFF_FFFF by the id's width (an 8-byte id is
    /// compared by its low 32 bits). A reply answers request `seq` when
    /// `reply.opaque == Some(seq & mask)`.
    pub fn id_mask(&self) -> Option<u32> {
        self.matcher.id_mask()
    }
}

/// Request `i`, checked against the framing.
fn compile(
    i: usize,
    request: &RequestDeclaration,
    framer: &Framer,
) -> Result<Compiled, DeclareError> {
    let name = match &request.name {
        Some(name) if name.trim().is_empty() => {
            return Err(DeclareError::new(
                format!("requests[{i}].name"),
                "empty: expected a name such as get",
            ));
        }
        Some(name) => name.clone(),
        None if i == 0 => "request".to_owned(),
        None => format!("request{}", i + 1),
    };
    let (at, parsed) = match (&request.text, &request.hex) {
        (Some(text), None) => (format!("requests[{i}].text"), Template::text(text)),
        (None, Some(hex)) => (format!("requests[{i}].hex"), Template::hex(hex)),
        (text, _) => {
            let got = if text.is_some() { "both" } else { "neither" };
            return Err(DeclareError::new(
                format!("requests[{i}]"),
                format!("{got}: expected exactly one of text or hex"),
            ));
        }
    };
    let template = parsed.map_err(|error| error.at(at.as_str()))?;
    if let (Some(format), Some(width)) = (template.len_format(), framer.length_width()) {
        check_len_width(&at, format, width)?;
    }
    if let Some(frame) = framer.fixed()
        && template.fixed_len() > frame
    {
        return Err(DeclareError::new(
            at,
            format!(
                "at least {} bytes, longer than the fixed {frame}-byte frame",
                template.fixed_len()
            ),
        ));
    }
    Ok(Compiled { name, template })
}

/// A `{len}` no wider than the framing's length field, and binary like it.
fn check_len_width(at: &str, format: Format, framing_width: usize) -> Result<(), DeclareError> {
    match format.width() {
        None => Err(DeclareError::new(
            at,
            format!(
                "{{len:dec}} is ASCII decimal, but the framing's length field is \
                 {framing_width} binary bytes: expected a binary format such as u32be"
            ),
        )),
        Some(width) if width > framing_width => Err(DeclareError::new(
            at,
            format!(
                "{{len:{}}} is {width} bytes, wider than the framing's {framing_width}-byte \
                 length field",
                format.name()
            ),
        )),
        Some(_) => Ok(()),
    }
}

/// The requests' cumulative shares, each ratio checked.
fn cumulative(requests: &[RequestDeclaration]) -> Result<Vec<f64>, DeclareError> {
    for (i, request) in requests.iter().enumerate() {
        let ratio = request.ratio;
        // `!(ratio > 0.0)` rather than `ratio <= 0.0` so that NaN is refused too.
        if !(ratio > 0.0 && ratio.is_finite()) {
            return Err(DeclareError::new(
                format!("requests[{i}].ratio"),
                format!("{ratio}: expected a weight > 0, as in 0.9"),
            ));
        }
    }
    let total: f64 = requests.iter().map(|r| r.ratio).sum();
    if !total.is_finite() {
        return Err(DeclareError::new(
            "requests",
            "the ratios sum to infinity: expected weights such as 0.9 and 0.1",
        ));
    }
    let mut sum = 0.0;
    Ok(requests
        .iter()
        .map(|request| {
            sum += request.ratio;
            sum / total
        })
        .collect())
}

impl TryFrom<Declaration> for Declared {
    type Error = DeclareError;

    fn try_from(declaration: Declaration) -> Result<Declared, DeclareError> {
        Declared::new(declaration)
    }
}

impl From<Declared> for Declaration {
    fn from(declared: Declared) -> Declaration {
        declared.declaration
    }
}

#[cfg(test)]
mod tests;
