//! `vernier validate`'s section on the tail without the host's stalls (alone with
//! `--stall-coverage`): how often its CI holds the truth of the same queue on a host that
//! never stalls (`vernier_fixtures::stall_coverage`), beside what dropping only the
//! requests that overlap a stall gives and what every request gives. Written into
//! RESULTS.md between markers and as `results/stall-coverage.json`.

use std::fmt::Write as _;
use std::path::Path;
use std::time::Instant;

use serde::Serialize;
use vernier_fixtures::{StallCoverageConfig, StallCoverageRow, stall_coverage};

use super::coverage::{percent, splice};
use super::files::write_json;
use super::setup::Depth;
use crate::error::Error;

const BEGIN: &str = "<!-- stall-coverage:begin (vernier validate --stall-coverage) -->";
const END: &str = "<!-- stall-coverage:end -->";

/// The coverage the without-stalls CI must reach in a cell where at most
/// [`MOST_TOUCHED`] of the requests are touched.
pub const TARGET: f64 = 0.90;
/// Beyond this share of requests touched, the few left say little of the tail: reported,
/// not held to [`TARGET`].
pub const MOST_TOUCHED: f64 = 0.10;

/// What the harness found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StallCoverageReport {
    /// Its configuration.
    pub config: StallCoverageConfig,
    /// Seconds it took.
    pub took_s: f64,
    /// Per cell and percentile.
    pub rows: Vec<StallCoverageRow>,
}

impl StallCoverageReport {
    /// A line per row, as `vernier validate` prints them.
    pub fn lines(&self) -> Vec<String> {
        self.rows
            .iter()
            .map(|r| {
                format!(
                    "stall coverage ρ {:.1} stalled {:>4.1}% p{:<3} touched {:>5.1}%: without stalls {:.3} ({} CIs, misses {} above, {} below) bias {:+.3}; overlap dropped {:.3} bias {:+.3}; every request bias {:+.3}",
                    r.cell.rho,
                    r.cell.stall_share * 100.0,
                    percent(r.p),
                    r.touched_share * 100.0,
                    r.without.coverage,
                    r.without.with_ci,
                    r.without.misses_above,
                    r.without.misses_below,
                    r.without.bias,
                    r.overlap_dropped.coverage,
                    r.overlap_dropped.bias,
                    r.every.bias,
                )
            })
            .collect()
    }

    /// The rows that miss [`TARGET`] where at most [`MOST_TOUCHED`] of the requests were
    /// touched.
    pub fn misses(&self) -> Vec<&StallCoverageRow> {
        self.rows
            .iter()
            .filter(|r| r.touched_share <= MOST_TOUCHED && r.without.coverage < TARGET)
            .collect()
    }
}

/// The replications of the full run and of `--quick`.
fn config(depth: Depth, replications: Option<usize>) -> StallCoverageConfig {
    let base = StallCoverageConfig::default();
    match depth {
        Depth::Quick => StallCoverageConfig {
            replications: replications.unwrap_or(40),
            samples: 100_000,
            ..base
        },
        Depth::Full => StallCoverageConfig {
            replications: replications.unwrap_or(base.replications),
            ..base
        },
    }
}

/// Runs the harness, splices its section into `out`/RESULTS.md and writes
/// `out`/results/stall-coverage.json.
pub(super) fn run(
    out: &Path,
    depth: Depth,
    replications: Option<usize>,
) -> Result<StallCoverageReport, Error> {
    let config = config(depth, replications);
    eprintln!(
        "vernier validate: the tail without stalls, {} replications of {} cells",
        config.replications,
        config.cells.len()
    );
    let started = Instant::now();
    let rows = stall_coverage(&config);
    let report = StallCoverageReport {
        config,
        took_s: started.elapsed().as_secs_f64(),
        rows,
    };
    let path = out.join("RESULTS.md");
    splice(&path, &section(&report), (BEGIN, END))?;
    write_json(&out.join("results").join("stall-coverage.json"), &report)?;
    eprintln!(
        "vernier validate: the tail without stalls written into {} in {:.0} s",
        path.display(),
        report.took_s
    );
    Ok(report)
}

/// The section's markdown.
fn section(report: &StallCoverageReport) -> String {
    let (config, rows) = (&report.config, &report.rows);
    let se = rows
        .first()
        .map_or(f64::NAN, |r| r.standard_error(config.confidence));
    let mut s = String::new();
    let _ = writeln!(s, "{BEGIN}");
    let _ = writeln!(s, "## Does the tail without stalls' CI cover?\n");
    let _ = writeln!(
        s,
        "`vernier validate --stall-coverage` ({} replications per cell, seed {}, {:.0} s on this \
         machine). Each replication is a FIFO M/M/1 queue (service mean {} µs) of {} requests \
         whose server does no work during stalls: Poisson, taking the share of the time shown, \
         each {:.1}–{:.0} ms long (log-uniform), while arrivals continue. The stalls are known \
         only as the host probe knows them: a wake-up every {:.0} µs, a stall when one comes more \
         than {:.0} µs late, recorded from the deadline it was due at (the stall began up to a \
         period before; every request it held was in flight then) to the wake-up. The truth is the same queue without stalls (sojourn Exp(μ − λ), exact). \
         \"Without stalls\" is `vernier_stats::without_stalls`: requests a stall's reach (to the \
         first moment nothing was in flight) did not touch, weighted against the length bias, \
         with the dependence-valid {:.0}% CI; coverage is over the replications that had a CI \
         (\"CIs\"), its own standard error about ±{:.3} at 400. Target ≥ {TARGET} where at most \
         {:.0}% of requests are touched (✗ marks a miss). \"Overlap dropped\" leaves out only \
         the requests whose span overlaps a recorded stall; \"every request\" is the tail users \
         of this host see. Bias is the mean of (estimate − truth)/truth.\n",
        config.replications,
        config.seed,
        report.took_s,
        vernier_fixtures::STALL_SERVICE_US,
        config.samples,
        config.stall_us.0 / 1000.0,
        config.stall_us.1 / 1000.0,
        config.probe.period_us,
        config.probe.threshold_us,
        config.confidence * 100.0,
        se,
        MOST_TOUCHED * 100.0,
    );
    let _ = writeln!(
        s,
        "| ρ | stalled | p | truth (µs) | touched | stalls seen | without stalls: coverage | misses above / below | CIs | bias | overlap dropped: coverage (CIs) | bias | every request: coverage (CIs) | bias |"
    );
    let _ = writeln!(
        s,
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    );
    for r in rows {
        let judged = r.touched_share <= MOST_TOUCHED;
        let _ = writeln!(
            s,
            "| {:.1} | {:.1}% | p{} | {:.1} | {:.1}%{} | {:.0}% | {:.3}{} | {} / {} | {} | {:+.3} | {:.3} ({}) | {:+.3} | {:.3} ({}) | {:+.3} |",
            r.cell.rho,
            r.cell.stall_share * 100.0,
            percent(r.p),
            r.truth,
            r.touched_share * 100.0,
            if judged { "" } else { " (not judged)" },
            r.stalls_seen * 100.0,
            r.without.coverage,
            if judged && r.without.coverage < TARGET {
                " ✗"
            } else {
                ""
            },
            r.without.misses_above,
            r.without.misses_below,
            r.without.with_ci,
            r.without.bias,
            r.overlap_dropped.coverage,
            r.overlap_dropped.with_ci,
            r.overlap_dropped.bias,
            r.every.coverage,
            r.every.with_ci,
            r.every.bias,
        );
    }
    let _ = writeln!(
        s,
        "\nA replication without a CI had too few effective tail samples among the untouched \
         requests (p99 at ρ 0.8 needs more than {} requests); its estimate still counts in the \
         bias.\n",
        config.samples
    );
    let _ = writeln!(s, "{END}");
    s
}
