//! The properties every reply parser must have on any input, checked by each fuzz target.

use vernier_protocols::{Declared, Protocol};

/// Parses `data` as replies of `protocol`, one after another as an agent would, and checks:
/// no panic; a reply consumes at least one byte and no more than there are; a reply is the
/// same whether or not bytes follow it; and a reply is incomplete (not an error, not another
/// reply) one byte short of its end.
pub fn check_parser(protocol: Protocol, data: &[u8]) {
    let mut rest = data;
    while let Ok(Some((reply, consumed))) = protocol.parse(rest) {
        assert!(
            (1..=rest.len()).contains(&consumed),
            "{protocol}: consumed {consumed} of {} bytes",
            rest.len()
        );
        assert_eq!(
            protocol.parse(&rest[..consumed]),
            Ok(Some((reply, consumed))),
            "{protocol}: the reply alone parses differently"
        );
        assert_eq!(
            protocol.parse(&rest[..consumed - 1]),
            Ok(None),
            "{protocol}: one byte short of a reply is not incomplete"
        );
        rest = &rest[consumed..];
    }
}

/// [`check_parser`]'s checks for a protocol declared in a scenario.
pub fn check_declared(declared: &Declared, data: &[u8]) {
    check_parser(Protocol::new(declared.clone()), data);
}
