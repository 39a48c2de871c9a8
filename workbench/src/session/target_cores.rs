//! A local target's cores, found from its listening socket: the process holding the
//! socket that listens at the target's address (`/proc/net/tcp` and `tcp6`, then each
//! process's `fd/`), and the cores its threads may run on (`Cpus_allowed_list` of each of
//! its tasks).
//!
//! When a scenario names no target cores (`target_cpus:`), a local target pinned to some
//! of this host's cores (`taskset -c 0 memcached ...`) has them probed for stalls as if
//! named: a stall of the server's core holds every request it serves, and the probes of
//! the client's cores do not see it. A target that may run on every core, one on another
//! host or in another network namespace, or a process this user may not read, is left as
//! it was (the scenario's `target_cpus:` still names its cores). TCP targets only.

use std::collections::BTreeSet;
use std::fs;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, UdpSocket};
use std::path::Path;

use super::host::join;
use crate::load::resolve;
use crate::scenario::Scenario;

/// The process listening at a target, and where its threads may run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TargetProcess {
    /// Its process ID.
    pub(crate) pid: u32,
    /// Its command's name (`/proc/PID/comm`).
    pub(crate) name: String,
    /// The cores any of its threads may run on, ascending.
    pub(crate) cpus: Vec<usize>,
}

/// The scenario with its targets' cores as `target_cpus:` when it names none and its
/// targets are local processes pinned to fewer than this host's cores, and the line that
/// says so (`None` when nothing was found, or the scenario names its cores).
pub(crate) fn with_found_cores(scenario: &Scenario) -> (Scenario, Option<String>) {
    let mut found = scenario.clone();
    if !scenario.target_cpus.is_empty() || scenario.transport != vernier_agent::sys::Transport::Tcp
    {
        return (found, None);
    }
    let Some(online) = read_list(Path::new("/sys/devices/system/cpu/online")) else {
        return (found, None);
    };
    let mut cpus = BTreeSet::new();
    let mut named = Vec::new();
    for target in &scenario.targets {
        let Ok(process) = find(target) else {
            continue;
        };
        if process.cpus.iter().copied().collect::<BTreeSet<_>>() == online {
            continue;
        }
        cpus.extend(process.cpus.iter().copied());
        named.push(format!(
            "{target} is {} (pid {}) on CPU {}",
            process.name,
            process.pid,
            join(&process.cpus)
        ));
    }
    if cpus.is_empty() {
        return (found, None);
    }
    found.target_cpus = cpus.into_iter().collect();
    let line = format!(
        "the target's cores: {}; probed for stalls as if named (target_cpus: [{}])",
        named.join("; "),
        join(&found.target_cpus)
    );
    (found, Some(line))
}

/// The process listening at `target` (`host:port`) on this host, in this network
/// namespace; why not, when it cannot be found.
pub(crate) fn find(target: &str) -> Result<TargetProcess, String> {
    let addr = resolve(target).map_err(|e| e.to_string())?;
    if !is_local(addr.ip()) {
        return Err(format!("{target} is not an address of this host"));
    }
    let inode = ["/proc/net/tcp", "/proc/net/tcp6"]
        .iter()
        .filter_map(|t| fs::read_to_string(t).ok())
        .find_map(|table| listening_inode(&table, addr))
        .ok_or_else(|| format!("nothing listens at {addr} in this network namespace"))?;
    let pid = owner(inode).ok_or_else(|| {
        format!("the process listening at {addr} cannot be read (another user's, and vernier is not root?)")
    })?;
    let dir = Path::new("/proc").join(pid.to_string());
    let name = fs::read_to_string(dir.join("comm"))
        .map(|n| n.trim().to_string())
        .unwrap_or_default();
    let mut cpus = BTreeSet::new();
    for task in fs::read_dir(dir.join("task")).map_err(|e| format!("pid {pid}: {e}"))? {
        let Ok(task) = task else { continue };
        let Ok(status) = fs::read_to_string(task.path().join("status")) else {
            continue;
        };
        if let Some(list) = status
            .lines()
            .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        {
            cpus.extend(parse_list(list.trim()).unwrap_or_default());
        }
    }
    if cpus.is_empty() {
        return Err(format!("pid {pid}: no thread's cores could be read"));
    }
    Ok(TargetProcess {
        pid,
        name,
        cpus: cpus.into_iter().collect(),
    })
}

/// Whether `ip` is one of this host's: loopback, or an address a socket can be bound to.
fn is_local(ip: IpAddr) -> bool {
    ip.is_loopback() || UdpSocket::bind(SocketAddr::new(ip, 0)).is_ok()
}

/// The inode of the socket listening at `addr` in `table` (the layout of
/// `/proc/net/tcp`: `sl local_address rem_address st ... uid timeout inode`), one bound
/// to the unspecified address (every address of the host) included.
fn listening_inode(table: &str, addr: SocketAddr) -> Option<u64> {
    /// `st` of a listening socket.
    const LISTEN: &str = "0A";
    table.lines().skip(1).find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.len() < 10 || fields[3] != LISTEN {
            return None;
        }
        let (ip, port) = parse_address(fields[1])?;
        let same = ip == addr.ip()
            || ip.is_unspecified()
            || matches!((ip, addr.ip()), (IpAddr::V6(v6), IpAddr::V4(v4)) if v6.to_ipv4_mapped() == Some(v4));
        let inode: u64 = fields[9].parse().ok()?;
        (port == addr.port() && same && inode != 0).then_some(inode)
    })
}

/// `0100007F:2CEB` (the kernel's words in its own byte order, then the port) as an
/// address.
fn parse_address(text: &str) -> Option<(IpAddr, u16)> {
    let (ip, port) = text.split_once(':')?;
    let port = u16::from_str_radix(port, 16).ok()?;
    let word = |i: usize| -> Option<[u8; 4]> {
        let hex = ip.get(i * 8..i * 8 + 8)?;
        Some(u32::from_str_radix(hex, 16).ok()?.to_ne_bytes())
    };
    let ip = match ip.len() {
        8 => IpAddr::V4(Ipv4Addr::from(word(0)?)),
        32 => {
            let mut bytes = [0u8; 16];
            for i in 0..4 {
                bytes[i * 4..i * 4 + 4].copy_from_slice(&word(i)?);
            }
            IpAddr::V6(Ipv6Addr::from(bytes))
        }
        _ => return None,
    };
    Some((ip, port))
}

/// The process that holds socket `inode` open.
fn owner(inode: u64) -> Option<u32> {
    let want = format!("socket:[{inode}]");
    fs::read_dir("/proc").ok()?.flatten().find_map(|entry| {
        let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
        let fds = fs::read_dir(entry.path().join("fd")).ok()?;
        fds.flatten()
            .any(|fd| fs::read_link(fd.path()).is_ok_and(|l| l.as_os_str() == want.as_str()))
            .then_some(pid)
    })
}

/// A core list file (`0-1`).
fn read_list(path: &Path) -> Option<BTreeSet<usize>> {
    parse_list(fs::read_to_string(path).ok()?.trim())
}

/// A kernel core list, `0-3,5,7-8`.
fn parse_list(text: &str) -> Option<BTreeSet<usize>> {
    let mut cpus = BTreeSet::new();
    for part in text.split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => cpus.extend(a.trim().parse::<usize>().ok()?..=b.trim().parse().ok()?),
            None => {
                cpus.insert(part.trim().parse().ok()?);
            }
        }
    }
    Some(cpus)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kernels_tables_and_lists_are_read() {
        let table = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n   \
            0: 0100007F:2CEB 00000000:0000 0A 00000000:00000000 00:00000000 00000000   101        0 41234 1 0\n   \
            1: 0100007F:2CEB 0100007F:9C40 01 00000000:00000000 00:00000000 00000000   101        0 51234 1 0\n   \
            2: 00000000:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 777 1 0\n";
        let at = |s: &str| s.parse::<SocketAddr>().unwrap();
        // memcached's 11499 on loopback: the listening row, not the connected one.
        assert_eq!(listening_inode(table, at("127.0.0.1:11499")), Some(41234));
        assert_eq!(listening_inode(table, at("127.0.0.1:11500")), None);
        // A socket on every address answers for each.
        assert_eq!(listening_inode(table, at("10.1.2.3:8080")), Some(777));
        let v6 = "  sl  local_address                         remote_address                        st\n   \
            0: 00000000000000000000000001000000:1F91 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 888 1 0\n";
        assert_eq!(listening_inode(v6, at("[::1]:8081")), Some(888));
        assert_eq!(parse_list("0-2,5"), Some([0, 1, 2, 5].into()));
        assert_eq!(parse_list("1"), Some([1].into()));
        assert_eq!(parse_list("x"), None);
    }

    #[test]
    fn a_listener_in_this_process_is_found_with_its_cores() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let found = find(&addr).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(found.pid, std::process::id());
        assert!(!found.cpus.is_empty(), "{found:?}");
        drop(listener);
        let e = find(&addr).unwrap_err();
        assert!(e.contains("nothing listens"), "{e}");
        let e = find("192.0.2.1:80").unwrap_err();
        assert!(e.contains("not an address of this host"), "{e}");
    }
}
