//! Ground truth shared by the clock tests: this thread's CPU time read independently of the clock
//! module, and the hypervisor steal time that TSC-based clocks may legitimately count.
#![allow(dead_code)]

use nativeacct::testing::clock::{ClockKind, MAX_STEP_BACK_NS};

/// Whether `later` (read after `earlier` on the same thread) is as far forward as the clock
/// promises: never back, except that tsc-hybrid and task-clock may step back by up to
/// `MAX_STEP_BACK_NS` at an exact read that pays back hypervisor steal.
pub fn moved_forward(kind: ClockKind, earlier: u64, later: u64) -> bool {
    let allowed = if matches!(
        kind,
        ClockKind::TscHybrid | ClockKind::TscGated | ClockKind::TaskClock
    ) {
        MAX_STEP_BACK_NS
    } else {
        0
    };
    later + allowed >= earlier
}

/// This thread's CPU time (CLOCK_THREAD_CPUTIME_ID), read without the clock module.
pub fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes only into `ts`.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0);
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Burn `ns` of this thread's CPU time, calling `between()` after each short stretch of user-space
/// arithmetic.
pub fn spin_cpu_with(ns: u64, mut between: impl FnMut()) {
    let start = thread_cpu_ns();
    let mut x = 1u64;
    while thread_cpu_ns() - start < ns {
        for _ in 0..2_000 {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
        }
        between();
    }
}

/// Burn `ns` of this thread's CPU time in user space.
pub fn spin_cpu(ns: u64) {
    spin_cpu_with(ns, || {});
}

/// Steal time of all vCPUs so far (ns), from /proc/stat: time the hypervisor ran something else.
/// Raw task-clock and TSC deltas count steal that hits a running thread; CLOCK_THREAD_CPUTIME_ID does not
/// (CONFIG_PARAVIRT_TIME_ACCOUNTING). The sum over all vCPUs bounds what one thread can have suffered.
pub fn steal_ns() -> u64 {
    let stat = std::fs::read_to_string("/proc/stat").expect("/proc/stat");
    let steal_ticks: u64 = stat
        .lines()
        .next()
        .and_then(|cpu| cpu.split_whitespace().nth(8))
        .and_then(|field| field.parse().ok())
        .unwrap_or(0);
    // SAFETY: sysconf has no preconditions.
    let ticks_per_second = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    steal_ticks * 1_000_000_000 / ticks_per_second
}

pub fn num_cpus() -> u64 {
    std::thread::available_parallelism().map_or(1, |n| n.get() as u64)
}

/// How far above CLOCK_THREAD_CPUTIME_ID `kind` may legitimately read because of steal time.
pub fn steal_allowance(kind: ClockKind, steal_during: u64) -> u64 {
    match kind {
        // tsc-hybrid, tsc-gated and task-clock only what they extrapolated since their last exact
        // read: under 250 µs of TSC or task-clock time.
        ClockKind::TscHybrid | ClockKind::TscGated | ClockKind::TaskClock => {
            steal_during.min(MAX_STEP_BACK_NS)
        }
        _ => 0,
    }
}
