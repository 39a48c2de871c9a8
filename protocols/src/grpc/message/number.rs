//! Numbers as protobuf's wire has them: `{seq}` in a number field, and the literal values
//! packed beside it.

use prost::encoding::{WireType, encode_varint, encoded_len_varint};
use prost_reflect::{Kind, Value};

/// A number field's type, for `{seq}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Number {
    Int32,
    Int64,
    Uint32,
    Uint64,
    Sint32,
    Sint64,
    Fixed32,
    Fixed64,
    Sfixed32,
    Sfixed64,
    Float,
    Double,
}

/// A number as the wire has it.
#[derive(Debug, Clone, Copy)]
pub(super) enum Wire {
    Varint(u64),
    Bits32(u32),
    Bits64(u64),
}

impl Number {
    pub(super) fn of(kind: &Kind) -> Option<Number> {
        Some(match kind {
            Kind::Int32 => Number::Int32,
            Kind::Int64 => Number::Int64,
            Kind::Uint32 => Number::Uint32,
            Kind::Uint64 => Number::Uint64,
            Kind::Sint32 => Number::Sint32,
            Kind::Sint64 => Number::Sint64,
            Kind::Fixed32 => Number::Fixed32,
            Kind::Fixed64 => Number::Fixed64,
            Kind::Sfixed32 => Number::Sfixed32,
            Kind::Sfixed64 => Number::Sfixed64,
            Kind::Float => Number::Float,
            Kind::Double => Number::Double,
            _ => return None,
        })
    }

    pub(super) fn wire_type(self) -> WireType {
        match self {
            Number::Fixed32 | Number::Sfixed32 | Number::Float => WireType::ThirtyTwoBit,
            Number::Fixed64 | Number::Sfixed64 | Number::Double => WireType::SixtyFourBit,
            _ => WireType::Varint,
        }
    }

    /// `seq` as this type, wrapped to its width as a cast does.
    pub(super) fn of_seq(self, seq: u64) -> Wire {
        match self {
            Number::Int32 => Wire::Varint(seq as i32 as u64),
            Number::Int64 | Number::Uint64 => Wire::Varint(seq),
            Number::Uint32 => Wire::Varint(u64::from(seq as u32)),
            Number::Sint32 => Wire::Varint(u64::from(zigzag32(seq as i32))),
            Number::Sint64 => Wire::Varint(zigzag64(seq as i64)),
            Number::Fixed32 | Number::Sfixed32 => Wire::Bits32(seq as u32),
            Number::Fixed64 | Number::Sfixed64 => Wire::Bits64(seq),
            Number::Float => Wire::Bits32((seq as f32).to_bits()),
            Number::Double => Wire::Bits64((seq as f64).to_bits()),
        }
    }

    /// `value`, a value of this type, as the wire has it.
    pub(super) fn of_value(self, value: &Value) -> Option<Wire> {
        Some(match (self, value) {
            (Number::Int32, Value::I32(v)) => Wire::Varint(i64::from(*v) as u64),
            (Number::Int64, Value::I64(v)) => Wire::Varint(*v as u64),
            (Number::Uint32, Value::U32(v)) => Wire::Varint(u64::from(*v)),
            (Number::Uint64, Value::U64(v)) => Wire::Varint(*v),
            (Number::Sint32, Value::I32(v)) => Wire::Varint(u64::from(zigzag32(*v))),
            (Number::Sint64, Value::I64(v)) => Wire::Varint(zigzag64(*v)),
            (Number::Fixed32, Value::U32(v)) => Wire::Bits32(*v),
            (Number::Fixed64, Value::U64(v)) => Wire::Bits64(*v),
            (Number::Sfixed32, Value::I32(v)) => Wire::Bits32(*v as u32),
            (Number::Sfixed64, Value::I64(v)) => Wire::Bits64(*v as u64),
            (Number::Float, Value::F32(v)) => Wire::Bits32(v.to_bits()),
            (Number::Double, Value::F64(v)) => Wire::Bits64(v.to_bits()),
            _ => return None,
        })
    }
}

fn zigzag32(value: i32) -> u32 {
    ((value << 1) ^ (value >> 31)) as u32
}

fn zigzag64(value: i64) -> u64 {
    ((value << 1) ^ (value >> 63)) as u64
}

impl Wire {
    pub(super) fn len(self) -> usize {
        match self {
            Wire::Varint(value) => encoded_len_varint(value),
            Wire::Bits32(_) => 4,
            Wire::Bits64(_) => 8,
        }
    }

    pub(super) fn write(self, out: &mut Vec<u8>) {
        match self {
            Wire::Varint(value) => encode_varint(value, out),
            Wire::Bits32(bits) => out.extend_from_slice(&bits.to_le_bytes()),
            Wire::Bits64(bits) => out.extend_from_slice(&bits.to_le_bytes()),
        }
    }
}
