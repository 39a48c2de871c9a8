#![no_main]

//! A gRPC connection's HTTP/2 session reading a server's bytes after eight calls went out:
//! no panic, and it makes progress (see `check_session`).

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    vernier_protocols_fuzz::check_session(data);
});
