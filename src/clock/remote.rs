//! Reading a thread's CPU time from another thread: the one remote read of the agent. The merge at
//! VMDeath charges still-running threads with it, and the process scan reads every other thread.

use super::{read_clock, ClockKind};

/// The kernel's CPU clock of thread `tid` of this process, addressed by tid the way
/// `pthread_getcpuclockid` builds it (`~tid << 3 | CPUCLOCK_PERTHREAD | CPUCLOCK_SCHED`). None once
/// the thread has ended.
pub(crate) fn thread_cpu_ns(tid: i32) -> Option<u64> {
    read_clock(thread_clock_id(tid))
}

/// The clock id of thread `tid`'s CPU clock (also a `timer_create` clock for a thread of this
/// process).
pub(crate) fn thread_clock_id(tid: i32) -> libc::clockid_t {
    ((!tid) << 3) | 6
}

/// A thread's CPU time read from any thread, mapped onto that thread's clock timeline.
pub struct RemoteCpu {
    cpu_clock: Option<libc::clockid_t>,
    cpu_at_open: u64,
    clock_at_open: u64,
}

impl RemoteCpu {
    /// For the calling thread, whose clock of `kind` reads `clock_now`.
    pub fn for_current_thread(clock_now: u64, kind: ClockKind) -> RemoteCpu {
        let mut id: libc::clockid_t = 0;
        // SAFETY: pthread_self is always valid for the calling thread; `id` is a valid out-pointer.
        let ok = unsafe { libc::pthread_getcpuclockid(libc::pthread_self(), &mut id) } == 0;
        // `tsc` measures wall time: its timeline cannot be mapped from CPU time.
        let cpu_clock = (ok && kind != ClockKind::Tsc).then_some(id);
        // A clock on the CPU-time timeline needs no second reading (a syscall) to map it.
        let cpu_at_open = if kind.on_cpu_time_timeline() {
            clock_now
        } else {
            cpu_clock.and_then(read_clock).unwrap_or(0)
        };
        RemoteCpu {
            cpu_clock,
            cpu_at_open,
            clock_at_open: clock_now,
        }
    }

    /// From any thread: the owner's clock now, while the owner lives (a syscall). May be a little
    /// below the owner's last own reading: saturate differences.
    pub fn now(&self) -> Option<u64> {
        let cpu = read_clock(self.cpu_clock?)?;
        Some(self.clock_at_open + cpu.saturating_sub(self.cpu_at_open))
    }
}

/// What the calling thread uses from now until its very end, readable from any thread afterwards:
/// a task-clock perf event keeps its final count once its thread is gone. It covers a thread's
/// teardown after the last moment the agent can run on it (the C library's and the kernel's exit
/// work, 5 to 30 µs a thread), which no clock read can reach.
pub(crate) struct RestOfThread(super::perf::PerfEvent);

impl RestOfThread {
    /// Start counting the calling thread; an error where perf events are denied.
    pub(crate) fn start() -> Result<RestOfThread, super::perf::OpenError> {
        super::perf::PerfEvent::open_current_thread(super::perf::EventKind::SwTaskClock, false)
            .map(RestOfThread)
    }

    /// The count so far: final once the thread has ended.
    pub(crate) fn ns(&self) -> Option<u64> {
        self.0.read_count()
    }
}
