//! How the panels write figures in narrow cells.

/// A figure with `digits` decimals, or `-`.
pub(super) fn opt(v: Option<f64>, digits: usize) -> String {
    v.map_or("-".into(), |x| format!("{x:.digits$}"))
}

/// A rate for a narrow cell: 950, 20.5k, 150k.
pub(super) fn rate(r: f64) -> String {
    if r >= 100_000.0 {
        format!("{:.0}k", r / 1e3)
    } else if r >= 10_000.0 {
        format!("{:.1}k", r / 1e3)
    } else {
        format!("{r:.0}")
    }
}
