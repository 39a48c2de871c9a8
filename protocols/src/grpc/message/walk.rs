//! Finding the placeholders in a request's JSON, where they are in its message.

use std::fmt;

use prost_reflect::{FieldDescriptor, Kind, MapKey, MessageDescriptor};
use serde_json::Value as Json;

use super::error::{GrpcError, MAX_RANDOM, mismatch};
use super::number::Number;

/// The placeholders, for messages.
const KNOWN: &str = "expected {key}, {seq} or {random:N} ({{ and }} for literal braces)";

/// Message types whose JSON is their value's: a placeholder in one is in its `value`.
const WRAPPERS: [&str; 9] = [
    "google.protobuf.DoubleValue",
    "google.protobuf.FloatValue",
    "google.protobuf.Int64Value",
    "google.protobuf.UInt64Value",
    "google.protobuf.Int32Value",
    "google.protobuf.UInt32Value",
    "google.protobuf.BoolValue",
    "google.protobuf.StringValue",
    "google.protobuf.BytesValue",
];

/// Message types whose JSON is free-form: placeholders in them are refused.
const FREE_FORM: [&str; 4] = [
    "google.protobuf.Struct",
    "google.protobuf.Value",
    "google.protobuf.ListValue",
    "google.protobuf.Any",
];

/// One piece of a string value's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Piece {
    Literal(String),
    Key,
    Seq,
    Random(usize),
}

impl fmt::Display for Piece {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Piece::Literal(text) => f.write_str(text),
            Piece::Key => f.write_str("{key}"),
            Piece::Seq => f.write_str("{seq}"),
            Piece::Random(len) => write!(f, "{{random:{len}}}"),
        }
    }
}

/// The pieces of `text`: literal text (`{{` and `}}` read as braces) and placeholders.
fn parse_text(text: &str) -> Result<Vec<Piece>, String> {
    let mut pieces = Vec::new();
    let mut literal = String::new();
    let mut at = 0;
    while let Some(found) = text[at..].find(['{', '}']) {
        let brace = at + found;
        literal.push_str(&text[at..brace]);
        let open = text[brace..].starts_with('{');
        let rest = &text[brace + 1..];
        if rest.starts_with(if open { '{' } else { '}' }) {
            literal.push(if open { '{' } else { '}' });
            at = brace + 2;
            continue;
        }
        if !open {
            return Err(format!(
                "unmatched }} at byte {brace} of {text:?}: write }}}} for a literal }}"
            ));
        }
        let Some(len) = rest.find('}') else {
            return Err(format!("unclosed {{ at byte {brace} of {text:?}: {KNOWN}"));
        };
        let piece = placeholder(&rest[..len], brace, text)?;
        if !literal.is_empty() {
            pieces.push(Piece::Literal(std::mem::take(&mut literal)));
        }
        pieces.push(piece);
        at = brace + len + 2;
    }
    literal.push_str(&text[at..]);
    if !literal.is_empty() {
        pieces.push(Piece::Literal(literal));
    }
    Ok(pieces)
}

/// The placeholder `{body}`, at byte `at` of `text`.
fn placeholder(body: &str, at: usize, text: &str) -> Result<Piece, String> {
    match body.split_once(':') {
        None if body == "key" => Ok(Piece::Key),
        None if body == "seq" => Ok(Piece::Seq),
        Some(("random", len)) => len
            .parse()
            .ok()
            .filter(|len| (1..=MAX_RANDOM).contains(len))
            .map(Piece::Random)
            .ok_or_else(|| {
                format!(
                    "{{{body}}} at byte {at} of {text:?}: expected a count of random bytes \
                     from 1 to {MAX_RANDOM}, as in {{random:16}}"
                )
            }),
        None if body == "random" => Err(format!(
            "{{random}} at byte {at} of {text:?} needs a count, as in {{random:16}}"
        )),
        _ => Err(format!(
            "unknown placeholder {{{body}}} at byte {at} of {text:?}: {KNOWN}"
        )),
    }
}

/// Whether `text` reads as a template with a placeholder in it.
fn has_placeholder(text: &str) -> bool {
    parse_text(text).is_ok_and(|pieces| pieces.iter().any(|p| !matches!(p, Piece::Literal(_))))
}

/// The placeholders in a message's JSON, by field.
#[derive(Debug, Default)]
pub(super) struct Holes(pub(super) Vec<(FieldDescriptor, Slot)>);

/// Where in a field its placeholders are.
#[derive(Debug)]
pub(super) enum Slot {
    Whole(Hole),
    /// Elements of a repeated field, by index.
    Elements(Vec<(usize, Hole)>),
    /// Values of a map, by key.
    Entries(Vec<(MapKey, Hole)>),
}

/// One value with placeholders.
#[derive(Debug)]
pub(super) enum Hole {
    /// A string or bytes value.
    Text(Vec<Piece>),
    /// `{seq}` as a number.
    Number(Number),
    /// A message with placeholders in it.
    Message(Holes),
}

/// `at.name`.
fn child(at: &str, name: &str) -> String {
    if at.is_empty() {
        name.to_owned()
    } else {
        format!("{at}.{name}")
    }
}

/// Finds the placeholders in `json`, a value of type `kind` at `at`, and replaces each
/// string that holds them by a neutral value of the type. JSON that does not fit the type
/// is left for prost-reflect to name.
pub(super) fn walk_value(
    json: &mut Json,
    kind: &Kind,
    at: &str,
) -> Result<Option<Hole>, GrpcError> {
    if let Kind::Message(desc) = kind
        && FREE_FORM.contains(&desc.full_name())
    {
        refuse_placeholders(json, at, desc.full_name())?;
        return Ok(None);
    }
    match json {
        Json::String(text) if text.contains(['{', '}']) => {
            let pieces = parse_text(text).map_err(|problem| GrpcError::Placeholder {
                field: shown(at),
                problem,
            })?;
            let Some((hole, neutral)) = fit(pieces, kind, at)? else {
                return Ok(None);
            };
            *json = neutral;
            Ok(Some(hole))
        }
        Json::Object(_) => match kind {
            Kind::Message(desc) => {
                let holes = walk_message(json, desc, at)?;
                Ok((!holes.0.is_empty()).then_some(Hole::Message(holes)))
            }
            _ => Ok(None),
        },
        _ => Ok(None),
    }
}

fn walk_message(json: &mut Json, desc: &MessageDescriptor, at: &str) -> Result<Holes, GrpcError> {
    let mut holes = Holes::default();
    let Json::Object(object) = json else {
        return Ok(holes);
    };
    for (name, value) in object.iter_mut() {
        let at = child(at, name);
        let field = desc.get_field_by_json_name(name);
        let Some(field) = field.or_else(|| desc.get_field_by_name(name)) else {
            if desc.get_extension_by_json_name(name).is_some() {
                refuse_placeholders(value, &at, "an extension")?;
            }
            continue; // unknown: prost-reflect names it
        };
        if field.is_group() {
            // Written between group tags, not length-delimited as the template writes.
            refuse_placeholders(value, &at, "a proto2 group")?;
            continue;
        }
        let slot = if field.is_map() {
            Some(walk_map(value, &field, &at)?)
                .filter(|holes| !holes.is_empty())
                .map(Slot::Entries)
        } else if field.is_list() {
            Some(walk_list(value, &field, &at)?)
                .filter(|holes| !holes.is_empty())
                .map(Slot::Elements)
        } else {
            walk_value(value, &field.kind(), &at)?.map(Slot::Whole)
        };
        if let Some(slot) = slot {
            holes.0.push((field, slot));
        }
    }
    Ok(holes)
}

fn walk_list(
    json: &mut Json,
    field: &FieldDescriptor,
    at: &str,
) -> Result<Vec<(usize, Hole)>, GrpcError> {
    let Json::Array(elements) = json else {
        return Ok(Vec::new());
    };
    let kind = field.kind();
    let mut holes = Vec::new();
    for (index, element) in elements.iter_mut().enumerate() {
        if let Some(hole) = walk_value(element, &kind, &format!("{at}[{index}]"))? {
            holes.push((index, hole));
        }
    }
    Ok(holes)
}

fn walk_map(
    json: &mut Json,
    field: &FieldDescriptor,
    at: &str,
) -> Result<Vec<(MapKey, Hole)>, GrpcError> {
    let (Json::Object(entries), Kind::Message(entry)) = (json, field.kind()) else {
        return Ok(Vec::new());
    };
    let (Some(key_field), Some(value_field)) = (entry.get_field(1), entry.get_field(2)) else {
        return Ok(Vec::new());
    };
    let mut holes = Vec::new();
    for (key, value) in entries.iter_mut() {
        let at = format!("{at}[{key:?}]");
        if has_placeholder(key) {
            return Err(GrpcError::Placeholder {
                field: at,
                problem: "a map key cannot hold a placeholder: map keys are taken as written"
                    .to_owned(),
            });
        }
        if let Some(hole) = walk_value(value, &value_field.kind(), &at)? {
            let key = map_key(key, &key_field.kind()).ok_or_else(|| {
                let kind = kind_name(&key_field.kind());
                mismatch(
                    field.parent_message(),
                    format!("map key of {at} is not {kind}"),
                )
            })?;
            holes.push((key, hole));
        }
    }
    Ok(holes)
}

/// A map key as JSON writes it, read as the key type `kind`.
fn map_key(key: &str, kind: &Kind) -> Option<MapKey> {
    Some(match kind {
        Kind::String => MapKey::String(key.to_owned()),
        Kind::Bool => MapKey::Bool(key.parse().ok()?),
        Kind::Int32 | Kind::Sint32 | Kind::Sfixed32 => MapKey::I32(key.parse().ok()?),
        Kind::Int64 | Kind::Sint64 | Kind::Sfixed64 => MapKey::I64(key.parse().ok()?),
        Kind::Uint32 | Kind::Fixed32 => MapKey::U32(key.parse().ok()?),
        Kind::Uint64 | Kind::Fixed64 => MapKey::U64(key.parse().ok()?),
        _ => return None,
    })
}

/// An error if a string in `json` holds a placeholder, which would be sent as written.
fn refuse_placeholders(json: &Json, at: &str, inside: &str) -> Result<(), GrpcError> {
    match json {
        Json::String(text) if has_placeholder(text) => Err(GrpcError::Placeholder {
            field: shown(at),
            problem: format!(
                "placeholders are not filled in inside {inside}, whose strings are taken as \
                 written: {text:?}"
            ),
        }),
        Json::Array(items) => items.iter().enumerate().try_for_each(|(index, item)| {
            refuse_placeholders(item, &format!("{at}[{index}]"), inside)
        }),
        Json::Object(entries) => entries
            .iter()
            .try_for_each(|(name, item)| refuse_placeholders(item, &child(at, name), inside)),
        _ => Ok(()),
    }
}

/// `at`, or the whole request.
fn shown(at: &str) -> String {
    if at.is_empty() {
        "(the request)".to_owned()
    } else {
        at.to_owned()
    }
}

/// The hole that `pieces` make in a value of type `kind`, and the neutral JSON value that
/// stands in for it; `None` if there is no placeholder and the type reads the text itself.
fn fit(pieces: Vec<Piece>, kind: &Kind, at: &str) -> Result<Option<(Hole, Json)>, GrpcError> {
    match kind {
        Kind::String | Kind::Bytes => Ok(Some((Hole::Text(pieces), Json::from("")))),
        Kind::Message(desc) if WRAPPERS.contains(&desc.full_name()) => {
            let Some(value) = desc.get_field(1) else {
                return Ok(None);
            };
            let hole = fit(pieces, &value.kind(), at)?;
            Ok(hole.map(|(hole, neutral)| {
                (
                    Hole::Message(Holes(vec![(value, Slot::Whole(hole))])),
                    neutral,
                )
            }))
        }
        _ => {
            let Some(placeholder) = pieces.iter().find(|p| !matches!(p, Piece::Literal(_))) else {
                return Ok(None);
            };
            let number = Number::of(kind);
            if let (Some(number), [Piece::Seq]) = (number, pieces.as_slice()) {
                return Ok(Some((Hole::Number(number), Json::from(0))));
            }
            Err(GrpcError::Unfit {
                field: shown(at),
                kind: kind_name(kind),
                placeholder: placeholder.to_string(),
                hint: match number {
                    Some(_) => "a number field holds only {seq}, as its whole value \"{seq}\"",
                    None => {
                        "placeholders go in string and bytes fields, and {seq} in number fields"
                    }
                },
            })
        }
    }
}

/// `int32`, `enum bench.Color`, `message google.protobuf.Timestamp`.
pub(super) fn kind_name(kind: &Kind) -> String {
    match kind {
        Kind::Message(desc) => format!("message {}", desc.full_name()),
        Kind::Enum(desc) => format!("enum {}", desc.full_name()),
        scalar => format!("{scalar:?}").to_lowercase(),
    }
}
