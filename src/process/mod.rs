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
//!   are skipped. A thread that ends keeps what the last scan saw: only the tail after that scan is
//!   lost to `unattributed`, since the kernel folds it into the process figure.
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
//! its time before JVMTI ThreadStart in the VM (`vm_other`); any other thread is `native_threads`.

mod model;
mod names;

pub(crate) use model::LiveJava;
pub(crate) use model::{split_exactly, CpuSnapshot, Part, Parts, ProcessCpu, ThreadRow};
use names::{classify, NameClass};

use std::collections::{HashMap, HashSet};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

/// Threads that ended before VMDeath get their own rows up to this many; the rows of later ones are
/// summed per part into rows named [`OTHER_ENDED_THREADS`] with tid 0 (a program that churns
/// through millions of threads keeps a bounded report).
const ENDED_THREADS_LISTED: u64 = 10_000;
const OTHER_ENDED_THREADS: &str = "(other ended threads)";

/// The scan waits at least this many times its own CPU time between two looks, so that it never
/// costs more than 0.1 % of one core (a process with thousands of threads is scanned less often).
const SCAN_COST_RATIO: u64 = 1000;

// ---------------------------------------------------------------------------------------------------
// Clocks and /proc.

use crate::clock::thread_cpu_ns;

fn own_cpu_ns() -> u64 {
    crate::clock::read_clock(libc::CLOCK_THREAD_CPUTIME_ID).unwrap_or(0)
}

fn own_tid() -> i32 {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::gettid() }
}

/// The process's CPU time: every live thread's plus every ended thread's, in the same units as
/// [`thread_cpu_ns`].
fn process_cpu_ns() -> u64 {
    crate::clock::read_clock(libc::CLOCK_PROCESS_CPUTIME_ID).unwrap_or(0)
}

/// `/proc/self/task`, opened once and read again from the start at each scan: opening it costs
/// more than reading it.
struct TaskDir(*mut libc::DIR);

// SAFETY: the DIR is used only by the holder of the tracker's lock, one thread at a time.
unsafe impl Send for TaskDir {}

impl TaskDir {
    fn open() -> std::io::Result<TaskDir> {
        // SAFETY: a NUL-terminated path; the result is checked.
        let dir = unsafe { libc::opendir(c"/proc/self/task".as_ptr()) };
        if dir.is_null() {
            Err(std::io::Error::last_os_error())
        } else {
            Ok(TaskDir(dir))
        }
    }

    /// The tids of every thread of the process now.
    fn list(&mut self, out: &mut Vec<i32>) -> std::io::Result<()> {
        out.clear();
        // SAFETY: `self.0` is an open DIR (closed only in Drop); we hold the only access to it. errno
        // is this thread's and is reset so that readdir's end of stream can be told from an error.
        unsafe {
            libc::rewinddir(self.0);
            *libc::__errno_location() = 0;
        }
        loop {
            // SAFETY: as above; the entry stays valid until the next readdir64 on this DIR.
            let entry = unsafe { libc::readdir64(self.0) };
            if entry.is_null() {
                break;
            }
            // SAFETY: d_name is NUL-terminated inside the entry.
            let name = unsafe { std::ffi::CStr::from_ptr((*entry).d_name.as_ptr()) };
            if let Some(tid) = name.to_str().ok().and_then(|s| s.parse().ok()) {
                out.push(tid);
            }
        }
        // SAFETY: errno of this thread.
        match unsafe { *libc::__errno_location() } {
            0 => Ok(()),
            e => Err(std::io::Error::from_raw_os_error(e)),
        }
    }
}

impl Drop for TaskDir {
    fn drop(&mut self) {
        // SAFETY: opened by opendir and closed once here.
        unsafe { libc::closedir(self.0) };
    }
}

/// The tids of the process's threads, through `dir` (opened on first use).
fn list_tids(dir: &mut Option<TaskDir>, out: &mut Vec<i32>) -> std::io::Result<()> {
    if dir.is_none() {
        *dir = Some(TaskDir::open()?);
    }
    match dir.as_mut() {
        Some(d) => d.list(out),
        None => Ok(()),
    }
}

fn read_comm(tid: i32) -> Option<String> {
    std::fs::read_to_string(format!("/proc/self/task/{tid}/comm"))
        .ok()
        .map(|s| s.trim_end_matches('\n').to_string())
}

// ---------------------------------------------------------------------------------------------------
// One thread's record.

/// The CPU time of an open context up to the last commit, and the agent's counters then.
#[derive(Clone, Copy, Debug)]
struct OpenContext {
    cpu: u64,
    bytecode_ns: u64,
    native_ns: u64,
}

/// What is known of one thread (one incarnation of a tid).
#[derive(Clone, Debug)]
struct Record {
    tid: i32,
    /// OS name (empty until read).
    comm: String,
    java_name: Option<String>,
    /// The thread's CPU time when last observed outside a context (or at its context's last commit).
    cpu_seen: u64,
    /// CPU seen by scans while the thread had no open context.
    outside_ns: u64,
    /// CPU before its first context that no scan saw.
    startup_ns: u64,
    /// CPU inside contexts: bytecode, native.
    java: [u64; 2],
    open: Option<OpenContext>,
    had_context: bool,
    /// It entered Java from native code (see `ThreadContext::began_native`).
    began_native: bool,
    comm_reads: u8,
    /// The last scan that listed it.
    scan: u64,
    /// The thread ran its exit (see `ExitProbe`): a later thread with its tid is another one.
    exited: bool,
}

impl Record {
    fn new(tid: i32, scan: u64) -> Record {
        Record {
            tid,
            comm: String::new(),
            java_name: None,
            cpu_seen: 0,
            outside_ns: 0,
            startup_ns: 0,
            java: [0, 0],
            open: None,
            had_context: false,
            began_native: false,
            comm_reads: 0,
            scan,
            exited: false,
        }
    }

    /// Charge the CPU since the last observation, up to `cpu`, to the time outside contexts.
    fn observe_outside(&mut self, cpu: u64) {
        self.outside_ns += cpu.saturating_sub(self.cpu_seen);
        self.cpu_seen = self.cpu_seen.max(cpu);
    }

    /// Charge an open context's CPU since the last commit, up to `cpu`, split between bytecode and
    /// native as the agent's counters moved meanwhile (all to the current state if they did not).
    fn commit(&mut self, cpu: u64, bytecode_ns: u64, native_ns: u64, in_native: bool) {
        let Some(open) = self.open.as_mut() else {
            return;
        };
        if cpu <= open.cpu {
            // Not later than the last commit: keep the counters for the next split.
            return;
        }
        let delta = cpu - open.cpu;
        let b = bytecode_ns.saturating_sub(open.bytecode_ns);
        let n = native_ns.saturating_sub(open.native_ns);
        let [to_bytecode, to_native] = match (b, n) {
            (0, 0) if in_native => [0, delta],
            (0, 0) => [delta, 0],
            _ => {
                let split = split_exactly(delta, &[b, n]);
                [split[0], split[1]]
            }
        };
        self.java[0] += to_bytecode;
        self.java[1] += to_native;
        open.cpu = cpu;
        open.bytecode_ns = open.bytecode_ns.max(bytecode_ns);
        open.native_ns = open.native_ns.max(native_ns);
        self.cpu_seen = self.cpu_seen.max(cpu);
    }

    fn name(&self) -> String {
        match &self.java_name {
            Some(name) => name.clone(),
            None if self.comm.is_empty() => format!("tid-{}", self.tid),
            None => self.comm.clone(),
        }
    }
}

/// Facts about a thread that decide its parts, beyond its name.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Story {
    /// One of nativeacct's threads.
    agent: bool,
    /// The thread the VM was created on (it ran Agent_OnLoad and VMInit).
    vm_main: bool,
    /// The process's first thread (tid = pid): the launcher, waiting for `main` to end.
    first: bool,
}

/// The parts of one thread's CPU time: `(part, ns)` for Java bytecode, Java native, start-up, the
/// time outside contexts, and GC pauses run on it (`gc_pause_ns`, taken out of the time outside).
fn attribute(r: &Record, class: NameClass, story: Story, gc_pause_ns: u64) -> [(Part, u64); 5] {
    let whole = r.java[0] + r.java[1] + r.startup_ns + r.outside_ns;
    let all_to = |part: Part| {
        [
            (part, whole),
            (Part::JavaBytecode, 0),
            (Part::JavaNative, 0),
            (part, 0),
            (Part::Gc, 0),
        ]
    };
    if story.agent {
        return all_to(Part::Agent);
    }
    let (startup, outside) = match class {
        NameClass::Agent => return all_to(Part::Agent),
        NameClass::JitCompiler => return all_to(Part::JitCompiler),
        NameClass::Gc => return all_to(Part::Gc),
        NameClass::VmOther => (Part::VmOther, Part::VmOther),
        NameClass::JdkJava => (Part::JavaBytecode, Part::JavaBytecode),
        NameClass::Unknown if story.vm_main || story.first => (Part::VmOther, Part::VmOther),
        NameClass::Unknown if r.had_context && r.began_native => {
            (Part::NativeThreads, Part::NativeThreads)
        }
        // Started by the VM (Thread.start): its time outside the context is thread start-up and
        // teardown in the VM.
        NameClass::Unknown if r.had_context => (Part::VmOther, Part::VmOther),
        NameClass::Unknown => (Part::NativeThreads, Part::NativeThreads),
    };
    let pause = gc_pause_ns.min(r.outside_ns);
    [
        (Part::JavaBytecode, r.java[0]),
        (Part::JavaNative, r.java[1]),
        (startup, r.startup_ns),
        (outside, r.outside_ns - pause),
        (Part::Gc, pause),
    ]
}

// ---------------------------------------------------------------------------------------------------
// The tracker: every thread's record, under one lock.

#[derive(Clone, Copy, Debug, Default)]
struct GcPause {
    /// The thread's CPU time at an unfinished GarbageCollectionStart.
    started: Option<u64>,
    total: u64,
}

struct Tracker {
    records: HashMap<i32, Record>,
    ended_rows: Vec<ThreadRow>,
    /// Past the listed ones: one row per part (kept apart, so that adding to it stays O(1)).
    other_ended_rows: Vec<ThreadRow>,
    ended_parts: Parts,
    ended_threads: u64,
    agent_tids: HashSet<i32>,
    vm_main_tid: Option<i32>,
    first_tid: i32,
    scans: u64,
    scan_period: Option<Duration>,
    /// The final section, once VMDeath took it: later events are ignored.
    closed: Option<ProcessCpu>,
    list_error: Option<String>,
    task_dir: Option<TaskDir>,
    tids: Vec<i32>,
}

static TRACKER: once_cell::sync::Lazy<Mutex<Tracker>> =
    once_cell::sync::Lazy::new(|| Mutex::new(Tracker::new()));

/// GC pauses per thread (tid). Apart from the tracker so that the VM thread, inside a pause, never
/// waits for a scan.
static GC_PAUSES: Mutex<Vec<(i32, GcPause)>> = Mutex::new(Vec::new());

fn tracker() -> MutexGuard<'static, Tracker> {
    crate::sync::lock(&TRACKER)
}

fn gc_pauses() -> MutexGuard<'static, Vec<(i32, GcPause)>> {
    crate::sync::lock(&GC_PAUSES)
}

/// CPU `tid` spent in GC pauses, an unfinished one counted up to `cpu_now`.
fn gc_pause_ns(tid: i32, cpu_now: u64) -> u64 {
    gc_pauses()
        .iter()
        .find(|(t, _)| *t == tid)
        .map(|(_, p)| p.total + p.started.map_or(0, |s| cpu_now.saturating_sub(s)))
        .unwrap_or(0)
}

impl Tracker {
    fn new() -> Tracker {
        Tracker {
            records: HashMap::new(),
            ended_rows: Vec::new(),
            other_ended_rows: Vec::new(),
            ended_parts: Parts::default(),
            ended_threads: 0,
            agent_tids: HashSet::new(),
            vm_main_tid: None,
            first_tid: std::process::id() as i32,
            scans: 0,
            scan_period: None,
            closed: None,
            list_error: None,
            task_dir: None,
            tids: Vec::new(),
        }
    }

    fn story(&self, tid: i32) -> Story {
        Story {
            agent: self.agent_tids.contains(&tid),
            vm_main: self.vm_main_tid == Some(tid),
            first: tid == self.first_tid,
        }
    }

    fn rows_of(&self, r: &Record) -> Vec<ThreadRow> {
        let pause = gc_pause_ns(r.tid, r.cpu_seen);
        let mut rows: Vec<ThreadRow> = Vec::new();
        for (part, ns) in attribute(r, classify(&r.comm), self.story(r.tid), pause) {
            if ns == 0 {
                continue;
            }
            match rows.iter_mut().find(|row| row.part == part) {
                Some(row) => row.cpu_ns += ns,
                None => rows.push(ThreadRow {
                    name: r.name(),
                    tid: r.tid as i64,
                    part,
                    cpu_ns: ns,
                }),
            }
        }
        rows
    }

    /// A thread ended (or its tid now names another thread): keep its rows.
    fn finish(&mut self, r: Record) {
        let listed = self.ended_threads < ENDED_THREADS_LISTED;
        for row in self.rows_of(&r) {
            self.ended_parts.add(row.part, row.cpu_ns);
            if listed {
                self.ended_rows.push(row);
                continue;
            }
            match self
                .other_ended_rows
                .iter_mut()
                .find(|e| e.part == row.part)
            {
                Some(other) => other.cpu_ns += row.cpu_ns,
                None => self.other_ended_rows.push(ThreadRow {
                    name: OTHER_ENDED_THREADS.to_string(),
                    tid: 0,
                    part: row.part,
                    cpu_ns: row.cpu_ns,
                }),
            }
        }
        self.ended_threads += 1;
        gc_pauses().retain(|(t, _)| *t != r.tid);
    }

    /// The record of `tid`'s current thread, given that it has now used `cpu`: a record whose
    /// figures are ahead of `cpu` (or that still has a context open, which a live thread would have
    /// closed) belongs to an earlier thread with the same tid, which ended unseen.
    fn current(&mut self, tid: i32, cpu: u64, opening: bool) -> &mut Record {
        let stale = self
            .records
            .get(&tid)
            .is_some_and(|r| r.exited || cpu < r.cpu_seen || (opening && r.open.is_some()));
        if stale {
            if let Some(old) = self.records.remove(&tid) {
                self.finish(old);
            }
        }
        let scan = self.scans;
        self.records.entry(tid).or_insert_with(|| {
            let mut r = Record::new(tid, scan);
            // A thread seen first now: its CPU so far was spent before this moment.
            r.startup_ns = if opening { cpu } else { 0 };
            r.outside_ns = if opening { 0 } else { cpu };
            r.cpu_seen = cpu;
            r
        })
    }

    /// Look at every thread: read the CPU of each thread without an open context (and, with
    /// `live`, commit the open contexts too), name new threads, and close the records of threads
    /// that are gone. `all_names` re-reads every name (the final scan).
    fn scan(&mut self, live: Option<&HashMap<i32, &LiveJava>>, all_names: bool) {
        self.scans += 1;
        let scan = self.scans;
        let mut tids = std::mem::take(&mut self.tids);
        let listed = match list_tids(&mut self.task_dir, &mut tids) {
            Ok(()) => true,
            Err(e) => {
                self.list_error
                    .get_or_insert_with(|| format!("/proc/self/task: {e}"));
                false
            }
        };
        for &tid in &tids {
            let open = self.records.get(&tid).is_some_and(|r| r.open.is_some());
            if open && live.is_none() {
                // A Java thread: its context reads its CPU when it retires.
                if let Some(r) = self.records.get_mut(&tid) {
                    r.scan = scan;
                    if r.comm_reads < 2 {
                        r.comm = read_comm(tid).unwrap_or_default();
                        r.comm_reads += 1;
                    }
                }
                continue;
            }
            let Some(cpu) = thread_cpu_ns(tid) else {
                continue; // ended since the listing
            };
            let java = live.and_then(|l| l.get(&tid)).copied();
            let r = self.current(tid, cpu, false);
            r.scan = scan;
            if r.open.is_some() {
                if let Some(j) = java {
                    r.commit(cpu, j.bytecode_ns, j.native_ns, j.in_native);
                    r.java_name = j.name.clone().or(r.java_name.take());
                    r.began_native |= j.began_native;
                }
            } else {
                r.observe_outside(cpu);
            }
            if r.comm_reads < 2 || all_names {
                if let Some(comm) = read_comm(tid) {
                    r.comm = comm;
                }
                r.comm_reads = r.comm_reads.saturating_add(1);
            }
        }
        self.tids = tids;
        if listed {
            let gone: Vec<i32> = self
                .records
                .values()
                .filter(|r| r.scan != scan)
                .map(|r| r.tid)
                .collect();
            for tid in gone {
                if let Some(r) = self.records.remove(&tid) {
                    self.finish(r);
                }
            }
        }
    }

    /// Every thread's rows (ended and live) and their sum per part.
    fn rows_and_parts(&self) -> (Vec<ThreadRow>, Parts) {
        let mut rows = self.ended_rows.clone();
        rows.extend(self.other_ended_rows.iter().cloned());
        let mut parts = self.ended_parts;
        for r in self.records.values() {
            for row in self.rows_of(r) {
                parts.add(row.part, row.cpu_ns);
                rows.push(row);
            }
        }
        (rows, parts)
    }

    fn parts_now(&self) -> Parts {
        let mut parts = self.ended_parts;
        for r in self.records.values() {
            for row in self.rows_of(r) {
                parts.add(row.part, row.cpu_ns);
            }
        }
        parts
    }
}

fn by_tid(live: &[LiveJava]) -> HashMap<i32, &LiveJava> {
    live.iter().map(|j| (j.tid as i32, j)).collect()
}

// ---------------------------------------------------------------------------------------------------
// Hooks.

/// Start the background scan (at Agent_OnLoad); `None` (`scan=off`): no periodic scan, only the
/// final one and those of `interval=` snapshots.
pub(crate) fn start(period: Option<Duration>) {
    tracker().scan_period = period;
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

/// The calling thread is one of nativeacct's own: its CPU time is the agent's.
pub(crate) fn register_agent_thread() {
    let tid = own_tid();
    tracker().agent_tids.insert(tid);
}

/// The VM is being created on the calling thread (Agent_OnLoad and VMInit run on it): its CPU time
/// outside its context is the VM's start-up.
pub(crate) fn note_vm_thread() {
    let tid = own_tid();
    tracker().vm_main_tid = Some(tid);
}

thread_local! {
    /// Reads the thread's CPU clock one last time when it exits (see [`ExitProbe`]).
    static EXIT_PROBE: ExitProbe = const { ExitProbe };
}

/// A thread-local whose destructor runs as the thread exits, after the VM's teardown of it (a Java
/// thread's JVMTI ThreadEnd comes before that teardown, which would otherwise be lost to
/// `unattributed` when the thread ends between two scans). Armed on every thread that opens a
/// context, before the context's own exit guard, so that it runs after it.
struct ExitProbe;

impl Drop for ExitProbe {
    fn drop(&mut self) {
        crate::diag::no_unwind(&crate::diag::PROCESS_EXIT, (), thread_exiting);
    }
}

/// The calling thread is exiting: what it used since it was last seen is time outside contexts.
fn thread_exiting() {
    let tid = own_tid();
    let mut t = tracker();
    if t.closed.is_some() {
        return;
    }
    let cpu = own_cpu_ns();
    if let Some(r) = t.records.get_mut(&tid) {
        if r.open.is_none() {
            r.observe_outside(cpu);
        }
        r.exited = true;
    }
}

/// A context was opened on the calling thread (tid `tid`).
pub(crate) fn context_opened(tid: i64) {
    let _ = EXIT_PROBE.try_with(|_| ());
    let tid = tid as i32;
    let mut t = tracker();
    if t.closed.is_some() {
        return;
    }
    // Read under the lock, so that no scan sees a later figure first.
    let cpu = own_cpu_ns();
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
) {
    let tid = tid as i32;
    let mut t = tracker();
    if t.closed.is_some() {
        return;
    }
    let cpu = own_cpu_ns();
    let Some(r) = t.records.get_mut(&tid) else {
        return;
    };
    if r.open.is_none() {
        return;
    }
    r.commit(cpu, bytecode_ns, native_ns, false);
    r.open = None;
    r.began_native |= began_native;
    if name.is_some() {
        r.java_name = name;
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
    parts.unattributed = cpu_ns.saturating_sub(parts.sum());
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
    parts.unattributed = cpu_ns - attributed;
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
        notes,
    };
    if closing {
        t.closed = Some(section.clone());
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
mod tests {
    use super::*;

    fn record(java: [u64; 2], startup: u64, outside: u64) -> Record {
        let mut r = Record::new(42, 0);
        r.java = java;
        r.startup_ns = startup;
        r.outside_ns = outside;
        r
    }

    fn sum_by_part(rows: &[(Part, u64)]) -> Parts {
        let mut parts = Parts::default();
        for &(p, ns) in rows {
            parts.add(p, ns);
        }
        parts
    }

    #[test]
    fn a_native_thread_never_attached_is_native() {
        let r = record([0, 0], 0, 500);
        let parts = sum_by_part(&attribute(&r, NameClass::Unknown, Story::default(), 0));
        assert_eq!(parts.native_threads, 500);
        assert_eq!(parts.sum(), 500);
    }

    #[test]
    fn vm_threads_go_by_name_and_gc_pauses_move_to_gc() {
        let r = record([0, 0], 0, 1000);
        let vm = sum_by_part(&attribute(&r, NameClass::VmOther, Story::default(), 300));
        assert_eq!((vm.vm_other, vm.gc, vm.sum()), (700, 300, 1000));
        // A pause can never move more than the time seen.
        let vm = sum_by_part(&attribute(&r, NameClass::VmOther, Story::default(), 5000));
        assert_eq!((vm.vm_other, vm.gc), (0, 1000));
        for (class, part) in [
            (NameClass::JitCompiler, Part::JitCompiler),
            (NameClass::Gc, Part::Gc),
            (NameClass::Agent, Part::Agent),
        ] {
            // The name decides for the whole thread, Java time included (JVMCI compilers run Java).
            let r = record([10, 20], 30, 40);
            let parts = sum_by_part(&attribute(&r, class, Story::default(), 0));
            assert_eq!(parts.get(part), 100, "{class:?}");
        }
    }

    #[test]
    fn java_threads_keep_their_split_and_their_story_decides_the_rest() {
        let mut r = record([600, 300], 50, 20);
        r.had_context = true;
        // Started by the VM: start-up and teardown are the VM's.
        let p = sum_by_part(&attribute(&r, NameClass::Unknown, Story::default(), 0));
        assert_eq!(
            (p.java_bytecode, p.java_native, p.vm_other, p.sum()),
            (600, 300, 70, 970)
        );
        // Attached from native code: before attaching and after detaching it is a native thread.
        r.began_native = true;
        let p = sum_by_part(&attribute(&r, NameClass::Unknown, Story::default(), 0));
        assert_eq!((p.native_threads, p.vm_other), (70, 0));
        // The thread the VM was created on: its time before VMInit is the VM's start-up.
        let main = Story {
            vm_main: true,
            ..Story::default()
        };
        let p = sum_by_part(&attribute(&r, NameClass::Unknown, main, 0));
        assert_eq!((p.native_threads, p.vm_other), (0, 70));
        // The launcher's first thread, the agent's threads.
        let first = Story {
            first: true,
            ..Story::default()
        };
        let p = sum_by_part(&attribute(
            &record([0, 0], 0, 9),
            NameClass::Unknown,
            first,
            0,
        ));
        assert_eq!(p.vm_other, 9);
        let agent = Story {
            agent: true,
            ..Story::default()
        };
        let p = sum_by_part(&attribute(&r, NameClass::Unknown, agent, 0));
        assert_eq!(p.agent, 970);
        // The JDK's own Java threads without a context ran bytecode.
        let p = sum_by_part(&attribute(
            &record([0, 0], 0, 8),
            NameClass::JdkJava,
            Story::default(),
            0,
        ));
        assert_eq!(p.java_bytecode, 8);
    }

    #[test]
    fn commits_split_each_interval_by_that_interval_s_counters() {
        let mut r = record([0, 0], 0, 0);
        r.open = Some(OpenContext {
            cpu: 1000,
            bytecode_ns: 0,
            native_ns: 0,
        });
        r.commit(2000, 750, 250, false);
        assert_eq!(r.java, [750, 250]);
        // Counters did not move (a long native call with no remote clock): the current state.
        r.commit(2500, 750, 250, true);
        assert_eq!(r.java, [750, 750]);
        // Stale figures never count twice.
        r.commit(2400, 800, 250, false);
        assert_eq!(r.java, [750, 750]);
        r.commit(3500, 1000, 500, false);
        assert_eq!(r.java, [750 + 500, 750 + 500]);
    }

    #[test]
    fn rows_of_ended_threads_are_bounded_and_still_add_up() {
        let mut t = Tracker::new();
        let extra = 5;
        for i in 0..ENDED_THREADS_LISTED + extra {
            let mut r = record([0, 0], 0, 10);
            r.tid = 1_000_000 + i as i32;
            r.comm = "pool-1-thread-1".into();
            t.finish(r);
        }
        assert_eq!(t.ended_threads, ENDED_THREADS_LISTED + extra);
        assert_eq!(t.ended_rows.len() as u64, ENDED_THREADS_LISTED);
        assert_eq!(t.other_ended_rows.len(), 1);
        let other = &t.other_ended_rows[0];
        assert_eq!((other.name.as_str(), other.tid), (OTHER_ENDED_THREADS, 0));
        assert_eq!(other.cpu_ns, 10 * extra);
        let (rows, parts) = t.rows_and_parts();
        assert_eq!(parts.native_threads, 10 * (ENDED_THREADS_LISTED + extra));
        assert_eq!(rows.iter().map(|r| r.cpu_ns).sum::<u64>(), parts.sum());
    }

    #[test]
    fn other_threads_cpu_clocks_are_readable_by_tid() {
        let (tx, rx) = std::sync::mpsc::channel();
        let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
        let worker = std::thread::spawn(move || {
            let start = std::time::Instant::now();
            while start.elapsed() < Duration::from_millis(30) {
                std::hint::black_box(0u64);
            }
            tx.send((own_tid(), own_cpu_ns())).unwrap();
            let _ = done_rx.recv();
        });
        let (tid, own) = rx.recv().unwrap();
        let seen = thread_cpu_ns(tid).expect("a live thread's clock");
        assert!(seen >= own, "{seen} < {own}");
        assert!(seen < own + 50_000_000);
        done_tx.send(()).unwrap();
        worker.join().unwrap();
        // pthread_join returns when the kernel clears the thread's tid word, which comes before the
        // kernel unhashes the task: wait for that (on an idle machine it has already happened).
        let reaped = (0..1000).any(|_| {
            thread_cpu_ns(tid).is_none() || {
                std::thread::sleep(Duration::from_millis(1));
                false
            }
        });
        assert!(reaped, "an ended thread has no clock");
        let mut tids = Vec::new();
        list_tids(&mut None, &mut tids).unwrap();
        assert!(tids.contains(&own_tid()));
        assert!(process_cpu_ns() >= own_cpu_ns());
    }
}
