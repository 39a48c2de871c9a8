//! Request templates: escapes, hex, every field and format, `{len}`, random bytes.

use super::super::template::{Input, LenRule};
use super::*;

/// A protocol with `framing` (JSON) whose one request is `template`, a JSON string's
/// contents (so a backslash is written `\\\\` in Rust).
fn with(framing: &str, form: &str, template: &str) -> Declared {
    declared(&format!(
        r#"{{"framing": {framing}, "requests": [{{"{form}": "{template}"}}]}}"#
    ))
}

const DELIMITED: &str = r#"{"delimiter": "\\n"}"#;

/// The request `template` (text, delimiter framing) encodes to for `key` and `seq`.
fn text(template: &str, key: &[u8], seq: u32) -> Vec<u8> {
    encode(&with(DELIMITED, "text", template), key, seq, 0)
}

fn encode(declared: &Declared, key: &[u8], seq: u32, entropy: u64) -> Vec<u8> {
    let mut out = Vec::new();
    declared.encode(0, key, seq, entropy, &mut out).unwrap();
    out
}

#[test]
fn text_escapes_and_literal_braces() {
    assert_eq!(
        text(r"a\\r\\n\\t\\0\\\\\\x41\\x7f\\xFf{{}}z", b"", 0),
        b"a\r\n\t\0\\A\x7f\xff{}z"
    );
    // Characters are their UTF-8 bytes, control characters included.
    assert_eq!(text("é\\u0001", b"", 0), "é\u{1}".as_bytes());
    assert_eq!(text("{{key}}", b"k", 0), b"{key}");
    assert_eq!(text("{{{key}}}", b"k", 0), b"{k}");
}

#[test]
fn hex_ignores_whitespace() {
    let declared = with(DELIMITED, "hex", "de ad\\n BE\\tef  0 1{key}ff");
    assert_eq!(encode(&declared, b"k", 0, 0), b"\xde\xad\xbe\xef\x01k\xff");
}

#[test]
fn every_field_in_every_format() {
    let key = b"abc";
    let seq = 0x0102_0304;
    for (format, key_len, seq_bytes) in [
        ("u8", &b"\x03"[..], &b"\x04"[..]),
        ("u16be", b"\0\x03", b"\x03\x04"),
        ("u16le", b"\x03\0", b"\x04\x03"),
        ("u32be", b"\0\0\0\x03", b"\x01\x02\x03\x04"),
        ("u32le", b"\x03\0\0\0", b"\x04\x03\x02\x01"),
        ("u64be", b"\0\0\0\0\0\0\0\x03", b"\0\0\0\0\x01\x02\x03\x04"),
        ("u64le", b"\x03\0\0\0\0\0\0\0", b"\x04\x03\x02\x01\0\0\0\0"),
        ("dec", b"3", b"16909060"),
    ] {
        let template = format!("[{{key}}|{{key_len:{format}}}|{{seq:{format}}}]");
        let expected = [&b"[abc|"[..], key_len, b"|", seq_bytes, b"]"].concat();
        assert_eq!(text(&template, key, seq), expected, "{template}");
        // `{len}` counts the bytes after it: here "|!" and nothing else.
        let template = format!("{{len:{format}}}|!");
        let mut len = key_len.to_vec();
        if format == "dec" {
            len = b"2".to_vec();
        } else {
            let at = if format.ends_with("be") {
                len.len() - 1
            } else {
                0
            };
            len[at] = 2;
        }
        assert_eq!(text(&template, key, seq), [&len[..], b"|!"].concat());
    }
    // The sequence number is truncated to the format's width.
    assert_eq!(
        text("{seq:u8}{seq:u16be}", b"", 0xABCD_EF12),
        b"\x12\xef\x12"
    );
    assert_eq!(text("{seq:dec}", b"", u32::MAX), b"4294967295");
    assert_eq!(text("{key_len:dec}", &[b'k'; 1234], 0), b"1234");
}

#[test]
fn len_is_patched_as_the_framing_counts_it() {
    let after = with(r#"{"length": {"bytes": 4}}"#, "text", "{len:u32be}{key}");
    assert_eq!(encode(&after, b"abc", 0, 0), b"\0\0\0\x03abc");
    let whole = with(
        r#"{"length": {"bytes": 4, "counts_header": true}}"#,
        "text",
        "{len:u32be}{key}",
    );
    assert_eq!(encode(&whole, b"abc", 0, 0), b"\0\0\0\x07abc");
    // In the middle of a request, with bytes before it.
    let middle = with(
        r#"{"length": {"bytes": 2, "order": "little", "offset": 1, "counts_header": true}}"#,
        "text",
        "*{len:u16le}{key}.",
    );
    assert_eq!(encode(&middle, b"ab", 0, 0), b"*\x06\0ab.");
    let middle = with(
        r#"{"length": {"bytes": 2, "order": "little", "offset": 1}}"#,
        "text",
        "*{len:u16le}{key}.",
    );
    assert_eq!(encode(&middle, b"ab", 0, 0), b"*\x03\0ab.");
    // Delimiter framing: a decimal, inserted, counting what follows.
    let text_header = with(DELIMITED, "text", "len={len:dec} {key}\\\\n");
    assert_eq!(encode(&text_header, b"abc", 0, 0), b"len=5 abc\n");
    assert_eq!(
        encode(&text_header, &[b'k'; 10], 0, 0),
        [&b"len=12 "[..], &[b'k'; 10], b"\n"].concat()
    );
    let fixed = with(r#"{"fixed": 8}"#, "hex", "{len:u8} 00 {key}");
    assert_eq!(encode(&fixed, b"xyz", 0, 0), b"\x04\0xyz");
}

#[test]
fn a_decimal_len_counting_the_whole_request_counts_its_own_digits() {
    let template = Template::text("{len:dec}:{key}").unwrap();
    for (key_len, expected) in [
        (0, "2:"),
        (7, "9:"),
        (8, "11:"),
        (96, "99:"),
        (97, "101:"),
        (98, "102:"),
    ] {
        let key = vec![b'k'; key_len];
        let mut out = b"before".to_vec();
        let input = Input {
            key: &key,
            seq: 0,
            entropy: 0,
        };
        template
            .write(&input, LenRule::WholeRequest, &mut out)
            .unwrap();
        let request = &out[6..];
        assert!(request.starts_with(expected.as_bytes()), "{key_len}");
        assert_eq!(request.len().to_string() + ":", expected);
    }
}

#[test]
fn resp_set_encodes_as_redis_would() {
    let declared = with(
        r#"{"delimiter": "\\r\\n"}"#,
        "text",
        r"*3\\r\\n$3\\r\\nSET\\r\\n${key_len:dec}\\r\\n{key}\\r\\n$5\\r\\n{random:fixed:5}\\r\\n",
    );
    let out = encode(&declared, b"k1", 0, 42);
    let prefix = b"*3\r\n$3\r\nSET\r\n$2\r\nk1\r\n$5\r\n";
    assert_eq!(out.len(), prefix.len() + 5 + 2);
    assert_eq!(&out[..prefix.len()], prefix);
    assert_eq!(&out[out.len() - 2..], b"\r\n");
}

#[test]
fn random_bytes_are_drawn_from_the_size_and_the_entropy() {
    let declared = with(DELIMITED, "text", "{random:uniform:10:20}");
    let mut lens = std::collections::BTreeSet::new();
    for entropy in 0..200 {
        let out = encode(&declared, b"", 0, entropy);
        assert!((10..=20).contains(&out.len()), "{}", out.len());
        // The same entropy gives the same bytes.
        assert_eq!(encode(&declared, b"", 0, entropy), out);
        lens.insert(out.len());
    }
    assert_eq!(lens.len(), 11, "{lens:?}");

    let fixed = with(DELIMITED, "text", "{random:fixed:64}|{random:fixed:64}");
    let one = encode(&fixed, b"", 0, 1);
    let two = encode(&fixed, b"", 0, 2);
    assert_eq!((one.len(), two.len()), (129, 129));
    assert_ne!(one, two);
    // Not filler: the two runs differ from each other and are not constant.
    assert_ne!(one[..64], one[65..]);
    assert!(one[..64].iter().any(|&b| b != one[0]));
}

#[test]
fn a_number_too_large_for_its_field_is_refused_and_leaves_the_buffer() {
    let declared = with(DELIMITED, "text", "{key_len:u8}{len:u8}{key}!");
    let mut out = b"earlier".to_vec();
    assert!(declared.encode(0, &[b'k'; 254], 0, 0, &mut out).is_ok());
    out.truncate(7);
    let error = declared
        .encode(0, &[b'k'; 255], 0, 0, &mut out)
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "declared cannot write 256 in {len:u8}: it holds at most 255"
    );
    assert_eq!(out, b"earlier");
    let error = declared
        .encode(0, &[b'k'; 256], 0, 0, &mut out)
        .unwrap_err();
    assert_eq!(
        error,
        EncodeError::FieldOverflow {
            protocol: "declared",
            field: "key_len",
            format: "u8",
            value: 256,
            max: 255
        }
    );
    assert_eq!(out, b"earlier");

    let counting = with(
        r#"{"length": {"bytes": 1, "counts_header": true}}"#,
        "text",
        "{len:u8}{key}",
    );
    assert!(counting.encode(0, &[b'k'; 254], 0, 0, &mut out).is_ok());
    out.truncate(7);
    assert!(counting.encode(0, &[b'k'; 255], 0, 0, &mut out).is_err());
    assert_eq!(out, b"earlier");
}

#[test]
fn other_encode_errors_leave_the_buffer() {
    let huge = with(DELIMITED, "text", "x{random:fixed:600000000}");
    let mut out = b"earlier".to_vec();
    let error = huge.encode(0, b"", 0, 0, &mut out).unwrap_err();
    assert_eq!(
        error.to_string(),
        "declared cannot send a value of 600000000 bytes: the most is 536870912"
    );
    assert_eq!(out, b"earlier");
    let error = huge.encode(1, b"", 0, 0, &mut out).unwrap_err();
    assert_eq!(
        error.to_string(),
        "declared has no request 1: it declares 1"
    );
    assert_eq!(out, b"earlier");
}

#[test]
fn templates_parse_on_their_own() {
    assert!(Template::text("GET {key}\\r\\n").is_ok());
    assert!(Template::hex("00 {seq:u32be}").is_ok());
    assert_eq!(
        Template::text("{nope}").unwrap_err().to_string(),
        "unknown field {nope} at byte 0: expected key, key_len:FMT, seq:FMT, len:FMT or random:SIZE"
    );
    assert_eq!(Template::text("abc").unwrap().fixed_len(), 3);
    assert_eq!(
        Template::text("{len:u16be}{seq:dec}{key}{random:fixed:9}x")
            .unwrap()
            .fixed_len(),
        4
    );
    // Whatever the text, no panic.
    for text in [
        "{",
        "}",
        "\\",
        "\\x",
        "\\xé",
        "{é",
        "é}",
        "{:}",
        "{random:}",
        "{len:}",
        "\u{0}",
    ] {
        let _ = Template::text(text);
        let _ = Template::hex(text);
    }
}
