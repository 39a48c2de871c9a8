//! vernier-protocols: what vernier's agent puts on the wire and how it reads the answers,
//! with no I/O of its own (no sockets, no runtime), so that every byte of it is testable.
//!
//! - **Protocols** ([`Protocol`]): `echo:N`, `synthetic`, `memcached`, `memcached-binary`,
//!   `redis`, `http`, each one file behind the [`Speak`] trait and one line in the registry;
//!   and protocols *declared* in a scenario ([`Declaration`]: framing, request templates,
//!   reply matching). Each encodes a [`Request`] into the caller's buffer and parses replies
//!   incrementally: [`Protocol::parse`] answers "need more bytes" (`Ok(None)`) or a [`Reply`]
//!   summary and the bytes it took, so partial and coalesced replies are the normal case.
//! - **Distributions** ([`Dist`], [`SizeDist`]) of service times, gaps and sizes, written as
//!   spec strings (`exp:10us`, `bimodal:10us:100us:0.9`, `pareto:200:2`), with
//!   allocation-free [`Sampler`]s.
//! - **Arrival processes** ([`InterArrival`]) whose shape is independent of the rate.
//! - **Key-value workloads** ([`KvWorkload`]): key count, key and value sizes, read ratio,
//!   uniform / round-robin / zipfian keys, generated into a shared [`KeySpace`] from which
//!   each worker's seeded [`KvGenerator`] draws requests without allocating.
//! - **Seeds** per worker ([`worker_seed`]), so one scenario seed reproduces a run.
//!
//! ```
//! use std::sync::Arc;
//!
//! use rand::SeedableRng;
//! use rand::rngs::SmallRng;
//! use vernier_protocols::{
//!     Dist, InterArrival, KeySpace, KvWorkload, Protocol, ReplyKind, worker_seed,
//! };
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // What a scenario states, as its YAML would.
//! let protocol: Protocol = "memcached".parse()?;
//! let workload: KvWorkload = serde_json::from_str(
//!     r#"{"keys": 1000, "key_size": "fixed:16", "value_size": "fixed:100",
//!         "read_ratio": 0.9, "key_dist": "zipf:0.99"}"#,
//! )?;
//! let gaps = "exp".parse::<InterArrival>()?.for_rate(100_000.0);
//! assert_eq!(gaps, "exp:10us".parse::<Dist>()?);
//!
//! // Each worker: its own seeded generator, gap sampler and reusable buffer.
//! let seed = 42;
//! let keys = Arc::new(KeySpace::new(&workload, seed)?);
//! let mut requests = keys.generator(worker_seed(seed, 0));
//! let mut rng = SmallRng::seed_from_u64(worker_seed(seed, 0));
//! let gap_sampler = gaps.sampler();
//! let mut out = Vec::with_capacity(4096);
//!
//! let _gap_ns = gap_sampler.sample(&mut rng); // when to send
//! protocol.encode(&requests.next_request(), 0, &mut out)?;
//! assert!(out.starts_with(b"get 0000000000") || out.starts_with(b"set 0000000000"));
//!
//! // Replies arrive as TCP delivers them: in pieces, or several at once.
//! let received = b"VALUE 0000000000000042 0 5\r\nhello\r\nEND\r\nSTO";
//! let (reply, used) = protocol.parse(received)?.expect("a whole reply");
//! assert_eq!((reply.kind, reply.value_len), (ReplyKind::Hit, 5));
//! assert_eq!(protocol.parse(&received[used..])?, None); // "STO": wait for more
//!
//! // A spec that cannot be parsed says what was expected.
//! let error = "exp:10".parse::<Dist>().unwrap_err();
//! assert_eq!(
//!     error.to_string(),
//!     r#"invalid distribution "exp:10": expected a duration with a unit (ns, us, ms, s), as in exp:10us"#,
//! );
//! # Ok(())
//! # }
//! ```
#![deny(missing_docs)]

mod arrival;
mod declared;
mod dist;
pub mod grpc;
mod protocol;
mod seed;
mod spec;
mod workload;

pub use arrival::InterArrival;
pub use declared::{
    ByteOrder, Declaration, DeclareError, Declared, Framing, IdField, LengthField, OkCheck,
    ReplyDeclaration, ReplyMatch, RequestDeclaration, Template, TemplateError,
};
pub use dist::{Dist, Magnitude, Sampler, SizeDist};
pub use protocol::{
    EncodeError, Entry, MAX_VALUE_LEN, MappingForm, Matching, ParseError, Parsed, Protocol, Reply,
    ReplyKind, Request, Session, SessionContext, Speak, WorkloadKind,
};
pub use seed::worker_seed;
pub use spec::{SpecError, duration_from_spec};
pub use workload::{KeyDist, KeySpace, KvGenerator, KvWorkload, WorkloadError};
