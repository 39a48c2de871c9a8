#![no_main]

//! Declared request templates: any text parses or is refused without a panic, as text and
//! as hex; one that a declaration accepts encodes, or fails leaving the buffer as it was;
//! and a request whose `{len:u32be}` comes first is one frame of its own length framing.

use libfuzzer_sys::fuzz_target;
use vernier_protocols::{
    ByteOrder, Declaration, Declared, Framing, LengthField, ReplyDeclaration, RequestDeclaration,
    Template,
};

/// Declarations of `text` under a length framing (4 bytes, big-endian) and a delimiter.
fn declarations(text: &str) -> [Declaration; 2] {
    let declaration = |framing| Declaration {
        framing,
        max_frame: 512 << 20,
        requests: vec![RequestDeclaration {
            name: None,
            ratio: 1.0,
            text: Some(text.to_owned()),
            hex: None,
        }],
        reply: ReplyDeclaration::default(),
    };
    [
        declaration(Framing {
            length: Some(LengthField {
                bytes: 4,
                order: ByteOrder::Big,
                offset: 0,
                counts_header: false,
            }),
            ..Framing::default()
        }),
        declaration(Framing {
            delimiter: Some(r"\n".to_owned()),
            ..Framing::default()
        }),
    ]
}

/// Whether `text` holds a number of seven digits or more: a `{random:SIZE}` of a megabyte
/// or more is legal, but allocating it on every run is not what this target tests.
fn has_large_number(text: &str) -> bool {
    text.as_bytes()
        .split(|b| !b.is_ascii_digit())
        .any(|digits| digits.len() >= 7)
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let _ = Template::hex(&text);
    if Template::text(&text).is_err() || has_large_number(&text) {
        return;
    }
    for declaration in declarations(&text) {
        let counted = declaration.framing.length.is_some() && text.starts_with("{len:u32be}");
        let Ok(declared) = Declared::new(declaration) else {
            continue;
        };
        let mut out = b"before".to_vec();
        match declared.encode(0, b"key", 7, u64::from(data.len() as u32), &mut out) {
            Ok(()) => {
                assert!(out.starts_with(b"before"));
                let request = &out[6..];
                if counted {
                    assert_eq!(
                        declared.parse(request).map(|parsed| parsed.map(|(_, n)| n)),
                        Ok(Some(request.len())),
                        "{text:?}"
                    );
                }
            }
            Err(_) => assert_eq!(out, b"before"),
        }
    }
});
