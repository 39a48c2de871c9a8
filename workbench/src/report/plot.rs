//! What the plots share: the canvas, the palette, the font, number formats and captions.
//!
//! Each plot is a [`Plot`]: a [`Chart`] that draws itself on any plotters backend, and the
//! caption under it. The same drawing makes the SVG (text, drawn into a string) and the
//! PNG (an RGB buffer, encoded here), so the two formats never disagree; neither is
//! written by plotters itself, so that tests can look at them and a failed write is our
//! error, naming the file, rather than plotters'.
//!
//! Text is measured and rasterised with ab_glyph from DejaVu Sans, which vernier carries
//! (`workbench/assets/`): a PNG needs no system font, and captions wrap at the width the
//! text really takes.

use std::sync::OnceLock;

use plotters::coord::Shift;
use plotters::prelude::{
    BLACK, BitMapBackend, ChartContext, Color, DrawingArea, DrawingAreaErrorKind, DrawingBackend,
    FontStyle, IntoDrawingArea, IntoFont, RGBColor, SVGBackend, SeriesLabelPosition, WHITE,
};
use vernier_stats::Percentile;

/// The size of every plot, px.
pub(super) const SIZE: (u32, u32) = (900, 600);

/// The caption's font size.
pub(crate) const CAPTION_SIZE: u32 = 14;

/// A caption line's height, px.
const CAPTION_LINE: i32 = 18;

/// Where caption lines start, px from the left edge (and at least as much is left free
/// at the right).
const CAPTION_MARGIN: i32 = 12;

/// The one typeface of every plot: DejaVu Sans 2.37, unmodified (its licence is beside it).
const FONT: &[u8] = include_bytes!("../../assets/DejaVuSans.ttf");

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
pub(crate) fn color(i: usize) -> RGBColor {
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

/// Makes [`FONT`] the font of every family the plots (and plotters' defaults) name. Once
/// per process; plotters keeps fonts in a global table.
fn fonts() -> Result<(), DrawError> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let ok = *REGISTERED.get_or_init(|| {
        ["sans-serif", "serif", "monospace"]
            .iter()
            .all(|family| plotters::style::register_font(family, FontStyle::Normal, FONT).is_ok())
    });
    if ok {
        Ok(())
    } else {
        Err(DrawError(
            "the plots' font (DejaVu Sans, built in) could not be read".into(),
        ))
    }
}

/// Draws a chart's legend the one way every plot draws it.
pub(crate) fn legend<'a, DB: DrawingBackend + 'a, CT: plotters::coord::CoordTranslate>(
    chart: &mut ChartContext<'a, DB, CT>,
    position: SeriesLabelPosition,
) -> Result<(), DrawError>
where
    DB::ErrorType: 'static,
{
    chart
        .configure_series_labels()
        .position(position)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()?;
    Ok(())
}

/// The area a chart draws on, whichever the backend.
pub(crate) type Area<DB> = DrawingArea<DB, Shift>;

/// What a plot draws above its caption. Generic over the backend, so that one drawing
/// makes both the SVG and the PNG.
pub(crate) trait Chart {
    /// Draws the chart on `area`.
    fn draw<DB: DrawingBackend>(&self, area: &Area<DB>) -> Result<(), DrawError>
    where
        DB::ErrorType: 'static;
}

/// A plot: a chart of [`SIZE`] on white with caption lines under it.
#[derive(Debug)]
pub(crate) struct Plot<C> {
    caption: Vec<String>,
    chart: C,
}

impl<C: Chart> Plot<C> {
    /// A chart with its caption (each string a paragraph, wrapped to the plot's width).
    pub(crate) fn new(caption: Vec<String>, chart: C) -> Plot<C> {
        Plot { caption, chart }
    }

    /// The plot as SVG text.
    pub(crate) fn svg(&self) -> Result<String, DrawError> {
        fonts()?;
        let mut svg = String::new();
        self.draw_on(SVGBackend::with_string(&mut svg, SIZE).into_drawing_area())?;
        Ok(svg)
    }

    /// The plot as a PNG file's bytes (8-bit RGB, [`SIZE`]).
    pub(crate) fn png(&self) -> Result<Vec<u8>, DrawError> {
        fonts()?;
        let (width, height) = SIZE;
        let mut rgb = vec![0u8; width as usize * height as usize * 3];
        self.draw_on(BitMapBackend::with_buffer(&mut rgb, SIZE).into_drawing_area())?;
        let mut png = Vec::new();
        let mut encoder = png::Encoder::new(&mut png, width, height);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        encoder
            .write_header()
            .and_then(|mut writer| writer.write_image_data(&rgb))
            .map_err(|e| DrawError(format!("cannot encode the PNG: {e}")))?;
        Ok(png)
    }

    fn draw_on<DB: DrawingBackend>(&self, root: Area<DB>) -> Result<(), DrawError>
    where
        DB::ErrorType: 'static,
    {
        root.fill(&WHITE)?;
        let style = ("sans-serif", CAPTION_SIZE).into_font().color(&BLACK);
        let room = SIZE.0 as i32 - 2 * CAPTION_MARGIN;
        let fits = |line: &str| {
            root.estimate_text_size(line, &style)
                .is_ok_and(|(w, _)| w as i32 <= room)
        };
        let lines: Vec<String> = self.caption.iter().flat_map(|c| wrap(c, fits)).collect();
        let caption_px = if lines.is_empty() {
            0
        } else {
            CAPTION_LINE * lines.len() as i32 + 8
        };
        let (plot, below) = root.split_vertically(SIZE.1 as i32 - caption_px);
        self.chart.draw(&plot)?;
        for (i, line) in lines.iter().enumerate() {
            below.draw_text(line, &style, (CAPTION_MARGIN, i as i32 * CAPTION_LINE))?;
        }
        root.present()?;
        Ok(())
    }
}

/// Splits `text` at spaces into the longest lines that `fits` accepts (a word too long
/// for a line of its own gets one anyway).
pub(super) fn wrap(text: &str, fits: impl Fn(&str) -> bool) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && !fits(&format!("{line} {word}")) {
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
    use plotters::prelude::Rectangle;

    use super::*;

    #[test]
    fn captions_wrap_at_spaces() {
        let six = |line: &str| line.chars().count() <= 6;
        assert_eq!(wrap("a bb ccc dddd", six), vec!["a bb", "ccc", "dddd"]);
        assert_eq!(wrap("  ", six), Vec::<String>::new());
        let four = |line: &str| line.chars().count() <= 4;
        assert_eq!(wrap("unbreakable word", four), vec!["unbreakable", "word"]);
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

    /// A chart that draws a black bar across its area's top left.
    struct Bar;

    impl Chart for Bar {
        fn draw<DB: DrawingBackend>(&self, area: &Area<DB>) -> Result<(), DrawError>
        where
            DB::ErrorType: 'static,
        {
            area.draw(&Rectangle::new([(0, 0), (100, 10)], BLACK.filled()))?;
            Ok(())
        }
    }

    #[test]
    fn a_plot_is_an_svg_with_its_caption() {
        let figure = Plot::new(vec!["first line".into(), "second & last".into()], Bar);
        let svg = figure.svg().unwrap();
        assert!(svg.starts_with("<svg"), "{svg}");
        assert!(svg.contains("first line") && svg.contains("second &amp; last"));
    }

    #[test]
    fn a_long_caption_wraps_within_the_plot() {
        let words = "latency ".repeat(60);
        let figure = Plot::new(vec![words.clone()], Bar);
        let svg = figure.svg().unwrap();
        let lines = svg.matches("<text").count();
        // 60 words of about 50 px each do not fit on one 876 px line, nor need ten.
        assert!((3..10).contains(&lines), "{lines} caption lines: {svg}");
    }

    #[test]
    fn a_plot_is_a_png_of_its_size_with_ink_where_drawn() {
        let figure = Plot::new(vec!["caption text".into()], Bar);
        let png = figure.png().unwrap();
        let decoder = png::Decoder::new(std::io::Cursor::new(png));
        let mut reader = decoder.read_info().unwrap();
        let mut rgb = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut rgb).unwrap();
        assert_eq!((info.width, info.height), SIZE);
        assert_eq!(info.color_type, png::ColorType::Rgb);
        let pixel = |x: u32, y: u32| {
            let i = (y * SIZE.0 + x) as usize * 3;
            [rgb[i], rgb[i + 1], rgb[i + 2]]
        };
        assert_eq!(pixel(50, 5), [0, 0, 0], "the bar");
        assert_eq!(pixel(500, 300), [255, 255, 255], "the background");
        // The caption is rasterised: its last line's band has dark pixels.
        let band = (SIZE.1 - 26)..SIZE.1;
        let ink = band
            .flat_map(|y| (0..300).map(move |x| (x, y)))
            .filter(|&(x, y)| pixel(x, y)[0] < 128)
            .count();
        assert!(ink > 50, "{ink} dark pixels where the caption is");
    }
}
