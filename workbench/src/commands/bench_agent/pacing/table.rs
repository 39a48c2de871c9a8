//! The lines `--pacing` prints on stderr as rows complete: a table for people; the JSON on
//! stdout has every figure.

use super::row::{Median, Row, p50_p99};

/// A figure to `decimals` places, or `-` where there is none.
fn figure(value: Option<f64>, decimals: usize) -> String {
    value.map_or("-".into(), |v| format!("{v:.decimals$}"))
}

/// The table's header, above the first row.
pub(super) fn header() -> String {
    format!(
        "{:>2} {:>8} {:>7} {:>9} {:>8} {:>8} {:>10} {:>17} {:>8} {:>8} {:>7}  binary",
        "r",
        "mode",
        "rate",
        "cpu µs/rq",
        "sys/rq",
        "ctx/rq",
        "wakeups/s",
        "≤5/10/50 µs %",
        "p50 µs",
        "p99 µs",
        "window"
    )
}

/// A row as one line of the table on stderr.
pub(super) fn line(row: &Row) -> String {
    let shares = row.precision.as_ref().map_or("-".into(), |p| {
        let s: Vec<String> = p
            .within
            .iter()
            .map(|w| format!("{:.1}", w.share * 100.0))
            .collect();
        s.join("/")
    });
    let (p50, p99) = p50_p99(row);
    let r = &row.per_request;
    format!(
        "{:>2} {:>8} {:>7.0} {:>9} {:>8} {:>8} {:>10} {:>17} {:>8} {:>8} {:>7}  {}{}",
        row.repeat,
        row.mode,
        row.rate,
        figure(r.cpu_us, 2),
        figure(r.syscalls, 2),
        figure(r.context_switches, 2),
        figure(r.wakeups_per_s, 0),
        shares,
        figure(p50, 1),
        figure(p99, 1),
        row.usage
            .as_ref()
            .map_or("-".into(), |u| format!("{:.1}s", u.window_s)),
        row.binary,
        row.error
            .as_ref()
            .map_or(String::new(), |e| format!("  error: {e}")),
    )
}

/// The medians over repeats of one binary, mode and rate.
pub(super) fn median_line(m: &Median) -> String {
    format!(
        "median ({} of {} repeats answered): {} {} {:.0}/s: cpu {} µs/request, p50 {} µs, p99 {} µs",
        m.rows,
        m.repeats,
        m.binary,
        m.mode,
        m.rate,
        figure(m.cpu_us_per_request, 2),
        figure(m.p50_us, 1),
        figure(m.p99_us, 1)
    )
}
