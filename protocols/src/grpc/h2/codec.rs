//! Bytes to frames and back, sans I/O and incremental (as hyperium/h2's `codec`): [`decode`]
//! cuts the first frame out of a buffer, "need more bytes" a normal answer; the encoders
//! append the frames a client writes to the caller's buffer. No connection state here.

use super::frame::{Flags, Frame, FrameError, FrameProblem, HEAD_LEN, Head, Kind, SettingId};

/// The frame size every endpoint accepts before SETTINGS say more; the client never says
/// more, so no frame it reads is larger.
pub(crate) const MAX_FRAME: usize = 16_384;

/// What the start of a buffer holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Decoded<'a> {
    /// Not a whole frame yet.
    Incomplete,
    /// A frame, and the bytes it took (its head and payload).
    Frame(Frame<'a>, usize),
}

/// The first frame in `buf`, refused when its head announces more than [`MAX_FRAME`]
/// (before its payload arrives, so that a bad length cannot make the caller buffer it).
pub(crate) fn decode(buf: &[u8]) -> Result<Decoded<'_>, FrameError> {
    let Some(head) = buf.first_chunk::<HEAD_LEN>() else {
        return Ok(Decoded::Incomplete);
    };
    let head = Head::parse(head);
    if head.len > MAX_FRAME {
        return Err(FrameError {
            kind: head.kind,
            stream: head.stream,
            problem: FrameProblem::TooLong {
                len: head.len,
                max: MAX_FRAME,
            },
        });
    }
    let Some(payload) = buf.get(HEAD_LEN..HEAD_LEN + head.len) else {
        return Ok(Decoded::Incomplete);
    };
    Ok(Decoded::Frame(
        Frame::parse(head, payload)?,
        HEAD_LEN + head.len,
    ))
}

/// Appends a frame head for a payload of `len` bytes.
pub(crate) fn head(out: &mut Vec<u8>, len: usize, kind: Kind, flags: Flags, stream: u32) {
    Head {
        len,
        kind,
        flags,
        stream,
    }
    .encode(out);
}

/// Appends a SETTINGS frame of `settings`.
pub(crate) fn settings(out: &mut Vec<u8>, settings: &[(SettingId, u32)]) {
    head(out, settings.len() * 6, Kind::Settings, Flags::NONE, 0);
    for (id, value) in settings {
        out.extend_from_slice(&id.to_u16().to_be_bytes());
        out.extend_from_slice(&value.to_be_bytes());
    }
}

/// Appends the acknowledgement of the peer's SETTINGS.
pub(crate) fn settings_ack(out: &mut Vec<u8>) {
    head(out, 0, Kind::Settings, Flags::ACK, 0);
}

/// Appends the answer to a PING carrying `payload`.
pub(crate) fn ping_ack(out: &mut Vec<u8>, payload: &[u8; 8]) {
    head(out, 8, Kind::Ping, Flags::ACK, 0);
    out.extend_from_slice(payload);
}

/// Appends a WINDOW_UPDATE of `increment` for `stream` (0: the connection).
pub(crate) fn window_update(out: &mut Vec<u8>, stream: u32, increment: u32) {
    head(out, 4, Kind::WindowUpdate, Flags::NONE, stream);
    out.extend_from_slice(&increment.to_be_bytes());
}
