//! Key-value workloads as Lancet and mutilate describe them: a key count, key and value size
//! distributions, a read ratio and a key-popularity distribution, materialised once into a
//! [`KeySpace`] from which each worker's seeded [`KvGenerator`] draws requests.

mod key_dist;

use std::sync::Arc;

use rand::distr::{Distribution, Uniform};
use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};
use rand_distr::Zipf;
use serde::{Deserialize, Serialize};

pub use key_dist::KeyDist;

use crate::dist::SizeDist;
use crate::protocol::vocab::{MAX_VALUE_LEN, Request};

/// The longest key generated: memcached's limit, the strictest of the protocols.
const MAX_KEY_LEN: usize = 250;

/// A key-value workload, as a scenario states it:
///
/// ```yaml
/// workload: {keys: 10000, key_size: fixed:30, value_size: pareto:200:2, read_ratio: 0.9, key_dist: zipf:0.99}
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KvWorkload {
    /// How many distinct keys there are.
    pub keys: u64,
    /// Each key's size in bytes, drawn once per key. Sizes are raised to the digits needed to
    /// number every key distinctly and capped at 250 (memcached's limit).
    pub key_size: SizeDist,
    /// Each key's value size in bytes, drawn once per key so that a read finds the size a
    /// write stored; capped at [`MAX_VALUE_LEN`].
    pub value_size: SizeDist,
    /// The share of requests that are reads (gets); the rest are writes (sets).
    pub read_ratio: f64,
    /// How requests pick their key; uniform if not stated.
    #[serde(default)]
    pub key_dist: KeyDist,
    /// The one key, named rather than generated: an HTTP path (`GET /index.html` on every
    /// request, as wrk asks, is the key `index.html`). `keys` is then 1, and `key_size`
    /// unused. Not written in a scenario's `workload:` (its `path:` sets it), so not read
    /// or written by serde.
    #[serde(skip)]
    pub key: Option<String>,
}

/// A workload that cannot be generated.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum WorkloadError {
    /// `keys` is zero or more than a generator can index.
    #[error("keys is {0}: expected from 1 to 4294967295")]
    Keys(u64),
    /// `read_ratio` is not a probability.
    #[error("read_ratio is {0}: expected a share from 0 to 1, as in 0.9")]
    ReadRatio(f64),
    /// The zipf exponent is out of range.
    #[error("key_dist zipf:{0}: expected an exponent ≥ 0, as in zipf:0.99")]
    ZipfTheta(f64),
    /// A named key among others: a name is for the one key.
    #[error("keys is {0} with a named key: expected 1")]
    NamedKeys(u64),
}

impl KvWorkload {
    /// Checks what the field types alone do not.
    pub fn validate(&self) -> Result<(), WorkloadError> {
        if !(1..=u64::from(u32::MAX)).contains(&self.keys) {
            return Err(WorkloadError::Keys(self.keys));
        }
        if !(0.0..=1.0).contains(&self.read_ratio) {
            return Err(WorkloadError::ReadRatio(self.read_ratio));
        }
        if let KeyDist::Zipf { theta } = self.key_dist
            && !(theta >= 0.0 && theta.is_finite())
        {
            return Err(WorkloadError::ZipfTheta(theta));
        }
        if self.key.is_some() && self.keys != 1 {
            return Err(WorkloadError::NamedKeys(self.keys));
        }
        Ok(())
    }
}

/// A workload's keys and value sizes, generated once and shared by every worker's
/// [`KvGenerator`] (workers read it, never write it).
///
/// Keys are stored back to back in one buffer, so that ten million keys are two
/// allocations, not ten million, and a request borrows its key instead of copying it. Key
/// `i` is the decimal `i`, zero-padded on the left to its drawn size (`0000000042`): unique,
/// valid in every protocol, and recognisable in a server's logs. A named key
/// ([`KvWorkload::key`]) is the one key instead.
#[derive(Debug)]
pub struct KeySpace {
    workload: KvWorkload,
    /// All keys, concatenated.
    arena: Vec<u8>,
    /// Key `i` ends at `ends[i]` in `arena` (and starts where key `i - 1` ends).
    ends: Vec<usize>,
    /// Key `i`'s value size.
    value_lens: Vec<u32>,
}

impl KeySpace {
    /// Generates the keys and value sizes of `workload`, reproducibly from `seed`.
    pub fn new(workload: &KvWorkload, seed: u64) -> Result<KeySpace, WorkloadError> {
        workload.validate()?;
        let count = workload.keys as usize; // ≤ u32::MAX, checked
        let digits = (workload.keys - 1).checked_ilog10().unwrap_or(0) as usize + 1;
        let key_sizes = workload.key_size.sampler();
        let value_sizes = workload.value_size.sampler();
        let mut rng = SmallRng::seed_from_u64(seed);

        let mut arena = Vec::new();
        let mut ends = Vec::with_capacity(count);
        let mut value_lens = Vec::with_capacity(count);
        for i in 0..workload.keys {
            // Float-to-int casts saturate, so any draw lands in range after the clamp.
            let size = (key_sizes.sample(&mut rng).round() as usize).clamp(digits, MAX_KEY_LEN);
            match &workload.key {
                Some(name) => arena.extend_from_slice(name.as_bytes()),
                None => push_padded_decimal(&mut arena, i, size),
            }
            ends.push(arena.len());
            let value_len = (value_sizes.sample(&mut rng).round() as usize).min(MAX_VALUE_LEN);
            value_lens.push(value_len as u32); // MAX_VALUE_LEN < u32::MAX
        }
        Ok(KeySpace {
            workload: workload.clone(),
            arena,
            ends,
            value_lens,
        })
    }

    /// The number of keys.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether there are no keys (never, for a valid workload).
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Key `i`, or `None` past the end.
    pub fn key(&self, i: usize) -> Option<&[u8]> {
        let end = *self.ends.get(i)?;
        let start = i.checked_sub(1).map_or(0, |previous| self.ends[previous]);
        Some(&self.arena[start..end])
    }

    /// The size of key `i`'s value, or `None` past the end.
    pub fn value_len(&self, i: usize) -> Option<usize> {
        self.value_lens.get(i).map(|&len| len as usize)
    }

    /// The workload these keys were made for.
    pub fn workload(&self) -> &KvWorkload {
        &self.workload
    }

    /// A request generator over these keys with its own RNG seeded from `seed` (one per
    /// worker: see [`worker_seed`](crate::worker_seed)).
    pub fn generator(self: &Arc<Self>, seed: u64) -> KvGenerator {
        let mut rng = SmallRng::seed_from_u64(seed);
        let n = self.len();
        let chooser = match self.workload.key_dist {
            KeyDist::Uniform => Chooser::uniform(n),
            // Each generator starts at a random key, so workers do not walk in lockstep.
            KeyDist::RoundRobin => Chooser::RoundRobin {
                next: rng.random_range(0..n.max(1)),
            },
            KeyDist::Zipf { theta } => match Zipf::new(n as f64, theta) {
                Ok(zipf) => Chooser::Zipf(zipf),
                // Validated in `new`; should it fail all the same, uniform is a workload
                // still, where a panic in a worker thread would not be.
                Err(_) => Chooser::uniform(n),
            },
        };
        KvGenerator {
            keys: Arc::clone(self),
            rng,
            chooser,
        }
    }
}

/// Appends `n` in decimal, zero-padded on the left to `width` bytes.
fn push_padded_decimal(out: &mut Vec<u8>, n: u64, width: usize) {
    let start = out.len();
    out.resize(start + width, b'0');
    let mut rest = n;
    for digit in out[start..].iter_mut().rev() {
        *digit = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
}

/// Draws a key index.
#[derive(Debug, Clone)]
enum Chooser {
    Uniform(Option<Uniform<usize>>),
    RoundRobin { next: usize },
    Zipf(Zipf<f64>),
}

impl Chooser {
    fn uniform(n: usize) -> Chooser {
        Chooser::Uniform(Uniform::new(0, n).ok())
    }

    fn choose(&mut self, rng: &mut SmallRng, n: usize) -> usize {
        match self {
            Chooser::Uniform(uniform) => uniform.as_ref().map_or(0, |u| u.sample(rng)),
            Chooser::RoundRobin { next } => {
                let i = *next;
                *next = if i + 1 >= n { 0 } else { i + 1 };
                i
            }
            // Zipf draws ranks 1..=n as floats; rank 1, the most popular, is key 0.
            Chooser::Zipf(zipf) => (zipf.sample(rng) as usize)
                .saturating_sub(1)
                .min(n.saturating_sub(1)),
        }
    }
}

/// One worker's source of key-value requests: which key, read or write, what value size.
///
/// Seeded, so a run is reproducible; borrowing keys from the shared [`KeySpace`], so a
/// request costs no allocation.
#[derive(Debug, Clone)]
pub struct KvGenerator {
    keys: Arc<KeySpace>,
    rng: SmallRng,
    chooser: Chooser,
}

impl KvGenerator {
    /// The next request. It borrows the generator until it is encoded.
    pub fn next_request(&mut self) -> Request<'_> {
        let n = self.keys.len();
        let i = self.chooser.choose(&mut self.rng, n);
        let read = self.rng.random::<f64>() < self.keys.workload.read_ratio;
        let key = self.keys.key(i).unwrap_or_default();
        if read {
            Request::Get { key }
        } else {
            Request::Set {
                key,
                value_len: self.keys.value_len(i).unwrap_or_default(),
            }
        }
    }
}

#[cfg(test)]
mod tests;
