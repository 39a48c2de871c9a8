#![no_main]

//! The HTTP/2 frame codec a gRPC connection reads with: back-to-back frames, each with the
//! properties every reply parser has (see `check_frames`).

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    vernier_protocols_fuzz::check_frames(data);
});
