//! Start-up probing: which clock works here, and why.

use super::cycles::CyclesClock;
use super::perf::EventKind;
use super::task_clock::TaskClock;
use super::tsc::{self, TscClock};
use super::tsc_hybrid::TscHybridClock;
use super::warn::{warn_once, REQUEST_CLASS};
use super::{ClockChoice, ClockKind, ClockRequest};

/// The clock a thread uses when its own clock cannot be opened.
pub(crate) fn per_thread_fallback(kind: ClockKind) -> ClockKind {
    match kind {
        ClockKind::Cycles if tsc::invariant().is_ok() => ClockKind::TscHybrid,
        _ => ClockKind::ThreadCputime,
    }
}

fn paranoid_level() -> String {
    std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .map(|text| text.trim().to_string())
        .unwrap_or_else(|_| "unknown".into())
}

fn calibrated() -> Result<&'static tsc::Calibration, String> {
    if !tsc::available() {
        return Err("no TSC on this architecture".into());
    }
    tsc::calibration().ok_or_else(|| "TSC could not be calibrated".into())
}

fn tsc_text(calibration: &tsc::Calibration) -> String {
    format!(
        "{} {:.3} MHz from {}",
        crate::arch::COUNTER_NAME,
        calibration.hz as f64 / 1e6,
        calibration.source
    )
}

/// Check that `kind` works on this machine, opening (and closing) it on the calling thread.
/// `for_auto` applies auto's stricter rules (cycles only with rdpmc).
fn probe(kind: ClockKind, for_auto: bool) -> Result<ClockChoice, String> {
    let choice = |reason: String, tsc_hz: Option<u64>| ClockChoice {
        kind,
        reason,
        tsc_hz,
    };
    match kind {
        ClockKind::Cycles => {
            if !crate::arch::counter_rate_is_core_clock() {
                return Err(format!(
                    "{} does not tick at the core clock on {}, so cycles cannot become ns",
                    crate::arch::COUNTER_NAME,
                    crate::arch::NAME
                ));
            }
            let calibration = calibrated().map_err(|why| format!("{why} (needed for rdpmc)"))?;
            let mut clock = CyclesClock::open(calibration.scale()).map_err(|e| e.to_string())?;
            let found = clock.probe();
            clock.close();
            if for_auto && !found.user_rdpmc {
                return Err(if crate::arch::user_pmc_available() {
                    "cap_user_rdpmc is 0, every read would be a read() syscall".into()
                } else {
                    format!(
                        "no user-space counter read on {} (rdpmc is x86-64 only), every read would \
                         be a read() syscall",
                        crate::arch::NAME
                    )
                });
            }
            let counted = if found.user_only {
                format!(
                    "user-space cycles only (perf_event_paranoid={})",
                    paranoid_level()
                )
            } else {
                "user and kernel cycles".to_string()
            };
            let read = if found.user_rdpmc {
                format!(
                    "read with rdpmc through the mmap page (seqlock, pmc_width {})",
                    found.pmc_width
                )
            } else {
                "read with read() because cap_user_rdpmc is 0".to_string()
            };
            Ok(choice(
                format!(
                    "per-thread PERF_COUNT_HW_CPU_CYCLES, {counted}, {read}; ns = cycles at the \
                     {} (approximate when the core clock differs from nominal)",
                    tsc_text(calibration)
                ),
                Some(calibration.hz),
            ))
        }
        ClockKind::TscHybrid => {
            let evidence = tsc::invariant().map_err(str::to_string)?;
            let calibration = calibrated()?;
            let mut clock =
                TscHybridClock::open_grown(calibration.scale()).map_err(|e| e.to_string())?;
            let detects_switches = clock.switch_moves_lock();
            clock.close();
            if !detects_switches {
                return Err(
                    "the task-clock mmap page seqlock did not move across a sleep on this \
                            kernel, so context switches would go unnoticed"
                        .into(),
                );
            }
            Ok(choice(
                format!(
                    "{counter} deltas while the thread's task-clock mmap page seqlock is unchanged, exact \
                     CLOCK_THREAD_CPUTIME_ID read after a context switch (checked: the lock moves \
                     across a sleep) and after 250 us of uninterrupted running (bounds hypervisor steal); \
                     invariant {counter} ({evidence}); {}",
                    tsc_text(calibration),
                    counter = crate::arch::COUNTER_NAME,
                ),
                Some(calibration.hz),
            ))
        }
        ClockKind::TaskClock => {
            let mut clock = TaskClock::open_now().map_err(|e| e.to_string())?;
            clock.close();
            let counted = if EventKind::SwTaskClock.user_only() {
                " (opened with exclude_kernel for perf_event_paranoid; task-clock still counts all CPU time)"
            } else {
                ""
            };
            Ok(choice(
                format!("per-thread PERF_COUNT_SW_TASK_CLOCK, one read() per read{counted}"),
                None,
            ))
        }
        ClockKind::ThreadCputime => Ok(choice(
            "clock_gettime(CLOCK_THREAD_CPUTIME_ID), one syscall per read".into(),
            None,
        )),
        ClockKind::Tsc => {
            let calibration = calibrated()?;
            let _ = TscClock::open(calibration.scale());
            let invariance = match tsc::invariant() {
                Ok(evidence) => format!("invariant {} ({evidence})", crate::arch::COUNTER_NAME),
                Err(why) => format!("WARNING {why}: deltas may not even be wall time"),
            };
            Ok(choice(
                format!(
                    "wall-clock {} deltas: time a native spends blocked or descheduled counts as \
                     CPU time; {invariance}; {}",
                    crate::arch::COUNTER_NAME,
                    tsc_text(calibration)
                ),
                Some(calibration.hz),
            ))
        }
    }
}

fn auto(verb: &str, skipped: &mut Vec<String>, order: &[ClockKind]) -> ClockChoice {
    for &kind in order {
        match probe(kind, true) {
            Ok(mut choice) => {
                let first = if skipped.is_empty() {
                    String::new()
                } else {
                    format!(" (not used: {})", skipped.join("; "))
                };
                choice.reason = format!("{verb} {}{first}: {}", kind.name(), choice.reason);
                return choice;
            }
            Err(why) => skipped.push(format!("{} unavailable: {why}", kind.name())),
        }
    }
    unreachable!("thread-cputime always probes fine")
}

pub(crate) fn choose(request: ClockRequest) -> ClockChoice {
    const AUTO_ORDER: [ClockKind; 3] = [
        ClockKind::Cycles,
        ClockKind::TscHybrid,
        ClockKind::ThreadCputime,
    ];
    match request {
        ClockRequest::Auto => auto("auto picked", &mut Vec::new(), &AUTO_ORDER),
        ClockRequest::Exactly(kind) => match probe(kind, false) {
            Ok(choice) => choice,
            Err(why) => {
                let rest: &[ClockKind] = match kind {
                    ClockKind::Cycles => &AUTO_ORDER[1..],
                    _ => &AUTO_ORDER[2..],
                };
                let mut skipped = vec![format!(
                    "clock={} requested but unavailable: {why}",
                    kind.name()
                )];
                let choice = auto("fell back to", &mut skipped, rest);
                warn_once(kind, REQUEST_CLASS, || {
                    format!(
                        "nativeacct: clock={} unavailable ({why}); using {}",
                        kind.name(),
                        choice.kind.name()
                    )
                });
                choice
            }
        },
    }
}
