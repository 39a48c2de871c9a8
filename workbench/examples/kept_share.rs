//! What keeping fewer requests costs a recorded point's interval: each point of a record
//! (its result's round, every agent's samples in send order) analysed as if only one
//! request in k had been kept (a systematic 1-in-k, as a thinned run keeps them), for k =
//! 1, 2, 4, 8, 16. Neighbouring latencies are correlated, so a kept share of 1/k loses less
//! than 1/k of the information: the effective tail samples say how much it does lose.
//!
//!     cargo run --release --example kept_share -- RECORD_DIR [PERCENTILE]
//!
//! RECORD_DIR is a run's record (`runs/NAME-…`), PERCENTILE in percent (default 99).

use std::path::PathBuf;
use std::process::ExitCode;

use polars::prelude::*;
use vernier_stats::{effective_tail, percentile, percentile_ci_dependent};
use vernier_workbench::record::{read_record, read_samples};

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let Some(dir) = args.next().map(PathBuf::from) else {
        eprintln!("usage: kept_share RECORD_DIR [PERCENTILE]");
        return ExitCode::from(2);
    };
    let p = match args.next().map(|s| s.parse::<f64>()) {
        None => 0.99,
        Some(Ok(v)) if v > 0.0 && v < 100.0 => v / 100.0,
        Some(_) => {
            eprintln!("kept_share: PERCENTILE is a number between 0 and 100, as in 99");
            return ExitCode::from(2);
        }
    };
    match run(&dir, p) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("kept_share: {}: {e}", dir.display());
            ExitCode::FAILURE
        }
    }
}

/// One point's round, every agent's samples in send order, one agent after another (as
/// the coordinator builds its combined series).
fn series(frame: &DataFrame, point: u32, round: u32) -> Result<Vec<f64>, String> {
    let column = |name: &str| frame.column(name).map_err(|e| e.to_string());
    let points = column("point")?.u32().map_err(|e| e.to_string())?.clone();
    let rounds = column("round")?.u32().map_err(|e| e.to_string())?.clone();
    let agents = column("agent")?.u32().map_err(|e| e.to_string())?.clone();
    let departures = column("departure_ns")?
        .u64()
        .map_err(|e| e.to_string())?
        .clone();
    let latencies = column("latency_ns")?
        .u64()
        .map_err(|e| e.to_string())?
        .clone();
    let mut rows: Vec<(u32, u64, u64)> = (0..frame.height())
        .filter(|&i| points.get(i) == Some(point) && rounds.get(i) == Some(round))
        .filter_map(|i| Some((agents.get(i)?, departures.get(i)?, latencies.get(i)?)))
        .collect();
    rows.sort_unstable();
    Ok(rows.into_iter().map(|(_, _, l)| l as f64 / 1e3).collect())
}

fn run(dir: &std::path::Path, p: f64) -> Result<(), String> {
    let record = read_record(dir).map_err(|e| e.to_string())?;
    let frame = read_samples(dir).map_err(|e| e.to_string())?;
    println!(
        "point  rate req/s  keep   samples  p{:<6}  CI width µs  variance ×  effective tail  share of keeping all",
        p * 100.0
    );
    for (i, point) in record.points.iter().enumerate() {
        let all = series(&frame, i as u32, point.round)?;
        let mut whole = None;
        for k in [1usize, 2, 4, 8, 16] {
            let kept: Vec<f64> = all.iter().copied().step_by(k).collect();
            let mut sorted = kept.clone();
            sorted.sort_by(f64::total_cmp);
            let value = percentile(&sorted, p).unwrap_or(f64::NAN);
            let line = match percentile_ci_dependent(&kept, &sorted, p, 0.95) {
                Ok(Ok(ci)) => {
                    let tail = effective_tail(kept.len(), p, &ci);
                    let whole = *whole.get_or_insert(tail);
                    format!(
                        "{:>11.1}  {:>10.1}  {:>14.1}  {:>20.2}",
                        ci.width(),
                        ci.variance_inflation,
                        tail,
                        tail / whole
                    )
                }
                Ok(Err(need)) => format!("no CI: {}", need.reason),
                Err(e) => format!("no CI: {e}"),
            };
            println!(
                "{i:>5}  {:>11.0}  1/{k:<3} {:>8}  {value:>7.1}  {line}",
                point.target_rate,
                kept.len()
            );
        }
    }
    Ok(())
}
