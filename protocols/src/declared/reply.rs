//! Reading a reply's frame: its id, if replies carry one, and whether it is ok.

use crate::protocol::vocab::{ParseError, Reply, ReplyKind};

use super::declaration::{ByteOrder, OkCheck, ReplyDeclaration, ReplyMatch};
use super::error::{DeclareError, NAME};
use super::framing::{self, Framer};
use super::text::{self, Form};

/// A declaration's reply matching, checked.
#[derive(Debug, Clone)]
pub(super) struct Matcher {
    id: Option<Id>,
    ok: Option<OkBytes>,
}

#[derive(Debug, Clone, Copy)]
struct Id {
    offset: usize,
    width: usize,
    order: ByteOrder,
}

#[derive(Debug, Clone)]
struct OkBytes {
    offset: usize,
    bytes: Vec<u8>,
}

impl Matcher {
    /// Checks `reply` against the frames `framer` allows.
    pub(super) fn new(reply: &ReplyDeclaration, framer: &Framer) -> Result<Matcher, DeclareError> {
        let (longest, longest_name) = framer.longest();
        let inside = |at: &str, offset: u64, len: usize, what: &str| {
            let end = offset.saturating_add(len as u64);
            if end > longest as u64 {
                return Err(DeclareError::new(
                    at,
                    format!(
                        "{what} at bytes {offset}..{end} ends past {longest_name}: expected it \
                         inside a frame"
                    ),
                ));
            }
            Ok(offset as usize)
        };
        let id = match reply.matching {
            ReplyMatch::InOrder => None,
            ReplyMatch::Id(id) => {
                let width = framing::int_width("reply.match.id.bytes", id.bytes)?;
                let offset = inside("reply.match.id.offset", id.offset, width, "the id")?;
                Some(Id {
                    offset,
                    width,
                    order: id.order,
                })
            }
        };
        let ok = match &reply.ok {
            None => None,
            Some(check) => {
                let bytes = ok_bytes(check)?;
                let offset = inside("reply.ok.offset", check.offset, bytes.len(), "the ok check")?;
                Some(OkBytes { offset, bytes })
            }
        };
        Ok(Matcher { id, ok })
    }

    /// The reply in `frame`, a whole frame. A frame too short for the id is malformed;
    /// one too short for the ok bytes is an error reply.
    pub(super) fn read(&self, frame: &[u8]) -> Result<Reply, ParseError> {
        let opaque = match self.id {
            None => None,
            Some(id) => {
                let end = id.offset + id.width;
                let Some(field) = frame.get(id.offset..end) else {
                    return Err(ParseError::new(
                        NAME,
                        format!(
                            "a frame of {} bytes, too short for the id at bytes {}..{end}",
                            frame.len(),
                            id.offset
                        ),
                        frame,
                    ));
                };
                // An 8-byte id is compared by its low 32 bits, as the opaque holds.
                Some(framing::read_uint(field, id.order) as u32)
            }
        };
        let is_ok = match &self.ok {
            None => true,
            Some(ok) => frame.get(ok.offset..ok.offset + ok.bytes.len()) == Some(&ok.bytes[..]),
        };
        let kind = if is_ok {
            ReplyKind::Ok
        } else {
            ReplyKind::Error
        };
        Ok(Reply {
            opaque,
            ..Reply::new(kind, frame.len())
        })
    }

    /// The mask of the id's width, or `None` for in-order replies.
    pub(super) fn id_mask(&self) -> Option<u32> {
        self.id.map(|id| match id.width {
            1 => 0xFF,
            2 => 0xFFFF,
            _ => u32::MAX,
        })
    }
}

/// The bytes an ok reply holds: exactly one of `equals` or `hex`, not empty.
fn ok_bytes(check: &OkCheck) -> Result<Vec<u8>, DeclareError> {
    let (at, bytes) = match (&check.equals, &check.hex) {
        (Some(equals), None) => ("reply.ok.equals", text::literal(equals, Form::Text)),
        (None, Some(hex)) => ("reply.ok.hex", text::literal(hex, Form::Hex)),
        (Some(_), Some(_)) => {
            return Err(DeclareError::new(
                "reply.ok",
                "both equals and hex: expected exactly one",
            ));
        }
        (None, None) => {
            return Err(DeclareError::new(
                "reply.ok",
                "neither equals nor hex: expected exactly one, as in {offset: 0, equals: OK}",
            ));
        }
    };
    let bytes = bytes.map_err(|error| error.at(at))?;
    if bytes.is_empty() {
        return Err(DeclareError::new(
            at,
            "empty: expected at least one byte to compare",
        ));
    }
    Ok(bytes)
}
