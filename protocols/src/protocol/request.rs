//! What to ask of the server, independent of how a protocol spells it.

/// What to ask of the server, independent of how a protocol spells it. Borrowed, so that a
/// workload generator hands out its pre-generated keys without copying them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Request<'a> {
    /// Read `key`: memcached `get`, binary GET/GETK, Redis `GET`, HTTP `GET /key`.
    Get {
        /// The key.
        key: &'a [u8],
    },
    /// Write a value of `value_len` bytes under `key`: memcached `set`, binary SET, Redis
    /// `SET`. The value's bytes are filler; only its size matters to a latency measurement.
    Set {
        /// The key.
        key: &'a [u8],
        /// The size of the value.
        value_len: usize,
    },
    /// Ask the synthetic server to spin for `service_ns` nanoseconds.
    Spin {
        /// The service time, in nanoseconds.
        service_ns: u64,
    },
    /// A declared protocol's request number `index` (see [`Declared::pick`](crate::Declared::pick)), for `key`,
    /// its random fields drawn from `entropy`.
    Template {
        /// Which of the declared requests.
        index: usize,
        /// The workload's key.
        key: &'a [u8],
        /// A random number, from which the request's random sizes and bytes are derived.
        entropy: u64,
    },
}

impl Request<'_> {
    /// The request's name in messages.
    pub fn name(&self) -> &'static str {
        match self {
            Request::Get { .. } => "get",
            Request::Set { .. } => "set",
            Request::Spin { .. } => "spin",
            Request::Template { .. } => "declared",
        }
    }
}
