//! What the plots share: the canvas, the palette, number formats and captions.
//!
//! Plots are drawn into a string (plotters' SVG backend) rather than straight into a
//! file, so that tests can look at them and so that a failed write is our error, naming
//! the file, rather than plotters'. Text is laid out with plotters' naive font metrics
//! (no font files are read), so long captions are wrapped by character count.

use plotters::coord::Shift;
use plotters::prelude::*;
use vernier_stats::Percentile;

/// The size of every plot, px.
pub(super) const SIZE: (u32, u32) = (900, 600);

/// Characters per caption line at [`CAPTION_SIZE`] across [`SIZE`]'s width (the naive
/// metrics give a character 0.7 em).
const CAPTION_CHARS: usize = 120;

/// The caption's font size.
pub(super) const CAPTION_SIZE: u32 = 14;

/// A caption line's height, px.
const CAPTION_LINE: i32 = 18;

/// Colour-blind-safe series colours (Okabe and Ito), in the order series are drawn.
const PALETTE: [RGBColor; 8] = [
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(230, 159, 0),
    RGBColor(86, 180, 233),
    RGBColor(0, 0, 0),
    RGBColor(240, 228, 66),
];

/// The colour of the `i`-th series.
pub(super) fn color(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// A drawing plotters refused, in its words.
#[derive(Debug)]
pub(crate) struct DrawError(String);

impl std::fmt::Display for DrawError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl<E: std::error::Error + Send + Sync> From<DrawingAreaErrorKind<E>> for DrawError {
    fn from(e: DrawingAreaErrorKind<E>) -> Self {
        DrawError(e.to_string())
    }
}

/// The drawing area plots draw on.
/// Draws a chart's legend the one way every plot draws it.
pub(super) fn legend<'a, CT: plotters::coord::CoordTranslate>(
    chart: &mut ChartContext<'a, SVGBackend<'a>, CT>,
    position: SeriesLabelPosition,
) -> Result<(), DrawError> {
    chart
        .configure_series_labels()
        .position(position)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()?;
    Ok(())
}

pub(super) type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

/// Draws a plot of [`SIZE`] on white with `caption` lines under it, and returns the SVG.
/// `draw` gets the area above the caption.
pub(super) fn render(
    caption: &[String],
    draw: impl FnOnce(&Area<'_>) -> Result<(), DrawError>,
) -> Result<String, DrawError> {
    let lines: Vec<String> = caption
        .iter()
        .flat_map(|c| wrap(c, CAPTION_CHARS))
        .collect();
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE)?;
        let caption_px = if lines.is_empty() {
            0
        } else {
            CAPTION_LINE * lines.len() as i32 + 8
        };
        let (plot, below) = root.split_vertically(SIZE.1 as i32 - caption_px);
        draw(&plot)?;
        let style = ("sans-serif", CAPTION_SIZE).into_font().color(&BLACK);
        for (i, line) in lines.iter().enumerate() {
            below.draw_text(line, &style, (12, i as i32 * CAPTION_LINE))?;
        }
        root.present()?;
    }
    Ok(svg)
}

/// Splits `text` at spaces into lines of at most `width` characters (a longer word gets a
/// line of its own).
pub(super) fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

/// A number as short as it can be without losing what matters at its size: `12.5`,
/// `0.0196`, `99.9`, `10000`.
pub(crate) fn fmt_num(x: f64) -> String {
    if !x.is_finite() {
        return format!("{x}");
    }
    let a = x.abs();
    if a == 0.0 {
        // Not `-0`, which axes around zero would otherwise show.
        return "0".to_string();
    }
    let text = if a >= 1000.0 {
        format!("{x:.0}")
    } else if a >= 100.0 {
        format!("{x:.1}")
    } else if a >= 10.0 {
        format!("{x:.2}")
    } else if a >= 0.1 {
        format!("{x:.3}")
    } else if a >= 0.01 {
        format!("{x:.4}")
    } else {
        return format!("{x:.2e}");
    };
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

/// A percentile given in percent by name, `p99.9`, as [`Percentile`] writes it (a value
/// that went through arithmetic, `99.90000000000001`, reads as it was written); a number
/// that is no percentile keeps its digits.
pub(crate) fn fmt_percentile(p: f64) -> String {
    Percentile::from_percent(p).map_or_else(|_| format!("p{p}"), |p| p.to_string())
}

/// A rate as legends and titles show it.
pub(crate) fn fmt_rate(rate: f64) -> String {
    format!("{} req/s", fmt_num(rate))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn captions_wrap_at_spaces() {
        assert_eq!(wrap("a bb ccc dddd", 6), vec!["a bb", "ccc", "dddd"]);
        assert_eq!(wrap("  ", 6), Vec::<String>::new());
        assert_eq!(wrap("unbreakable word", 4), vec!["unbreakable", "word"]);
    }

    #[test]
    fn numbers_keep_what_matters() {
        assert_eq!(fmt_num(10_000.0), "10000");
        assert_eq!(fmt_num(112.44), "112.4");
        assert_eq!(fmt_num(12.5), "12.5");
        assert_eq!(fmt_num(99.9), "99.9");
        assert_eq!(fmt_num(50.0), "50");
        assert_eq!(fmt_num(0.0196), "0.0196");
        assert_eq!(fmt_num(5.25), "5.25");
        assert_eq!(fmt_num(0.0), "0");
        assert_eq!(fmt_num(-0.0), "0");
        assert_eq!(fmt_num(-0.25), "-0.25");
        assert_eq!(fmt_num(0.001), "1.00e-3");
        assert_eq!(fmt_rate(20_000.0), "20000 req/s");
        // 0.999 · 100 is not 99.9 in binary floating point.
        assert_eq!(fmt_percentile(0.999 * 100.0), "p99.9");
        assert_eq!(fmt_percentile(99.999), "p99.999");
        assert_eq!(fmt_percentile(50.0), "p50");
    }

    #[test]
    fn a_plot_is_an_svg_with_its_caption() {
        let svg = render(&["first line".into(), "second & last".into()], |area| {
            area.fill(&WHITE)?;
            Ok(())
        })
        .unwrap();
        assert!(svg.starts_with("<svg"), "{svg}");
        assert!(svg.contains("first line") && svg.contains("second &amp; last"));
    }
}
