//! The HTTP/2 client side, sans I/O: frames written by hand (the server's header blocks by
//! an HPACK encoder with its dynamic table, as servers write them) and read back.

use std::path::Path;

use loona_hpack::Encoder;

use super::*;
use crate::grpc::{Grpc, GrpcMapping};

fn grpc() -> Arc<Call> {
    let proto = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/grpc/bench.proto");
    let mut compiler = protox::Compiler::new([proto.parent().unwrap()]).unwrap();
    compiler.include_imports(true).open_file(&proto).unwrap();
    let descriptors = compiler.encode_file_descriptor_set();
    let mapping = GrpcMapping {
        method: "bench.Echo/Call".into(),
        request: r#"{"key": "{key}", "seq": "{seq}"}"#.into(),
        authority: "127.0.0.1:50051".into(),
        descriptors: String::new(),
        tls: None,
    };
    Grpc::new(mapping, &descriptors).unwrap().call()
}

const DATA: Kind = Kind::Data;
const HEADERS: Kind = Kind::Headers;
const RST_STREAM: Kind = Kind::RstStream;
const SETTINGS: Kind = Kind::Settings;
const PUSH_PROMISE: Kind = Kind::PushPromise;
const PING: Kind = Kind::Ping;
const GOAWAY: Kind = Kind::GoAway;
const WINDOW_UPDATE: Kind = Kind::WindowUpdate;
const CONTINUATION: Kind = Kind::Continuation;
const NONE: Flags = Flags::NONE;
const END_STREAM: Flags = Flags::END_STREAM;
const END_HEADERS: Flags = Flags::END_HEADERS;
const ACK: Flags = Flags::ACK;
const PADDED: Flags = Flags::PADDED;

fn frame(kind: Kind, flags: Flags, stream: u32, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    codec::head(&mut out, payload.len(), kind, flags, stream);
    out.extend_from_slice(payload);
    out
}

fn be32(bytes: &[u8]) -> Option<u32> {
    Some(u32::from_be_bytes(bytes.get(..4)?.try_into().ok()?))
}

/// Every frame in `bytes`: (type, flags, stream, payload).
fn frames(mut bytes: &[u8]) -> Vec<(Kind, Flags, u32, Vec<u8>)> {
    let mut all = Vec::new();
    while let Some(head) = bytes.first_chunk::<9>() {
        let head = frame::Head::parse(head);
        all.push((
            head.kind,
            head.flags,
            head.stream,
            bytes[9..9 + head.len].to_vec(),
        ));
        bytes = &bytes[9 + head.len..];
    }
    assert!(bytes.is_empty(), "a partial frame left: {bytes:?}");
    all
}

/// Parses every frame of `bytes`: the replies, and what was answered.
fn read(conn: &mut Connection, bytes: &[u8]) -> (Vec<Reply>, Vec<u8>) {
    let (mut replies, mut answer, mut used) = (Vec::new(), Vec::new(), 0);
    loop {
        match conn.parse(&bytes[used..], &mut answer).unwrap() {
            Parsed::Incomplete => break,
            Parsed::Consumed(n) => used += n,
            Parsed::Reply(reply, n) => {
                used += n;
                replies.push(reply);
            }
        }
    }
    assert_eq!(used, bytes.len(), "bytes left unread");
    (replies, answer)
}

fn request(conn: &mut Connection, opaque: u32) -> Vec<u8> {
    let mut out = Vec::new();
    let request = Request::Template {
        index: 0,
        key: b"user:7",
        entropy: 0,
    };
    conn.encode(&request, opaque, &mut out).unwrap();
    out
}

fn headers(encoder: &mut Encoder<'_>, fields: &[(&str, &str)]) -> Vec<u8> {
    encoder.encode(fields.iter().map(|(n, v)| (n.as_bytes(), v.as_bytes())))
}

#[test]
fn a_connection_opens_with_the_preface_its_settings_and_a_window() {
    let mut conn = Connection::new(grpc());
    let mut out = Vec::new();
    conn.open(&mut out);
    assert!(out.starts_with(PREFACE));
    let f = frames(&out[PREFACE.len()..]);
    assert_eq!(f.len(), 2);
    assert_eq!((f[0].0, f[0].1, f[0].2), (SETTINGS, NONE, 0));
    assert_eq!(f[0].3, [0, 2, 0, 0, 0, 0, 0, 4, 0x7f, 0xff, 0xff, 0xff]);
    assert_eq!((f[1].0, f[1].2), (WINDOW_UPDATE, 0));
    assert_eq!(be32(&f[1].3), Some(MAX_WINDOW - 65_535));
}

#[test]
fn a_call_is_headers_then_data_with_the_grpc_prefix_on_odd_streams() {
    let mut conn = Connection::new(grpc());
    let first = frames(&request(&mut conn, 10));
    let second = frames(&request(&mut conn, 11));
    assert_eq!(first[0].2, 1);
    assert_eq!(second[0].2, 3);
    let (kind, flags, _, block) = &first[0];
    assert_eq!((*kind, *flags), (HEADERS, END_HEADERS));
    let mut decoded = Vec::new();
    Decoder::new()
        .decode_with_cb(block, |n, v| decoded.push((n.to_vec(), v.to_vec())))
        .unwrap();
    let has = |n: &str, v: &str| decoded.contains(&(n.as_bytes().to_vec(), v.as_bytes().to_vec()));
    assert!(
        has(":method", "POST") && has(":scheme", "http"),
        "{decoded:?}"
    );
    assert!(has(":path", "/bench.Echo/Call") && has(":authority", "127.0.0.1:50051"));
    assert!(has("content-type", "application/grpc") && has("te", "trailers"));
    let (kind, flags, _, data) = &first[1];
    assert_eq!((*kind, *flags), (DATA, END_STREAM));
    assert_eq!(data[0], 0, "not compressed");
    assert_eq!(be32(&data[1..]).unwrap() as usize, data.len() - GRPC_PREFIX);
    // The message: key "user:7" (field 1) and seq 10 (field 2).
    assert_eq!(&data[GRPC_PREFIX..], b"\x0a\x06user:7\x10\x0a");
}

#[test]
fn a_reply_ends_with_its_trailers_and_finds_its_request_by_stream() {
    let mut conn = Connection::new(grpc());
    request(&mut conn, 10);
    request(&mut conn, 11);
    let mut encoder = Encoder::new();
    let mut server = Vec::new();
    // Stream 3 answers first, stream 1 after: each by its own opaque.
    for stream in [3, 1] {
        let h = headers(
            &mut encoder,
            &[(":status", "200"), ("content-type", "application/grpc")],
        );
        server.extend(frame(HEADERS, END_HEADERS, stream, &h));
        server.extend(frame(DATA, NONE, stream, b"\x00\x00\x00\x00\x03abc"));
        let t = headers(&mut encoder, &[("grpc-status", "0"), ("grpc-message", "")]);
        server.extend(frame(HEADERS, END_HEADERS | END_STREAM, stream, &t));
    }
    // Cut anywhere, the frames read the same once whole.
    assert_eq!(
        conn.parse(&server[..20], &mut Vec::new()),
        Ok(Parsed::Incomplete)
    );
    let (replies, answer) = read(&mut conn, &server);
    assert!(answer.is_empty());
    let ok = |opaque| Reply {
        opaque: Some(opaque),
        status: Some(0),
        ..Reply::new(ReplyKind::Ok, 3)
    };
    assert_eq!(replies, [ok(11), ok(10)]);
}

#[test]
fn an_error_status_a_reset_and_a_reply_without_trailers_are_errors() {
    let mut conn = Connection::new(grpc());
    for opaque in 0..3 {
        request(&mut conn, opaque);
    }
    let mut encoder = Encoder::new();
    let mut server = Vec::new();
    // Trailers-only: the status in the one HEADERS frame.
    let h = headers(
        &mut encoder,
        &[
            (":status", "200"),
            ("grpc-status", "3"),
            ("grpc-message", "no"),
        ],
    );
    server.extend(frame(HEADERS, END_HEADERS | END_STREAM, 1, &h));
    server.extend(frame(RST_STREAM, NONE, 3, &8u32.to_be_bytes()));
    let h = headers(&mut encoder, &[(":status", "200")]);
    server.extend(frame(HEADERS, END_HEADERS, 5, &h));
    server.extend(frame(DATA, END_STREAM, 5, b"\x00\x00\x00\x00\x00"));
    let (replies, _) = read(&mut conn, &server);
    let kinds: Vec<_> = replies
        .iter()
        .map(|r| (r.kind, r.opaque, r.status))
        .collect();
    assert_eq!(
        kinds,
        [
            (ReplyKind::Error, Some(0), Some(3)),
            (ReplyKind::Error, Some(1), Some(8)),
            (ReplyKind::Error, Some(2), Some(200)),
        ]
    );
}

#[test]
fn settings_and_pings_are_answered_and_windows_followed() {
    let mut conn = Connection::new(grpc());
    let mut server = Vec::new();
    // At most one stream; a stream window of 20 bytes.
    server.extend(frame(
        SETTINGS,
        NONE,
        0,
        &[0, 3, 0, 0, 0, 1, 0, 4, 0, 0, 0, 20],
    ));
    server.extend(frame(PING, NONE, 0, b"12345678"));
    server.extend(frame(SETTINGS, ACK, 0, b""));
    let (replies, answer) = read(&mut conn, &server);
    assert!(replies.is_empty());
    let answered = frames(&answer);
    assert_eq!(answered[0], (SETTINGS, ACK, 0, vec![]));
    assert_eq!(answered[1], (PING, ACK, 0, b"12345678".to_vec()));
    assert!(conn.ready());
    request(&mut conn, 0);
    assert!(!conn.ready(), "one stream open of one allowed");
    // A message over the stream's window is refused, and the buffer left as it was.
    let mut conn = Connection::new(grpc());
    read(&mut conn, &frame(SETTINGS, NONE, 0, &[0, 4, 0, 0, 0, 8]));
    let mut out = b"before".to_vec();
    let request = Request::Template {
        index: 0,
        key: b"user:7",
        entropy: 0,
    };
    assert!(matches!(
        conn.encode(&request, 0, &mut out),
        Err(EncodeError::ValueTooLarge { .. })
    ));
    assert_eq!(out, b"before");
}

#[test]
fn a_header_block_in_continuation_frames_is_decoded_whole() {
    let mut conn = Connection::new(grpc());
    request(&mut conn, 4);
    let mut encoder = Encoder::new();
    let h = headers(&mut encoder, &[(":status", "200"), ("grpc-status", "0")]);
    let (a, b) = h.split_at(2);
    let mut server = frame(HEADERS, END_STREAM, 1, a);
    server.extend(frame(CONTINUATION, END_HEADERS, 1, b));
    let (replies, _) = read(&mut conn, &server);
    assert_eq!(replies.len(), 1);
    assert_eq!(
        (replies[0].kind, replies[0].opaque),
        (ReplyKind::Ok, Some(4))
    );
}

#[test]
fn bad_frames_are_errors_that_say_what() {
    let error = |bytes: &[u8]| {
        let mut conn = Connection::new(grpc());
        request(&mut conn, 0);
        let mut used = 0;
        loop {
            match conn.parse(&bytes[used..], &mut Vec::new()) {
                Ok(Parsed::Consumed(n) | Parsed::Reply(_, n)) => used += n,
                Ok(Parsed::Incomplete) => panic!("no error in {bytes:?}"),
                Err(e) => return e.to_string(),
            }
        }
    };
    let mut big = Vec::new();
    codec::head(&mut big, MAX_FRAME + 1, DATA, NONE, 1);
    assert!(
        error(&big).contains("a Data frame on stream 1: 16385 bytes, over the 16384"),
        "{}",
        error(&big)
    );
    let goaway = frame(GOAWAY, NONE, 0, b"\x00\x00\x00\x01\x00\x00");
    assert!(
        error(&goaway).contains("GoAway frame on stream 0: 6 bytes"),
        "{}",
        error(&goaway)
    );
    let garbage = frame(HEADERS, END_HEADERS, 1, b"\xff\xff\xff\xff\xff\xff");
    assert!(
        error(&garbage).contains("HPACK cannot decode"),
        "{}",
        error(&garbage)
    );
    let mut interrupted = frame(HEADERS, NONE, 1, b"\x88");
    interrupted.extend(frame(PING, NONE, 0, b"12345678"));
    assert!(
        error(&interrupted).contains("interrupted"),
        "{}",
        error(&interrupted)
    );
    let padded = frame(DATA, PADDED, 1, b"\x09abc");
    assert!(error(&padded).contains("padding"), "{}", error(&padded));
    let push = frame(PUSH_PROMISE, END_HEADERS, 1, b"\x00\x00\x00\x02");
    assert!(error(&push).contains("PUSH_PROMISE"), "{}", error(&push));
}

/// A server's frames, each with what the codec must read it as.
fn goldens() -> Vec<(&'static [u8], Frame<'static>)> {
    vec![
        (
            b"\x00\x00\x0b\x07\x00\x00\x00\x00\x00\x00\x00\x00\x05\x00\x00\x00\x0bbye",
            Frame::GoAway(GoAway {
                last_stream: 5,
                code: ErrorCode::ENHANCE_YOUR_CALM,
                debug: b"bye",
            }),
        ),
        (
            // The reserved bit of the last stream id is ignored.
            b"\x00\x00\x08\x07\x00\x00\x00\x00\x00\xff\xff\xff\xff\x00\x00\x00\x00",
            Frame::GoAway(GoAway {
                last_stream: MAX_STREAM,
                code: ErrorCode::NO_ERROR,
                debug: b"",
            }),
        ),
        (
            b"\x00\x00\x04\x03\x00\x00\x00\x00\x07\x00\x00\x00\x07",
            Frame::RstStream {
                stream: 7,
                code: ErrorCode::REFUSED_STREAM,
            },
        ),
        (
            b"\x00\x00\x06\x04\x00\x00\x00\x00\x00\x00\x03\x00\x00\x00\x64",
            Frame::Settings {
                ack: false,
                settings: Settings(b"\x00\x03\x00\x00\x00\x64"),
            },
        ),
        (
            b"\x00\x00\x08\x06\x01\x00\x00\x00\x00pingpong",
            Frame::Ping {
                ack: true,
                payload: *b"pingpong",
            },
        ),
        (
            b"\x00\x00\x04\x08\x00\x00\x00\x00\x03\x80\x00\x01\x00",
            Frame::WindowUpdate {
                stream: 3,
                increment: 256,
            },
        ),
        (
            // Padded: one pad-length byte, two bytes of padding.
            b"\x00\x00\x06\x00\x09\x00\x00\x00\x01\x02abc\x00\x00",
            Frame::Data {
                stream: 1,
                end_stream: true,
                data: b"abc",
                flow_len: 6,
            },
        ),
        (
            // Priority fields (5 bytes) before the block.
            b"\x00\x00\x06\x01\x24\x00\x00\x00\x03\x00\x00\x00\x00\x10\x88",
            Frame::Headers {
                stream: 3,
                end_stream: false,
                end_headers: true,
                block: b"\x88",
            },
        ),
        (
            b"\x00\x00\x01\x09\x04\x00\x00\x00\x03\x88",
            Frame::Continuation {
                stream: 3,
                end_headers: true,
                block: b"\x88",
            },
        ),
        (
            b"\x00\x00\x00\xfa\x00\x00\x00\x00\x00",
            Frame::Ignored {
                kind: Kind::Unknown(0xfa),
            },
        ),
    ]
}

#[test]
fn frames_decode_to_their_kinds_from_byte_literals() {
    for (bytes, expected) in goldens() {
        assert_eq!(
            decode(bytes),
            Ok(Decoded::Frame(expected, bytes.len())),
            "{bytes:?}"
        );
    }
}

#[test]
fn a_frame_is_incomplete_at_every_split_point_and_whole_at_its_last_byte() {
    let all: Vec<u8> = goldens().iter().flat_map(|(b, _)| b.to_vec()).collect();
    let mut at = 0;
    for (bytes, expected) in goldens() {
        let rest = &all[at..];
        for cut in 0..bytes.len() {
            assert_eq!(
                decode(&rest[..cut]),
                Ok(Decoded::Incomplete),
                "{bytes:?} cut at {cut}"
            );
        }
        // Whole, with the next frames after it: the same frame, no more bytes.
        assert_eq!(decode(rest), Ok(Decoded::Frame(expected, bytes.len())));
        at += bytes.len();
    }
    assert_eq!(at, all.len());
}

#[test]
fn a_frame_head_round_trips_and_names_its_parts() {
    let bytes = *b"\x00\x40\x00\x01\x05\x80\x00\x00\x09";
    let head = frame::Head::parse(&bytes);
    assert_eq!(
        head,
        frame::Head {
            len: 16_384,
            kind: Kind::Headers,
            flags: END_STREAM | END_HEADERS,
            stream: 9,
        }
    );
    let mut out = Vec::new();
    head.encode(&mut out);
    // The reserved bit is not written back.
    assert_eq!(out, b"\x00\x40\x00\x01\x05\x00\x00\x00\x09");
    for byte in 0..=255 {
        assert_eq!(Kind::from_byte(byte).byte(), byte);
    }
}

#[test]
fn frames_that_break_their_kinds_rules_are_errors_naming_kind_stream_and_problem() {
    let problem = |bytes: &[u8]| match decode(bytes) {
        Err(e) => (e.kind, e.stream, e.problem),
        other => panic!("{bytes:?} decoded as {other:?}"),
    };
    use frame::FrameProblem::*;
    let cases: [(&[u8], _); 8] = [
        (
            b"\x00\x40\x01\x00\x00\x00\x00\x00\x01",
            (
                DATA,
                1,
                TooLong {
                    len: 16_385,
                    max: 16_384,
                },
            ),
        ),
        (
            b"\x00\x00\x00\x00\x00\x00\x00\x00\x00",
            (DATA, 0, NeedsStream),
        ),
        (
            b"\x00\x00\x00\x04\x00\x00\x00\x00\x01",
            (SETTINGS, 1, NeedsConnection),
        ),
        (
            b"\x00\x00\x05\x04\x00\x00\x00\x00\x00abcde",
            (
                SETTINGS,
                0,
                WrongLength {
                    len: 5,
                    expected: "a multiple of 6",
                },
            ),
        ),
        (
            b"\x00\x00\x07\x06\x00\x00\x00\x00\x00pingpon",
            (
                PING,
                0,
                WrongLength {
                    len: 7,
                    expected: "8",
                },
            ),
        ),
        (
            b"\x00\x00\x07\x07\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00",
            (
                GOAWAY,
                0,
                WrongLength {
                    len: 7,
                    expected: "at least 8",
                },
            ),
        ),
        (
            b"\x00\x00\x03\x03\x00\x00\x00\x00\x01\x00\x00\x07",
            (
                RST_STREAM,
                1,
                WrongLength {
                    len: 3,
                    expected: "4",
                },
            ),
        ),
        (
            b"\x00\x00\x02\x00\x08\x00\x00\x00\x01\x05a",
            (DATA, 1, Padding { pad: 5, len: 2 }),
        ),
    ];
    for (bytes, expected) in cases {
        assert_eq!(problem(bytes), expected, "{bytes:?}");
    }
}

/// The server's GOAWAY naming `last` and `code`.
fn goaway(last: u32, code: ErrorCode) -> Vec<u8> {
    let mut payload = last.to_be_bytes().to_vec();
    payload.extend_from_slice(&code.0.to_be_bytes());
    frame(GOAWAY, NONE, 0, &payload)
}

/// A complete successful reply on `stream`, its header blocks from `encoder`.
fn answer(encoder: &mut Encoder<'_>, stream: u32) -> Vec<u8> {
    let h = headers(encoder, &[(":status", "200")]);
    let mut out = frame(HEADERS, END_HEADERS, stream, &h);
    out.extend(frame(DATA, NONE, stream, b"\x00\x00\x00\x00\x00"));
    let t = headers(encoder, &[("grpc-status", "0")]);
    out.extend(frame(HEADERS, END_HEADERS | END_STREAM, stream, &t));
    out
}

/// The (kind, opaque) of each reply, refused ones sorted by opaque (they come back in no
/// particular order).
fn kinds(replies: &[Reply]) -> Vec<(ReplyKind, Option<u32>)> {
    let mut kinds: Vec<_> = replies.iter().map(|r| (r.kind, r.opaque)).collect();
    kinds.sort_by_key(|&(k, o)| (k != ReplyKind::Refused, o));
    kinds
}

#[test]
fn a_graceful_goaway_lets_its_streams_finish_and_hands_back_those_above_it() {
    let mut conn = Connection::new(grpc());
    for opaque in 10..14 {
        request(&mut conn, opaque); // streams 1, 3, 5, 7
    }
    // grpc-core's two steps: a first GOAWAY at the highest id, then the real last one.
    let (replies, _) = read(&mut conn, &goaway(MAX_STREAM, ErrorCode::NO_ERROR));
    assert!(replies.is_empty());
    assert!(!conn.ready(), "no stream opens after a GOAWAY");
    assert!(!conn.spent(), "its streams may still finish");
    let (replies, _) = read(&mut conn, &goaway(3, ErrorCode::NO_ERROR));
    assert_eq!(
        kinds(&replies),
        [
            (ReplyKind::Refused, Some(12)),
            (ReplyKind::Refused, Some(13))
        ]
    );
    // A later GOAWAY cannot raise the last stream id again.
    read(&mut conn, &goaway(MAX_STREAM, ErrorCode::NO_ERROR));
    assert_eq!(conn.going_away.map(|g| g.last_stream), Some(3));
    let mut encoder = Encoder::new();
    let (replies, _) = read(&mut conn, &answer(&mut encoder, 1));
    assert_eq!(kinds(&replies), [(ReplyKind::Ok, Some(10))]);
    assert!(!conn.spent(), "stream 3 is still open");
    let (replies, _) = read(&mut conn, &answer(&mut encoder, 3));
    assert_eq!(kinds(&replies), [(ReplyKind::Ok, Some(11))]);
    assert!(conn.spent(), "every stream the GOAWAY kept has finished");
}

#[test]
fn a_goaway_with_an_error_spends_the_connection_at_once() {
    for code in [ErrorCode::PROTOCOL_ERROR, ErrorCode::ENHANCE_YOUR_CALM] {
        let mut conn = Connection::new(grpc());
        for opaque in 0..3 {
            request(&mut conn, opaque); // streams 1, 3, 5
        }
        let mut answer = Vec::new();
        // Handed back one per call, before any byte is read.
        let bytes = goaway(1, code);
        assert!(matches!(
            conn.parse(&bytes, &mut answer),
            Ok(Parsed::Consumed(17))
        ));
        assert!(!conn.spent(), "refused requests are handed back first");
        let (replies, _) = read(&mut conn, b"");
        assert_eq!(
            kinds(&replies),
            [(ReplyKind::Refused, Some(1)), (ReplyKind::Refused, Some(2))]
        );
        // Stream 1 was named as perhaps processed: it stays open until the connection
        // goes, and fails with it.
        assert_eq!(conn.streams.len(), 1);
        assert!(conn.spent() && !conn.ready(), "{code:?}");
        assert!(answer.is_empty(), "a GOAWAY is not answered");
    }
}

#[test]
fn a_stream_reset_with_refused_stream_is_handed_back_not_failed() {
    let mut conn = Connection::new(grpc());
    request(&mut conn, 4);
    request(&mut conn, 5);
    let refused = ErrorCode::REFUSED_STREAM.0.to_be_bytes();
    let mut server = frame(RST_STREAM, NONE, 1, &refused);
    server.extend(frame(
        RST_STREAM,
        NONE,
        3,
        &ErrorCode::PROTOCOL_ERROR.0.to_be_bytes(),
    ));
    let (replies, _) = read(&mut conn, &server);
    let got: Vec<_> = replies
        .iter()
        .map(|r| (r.kind, r.opaque, r.status))
        .collect();
    assert_eq!(
        got,
        [
            (ReplyKind::Refused, Some(4), None),
            (ReplyKind::Error, Some(5), Some(1))
        ]
    );
    assert!(
        conn.ready() && !conn.spent(),
        "a reset is the stream's, not the connection's"
    );
}

#[test]
fn a_connection_out_of_stream_ids_is_spent_once_its_streams_finish() {
    let mut conn = Connection::new(grpc());
    conn.next_stream = MAX_STREAM;
    request(&mut conn, 1);
    assert!(!conn.ready() && !conn.spent());
    let (replies, _) = read(&mut conn, &answer(&mut Encoder::new(), MAX_STREAM));
    assert_eq!(kinds(&replies), [(ReplyKind::Ok, Some(1))]);
    assert!(conn.spent());
}
