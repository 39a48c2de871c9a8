//! The comparison's screen drawn into ratatui's `TestBackend` from made-up comparisons (2
//! pairs and no look yet, 8 pairs with 4 looks, the verdict), its keys as a pure function,
//! and the steering that holds and stops the comparison's thread.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use ratatui::buffer::Buffer;
use ratatui::style::Color;
use vernier_stats::DifferenceCi;

use super::super::app::Key;
use super::super::theme::Palette;
use super::state::{CompareAction, CompareEvent, CompareView, Setup};
use super::view::draw;
use super::{Steering, StopOnDrop};
use crate::compare::{Block, CompareVerdict, Comparison, Design, Finding, Look, Side, Steer};
use crate::coordinator::ReasonKind;
use crate::report::CcdfPoint;
use crate::scenario::Tail;

const A: &str = "memcached://127.0.0.1:11211";
const B: &str = "memcached://127.0.0.1:11212";

fn setup() -> Setup {
    Setup {
        a: A.into(),
        b: B.into(),
        rate: 10_000.0,
        percentile: "p99".into(),
        width: "20 µs".into(),
        max_pairs: 30,
        block_s: 2.0,
        design: Design::Duet,
    }
}

/// A CCDF down to p99.99 whose tail grows from `body_us`.
fn ccdf(body_us: f64) -> Vec<CcdfPoint> {
    (0..=20)
        .map(|k| CcdfPoint {
            latency_us: body_us * (1.0 + f64::from(k * k) / 40.0),
            ccdf: 10f64.powf(-f64::from(k) / 5.0),
        })
        .collect()
}

fn block(side: Side, pair: usize, order: usize, value_us: f64) -> Block {
    Block {
        side,
        pair,
        order,
        started_s: order as f64 * 2.4,
        samples: 20_000,
        value_us: value_us.into(),
        sent: 20_000,
        asked: 20_000.0,
        on_schedule: 1.0,
        late_shift_us: 0.0.into(),
        send_lag_p99_us: 3.0,
        backlog_max: 0,
        failed: 0,
        errors: 0,
        without_stalls_us: None,
        touched_share: None,
        problem: None,
    }
}

/// A comparison after `pairs` pairs: B's p99 about 12 µs below A's 124 µs, the CI after
/// each pair from the 5th on, narrowing as 1/√pairs.
fn comparison(pairs: usize) -> Comparison {
    let mut blocks = Vec::new();
    for pair in 0..pairs {
        let drift = (pair % 3) as f64 * 4.0;
        blocks.push(block(Side::A, pair, 2 * pair, 120.0 + drift));
        blocks.push(block(Side::B, pair, 2 * pair + 1, 108.0 + drift));
    }
    let look = |p: usize| Look {
        pairs: p,
        at_s: p as f64 * 4.8,
        difference: -12.0,
        low: -12.0 - 30.0 / (p as f64).sqrt(),
        high: -12.0 + 30.0 / (p as f64).sqrt(),
    };
    let looks: Vec<Look> = (5..=pairs).map(look).collect();
    let ci = looks.last().map(|l| DifferenceCi {
        p: 0.99,
        confidence: 0.95,
        pairs: l.pairs,
        a: 124.0,
        b: 112.0,
        difference: l.difference,
        std_error: (l.high - l.low) / 4.0,
        low: l.low,
        high: l.high,
        ratio: 112.0 / 124.0,
        ratio_low: 0.7,
        ratio_high: 0.95,
    });
    Comparison {
        a: A.into(),
        b: B.into(),
        rate: 10_000.0,
        percentile: 99.0,
        tail: Tail::WithStalls,
        width_us: if looks.is_empty() { f64::NAN } else { 20.0 }.into(),
        design: Design::Blocks,
        verdict: CompareVerdict::NotAvailable,
        finding: Finding::Unjudged,
        stopped_after: None,
        reason: String::new(),
        ci,
        percentiles: Vec::new(),
        looks,
        blocks,
        ccdf_a: ccdf(60.0),
        ccdf_b: ccdf(50.0),
        side_by_side: None,
        seconds: pairs as f64 * 4.8,
    }
}

/// The screen after `pairs` pairs, each block fed as the comparison's thread feeds it.
fn view_after(pairs: usize, palette: Palette) -> CompareView {
    let mut view = CompareView::new(setup(), palette);
    let full = comparison(pairs);
    for n in 1..=full.blocks.len() {
        let mut c = comparison(n.div_ceil(2));
        c.blocks.truncate(n);
        let line = format!("{} block {}: p99 {:.1} µs", c.blocks[n - 1].side, n, 1.0);
        view.update(CompareEvent::Block(Box::new(c), line));
    }
    view.update(CompareEvent::Tick(pairs as f64 * 4.8));
    view
}

/// The screen of a comparison that ended `faster`.
fn finished(palette: Palette) -> CompareView {
    let mut view = view_after(8, palette);
    let mut c = comparison(8);
    c.verdict = CompareVerdict::Faster;
    c.reason = "B's p99 is lower than A's by 12.0 µs [1.4, 22.6] (B / A 0.903 [0.700, 0.950]), over 8 pairs".into();
    view.update(CompareEvent::Finished(Box::new(c)));
    view
}

fn buffer(view: &CompareView, width: u16, height: u16) -> Buffer {
    let backend = ratatui::backend::TestBackend::new(width, height);
    let mut terminal = ratatui::Terminal::new(backend).unwrap();
    terminal.draw(|f| draw(f, view)).unwrap();
    terminal.backend().buffer().clone()
}

/// The screen as lines of text, trailing spaces trimmed.
fn screen(view: &CompareView, width: u16, height: u16) -> String {
    let buffer = buffer(view, width, height);
    let mut text = String::new();
    for y in 0..height {
        let line: String = (0..width).map(|x| buffer[(x, y)].symbol()).collect();
        text.push_str(line.trim_end());
        text.push('\n');
    }
    text
}

#[test]
fn before_the_first_look_both_targets_show_and_the_ci_is_awaited() {
    let view = view_after(2, Palette::Plain);
    let text = screen(&view, 80, 24);
    assert!(text.contains(A) && text.contains(B), "{text}");
    assert!(
        text.contains("the CI of B − A comes after 5 pairs (2 measured)"),
        "{text}"
    );
    assert!(text.contains("4 blocks, 2/30 pairs"), "{text}");
    assert!(text.contains("B block 4: p99"), "{text}");
    assert!(text.contains("p/space pause"), "{text}");
    insta::assert_snapshot!("compare_two_pairs_80x24", text);
}

#[test]
fn with_looks_both_sides_are_in_the_legend_and_the_ci_is_written_out() {
    let text = screen(&view_after(8, Palette::Color), 80, 24);
    // The CCDF's legend names both sides.
    assert!(text.contains("│A│") && text.contains("│B│"), "{text}");
    // The last look: -12 ± 30/√8.
    assert!(
        text.contains("B − A -12.0 µs [-22.6, -1.4], 21.2 µs wide on 8 pairs"),
        "{text}"
    );
    assert!(text.contains("asked ≤ 20.0 µs"), "{text}");
    assert!(!text.contains("comes after"), "{text}");
    // Decades on the CCDF's axes, in real units.
    assert!(text.contains("100µs") && text.contains("p99.9"), "{text}");
    insta::assert_snapshot!("compare_eight_pairs_80x24", text);
    // Wide: the three charts side by side.
    let text = screen(&view_after(8, Palette::Plain), 160, 40);
    assert!(text.contains("│B •│"), "{text}");
    assert!(text.contains("p99 of each block"), "{text}");
    insta::assert_snapshot!("compare_eight_pairs_160x40", text);
}

#[test]
fn the_verdict_shows_with_its_reason_and_the_keys_to_leave() {
    let view = finished(Palette::Plain);
    let text = screen(&view, 80, 24);
    assert!(text.contains("verdict: faster"), "{text}");
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("B's p99 is lower than A's by 12.0 µs [1.4, 22.6]"),
        "{text}"
    );
    assert!(flat.contains("over 8 pairs"), "{text}");
    assert!(
        text.contains("Enter/a accept the verdict and leave"),
        "{text}"
    );
    assert!(text.contains("finished"), "{text}");
    insta::assert_snapshot!("compare_finished_80x24", text);
    // In colour the verdict is green; without, nothing is coloured and the text is alike.
    let green = buffer(&finished(Palette::Color), 80, 24)
        .content()
        .iter()
        .any(|c| c.fg == Color::Green && c.symbol() == "v");
    assert!(green, "the verdict is not green");
    let plain = buffer(&view, 80, 24);
    assert!(
        plain
            .content()
            .iter()
            .all(|c| c.fg == Color::Reset && c.bg == Color::Reset),
        "NO_COLOR drew a colour"
    );
}

#[test]
fn a_block_measured_again_is_set_aside_and_counts_for_no_pair() {
    let mut view = view_after(2, Palette::Plain);
    let mut c = comparison(2);
    let mut again = block(Side::A, 2, 4, 900.0);
    again.problem = Some(ReasonKind::Departures);
    c.blocks.push(again);
    // A block that measured nothing has no value to draw.
    let mut nothing = block(Side::A, 2, 5, f64::NAN);
    nothing.problem = Some(ReasonKind::TargetFailed);
    c.blocks.push(nothing);
    view.update(CompareEvent::Block(
        Box::new(c),
        "A block 3: p99 900.0 µs; the client fell behind: measured again".into(),
    ));
    assert_eq!(view.pairs(), 2);
    let text = screen(&view, 80, 24);
    assert!(text.contains("6 blocks, 2/30 pairs"), "{text}");
    assert!(text.contains("█ set aside"), "{text}");
    assert!(text.contains("measured again"), "{text}");
}

#[test]
fn tiny_terminals_do_not_panic_and_say_what_they_need() {
    for view in [
        CompareView::new(setup(), Palette::Color),
        view_after(2, Palette::Color),
        view_after(8, Palette::Color),
        finished(Palette::Color),
    ] {
        for (w, h) in [(20, 5), (1, 1), (50, 14), (49, 30), (80, 13), (300, 80)] {
            let _ = screen(&view, w, h);
        }
    }
    let text = screen(&view_after(2, Palette::Plain), 20, 5);
    assert!(text.contains("vernier compare"), "{text}");
    assert!(text.contains("needs 50x14"), "{text}");
    let text = screen(&finished(Palette::Plain), 40, 10);
    assert!(text.contains("verdict: faster"), "{text}");
}

#[test]
fn before_any_block_the_charts_say_so() {
    let text = screen(&CompareView::new(setup(), Palette::Plain), 80, 24);
    assert!(text.contains("no block measured yet"), "{text}");
    assert!(text.contains("comes after 5 pairs (0 measured)"), "{text}");
    assert!(text.contains("CI ≤ 20 µs · 0 blocks, 0/30 pairs"), "{text}");
}

#[test]
fn p_and_space_pause_and_resume_between_blocks() {
    let mut view = view_after(2, Palette::Plain);
    let key = |view: &mut CompareView, k| view.update(CompareEvent::Key(k));
    assert_eq!(key(&mut view, Key::Char('p')), Some(CompareAction::Hold));
    assert_eq!(view.paused, Some(4));
    // The block under way finishes first.
    assert!(!view.held());
    let text = screen(&view, 80, 24);
    assert!(text.contains("pausing…"), "{text}");
    assert!(
        text.contains("pausing: the block under way finishes first"),
        "{text}"
    );
    view.update(CompareEvent::Block(
        Box::new(comparison(3)),
        "A block 3".into(),
    ));
    assert!(view.held());
    let text = screen(&view, 80, 24);
    assert!(text.contains("⏸ PAUSED"), "{text}");
    assert!(
        text.contains("paused between blocks: p/space resume"),
        "{text}"
    );
    assert_eq!(key(&mut view, Key::Char(' ')), Some(CompareAction::Release));
    assert_eq!(view.paused, None);
    assert_eq!(key(&mut view, Key::Char(' ')), Some(CompareAction::Hold));
}

#[test]
fn q_stops_with_the_verdict_so_far_and_enter_waits_for_it() {
    let mut view = view_after(6, Palette::Plain);
    let key = |view: &mut CompareView, k| view.update(CompareEvent::Key(k));
    // No verdict to accept yet.
    assert_eq!(key(&mut view, Key::Enter), None);
    assert!(view.notice.as_deref().unwrap().contains("no verdict yet"));
    key(&mut view, Key::Char('p'));
    assert_eq!(key(&mut view, Key::Char('q')), Some(CompareAction::Stop));
    assert!(view.stopping);
    // Stopping lifts the pause, and pausing no longer applies.
    assert_eq!(view.paused, None);
    assert_eq!(key(&mut view, Key::Char('p')), None);
    assert_eq!(key(&mut view, Key::Esc), None);
    assert!(view.notice.as_deref().unwrap().contains("already stopping"));
    view.notice = None;
    let text = screen(&view, 80, 24);
    assert!(text.contains("stopping…"), "{text}");
    assert!(
        text.contains("stopping: the block under way finishes first"),
        "{text}"
    );
    // Esc stops too; Ctrl-C leaves at once.
    let mut other = view_after(6, Palette::Plain);
    assert_eq!(key(&mut other, Key::Esc), Some(CompareAction::Stop));
    assert_eq!(key(&mut other, Key::Interrupt), Some(CompareAction::Exit));
}

#[test]
fn after_the_verdict_enter_a_q_or_any_key_leaves() {
    for k in [
        Key::Enter,
        Key::Char('a'),
        Key::Char('q'),
        Key::Char('x'),
        Key::Esc,
    ] {
        let mut view = finished(Palette::Plain);
        assert_eq!(
            view.update(CompareEvent::Key(k)),
            Some(CompareAction::Exit),
            "{k:?}"
        );
    }
    // The clock stops at the comparison's own time.
    let mut view = finished(Palette::Plain);
    view.update(CompareEvent::Tick(1000.0));
    assert_eq!(view.elapsed_s, 8.0 * 4.8);
}

#[test]
fn a_paused_comparison_is_held_until_resumed_or_stopped() {
    let steering = Steering::default();
    assert_eq!(steering.next(), Steer::Go);
    steering.hold();
    let returned = AtomicBool::new(false);
    std::thread::scope(|s| {
        let held = s.spawn(|| {
            let steer = steering.next();
            returned.store(true, Ordering::SeqCst);
            steer
        });
        std::thread::sleep(Duration::from_millis(50));
        assert!(!returned.load(Ordering::SeqCst), "a pause did not hold");
        steering.release();
        assert_eq!(held.join().unwrap(), Steer::Go);
    });
    steering.hold();
    std::thread::scope(|s| {
        let held = s.spawn(|| steering.next());
        // Leaving the screen (dropping the guard) stops even a paused comparison.
        drop(StopOnDrop(&steering));
        assert_eq!(held.join().unwrap(), Steer::Stop);
    });
}
