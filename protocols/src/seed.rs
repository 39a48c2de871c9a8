//! Reproducible randomness: one seed per scenario, a derived seed per worker.

/// The seed of worker `worker`'s RNG, derived from the scenario's `seed`.
///
/// Workers must not share a stream (their arrivals would be correlated) and a run must be
/// reproducible from the one seed in the scenario. Seeds `seed`, `seed + 1`, ... would give
/// RNGs whose early outputs are related for weak seeding functions; instead the pair is
/// mixed with splitmix64's finaliser (Steele, Lea, Flood, "Fast splittable pseudorandom
/// number generators", OOPSLA 2014), a bijection that changes about half the output bits
/// for any one-bit change of its input.
pub fn worker_seed(seed: u64, worker: u32) -> u64 {
    // The golden-ratio increment of splitmix64: step `worker + 1` of the sequence from
    // `seed`, so worker 0 does not get splitmix64(seed) that a caller may also use.
    const GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;
    let z = seed.wrapping_add(GAMMA.wrapping_mul(u64::from(worker) + 1));
    splitmix64_mix(z)
}

fn splitmix64_mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_splitmix64_reference_sequence() {
        // The first outputs of the reference splitmix64 seeded with 0 (as in Vigna's C code),
        // which are steps 1, 2, 3 from state 0.
        assert_eq!(worker_seed(0, 0), 0xe220_a839_7b1d_cdaf);
        assert_eq!(worker_seed(0, 1), 0x6e78_9e6a_a1b9_65f4);
        assert_eq!(worker_seed(0, 2), 0x06c4_5d18_8009_454f);
    }

    #[test]
    fn workers_and_seeds_get_distinct_well_mixed_seeds() {
        let mut seen = std::collections::HashSet::new();
        for seed in 0..64 {
            for worker in 0..64 {
                assert!(seen.insert(worker_seed(seed, worker)));
            }
        }
        // Neighbouring workers differ in about half their bits, not in one or two.
        for worker in 0..64 {
            let flipped = (worker_seed(42, worker) ^ worker_seed(42, worker + 1)).count_ones();
            assert!(
                (16..=48).contains(&flipped),
                "worker {worker}: {flipped} bits"
            );
        }
    }
}
