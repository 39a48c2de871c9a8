#![no_main]

//! The spec-string parsers of scenario files: never a panic, and whatever parses prints as a
//! spec that parses back to the same value.

use std::fmt::Display;
use std::str::FromStr;

use libfuzzer_sys::fuzz_target;
use vernier_protocols::{Dist, InterArrival, KeyDist, Protocol, SizeDist};

fn round_trips<T: FromStr + Display + PartialEq + std::fmt::Debug>(spec: &str) {
    if let Ok(value) = spec.parse::<T>() {
        let printed = value.to_string();
        match printed.parse::<T>() {
            Ok(again) => assert_eq!(again, value, "{spec:?} printed as {printed:?}"),
            Err(_) => panic!("{spec:?} printed as {printed:?}, which does not parse"),
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(spec) = std::str::from_utf8(data) else {
        return;
    };
    round_trips::<Dist>(spec);
    round_trips::<SizeDist>(spec);
    round_trips::<InterArrival>(spec);
    round_trips::<Protocol>(spec);
    round_trips::<KeyDist>(spec);
});
