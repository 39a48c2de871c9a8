//! Confining a process's threads changes every thread's mask, so it runs in a test binary of
//! its own: beside other tests in one process, the threads they start meanwhile would
//! inherit the confinement.

use nix::sched::{CpuSet, sched_getaffinity};
use nix::unistd::Pid;
use vernier_agent::sys::{available_cpus, confine_process, pin_current_thread};

#[test]
fn confinement_moves_unpinned_threads_keeps_pinned_ones_and_restores_them() {
    let cpus = available_cpus();
    if cpus.len() < 2 {
        panic!(
            "this test needs two CPUs this process may use; it has {:?}",
            cpus
        );
    }
    let (one, other) = (cpus[0], cpus[1]);
    let mask_of = |tid: i32| -> Vec<usize> {
        let set = sched_getaffinity(Pid::from_raw(tid)).unwrap_or_else(|e| panic!("{e}"));
        (0..CpuSet::count())
            .filter(|&c| set.is_set(c).unwrap_or(false))
            .collect()
    };
    let (tx, rx) = std::sync::mpsc::channel();
    let (stop_tx, stop_rx) = std::sync::mpsc::channel::<()>();
    let pinned = std::thread::spawn(move || {
        pin_current_thread(other).unwrap_or_else(|e| panic!("{e}"));
        tx.send(nix::unistd::gettid().as_raw())
            .unwrap_or_else(|e| panic!("{e}"));
        let _ = stop_rx.recv();
    });
    let pinned_tid = rx.recv().unwrap_or_else(|e| panic!("{e}"));
    let me = nix::unistd::gettid().as_raw();
    let before = mask_of(me);
    {
        let confined = confine_process(&[one]).unwrap_or_else(|e| panic!("{e}"));
        assert!(confined.threads() >= 1, "this thread was movable");
        assert_eq!(mask_of(me), vec![one]);
        assert_eq!(
            mask_of(pinned_tid),
            vec![other],
            "a pinned thread keeps its core"
        );
        let child = std::thread::spawn(available_cpus)
            .join()
            .unwrap_or_else(|_| panic!("the thread panicked"));
        assert_eq!(child, vec![one], "a new thread inherits the confinement");
    }
    assert_eq!(mask_of(me), before, "dropping it restores the mask");
    let _ = stop_tx.send(());
    pinned
        .join()
        .unwrap_or_else(|_| panic!("the thread panicked"));
}
