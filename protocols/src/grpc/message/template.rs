//! A request's template: its encoding at `Method::new`, the bytes every request has and
//! the placeholders between them, written per request.

use std::collections::HashMap;

use prost::Message as _;
use prost::encoding::{WireType, encode_key, encode_varint, encoded_len_varint};
use prost_reflect::{
    DynamicMessage, FieldDescriptor, Kind, MapKey, MessageDescriptor, ReflectMessage, Value,
};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use super::error::{GrpcError, mismatch};
use super::number::Number;
use super::walk::{Hole, Holes, Piece, Slot, kind_name};

/// A request template: the bytes every request has, and what is written per request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Template {
    pub(super) parts: Vec<Part>,
    uses_key: bool,
}

impl Template {
    /// The template of `message`, read from JSON whose placeholders are `holes`.
    pub(super) fn new(message: &DynamicMessage, holes: &Holes) -> Result<Template, GrpcError> {
        let mut builder = Builder::default();
        message_parts(&mut builder, message, holes)?;
        Ok(Template {
            uses_key: uses_key(&builder.parts),
            parts: builder.parts,
        })
    }

    /// Appends the request for `key`, `seq` and `entropy`.
    pub(super) fn write(&self, key: &[u8], seq: u64, entropy: u64, out: &mut Vec<u8>) {
        let mut draw = Draw {
            key,
            seq,
            entropy,
            rng: None,
        };
        write_parts(&self.parts, &mut draw, out);
    }

    /// Whether it writes the key.
    pub(super) fn uses_key(&self) -> bool {
        self.uses_key
    }
}

/// One piece of a template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Part {
    Fixed(Vec<u8>),
    /// A length-delimited value: its length as a varint, then its parts.
    Delimited(Vec<Part>),
    /// The key; as text (lossy UTF-8) or as bytes.
    Key {
        text: bool,
    },
    /// The sequence number in decimal.
    SeqText,
    /// The sequence number as a number field's value (after its tag).
    SeqNumber(Number),
    /// Random bytes, or as many random hex digits.
    Random {
        len: usize,
        text: bool,
    },
}

fn uses_key(parts: &[Part]) -> bool {
    parts.iter().any(|part| match part {
        Part::Key { .. } => true,
        Part::Delimited(inner) => uses_key(inner),
        _ => false,
    })
}

/// What one request is written from.
struct Draw<'a> {
    key: &'a [u8],
    seq: u64,
    entropy: u64,
    /// Seeded from `entropy` at the first random placeholder.
    rng: Option<SmallRng>,
}

/// The length `parts` write for `draw`.
fn parts_len(parts: &[Part], draw: &Draw<'_>) -> usize {
    parts
        .iter()
        .map(|part| match part {
            Part::Fixed(bytes) => bytes.len(),
            Part::Delimited(inner) => {
                let len = parts_len(inner, draw);
                encoded_len_varint(len as u64) + len
            }
            Part::Key { text: true } => lossy_utf8(draw.key, |_| {}),
            Part::Key { text: false } => draw.key.len(),
            Part::SeqText => draw.seq.checked_ilog10().map_or(1, |log| log as usize + 1),
            Part::SeqNumber(number) => number.of_seq(draw.seq).len(),
            Part::Random { len, .. } => *len,
        })
        .sum()
}

fn write_parts(parts: &[Part], draw: &mut Draw<'_>, out: &mut Vec<u8>) {
    for part in parts {
        match part {
            Part::Fixed(bytes) => out.extend_from_slice(bytes),
            Part::Delimited(inner) => {
                encode_varint(parts_len(inner, draw) as u64, out);
                write_parts(inner, draw, out);
            }
            Part::Key { text: true } => {
                lossy_utf8(draw.key, |bytes| out.extend_from_slice(bytes));
            }
            Part::Key { text: false } => out.extend_from_slice(draw.key),
            Part::SeqText => {
                let mut digits = [0u8; 20];
                let mut from = digits.len();
                let mut rest = draw.seq;
                for digit in digits.iter_mut().rev() {
                    *digit = b'0' + (rest % 10) as u8;
                    from -= 1;
                    rest /= 10;
                    if rest == 0 {
                        break;
                    }
                }
                out.extend_from_slice(digits.get(from..).unwrap_or_default());
            }
            Part::SeqNumber(number) => number.of_seq(draw.seq).write(out),
            Part::Random { len, text } => {
                let entropy = draw.entropy;
                let rng = draw
                    .rng
                    .get_or_insert_with(|| SmallRng::seed_from_u64(entropy));
                let from = out.len();
                out.resize(from + len, 0);
                let random = out.get_mut(from..).unwrap_or_default();
                rng.fill_bytes(random);
                if *text {
                    random
                        .iter_mut()
                        .for_each(|b| *b = b"0123456789abcdef"[usize::from(*b & 15)]);
                }
            }
        }
    }
}

/// Passes `key` as UTF-8 to `write`, piece by piece, each invalid sequence as U+FFFD (as
/// [`String::from_utf8_lossy`] does); returns the length written.
fn lossy_utf8(key: &[u8], mut write: impl FnMut(&[u8])) -> usize {
    if std::str::from_utf8(key).is_ok() {
        write(key); // the common case, checked faster than chunk by chunk
        return key.len();
    }
    let mut len = 0;
    for chunk in key.utf8_chunks() {
        write(chunk.valid().as_bytes());
        len += chunk.valid().len();
        if !chunk.invalid().is_empty() {
            let mut replacement = [0; 4];
            write(
                char::REPLACEMENT_CHARACTER
                    .encode_utf8(&mut replacement)
                    .as_bytes(),
            );
            len += char::REPLACEMENT_CHARACTER.len_utf8();
        }
    }
    len
}

/// Builds a template: fixed bytes run together, and a length-delimited value whose parts
/// are all fixed becomes fixed bytes.
#[derive(Debug, Default)]
struct Builder {
    parts: Vec<Part>,
}

impl Builder {
    fn fixed(&mut self, bytes: &[u8]) {
        match self.parts.last_mut() {
            _ if bytes.is_empty() => {}
            Some(Part::Fixed(last)) => last.extend_from_slice(bytes),
            _ => self.parts.push(Part::Fixed(bytes.to_vec())),
        }
    }

    fn tag(&mut self, number: u32, wire_type: WireType) {
        let mut tag = Vec::with_capacity(5);
        encode_key(number, wire_type, &mut tag);
        self.fixed(&tag);
    }

    /// A length-delimited value, its parts added by `fill`.
    fn delimited(
        &mut self,
        fill: impl FnOnce(&mut Builder) -> Result<(), GrpcError>,
    ) -> Result<(), GrpcError> {
        let mut inner = Builder::default();
        fill(&mut inner)?;
        match inner.parts.as_slice() {
            [] => self.fixed(&[0]),
            [Part::Fixed(bytes)] => {
                let mut framed = Vec::with_capacity(bytes.len() + 5);
                encode_varint(bytes.len() as u64, &mut framed);
                framed.extend_from_slice(bytes);
                self.fixed(&framed);
            }
            _ => self.parts.push(Part::Delimited(inner.parts)),
        }
        Ok(())
    }

    fn text(&mut self, pieces: &[Piece], text: bool) {
        for piece in pieces {
            match piece {
                Piece::Literal(literal) => self.fixed(literal.as_bytes()),
                Piece::Key => self.parts.push(Part::Key { text }),
                Piece::Seq => self.parts.push(Part::SeqText),
                Piece::Random(len) => self.parts.push(Part::Random { len: *len, text }),
            }
        }
    }
}

/// Adds `message`'s fields, in field number order (as prost-reflect encodes them), its
/// placeholders in `holes`.
fn message_parts(
    b: &mut Builder,
    message: &DynamicMessage,
    holes: &Holes,
) -> Result<(), GrpcError> {
    let has_hole = |number| holes.0.iter().any(|(field, _)| field.number() == number);
    let mut fields: Vec<(FieldDescriptor, Option<&Slot>)> = (message.fields())
        .filter(|(field, _)| !has_hole(field.number()))
        .map(|(field, _)| (field, None))
        .collect();
    fields.extend(
        holes
            .0
            .iter()
            .map(|(field, slot)| (field.clone(), Some(slot))),
    );
    fields.sort_by_key(|(field, _)| field.number());
    let desc = message.descriptor();
    for (field, slot) in &fields {
        let value = message.get_field(field);
        match slot {
            Some(Slot::Whole(hole)) => hole_parts(b, field, hole, &value)?,
            Some(Slot::Elements(holes)) => {
                list_parts(b, field, value.as_list().unwrap_or_default(), holes)?;
            }
            Some(Slot::Entries(holes)) => map_parts(b, field, &value, holes)?,
            None if field.is_map() => map_parts(b, field, &value, &[])?,
            None => b.fixed(&encode_alone(&desc, field, value.into_owned())),
        }
    }
    // Extensions (read from JSON's "[package.name]") hold no placeholders.
    for (extension, value) in message.extensions() {
        let mut alone = DynamicMessage::new(desc.clone());
        alone.set_extension(&extension, value.clone());
        b.fixed(&alone.encode_to_vec());
    }
    Ok(())
}

/// The encoding of `field` set to `value`, a value prost-reflect read for it, alone in a
/// message of type `desc`.
fn encode_alone(desc: &MessageDescriptor, field: &FieldDescriptor, value: Value) -> Vec<u8> {
    let mut alone = DynamicMessage::new(desc.clone());
    alone.set_field(field, value);
    alone.encode_to_vec()
}

/// Adds `field` (or one element of it) holding `hole`, its neutral value being `value`.
fn hole_parts(
    b: &mut Builder,
    field: &FieldDescriptor,
    hole: &Hole,
    value: &Value,
) -> Result<(), GrpcError> {
    match hole {
        Hole::Text(pieces) => {
            b.tag(field.number(), WireType::LengthDelimited);
            let text = !matches!(field.kind(), Kind::Bytes);
            b.delimited(|inner| {
                inner.text(pieces, text);
                Ok(())
            })
        }
        Hole::Number(number) => {
            b.tag(field.number(), number.wire_type());
            b.parts.push(Part::SeqNumber(*number));
            Ok(())
        }
        Hole::Message(holes) => {
            let message = value.as_message().ok_or_else(|| {
                mismatch(
                    field.parent_message(),
                    format!("{} is not a message", field.name()),
                )
            })?;
            b.tag(field.number(), WireType::LengthDelimited);
            b.delimited(|inner| message_parts(inner, message, holes))
        }
    }
}

/// Adds a repeated field with placeholders in some of its elements.
fn list_parts(
    b: &mut Builder,
    field: &FieldDescriptor,
    list: &[Value],
    holes: &[(usize, Hole)],
) -> Result<(), GrpcError> {
    let hole = |index| {
        holes
            .iter()
            .find(|(at, _)| *at == index)
            .map(|(_, hole)| hole)
    };
    let desc = field.parent_message();
    if !field.is_packed() {
        for (index, element) in list.iter().enumerate() {
            match hole(index) {
                Some(hole) => hole_parts(b, field, hole, element)?,
                None => b.fixed(&encode_alone(
                    desc,
                    field,
                    Value::List(vec![element.clone()]),
                )),
            }
        }
        return Ok(());
    }
    // Packed numbers (only numbers hold {seq} and pack): one length, then the values.
    let number = Number::of(&field.kind());
    let number =
        number.ok_or_else(|| mismatch(desc, format!("{} is not numbers", field.name())))?;
    b.tag(field.number(), WireType::LengthDelimited);
    b.delimited(|inner| {
        for (index, element) in list.iter().enumerate() {
            if hole(index).is_some() {
                inner.parts.push(Part::SeqNumber(number));
                continue;
            }
            let wire = number.of_value(element).ok_or_else(|| {
                mismatch(
                    desc,
                    format!(
                        "{}[{index}] is not {}",
                        field.name(),
                        kind_name(&field.kind())
                    ),
                )
            })?;
            let mut bytes = Vec::with_capacity(10);
            wire.write(&mut bytes);
            inner.fixed(&bytes);
        }
        Ok(())
    })
}

/// Adds a map field, its entries in key order (for one encoding whatever the map's hash
/// order), with placeholders in the values of some.
fn map_parts(
    b: &mut Builder,
    field: &FieldDescriptor,
    value: &Value,
    holes: &[(MapKey, Hole)],
) -> Result<(), GrpcError> {
    let desc = field.parent_message();
    let (Some(map), Kind::Message(entry)) = (value.as_map(), field.kind()) else {
        return Err(mismatch(desc, format!("{} is not a map", field.name())));
    };
    let (Some(key_field), Some(value_field)) = (entry.get_field(1), entry.get_field(2)) else {
        return Err(mismatch(desc, format!("{} is not a map", field.name())));
    };
    let mut entries: Vec<(&MapKey, &Value)> = map.iter().collect();
    entries.sort_by(|a, b| a.0.cmp(b.0));
    for (key, value) in entries {
        let Some((_, hole)) = holes.iter().find(|(at, _)| at == key) else {
            let alone = HashMap::from([(key.clone(), value.clone())]);
            b.fixed(&encode_alone(desc, field, Value::Map(alone)));
            continue;
        };
        b.tag(field.number(), WireType::LengthDelimited);
        b.delimited(|inner| {
            inner.fixed(&encode_alone(&entry, &key_field, Value::from(key.clone())));
            hole_parts(inner, &value_field, hole, value)
        })?;
    }
    Ok(())
}
