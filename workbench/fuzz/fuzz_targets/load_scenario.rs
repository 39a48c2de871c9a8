#![no_main]

//! The scenario loader on arbitrary text: never a panic, errors that say where, and a
//! scenario that loads the same from its own text and from its YAML written back.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        vernier_workbench_fuzz::check_scenario(text);
    }
});
