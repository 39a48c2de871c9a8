//! The declaration: a declared protocol in the user's words, as serde reads and writes it.
//! Nothing here is checked; [`Declared::new`](super::Declared::new) checks it all, so that
//! every mistake is reported with where it is, not as a serde type error.

use std::fmt;

use serde::de::{self, MapAccess, Unexpected, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// `max_frame` when not stated: 16 MiB.
pub(super) const DEFAULT_MAX_FRAME: u64 = 16 << 20;

/// A wire protocol as a scenario declares it: how frames are delimited, what requests look
/// like, and how replies are matched and judged. Compile it with
/// [`Declared::new`](super::Declared::new), which checks it.
///
/// ```yaml
/// framing: {length: {bytes: 4, order: big, offset: 0, counts_header: false}}
/// max_frame: 16777216
/// requests:
///   - {name: get, ratio: 0.9, text: '{len:u32be}{seq:u32be}\x00GET {key}'}
///   - {name: put, ratio: 0.1, hex: '{len:u32be} {seq:u32be} 01 {random:fixed:100}'}
/// reply: {match: {id: {offset: 4, bytes: 4, order: big}}, ok: {offset: 8, equals: '\x00'}}
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Declaration {
    /// How a frame (one reply) is delimited.
    pub framing: Framing,
    /// The largest frame accepted, bytes; a reply announcing more is malformed, so that a
    /// confused server cannot make the agent buffer without bound. 16 MiB if not stated.
    #[serde(default = "default_max_frame")]
    pub max_frame: u64,
    /// The kinds of request, one or more, drawn by their ratios.
    pub requests: Vec<RequestDeclaration>,
    /// How replies are matched to requests and judged; in order, all ok, if not stated.
    #[serde(default)]
    pub reply: ReplyDeclaration,
}

fn default_max_frame() -> u64 {
    DEFAULT_MAX_FRAME
}

/// How frames are delimited: exactly one of `length`, `delimiter` or `fixed` (a struct of
/// options rather than an enum, so that "none" or "two" is reported by
/// [`Declared::new`](super::Declared::new) with where it is).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Framing {
    /// A binary length field at a fixed offset says how long the frame is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub length: Option<LengthField>,
    /// A frame ends just after the first occurrence of these bytes (text with escapes, as
    /// in `"\r\n"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delimiter: Option<String>,
    /// Every frame is this many bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fixed: Option<u64>,
}

/// A frame's length field: `bytes` wide, at `offset`, in `order`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LengthField {
    /// The field's width: 1, 2, 4 or 8.
    pub bytes: u64,
    /// The field's byte order; big-endian if not stated.
    #[serde(default)]
    pub order: ByteOrder,
    /// Where the field starts in the frame; 0 if not stated.
    #[serde(default)]
    pub offset: u64,
    /// Whether the length counts the whole frame from its first byte (true) or only the
    /// bytes after the field (false, the default).
    #[serde(default)]
    pub counts_header: bool,
}

/// The byte order of a binary field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ByteOrder {
    /// Most significant byte first (network order).
    #[default]
    Big,
    /// Least significant byte first.
    Little,
}

/// One kind of request: a template, written as text or as hex, and its share of requests.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RequestDeclaration {
    /// Its name in messages and results; `request`, `request2`, ... if not stated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Its weight among the requests (> 0; the weights need not sum to 1); 1 if not stated.
    #[serde(default = "default_ratio")]
    pub ratio: f64,
    /// The template as text with escapes and `{fields}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The template as hex digits (whitespace ignored) and `{fields}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hex: Option<String>,
}

fn default_ratio() -> f64 {
    1.0
}

/// How replies are matched to requests and judged.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReplyDeclaration {
    /// How a reply finds its request; in order if not stated.
    #[serde(default, rename = "match")]
    pub matching: ReplyMatch,
    /// What an ok reply holds; every reply is ok if not stated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ok: Option<OkCheck>,
}

/// How a reply finds its request. Serde form: `in_order`, or `{id: {offset, bytes, order}}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReplyMatch {
    /// Replies come back in request order.
    #[default]
    InOrder,
    /// Each reply carries its request's sequence number (as the request's `{seq}` field
    /// wrote it) in this field.
    Id(IdField),
}

/// A reply's id field: `bytes` wide, at `offset`, in `order`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IdField {
    /// Where the field starts in the frame; 0 if not stated.
    #[serde(default)]
    pub offset: u64,
    /// The field's width: 1, 2, 4 or 8.
    pub bytes: u64,
    /// The field's byte order; big-endian if not stated.
    #[serde(default)]
    pub order: ByteOrder,
}

/// What an ok reply holds at `offset`: exactly one of `equals` (text with escapes) or
/// `hex`. A reply without it, or too short to hold it, is an error reply.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OkCheck {
    /// Where the bytes are in the frame; 0 if not stated.
    #[serde(default)]
    pub offset: u64,
    /// The bytes, as text with escapes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub equals: Option<String>,
    /// The bytes, as hex digits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hex: Option<String>,
}

/// The word for in-order matching.
const IN_ORDER: &str = "in_order";

/// The one key of the map form.
const ID: &str = "id";

impl Serialize for ReplyMatch {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            ReplyMatch::InOrder => serializer.serialize_str(IN_ORDER),
            ReplyMatch::Id(id) => {
                let mut map = serializer.serialize_map(Some(1))?;
                map.serialize_entry(ID, id)?;
                map.end()
            }
        }
    }
}

// By hand, because serde's enum forms are not a word or a map in every format: serde_yaml
// writes a newtype variant as a `!id` tag.
impl<'de> Deserialize<'de> for ReplyMatch {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(MatchVisitor)
    }
}

struct MatchVisitor;

impl<'de> Visitor<'de> for MatchVisitor {
    type Value = ReplyMatch;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("in_order or {id: {offset, bytes, order}}")
    }

    fn visit_str<E: de::Error>(self, word: &str) -> Result<ReplyMatch, E> {
        if word == IN_ORDER {
            Ok(ReplyMatch::InOrder)
        } else {
            Err(E::invalid_value(Unexpected::Str(word), &self))
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ReplyMatch, A::Error> {
        let id = match map.next_key::<String>()? {
            Some(key) if key == ID => map.next_value::<IdField>()?,
            Some(key) => return Err(de::Error::unknown_field(&key, &[ID])),
            None => return Err(de::Error::invalid_length(0, &self)),
        };
        match map.next_key::<String>()? {
            None => Ok(ReplyMatch::Id(id)),
            Some(key) if key == ID => Err(de::Error::duplicate_field(ID)),
            Some(key) => Err(de::Error::unknown_field(&key, &[ID])),
        }
    }
}
