use std::path::Path;
use std::time::Instant;

use super::host::{check_affinity, start_probes};
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

#[test]
fn a_targets_core_outside_the_affinity_is_not_probed_and_the_line_says_so() {
    let s = scenario(&format!("{BASE}target_cpus: [100000]\n"));
    let (probes, line) = start_probes(&s, &[0]);
    assert_eq!(probes.len(), 1, "{line}");
    assert_eq!(probes[0].cpu(), None);
    assert_eq!(
        line,
        "host probes: a sleeping thread's wake-ups every 1ms on the coordinator's thread; not on the target's CPU 100000 (target_cpus), which this process may not use (it may use 0)"
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
