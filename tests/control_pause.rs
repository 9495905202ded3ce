//! How long `nativeacct dump` stops a running Java thread (the target is at most 10 ms).

#[path = "control/support.rs"]
mod support;

use std::time::{Duration, Instant};
use support::*;

/// How long dumps stop a Java thread. A "staller" thread records its longest gap between two
/// looks at the clock, and (from the kernel's schedstat) the longest time around such a gap that
/// it was neither running nor waiting for a CPU: stopped by something, not preempted. On a
/// shared 2-core machine the gaps are mostly the scheduler's, so they are only printed; the
/// stopped time is asserted: at most 10 ms more over 20 dumps than over as long without any
/// (safepoints stop the thread in both).
#[test]
fn dump_pause_is_short() {
    let dir = scratch("pause");
    let report = dir.join("final.json");
    let agent = agent_to(&report, ",quiet");
    let mut service = Service::start(&java_home(), &[agent], &["2", "1500", "50", "stall"], &dir);
    let pid = service.pid().to_string();
    service.ready();
    service.go();
    service.ready();
    let (quiet_gap, quiet_stopped) = service.last_stall_ns.unwrap();
    service.go();
    let mut dumps = 0;
    let mut longest_dump = Duration::ZERO;
    // The worker runs its 1.5 s CPU phase meanwhile; dump as long as it runs (at most 20 times).
    let began = Instant::now();
    while dumps < 20 && began.elapsed() < Duration::from_secs(30) {
        let t = Instant::now();
        nativeacct_ok(
            &dir,
            &["dump", &pid, &format!("file=d{dumps}"), "format=json"],
        );
        longest_dump = longest_dump.max(t.elapsed());
        dumps += 1;
        std::thread::sleep(Duration::from_millis(20));
    }
    service.ready();
    let (dump_gap, dump_stopped) = service.last_stall_ns.unwrap();
    service.finish_ok();
    let ms = |ns: u64| ns as f64 / 1e6;
    println!(
        "dump pause: a spinning Java thread over {dumps} dumps: longest gap {:.2} ms, longest stopped (not running, not runnable) {:.2} ms; over as long without dumps: {:.2} ms / {:.2} ms; longest dump command {:.1} ms",
        ms(dump_gap),
        ms(dump_stopped),
        ms(quiet_gap),
        ms(quiet_stopped),
        longest_dump.as_secs_f64() * 1e3
    );
    assert!(
        dump_stopped <= quiet_stopped + 10_000_000,
        "dumps stopped the thread for {:.2} ms ({:.2} ms without dumps)",
        ms(dump_stopped),
        ms(quiet_stopped)
    );
}
