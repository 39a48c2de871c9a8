//! Writes real control messages into a corpus directory to start the fuzzer from:
//! `cargo +nightly run --example seeds -- corpus/decode_control`.

use std::path::PathBuf;

fn main() -> std::io::Result<()> {
    let dir = PathBuf::from(
        std::env::args()
            .nth(1)
            .unwrap_or_else(|| "corpus/decode_control".into()),
    );
    std::fs::create_dir_all(&dir)?;
    for (name, bytes) in vernier_agent_fuzz::seeds() {
        std::fs::write(dir.join(name), bytes)?;
    }
    Ok(())
}
