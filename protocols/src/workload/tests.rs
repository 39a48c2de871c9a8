use std::collections::HashSet;
use std::sync::Arc;

use super::*;

fn workload(yaml_like_json: &str) -> KvWorkload {
    serde_json::from_str(yaml_like_json).unwrap()
}

fn small(key_dist: &str, read_ratio: f64) -> KvWorkload {
    KvWorkload {
        keys: 100,
        key_size: "fixed:8".parse().unwrap(),
        value_size: "uniform:10:20".parse().unwrap(),
        read_ratio,
        key_dist: key_dist.parse().unwrap(),
        key: None,
    }
}

/// The key index of a generated key (they are decimal numbers).
fn index(key: &[u8]) -> usize {
    std::str::from_utf8(key).unwrap().parse().unwrap()
}

#[test]
fn deserialises_from_the_scenario_form() {
    let parsed = workload(
        r#"{"keys": 10000, "key_size": "fixed:30", "value_size": "pareto:200:2",
            "read_ratio": 0.9, "key_dist": "zipf:0.99"}"#,
    );
    assert_eq!(parsed.keys, 10_000);
    assert_eq!(parsed.key_size, SizeDist::fixed(30));
    assert_eq!(parsed.key_dist, KeyDist::Zipf { theta: 0.99 });
    let defaulted = workload(
        r#"{"keys": 1, "key_size": "fixed:30", "value_size": "fixed:2", "read_ratio": 1}"#,
    );
    assert_eq!(defaulted.key_dist, KeyDist::Uniform);

    let error = serde_json::from_str::<KvWorkload>(
        r#"{"keys": 1, "key_size": "fixed:30", "value_size": "fixed:2", "read_ratio": 1, "reads": 1}"#,
    )
    .unwrap_err();
    assert!(
        error.to_string().contains("unknown field `reads`"),
        "{error}"
    );
    let error = serde_json::from_str::<KvWorkload>(
        r#"{"keys": 1, "key_size": "fixed:30us", "value_size": "fixed:2", "read_ratio": 1}"#,
    )
    .unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with(r#"invalid size distribution "fixed:30us""#),
        "{error}"
    );
}

#[test]
fn invalid_workloads_are_refused() {
    let mut w = small("uniform", 0.5);
    w.keys = 0;
    assert_eq!(
        KeySpace::new(&w, 1).unwrap_err().to_string(),
        "keys is 0: expected from 1 to 4294967295"
    );
    let w = small("uniform", 1.5);
    assert_eq!(
        KeySpace::new(&w, 1).unwrap_err().to_string(),
        "read_ratio is 1.5: expected a share from 0 to 1, as in 0.9"
    );
    let mut w = small("uniform", 0.5);
    w.key_dist = KeyDist::Zipf { theta: -1.0 };
    assert_eq!(
        KeySpace::new(&w, 1).unwrap_err(),
        WorkloadError::ZipfTheta(-1.0)
    );
    let mut w = small("uniform", 1.0);
    w.key = Some("index.html".into());
    assert_eq!(
        KeySpace::new(&w, 1).unwrap_err().to_string(),
        "keys is 100 with a named key: expected 1"
    );
}

#[test]
fn a_named_key_is_the_one_every_request_asks_for() {
    let mut w = small("uniform", 1.0);
    w.keys = 1;
    for name in ["index.html", "api/v1/items?id=7", ""] {
        w.key = Some(name.into());
        let space = Arc::new(KeySpace::new(&w, 3).unwrap());
        assert_eq!(space.len(), 1);
        assert_eq!(space.key(0), Some(name.as_bytes()));
        let mut generator = space.generator(9);
        for _ in 0..10 {
            assert_eq!(
                generator.next_request(),
                Request::Get {
                    key: name.as_bytes()
                }
            );
        }
    }
    // Not a field of the scenario's `workload:`: its `path:` names the key.
    let error = serde_json::from_str::<KvWorkload>(
        r#"{"keys": 1, "key_size": "fixed:3", "value_size": "fixed:2", "read_ratio": 1, "key": "x"}"#,
    )
    .unwrap_err();
    assert!(error.to_string().contains("unknown field `key`"), "{error}");
}

#[test]
fn keys_are_distinct_padded_decimals_of_the_drawn_sizes() {
    let mut w = small("uniform", 1.0);
    w.keys = 1000;
    w.key_size = "uniform:1:300".parse().unwrap();
    let space = KeySpace::new(&w, 7).unwrap();
    assert_eq!(space.len(), 1000);
    let mut seen = HashSet::new();
    let mut sizes = HashSet::new();
    for i in 0..space.len() {
        let key = space.key(i).unwrap();
        // Wide enough for 999, no wider than memcached allows.
        assert!((3..=250).contains(&key.len()), "{}", key.len());
        assert_eq!(index(key), i);
        assert!(seen.insert(key.to_vec()));
        sizes.insert(key.len());
    }
    // The drawn sizes vary, and the cap at 250 is reached.
    assert!(sizes.len() > 100 && sizes.contains(&250));
    assert_eq!(space.key(1000), None);

    let w = small("uniform", 1.0);
    let space = KeySpace::new(&w, 7).unwrap();
    assert_eq!(space.key(42), Some(&b"00000042"[..]));
    assert!((0..100).all(|i| (10..=20).contains(&space.value_len(i).unwrap())));
}

#[test]
fn one_seed_gives_one_run() {
    let space = Arc::new(KeySpace::new(&small("zipf:0.99", 0.5), 3).unwrap());
    let draw = |seed| {
        let mut generator = space.generator(seed);
        (0..1000)
            .map(|_| format!("{:?}", generator.next_request()))
            .collect::<Vec<_>>()
    };
    assert_eq!(draw(1), draw(1));
    assert_ne!(draw(1), draw(2));
    let other = KeySpace::new(&small("zipf:0.99", 0.5), 4).unwrap();
    let space_again = KeySpace::new(&small("zipf:0.99", 0.5), 3).unwrap();
    assert_eq!(space.value_lens, space_again.value_lens);
    assert_ne!(space.value_lens, other.value_lens);
}

/// Draws `n` requests, counting reads and picks per key; checks each set's size is its key's.
fn tally(w: &KvWorkload, n: usize) -> (usize, Vec<usize>) {
    let space = Arc::new(KeySpace::new(w, 11).unwrap());
    let mut generator = space.generator(12);
    let mut reads = 0;
    let mut picks = vec![0; space.len()];
    for _ in 0..n {
        match generator.next_request() {
            Request::Get { key } => {
                reads += 1;
                picks[index(key)] += 1;
            }
            Request::Set { key, value_len } => {
                assert_eq!(space.value_len(index(key)), Some(value_len));
                picks[index(key)] += 1;
            }
            other => panic!("not a key-value request: {other:?}"),
        }
    }
    (reads, picks)
}

#[test]
fn read_ratio_is_kept() {
    for ratio in [0.0, 0.9, 1.0] {
        let (reads, _) = tally(&small("uniform", ratio), 100_000);
        let share = reads as f64 / 100_000.0;
        assert!((share - ratio).abs() < 0.005, "{ratio}: {share}");
    }
}

#[test]
fn uniform_picks_every_key_about_equally() {
    let (_, picks) = tally(&small("uniform", 0.5), 100_000);
    // 1000 expected per key; a standard deviation of about 31.
    assert!(
        picks.iter().all(|&p| (850..=1150).contains(&p)),
        "{picks:?}"
    );
}

#[test]
fn round_robin_visits_keys_in_turn() {
    let space = Arc::new(KeySpace::new(&small("round-robin", 1.0), 1).unwrap());
    let mut generator = space.generator(5);
    let keys: Vec<usize> = (0..250)
        .map(|_| match generator.next_request() {
            Request::Get { key } => index(key),
            other => panic!("{other:?}"),
        })
        .collect();
    for pair in keys.windows(2) {
        assert_eq!(pair[1], (pair[0] + 1) % 100);
    }
}

#[test]
fn zipf_follows_the_power_law() {
    let n = 200_000;
    let (_, picks) = tally(&small("zipf:0.99", 0.5), n);
    // P(rank k) = k^-θ / H(100, θ).
    let harmonic: f64 = (1..=100).map(|k| (k as f64).powf(-0.99)).sum();
    for (rank, &count) in picks.iter().enumerate().take(5) {
        let expected = ((rank + 1) as f64).powf(-0.99) / harmonic * n as f64;
        assert!(
            (count as f64 - expected).abs() < 0.05 * expected,
            "rank {}: {count} vs {expected}",
            rank + 1
        );
    }
    // Skew: the first key is picked far more often than the last.
    assert!(picks[0] > 50 * picks[99]);
}
