//! Every protocol round-trips against the real server from the distribution: each test
//! starts its own server on a free loopback port and stops it when done.
//!
//! The servers are Debian packages: `apt-get install -y memcached redis-server nginx`. A
//! missing one fails its tests, naming the package, rather than skipping them.

// The helpers outside `#[test]` functions are test code too: a failed step fails the test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod conn;
mod http;
mod memcached;
mod redis;
