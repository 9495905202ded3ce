//! Start-up probing: which clock works here, and why.

use super::cycles::CyclesClock;
use super::perf::{errno_name, EventKind, OpenError};
use super::task_clock::TaskClock;
use super::tsc::{self, TscClock};
use super::tsc_gated::{how_switches_are_seen, TscGatedClock};
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

/// Why a clock cannot be used here; `perf_errno` when perf_event_open itself failed.
struct Skip {
    why: String,
    perf_errno: Option<i32>,
}

impl From<String> for Skip {
    fn from(why: String) -> Skip {
        Skip {
            why,
            perf_errno: None,
        }
    }
}

impl From<&str> for Skip {
    fn from(why: &str) -> Skip {
        why.to_string().into()
    }
}

impl From<OpenError> for Skip {
    fn from(error: OpenError) -> Skip {
        Skip {
            why: error.to_string(),
            perf_errno: (error.step == "perf_event_open").then_some(error.errno),
        }
    }
}

/// Why `perf_event_open` failed with `errno`, as a user who can change it needs to read it.
pub(crate) fn perf_denial(errno: i32) -> String {
    let name = errno_name(errno);
    match errno {
        libc::EPERM => format!(
            "perf_event_open is denied ({name}): a seccomp filter refuses it (the default profile of \
             Docker, Podman and CRI-O, and Kubernetes' RuntimeDefault, unless the container has \
             CAP_PERFMON or CAP_SYS_ADMIN) or a security module does"
        ),
        libc::EACCES => format!(
            "perf_event_open is denied ({name}): perf_event_paranoid is {} and the process lacks \
             CAP_PERFMON (kernels patched like Debian's and Ubuntu's deny every perf event to \
             unprivileged processes at 3 or more)",
            paranoid_level()
        ),
        libc::ENOSYS => format!(
            "perf_event_open does not exist here ({name}): a sandbox such as gVisor or an emulator \
             such as qemu-user, or a kernel without perf events"
        ),
        _ => format!("perf_event_open failed ({name})"),
    }
}

/// The errno of a perf_event_open that was denied (EPERM, EACCES, ENOSYS); ENOENT (no PMU) and
/// the like are no denial.
fn denial(perf_errno: Option<i32>) -> Option<i32> {
    perf_errno.filter(|errno| matches!(*errno, libc::EPERM | libc::EACCES | libc::ENOSYS))
}

/// What running without perf events costs with `kind`, the clock auto fell back to.
fn cost_without_perf(kind: ClockKind) -> String {
    match kind {
        ClockKind::TscGated => format!(
            "cost: about that of tsc-hybrid, one counter read per crossing; {}",
            how_switches_are_seen()
        ),
        _ => "cost: one CLOCK_THREAD_CPUTIME_ID system call (~0.5 us) per crossing, which makes a \
              crossing-heavy program (JNA callbacks) run many times longer"
            .to_string(),
    }
}

/// Check that `kind` works on this machine, opening (and closing) it on the calling thread.
/// `for_auto` applies auto's stricter rules (cycles only with rdpmc).
fn probe(kind: ClockKind, for_auto: bool) -> Result<ClockChoice, Skip> {
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
                )
                .into());
            }
            let calibration = calibrated().map_err(|why| format!("{why} (needed for rdpmc)"))?;
            let mut clock = CyclesClock::open(calibration.scale())?;
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
                    .into()
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
            let evidence = tsc::invariant()?;
            let calibration = calibrated()?;
            let mut clock = TscHybridClock::open(calibration.scale())?;
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
            let mut clock = TaskClock::open_now()?;
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
        ClockKind::TscGated => {
            let evidence = tsc::invariant()?;
            let calibration = calibrated()?;
            let mut clock = TscGatedClock::open(calibration.scale());
            clock.read();
            clock.close();
            Ok(choice(
                format!(
                    "{}; needs no perf event; invariant counter ({evidence}); {}",
                    how_switches_are_seen(),
                    tsc_text(calibration)
                ),
                Some(calibration.hz),
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

/// The first clock of `order` that probes fine. When perf events were denied on the way, the
/// reason says why (`denied`: the errno of a perf_event_open seen failing) and what it costs.
fn auto(
    verb: &str,
    skipped: &mut Vec<String>,
    mut denied: Option<i32>,
    order: &[ClockKind],
) -> ClockChoice {
    for &kind in order {
        match probe(kind, true) {
            Ok(mut choice) => {
                let first = if skipped.is_empty() {
                    String::new()
                } else {
                    format!(" (not used: {})", skipped.join("; "))
                };
                let without_perf = match denied {
                    Some(errno) if !kind.uses_perf_events() => format!(
                        ". No perf events: {}; {}",
                        perf_denial(errno),
                        cost_without_perf(kind)
                    ),
                    _ => String::new(),
                };
                choice.reason = format!(
                    "{verb} {}{first}: {}{without_perf}",
                    kind.name(),
                    choice.reason
                );
                return choice;
            }
            Err(skip) => {
                denied = denied.or(denial(skip.perf_errno));
                skipped.push(format!("{} unavailable: {}", kind.name(), skip.why));
            }
        }
    }
    unreachable!("thread-cputime always probes fine")
}

pub(crate) fn choose(request: ClockRequest) -> ClockChoice {
    const AUTO_ORDER: [ClockKind; 4] = [
        ClockKind::Cycles,
        ClockKind::TscHybrid,
        ClockKind::TscGated,
        ClockKind::ThreadCputime,
    ];
    match request {
        ClockRequest::Auto => auto("auto picked", &mut Vec::new(), None, &AUTO_ORDER),
        ClockRequest::Exactly(kind) => match probe(kind, false) {
            Ok(choice) => choice,
            Err(Skip { why, perf_errno }) => {
                let rest: &[ClockKind] = match kind {
                    ClockKind::Cycles => &AUTO_ORDER[1..],
                    ClockKind::TscGated => &AUTO_ORDER[3..],
                    _ => &AUTO_ORDER[2..],
                };
                let mut skipped = vec![format!(
                    "clock={} requested but unavailable: {why}",
                    kind.name()
                )];
                let choice = auto("fell back to", &mut skipped, denial(perf_errno), rest);
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
