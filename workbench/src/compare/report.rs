//! The report of a recorded comparison (written by `vernier compare --record DIR`): the
//! table `vernier compare` prints, and three plots. `ccdf`: both sides' latencies over all
//! their blocks, with the compared percentile marked, to see where the two tails part.
//! `blocks`: each block's percentile at the time it started, so that a host whose speed
//! drifted, or one block that went wrong, is seen rather than averaged away. `difference`:
//! the CI of B − A at every look, narrowing as pairs were added, against zero and ± the
//! width asked, which is how the verdict was reached.
//!
//! Like a run's report it works from the record alone; a comparison that stopped early
//! draws what it has and says in [`ComparisonReport::notes`] what it could not.

mod blocks;
mod difference;
mod table;

use std::path::{Path, PathBuf};

use serde::Serialize;

use vernier_stats::MIN_PAIRS_TO_LOOK;

use super::comparison::{Comparison, Side};
use crate::error::Error;
use crate::report::{CcdfSeries, PlotFormat, Writer, ccdf_figure, fmt_percentile};

pub use table::render_table;

/// The file a comparison is recorded in, inside the directory `--record` names.
pub const COMPARISON_FILE: &str = "comparison.json";

/// What `vernier report` made of a comparison's directory.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ComparisonReport {
    /// The comparison as recorded.
    pub comparison: Comparison,
    /// The plots written, in the order written.
    pub plots: Vec<PathBuf>,
    /// What could not be drawn, and why (a comparison stopped before its first look has
    /// no CI to draw...).
    pub notes: Vec<String>,
}

/// The comparison recorded in `dir`. A missing file, or one that is not a comparison, is
/// an error naming `dir/comparison.json`.
pub fn read(dir: &Path) -> Result<Comparison, Error> {
    let path = dir.join(COMPARISON_FILE);
    let text = std::fs::read_to_string(&path).map_err(|source| Error::Io {
        path: path.clone(),
        source,
    })?;
    serde_json::from_str(&text).map_err(|e| {
        Error::input(
            &path,
            Some(e.line()),
            format!("not a vernier comparison: {e}"),
        )
    })
}

/// Reads the comparison recorded in `dir`, writes its plots into `out` (default
/// `dir/report/`) as `format` says, and returns it with the files written. A plot without
/// data (no look, a side without blocks or latencies) is skipped with a note, not an error.
pub fn run(dir: &Path, out: Option<&Path>, format: PlotFormat) -> Result<ComparisonReport, Error> {
    let comparison = read(dir)?;
    let out = out.map_or_else(|| dir.join("report"), Path::to_path_buf);
    let mut plots = Writer::create(&out, format)?;
    let mut notes = Vec::new();
    ccdf_plot(&mut plots, &comparison, &mut notes)?;
    blocks_plot(&mut plots, &comparison, &mut notes)?;
    difference_plot(&mut plots, &comparison, &mut notes)?;
    Ok(ComparisonReport {
        comparison,
        plots: plots.written(),
        notes,
    })
}

/// Both sides' CCDFs on one plot, the compared percentile marked with each side's value of
/// it (its pooled value, from the last look); skipped when a side has no latencies.
fn ccdf_plot(plots: &mut Writer<'_>, c: &Comparison, notes: &mut Vec<String>) -> Result<(), Error> {
    let empty: Vec<Side> = [(Side::A, &c.ccdf_a), (Side::B, &c.ccdf_b)]
        .iter()
        .filter(|(_, points)| points.is_empty())
        .map(|(side, _)| *side)
        .collect();
    if !empty.is_empty() {
        let why = match empty.as_slice() {
            [side] => format!("{side} has no latencies"),
            _ => "neither side has latencies".to_string(),
        };
        notes.push(format!(
            "{} skipped: {why} (no block measured any)",
            plots.format().names("ccdf")
        ));
        return Ok(());
    }
    let series = [
        CcdfSeries {
            label: side_label(c, Side::A),
            points: c.ccdf_a.clone(),
            marked: c.ci.map(|ci| ci.a),
        },
        CcdfSeries {
            label: side_label(c, Side::B),
            points: c.ccdf_b.clone(),
            marked: c.ci.map(|ci| ci.b),
        },
    ];
    let marked = if c.ci.is_some() {
        ", each dot a side's value of it over its blocks at the last look"
    } else {
        " (no look at the CI was made: no values to mark)"
    };
    // The curves hold every request; the tail compared may be the one without stalls,
    // whose values the dots are: the caption says which.
    let compared = match c.tail {
        crate::scenario::Tail::WithStalls => "every request's",
        crate::scenario::Tail::WithoutStalls => {
            "the tail without stalls' (the requests no host stall touched, the answer's)"
        }
    };
    let caption = vec![format!(
        "Each curve: one side's latencies, every request's, over all its blocks at {:.0} req/s. \
         y: the fraction of them at or above the latency. Dashed: the {} compared, {compared}{marked}.",
        c.rate,
        fmt_percentile(c.percentile)
    )];
    plots.write("ccdf", ccdf_figure(caption, &series, Some(c.percentile)))
}

/// Each block's percentile against its start, A and B apart; skipped when a side has no
/// blocks, and the blocks that measured nothing (no value to draw) are noted.
fn blocks_plot(
    plots: &mut Writer<'_>,
    c: &Comparison,
    notes: &mut Vec<String>,
) -> Result<(), Error> {
    let names = plots.format().names("blocks");
    for side in Side::BOTH {
        if !c.blocks.iter().any(|b| b.side == side) {
            notes.push(format!("{names} skipped: {side} has no blocks"));
            return Ok(());
        }
    }
    let undrawn: Vec<String> = c
        .blocks
        .iter()
        .filter(|b| !b.value_of(c.tail).is_finite())
        .map(|b| format!("{} {}", b.side, b.pair + 1))
        .collect();
    if !undrawn.is_empty() {
        notes.push(format!(
            "{names}: no {} in block(s) {} (not drawn)",
            fmt_percentile(c.percentile),
            undrawn.join(", ")
        ));
    }
    plots.write(
        "blocks",
        blocks::draw(c, side_label(c, Side::A), side_label(c, Side::B)),
    )
}

/// The CI of B − A at every look; skipped when no look was made.
fn difference_plot(
    plots: &mut Writer<'_>,
    c: &Comparison,
    notes: &mut Vec<String>,
) -> Result<(), Error> {
    if c.looks.is_empty() {
        let count = |side: Side| c.blocks.iter().filter(|b| b.side == side).count();
        let pairs = count(Side::A).min(count(Side::B));
        notes.push(format!(
            "{} skipped: no look at the CI of B − A (the first comes after {MIN_PAIRS_TO_LOOK} \
             pairs of blocks; {pairs} were measured)",
            plots.format().names("difference")
        ));
        return Ok(());
    }
    plots.write("difference", difference::draw(c))
}

/// A side as legends name it: `A: memcached://127.0.0.1:11211`.
fn side_label(c: &Comparison, side: Side) -> String {
    let target = match side {
        Side::A => &c.a,
        Side::B => &c.b,
    };
    format!("{side}: {target}")
}

#[cfg(test)]
mod tests;
