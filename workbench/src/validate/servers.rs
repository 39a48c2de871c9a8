//! The real servers of part 2 and the closed-loop tool made for each, as the report names
//! them; how a tool is run and read is [`super::tools`]'.

use serde::{Deserialize, Serialize};
use vernier_fixtures::{ExternalError, ExternalServer};
use vernier_protocols::{KeyDist, KvWorkload, Protocol, SizeDist};

/// A real server of part 2, from the distribution.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Server {
    /// memcached (text protocol).
    #[serde(rename = "memcached")]
    Memcached,
    /// redis-server.
    #[serde(rename = "redis-server")]
    Redis,
    /// nginx serving static files.
    #[serde(rename = "nginx")]
    Nginx,
}

impl Server {
    /// Every server, in the report's order.
    pub const ALL: [Server; 3] = [Server::Memcached, Server::Redis, Server::Nginx];

    /// As tables name it (its program).
    pub fn name(self) -> &'static str {
        match self {
            Server::Memcached => "memcached",
            Server::Redis => "redis-server",
            Server::Nginx => "nginx",
        }
    }

    /// The tool made for it.
    pub fn tool(self) -> Tool {
        match self {
            Server::Memcached => Tool::Memaslap,
            Server::Redis => Tool::RedisBenchmark,
            Server::Nginx => Tool::Wrk,
        }
    }

    /// What vernier speaks to it.
    pub(super) fn protocol(self) -> Protocol {
        match self {
            Server::Memcached => Protocol::memcached(),
            Server::Redis => Protocol::redis(),
            Server::Nginx => Protocol::http(),
        }
    }

    /// What vernier asks of it: nginx serves the 1,000 files of 512 bytes [`Server::start`]
    /// writes; the key-value stores get 10% sets.
    pub(super) fn workload(self) -> KvWorkload {
        let (keys, key_size, value_size, read_ratio) = match self {
            Server::Nginx => (1000, 10, 512, 1.0),
            Server::Memcached | Server::Redis => (10_000, 16, 64, 0.9),
        };
        KvWorkload {
            keys,
            key_size: SizeDist::fixed(key_size),
            value_size: SizeDist::fixed(value_size),
            read_ratio,
            key_dist: KeyDist::Uniform,
            key: None,
        }
    }

    /// Starts it on a free loopback port.
    pub(super) fn start(self) -> Result<ExternalServer, ExternalError> {
        match self {
            Server::Memcached => ExternalServer::memcached(),
            Server::Redis => ExternalServer::redis(),
            Server::Nginx => ExternalServer::nginx(
                |www| {
                    // vernier's keys (`GET /k000000000`...) and wrk's page.
                    for i in 0..1000 {
                        std::fs::write(www.join(format!("k{i:09}")), "x".repeat(512))?;
                    }
                    std::fs::write(www.join("index.html"), "x".repeat(512))
                },
                "",
            ),
        }
    }
}

/// A closed-loop load generator of part 2. None can be asked for a rate: memaslap's `--tps`
/// has no effect in Debian's build, redis-benchmark and wrk have no such option (wrk2 is not
/// packaged), so each runs as fast as its connections go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Tool {
    /// memaslap (libmemcached-tools).
    Memaslap,
    /// redis-benchmark (redis-tools).
    RedisBenchmark,
    /// wrk.
    Wrk,
}

impl Tool {
    /// As tables name it.
    pub fn name(self) -> &'static str {
        match self {
            Tool::Memaslap => "memaslap",
            Tool::RedisBenchmark => "redis-benchmark",
            Tool::Wrk => "wrk",
        }
    }
}

impl std::fmt::Display for Tool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
