//! The clocks as an ordinary user sees them: perf_event_paranoid applies (it does not to root), so
//! perf events must be opened with exclude_kernel, and task-clock must still count kernel time.
//! When run as root, the test re-runs itself in a child process that drops to uid/gid 65534.

use nativeacct::testing::clock::{choose, ClockKind, ClockRequest, ThreadClock};

#[path = "clock/support.rs"]
mod support;
use support::{num_cpus, spin_cpu_with, steal_allowance, steal_ns, thread_cpu_ns};

const CHILD_ENV: &str = "NATIVEACCT_CLOCK_TEST_UNPRIVILEGED";
const TEST_NAME: &str = "unprivileged_user_gets_working_clocks";

fn paranoid() -> i32 {
    std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .expect("perf_event_paranoid readable")
        .trim()
        .parse()
        .expect("a number")
}

/// Half user-space spinning, half non-blocking syscalls, about `ns` of CPU in all.
fn user_and_kernel_work(ns: u64) {
    spin_cpu_with(ns, || {
        for _ in 0..20 {
            // SAFETY: getppid has no preconditions.
            unsafe { libc::getppid() };
        }
    });
}

fn checks_as_unprivileged_user() {
    let level = paranoid();
    for kind in [ClockKind::TaskClock, ClockKind::TscHybrid] {
        let choice = choose(ClockRequest::Exactly(kind));
        if level > 2 {
            // Debian's level 3 forbids perf to unprivileged users entirely: the clock that needs no
            // perf event (tsc-gated, or thread-cputime without an invariant TSC).
            let without_perf = choose(ClockRequest::Exactly(ClockKind::TscGated)).kind;
            assert_eq!(choice.kind, without_perf, "{}", choice.reason);
            assert!(choice.reason.contains("EACCES"), "{}", choice.reason);
            continue;
        }
        assert_eq!(choice.kind, kind, "{}", choice.reason);
        let steal_before = steal_ns();
        let (measured, truth, slept) = std::thread::spawn(move || {
            let mut clock = ThreadClock::open(&choice);
            assert_eq!(clock.kind(), kind);
            let truth_before = thread_cpu_ns();
            let before = clock.read();
            user_and_kernel_work(100_000_000);
            let after = clock.read();
            let truth = thread_cpu_ns() - truth_before;
            std::thread::sleep(std::time::Duration::from_millis(50));
            let slept = clock.read().saturating_sub(after);
            (after.saturating_sub(before), truth, slept)
        })
        .join()
        .unwrap();
        // Task-clock also counts time the hypervisor stole from the running vCPU, and so do
        // tsc-hybrid's TSC deltas since its last exact read; the system-wide steal during the run
        // bounds that (plus one 10 ms /proc/stat tick per vCPU of rounding).
        let steal = steal_ns() - steal_before + 10_000_000 * num_cpus();
        let allowance = steal_allowance(kind, steal);
        assert!(
            measured >= truth - truth / 50 && measured <= truth + truth / 50 + allowance,
            "{kind:?} as an ordinary user: {measured} ns vs thread CPU {truth} ns (steal allowance {allowance} ns)"
        );
        assert!(
            slept < 5_000_000,
            "{kind:?}: a 50 ms sleep added {slept} ns"
        );
    }
    if level >= 2 {
        let task = choose(ClockRequest::Exactly(ClockKind::TaskClock));
        assert!(task.reason.contains("exclude_kernel"), "{}", task.reason);
    }
}

#[test]
fn unprivileged_user_gets_working_clocks() {
    // SAFETY: getuid has no preconditions.
    let uid = unsafe { libc::getuid() };
    if std::env::var_os(CHILD_ENV).is_some() {
        assert_ne!(uid, 0, "the parent should have dropped privileges");
        checks_as_unprivileged_user();
        println!("unprivileged checks passed");
        return;
    }
    if uid != 0 {
        checks_as_unprivileged_user();
        return;
    }
    let exe = std::env::current_exe().unwrap();
    let mut command = std::process::Command::new(exe);
    command
        .args(["--exact", TEST_NAME, "--nocapture", "--test-threads", "1"])
        .env(CHILD_ENV, "1");
    // SAFETY: runs in the forked child before exec; only async-signal-safe calls.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut command, || {
            if libc::setgroups(0, std::ptr::null()) != 0
                || libc::setgid(65534) != 0
                || libc::setuid(65534) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let output = command.output().expect("child test runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success() && stdout.contains("unprivileged checks passed"),
        "child failed:\n{stdout}\n{stderr}"
    );
}
