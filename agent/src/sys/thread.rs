//! Pinning worker threads to cores, so that a worker's clock reads and busy-polling are
//! not interrupted by migrations and its caches stay warm.

use nix::sched::{CpuSet, sched_getaffinity, sched_setaffinity};
use nix::unistd::Pid;

use super::SysError;

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
