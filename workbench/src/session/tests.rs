use std::path::Path;
use std::time::Instant;

use super::host::{Probes, check_affinity, check_spin, placement, start_probes};
use super::interface::Keep;
use super::policy::TARGET_CHECK;
use super::target::check_targets;
use crate::error::Error;
use crate::scenario::Scenario;

fn scenario(yaml: &str) -> Scenario {
    Scenario::from_yaml(yaml, Some(Path::new("s.yaml")), &[]).unwrap_or_else(|e| panic!("{e}"))
}

const BASE: &str = "name: s\ntarget: 127.0.0.1:11211\nprotocol: synthetic\nservice: exp:20us\nload: 1000\nci: {percentile: 99, width: 10us}\n";

#[test]
fn workers_pinned_outside_the_affinity_are_refused_naming_both_sets() {
    let s = scenario(&format!("{BASE}workers: 2\ncpus: [0, 1]\n"));
    let err = check_affinity(&s, &[0]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "s.yaml: cpus: [0,1] names CPU 1 outside the CPUs this process may run on (0, its affinity: taskset or a cpuset); name cores among those, or run vernier where it may use these"
    );
    // A usage error: exit code 2, as other scenario errors.
    assert!(matches!(err, Error::Usage(_)), "{err:?}");
    assert!(check_affinity(&s, &[0, 1, 2]).is_ok());
    // Nothing pinned, an affinity unknown, or only the target's core outside: run.
    assert!(check_affinity(&scenario(BASE), &[3]).is_ok());
    assert!(check_affinity(&s, &[]).is_ok());
    let s = scenario(&format!("{BASE}cpus: [1]\ntarget_cpus: [0]\n"));
    assert!(check_affinity(&s, &[1]).is_ok());
}

/// Workers that spin need a core for vernier's other threads, or those threads' slices
/// make late the very departures spinning is for: refused before anything starts, with
/// what would do.
#[test]
fn spinning_workers_with_no_core_left_for_vernier_are_refused() {
    let pinned = scenario(&format!(
        "{BASE}cpus: [1]
poll: spin
"
    ));
    let err = check_spin(&pinned, &[1]).unwrap_err();
    assert!(matches!(err, Error::Usage(_)), "{err:?}");
    assert_eq!(
        err.to_string(),
        "s.yaml: poll: spin needs a core for vernier's other threads besides the spinning workers': its workers spin on CPU 1, every CPU this process may use (1); allow another core (taskset -c), or use poll: sleep (the default), which sends as precisely as the answer asked needs"
    );
    assert!(check_spin(&pinned, &[0, 1]).is_ok());
    // The target's core is not spare either: the coordinator there makes the target's tail.
    let beside = scenario(&format!("{BASE}cpus: [1]\ntarget_cpus: [0]\npoll: spin\n"));
    let err = check_spin(&beside, &[0, 1]).unwrap_err().to_string();
    assert!(
        err.contains("its workers spin on CPU 1 and the target runs on CPU 0, every CPU this process may use (0,1)"),
        "{err}"
    );
    assert!(check_spin(&beside, &[0, 1, 2]).is_ok());
    // Unpinned: as many workers as cores leave none.
    let floating = scenario(&format!(
        "{BASE}workers: 2
poll: spin
"
    ));
    let err = check_spin(&floating, &[0, 1]).unwrap_err().to_string();
    assert!(
        err.contains("its 2 unpinned workers would take every CPU this process may use (0,1)"),
        "{err}"
    );
    assert!(check_spin(&floating, &[0, 1, 2]).is_ok());
    // Sleeping workers share their core; an affinity unknown refuses nothing.
    assert!(
        check_spin(
            &scenario(&format!(
                "{BASE}cpus: [1]
"
            )),
            &[1]
        )
        .is_ok()
    );
    assert!(check_spin(&pinned, &[]).is_ok());
}

/// Two workers on one core watch the same time: one report for the core, their wake-ups
/// pooled, its seconds those of either; another core's report comes apart, first seen
/// first, before the probes'.
#[test]
fn the_workers_own_waits_report_once_a_core() {
    use vernier_agent::CoreWatch;
    let watches = [
        CoreWatch::new(Some(1)),
        CoreWatch::new(Some(1)),
        CoreWatch::new(Some(0)),
    ];
    for (w, late) in watches.iter().zip([5_000, 7_000, 9_000]) {
        w.wakeup(late);
        w.wakeup(late);
    }
    std::thread::sleep(std::time::Duration::from_millis(20));
    let mut probes = Probes::new(Vec::new(), 1);
    let reports = probes.take(&[true], &watches);
    let cores: Vec<Option<usize>> = reports.iter().map(|r| r.cpu).collect();
    assert_eq!(cores, [Some(1), Some(0)]);
    assert_eq!((reports[0].wakeups, reports[1].wakeups), (4, 2));
    assert!(
        (0.02..1.0).contains(&reports[0].seconds),
        "{}",
        reports[0].seconds
    );
    assert!(!reports[0].realtime);
    // Taken: the next report starts afresh.
    assert_eq!(probes.take(&[true], &watches)[0].wakeups, 0);
}

#[test]
fn a_targets_core_outside_the_affinity_is_not_probed_and_the_line_says_so() {
    let s = scenario(&format!("{BASE}target_cpus: [100000]\n"));
    let (probes, line) = start_probes(&s, &[0]);
    // The local workers watch their own cores: no probe thread beside them.
    assert!(probes.is_empty(), "{line}");
    assert_eq!(
        line,
        "host probes: the workers' own waits, wherever they run; not on the target's CPU 100000 (target_cpus), which this process may not use (it may use 0)"
    );
}

fn url_scenario(url: &str, extra: &[&str]) -> Scenario {
    let load = crate::scenario::Flag {
        name: "--load",
        field: "load",
        given: Some(("1k".into(), "1k".into())),
    };
    let sets: Vec<crate::scenario::Override> = extra.iter().map(|s| s.parse().unwrap()).collect();
    Scenario::from_url(url, &[load], &sets).unwrap()
}

#[test]
fn a_target_nothing_listens_at_is_refused_at_once_naming_it() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let url = format!("memcached://{addr}");
    assert!(check_targets(&url_scenario(&url, &[])).is_ok());
    drop(listener);
    let started = Instant::now();
    let e = check_targets(&url_scenario(&url, &[])).unwrap_err();
    assert!(started.elapsed() < TARGET_CHECK, "{:?}", started.elapsed());
    assert_eq!(e.exit_code(), std::process::ExitCode::from(2));
    assert_eq!(
        e.to_string(),
        format!(
            "target {addr}: nothing is listening there (connection refused); start the \
             server, or check the address"
        )
    );
    // A name is resolved, and said beside the address it resolved to.
    let named = format!("memcached://localhost:{}", addr.port());
    let e = check_targets(&url_scenario(&named, &[]))
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with(&format!("target localhost:{} (", addr.port())),
        "{e}"
    );
    // UDP has no connection to refuse; a remote agent sees its own network.
    assert!(check_targets(&url_scenario(&url, &["transport=udp"])).is_ok());
    let remote = "agents=[{address: '127.0.0.1:5001'}]";
    assert!(check_targets(&url_scenario(&url, &[remote])).is_ok());
}

/// vernier's own threads beside pinned workers: on a free core when the host has one and
/// the target's cores are known, with the sleeping workers when it has none (a 2-core host:
/// the target's core is never theirs), off spinning workers always, and left alone when
/// nothing is pinned.
#[test]
fn vernier_threads_go_to_a_free_core_when_there_is_one() {
    // 16 cores, given 2-3 (taskset), the worker on 2, memcached pinned elsewhere.
    let given = scenario(&format!("{BASE}cpus: [2]\ntarget_cpus: [0]\n"));
    assert_eq!(placement(&given, &[2, 3]), Some((vec![3], Keep::Spare)));
    // The 2-core host: the target on 0, the worker on 1, no core free.
    let small = scenario(&format!("{BASE}cpus: [1]\ntarget_cpus: [0]\n"));
    assert_eq!(
        placement(&small, &[0, 1]),
        Some((vec![1], Keep::WithWorkers))
    );
    // The target's cores unknown (it may run anywhere): with the workers, as before.
    let unknown = scenario(&format!("{BASE}cpus: [2]\n"));
    assert_eq!(
        placement(&unknown, &[2, 3]),
        Some((vec![2], Keep::WithWorkers))
    );
    // Spinning workers: off their cores whatever else holds.
    let spin = scenario(&format!("{BASE}cpus: [2]\npoll: spin\n"));
    assert_eq!(placement(&spin, &[2, 3]), Some((vec![3], Keep::OffWorkers)));
    assert_eq!(placement(&scenario(BASE), &[0, 1]), None);
}
