//! The dashboard's styles, with colour or without (`NO_COLOR`): without it, failures are
//! bold and the current step reversed, and every failure carries a ✗ in the text anyway.

use ratatui::style::{Color, Modifier, Style};

/// Whether to draw with colour.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Palette {
    /// Colours, as a colour terminal shows them.
    Color,
    /// No colour (`NO_COLOR`): failures bold, the current step reversed.
    #[default]
    Plain,
}

impl Palette {
    /// Colour unless `NO_COLOR` is set (and not empty).
    pub fn from_env() -> Palette {
        if std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()) {
            Palette::Color
        } else {
            Palette::Plain
        }
    }
}

/// Styles for one drawing.
#[derive(Debug, Clone, Copy)]
pub struct Theme {
    color: bool,
}

impl Theme {
    /// Styles in `palette`.
    pub fn new(palette: Palette) -> Theme {
        Theme {
            color: palette == Palette::Color,
        }
    }

    /// A figure that passed.
    pub fn good(self) -> Style {
        if self.color {
            Style::default().fg(Color::Green)
        } else {
            Style::default()
        }
    }

    /// A figure that failed.
    pub fn bad(self) -> Style {
        let s = Style::default().add_modifier(Modifier::BOLD);
        if self.color { s.fg(Color::Red) } else { s }
    }

    /// The step the methodology is in.
    pub fn current(self) -> Style {
        let s = Style::default().add_modifier(Modifier::BOLD);
        if self.color {
            s.fg(Color::Black).bg(Color::Cyan)
        } else {
            s.add_modifier(Modifier::REVERSED)
        }
    }

    /// What matters less: future steps, guides in charts.
    pub fn dim(self) -> Style {
        if self.color {
            Style::default().fg(Color::DarkGray)
        } else {
            Style::default()
        }
    }

    /// Titles and table heads.
    pub fn title(self) -> Style {
        Style::default().add_modifier(Modifier::BOLD)
    }

    /// The main data series.
    pub fn series(self) -> Style {
        if self.color {
            Style::default().fg(Color::Cyan)
        } else {
            Style::default()
        }
    }

    /// The second series beside [`series`](Theme::series): B's in a comparison, where
    /// A's is the main one.
    pub fn other_series(self) -> Style {
        if self.color {
            Style::default().fg(Color::Magenta)
        } else {
            Style::default()
        }
    }

    /// What is highlighted: the current load in a chart, prompts.
    pub fn accent(self) -> Style {
        let s = Style::default().add_modifier(Modifier::BOLD);
        if self.color { s.fg(Color::Yellow) } else { s }
    }

    /// An answer that is valid but wider than asked (a `wide` verdict): neither a pass
    /// nor a failure.
    pub fn wide(self) -> Style {
        if self.color {
            Style::default().fg(Color::Yellow)
        } else {
            Style::default()
        }
    }

    /// The style of a verdict: converged and accepted good, wide [`Theme::wide`], N/A bad.
    pub fn verdict(self, verdict: crate::coordinator::Verdict) -> Style {
        use crate::coordinator::Verdict;
        match verdict {
            Verdict::Converged | Verdict::Accepted => self.good(),
            Verdict::Wide => self.wide(),
            Verdict::NotAvailable => self.bad(),
        }
    }

    /// `good` or `bad`.
    pub fn pass(self, pass: bool) -> Style {
        if pass { self.good() } else { self.bad() }
    }
}
