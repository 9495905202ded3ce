//! Periodic `.hlog` snapshots (`interval=`). A plain Rust thread (not attached to the VM) wakes every
//! interval, copies the process histograms and appends what changed since the last copy to a
//! temporary file next to the `.hlog` path; at VMDeath the final interval is appended from the final
//! histograms and the file is renamed into place, so the `.hlog` path never holds a partial log (after a
//! crash the temporary file keeps the intervals written so far).
//!
//! Each interval also carries the process's CPU time per part (`cpu.*` tags, see [`hlog`]), from a
//! full scan of the threads at each snapshot ([`crate::process::snapshot`]).
//!
//! Samples reach the histograms when a thread's sample buffer is drained (every
//! `histograms::LOG_CAPACITY` crossings, at thread end and at VMDeath), so a sample is logged in the
//! interval in which it was drained, not necessarily the one in which the call ended.

use crate::histograms::{self, Histograms};
use crate::process::CpuSnapshot;
use crate::report::hlog;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime};

struct LogState {
    file: File,
    /// The temporary file renamed to the `.hlog` path at the end; `None` when the path is written in
    /// place (`/dev/null`, a FIFO, a symlink: see `report::writes_in_place`).
    temp: Option<PathBuf>,
    started: Instant,
    /// End of the last interval written, since `started`.
    last_end: Duration,
    /// Cumulative histograms at `last_end`.
    previous: Option<Histograms>,
    /// Cumulative process CPU time at `last_end`.
    previous_cpu: CpuSnapshot,
    top: usize,
}

static STATE: Mutex<Option<LogState>> = Mutex::new(None);

fn lock() -> std::sync::MutexGuard<'static, Option<LogState>> {
    STATE.lock().unwrap_or_else(|e| e.into_inner())
}

fn temp_path(path: &Path) -> PathBuf {
    let mut name = path
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_default();
    name.push(format!(".partial-{}", std::process::id()));
    path.with_file_name(name)
}

/// Open the log for `path` and, with `every`, start the snapshot thread. Called once at start-up.
pub fn start(path: &Path, every: Option<Duration>, top: usize) -> std::io::Result<()> {
    let (temp, mut file) = if crate::report::writes_in_place(path) {
        (None, crate::report::open_in_place(path)?)
    } else {
        let temp = temp_path(path);
        let file = File::create(&temp)?;
        (Some(temp), file)
    };
    file.write_all(&hlog::header(SystemTime::now()))?;
    *lock() = Some(LogState {
        file,
        temp,
        started: Instant::now(),
        last_end: Duration::ZERO,
        previous: None,
        previous_cpu: CpuSnapshot::default(),
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

fn append(state: &mut LogState, current: Histograms, cpu: CpuSnapshot) -> std::io::Result<()> {
    let now = state.started.elapsed();
    let names = crate::methods::snapshot();
    let name_of = |id: u32| {
        names
            .get(id as usize)
            .map(|r| format!("{}.{}{}", r.class.replace('/', "."), r.name, r.descriptor))
            .unwrap_or_else(|| format!("id{id}"))
    };
    let lines = hlog::encode_interval(
        &current,
        state.previous.as_ref(),
        state.last_end,
        now.saturating_sub(state.last_end),
        state.top,
        &name_of,
        &cpu.since(&state.previous_cpu),
    );
    state.file.write_all(&lines)?;
    state.file.flush()?;
    state.last_end = now;
    state.previous = Some(current);
    state.previous_cpu = cpu;
    Ok(())
}

/// One periodic snapshot; false once the log is finished (the thread then stops).
fn tick() -> bool {
    let mut guard = lock();
    let Some(state) = guard.as_mut() else {
        return false;
    };
    let current = histograms::snapshot();
    if current.is_closed() {
        // VMDeath has taken the final histograms; `finish` writes the last interval from them.
        return true;
    }
    let cpu = crate::process::snapshot(&crate::merge::live_java());
    if let Err(e) = append(state, current, cpu) {
        crate::diag::line(&format!("error: interval log: {e}; no more intervals"));
        *guard = None;
        return false;
    }
    true
}

/// Append the final interval from `last` (the closed histograms) and `cpu` (the final process CPU
/// time) and move the log to `path`.
pub fn finish(
    last: &Histograms,
    cpu: &CpuSnapshot,
    top: usize,
    path: &Path,
) -> std::io::Result<()> {
    let mut guard = lock();
    let mut state = match guard.take() {
        Some(state) => state,
        // No periodic log was started: the whole run is one interval.
        None => {
            drop(guard);
            start(path, None, top)?;
            guard = lock();
            guard
                .take()
                .ok_or_else(|| std::io::Error::other("interval log vanished"))?
        }
    };
    let result = append(&mut state, last.clone(), *cpu);
    // In place (a device or FIFO): nothing to sync or rename.
    let Some(temp) = &state.temp else {
        return result;
    };
    let result = result
        .and_then(|_| state.file.sync_all())
        .and_then(|_| std::fs::rename(temp, path));
    if result.is_err() {
        let _ = std::fs::remove_file(temp);
    }
    result
}
