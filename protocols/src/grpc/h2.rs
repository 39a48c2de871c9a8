//! The HTTP/2 a gRPC client needs (RFC 9113), sans I/O: one [`Connection`] per TCP
//! connection, which writes the preface, a unary call's HEADERS and DATA, and the answers
//! the peer is owed (SETTINGS and PING acknowledgements, window updates), and reads the
//! server's frames one at a time into replies. Request headers are written as literals
//! without indexing (always legal, no encoder table to keep in step); the server's are
//! decoded with its dynamic table and Huffman codes by `loona-hpack`.
//!
//! What a timestamp means here: several requests' frames may leave in one segment, and
//! several replies arrive in one. A request's TX stamp is its DATA frame's last byte's;
//! its reply is complete when the frame ending its stream (the trailers) has arrived, and
//! the RX stamp is that of the read which completed it: exact for the last reply of the
//! read, an upper bound for those before it (as for any pipelined protocol).

use std::collections::HashMap;

use loona_hpack::Decoder;

use crate::protocol::{EncodeError, ParseError, Reply, ReplyKind, Request, Session};

use super::Grpc;

/// The client's connection preface.
const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

const DATA: u8 = 0x0;
const HEADERS: u8 = 0x1;
const RST_STREAM: u8 = 0x3;
const SETTINGS: u8 = 0x4;
const PUSH_PROMISE: u8 = 0x5;
const PING: u8 = 0x6;
const GOAWAY: u8 = 0x7;
const WINDOW_UPDATE: u8 = 0x8;
const CONTINUATION: u8 = 0x9;

const END_STREAM: u8 = 0x1;
const ACK: u8 = 0x1;
const END_HEADERS: u8 = 0x4;
const PADDED: u8 = 0x8;
const PRIORITY: u8 = 0x20;

/// The frame size every endpoint accepts before SETTINGS say more; the client never says
/// more, so no frame it reads is larger.
const MAX_FRAME: usize = 16_384;
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
/// The highest stream id a client may open.
const LAST_STREAM: u32 = (1 << 31) - 1;

/// gRPC's length prefix: a compressed flag and a 4-byte big-endian length.
pub(super) const GRPC_PREFIX: usize = 5;

/// One HTTP/2 connection's client side.
pub(super) struct Connection {
    grpc: Grpc,
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
    /// A header block being continued: its stream, whether it ends the stream, its bytes.
    continued: Option<(u32, bool, Vec<u8>)>,
    /// The last request's DATA size: another waits until the window holds as much.
    last_data: i64,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("grpc", &self.grpc)
            .field("next_stream", &self.next_stream)
            .field("open_streams", &self.streams.len())
            .field("send_window", &self.send_window)
            .finish_non_exhaustive()
    }
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
    pub(super) fn new(grpc: Grpc) -> Connection {
        let mut decoder = Decoder::new();
        decoder.set_max_allowed_table_size(HEADER_TABLE);
        Connection {
            grpc,
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
        }
    }

    /// The malformed-reply error for `problem`, quoting `bytes`.
    fn malformed(&self, problem: impl Into<String>, bytes: &[u8]) -> ParseError {
        ParseError::new(super::NAME, problem, bytes)
    }

    /// A frame read in full: what it means for the streams, and what to answer.
    fn frame(
        &mut self,
        kind: u8,
        flags: u8,
        stream: u32,
        payload: &[u8],
        answer: &mut Vec<u8>,
    ) -> Result<Option<Reply>, ParseError> {
        if let Some((continued, _, _)) = &self.continued
            && (kind != CONTINUATION || stream != *continued)
        {
            return Err(self.malformed(
                "a header block interrupted by another frame (RFC 9113 6.10)",
                payload,
            ));
        }
        match kind {
            DATA => self.data(flags, stream, payload, answer),
            HEADERS => {
                let block = unpad(flags, payload)
                    .and_then(|b| skip_priority(flags, b))
                    .ok_or_else(|| {
                        self.malformed("a HEADERS frame shorter than its padding", payload)
                    })?;
                let ends = flags & END_STREAM != 0;
                if flags & END_HEADERS == 0 {
                    return self.continue_block(stream, ends, block.to_vec());
                }
                self.header_block(stream, ends, block)
            }
            CONTINUATION => {
                let Some((stream, ends, mut block)) = self.continued.take() else {
                    return Err(self.malformed("a CONTINUATION with no header block open", payload));
                };
                block.extend_from_slice(payload);
                if flags & END_HEADERS == 0 {
                    return self.continue_block(stream, ends, block);
                }
                self.header_block(stream, ends, &block)
            }
            SETTINGS if flags & ACK == 0 => {
                self.settings(payload)?;
                frame_header(answer, 0, SETTINGS, ACK, 0);
                Ok(None)
            }
            PING if flags & ACK == 0 => {
                frame_header(answer, payload.len(), PING, ACK, 0);
                answer.extend_from_slice(payload);
                Ok(None)
            }
            WINDOW_UPDATE => {
                let increment = be32(payload).map(|w| w & MAX_WINDOW).unwrap_or(0);
                if stream == 0 {
                    self.send_window += i64::from(increment);
                }
                Ok(None)
            }
            RST_STREAM => {
                let code = be32(payload).unwrap_or(0);
                Ok(self.streams.remove(&stream).map(|s| Reply {
                    opaque: Some(s.opaque),
                    status: u16::try_from(code).ok(),
                    ..Reply::new(ReplyKind::Error, s.data)
                }))
            }
            GOAWAY => {
                let last = be32(payload).unwrap_or(0) & LAST_STREAM;
                let code = payload.get(4..8).and_then(be32).unwrap_or(0);
                let debug = String::from_utf8_lossy(payload.get(8..).unwrap_or_default());
                Err(self.malformed(
                    format!(
                        "the server sent GOAWAY (error code {code}, last stream {last}, \
                         {debug:?}): the connection is replaced"
                    ),
                    payload,
                ))
            }
            PUSH_PROMISE => {
                Err(self.malformed("a PUSH_PROMISE, which the client disabled", payload))
            }
            // PRIORITY, SETTINGS and PING acknowledgements, unknown extensions: nothing to do.
            _ => Ok(None),
        }
    }

    /// A DATA frame: the reply message's bytes, counted against the connection's window.
    fn data(
        &mut self,
        flags: u8,
        stream: u32,
        payload: &[u8],
        answer: &mut Vec<u8>,
    ) -> Result<Option<Reply>, ParseError> {
        self.received += payload.len() as u32;
        if self.received >= WINDOW_REFILL {
            window_update(answer, 0, self.received);
            self.received = 0;
        }
        let data = unpad(flags, payload)
            .ok_or_else(|| self.malformed("a DATA frame shorter than its padding", payload))?;
        let Some(s) = self.streams.get_mut(&stream) else {
            // A stream given up (reset) may still have data in flight.
            return Ok(None);
        };
        // The messages' bytes without their prefixes: a unary reply has one message, which
        // a frame boundary may cut anywhere.
        s.data += data.len();
        if flags & END_STREAM == 0 {
            return Ok(None);
        }
        // Data ending the stream without trailers: gRPC says that is an error.
        Ok(self.finish(stream))
    }

    /// The start of a header block continued in CONTINUATION frames (`ends`: its stream
    /// ends with it), kept until its end arrives. Only then is a block copied: a block in
    /// one frame is decoded where it lies.
    fn continue_block(
        &mut self,
        stream: u32,
        ends: bool,
        block: Vec<u8>,
    ) -> Result<Option<Reply>, ParseError> {
        if block.len() > MAX_HEADER_BLOCK {
            return Err(self.malformed(
                format!("a header block over {MAX_HEADER_BLOCK} bytes"),
                &block,
            ));
        }
        self.continued = Some((stream, ends, block));
        Ok(None)
    }

    /// A complete header block (`ends`: its stream ends with it).
    fn header_block(
        &mut self,
        stream: u32,
        ends: bool,
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
                self.malformed(format!("a header block HPACK cannot decode: {e}"), block)
            })?;
        let Some(s) = self.streams.get_mut(&stream) else {
            return Ok(None);
        };
        s.http_status = s.http_status.or(http_status);
        s.grpc_status = s.grpc_status.or(grpc_status);
        Ok(if ends { self.finish(stream) } else { None })
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

    /// The server's SETTINGS: its stream limit, its initial window and its frame size.
    fn settings(&mut self, payload: &[u8]) -> Result<(), ParseError> {
        if !payload.len().is_multiple_of(6) {
            return Err(self.malformed("a SETTINGS frame not a multiple of 6 bytes", payload));
        }
        for setting in payload.chunks_exact(6) {
            let id = u16::from_be_bytes([setting[0], setting[1]]);
            let value = be32(&setting[2..]).unwrap_or(0);
            match id {
                0x3 => self.max_streams = value as usize,
                0x4 => {
                    // A change applies to open streams too; the client's requests are
                    // sent whole, so only new ones are affected.
                    self.stream_window = i64::from(value.min(MAX_WINDOW));
                }
                0x5 => self.peer_max_frame = (value as usize).clamp(MAX_FRAME, 1 << 24),
                _ => {}
            }
        }
        Ok(())
    }
}

impl Session for Connection {
    fn open(&mut self, out: &mut Vec<u8>) {
        out.extend_from_slice(PREFACE);
        // No server push; every stream's window as large as can be.
        frame_header(out, 12, SETTINGS, 0, 0);
        out.extend_from_slice(&[0, 0x2, 0, 0, 0, 0]);
        out.extend_from_slice(&[0, 0x4]);
        out.extend_from_slice(&MAX_WINDOW.to_be_bytes());
        window_update(out, 0, MAX_WINDOW - DEFAULT_WINDOW as u32);
    }

    fn ready(&self) -> bool {
        self.streams.len() < self.max_streams
            && self.send_window >= self.last_data
            && self.next_stream <= LAST_STREAM
    }

    fn encode(
        &mut self,
        request: &Request<'_>,
        opaque: u32,
        out: &mut Vec<u8>,
    ) -> Result<(), EncodeError> {
        let Request::Template { key, entropy, .. } = *request else {
            return Err(EncodeError::unsupported(super::NAME, request));
        };
        let stream = self.next_stream;
        if stream > LAST_STREAM {
            return Err(EncodeError::Exhausted {
                protocol: super::NAME,
                what: "stream ids",
            });
        }
        let start = out.len();
        // HEADERS: the method's header block, the same for every call.
        let block = self.grpc.header_block();
        frame_header(out, block.len(), HEADERS, END_HEADERS, stream);
        out.extend_from_slice(block);
        // DATA: the gRPC message, its prefix back-patched once its length is known.
        let data_at = out.len();
        frame_header(out, 0, DATA, END_STREAM, stream);
        out.extend_from_slice(&[0; GRPC_PREFIX]);
        let message_at = out.len();
        if let Err(e) = self.grpc.encode_message(key, opaque, entropy, out) {
            out.truncate(start);
            return Err(e);
        }
        let message = out.len() - message_at;
        let data = message + GRPC_PREFIX;
        if data as i64 > self.stream_window.min(self.send_window) || message > u32::MAX as usize {
            out.truncate(start);
            return Err(EncodeError::ValueTooLarge {
                protocol: super::NAME,
                len: data,
                max: self.stream_window.min(self.send_window).max(0) as usize,
            });
        }
        out[message_at - 4..message_at].copy_from_slice(&(message as u32).to_be_bytes());
        if data <= self.peer_max_frame {
            out[data_at..data_at + 3].copy_from_slice(&(data as u32).to_be_bytes()[1..]);
        } else {
            // Larger than a frame: split into frames the server accepts.
            let payload = out.split_off(data_at + 9);
            out.truncate(data_at);
            let chunks = payload.chunks(self.peer_max_frame);
            let last = chunks.len() - 1;
            for (i, chunk) in chunks.enumerate() {
                let flags = if i == last { END_STREAM } else { 0 };
                frame_header(out, chunk.len(), DATA, flags, stream);
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

    fn parse(
        &mut self,
        buf: &[u8],
        answer: &mut Vec<u8>,
    ) -> Result<Option<(Option<Reply>, usize)>, ParseError> {
        let Some(header) = buf.get(..9) else {
            return Ok(None);
        };
        let len = u32::from_be_bytes([0, header[0], header[1], header[2]]) as usize;
        if len > MAX_FRAME {
            return Err(self.malformed(
                format!("a frame of {len} bytes, over the {MAX_FRAME} the client allows"),
                header,
            ));
        }
        let Some(payload) = buf.get(9..9 + len) else {
            return Ok(None);
        };
        let (kind, flags) = (header[3], header[4]);
        let stream = be32(&header[5..]).unwrap_or(0) & LAST_STREAM;
        let reply = self.frame(kind, flags, stream, payload, answer)?;
        Ok(Some((reply, 9 + len)))
    }
}

/// Appends a frame header.
fn frame_header(out: &mut Vec<u8>, len: usize, kind: u8, flags: u8, stream: u32) {
    out.extend_from_slice(&(len as u32).to_be_bytes()[1..]);
    out.extend_from_slice(&[kind, flags]);
    out.extend_from_slice(&stream.to_be_bytes());
}

/// Appends a WINDOW_UPDATE.
fn window_update(out: &mut Vec<u8>, stream: u32, increment: u32) {
    frame_header(out, 4, WINDOW_UPDATE, 0, stream);
    out.extend_from_slice(&increment.to_be_bytes());
}

/// A frame's payload without its padding (when PADDED); `None` if too short.
fn unpad(flags: u8, payload: &[u8]) -> Option<&[u8]> {
    if flags & PADDED == 0 {
        return Some(payload);
    }
    let (&pad, rest) = payload.split_first()?;
    rest.get(..rest.len().checked_sub(pad as usize)?)
}

/// A HEADERS payload without its priority fields (when PRIORITY).
fn skip_priority(flags: u8, payload: &[u8]) -> Option<&[u8]> {
    if flags & PRIORITY == 0 {
        Some(payload)
    } else {
        payload.get(5..)
    }
}

/// A big-endian u32 from the first 4 bytes.
fn be32(bytes: &[u8]) -> Option<u32> {
    Some(u32::from_be_bytes(bytes.get(..4)?.try_into().ok()?))
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
