//! The registry: every protocol vernier speaks, listed once. A protocol is one file (a
//! type implementing [`Speak`](super::vocab::Speak) and its [`Entry`]) and one line here;
//! the URL schemes, the messages that name protocols, help, the agent's wire form, the
//! scenario's checks and the serde form of the protocols written as mappings are all
//! derived from this list.

use super::vocab::Entry;
use super::{declare, echo, http, memcached, memcached_binary, redis, synthetic};

/// Every protocol, in the order help and messages list them.
pub static PROTOCOLS: &[&Entry] = &[
    &echo::ENTRY,
    &synthetic::ENTRY,
    &memcached::ENTRY,
    &memcached_binary::ENTRY,
    &redis::ENTRY,
    &http::ENTRY,
    &declare::ENTRY,
    &crate::grpc::ENTRY,
    &crate::grpc::ENTRY_TLS,
    #[cfg(test)]
    &super::made_up::ENTRY,
];
