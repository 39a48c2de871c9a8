#![no_main]

//! The agent's control messages on arbitrary bytes: each request the agent serves and each
//! reply its client reads, decoded and converted as they are: never a panic, and what
//! converts re-encodes to the same value.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    vernier_agent_fuzz::check_configure(data);
    vernier_agent_fuzz::check_batch(data);
    vernier_agent_fuzz::check_requests(data);
    vernier_agent_fuzz::check_replies(data);
});
