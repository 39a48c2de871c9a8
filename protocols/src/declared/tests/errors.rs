//! Every mistake in a declaration is reported with where it is and what was expected.

use super::*;

/// The message for the declaration in `json`, which must not compile.
fn error(json: &str) -> String {
    match Declared::new(declaration(json)) {
        Ok(_) => panic!("{json} should not compile"),
        Err(error) => error.to_string(),
    }
}

/// The message for a declaration with `framing` (JSON) and the requests in `requests`
/// (JSON objects' contents, one per request).
fn request_error(framing: &str, requests: &[&str]) -> String {
    let requests: Vec<String> = requests.iter().map(|r| format!("{{{r}}}")).collect();
    error(&format!(
        r#"{{"framing": {framing}, "requests": [{}]}}"#,
        requests.join(",")
    ))
}

const LENGTH4: &str = r#"{"length": {"bytes": 4}}"#;

/// The message for the template `text` (a JSON string's contents) as request 0's `text`.
fn text_error(text: &str) -> String {
    request_error(LENGTH4, &[&format!(r#""text": "{text}""#)])
}

fn hex_error(hex: &str) -> String {
    request_error(LENGTH4, &[&format!(r#""hex": "{hex}""#)])
}

#[test]
fn template_mistakes_name_the_request_and_the_byte() {
    assert_eq!(
        request_error(
            LENGTH4,
            &[r#""text": "{key}""#, r#""text": "{len:u32be}x{kee}""#]
        ),
        "requests[1].text: unknown field {kee} at byte 12: expected key, key_len:FMT, \
         seq:FMT, len:FMT or random:SIZE"
    );
    let formats = "expected u8, u16be, u16le, u32be, u32le, u64be, u64le or dec";
    assert_eq!(
        text_error("ab{seq:u24}"),
        format!("requests[0].text: unknown format {{seq:u24}} at byte 2: {formats}")
    );
    assert_eq!(
        text_error("{len}"),
        format!(
            "requests[0].text: {{len}} at byte 0 needs a format, as in {{len:u32be}}: {formats}"
        )
    );
    assert!(text_error("{key:u8}").contains("{key:u8} at byte 0: {key} takes no format"));
    assert_eq!(
        text_error("abc{key"),
        "requests[0].text: unclosed { at byte 3: expected }, or {{ for a literal {"
    );
    assert_eq!(
        text_error("a}b"),
        "requests[0].text: lone } at byte 1: expected }} for a literal }"
    );
    assert_eq!(
        text_error("{len:u8}{key}{len:u8}"),
        "requests[0].text: a second {len} at byte 13: expected at most one"
    );
    assert_eq!(
        text_error("{random:fixed}"),
        "requests[0].text: bad size {random:fixed} at byte 0: invalid size distribution \
         \"fixed\": expected fixed:VALUE, as in fixed:32"
    );
    assert!(text_error("{random}").contains("{random} at byte 0 needs a size"));
    assert_eq!(
        text_error(""),
        "requests[0].text: empty: expected at least one byte or field"
    );
}

#[test]
fn escape_mistakes_name_the_byte() {
    let expected = r"expected \r, \n, \t, \0, \\ or \xHH";
    assert_eq!(
        text_error(r"ab\\q"),
        format!(r"requests[0].text: unknown escape \q at byte 2: {expected}")
    );
    assert_eq!(
        text_error(r"ab\\"),
        format!(r"requests[0].text: a lone \ at byte 2, the end: {expected}")
    );
    for bad in [r"\\x4", r"\\xg0", r"\\x", r"\\x4é"] {
        assert_eq!(
            text_error(bad),
            r"requests[0].text: \x at byte 0 needs two hex digits, as in \x00",
            "{bad}"
        );
    }
}

#[test]
fn hex_mistakes_name_the_request() {
    assert_eq!(
        hex_error("00 0"),
        "requests[0].hex: odd number of hex digits"
    );
    assert_eq!(
        hex_error("0{key}0"),
        "requests[0].hex: odd number of hex digits before the field at byte 1"
    );
    assert_eq!(
        hex_error("0g"),
        "requests[0].hex: non-hex character 'g' at byte 1: expected hex digits, whitespace \
         or {fields}"
    );
    assert!(hex_error("00 ü").contains("non-hex character 'ü' at byte 3"));
    assert_eq!(
        hex_error("00 }"),
        "requests[0].hex: lone } at byte 3: expected it to close a {field}"
    );
    assert_eq!(
        hex_error("00 {key"),
        "requests[0].hex: unclosed { at byte 3: expected }"
    );
}

#[test]
fn len_fields_must_fit_the_framing() {
    assert_eq!(
        text_error("{len:u64be}"),
        "requests[0].text: {len:u64be} is 8 bytes, wider than the framing's 4-byte length field"
    );
    assert_eq!(
        request_error(r#"{"length": {"bytes": 1}}"#, &[r#""hex": "{len:u16le}""#]),
        "requests[0].hex: {len:u16le} is 2 bytes, wider than the framing's 1-byte length field"
    );
    assert!(text_error("{len:dec}").starts_with(
        "requests[0].text: {len:dec} is ASCII decimal, but the framing's length field is 4 \
         binary bytes"
    ));
    assert_eq!(
        request_error(r#"{"fixed": 4}"#, &[r#""text": "{seq:u32be}x{key}""#]),
        "requests[0].text: at least 5 bytes, longer than the fixed 4-byte frame"
    );
}

#[test]
fn request_mistakes_name_the_request() {
    for (ratio, shown) in [("0", "0"), ("-1", "-1"), ("-0.0", "-0")] {
        assert_eq!(
            request_error(
                LENGTH4,
                &[
                    r#""text": "a""#,
                    &format!(r#""ratio": {ratio}, "text": "b""#)
                ]
            ),
            format!("requests[1].ratio: {shown}: expected a weight > 0, as in 0.9")
        );
    }
    // NaN, which JSON cannot write.
    let mut nan = declaration(&format!(
        r#"{{"framing": {LENGTH4}, "requests": [{{"text": "a"}}]}}"#
    ));
    for (ratio, shown) in [(f64::NAN, "NaN"), (f64::INFINITY, "inf")] {
        nan.requests[0].ratio = ratio;
        assert_eq!(
            Declared::new(nan.clone()).unwrap_err().to_string(),
            format!("requests[0].ratio: {shown}: expected a weight > 0, as in 0.9")
        );
    }
    assert_eq!(
        request_error(
            LENGTH4,
            &[
                r#""ratio": 1e308, "text": "a""#,
                r#""ratio": 1e308, "text": "b""#
            ]
        ),
        "requests: the ratios sum to infinity: expected weights such as 0.9 and 0.1"
    );
    assert_eq!(
        request_error(LENGTH4, &[]),
        "requests: none: expected at least one request"
    );
    assert_eq!(
        request_error(LENGTH4, &[r#""text": "a", "hex": "00""#]),
        "requests[0]: both: expected exactly one of text or hex"
    );
    assert_eq!(
        request_error(LENGTH4, &[r#""name": "get""#]),
        "requests[0]: neither: expected exactly one of text or hex"
    );
    assert_eq!(
        request_error(
            LENGTH4,
            &[
                r#""name": "get", "text": "a""#,
                r#""name": "get", "text": "b""#
            ]
        ),
        "requests[1].name: get is also requests[0]'s name: expected distinct names"
    );
    assert_eq!(
        request_error(LENGTH4, &[r#""name": " ", "text": "a""#]),
        "requests[0].name: empty: expected a name such as get"
    );
}

#[test]
fn framing_mistakes_name_the_framing() {
    let request = r#""text": "a""#;
    assert_eq!(
        request_error("{}", &[request]),
        "framing: exactly one of length, delimiter or fixed: got none"
    );
    assert_eq!(
        request_error(r#"{"length": {"bytes": 4}, "fixed": 4}"#, &[request]),
        "framing: exactly one of length, delimiter or fixed: got length and fixed"
    );
    assert_eq!(
        request_error(r#"{"length": {"bytes": 3}}"#, &[request]),
        "framing.length.bytes: 3: expected 1, 2, 4 or 8"
    );
    assert_eq!(
        request_error(r#"{"fixed": 0}"#, &[request]),
        "framing.fixed: 0: expected a frame size from 1 to max_frame (16777216)"
    );
    assert_eq!(
        request_error(r#"{"delimiter": ""}"#, &[request]),
        r#"framing.delimiter: empty: expected at least one byte, as in "\r\n""#
    );
    assert_eq!(
        request_error(r#"{"delimiter": "{key}"}"#, &[request]),
        "framing.delimiter: a {field} where fields have no meaning: write {{ and }} for \
         literal braces"
    );
    assert_eq!(
        request_error(r#"{"delimiter": "\\xZZ"}"#, &[request]),
        r"framing.delimiter: \x at byte 0 needs two hex digits, as in \x00"
    );
    assert_eq!(
        error(r#"{"framing": {"fixed": 9}, "max_frame": 8, "requests": [{"text": "a"}]}"#),
        "framing.fixed: the frame ends at byte 9, past max_frame (8): expected it inside a frame"
    );
    assert_eq!(
        error(
            r#"{"framing": {"length": {"bytes": 4, "offset": 6}}, "max_frame": 8,
                "requests": [{"text": "a"}]}"#
        ),
        "framing.length.offset: the length field ends at byte 10, past max_frame (8): \
         expected it inside a frame"
    );
    for max_frame in ["0", "536870913"] {
        assert_eq!(
            error(&format!(
                r#"{{"framing": {{"fixed": 1}}, "max_frame": {max_frame},
                    "requests": [{{"text": "a"}}]}}"#
            )),
            format!("max_frame: {max_frame}: expected from 1 to 536870912 bytes")
        );
    }
}

#[test]
fn reply_mistakes_name_the_reply() {
    let reply_error = |framing: &str, reply: &str| {
        error(&format!(
            r#"{{"framing": {framing}, "requests": [{{"text": "a"}}], "reply": {reply}}}"#
        ))
    };
    assert_eq!(
        reply_error(LENGTH4, r#"{"match": {"id": {"offset": 4, "bytes": 3}}}"#),
        "reply.match.id.bytes: 3: expected 1, 2, 4 or 8"
    );
    assert_eq!(
        reply_error(
            r#"{"fixed": 8}"#,
            r#"{"match": {"id": {"offset": 6, "bytes": 4}}}"#
        ),
        "reply.match.id.offset: the id at bytes 6..10 ends past the fixed 8-byte frame: \
         expected it inside a frame"
    );
    assert_eq!(
        reply_error(
            LENGTH4,
            r#"{"match": {"id": {"offset": 16777215, "bytes": 2}}}"#
        ),
        "reply.match.id.offset: the id at bytes 16777215..16777217 ends past max_frame \
         (16777216): expected it inside a frame"
    );
    assert_eq!(
        reply_error(
            r#"{"fixed": 2}"#,
            r#"{"ok": {"offset": 1, "equals": "OK"}}"#
        ),
        "reply.ok.offset: the ok check at bytes 1..3 ends past the fixed 2-byte frame: \
         expected it inside a frame"
    );
    assert_eq!(
        reply_error(
            LENGTH4,
            r#"{"ok": {"offset": 1, "equals": "OK", "hex": "00"}}"#
        ),
        "reply.ok: both equals and hex: expected exactly one"
    );
    assert!(
        reply_error(LENGTH4, r#"{"ok": {"offset": 1}}"#)
            .starts_with("reply.ok: neither equals nor hex: expected exactly one")
    );
    assert_eq!(
        reply_error(LENGTH4, r#"{"ok": {"hex": " "}}"#),
        "reply.ok.hex: empty: expected at least one byte to compare"
    );
    assert_eq!(
        reply_error(LENGTH4, r#"{"ok": {"hex": "0"}}"#),
        "reply.ok.hex: odd number of hex digits"
    );
    assert_eq!(
        reply_error(LENGTH4, r#"{"ok": {"equals": "{seq:u8}"}}"#),
        "reply.ok.equals: a {field} where fields have no meaning: write {{ and }} for \
         literal braces"
    );
}

#[test]
fn serde_refuses_unknown_keys_and_words() {
    let serde_error = |json: &str| {
        serde_json::from_str::<Declaration>(json)
            .unwrap_err()
            .to_string()
    };
    assert!(
        serde_error(r#"{"framing": {"fixed": 8}, "requests": [], "extra": 1}"#)
            .contains("unknown field `extra`")
    );
    assert!(
        serde_error(r#"{"framing": {"length": {"bites": 4}}, "requests": []}"#)
            .contains("unknown field `bites`")
    );
    assert!(
        serde_error(r#"{"framing": {"fixed": 8}, "requests": [{"txt": "a"}]}"#)
            .contains("unknown field `txt`")
    );
    assert!(serde_error(
        r#"{"framing": {"fixed": 8}, "requests": [], "reply": {"match": "sideways"}}"#
    )
    .contains(r#"invalid value: string "sideways", expected in_order or {id: {offset, bytes, order}}"#));
    assert!(serde_error(
        r#"{"framing": {"fixed": 8}, "requests": [], "reply": {"match": {"idd": {"bytes": 4}}}}"#
    )
    .contains("unknown field `idd`, expected `id`"));
    assert!(serde_error(
        r#"{"framing": {"fixed": 8}, "requests": [], "reply": {"match": {"id": {"bytes": 4, "size": 2}}}}"#
    )
    .contains("unknown field `size`"));
    assert!(
        serde_error(r#"{"framing": {"length": {"bytes": 4, "order": "middle"}}, "requests": []}"#)
            .contains("unknown variant `middle`")
    );
    // A `Declared` read by serde is checked, with the same message.
    let declared = serde_json::from_str::<Declared>(r#"{"framing": {"fixed": 8}, "requests": []}"#);
    assert!(
        declared
            .unwrap_err()
            .to_string()
            .contains("requests: none: expected at least one request")
    );
}
