//! Periodic `.hlog` snapshots (`interval=`). A plain Rust thread (not attached to the VM) wakes every
//! interval, copies the process histograms and appends what changed since the last copy to a
//! temporary file next to the `.hlog` path (`BASE.hlog.partial-XXXXXXXXXX`: created exclusively, an
//! unpredictable name, mode 0600, see [`crate::outputs`]); at VMDeath the final interval is appended
//! from the final histograms and the file is put into place, so the `.hlog` path never holds a partial
//! log (after a crash the temporary file keeps the intervals written so far).
//!
//! Each interval also carries the process's CPU time per part (`cpu.*` tags, see [`hlog`]), from a
//! full scan of the threads at each snapshot ([`crate::process::snapshot`]), and the JNI boundary's
//! parts (`boundary.*` tags): each thread's time and boundary samples in the interval, from the
//! merged totals ([`crate::merge::snapshot`]), split as the report splits a thread.
//!
//! Each copy includes the latency slots of the threads still running, so a crossing is logged in the
//! interval in which it ended.

use crate::histograms::Histograms;
use crate::outputs::{Pending, Target, TempKind};
use crate::process::CpuSnapshot;
use crate::report::{self, hlog, ThreadRows};
use std::io::Write;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime};

struct LogState {
    /// The temporary file, or the `file=` written in place (`/dev/null`, a FIFO).
    log: Pending,
    started: Instant,
    /// End of the last interval written, since `started`.
    last_end: Duration,
    /// Cumulative histograms at `last_end`.
    previous: Option<Histograms>,
    /// Cumulative process CPU time at `last_end`.
    previous_cpu: CpuSnapshot,
    /// The Java threads' rows at `last_end` (their time and boundary samples so far).
    previous_threads: ThreadRows,
    top: usize,
}

static STATE: Mutex<Option<LogState>> = Mutex::new(None);

fn lock() -> std::sync::MutexGuard<'static, Option<LogState>> {
    crate::sync::lock(&STATE)
}

/// Open the log for `target` and, with `every`, start the snapshot thread. Called once at start-up.
pub(crate) fn start(target: &Target, every: Option<Duration>, top: usize) -> std::io::Result<()> {
    let mut log = Pending::begin(target, TempKind::Partial)?;
    log.file().write_all(&hlog::header(SystemTime::now()))?;
    *lock() = Some(LogState {
        log,
        started: Instant::now(),
        last_end: Duration::ZERO,
        previous: None,
        previous_cpu: CpuSnapshot::default(),
        previous_threads: ThreadRows::default(),
        top,
    });
    if let Some(every) = every {
        std::thread::Builder::new()
            .name("nativeacct-interval".into())
            .spawn(move || {
                crate::process::register_agent_thread();
                loop {
                    std::thread::sleep(every);
                    if !tick() {
                        return;
                    }
                }
            })?;
    }
    Ok(())
}

/// Append the interval since the last one; `threads`: the Java threads' rows now (None: unknown,
/// the interval's boundary is logged as 0 and counted in the next one).
fn append(
    state: &mut LogState,
    current: Histograms,
    cpu: CpuSnapshot,
    threads: Option<ThreadRows>,
) -> std::io::Result<()> {
    let now = state.started.elapsed();
    let names = crate::methods::snapshot();
    let name_of = |id: u32| {
        names
            .get(id as usize)
            .map(|r| format!("{}.{}{}", r.class.replace('/', "."), r.name, r.descriptor))
            .unwrap_or_else(|| format!("id{id}"))
    };
    let boundary = threads.as_ref().map_or([0; 5], |now| {
        report::boundary_parts_between(now, &state.previous_threads)
    });
    let lines = hlog::encode_interval(
        &current,
        state.previous.as_ref(),
        state.last_end,
        now.saturating_sub(state.last_end),
        state.top,
        &name_of,
        &cpu.since(&state.previous_cpu),
        &boundary,
    );
    let file = state.log.file();
    file.write_all(&lines)?;
    file.flush()?;
    state.last_end = now;
    state.previous = Some(current);
    state.previous_cpu = cpu;
    if let Some(threads) = threads {
        state.previous_threads = threads;
    }
    Ok(())
}

/// One periodic snapshot; false once the log is finished (the thread then stops).
fn tick() -> bool {
    let mut guard = lock();
    let Some(state) = guard.as_mut() else {
        return false;
    };
    let current = crate::merge::histograms_so_far();
    if current.is_closed() {
        // VMDeath has taken the final histograms; `finish` writes the last interval from them.
        return true;
    }
    let cpu = crate::process::snapshot(&crate::merge::live_java());
    let threads = crate::merge::snapshot().map(|t| (t.threads, t.other_threads));
    if let Err(e) = append(state, current, cpu, threads) {
        crate::diag::line(&format!("error: interval log: {e}; no more intervals"));
        *guard = None;
        return false;
    }
    true
}

/// Append the final interval from `last` (the closed histograms), `cpu` (the final process CPU
/// time) and `threads` (the report's thread rows), and put the log in place as `target` (the name planned at start-up, or the same under a
/// base that moved since). Returns the path written.
pub(crate) fn finish(
    last: &Histograms,
    cpu: &CpuSnapshot,
    threads: ThreadRows,
    top: usize,
    target: &Target,
) -> std::io::Result<PathBuf> {
    let mut guard = lock();
    let mut state = match guard.take() {
        Some(state) => state,
        // No periodic log was started: the whole run is one interval.
        None => {
            drop(guard);
            start(target, None, top)?;
            guard = lock();
            guard
                .take()
                .ok_or_else(|| std::io::Error::other("interval log vanished"))?
        }
    };
    drop(guard);
    append(&mut state, last.clone(), *cpu, Some(threads))?;
    // On an error the temporary file is removed as `state` drops.
    state.log.finish(target)
}
