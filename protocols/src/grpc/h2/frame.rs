//! HTTP/2 frames as types (RFC 9113 §4 and §6): the 9-byte head, the kinds, flags, error
//! codes and SETTINGS ids by name, and each kind's payload read into what it says. Nothing
//! here knows a connection's state or gRPC; [`super::codec`] cuts frames out of bytes.

use std::fmt;

/// The bytes of a frame's head: length (24 bits), type, flags, stream id (31 bits).
pub(crate) const HEAD_LEN: usize = 9;

/// The highest stream id (31 bits; the reserved bit is ignored on receipt).
pub(crate) const MAX_STREAM: u32 = (1 << 31) - 1;

/// A frame's type (RFC 9113 §6); types this client does not know are kept by number and
/// ignored, as §4.1 asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Data,
    Headers,
    Priority,
    RstStream,
    Settings,
    PushPromise,
    Ping,
    GoAway,
    WindowUpdate,
    Continuation,
    Unknown(u8),
}

impl Kind {
    /// The kind of type byte `byte`.
    pub(crate) fn from_byte(byte: u8) -> Kind {
        match byte {
            0x0 => Kind::Data,
            0x1 => Kind::Headers,
            0x2 => Kind::Priority,
            0x3 => Kind::RstStream,
            0x4 => Kind::Settings,
            0x5 => Kind::PushPromise,
            0x6 => Kind::Ping,
            0x7 => Kind::GoAway,
            0x8 => Kind::WindowUpdate,
            0x9 => Kind::Continuation,
            other => Kind::Unknown(other),
        }
    }

    /// The type byte on the wire.
    pub(crate) fn byte(self) -> u8 {
        match self {
            Kind::Data => 0x0,
            Kind::Headers => 0x1,
            Kind::Priority => 0x2,
            Kind::RstStream => 0x3,
            Kind::Settings => 0x4,
            Kind::PushPromise => 0x5,
            Kind::Ping => 0x6,
            Kind::GoAway => 0x7,
            Kind::WindowUpdate => 0x8,
            Kind::Continuation => 0x9,
            Kind::Unknown(byte) => byte,
        }
    }
}

/// A frame's flags byte; which bits mean what depends on the kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Flags(pub(crate) u8);

impl Flags {
    pub(crate) const NONE: Flags = Flags(0);
    /// DATA, HEADERS: the stream ends with this frame.
    pub(crate) const END_STREAM: Flags = Flags(0x1);
    /// SETTINGS, PING: an acknowledgement (the same bit as END_STREAM).
    pub(crate) const ACK: Flags = Flags(0x1);
    /// HEADERS, CONTINUATION: the header block ends with this frame.
    pub(crate) const END_HEADERS: Flags = Flags(0x4);
    /// DATA, HEADERS: a pad length byte first, padding last.
    pub(crate) const PADDED: Flags = Flags(0x8);
    /// HEADERS: a stream dependency and weight (5 bytes) before the block.
    pub(crate) const PRIORITY: Flags = Flags(0x20);

    /// Whether every bit of `other` is set.
    pub(crate) fn has(self, other: Flags) -> bool {
        self.0 & other.0 == other.0
    }
}

impl std::ops::BitOr for Flags {
    type Output = Flags;
    fn bitor(self, other: Flags) -> Flags {
        Flags(self.0 | other.0)
    }
}

/// A frame's head: how long its payload is, its kind, flags and stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Head {
    pub(crate) len: usize,
    pub(crate) kind: Kind,
    pub(crate) flags: Flags,
    pub(crate) stream: u32,
}

impl Head {
    /// The head in `bytes`, the reserved bit of the stream id cleared.
    pub(crate) fn parse(bytes: &[u8; HEAD_LEN]) -> Head {
        let [l0, l1, l2, kind, flags, s0, s1, s2, s3] = *bytes;
        Head {
            len: u32::from_be_bytes([0, l0, l1, l2]) as usize,
            kind: Kind::from_byte(kind),
            flags: Flags(flags),
            stream: u32::from_be_bytes([s0, s1, s2, s3]) & MAX_STREAM,
        }
    }

    /// Appends the head (a length over 24 bits is the caller's mistake: the encoders here
    /// never write one).
    pub(crate) fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&(self.len as u32).to_be_bytes()[1..]);
        out.extend_from_slice(&[self.kind.byte(), self.flags.0]);
        out.extend_from_slice(&self.stream.to_be_bytes());
    }
}

/// An HTTP/2 error code (RFC 9113 §7), as RST_STREAM and GOAWAY carry it; codes this client
/// has no name for are kept by number.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct ErrorCode(pub(crate) u32);

impl ErrorCode {
    /// A graceful shutdown: nothing went wrong.
    pub(crate) const NO_ERROR: ErrorCode = ErrorCode(0x0);
    #[cfg(test)]
    pub(crate) const PROTOCOL_ERROR: ErrorCode = ErrorCode(0x1);
    /// The stream was refused before any of it was processed: safe to send again (§8.7).
    pub(crate) const REFUSED_STREAM: ErrorCode = ErrorCode(0x7);
    #[cfg(test)]
    pub(crate) const ENHANCE_YOUR_CALM: ErrorCode = ErrorCode(0xb);

    /// The code's name in RFC 9113 §7, if it has one.
    fn name(self) -> Option<&'static str> {
        const NAMES: [&str; 14] = [
            "NO_ERROR",
            "PROTOCOL_ERROR",
            "INTERNAL_ERROR",
            "FLOW_CONTROL_ERROR",
            "SETTINGS_TIMEOUT",
            "STREAM_CLOSED",
            "FRAME_SIZE_ERROR",
            "REFUSED_STREAM",
            "CANCEL",
            "COMPRESSION_ERROR",
            "CONNECT_ERROR",
            "ENHANCE_YOUR_CALM",
            "INADEQUATE_SECURITY",
            "HTTP_1_1_REQUIRED",
        ];
        NAMES.get(self.0 as usize).copied()
    }
}

impl fmt::Debug for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(name) => f.write_str(name),
            None => write!(f, "0x{:x}", self.0),
        }
    }
}

/// A SETTINGS parameter this client acts on or sends (RFC 9113 §6.5.2); others are ignored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SettingId {
    HeaderTableSize,
    EnablePush,
    MaxConcurrentStreams,
    InitialWindowSize,
    MaxFrameSize,
    MaxHeaderListSize,
    Unknown(u16),
}

impl SettingId {
    fn from_u16(id: u16) -> SettingId {
        match id {
            0x1 => SettingId::HeaderTableSize,
            0x2 => SettingId::EnablePush,
            0x3 => SettingId::MaxConcurrentStreams,
            0x4 => SettingId::InitialWindowSize,
            0x5 => SettingId::MaxFrameSize,
            0x6 => SettingId::MaxHeaderListSize,
            other => SettingId::Unknown(other),
        }
    }

    /// The id on the wire.
    pub(crate) fn to_u16(self) -> u16 {
        match self {
            SettingId::HeaderTableSize => 0x1,
            SettingId::EnablePush => 0x2,
            SettingId::MaxConcurrentStreams => 0x3,
            SettingId::InitialWindowSize => 0x4,
            SettingId::MaxFrameSize => 0x5,
            SettingId::MaxHeaderListSize => 0x6,
            SettingId::Unknown(id) => id,
        }
    }
}

/// A SETTINGS frame's parameters, read one at a time (the payload was checked to be a
/// multiple of 6 bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Settings<'a>(pub(crate) &'a [u8]);

impl<'a> Settings<'a> {
    /// Each parameter: its id and value.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (SettingId, u32)> + 'a {
        self.0.chunks_exact(6).map(|s| {
            let id = u16::from_be_bytes([s[0], s[1]]);
            (
                SettingId::from_u16(id),
                u32::from_be_bytes([s[2], s[3], s[4], s[5]]),
            )
        })
    }
}

/// A GOAWAY (RFC 9113 §6.8): streams up to `last_stream` may have been processed and may
/// still complete; those above were not, and may be sent again on a new connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct GoAway<'a> {
    pub(crate) last_stream: u32,
    pub(crate) code: ErrorCode,
    /// Opaque diagnostic bytes the server chose to add.
    pub(crate) debug: &'a [u8],
}

/// One frame, its payload read into what its kind says (padding and priority fields
/// removed); the header block fragments are still HPACK-encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Frame<'a> {
    Data {
        stream: u32,
        end_stream: bool,
        data: &'a [u8],
        /// The whole payload's length, padding included: what flow control counts.
        flow_len: usize,
    },
    Headers {
        stream: u32,
        end_stream: bool,
        end_headers: bool,
        block: &'a [u8],
    },
    Continuation {
        stream: u32,
        end_headers: bool,
        block: &'a [u8],
    },
    RstStream {
        stream: u32,
        code: ErrorCode,
    },
    Settings {
        ack: bool,
        settings: Settings<'a>,
    },
    Ping {
        ack: bool,
        payload: [u8; 8],
    },
    GoAway(GoAway<'a>),
    WindowUpdate {
        stream: u32,
        increment: u32,
    },
    PushPromise {
        stream: u32,
    },
    /// PRIORITY and unknown kinds: nothing for a client to do (RFC 9113 §5.3.2, §4.1).
    Ignored {
        kind: Kind,
    },
}

/// A frame that is not what its kind requires: which kind, on which stream, and what was
/// wrong, so that a bad server's message names the frame.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a {kind:?} frame on stream {stream}: {problem}")]
pub(crate) struct FrameError {
    pub(crate) kind: Kind,
    pub(crate) stream: u32,
    pub(crate) problem: FrameProblem,
}

/// What was wrong with a frame (RFC 9113 §6, each kind's rules on length and stream).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub(crate) enum FrameProblem {
    #[error("{len} bytes, over the {max} the client allows (SETTINGS_MAX_FRAME_SIZE)")]
    TooLong { len: usize, max: usize },
    #[error("{len} bytes, where it must be {expected}")]
    WrongLength { len: usize, expected: &'static str },
    #[error("padding of {pad} bytes in a payload of {len}")]
    Padding { pad: usize, len: usize },
    #[error("stream 0, where the frame belongs to a stream")]
    NeedsStream,
    #[error("a stream id, where the frame belongs to the connection (stream 0)")]
    NeedsConnection,
}

impl<'a> Frame<'a> {
    /// The frame `head` announces, from its whole `payload`.
    pub(crate) fn parse(head: Head, payload: &'a [u8]) -> Result<Frame<'a>, FrameError> {
        let error = |problem| FrameError {
            kind: head.kind,
            stream: head.stream,
            problem,
        };
        let len = payload.len();
        check(head, len).map_err(error)?;
        let (flags, stream) = (head.flags, head.stream);
        Ok(match head.kind {
            Kind::Data => Frame::Data {
                stream,
                end_stream: flags.has(Flags::END_STREAM),
                data: unpad(flags, payload).map_err(error)?,
                flow_len: len,
            },
            Kind::Headers => {
                let block = unpad(flags, payload).map_err(error)?;
                let block = match flags.has(Flags::PRIORITY) {
                    true => block.get(5..).ok_or_else(|| {
                        error(FrameProblem::WrongLength {
                            len,
                            expected: "at least 5 with PRIORITY",
                        })
                    })?,
                    false => block,
                };
                Frame::Headers {
                    stream,
                    end_stream: flags.has(Flags::END_STREAM),
                    end_headers: flags.has(Flags::END_HEADERS),
                    block,
                }
            }
            Kind::Continuation => Frame::Continuation {
                stream,
                end_headers: flags.has(Flags::END_HEADERS),
                block: payload,
            },
            Kind::RstStream => Frame::RstStream {
                stream,
                code: ErrorCode(be32(payload)),
            },
            Kind::Settings => Frame::Settings {
                ack: flags.has(Flags::ACK),
                settings: Settings(payload),
            },
            Kind::Ping => Frame::Ping {
                ack: flags.has(Flags::ACK),
                payload: payload
                    .try_into()
                    .map_err(|_| error(FrameProblem::WrongLength { len, expected: "8" }))?,
            },
            Kind::GoAway => Frame::GoAway(GoAway {
                last_stream: be32(payload) & MAX_STREAM,
                code: ErrorCode(be32(payload.get(4..).unwrap_or_default())),
                debug: payload.get(8..).unwrap_or_default(),
            }),
            Kind::WindowUpdate => Frame::WindowUpdate {
                stream,
                increment: be32(payload) & MAX_STREAM,
            },
            Kind::PushPromise => Frame::PushPromise { stream },
            kind @ (Kind::Priority | Kind::Unknown(_)) => Frame::Ignored { kind },
        })
    }
}

/// Whether a frame of `head` with a payload of `len` bytes is where its kind belongs (on a
/// stream, or on the connection) and as long as its kind requires (RFC 9113 §6).
fn check(head: Head, len: usize) -> Result<(), FrameProblem> {
    /// Where a kind belongs.
    enum On {
        Stream,
        Connection,
        Either,
    }
    let ack = head.flags.has(Flags::ACK);
    let (on, wrong_length) = match head.kind {
        Kind::Data | Kind::Headers | Kind::Continuation => (On::Stream, None),
        Kind::RstStream => (On::Stream, (len != 4).then_some("4")),
        Kind::Settings if ack => (On::Connection, (len != 0).then_some("0 in an ACK")),
        Kind::Settings => (
            On::Connection,
            (!len.is_multiple_of(6)).then_some("a multiple of 6"),
        ),
        Kind::Ping => (On::Connection, (len != 8).then_some("8")),
        Kind::GoAway => (On::Connection, (len < 8).then_some("at least 8")),
        Kind::WindowUpdate => (On::Either, (len != 4).then_some("4")),
        Kind::PushPromise | Kind::Priority | Kind::Unknown(_) => (On::Either, None),
    };
    match (on, head.stream) {
        (On::Stream, 0) => Err(FrameProblem::NeedsStream),
        (On::Connection, 1..) => Err(FrameProblem::NeedsConnection),
        _ => match wrong_length {
            Some(expected) => Err(FrameProblem::WrongLength { len, expected }),
            None => Ok(()),
        },
    }
}

/// A payload without its padding (when PADDED).
fn unpad(flags: Flags, payload: &[u8]) -> Result<&[u8], FrameProblem> {
    if !flags.has(Flags::PADDED) {
        return Ok(payload);
    }
    let len = payload.len();
    let too_short = |pad| FrameProblem::Padding { pad, len };
    let (&pad, rest) = payload.split_first().ok_or(too_short(0))?;
    let end = rest
        .len()
        .checked_sub(usize::from(pad))
        .ok_or(too_short(usize::from(pad)))?;
    Ok(&rest[..end])
}

/// The big-endian u32 at the start of `bytes`, which the caller checked holds 4.
fn be32(bytes: &[u8]) -> u32 {
    match bytes {
        [a, b, c, d, ..] => u32::from_be_bytes([*a, *b, *c, *d]),
        _ => 0,
    }
}
