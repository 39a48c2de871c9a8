//! The HTTP/2 a gRPC client needs (RFC 9113), sans I/O: one [`Connection`] per TCP
//! connection, which writes the preface, a unary call's HEADERS and DATA, and the answers
//! the peer is owed (SETTINGS and PING acknowledgements, window updates), and reads the
//! server's frames one at a time into replies. Request headers are written as literals
//! without indexing (always legal, no encoder table to keep in step); the server's are
//! decoded with its dynamic table and Huffman codes by `loona-hpack`. As in hyperium/h2,
//! [`frame`] holds the frames as types, [`codec`] turns bytes into frames and back, and
//! [`Connection`] is the state that reacts to them.
//!
//! A GOAWAY is honoured as RFC 9113 §6.8 says: no stream opens after it; streams at or
//! below its last stream id finish; those above (and streams reset with REFUSED_STREAM)
//! were never processed and come back as [`ReplyKind::Refused`], for the caller to send
//! again on a new connection; the connection is [spent](Session::spent) once its streams
//! are done, or at once when the GOAWAY carries an error (the server is closing it, and
//! the streams it named fail with it).
//!
//! What a timestamp means here: several requests' frames may leave in one segment, and
//! several replies arrive in one. A request's TX stamp is its DATA frame's last byte's;
//! its reply is complete when the frame ending its stream (the trailers) has arrived, and
//! the RX stamp is that of the read which completed it: exact for the last reply of the
//! read, an upper bound for those before it (as for any pipelined protocol).

mod codec;
pub(crate) mod frame;

use std::collections::HashMap;

use loona_hpack::Decoder;

use std::sync::Arc;

use crate::protocol::vocab::{EncodeError, ParseError, Parsed, Reply, ReplyKind, Request, Session};

use super::call::{Call, NAME};
pub(crate) use codec::{Decoded, MAX_FRAME, decode};
use frame::{ErrorCode, Flags, Frame, GoAway, Kind, MAX_STREAM, SettingId, Settings};

/// The client's connection preface.
const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// The window HTTP/2 starts every stream and the connection with.
const DEFAULT_WINDOW: i64 = 65_535;
/// The largest window: the client gives every stream and the connection this much, so
/// that replies never wait on it.
const MAX_WINDOW: u32 = (1 << 31) - 1;
/// The client tops the connection's window up once this much reply data has arrived.
const WINDOW_REFILL: u32 = 1 << 30;
/// The largest header table the server may make the client keep (the default).
const HEADER_TABLE: usize = 4096;
/// The largest header block (with its CONTINUATIONs) accepted.
const MAX_HEADER_BLOCK: usize = 256 << 10;

/// gRPC's length prefix: a compressed flag and a 4-byte big-endian length.
pub(super) const GRPC_PREFIX: usize = 5;

/// One HTTP/2 connection's client side: the streams open on it and what the server has
/// said about the connection (its settings, its windows, its GOAWAY).
pub(super) struct Connection {
    call: Arc<Call>,
    decoder: Decoder<'static>,
    /// The next stream id to open (odd).
    next_stream: u32,
    /// The open streams: each one's request opaque and what has come back so far.
    streams: HashMap<u32, Stream>,
    /// The server's limit on open streams (unlimited until its SETTINGS say).
    max_streams: usize,
    /// What the client may still send on the connection, and on a new stream.
    send_window: i64,
    stream_window: i64,
    /// The largest frame the server accepts.
    peer_max_frame: usize,
    /// Reply data received since the connection's window was last topped up.
    received: u32,
    /// A header block being continued in CONTINUATION frames.
    continued: Option<Continued>,
    /// The last request's DATA size: another waits until the window holds as much.
    last_data: i64,
    /// The server's GOAWAY, once it sent one: no stream opens after it.
    going_away: Option<GoingAway>,
    /// The opaques of requests the server never processed (above a GOAWAY's last stream,
    /// or reset with REFUSED_STREAM), each handed back once as a refused reply.
    refused: Vec<u32>,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("call", &self.call)
            .field("next_stream", &self.next_stream)
            .field("open_streams", &self.streams.len())
            .field("send_window", &self.send_window)
            .field("going_away", &self.going_away)
            .finish_non_exhaustive()
    }
}

/// A header block whose end has not arrived: its stream, whether the stream ends with it,
/// and its bytes so far.
struct Continued {
    stream: u32,
    end_stream: bool,
    block: Vec<u8>,
}

/// What a GOAWAY left of the connection (RFC 9113 §6.8): streams up to `last_stream` may
/// finish, none opens, and with an error `code` the connection is closing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct GoingAway {
    last_stream: u32,
    code: ErrorCode,
}

/// What one stream's reply has brought so far.
#[derive(Default)]
struct Stream {
    opaque: u32,
    /// The HTTP status of its response headers.
    http_status: Option<u16>,
    /// The gRPC status of its trailers (or of a trailers-only response).
    grpc_status: Option<u16>,
    /// The reply message's bytes (without gRPC's prefixes).
    data: usize,
}

impl Connection {
    pub(super) fn new(call: Arc<Call>) -> Connection {
        let mut decoder = Decoder::new();
        decoder.set_max_allowed_table_size(HEADER_TABLE);
        Connection {
            call,
            decoder,
            next_stream: 1,
            streams: HashMap::new(),
            max_streams: usize::MAX,
            send_window: DEFAULT_WINDOW,
            stream_window: DEFAULT_WINDOW,
            peer_max_frame: MAX_FRAME,
            received: 0,
            continued: None,
            last_data: 0,
            going_away: None,
            refused: Vec::new(),
        }
    }

    /// The malformed-reply error for `problem`, quoting `bytes`.
    fn malformed(&self, problem: impl Into<String>, bytes: &[u8]) -> ParseError {
        ParseError::new(NAME, problem, bytes)
    }

    /// A frame read in full (`bytes`, for errors to quote): what it means for the
    /// streams, and what to answer.
    fn frame(
        &mut self,
        frame: Frame<'_>,
        bytes: &[u8],
        answer: &mut Vec<u8>,
    ) -> Result<Option<Reply>, ParseError> {
        if let Some(c) = &self.continued
            && !matches!(frame, Frame::Continuation { stream, .. } if stream == c.stream)
        {
            return Err(self.malformed(
                format!(
                    "a header block on stream {} interrupted by {frame:?} (RFC 9113 6.10)",
                    c.stream
                ),
                bytes,
            ));
        }
        match frame {
            Frame::Data {
                stream,
                end_stream,
                data,
                flow_len,
            } => Ok(self.data(stream, end_stream, data, flow_len, answer)),
            Frame::Headers {
                stream,
                end_stream,
                end_headers: false,
                block,
            } => self.continue_block(stream, end_stream, block.to_vec()),
            Frame::Headers {
                stream,
                end_stream,
                block,
                ..
            } => self.header_block(stream, end_stream, block),
            Frame::Continuation {
                end_headers, block, ..
            } => {
                let Some(mut c) = self.continued.take() else {
                    return Err(self.malformed("a CONTINUATION with no header block open", bytes));
                };
                c.block.extend_from_slice(block);
                if !end_headers {
                    return self.continue_block(c.stream, c.end_stream, c.block);
                }
                self.header_block(c.stream, c.end_stream, &c.block)
            }
            Frame::Settings {
                ack: false,
                settings,
            } => {
                self.settings(settings);
                codec::settings_ack(answer);
                Ok(None)
            }
            Frame::Ping {
                ack: false,
                payload,
            } => {
                codec::ping_ack(answer, &payload);
                Ok(None)
            }
            Frame::WindowUpdate { stream, increment } => {
                if stream == 0 {
                    self.send_window += i64::from(increment);
                }
                Ok(None)
            }
            Frame::RstStream { stream, code } => Ok(self.reset(stream, code)),
            Frame::GoAway(go_away) => {
                self.go_away(go_away);
                Ok(None)
            }
            Frame::PushPromise { stream } => Err(self.malformed(
                format!("a PUSH_PROMISE on stream {stream}, which the client disabled"),
                bytes,
            )),
            // PRIORITY, SETTINGS and PING acknowledgements, unknown extensions: nothing to do.
            Frame::Settings { ack: true, .. }
            | Frame::Ping { ack: true, .. }
            | Frame::Ignored { .. } => Ok(None),
        }
    }

    /// A DATA frame: the reply message's bytes, counted against the connection's window.
    fn data(
        &mut self,
        stream: u32,
        end_stream: bool,
        data: &[u8],
        flow_len: usize,
        answer: &mut Vec<u8>,
    ) -> Option<Reply> {
        // At most MAX_FRAME bytes a frame, so the sum stays far below u32::MAX.
        self.received += flow_len as u32;
        if self.received >= WINDOW_REFILL {
            codec::window_update(answer, 0, self.received);
            self.received = 0;
        }
        // A stream given up (reset) may still have data in flight.
        let s = self.streams.get_mut(&stream)?;
        // The messages' bytes without their prefixes: a unary reply has one message, which
        // a frame boundary may cut anywhere.
        s.data += data.len();
        // Data ending the stream without trailers: gRPC says that is an error.
        end_stream.then(|| self.finish(stream)).flatten()
    }

    /// The start of a header block continued in CONTINUATION frames (`end_stream`: its
    /// stream ends with it), kept until its end arrives. Only then is a block copied: a
    /// block in one frame is decoded where it lies.
    fn continue_block(
        &mut self,
        stream: u32,
        end_stream: bool,
        block: Vec<u8>,
    ) -> Result<Option<Reply>, ParseError> {
        if block.len() > MAX_HEADER_BLOCK {
            return Err(self.malformed(
                format!("a header block on stream {stream} over {MAX_HEADER_BLOCK} bytes"),
                &block,
            ));
        }
        self.continued = Some(Continued {
            stream,
            end_stream,
            block,
        });
        Ok(None)
    }

    /// A complete header block (`end_stream`: its stream ends with it).
    fn header_block(
        &mut self,
        stream: u32,
        end_stream: bool,
        block: &[u8],
    ) -> Result<Option<Reply>, ParseError> {
        let (mut http_status, mut grpc_status) = (None, None);
        self.decoder
            .decode_with_cb(block, |name, value| {
                let number = || std::str::from_utf8(&value).ok()?.parse::<u16>().ok();
                match &name[..] {
                    b":status" => http_status = number(),
                    b"grpc-status" => grpc_status = number(),
                    _ => {}
                }
            })
            .map_err(|e| {
                self.malformed(
                    format!("a header block on stream {stream} HPACK cannot decode: {e}"),
                    block,
                )
            })?;
        let Some(s) = self.streams.get_mut(&stream) else {
            return Ok(None);
        };
        s.http_status = s.http_status.or(http_status);
        s.grpc_status = s.grpc_status.or(grpc_status);
        Ok(if end_stream {
            self.finish(stream)
        } else {
            None
        })
    }

    /// The stream ended: its reply, a success when HTTP said 200 and gRPC said OK.
    fn finish(&mut self, stream: u32) -> Option<Reply> {
        let s = self.streams.remove(&stream)?;
        let ok = s.http_status == Some(200) && s.grpc_status == Some(0);
        let kind = if ok { ReplyKind::Ok } else { ReplyKind::Error };
        Some(Reply {
            opaque: Some(s.opaque),
            // The gRPC status where there is one, else the HTTP status.
            status: s.grpc_status.or(s.http_status),
            ..Reply::new(kind, s.data.saturating_sub(GRPC_PREFIX))
        })
    }

    /// The server reset `stream` with `code`: refused (never processed, so sent again,
    /// RFC 9113 §8.7), or failed with the code as its status.
    fn reset(&mut self, stream: u32, code: ErrorCode) -> Option<Reply> {
        let s = self.streams.remove(&stream)?;
        if code == ErrorCode::REFUSED_STREAM {
            return Some(refused(s.opaque));
        }
        Some(Reply {
            opaque: Some(s.opaque),
            status: u16::try_from(code.0).ok(),
            ..Reply::new(ReplyKind::Error, s.data)
        })
    }

    /// The server's GOAWAY (RFC 9113 §6.8): no stream opens after it; the streams above
    /// its last stream id were never processed and are handed back as refused, to be
    /// sent again; those at or below it may finish. A later GOAWAY may only lower the
    /// last stream id.
    fn go_away(&mut self, go_away: GoAway<'_>) {
        let last_stream = (self.going_away).map_or(go_away.last_stream, |g| {
            g.last_stream.min(go_away.last_stream)
        });
        self.going_away = Some(GoingAway {
            last_stream,
            code: go_away.code,
        });
        let refused = &mut self.refused;
        self.streams.retain(|&id, s| {
            let processed = id <= last_stream;
            if !processed {
                refused.push(s.opaque);
            }
            processed
        });
    }

    /// The server's SETTINGS: its stream limit, its initial window and its frame size.
    fn settings(&mut self, settings: Settings<'_>) {
        for (id, value) in settings.iter() {
            match id {
                SettingId::MaxConcurrentStreams => self.max_streams = value as usize,
                SettingId::InitialWindowSize => {
                    // A change applies to open streams too; the client's requests are
                    // sent whole, so only new ones are affected.
                    self.stream_window = i64::from(value.min(MAX_WINDOW));
                }
                SettingId::MaxFrameSize => {
                    self.peer_max_frame = (value as usize).clamp(MAX_FRAME, 1 << 24);
                }
                _ => {}
            }
        }
    }
}

/// The reply handing back request `opaque`, which the server never processed.
fn refused(opaque: u32) -> Reply {
    Reply {
        opaque: Some(opaque),
        ..Reply::new(ReplyKind::Refused, 0)
    }
}

impl Session for Connection {
    fn open(&mut self, out: &mut Vec<u8>) {
        out.extend_from_slice(PREFACE);
        // No server push; every stream's window as large as can be.
        codec::settings(
            out,
            &[
                (SettingId::EnablePush, 0),
                (SettingId::InitialWindowSize, MAX_WINDOW),
            ],
        );
        codec::window_update(out, 0, MAX_WINDOW - DEFAULT_WINDOW as u32);
    }

    fn ready(&self) -> bool {
        self.going_away.is_none()
            && self.streams.len() < self.max_streams
            && self.send_window >= self.last_data
            && self.next_stream <= MAX_STREAM
    }

    /// Spent once a GOAWAY's streams have all finished (at once, for a GOAWAY with an
    /// error: the server closes the connection, RFC 9113 §5.4.1, and the streams it
    /// named fail), or once no stream id is left and none is open.
    fn spent(&self) -> bool {
        if !self.refused.is_empty() {
            return false;
        }
        match self.going_away {
            Some(g) => g.code != ErrorCode::NO_ERROR || self.streams.is_empty(),
            None => self.next_stream > MAX_STREAM && self.streams.is_empty(),
        }
    }

    fn encode(
        &mut self,
        request: &Request<'_>,
        opaque: u32,
        out: &mut Vec<u8>,
    ) -> Result<(), EncodeError> {
        let Request::Template { key, entropy, .. } = *request else {
            return Err(EncodeError::unsupported(NAME, request));
        };
        let stream = self.next_stream;
        if stream > MAX_STREAM {
            return Err(EncodeError::Exhausted {
                protocol: NAME,
                what: "stream ids",
            });
        }
        let start = out.len();
        // HEADERS: the method's header block, the same for every call.
        let block = self.call.header_block();
        codec::head(out, block.len(), Kind::Headers, Flags::END_HEADERS, stream);
        out.extend_from_slice(block);
        // DATA: the gRPC message, its prefix back-patched once its length is known.
        let data_at = out.len();
        codec::head(out, 0, Kind::Data, Flags::END_STREAM, stream);
        out.extend_from_slice(&[0; GRPC_PREFIX]);
        let message_at = out.len();
        if let Err(e) = self.call.encode_message(key, opaque, entropy, out) {
            out.truncate(start);
            return Err(e);
        }
        let message = out.len() - message_at;
        let data = message + GRPC_PREFIX;
        if data as i64 > self.stream_window.min(self.send_window) || message > u32::MAX as usize {
            out.truncate(start);
            return Err(EncodeError::ValueTooLarge {
                protocol: NAME,
                len: data,
                max: self.stream_window.min(self.send_window).max(0) as usize,
            });
        }
        out[message_at - 4..message_at].copy_from_slice(&(message as u32).to_be_bytes());
        if data <= self.peer_max_frame {
            out[data_at..data_at + 3].copy_from_slice(&(data as u32).to_be_bytes()[1..]);
        } else {
            // Larger than a frame: split into frames the server accepts.
            let payload = out.split_off(data_at + frame::HEAD_LEN);
            out.truncate(data_at);
            let chunks = payload.chunks(self.peer_max_frame);
            let last = chunks.len() - 1;
            for (i, chunk) in chunks.enumerate() {
                let flags = if i == last {
                    Flags::END_STREAM
                } else {
                    Flags::NONE
                };
                codec::head(out, chunk.len(), Kind::Data, flags, stream);
                out.extend_from_slice(chunk);
            }
        }
        self.send_window -= data as i64;
        self.last_data = data as i64;
        self.next_stream += 2;
        self.streams.insert(
            stream,
            Stream {
                opaque,
                ..Stream::default()
            },
        );
        Ok(())
    }

    fn parse(&mut self, buf: &[u8], answer: &mut Vec<u8>) -> Result<Parsed, ParseError> {
        // Requests a GOAWAY handed back come first, one at a time: they consume no bytes.
        if let Some(opaque) = self.refused.pop() {
            return Ok(Parsed::Reply(refused(opaque), 0));
        }
        match decode(buf) {
            Ok(Decoded::Incomplete) => Ok(Parsed::Incomplete),
            Ok(Decoded::Frame(frame, n)) => Ok(match self.frame(frame, &buf[..n], answer)? {
                Some(reply) => Parsed::Reply(reply, n),
                None => Parsed::Consumed(n),
            }),
            Err(e) => Err(self.malformed(e.to_string(), buf)),
        }
    }
}

/// The length of the first HTTP/2 frame in `buf` once it is whole (`None` before), or why
/// it is not a frame as its kind requires: the codec every connection reads with, public
/// for its fuzz target.
pub fn frame_len(buf: &[u8]) -> Result<Option<usize>, ParseError> {
    match decode(buf) {
        Ok(Decoded::Incomplete) => Ok(None),
        Ok(Decoded::Frame(_, n)) => Ok(Some(n)),
        Err(e) => Err(ParseError::new(NAME, e.to_string(), buf)),
    }
}

/// The header block of a unary call to `path` at `authority`: literals without indexing
/// (RFC 7541 6.2.2), the names from the static table where it has them.
pub(super) fn request_headers(path: &str, authority: &str, tls: bool) -> Vec<u8> {
    let mut block = vec![
        0x83,                          // :method POST (static index 3)
        if tls { 0x87 } else { 0x86 }, // :scheme https (7) or http (6)
    ];
    let mut literal = |name: Result<usize, &str>, value: &str| {
        match name {
            Ok(index) => integer(&mut block, index, 4, 0x00),
            Err(name) => {
                block.push(0x00);
                integer(&mut block, name.len(), 7, 0x00);
                block.extend_from_slice(name.as_bytes());
            }
        }
        integer(&mut block, value.len(), 7, 0x00);
        block.extend_from_slice(value.as_bytes());
    };
    literal(Ok(4), path); // :path
    literal(Ok(1), authority); // :authority
    literal(Ok(31), "application/grpc"); // content-type
    literal(Err("te"), "trailers");
    literal(Ok(58), concat!("vernier/", env!("CARGO_PKG_VERSION"))); // user-agent
    block
}

/// An HPACK integer with a `prefix`-bit prefix (RFC 7541 5.1).
fn integer(out: &mut Vec<u8>, value: usize, prefix: u8, leading: u8) {
    // Writing to a Vec cannot fail.
    let _ = loona_hpack::encoder::encode_integer_into(value, prefix, leading, out);
}

#[cfg(test)]
mod tests;
