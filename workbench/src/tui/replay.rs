//! Replaying a record: the events of run.json fed to the same [`App::update`] at their
//! recorded times, at any speed, with seeking (backwards by rebuilding the state from the
//! start: `update` is deterministic) and jumps to an event (`--until verdict`).

use std::path::{Path, PathBuf};

use super::app::{App, AppEvent, Finished, ReplayStatus, RunInfo};
use super::theme::Palette;
use crate::coordinator::{CheckKind, EventKind, Phase};
use crate::error::Error;
use crate::record::{self, RunRecord};
use crate::record::{ShownCheck, ShownPoint};
use crate::scenario::Scenario;
use crate::session::Update;

/// Where `--until` jumps to.
#[derive(Debug, Clone, PartialEq)]
pub enum Until {
    /// This many seconds into the record.
    Time(f64),
    /// The `n`-th (1-based) event of this kind.
    Event {
        /// The kind: `verdict`, `command`, a phase or a check name.
        what: String,
        /// Which occurrence.
        n: usize,
    },
    /// The end of the record.
    End,
}

/// Whether `--until` knows `what`: what [`event_name`] gives.
fn known_event(what: &str) -> bool {
    ["verdict", "command"].contains(&what)
        || Phase::ALL.iter().any(|p| p.name() == what)
        || CheckKind::ALL.iter().any(|c| c.name() == what)
}

/// The event names `--until` knows, for its error message.
fn event_names() -> String {
    let checks: Vec<&str> = CheckKind::ALL.iter().map(|c| c.name()).collect();
    let phases: Vec<&str> = Phase::ALL.iter().map(|p| p.name()).collect();
    format!(
        "verdict, command, end, a phase ({}) or a check ({}), optionally :N for the N-th; or a time such as 12.5s",
        phases.join(", "),
        checks.join(", ")
    )
}

impl std::str::FromStr for Until {
    type Err = String;

    fn from_str(text: &str) -> Result<Until, String> {
        let text = text.trim();
        if text == "end" {
            return Ok(Until::End);
        }
        if text.starts_with(|c: char| c.is_ascii_digit()) {
            let d = vernier_protocols::duration_from_spec(text).map_err(|e| e.to_string())?;
            return Ok(Until::Time(d.as_secs_f64()));
        }
        let (what, n) = match text.rsplit_once(':') {
            Some((what, n)) => (
                what,
                n.parse::<usize>()
                    .ok()
                    .filter(|n| *n > 0)
                    .ok_or_else(|| format!("{text:?}: after ':' comes a count from 1"))?,
            ),
            None => (text, 1),
        };
        if !known_event(what) {
            return Err(format!("{text:?}: expected {}", event_names()));
        }
        Ok(Until::Event {
            what: what.to_string(),
            n,
        })
    }
}

fn event_name(kind: &EventKind<ShownCheck, ShownPoint>) -> Option<&'static str> {
    Some(match kind {
        EventKind::Verdict(_) => "verdict",
        EventKind::Run(_) => "run",
        EventKind::Command { .. } => "command",
        EventKind::Phase { phase, .. } => phase.name(),
        EventKind::Check(c) => c.check.name(),
        EventKind::Progress(_) | EventKind::Window { .. } => return None,
    })
}

/// A record being played.
#[derive(Debug)]
pub struct Player {
    record: RunRecord,
    dir: PathBuf,
    info: RunInfo,
    palette: Palette,
    /// Events applied so far.
    next: usize,
    /// The record's time shown.
    at: f64,
    /// Record seconds per wall second.
    speed: f64,
    playing: bool,
    finished: bool,
}

impl Player {
    /// Reads `dir`'s run.json.
    pub fn open(dir: &Path, palette: Palette) -> Result<Player, Error> {
        let record = record::read_record(dir)?;
        Ok(Player::new(record, dir.to_path_buf(), palette))
    }

    /// A player for `record`, found in `dir`.
    pub fn new(record: RunRecord, dir: PathBuf, palette: Palette) -> Player {
        let mut info = Scenario::from_yaml(&record.scenario, None, &[])
            .map(|s| RunInfo::of(&s))
            .unwrap_or_else(|_| RunInfo {
                name: record.name.clone(),
                ..RunInfo::default()
            });
        // The tail the points answered for, as the record has them (a record written
        // before the tail without stalls was an answer knew only every request's).
        if let Some(p) = record.points.first() {
            info.tail = p.tail;
        }
        Player {
            record,
            dir,
            info,
            palette,
            next: 0,
            at: 0.0,
            speed: 1.0,
            playing: true,
            finished: false,
        }
    }

    /// A fresh app at the record's start.
    pub fn app(&self) -> App {
        let mut app = App::replaying(self.info.clone(), self.palette, self.dir.clone());
        app.update(AppEvent::Session(Update::Started {
            record: self.dir.clone(),
            timestamps: self.record.timestamps.parse().ok(),
            confined: Vec::new(),
            keep: Default::default(),
            metrics: None,
        }));
        app.update(AppEvent::Replay(self.status()));
        app
    }

    /// The time of the record's last event.
    pub fn end(&self) -> f64 {
        self.record.events.last().map_or(0.0, |e| e.at)
    }

    /// Where the player stands.
    pub fn status(&self) -> ReplayStatus {
        ReplayStatus {
            at: self.at,
            end: self.end(),
            speed: self.speed,
            playing: self.playing && !self.finished,
        }
    }

    /// Whether it is playing.
    pub fn playing(&self) -> bool {
        self.playing && !self.finished
    }

    /// Play or pause.
    pub fn toggle(&mut self) {
        if self.finished {
            return;
        }
        self.playing = !self.playing;
    }

    /// Multiplies the speed (kept within 1/16× to 256×).
    pub fn speed_by(&mut self, factor: f64) {
        self.speed = (self.speed * factor).clamp(1.0 / 16.0, 256.0);
    }

    /// Moves the play head by `wall` seconds of wall time, if playing.
    pub fn play(&mut self, app: &mut App, wall: f64) {
        if self.playing() {
            let to = self.at + wall * self.speed;
            self.seek(app, to);
        } else {
            app.update(AppEvent::Replay(self.status()));
        }
    }

    /// Shows the record at `to` seconds (backwards: rebuilt from the start).
    pub fn seek(&mut self, app: &mut App, to: f64) {
        let to = to.clamp(0.0, self.end());
        if to < self.at || (self.finished && to < self.end()) {
            let keep = (
                app.ui.chart,
                app.history.report.take(),
                std::mem::take(&mut app.ui.mode),
            );
            *app = self.app();
            (app.ui.chart, app.history.report, app.ui.mode) = keep;
            self.next = 0;
            self.finished = false;
        }
        self.at = to;
        while let Some(e) = self.record.events.get(self.next) {
            if e.at > to {
                break;
            }
            app.update(AppEvent::Recorded(e.clone()));
            self.next += 1;
        }
        if self.next == self.record.events.len() && to >= self.end() && !self.finished {
            self.finished = true;
            app.update(AppEvent::Finished(self.finish()));
        }
        app.update(AppEvent::Replay(self.status()));
    }

    fn finish(&self) -> Finished {
        let killed = self.record.status != "finished";
        Finished {
            verdict: self.record.verdict,
            slo_rate: self.record.slo_rate,
            problem: killed.then(|| {
                format!(
                    "the record ends at {:.1}s without a verdict: the run was killed",
                    self.end()
                )
            }),
        }
    }

    /// The time `until` names, or why it is not in the record.
    pub fn time_of(&self, until: &Until) -> Result<f64, String> {
        match until {
            Until::End => Ok(self.end()),
            Until::Time(t) if *t <= self.end() => Ok(*t),
            Until::Time(t) => Err(format!(
                "the record ends at {:.1}s, before {t:.1}s",
                self.end()
            )),
            Until::Event { what, n } => self
                .record
                .events
                .iter()
                .filter(|e| event_name(&e.kind) == Some(what.as_str()))
                .nth(n - 1)
                .map(|e| e.at)
                .ok_or_else(|| {
                    let count = self
                        .record
                        .events
                        .iter()
                        .filter(|e| event_name(&e.kind) == Some(what.as_str()))
                        .count();
                    format!("the record has {count} {what} event(s), not {n}")
                }),
        }
    }

    /// The record's time shown, seconds.
    pub fn at(&self) -> f64 {
        self.at
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture() -> Player {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/runs/demo-sweep");
        Player::open(&dir, Palette::Plain).expect("the fixture record")
    }

    #[test]
    fn until_names_parse_and_bad_ones_say_what_is_known() {
        assert_eq!(
            "verdict".parse(),
            Ok(Until::Event {
                what: "verdict".into(),
                n: 1
            })
        );
        assert_eq!(
            "independence:2".parse(),
            Ok(Until::Event {
                what: "independence".into(),
                n: 2
            })
        );
        assert_eq!("12.5s".parse(), Ok(Until::Time(12.5)));
        assert_eq!("end".parse(), Ok(Until::End));
        let e = "lunch".parse::<Until>().unwrap_err();
        assert!(e.contains("expected verdict, command"), "{e}");
        let e = "verdict:0".parse::<Until>().unwrap_err();
        assert!(e.contains("count from 1"), "{e}");
    }

    #[test]
    fn seeking_back_rebuilds_the_same_state_as_playing_forward() {
        let mut player = fixture();
        let mut app = player.app();
        let t = player.time_of(&"verdict".parse().unwrap()).unwrap();
        player.seek(&mut app, t);
        assert_eq!(app.history.results.len(), 1);
        let log = app.history.log.clone();
        // Forward to the end, then back: the same point, the same log.
        player.seek(&mut app, player.end());
        assert!(app.history.finished.is_some());
        assert_eq!(app.history.results.len(), 3);
        player.seek(&mut app, t);
        assert!(app.history.finished.is_none());
        assert_eq!(app.history.results.len(), 1);
        assert_eq!(app.history.log, log);
        // Playing moves by wall time × speed; pausing stops it.
        player.speed_by(4.0);
        let before = player.at();
        player.play(&mut app, 0.5);
        assert!((player.at() - (before + 2.0)).abs() < 1e-9);
        player.toggle();
        player.play(&mut app, 0.5);
        assert!((player.at() - (before + 2.0)).abs() < 1e-9);
        assert_eq!(app.replay.map(|r| r.playing), Some(false));
    }

    #[test]
    fn an_event_the_record_lacks_is_an_error_naming_the_count() {
        let player = fixture();
        let e = player.time_of(&"verdict:9".parse().unwrap()).unwrap_err();
        assert_eq!(e, "the record has 3 verdict event(s), not 9");
        let e = player.time_of(&Until::Time(1e6)).unwrap_err();
        assert!(e.starts_with("the record ends at 27.9s"), "{e}");
    }
}
