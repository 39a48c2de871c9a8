#![no_main]

use std::num::NonZeroUsize;

use libfuzzer_sys::fuzz_target;
use vernier_protocols::Protocol;

// Three bytes, so that a short input already holds several replies.
fuzz_target!(|data: &[u8]| {
    vernier_protocols_fuzz::check_parser(Protocol::echo(NonZeroUsize::MIN.saturating_add(2)), data);
});
