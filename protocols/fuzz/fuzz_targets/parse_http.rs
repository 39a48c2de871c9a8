#![no_main]

use libfuzzer_sys::fuzz_target;
use vernier_protocols::Protocol;

fuzz_target!(|data: &[u8]| {
    vernier_protocols_fuzz::check_parser(Protocol::http(), data);
});
