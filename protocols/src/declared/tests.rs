//! Declared protocols: framing, replies, serde; templates and errors in their own files.

mod errors;
mod templates;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use super::*;
use crate::protocol::ReplyKind;

/// The declaration in `json`.
fn declaration(json: &str) -> Declaration {
    serde_json::from_str(json).unwrap_or_else(|e| panic!("{json}: {e}"))
}

/// The protocol declared in `json`.
fn declared(json: &str) -> Declared {
    Declared::new(declaration(json)).unwrap_or_else(|e| panic!("{json}: {e}"))
}

/// A protocol with `framing` (JSON) and one request.
fn framed(framing: &str) -> Declared {
    declared(&format!(
        r#"{{"framing": {framing}, "requests": [{{"text": "{{key}}"}}]}}"#
    ))
}

fn ok(len: usize) -> Reply {
    Reply::new(ReplyKind::Ok, len)
}

/// `bytes` is exactly one reply, `expected`: every proper prefix is incomplete, the whole
/// is the reply, and bytes after it change nothing.
fn assert_incremental(declared: &Declared, bytes: &[u8], expected: Reply) {
    let show = bytes.escape_ascii().to_string();
    for split in 0..bytes.len() {
        assert_eq!(
            declared.parse(&bytes[..split]),
            Ok(None),
            "{split} bytes of \"{show}\""
        );
    }
    assert_eq!(
        declared.parse(bytes),
        Ok(Some((expected, bytes.len()))),
        "\"{show}\""
    );
    let mut followed = bytes.to_vec();
    followed.extend_from_slice(b"\r\n\0\0\0\xffEXTRA");
    assert_eq!(
        declared.parse(&followed),
        Ok(Some((expected, bytes.len()))),
        "\"{show}\" followed by more"
    );
}

/// `bytes` is malformed with a problem containing `problem`, and no prefix of it is a
/// reply.
fn assert_malformed(declared: &Declared, bytes: &[u8], problem: &str) {
    match declared.parse(bytes) {
        Err(error) => {
            assert_eq!(error.protocol(), "declared");
            assert!(
                error.problem().contains(problem),
                "{error}: expected {problem:?}"
            );
        }
        other => panic!("\"{}\": got {other:?}", bytes.escape_ascii()),
    }
    for split in 0..bytes.len() {
        assert!(!matches!(declared.parse(&bytes[..split]), Ok(Some(_))));
    }
}

/// The fuzz crate's properties: replies one after another take 1 to all of the bytes,
/// parse the same alone, and are incomplete one byte short.
fn check_parser(declared: &Declared, data: &[u8]) -> usize {
    let mut rest = data;
    let mut replies = 0;
    while let Ok(Some((reply, used))) = declared.parse(rest) {
        assert!((1..=rest.len()).contains(&used));
        assert_eq!(declared.parse(&rest[..used]), Ok(Some((reply, used))));
        assert_eq!(declared.parse(&rest[..used - 1]), Ok(None));
        rest = &rest[used..];
        replies += 1;
    }
    replies
}

#[test]
fn length_framing_big_endian_counting_what_follows() {
    let declared = framed(r#"{"length": {"bytes": 4}}"#);
    assert_incremental(&declared, b"\0\0\0\x03abc", ok(7));
    assert_incremental(&declared, b"\0\0\0\0", ok(4));
    // Coalesced: each frame where the previous ended.
    let buf = b"\0\0\0\x01a\0\0\0\x02bc\0\0";
    assert_eq!(declared.parse(buf), Ok(Some((ok(5), 5))));
    assert_eq!(declared.parse(&buf[5..]), Ok(Some((ok(6), 6))));
    assert_eq!(declared.parse(&buf[11..]), Ok(None));
}

#[test]
fn length_framing_little_endian_at_an_offset_counting_the_header() {
    let declared = framed(
        r#"{"length": {"bytes": 2, "order": "little", "offset": 2, "counts_header": true}}"#,
    );
    // Two bytes before the field, the field (7, little-endian), three after: 7 in all.
    assert_incremental(&declared, b"ab\x07\x00xyz", ok(7));
    assert_incremental(&declared, b"ab\x04\x00", ok(4));
    assert_malformed(
        &declared,
        b"ab\x03\x00",
        "a length of 3, shorter than the 4-byte header",
    );
    assert_malformed(&declared, b"ab\x00\x00", "shorter than the 4-byte header");
}

#[test]
fn length_framing_of_every_width_and_order() {
    for (bytes, order, frame) in [
        (1, "big", &b"\x02hi"[..]),
        (1, "little", b"\x02hi"),
        (2, "big", b"\x00\x02hi"),
        (2, "little", b"\x02\x00hi"),
        (4, "little", b"\x02\x00\x00\x00hi"),
        (8, "big", b"\0\0\0\0\0\0\0\x02hi"),
        (8, "little", b"\x02\0\0\0\0\0\0\0hi"),
    ] {
        let declared = framed(&format!(
            r#"{{"length": {{"bytes": {bytes}, "order": "{order}"}}}}"#
        ));
        assert_incremental(&declared, frame, ok(frame.len()));
        // The same with the length counting the header too.
        let declared = framed(&format!(
            r#"{{"length": {{"bytes": {bytes}, "order": "{order}", "counts_header": true}}}}"#
        ));
        let mut whole = frame.to_vec();
        let at = if order == "big" { bytes - 1 } else { 0 };
        whole[at] += bytes as u8;
        assert_incremental(&declared, &whole, ok(frame.len()));
    }
}

#[test]
fn a_frame_over_max_frame_is_refused_as_soon_as_its_length_says_so() {
    let declared = declared(
        r#"{"framing": {"length": {"bytes": 4}}, "max_frame": 100,
            "requests": [{"text": "{key}"}]}"#,
    );
    assert_incremental(
        &declared,
        &[&[0u8, 0, 0, 96][..], &[b'x'; 96][..]].concat(),
        ok(100),
    );
    // The header alone says 4 + 97 bytes: refused before the rest arrives.
    assert_malformed(
        &declared,
        &[0, 0, 0, 97],
        "a frame of 101 bytes, over max_frame (100 bytes)",
    );
    assert_malformed(
        &declared,
        &[0xff; 4],
        "a frame of 4294967299 bytes, over max_frame (100 bytes)",
    );
    // The largest 8-byte length does not overflow.
    let wide = framed(r#"{"length": {"bytes": 8}}"#);
    assert_malformed(&wide, &[0xff; 8], "a frame of 18446744073709551623 bytes");
}

#[test]
fn delimiter_framing_ends_after_the_first_delimiter() {
    let declared = framed(r#"{"delimiter": "\\r\\n"}"#);
    assert_incremental(&declared, b"hello\r\n", ok(7));
    assert_incremental(&declared, b"\r\n", ok(2));
    assert_incremental(&declared, b"a\rb\nc\r\n", ok(7));
    let buf = b"one\r\ntwo\r\nthr";
    assert_eq!(declared.parse(buf), Ok(Some((ok(5), 5))));
    assert_eq!(declared.parse(&buf[5..]), Ok(Some((ok(5), 5))));
    assert_eq!(declared.parse(&buf[10..]), Ok(None));
    // A longer delimiter whose start appears before it does.
    let end = framed(r#"{"delimiter": "END\\n"}"#);
    assert_incremental(&end, b"ENENDxEND\n", ok(10));
}

#[test]
fn delimiter_framing_gives_up_after_max_frame_bytes_without_one() {
    let declared = declared(
        r#"{"framing": {"delimiter": "\\r\\n"}, "max_frame": 8,
            "requests": [{"text": "{key}"}]}"#,
    );
    assert_incremental(&declared, b"abcdef\r\n", ok(8));
    assert_eq!(declared.parse(b"abcdefg"), Ok(None));
    assert_malformed(&declared, b"abcdefg\r", "no delimiter in 8 bytes");
    assert_malformed(
        &declared,
        b"abcdefgh",
        "no delimiter in 8 bytes, the max_frame",
    );
    assert_malformed(&declared, b"abcdefg\r\n", "no delimiter in 8 bytes");
}

#[test]
fn fixed_framing_takes_every_n_bytes() {
    let declared = framed(r#"{"fixed": 8}"#);
    assert_incremental(&declared, b"12345678", ok(8));
    let buf = b"1234567812345678123";
    assert_eq!(declared.parse(buf), Ok(Some((ok(8), 8))));
    assert_eq!(declared.parse(&buf[8..]), Ok(Some((ok(8), 8))));
    assert_eq!(declared.parse(&buf[16..]), Ok(None));
}

#[test]
fn ids_are_read_at_their_offset_in_either_order() {
    let frame = b"\0\0\0\0\x01\x02\x03\x04";
    for (id, opaque, mask) in [
        (r#"{"offset": 4, "bytes": 4}"#, 0x0102_0304, u32::MAX),
        (
            r#"{"offset": 4, "bytes": 4, "order": "little"}"#,
            0x0403_0201,
            u32::MAX,
        ),
        (
            r#"{"offset": 6, "bytes": 2, "order": "big"}"#,
            0x0304,
            0xFFFF,
        ),
        (r#"{"offset": 5, "bytes": 1}"#, 0x02, 0xFF),
        // Eight bytes: the low 32 bits, as the opaque holds.
        (r#"{"offset": 0, "bytes": 8}"#, 0x0102_0304, u32::MAX),
        (r#"{"bytes": 8, "order": "little"}"#, 0, u32::MAX),
    ] {
        let declared = declared(&format!(
            r#"{{"framing": {{"fixed": 8}}, "requests": [{{"text": "{{key}}"}}],
                "reply": {{"match": {{"id": {id}}}}}}}"#
        ));
        let expected = Reply {
            opaque: Some(opaque),
            ..ok(8)
        };
        assert_incremental(&declared, frame, expected);
        assert_eq!(declared.id_mask(), Some(mask), "{id}");
    }
    assert_eq!(framed(r#"{"fixed": 8}"#).id_mask(), None);
    assert_eq!(framed(r#"{"fixed": 8}"#).parse(frame), Ok(Some((ok(8), 8))));
}

#[test]
fn a_frame_too_short_for_its_id_is_malformed() {
    let declared = declared(
        r#"{"framing": {"length": {"bytes": 1}}, "requests": [{"text": "{key}"}],
            "reply": {"match": {"id": {"offset": 3, "bytes": 2}}}}"#,
    );
    assert_incremental(
        &declared,
        b"\x04\0\0\x12\x34",
        Reply {
            opaque: Some(0x1234),
            ..ok(5)
        },
    );
    assert_malformed(
        &declared,
        b"\x03abc",
        "a frame of 4 bytes, too short for the id at bytes 3..5",
    );
}

#[test]
fn the_ok_check_passes_fails_and_fails_on_a_short_frame() {
    for ok_check in [
        r#"{"offset": 1, "equals": "OK"}"#,
        r#"{"offset": 1, "hex": "4f 4b"}"#,
    ] {
        let declared = declared(&format!(
            r#"{{"framing": {{"length": {{"bytes": 1}}}}, "requests": [{{"text": "{{key}}"}}],
                "reply": {{"ok": {ok_check}}}}}"#
        ));
        let error = |len| Reply::new(ReplyKind::Error, len);
        assert_incremental(&declared, b"\x02OK", ok(3));
        assert_incremental(&declared, b"\x03OK!", ok(4));
        assert_incremental(&declared, b"\x02NO", error(3));
        assert_incremental(&declared, b"\x02oK", error(3));
        // Too short to hold the bytes: an error reply, not a malformed one, and not read
        // from the bytes after the frame.
        assert_incremental(&declared, b"\x01O", error(2));
        assert_eq!(declared.parse(b"\x01OK"), Ok(Some((error(2), 2))));
        assert_incremental(&declared, b"\x00", error(1));
    }
}

#[test]
fn the_ok_check_reads_escaped_bytes() {
    let declared = declared(
        r#"{"framing": {"fixed": 3}, "requests": [{"text": "{key}"}],
            "reply": {"ok": {"offset": 2, "equals": "\\x00"}}}"#,
    );
    assert_eq!(declared.parse(b"ab\0"), Ok(Some((ok(3), 3))));
    assert_eq!(
        declared.parse(b"ab0"),
        Ok(Some((Reply::new(ReplyKind::Error, 3), 3)))
    );
}

const FULL: &str = r#"{
    "framing": {"length": {"bytes": 4, "order": "big", "offset": 0, "counts_header": false}},
    "max_frame": 1048576,
    "requests": [
        {"name": "get", "ratio": 0.9, "text": "{len:u32be}{seq:u32be}\\x00GET {key}"},
        {"name": "put", "ratio": 0.1, "hex": "{len:u32be} {seq:u32be} 01 {random:fixed:100}"}
    ],
    "reply": {"match": {"id": {"offset": 4, "bytes": 4, "order": "big"}},
              "ok": {"offset": 8, "equals": "\\x00"}}
}"#;

#[test]
fn declarations_round_trip_through_json() {
    for json in [
        FULL,
        r#"{"framing": {"delimiter": "\\r\\n"}, "requests": [{"text": "GET {key}\\r\\n"}],
            "reply": {"match": "in_order", "ok": {"hex": "2b"}}}"#,
        r#"{"framing": {"fixed": 8}, "requests": [{"hex": "{seq:u64le}"}]}"#,
    ] {
        let read = declaration(json);
        let written = serde_json::to_string(&read).unwrap();
        assert_eq!(declaration(&written), read, "{written}");
        let declaration = read;
        // A `Declared` is written and read as its declaration, checked when read.
        let declared = Declared::new(declaration.clone()).unwrap();
        assert_eq!(serde_json::to_string(&declared).unwrap(), written);
        let read: Declared = serde_json::from_str(&written).unwrap();
        assert_eq!(read.declaration(), &declaration);
    }
    let full = declaration(FULL);
    assert_eq!(full.requests[1].name.as_deref(), Some("put"));
    assert_eq!(
        full.reply.matching,
        ReplyMatch::Id(IdField {
            offset: 4,
            bytes: 4,
            order: ByteOrder::Big
        })
    );
    let json = serde_json::to_value(&full).unwrap();
    assert_eq!(json["reply"]["match"]["id"]["offset"], 4);
}

#[test]
fn what_is_not_stated_has_its_default() {
    let declaration = declaration(
        r#"{"framing": {"length": {"bytes": 2}}, "requests": [{"text": "a"}, {"text": "b"}]}"#,
    );
    assert_eq!(declaration.max_frame, 16 << 20);
    assert_eq!(
        declaration.framing.length,
        Some(LengthField {
            bytes: 2,
            order: ByteOrder::Big,
            offset: 0,
            counts_header: false
        })
    );
    assert_eq!(declaration.requests[0].ratio, 1.0);
    assert_eq!(declaration.reply, ReplyDeclaration::default());
    assert_eq!(declaration.reply.matching, ReplyMatch::InOrder);
    let declared = Declared::new(declaration).unwrap();
    assert_eq!(declared.requests(), 2);
    assert_eq!(declared.request_name(0), "request");
    assert_eq!(declared.request_name(1), "request2");
    assert_eq!(declared.request_name(2), "");
}

#[test]
fn picks_follow_the_ratios() {
    let declared = declared(FULL);
    let draws = 10_000u64;
    let step = u64::MAX / draws;
    let gets = (0..draws).filter(|i| declared.pick(i * step) == 0).count();
    assert!((8_999..=9_001).contains(&gets), "{gets}");
    assert_eq!(declared.pick(0), 0);
    assert_eq!(declared.pick(u64::MAX), 1);

    let three = declared_with_ratios(&[1.0, 2.0, 1.0]);
    let quarter = u64::MAX / 4;
    assert_eq!(three.pick(quarter - 1024 * 4), 0);
    assert_eq!(three.pick(quarter + 4096), 1);
    assert_eq!(three.pick(3 * quarter - 4096), 1);
    assert_eq!(three.pick(3 * quarter + 4096), 2);
    assert_eq!(declared_with_ratios(&[5.0]).pick(u64::MAX), 0);
}

fn declared_with_ratios(ratios: &[f64]) -> Declared {
    let requests: Vec<String> = ratios
        .iter()
        .map(|ratio| format!(r#"{{"ratio": {ratio}, "text": "{{key}}"}}"#))
        .collect();
    declared(&format!(
        r#"{{"framing": {{"fixed": 4}}, "requests": [{}]}}"#,
        requests.join(",")
    ))
}

/// Protocols of every framing, for the property checks.
fn protocols() -> Vec<Declared> {
    let request = r#""requests": [{"text": "{key}"}]"#;
    [
        r#""framing": {"length": {"bytes": 4}}, "max_frame": 64"#,
        r#""framing": {"length": {"bytes": 2, "order": "little", "offset": 2, "counts_header": true}}, "max_frame": 64"#,
        r#""framing": {"length": {"bytes": 1}}, "reply": {"match": {"id": {"offset": 2, "bytes": 2}}, "ok": {"offset": 1, "equals": "+"}}"#,
        r#""framing": {"delimiter": "\\r\\n"}, "max_frame": 16"#,
        r#""framing": {"fixed": 3}, "reply": {"ok": {"offset": 2, "hex": "00"}}"#,
    ]
    .iter()
    .map(|fields| declared(&format!("{{{fields}, {request}}}")))
    .collect()
}

#[test]
fn parsers_keep_the_fuzz_properties_on_crafted_and_random_bytes() {
    let crafted: [&[u8]; 8] = [
        b"",
        b"\0\0\0\x01a\0\0\0\0",
        b"ab\x05\x00xab\x04\x00",
        b"\x03+\x12\x34\x01+",
        b"a\r\nb\r\n\r\n",
        b"\r\r\r\n\n\n",
        b"\xff\xff\xff\xff\xff",
        b"\0+\0\0\0\0\0\0\0",
    ];
    let mut replies = 0;
    for declared in protocols() {
        for data in crafted {
            replies += check_parser(&declared, data);
        }
        let mut rng = SmallRng::seed_from_u64(7);
        for _ in 0..300 {
            let mut data = vec![0u8; rng.next_u32() as usize % 48];
            rng.fill_bytes(&mut data);
            // Small numbers and delimiters, so that frames end inside the data.
            for byte in &mut data {
                *byte = [*byte % 6, b'\r', b'\n', b'+', *byte][usize::from(*byte % 5)];
            }
            replies += check_parser(&declared, &data);
        }
    }
    // The checks saw replies, not only errors.
    assert!(replies > 1_000, "{replies}");
}

#[test]
fn requests_parse_back_as_frames_of_their_own_framing() {
    for (framing, len) in [
        (r#"{"length": {"bytes": 4}}"#, "{len:u32be}"),
        // A narrower field behind zeros.
        (
            r#"{"length": {"bytes": 4, "counts_header": true}}"#,
            "\\\\0\\\\0{len:u16be}",
        ),
        (
            r#"{"length": {"bytes": 2, "order": "little", "offset": 3, "counts_header": true}}"#,
            "{seq:u8}{seq:u8}{seq:u8}{len:u16le}",
        ),
        (
            r#"{"length": {"bytes": 8, "order": "little", "offset": 1}}"#,
            "{seq:u8}{len:u64le}",
        ),
    ] {
        let declared = declared(&format!(
            r#"{{"framing": {framing}, "requests": [{{"text": "{len}{{random:uniform:0:300}}{{key}}"}}]}}"#
        ));
        let mut out = Vec::new();
        for seq in 0..20 {
            let start = out.len();
            declared
                .encode(0, b"some key", seq, u64::from(seq), &mut out)
                .unwrap();
            let request = &out[start..];
            assert_eq!(
                declared.parse(request),
                Ok(Some((ok(request.len()), request.len()))),
                "{framing} {seq}"
            );
        }
        let mut rest = &out[..];
        for _ in 0..20 {
            let (_, used) = declared.parse(rest).unwrap().unwrap();
            rest = &rest[used..];
        }
        assert!(rest.is_empty());
    }
}
