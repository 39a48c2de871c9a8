//! `vernier validate`'s coverage section (alone with `--coverage`): how often each
//! percentile's CI holds the true value, on processes whose quantiles are known
//! (`vernier_fixtures::coverage`), for the dependence-valid CI the methodology uses and for
//! the iid order-statistic CI. Written into RESULTS.md between markers, so that it can be
//! rerun alone without touching the rest, and as `results/coverage.json`.

use std::fmt::Write as _;
use std::path::Path;
use std::time::Instant;

use serde::Serialize;
use vernier_fixtures::{CoverageConfig, CoverageRow, StoppingRow, coverage_and_stopping};

use super::files::{write, write_json};
use super::setup::Depth;
use crate::error::Error;

const BEGIN: &str = "<!-- coverage:begin (vernier validate --coverage) -->";
const END: &str = "<!-- coverage:end -->";

/// What the coverage harness found: its configuration, how long it took and a row per
/// process and percentile.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CoverageReport {
    /// The replications, processes and percentiles.
    pub config: CoverageConfig,
    /// Seconds the harness took.
    pub took_s: f64,
    /// Per process and percentile.
    pub rows: Vec<CoverageRow>,
    /// The methodology's stopping rule: per process, percentile and width target.
    pub stopping: Vec<StoppingRow>,
}

impl CoverageReport {
    /// A line per row, as `vernier validate` prints them.
    pub fn lines(&self) -> Vec<String> {
        self.rows
            .iter()
            .map(|r| {
                format!(
                    "coverage {:<40} p{:<6} {:.3} (iid CI {:.3}) width {:.3} (iid {:.3}); misses: {} above, {} below the truth",
                    r.process,
                    percent(r.p),
                    r.coverage,
                    r.coverage_iid,
                    r.mean_width,
                    r.mean_width_iid,
                    r.misses_above,
                    r.misses_below,
                )
            })
            .chain(self.stopping.iter().map(|r| {
                format!(
                    "stopping {:<40} p{:<6} width {:>3.0}%: coverage {:.3} over {} stopped of {} (misses {} above, {} below), mean samples at the stop {:.0} after {:.1} looks, mean width {:.1}%",
                    r.process,
                    percent(r.p),
                    r.width * 100.0,
                    r.coverage,
                    r.stopped,
                    r.replications,
                    r.misses_above,
                    r.misses_below,
                    r.mean_samples,
                    r.mean_looks,
                    r.mean_width * 100.0,
                )
            }))
            .collect()
    }
}

/// The replications of the full run and of `--quick`.
fn config(depth: Depth, replications: Option<usize>) -> CoverageConfig {
    let quick = depth == Depth::Quick;
    let base = CoverageConfig::default();
    CoverageConfig {
        replications: replications.unwrap_or(if quick { 40 } else { base.replications }),
        samples: if quick { 20_000 } else { base.samples },
        max_samples: if quick { 320_000 } else { base.max_samples },
        truth_samples: if quick { 2_000_000 } else { base.truth_samples },
        truth_runs: if quick { 2 } else { base.truth_runs },
        ..base
    }
}

/// Runs the harness, splices its section into `out`/RESULTS.md and writes
/// `out`/results/coverage.json.
pub(super) fn run(
    out: &Path,
    depth: Depth,
    replications: Option<usize>,
) -> Result<CoverageReport, Error> {
    let config = config(depth, replications);
    eprintln!(
        "vernier validate: coverage, {} replications of {} processes",
        config.replications,
        config.processes.len()
    );
    let started = Instant::now();
    let (rows, stopping) = coverage_and_stopping(&config);
    let report = CoverageReport {
        config,
        took_s: started.elapsed().as_secs_f64(),
        rows,
        stopping,
    };
    let path = out.join("RESULTS.md");
    splice(&path, &section(&report), (BEGIN, END))?;
    write_json(&out.join("results").join("coverage.json"), &report)?;
    eprintln!(
        "vernier validate: coverage written into {} in {:.0} s",
        path.display(),
        report.took_s
    );
    Ok(report)
}

/// "99.9" for 0.999: the percentile as a person writes it.
pub(super) fn percent(p: f64) -> String {
    let s = format!("{:.3}", p * 100.0);
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

fn mark(coverage: f64, target: f64) -> &'static str {
    if coverage >= target { "" } else { " ✗" }
}

/// The section's markdown.
fn section(report: &CoverageReport) -> String {
    let (config, rows) = (&report.config, &report.rows);
    let mut s = String::new();
    let se = rows
        .first()
        .map_or(f64::NAN, |r| r.standard_error(config.confidence));
    let _ = writeln!(s, "{BEGIN}");
    let _ = writeln!(s, "## Does the first CI cover the truth?\n");
    let _ = writeln!(
        s,
        "`vernier validate --coverage` ({} replications per process, seed {}, {:.0} s on this machine). \
         Each replication is one series of {} samples in steady state; when the dependence-valid CI \
         needs more (its effective tail, or its batches, are too few) the replication collects more of \
         the same series, up to {}, as the methodology does. Coverage is the share of replications \
         whose {:.0}% CI holds the true quantile (exact for iid and M/M/1, whose sojourn time is \
         Exp(μ − λ); for the stalling server the mean of {} independent runs of {} samples each, \
         ± its standard error). The harness's own \
         standard error at 95% coverage is ±{:.3}. Targets: ≥ 0.93 for p50–p99, ≥ 0.90 for p99.9 \
         (✗ marks a miss). \"iid CI\" is the order-statistic interval on the same samples, as if \
         they were independent.\n",
        config.replications,
        config.seed,
        report.took_s,
        config.samples,
        config.max_samples,
        config.confidence * 100.0,
        config.truth_runs,
        config.truth_samples,
        se,
    );
    let _ = writeln!(
        s,
        "| process | p | truth | coverage | misses above / below | iid CI coverage | mean width | iid width | median samples | median batch | no CI | samples for a {:.0}% wide CI (iid promise) |",
        config.relative_width * 100.0
    );
    let _ = writeln!(s, "|---|---|---|---|---|---|---|---|---|---|---|---|");
    for r in rows {
        let target = if r.p >= 0.999 { 0.90 } else { 0.93 };
        let _ = writeln!(
            s,
            "| {} | p{} | {:.2}{} | {:.3}{} | {} / {} | {:.3} | {:.3} | {:.3} | {} | {} | {} | {:.0} ({:.0}) |",
            r.process,
            percent(r.p),
            r.truth,
            if r.truth_exact {
                String::new()
            } else {
                format!(" ± {:.2} (sim.)", r.truth_se)
            },
            r.coverage,
            mark(r.coverage, target),
            r.misses_above,
            r.misses_below,
            r.coverage_iid,
            r.mean_width,
            r.mean_width_iid,
            r.median_samples,
            r.median_batch_size,
            r.no_interval,
            r.samples_for_width,
            r.samples_for_width_iid,
        );
    }
    let _ = writeln!(
        s,
        "\nThe method: batch means of the quantile's indicator, inverted through the order \
         statistics (stats/src/dependent.rs, with its references). On iid samples its width is \
         the order-statistic one's times the mean ratio shown; under dependence the iid interval \
         is many times too narrow and covers the truth in a minority of replications. A miss \
         \"above\" is an interval wholly above the truth (a replication that held more of the \
         clusters that make the tail than its share), \"below\" the reverse; \"no CI\" counts \
         replications that still lacked the samples for a valid interval at the limit, and \
         coverage is over the others.\n"
    );
    if !report.stopping.is_empty() {
        stopping_section(&mut s, report);
    }
    let _ = writeln!(s, "{END}");
    s
}

/// The stopping rule's table: coverage as the methodology runs, looking and stopping.
fn stopping_section(s: &mut String, report: &CoverageReport) {
    let config = &report.config;
    let rule = &config.rule;
    let _ = writeln!(
        s,
        "\n### Does the CI cover under the stopping rule?\n\n\
         The methodology looks at its interval many times and stops at the first narrow enough \
         one (stats/src/sequential.rs). Here the same rule, the function the coordinator calls, \
         is driven over the same processes ({} replications each): the first look at {} \
         samples, each next one sized from the width (n·(w/t)² × {}, between {}× and {}× the \
         samples), a stop when the {:.0}% CI is at most the target share of the estimate and \
         rests on at least 30·(1 + {}·ln k) effective tail samples at look k{}; a replication \
         whose stop cannot come within {} samples answers with the CI of one last look at \
         that limit, or of its last look when no look left could narrow it (\"at the limit\" \
         below: converged / wide, with their coverage), and is N/A only without a CI. \
         Coverage, mean samples, looks and width are over the replications that stopped.\n",
        config.replications,
        config.first_look,
        rule.margin,
        rule.min_growth,
        rule.max_growth,
        config.confidence * 100.0,
        rule.tail_growth,
        if rule.confirm {
            ", confirmed by the next look (whose interval is the answer)"
        } else {
            ""
        },
        config.max_samples,
    );
    let _ = writeln!(
        s,
        "| process | p | target width | coverage | misses above / below | at the limit | N/A | mean samples at the stop | mean looks | mean width |"
    );
    let _ = writeln!(s, "|---|---|---|---|---|---|---|---|---|---|");
    for r in &report.stopping {
        let na = r.no_answer;
        let limit = &r.at_limit;
        let at_limit = if limit.converged + limit.wide == 0 {
            "-".to_string()
        } else {
            format!(
                "{} / {} ({:.3})",
                limit.converged, limit.wide, limit.coverage
            )
        };
        if r.stopped == 0 {
            let _ = writeln!(
                s,
                "| {} | p{} | {:.0}% | - | 0 / 0 | {at_limit} | {na} | - | - | - |",
                r.process,
                percent(r.p),
                r.width * 100.0,
            );
            continue;
        }
        let _ = writeln!(
            s,
            "| {} | p{} | {:.0}% | {:.3}{} | {} / {} | {at_limit} | {} | {:.0} | {:.1} | {:.1}% |",
            r.process,
            percent(r.p),
            r.width * 100.0,
            r.coverage,
            mark(r.coverage, 0.93),
            r.misses_above,
            r.misses_below,
            na,
            r.mean_samples,
            r.mean_looks,
            r.mean_width * 100.0,
        );
    }
}

/// Replaces the section between `begin` and `end` in `path` (or appends it; creates the
/// file when missing).
pub(super) fn splice(path: &Path, section: &str, (begin, end): (&str, &str)) -> Result<(), Error> {
    let old = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(source) => {
            return Err(Error::Io {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    let new = match (old.find(begin), old.find(end)) {
        (Some(b), Some(e)) if b < e => {
            format!(
                "{}{}{}",
                &old[..b],
                section.trim_end(),
                &old[e + end.len()..]
            )
        }
        _ if old.is_empty() => section.to_string(),
        _ => format!("{}\n{section}", old.trim_end()),
    };
    write(path, &new)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_section_replaces_itself_and_keeps_the_rest() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let path = dir.path().join("RESULTS.md");
        std::fs::write(&path, "# Results\n\ntext\n").unwrap_or_else(|e| panic!("{e}"));
        let markers = (BEGIN, END);
        splice(&path, &format!("{BEGIN}\none\n{END}\n"), markers).unwrap_or_else(|e| panic!("{e}"));
        splice(&path, &format!("{BEGIN}\ntwo\n{END}\n"), markers).unwrap_or_else(|e| panic!("{e}"));
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{e}"));
        assert!(text.starts_with("# Results\n\ntext\n"), "{text}");
        assert!(text.contains("two") && !text.contains("one"), "{text}");
        assert_eq!(text.matches(BEGIN).count(), 1, "{text}");
    }
}
