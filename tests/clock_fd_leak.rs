//! 10,000 short threads each open, read and close perf-backed clocks: no descriptor may leak. The
//! lazy clocks open their perf event only when the thread needs it: task-clock at its first read,
//! tsc-hybrid once the thread has run 1 ms of CPU (here: every 25th batch spins).

use nativeacct::testing::clock::{
    choose, ClockKind, ClockRequest, ThreadClock, GROW_AFTER_CPU_NS, MAX_STEP_BACK_NS,
};

fn own_cpu_ns() -> u64 {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid clock id and a valid out pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) };
    now.tv_sec as u64 * 1_000_000_000 + now.tv_nsec as u64
}

fn open_fd_count() -> usize {
    std::fs::read_dir("/proc/self/fd")
        .expect("/proc/self/fd is readable")
        .count()
}

#[test]
fn ten_thousand_threads_leak_no_descriptors() {
    let hybrid = choose(ClockRequest::Exactly(ClockKind::TscHybrid));
    let task = choose(ClockRequest::Exactly(ClockKind::TaskClock));
    let auto = choose(ClockRequest::Auto);
    assert_eq!(hybrid.kind, ClockKind::TscHybrid, "{}", hybrid.reason);
    assert_eq!(task.kind, ClockKind::TaskClock, "{}", task.reason);
    let before = open_fd_count();
    let mut peak = 0;
    for batch in 0..2_500 {
        let workers: Vec<_> = (0..4)
            .map(|i| {
                let (hybrid, task, auto) = (hybrid.clone(), task.clone(), auto.clone());
                std::thread::spawn(move || {
                    let cpu_at_open = own_cpu_ns();
                    let mut first = ThreadClock::open(&hybrid);
                    let mut second = ThreadClock::open(&task);
                    let mut third = ThreadClock::open(&auto);
                    assert_eq!(first.kind(), ClockKind::TscHybrid);
                    assert_eq!(second.kind(), ClockKind::TaskClock);
                    assert!(
                        !first.holds_perf_event() && !second.holds_perf_event(),
                        "a clock that was never read holds a perf event"
                    );
                    // tsc-hybrid may step back a little at an exact read (it pays back steal).
                    let mut a = first.read();
                    let grows = batch % 25 == 0;
                    while grows && first.read() < a + 1_500_000 {}
                    let mut seen = Vec::new();
                    for _ in 0..5 {
                        let slept = std::time::Instant::now();
                        std::thread::sleep(std::time::Duration::from_micros(50));
                        let b = first.read();
                        seen.push((slept.elapsed().as_nanos(), b - a.min(b)));
                        assert!(b + MAX_STEP_BACK_NS >= a, "{a} then {b}");
                        a = b;
                    }
                    // A thread preempted more than 4 times per ms of its CPU (a loaded host)
                    // stays on the gate instead: tsc-gated from then on. One that did not spin
                    // grows up only if it really ran 1 ms (a loaded host's page reclaim can make
                    // a sleep cost that much CPU).
                    let stayed = first.kind() == ClockKind::TscGated;
                    let ran = own_cpu_ns() - cpu_at_open;
                    let may_grow = grows || ran >= GROW_AFTER_CPU_NS;
                    assert!(
                        (first.holds_perf_event() && may_grow)
                            || (!first.holds_perf_event() && (!grows || stayed)),
                        "1.5 ms of CPU did not make tsc-hybrid grow up, or sleeps did: now {:?} ({:?}), {} switch \
                         rebases, {} resamples, {ran} ns of the thread's CPU since open; (wall ns, clock ns) \
                         per sleep: {seen:?}",
                        first.kind(),
                        first.fallback_reason(),
                        first.switch_rebases(),
                        first.resamples(),
                    );
                    let c = second.read();
                    assert!(second.holds_perf_event());
                    assert!(c <= second.read() + MAX_STEP_BACK_NS);
                    third.read();
                    let opened = open_fd_count();
                    first.close();
                    first.close(); // idempotent
                    if i % 2 == 0 {
                        second.close();
                    } // else: dropping closes it
                    drop(third);
                    opened
                })
            })
            .collect();
        for worker in workers {
            peak = peak.max(worker.join().expect("worker panicked"));
        }
        if batch == 0 {
            assert!(
                peak > before,
                "the clocks opened no descriptors: nothing was tested"
            );
        }
    }
    let after = open_fd_count();
    assert_eq!(
        before, after,
        "descriptors leaked over 10,000 threads (peak {peak})"
    );
}
