//! A frame the dashboard drew into a test backend, as an SVG picture of the terminal: what
//! the README shows (`vernier replay RUN --screen 100x30 --svg`), drawn by the same `render`
//! a terminal gets, so the picture cannot drift from the program.
//!
//! Each row becomes runs of cells that share a style: a background rectangle where the
//! cell has one, and one `<text>` per run, its characters placed on the cell grid
//! (`textLength`), so that box-drawing and Braille characters line up whatever font the
//! viewer picks.

use std::fmt::Write as _;

use ratatui::buffer::Buffer;
use ratatui::style::{Color, Modifier};

/// A cell's width and height in the picture, px: a 14 px monospace font's advance and line.
const CELL_W: f64 = 8.4;
const CELL_H: f64 = 17.0;
/// The terminal's own colours: a dark background and light text, as most terminals have.
const BACKGROUND: &str = "#1d1f21";
const FOREGROUND: &str = "#d0d0d0";

/// The 16 ANSI colours as xterm draws them, for `Color::Black` … `Color::White`.
fn ansi(color: Color) -> Option<&'static str> {
    Some(match color {
        Color::Black => "#000000",
        Color::Red => "#cd3131",
        Color::Green => "#0dbc79",
        Color::Yellow => "#e5e510",
        Color::Blue => "#2472c8",
        Color::Magenta => "#bc3fbc",
        Color::Cyan => "#11a8cd",
        Color::Gray => "#cccccc",
        Color::DarkGray => "#767676",
        Color::LightRed => "#f14c4c",
        Color::LightGreen => "#23d18b",
        Color::LightYellow => "#f5f543",
        Color::LightBlue => "#3b8eea",
        Color::LightMagenta => "#d670d6",
        Color::LightCyan => "#29b8db",
        Color::White => "#e5e5e5",
        _ => return None,
    })
}

/// An SVG colour for `color`, or `None` for the terminal's default.
fn paint(color: Color) -> Option<String> {
    match color {
        Color::Reset => None,
        Color::Rgb(r, g, b) => Some(format!("#{r:02x}{g:02x}{b:02x}")),
        Color::Indexed(i) if i < 16 => {
            const BY_INDEX: [Color; 16] = [
                Color::Black,
                Color::Red,
                Color::Green,
                Color::Yellow,
                Color::Blue,
                Color::Magenta,
                Color::Cyan,
                Color::Gray,
                Color::DarkGray,
                Color::LightRed,
                Color::LightGreen,
                Color::LightYellow,
                Color::LightBlue,
                Color::LightMagenta,
                Color::LightCyan,
                Color::White,
            ];
            ansi(BY_INDEX[usize::from(i)]).map(String::from)
        }
        // The 256-colour cube and grey ramp, as xterm defines them.
        Color::Indexed(i) if i < 232 => {
            let i = i - 16;
            let level = |v: u8| if v == 0 { 0 } else { 55 + 40 * v };
            Some(format!(
                "#{:02x}{:02x}{:02x}",
                level(i / 36),
                level(i / 6 % 6),
                level(i % 6)
            ))
        }
        Color::Indexed(i) => {
            let v = 8 + 10 * (i - 232);
            Some(format!("#{v:02x}{v:02x}{v:02x}"))
        }
        other => ansi(other).map(String::from),
    }
}

/// What a run of cells shares.
#[derive(Debug, Clone, PartialEq)]
struct Look {
    fg: Option<String>,
    bg: Option<String>,
    bold: bool,
    dim: bool,
}

impl Look {
    fn of(cell: &ratatui::buffer::Cell) -> Look {
        let (mut fg, mut bg) = (paint(cell.fg), paint(cell.bg));
        if cell.modifier.contains(Modifier::REVERSED) {
            (fg, bg) = (
                Some(bg.unwrap_or_else(|| BACKGROUND.into())),
                Some(fg.unwrap_or_else(|| FOREGROUND.into())),
            );
        }
        Look {
            fg,
            bg,
            bold: cell.modifier.contains(Modifier::BOLD),
            dim: cell.modifier.contains(Modifier::DIM),
        }
    }
}

/// Escapes text for an SVG element's content.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c => out.push(c),
        }
    }
    out
}

/// The buffer as a standalone SVG document, `title` as its accessible name.
pub fn buffer_svg(buffer: &Buffer, title: &str) -> String {
    let area = buffer.area;
    let (width, height) = (
        f64::from(area.width) * CELL_W,
        f64::from(area.height) * CELL_H,
    );
    let mut svg = String::new();
    // Writing to a String cannot fail.
    let _ = write!(
        svg,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width:.0}\" height=\"{height:.0}\" \
         viewBox=\"0 0 {width:.1} {height:.1}\" role=\"img\">\n<title>{}</title>\n\
         <rect width=\"100%\" height=\"100%\" fill=\"{BACKGROUND}\"/>\n\
         <g font-family=\"'DejaVu Sans Mono', 'Menlo', 'Consolas', monospace\" font-size=\"14\" \
         fill=\"{FOREGROUND}\" xml:space=\"preserve\">\n",
        escape(title)
    );
    for y in 0..area.height {
        // Runs of cells with one look: (first column, look, text, cells).
        let mut runs: Vec<(u16, Look, String, u16)> = Vec::new();
        for x in 0..area.width {
            let cell = &buffer[(area.x + x, area.y + y)];
            let look = Look::of(cell);
            // A wide character's second cell is empty and belongs to the first.
            let symbol = cell.symbol();
            match runs.last_mut() {
                Some((_, last, text, cells)) if *last == look => {
                    text.push_str(symbol);
                    *cells += 1;
                }
                _ => runs.push((x, look, symbol.to_string(), 1)),
            }
        }
        let top = f64::from(y) * CELL_H;
        for (x, look, text, cells) in &runs {
            let left = f64::from(*x) * CELL_W;
            let span = f64::from(*cells) * CELL_W;
            if let Some(bg) = &look.bg {
                let _ = writeln!(
                    svg,
                    "<rect x=\"{left:.1}\" y=\"{top:.1}\" width=\"{span:.1}\" height=\"{CELL_H}\" fill=\"{bg}\"/>"
                );
            }
            if text.trim().is_empty() {
                continue;
            }
            let mut attributes = String::new();
            if let Some(fg) = &look.fg {
                let _ = write!(attributes, " fill=\"{fg}\"");
            }
            if look.bold {
                attributes.push_str(" font-weight=\"bold\"");
            }
            if look.dim {
                attributes.push_str(" opacity=\"0.6\"");
            }
            let _ = writeln!(
                svg,
                "<text x=\"{left:.1}\" y=\"{:.1}\" textLength=\"{span:.1}\" lengthAdjust=\"spacingAndGlyphs\"{attributes}>{}</text>",
                top + CELL_H * 0.78,
                escape(text)
            );
        }
    }
    svg.push_str("</g>\n</svg>\n");
    svg
}

#[cfg(test)]
mod tests {
    use ratatui::buffer::Buffer;
    use ratatui::layout::Rect;
    use ratatui::style::{Color, Modifier, Style};

    use super::buffer_svg;

    #[test]
    fn cells_become_styled_runs_on_the_grid() {
        let mut buffer = Buffer::empty(Rect::new(0, 0, 12, 2));
        buffer.set_string(0, 0, "p99 ", Style::default());
        buffer.set_string(4, 0, "✓ <ok>", Style::default().fg(Color::Green));
        buffer.set_string(
            0,
            1,
            "N/A",
            Style::default()
                .fg(Color::Black)
                .bg(Color::Cyan)
                .add_modifier(Modifier::BOLD),
        );
        let svg = buffer_svg(&buffer, "a & b");
        assert!(
            svg.starts_with(
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"101\" height=\"34\""
            )
        );
        assert!(svg.contains("<title>a &amp; b</title>"));
        // The default-coloured run, then the green one with the markup escaped, each
        // spanning its cells (4 and 6 cells of 8.4 px); the blank run after them is not drawn.
        assert!(svg.contains("<text x=\"0.0\" y=\"13.3\" textLength=\"33.6\" lengthAdjust=\"spacingAndGlyphs\">p99 </text>"), "{svg}");
        assert!(svg.contains("<text x=\"33.6\" y=\"13.3\" textLength=\"50.4\" lengthAdjust=\"spacingAndGlyphs\" fill=\"#0dbc79\">✓ &lt;ok&gt;</text>"), "{svg}");
        assert_eq!(svg.matches("<text ").count(), 3, "{svg}");
        // A background behind the bold, black-on-cyan cells.
        assert!(
            svg.contains(
                "<rect x=\"0.0\" y=\"17.0\" width=\"25.2\" height=\"17\" fill=\"#11a8cd\"/>"
            ),
            "{svg}"
        );
        assert!(
            svg.contains("fill=\"#000000\" font-weight=\"bold\">N/A</text>"),
            "{svg}"
        );
        assert!(svg.ends_with("</g>\n</svg>\n"));
    }
}
