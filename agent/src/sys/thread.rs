//! Pinning worker threads to cores, so that a worker's clock reads and busy-polling are
//! not interrupted by migrations and its caches stay warm.

use nix::sched::{CpuSet, sched_getaffinity, sched_setaffinity};
use nix::unistd::Pid;

use super::error::SysError;

/// Pins the calling thread to one CPU (`sched_setaffinity` on thread id 0, i.e. this
/// thread only; the rest of the process keeps its mask).
///
/// Fails for a CPU this process may not run on (offline, outside its cgroup's cpuset or
/// the mask it was started with); the error lists the CPUs it may use.
pub fn pin_current_thread(cpu: usize) -> Result<(), SysError> {
    let mut set = CpuSet::new();
    set.set(cpu)
        .and_then(|()| sched_setaffinity(Pid::from_raw(0), &set))
        .map_err(|errno| SysError::Pin {
            cpu,
            allowed: available_cpus(),
            source: errno.into(),
        })
}

/// Gives the calling thread the nice value `nice` (negative: more CPU against the other
/// threads on its core), the calling thread only (Linux keeps nice per thread). Lowering
/// below 0 needs CAP_SYS_NICE (root); without it this fails and the thread stays as it was.
pub fn set_thread_nice(nice: i32) -> Result<(), std::io::Error> {
    let tid = nix::unistd::gettid().as_raw();
    // SAFETY: setpriority takes plain integers and touches no memory of ours; `tid` is
    // this thread's own id, so no other task is affected.
    #[allow(unsafe_code)]
    let rc = unsafe { libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, nice) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Gives the calling thread a real-time priority (`SCHED_FIFO` at `priority`, 1–99), so
/// that it runs as soon as its wake-up is due, ahead of every ordinary thread on its core:
/// what delays it then is the host (a vCPU taken away) or the kernel, not other threads.
/// Needs CAP_SYS_NICE (root); without it this fails and the thread stays as it was. Only
/// for threads that sleep nearly all the time: a real-time thread that spun would starve
/// its core (the kernel's real-time throttling leaves others 5%).
pub fn set_thread_realtime(priority: i32) -> Result<(), std::io::Error> {
    let param = libc::sched_param {
        sched_priority: priority,
    };
    // SAFETY: `param` is a valid sched_param that outlives the call, which only reads it;
    // pid 0 is the calling thread, so no other task is affected.
    #[allow(unsafe_code)]
    let rc = unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// The affinity masks [`confine_process`] changed, put back when dropped (for the threads
/// still running; threads started meanwhile keep the confined mask they inherited).
#[derive(Debug)]
pub struct Confinement {
    cpus: Vec<usize>,
    saved: Vec<(Pid, CpuSet)>,
}

impl Confinement {
    /// The cores the process's threads were confined to.
    pub fn cpus(&self) -> &[usize] {
        &self.cpus
    }

    /// How many threads were moved.
    pub fn threads(&self) -> usize {
        self.saved.len()
    }
}

impl Drop for Confinement {
    fn drop(&mut self) {
        let mut confined = CpuSet::new();
        for &cpu in &self.cpus {
            let _ = confined.set(cpu);
        }
        for (tid, mask) in &self.saved {
            // A thread that has ended since (ESRCH) has nothing to restore, and one that
            // set its own mask meanwhile (pinned itself) keeps it.
            if sched_getaffinity(*tid).is_ok_and(|now| now == confined) {
                let _ = sched_setaffinity(*tid, mask);
            }
        }
    }
}

/// Confines every thread of this process that may run on more than one CPU to `cpus`;
/// threads pinned to one CPU (workers, probes, an in-process server) keep their core, and
/// threads started later by a confined thread inherit its mask. A coordinator that shares
/// its host with the server it measures calls this with its workers' cores, so that its
/// own work (evaluations, recording, the terminal) never runs on the server's core: there
/// it would delay the server by a scheduler slice (milliseconds) at a time, and the tail
/// measured would be the coordinator's. An empty list confines nothing. Fails, changing
/// nothing, for a CPU this process may not use.
pub fn confine_process(cpus: &[usize]) -> Result<Confinement, SysError> {
    let allowed = available_cpus();
    let mut set = CpuSet::new();
    for &cpu in cpus {
        if !allowed.contains(&cpu) {
            return Err(SysError::Pin {
                cpu,
                allowed,
                source: nix::errno::Errno::EINVAL.into(),
            });
        }
        set.set(cpu).map_err(|errno| SysError::Pin {
            cpu,
            allowed: allowed.clone(),
            source: errno.into(),
        })?;
    }
    let Some(&first) = cpus.first() else {
        return Ok(Confinement {
            cpus: Vec::new(),
            saved: Vec::new(),
        });
    };
    let tasks = std::fs::read_dir("/proc/self/task").map_err(|source| SysError::Pin {
        cpu: first,
        allowed: allowed.clone(),
        source,
    })?;
    let mut saved = Vec::new();
    for entry in tasks.flatten() {
        let Some(tid) = entry.file_name().to_str().and_then(|t| t.parse().ok()) else {
            continue;
        };
        let tid = Pid::from_raw(tid);
        // A thread that ended since the listing has no mask to change.
        let Ok(mask) = sched_getaffinity(tid) else {
            continue;
        };
        let count = (0..CpuSet::count())
            .filter(|&c| mask.is_set(c).unwrap_or(false))
            .count();
        if count <= 1 {
            continue;
        }
        if sched_setaffinity(tid, &set).is_ok() {
            saved.push((tid, mask));
        }
    }
    Ok(Confinement {
        cpus: cpus.to_vec(),
        saved,
    })
}

/// The CPUs the calling thread may run on (its affinity mask), in ascending order; empty
/// if the mask cannot be read.
pub fn available_cpus() -> Vec<usize> {
    sched_getaffinity(Pid::from_raw(0))
        .map(|set| {
            (0..CpuSet::count())
                .filter(|&cpu| set.is_set(cpu).unwrap_or(false))
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn confinement_refuses_a_cpu_it_may_not_use_and_an_empty_list_moves_nothing() {
        let before = available_cpus();
        assert!(confine_process(&[CpuSet::count() + 1]).is_err());
        assert_eq!(available_cpus(), before, "nothing changed");
        let none = confine_process(&[]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(none.threads(), 0);
        assert_eq!(available_cpus(), before, "nothing changed");
    }

    #[test]
    fn a_thread_can_lower_its_own_priority_and_only_its_own() {
        std::thread::spawn(|| {
            set_thread_nice(5).unwrap_or_else(|e| panic!("{e}"));
            let tid = nix::unistd::gettid().as_raw() as libc::id_t;
            // SAFETY: getpriority reads an integer attribute of this thread.
            #[allow(unsafe_code)]
            let mine = unsafe { libc::getpriority(libc::PRIO_PROCESS, tid) };
            assert_eq!(mine, 5);
        })
        .join()
        .unwrap_or_else(|_| panic!("the thread panicked"));
        // SAFETY: as above, for the test's own thread.
        #[allow(unsafe_code)]
        let here = unsafe {
            libc::getpriority(
                libc::PRIO_PROCESS,
                nix::unistd::gettid().as_raw() as libc::id_t,
            )
        };
        assert_ne!(here, 5, "the nice value is per thread");
    }

    #[test]
    fn pins_to_an_allowed_cpu_and_refuses_an_impossible_one() {
        let cpus = available_cpus();
        assert!(!cpus.is_empty());
        let last = cpus[cpus.len() - 1];
        // In a thread of its own, so the test harness's thread keeps its mask.
        let pinned =
            std::thread::spawn(move || pin_current_thread(last).map(|()| available_cpus()))
                .join()
                .unwrap()
                .unwrap();
        assert_eq!(pinned, [last]);

        let err = pin_current_thread(CpuSet::count() + 5).unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains(&format!("CPU {}", CpuSet::count() + 5)),
            "{text}"
        );
        assert!(text.contains("may run on"), "{text}");
    }
}
