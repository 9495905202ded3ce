//! Where the whole process's CPU time goes: the Java threads' bytecode and native time, the JIT
//! compilers, the GC, the rest of the VM, threads that native code started, and the agent itself.
//!
//! The OS accounts every thread's CPU time; the parts add up to the process's figure
//! (`CLOCK_PROCESS_CPUTIME_ID`, read last, at VMDeath):
//! - **Java threads** are known exactly: each context reads its thread's CPU clock on its own thread
//!   when it opens and when it retires ([`context_opened`], [`context_closed`]), and that CPU is split
//!   between bytecode and native in the proportion the agent's clock measured, interval by interval
//!   (`Record::commit`).
//! - **Every other thread** is found by a light scan of `/proc/self/task` (a background thread,
//!   every [`DEFAULT_SCAN_PERIOD`](crate::options::DEFAULT_SCAN_PERIOD)) that reads each thread's CPU clock by tid (one `clock_gettime`,
//!   no file read) and its name once or twice, and remembers both. The threads with an open context
//!   are skipped.
//! - **Every thread's end** (`exits=hook`): `thread_hook` replaces `pthread_create` in the loaded
//!   libraries, so that every thread started after the agent loaded arms its [`EXIT_PROBE`] first;
//!   as the thread exits the probe reads its CPU clock and keeps its record, also for a thread that
//!   lived and ended between two scans. Without it (`exits=scan`), a non-Java thread that ends keeps
//!   what the last scan saw, and the rest is `unattributed`.
//! - **A thread's teardown** after its probe (the C library's and the kernel's exit work) is
//!   counted by a task-clock perf event the probe opens last (`RestOfThread`), whose final count
//!   the next scan adds to the thread's part once the thread is gone: for at most 1,000 threads and
//!   100 Java threads a second (each costs the agent about 15 µs). Past that budget, or where perf
//!   events are denied, the teardown is `unattributed`, and the notes say so.
//! - **GC pauses run on the VM thread** (all of a Serial collection): the CPU the VM thread spends
//!   between JVMTI GarbageCollectionStart and GarbageCollectionFinish moves from `vm_other` to `gc`.
//!
//! A thread's part comes from what is known about it, in this order: nativeacct's own threads
//! (registered by tid) are `agent`; a name of a JIT or GC thread decides for the whole thread (see
//! `names.rs`); CPU inside contexts is Java; the rest of a thread goes by its name (`vm_other`, or
//! Java bytecode for the JDK's Reference Handler, Finalizer and Common-Cleaner), else by its story:
//! the thread the VM was created on (the VM's start-up on it) and the process's first thread (the
//! launcher) are `vm_other`; a thread that entered Java from native code (JNI AttachCurrentThread)
//! is a native thread before it attached and after it detached; a thread started by the VM spends
//! its time before JVMTI ThreadStart in the VM (`vm_other`), as does a thread libjvm started that
//! never ran Java (seen by the hook); any other thread is `native_threads`.
//!
//! Files: the hooks and the section here; `procfs` (CPU clocks and /proc), `record` (one thread's
//! record and its split into parts), `tracker` (every record under one lock, and the scan),
//! `model` (the section as reported), `names` (HotSpot's thread names), `thread_hook` (the
//! `pthread_create` hook).

mod model;
mod names;
mod thread_hook;

pub(crate) use model::LiveJava;
pub(crate) use model::{split_exactly, split_two, CpuSnapshot, Part, Parts, ProcessCpu, ThreadRow};
use names::{classify, NameClass};
pub(crate) use since::since;

use crate::clock::thread_cpu_ns;
use crate::thread_exit::{Armed, ExitHook};
use std::collections::{HashMap, HashSet};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

mod procfs;
mod record;
mod since;
mod tracker;
use procfs::*;
use record::*;
use thread_hook::Origin;
use tracker::*;

/// Threads that ended before VMDeath get their own rows up to this many; the rows of later ones are
/// summed per part into rows named [`OTHER_ENDED_THREADS`] with tid 0 (a program that churns
/// through millions of threads keeps a bounded report).
const ENDED_THREADS_LISTED: u64 = 10_000;
const OTHER_ENDED_THREADS: &str = "(other ended threads)";

/// The scan waits at least this many times its own CPU time between two looks, so that it never
/// costs more than 0.1 % of one core (a process with thousands of threads is scanned less often).
const SCAN_COST_RATIO: u64 = 1000;
/// Wall time of the exit probe's work up to which it is counted as its CPU time (see
/// [`exit_work_ns`]): it takes 1-3 µs on the CPU, so a longer stretch was off it.
const EXIT_WORK_WALL_BOUND: Duration = Duration::from_micros(20);

// ---------------------------------------------------------------------------------------------------
// Hooks.

/// Start the background scan (at Agent_OnLoad); `None` (`scan=off`): no periodic scan, only the
/// final one and those of `interval=` snapshots. With `exit_hook` (`exits=hook`), every thread
/// started from now on is seen as it ends (see `thread_hook`).
pub(crate) fn start(period: Option<Duration>, exit_hook: bool) {
    let method = if exit_hook {
        let covered = thread_hook::install();
        if covered.vm_hooked {
            Method::ExitHook
        } else {
            Method::Scan("libjvm's pthread_create could not be replaced")
        }
    } else {
        Method::Scan("exits=scan")
    };
    {
        let mut t = tracker();
        t.scan_period = period;
        t.method = method;
        if method == Method::ExitHook {
            t.reserve_exit_notes();
        }
    }
    let Some(period) = period else {
        return;
    };
    let spawned = std::thread::Builder::new()
        .name("nativeacct-proc".into())
        .spawn(move || {
            register_agent_thread();
            loop {
                let began = own_cpu_ns();
                let looked = std::panic::catch_unwind(|| {
                    let mut t = tracker();
                    if t.closed.is_some() {
                        return false;
                    }
                    t.scan(None, false);
                    true
                });
                if exit_hook {
                    // Libraries that native code loaded itself (the VM's loads are hooked at once).
                    crate::diag::no_unwind(&crate::diag::PROCESS_EXIT, (), thread_hook::refresh);
                }
                match looked {
                    Ok(true) => {}
                    Ok(false) => return,
                    Err(_) => {
                        crate::diag::line("internal error in the process CPU scan; it stops");
                        return;
                    }
                }
                let cost = own_cpu_ns().saturating_sub(began);
                std::thread::sleep(period.max(Duration::from_nanos(cost * SCAN_COST_RATIO)));
            }
        });
    if let Err(e) = spawned {
        crate::diag::line(&format!(
            "process CPU scan not started ({e}); threads that end early are unattributed"
        ));
    }
}

/// The calling thread is one of nativeacct's own: its CPU time is the agent's, to its end (the
/// clock's probes and the report writers end before the VM).
pub(crate) fn register_agent_thread() {
    let tid = own_tid();
    tracker().agent_tids.insert(tid);
    thread_started(Origin::Native);
}

/// The VM is being created on the calling thread (Agent_OnLoad and VMInit run on it): its CPU time
/// outside its context is the VM's start-up.
pub(crate) fn note_vm_thread() {
    let tid = own_tid();
    tracker().vm_main_tid = Some(tid);
}

/// Reads the thread's CPU clock one last time as it exits, after the VM's teardown of it (a Java
/// thread's JVMTI ThreadEnd comes before that teardown, which would otherwise be lost to
/// `unattributed` when the thread ends between two scans). Armed on every thread started through
/// the hook and every thread that opens a context; it runs in a later round of the key destructors,
/// after the context's own exit guard and the thread-local destructors of the program's libraries.
static EXIT_PROBE: ExitHook = ExitHook::new(exit_probe);

/// What the exit probe keeps for its thread: who started it, when that was the hook, and its tid
/// once a context opened on it (0 before: the probe calls `gettid` then).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct ExitWord {
    started_by: Option<Origin>,
    tid: i32,
}

impl ExitWord {
    fn pack(self) -> Armed {
        let origin = match self.started_by {
            None => 0,
            Some(Origin::Vm) => 1,
            Some(Origin::Native) => 2,
        };
        Armed::new((self.tid as u32 as usize) << 2 | origin)
    }

    fn unpack(word: Armed) -> ExitWord {
        let payload = word.payload();
        ExitWord {
            started_by: match payload & 3 {
                1 => Some(Origin::Vm),
                2 => Some(Origin::Native),
                _ => None,
            },
            tid: (payload >> 2) as u32 as i32,
        }
    }

    /// The calling thread's word so far (nothing known if unarmed).
    fn current() -> ExitWord {
        EXIT_PROBE.armed().map_or(
            ExitWord {
                started_by: None,
                tid: 0,
            },
            ExitWord::unpack,
        )
    }
}

/// A thread started through the hook runs its first instruction: arm its exit probe.
fn thread_started(origin: Origin) {
    EXIT_PROBE.arm(
        ExitWord {
            started_by: Some(origin),
            tid: 0,
        }
        .pack(),
    );
}

unsafe extern "C" fn exit_probe(value: *mut std::ffi::c_void) {
    if let Some(word) = EXIT_PROBE.take(value, true) {
        let word = ExitWord::unpack(word);
        crate::diag::no_unwind(&crate::diag::PROCESS_EXIT, (), || thread_exiting(word));
    }
}

/// The calling thread is exiting: what it used since it was last seen is time outside contexts.
/// A Java thread (its context told the probe its tid) leaves a note for the tracker, unless its
/// teardown may be counted this second; any other thread is placed at once. The work done here
/// after the thread's last read is the agent's.
fn thread_exiting(word: ExitWord) {
    let java = word.tid != 0;
    let tid = match word.tid {
        0 => own_tid(),
        tid => tid,
    };
    // Read before the lock, which then is held shorter: a scan that saw a later figure meanwhile
    // has placed the time up to it already (`observe_outside` only adds what is new).
    let cpu = own_cpu_ns();
    let note = ExitNote {
        tid,
        started_by: word.started_by,
        cpu,
    };
    if java && !tracker::TEARDOWN_BUDGET.left(true) && tracker::leave_exit_note(note) {
        return;
    }
    let began = std::time::Instant::now();
    let mut t = tracker();
    if t.closed.is_some() {
        return;
    }
    t.apply_exit_notes();
    t.thread_exited(note, Some(own_comm));
    t.exit_work_ns += exit_work_ns(cpu, began);
}

/// The exit probe's own CPU since it read the thread's clock (`cpu`, at `began`). A thread uses no
/// more CPU than wall time passes: a short stretch counts as it is, without a second read of the
/// CPU clock (a system call, about 1 µs of every ending thread). A long one was off the CPU for a
/// while (a wait for the lock, a preemption) and reads the clock.
fn exit_work_ns(cpu: u64, began: std::time::Instant) -> u64 {
    let wall = began.elapsed();
    if wall < EXIT_WORK_WALL_BOUND {
        wall.as_nanos() as u64
    } else {
        own_cpu_ns().saturating_sub(cpu)
    }
}

/// A context was opened on the calling thread (tid `tid`); its clock read the thread's CPU time
/// `cpu_at_open` just before, if it reads that clock.
pub(crate) fn context_opened(tid: i64, cpu_at_open: Option<u64>) {
    let tid = tid as i32;
    let word = ExitWord {
        tid,
        ..ExitWord::current()
    };
    EXIT_PROBE.arm(word.pack());
    let mut t = tracker();
    if t.closed.is_some() {
        return;
    }
    // No scan may have seen a later figure first: else read again, under the lock.
    let cpu = not_behind(&t, tid, cpu_at_open);
    let r = t.current(tid, cpu, true);
    // A thread seen before runs on: what it did since is time outside contexts.
    r.observe_outside(cpu);
    r.open = Some(OpenContext {
        cpu,
        bytecode_ns: 0,
        native_ns: 0,
    });
    r.had_context = true;
}

/// The calling thread's context retires with its final counters.
pub(crate) fn context_closed(
    tid: i64,
    name: Option<String>,
    bytecode_ns: u64,
    native_ns: u64,
    began_native: bool,
    cpu_at_finish: Option<u64>,
) {
    let tid = tid as i32;
    let mut t = tracker();
    if t.closed.is_some() {
        return;
    }
    let cpu = not_behind(&t, tid, cpu_at_finish);
    t.close_context(tid, cpu, [bytecode_ns, native_ns], began_native, name);
}

/// The calling thread's CPU time: `reading` (taken a moment ago) unless it is missing or behind
/// what the tracker has seen of the thread since, else a fresh read.
fn not_behind(t: &Tracker, tid: i32, reading: Option<u64>) -> u64 {
    match reading {
        Some(cpu) if t.records.get(&tid).is_none_or(|r| cpu >= r.cpu_seen) => cpu,
        _ => own_cpu_ns(),
    }
}

/// JVMTI GarbageCollectionStart, on the thread that runs the pause.
pub(crate) fn gc_pause_started() {
    let tid = own_tid();
    let cpu = own_cpu_ns();
    let mut pauses = gc_pauses();
    match pauses.iter_mut().find(|(t, _)| *t == tid) {
        Some((_, p)) => p.started = Some(cpu),
        None => pauses.push((
            tid,
            GcPause {
                started: Some(cpu),
                total: 0,
            },
        )),
    }
}

/// JVMTI GarbageCollectionFinish, on the thread that ran the pause.
pub(crate) fn gc_pause_finished() {
    let tid = own_tid();
    let cpu = own_cpu_ns();
    let mut pauses = gc_pauses();
    if let Some((_, p)) = pauses.iter_mut().find(|(t, _)| *t == tid) {
        if let Some(started) = p.started.take() {
            p.total += cpu.saturating_sub(started);
        }
    }
}

/// The cumulative figures now (a full scan): for `.hlog` intervals.
pub(crate) fn snapshot(live: &[LiveJava]) -> CpuSnapshot {
    let live = by_tid(live);
    let mut t = tracker();
    if let Some(done) = &t.closed {
        return CpuSnapshot {
            cpu_ns: done.cpu_ns,
            parts: done.parts,
        };
    }
    t.scan(Some(&live), false);
    let mut parts = t.parts_now();
    let cpu_ns = process_cpu_ns();
    parts.set(Part::Unattributed, cpu_ns.saturating_sub(parts.sum()));
    CpuSnapshot { cpu_ns, parts }
}

/// At VMDeath: the final scan and the `process` section. The process clock is read after every
/// thread, so it is at least their sum and `unattributed` (the remainder) is never negative.
pub(crate) fn close(live: &[LiveJava]) -> ProcessCpu {
    section(live, true)
}

/// The `process` section so far, for a partial report (`snapshot=`); the run goes on.
pub(crate) fn section_so_far(live: &[LiveJava]) -> ProcessCpu {
    section(live, false)
}

fn section(live: &[LiveJava], closing: bool) -> ProcessCpu {
    let live = by_tid(live);
    let mut t = tracker();
    if let Some(done) = &t.closed {
        return done.clone();
    }
    t.scan(Some(&live), true);
    if closing {
        t.place_teardowns(true);
    }
    let (mut rows, mut parts) = t.rows_and_parts();
    let mut cpu_ns = process_cpu_ns();
    let mut notes = Vec::new();
    let attributed = parts.sum();
    if cpu_ns < attributed {
        notes.push(format!(
            "process CPU: the process clock read {} ns less than its threads' sum; cpu_ns is that sum",
            attributed - cpu_ns
        ));
        cpu_ns = attributed;
    }
    parts.set(Part::Unattributed, cpu_ns - attributed);
    if let Method::Scan(why) = t.method {
        notes.push(format!(
            "process CPU: thread ends are seen by the scan only ({why}); what non-Java threads used after their last scan is unattributed"
        ));
    }
    if t.teardown_unmeasured > 0 {
        let why = match &t.teardown_error {
            Some(e) => format!("no task-clock perf event: {e}"),
            None => format!(
                "more than {} ending at once: one descriptor each",
                tracker::TEARDOWNS_PENDING
            ),
        };
        notes.push(format!(
            "process CPU: the teardown of {} threads after their exit probe (the C library's and the kernel's exit work, about 5 to 30 µs each) is unattributed ({why})",
            t.teardown_unmeasured
        ));
    }
    if t.teardown_over_budget > 0 {
        let [others, java] = tracker::TEARDOWNS_PER_S;
        notes.push(format!(
            "process CPU: the teardown of {} threads after their exit probe is unattributed: at most {others} threads and {java} Java threads a second have it counted (about 15 µs of agent CPU each)",
            t.teardown_over_budget
        ));
    }
    if let Some(e) = &t.list_error {
        notes.push(format!(
            "process CPU: threads could not be listed ({e}); only Java threads are attributed"
        ));
    }
    rows.sort_by(|a, b| {
        b.cpu_ns
            .cmp(&a.cpu_ns)
            .then(a.tid.cmp(&b.tid))
            .then(a.part.cmp(&b.part))
    });
    let section = ProcessCpu {
        cpu_ns,
        parts,
        threads: rows,
        scan_period_ms: t.scan_period.map(|p| p.as_millis() as u64),
        scans: t.scans,
        threads_ended: t.ended_threads,
        method: t.method.key().to_string(),
        libraries_hooked: thread_hook::coverage().libraries_hooked,
        notes,
    };
    if closing {
        t.closed = Some(section.clone());
        thread_hook::remove();
    }
    section
}

/// Benchmark entry for `bench/`: the CPU time of one periodic scan of this process's threads, in ns
/// (the mean of `scans` scans, measured on the calling thread's own clock).
pub fn bench_scan_ns(scans: u32) -> f64 {
    let scans = scans.max(1);
    let began = own_cpu_ns();
    for _ in 0..scans {
        tracker().scan(None, false);
    }
    own_cpu_ns().saturating_sub(began) as f64 / scans as f64
}

#[cfg(test)]
mod tests;
