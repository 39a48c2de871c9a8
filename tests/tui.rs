//! The terminal UI end to end, in tmux at 80x24 (a private tmux server per test, on its
//! own socket, ended when the test ends): `vernier demo` steered with keys, quitting a run
//! that asks first, the terminal restored after an error, and a replay of a record.

// Test helpers: a failure is the test's failure, with its message.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use vernier_workbench::coordinator::ReasonKind;

/// A tmux server of this test's own with one 80x24 session running `command`.
struct Tmux {
    socket: String,
    _turn: std::sync::MutexGuard<'static, ()>,
}

impl Tmux {
    fn start(name: &str, command: &str) -> Tmux {
        let turn = support::machine();
        let socket = format!("vernier-test-{}-{name}", std::process::id());
        let tmux = Tmux {
            socket,
            _turn: turn,
        };
        let out = tmux.run(&[
            "new-session",
            "-d",
            "-x",
            "80",
            "-y",
            "24",
            "-s",
            "t",
            // Kept open after the command, so that what it printed last can be read.
            &format!("{command}; echo VERNIER-EXIT=$?; stty -a | tr ' ;' '\\n\\n' | grep -x -- '-*icanon'; sleep 120"),
        ]);
        assert!(
            out.status.success(),
            "tmux new-session: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        tmux
    }

    fn run(&self, args: &[&str]) -> Output {
        Command::new("tmux")
            .args(["-L", &self.socket, "-f", "/dev/null"])
            .args(args)
            .env_remove("NO_COLOR")
            .output()
            .expect("tmux is needed for this test: apt-get install tmux (tests/run.sh does)")
    }

    /// The screen, as text.
    fn screen(&self) -> String {
        let out = self.run(&["capture-pane", "-p", "-t", "t"]);
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "t"];
        args.extend_from_slice(keys);
        assert!(self.run(&args).status.success());
    }

    /// Waits until `done` holds for the screen; the screen then. Fails with the last screen.
    fn wait(&self, what: &str, timeout: Duration, mut done: impl FnMut(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if done(&screen) {
                return screen;
            }
            assert!(
                start.elapsed() < timeout,
                "waited {timeout:?} for {what}; the screen:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(150));
        }
    }

    /// Whether the pane is on the alternate screen (the UI is up).
    fn alternate(&self) -> bool {
        let out = self.run(&["display-message", "-p", "-t", "t", "#{alternate_on}"]);
        String::from_utf8_lossy(&out.stdout).trim() == "1"
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        // Ends this test's tmux server, and with it what runs in its pane.
        let _ = self.run(&["kill-server"]);
    }
}

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_vernier")
}

/// The step the header marks as current (`▸measure` → `measure`).
fn current_step(screen: &str) -> Option<String> {
    let line = screen.lines().nth(1)?;
    let at = line.find('▸')?;
    Some(
        line[at + '▸'.len_utf8()..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '-')
            .collect(),
    )
}

/// The exit code the pane printed after vernier ended.
/// It is known once the terminal's mode is printed too (the line after it).
fn exit_code(screen: &str) -> Option<i32> {
    if !screen.lines().any(|l| l == "icanon" || l == "-icanon") {
        return None;
    }
    screen
        .lines()
        .find_map(|l| l.strip_prefix("VERNIER-EXIT="))
        .and_then(|c| c.trim().parse().ok())
}

fn commands(record: &serde_json::Value) -> Vec<String> {
    record["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "command")
        .map(|e| e["command"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn the_demo_is_steered_with_keys_to_its_verdict_and_leaves_its_record() {
    let tmp = tempfile::tempdir().unwrap();
    let dir: PathBuf = tmp.path().join("run");
    let tmux = Tmux::start(
        "demo",
        &format!("{} demo --record {}", bin(), dir.display()),
    );
    // The phases advance: warm-up first, then the departures (the inter-arrival test, which
    // `method: vernier` names so) or measurement.
    let mut seen = Vec::new();
    tmux.wait("the phases to advance", Duration::from_secs(40), |s| {
        if let Some(step) = current_step(s)
            && seen.last() != Some(&step)
        {
            seen.push(step);
        }
        seen.iter().any(|s| s == "warm-up")
            && seen
                .iter()
                .any(|s| ["depart", "departures", "measure"].contains(&s.as_str()))
    });
    let screen = tmux.screen();
    assert!(screen.contains("agents ("), "{screen}");
    assert!(screen.contains("decisions · record"), "{screen}");
    assert!(tmux.alternate(), "the UI is on the alternate screen");

    // `+` raises the load by 10%: echoed in the log, shown in the header.
    tmux.keys(&["+"]);
    let screen = tmux.wait("the load change", Duration::from_secs(10), |s| {
        s.contains("» set load")
    });
    let set: f64 = screen
        .split("» set load ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|r| r.parse().ok())
        .expect("the new load in the log");
    assert!(
        [2200.0, 3300.0, 4400.0].contains(&set),
        "10% above a point of the sweep: {set}\n{screen}"
    );
    tmux.wait("the header's new load", Duration::from_secs(5), |s| {
        s.lines()
            .next()
            .is_some_and(|l| l.contains(&format!(": {set:.0} req/s")))
    });

    // `a` ends the current point with what it has (accepted, or N/A when it has no
    // samples yet); the sweep goes on to its next point, so accept until the verdict
    // screen. Each point gets a few seconds to start measuring first.
    let mut presses = 0;
    let verdict = loop {
        let s = tmux.screen();
        if s.contains("verdict: ") {
            break s;
        }
        assert!(
            presses < 6,
            "no verdict screen after {presses} accepts:\n{s}"
        );
        let point = s
            .lines()
            .next()
            .and_then(|l| l.split(" · ").nth(1))
            .map(str::to_string);
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(6) {
            let s = tmux.screen();
            if s.contains("verdict: ")
                || (current_step(&s).as_deref() == Some("measure") && !s.contains("samples 0 of"))
            {
                break;
            }
            std::thread::sleep(Duration::from_millis(150));
        }
        tmux.keys(&["a"]);
        presses += 1;
        tmux.wait(
            "the next point or the verdict",
            Duration::from_secs(10),
            |s| {
                s.contains("verdict: ")
                    || s.lines().next().and_then(|l| l.split(" · ").nth(1)) != point.as_deref()
            },
        );
    };
    assert!(
        verdict.contains(&format!("record: {}", dir.display())),
        "{verdict}"
    );
    let verdict_files = tmux.wait("the plots", Duration::from_secs(20), |s| {
        s.contains("SVG files")
    });
    assert!(verdict_files.contains("plots: "), "{verdict_files}");

    // `q` leaves at once after the verdict; the result table is printed after the UI.
    tmux.keys(&["q"]);
    let after = tmux.wait("vernier to exit", Duration::from_secs(20), |s| {
        exit_code(s).is_some()
    });
    assert!(
        matches!(exit_code(&after), Some(0 | 3 | 4)),
        "exit 0 (all accepted or converged) or 3 (a point N/A):\n{after}"
    );
    assert!(after.contains("verdict: "), "{after}");
    assert!(
        after.lines().any(|l| l == "icanon"),
        "the terminal is cooked again:\n{after}"
    );
    assert!(!tmux.alternate());

    // The record: finished, the keys' commands in it, an accepted point, the plots.
    let run = support::read_run(&dir);
    assert_eq!(run["status"], "finished");
    let commands = commands(&run);
    assert!(
        commands.iter().any(|c| c.starts_with("set load")),
        "{commands:?}"
    );
    assert!(commands.iter().any(|c| c == "accept"), "{commands:?}");
    // Every point ended: accepted, N/A for having nothing to accept yet, or N/A on its
    // own before the key reached it; at least one by the key.
    let points = run["points"].as_array().unwrap();
    assert_eq!(points.len(), 3, "{}", run["points"]);
    let by_key = points
        .iter()
        .filter(|p| {
            p["verdict"] == "accepted" || support::first_kind(p) == Some(ReasonKind::AcceptedEmpty)
        })
        .count();
    assert!(by_key >= 1, "{}", run["points"]);
    // The plots the verdict screen counted are on disk.
    let svgs = std::fs::read_dir(dir.join("report"))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .is_ok_and(|e| e.path().extension().is_some_and(|x| x == "svg"))
        })
        .count();
    assert!(svgs >= 1);
    assert!(
        verdict_files.contains(&format!("({svgs} SVG files")),
        "{verdict_files}"
    );
}

#[test]
fn q_asks_first_then_the_run_ends_with_its_record_saved() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let tmux = Tmux::start(
        "quit",
        &format!("{} demo --record {}", bin(), dir.display()),
    );
    tmux.wait("the dashboard", Duration::from_secs(30), |s| {
        current_step(s).is_some_and(|s| s != "connect" && s != "load")
    });
    tmux.keys(&["q"]);
    tmux.wait("the question", Duration::from_secs(5), |s| {
        s.contains("quit? the record is saved either way")
    });
    // Any other key stays.
    tmux.keys(&["n"]);
    tmux.wait("the keys again", Duration::from_secs(5), |s| {
        s.contains("a accept")
    });
    assert!(tmux.alternate());
    tmux.keys(&["q"]);
    tmux.keys(&["y"]);
    let after = tmux.wait("vernier to exit", Duration::from_secs(20), |s| {
        exit_code(s).is_some()
    });
    assert_eq!(exit_code(&after), Some(3), "a quit run is N/A:\n{after}");
    assert!(after.contains("quit: the user quit"), "{after}");
    let run = support::read_run(&dir);
    assert_eq!(run["status"], "finished");
    assert!(commands(&run).iter().any(|c| c == "quit"));
}

#[test]
fn an_error_leaves_the_terminal_restored_and_says_what() {
    // An agent nothing answers at: the session fails once the UI is up (a target nothing
    // listens at is refused before the UI starts).
    let tmux = Tmux::start(
        "error",
        &format!(
            "VERNIER_TOKEN=unused {} run {}/../scenarios/synthetic-exp.yaml --set \"agents=[{{address: '127.0.0.1:9'}}]\"",
            bin(),
            env!("CARGO_MANIFEST_DIR")
        ),
    );
    let after = tmux.wait("vernier to exit", Duration::from_secs(30), |s| {
        exit_code(s).is_some()
    });
    assert_eq!(exit_code(&after), Some(1), "{after}");
    assert!(
        after.contains("cannot reach the agent at 127.0.0.1:9"),
        "{after}"
    );
    assert!(after.lines().any(|l| l == "icanon"), "{after}");
    assert!(!tmux.alternate());
}

#[test]
fn a_record_replays_paused_at_until_and_moves_with_the_keys() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/runs/demo-sweep");
    let tmux = Tmux::start(
        "replay",
        &format!("{} replay {} --until verdict:1", bin(), fixture.display()),
    );
    let screen = tmux.wait("the replay", Duration::from_secs(10), |s| s.contains("⏸"));
    // Paused just after the first verdict.
    assert!(screen.contains("⏸ 20.9s/27.9s ×1"), "{screen}");
    assert!(screen.contains("✗ n/a"), "{screen}");
    // → moves 5 s forward; ] doubles the speed; space plays to the end.
    tmux.keys(&["Right"]);
    tmux.wait("the seek", Duration::from_secs(5), |s| {
        s.contains("⏸ 25.9s")
    });
    tmux.keys(&["]"]);
    tmux.wait("the speed", Duration::from_secs(5), |s| s.contains("×2"));
    tmux.keys(&["Space"]);
    tmux.wait("the end of the record", Duration::from_secs(10), |s| {
        s.contains("verdict: N/A")
    });
    // Steering is refused in a replay; q leaves.
    tmux.keys(&["+"]);
    tmux.wait("the refusal", Duration::from_secs(5), |s| {
        s.contains("a replay cannot be steered")
    });
    tmux.keys(&["q"]);
    let after = tmux.wait("vernier to exit", Duration::from_secs(10), |s| {
        exit_code(s).is_some()
    });
    assert_eq!(exit_code(&after), Some(0), "{after}");
    assert!(
        !fixture.join("report").exists(),
        "a replay writes nothing unasked"
    );
}
