#![no_main]

//! Declared protocols' reply parsers, one of each framing: the properties every parser has
//! (see `check_declared`), with ids, ok checks and a small `max_frame` so that short inputs
//! reach every path.

use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use vernier_protocols::{
    ByteOrder, Declaration, Declared, Framing, IdField, LengthField, OkCheck, ReplyDeclaration,
    ReplyMatch, RequestDeclaration,
};

fn length(bytes: u64, order: ByteOrder, offset: u64, counts_header: bool) -> Framing {
    Framing {
        length: Some(LengthField {
            bytes,
            order,
            offset,
            counts_header,
        }),
        ..Framing::default()
    }
}

fn declared(framing: Framing, reply: ReplyDeclaration) -> Declared {
    let declaration = Declaration {
        framing,
        max_frame: 64,
        requests: vec![RequestDeclaration {
            name: None,
            ratio: 1.0,
            text: Some("{key}".to_owned()),
            hex: None,
        }],
        reply,
    };
    Declared::new(declaration).expect("the fuzz target's declarations are valid")
}

static PROTOCOLS: LazyLock<Vec<Declared>> = LazyLock::new(|| {
    let id_and_ok = ReplyDeclaration {
        matching: ReplyMatch::Id(IdField {
            offset: 1,
            bytes: 2,
            order: ByteOrder::Little,
        }),
        ok: Some(OkCheck {
            offset: 4,
            equals: None,
            hex: Some("00".to_owned()),
        }),
    };
    vec![
        declared(length(4, ByteOrder::Big, 0, false), ReplyDeclaration::default()),
        declared(length(2, ByteOrder::Little, 2, true), ReplyDeclaration::default()),
        declared(length(1, ByteOrder::Big, 0, false), id_and_ok.clone()),
        declared(
            Framing {
                delimiter: Some(r"\r\n".to_owned()),
                ..Framing::default()
            },
            ReplyDeclaration::default(),
        ),
        declared(
            Framing {
                fixed: Some(8),
                ..Framing::default()
            },
            id_and_ok,
        ),
    ]
});

fuzz_target!(|data: &[u8]| {
    for declared in PROTOCOLS.iter() {
        vernier_protocols_fuzz::check_declared(declared, data);
    }
});
