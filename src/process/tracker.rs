//! The tracker: every thread's record, under one lock, and the scan that updates them.

use super::*;
use crate::clock::RestOfThread;
use crate::id_hash::IdBuild;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

#[derive(Clone, Copy, Debug, Default)]
pub(super) struct GcPause {
    /// The thread's CPU time at an unfinished GarbageCollectionStart.
    pub(super) started: Option<u64>,
    pub(super) total: u64,
}

pub(super) struct Tracker {
    pub(super) records: HashMap<i32, Record, IdBuild>,
    pub(super) ended_rows: Vec<ThreadRow>,
    /// Past the listed ones: one row per part (kept apart, so that adding to it stays O(1)).
    pub(super) other_ended_rows: Vec<ThreadRow>,
    pub(super) ended_parts: Parts,
    pub(super) ended_threads: u64,
    pub(super) agent_tids: HashSet<i32, IdBuild>,
    pub(super) vm_main_tid: Option<i32>,
    pub(super) first_tid: i32,
    pub(super) scans: u64,
    pub(super) scan_period: Option<Duration>,
    /// The final section, once VMDeath took it: later events are ignored.
    pub(super) closed: Option<ProcessCpu>,
    pub(super) list_error: Option<String>,
    pub(super) task_dir: Option<TaskDir>,
    pub(super) tids: Vec<i32>,
    /// How thread ends are seen.
    pub(super) method: Method,
    /// CPU the exit probes spent on exiting threads after their last read (the agent's).
    pub(super) exit_work_ns: u64,
    /// Threads past their exit probe whose teardown is still being counted.
    pub(super) teardowns: Vec<Teardown>,
    /// Teardown CPU placed so far, and threads whose teardown could not be counted (and why).
    pub(super) teardown_ns: u64,
    pub(super) teardown_unmeasured: u64,
    pub(super) teardown_error: Option<String>,
    /// Teardowns left uncounted by [`TEARDOWNS_PER_S`], and the budget they are counted against.
    pub(super) teardown_over_budget: u64,
    pub(super) teardown_budget: &'static TeardownBudget,
    /// Threads whose exit probe placed them, by tid: the CPU it read last and the second it ran
    /// in ([`coarse_seconds`]). A scan that still lists one (its teardown runs on) must not take it
    /// for a new thread and count its CPU again.
    pub(super) exited: HashMap<i32, Exited, IdBuild>,
    /// The buffer [`Tracker::apply_exit_notes`] swaps with [`EXIT_NOTES`]: neither allocates.
    pub(super) exit_notes: Vec<ExitNote>,
}

/// A Java thread's exit as its probe read it, waiting in [`EXIT_NOTES`] for the tracker. What
/// the probe does after its read (leaving the note, about 0.1 µs) is part of the thread's teardown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct ExitNote {
    pub(super) tid: i32,
    pub(super) started_by: Option<Origin>,
    /// The thread's CPU time at its probe.
    pub(super) cpu: u64,
}

/// Exits of Java threads that the tracker has not applied yet. The probe of a thread that had a
/// context leaves its reading here and returns; the next scan (or the next exit that takes the
/// tracker) applies them in order. The tracker's bookkeeping done on each exiting thread cost it
/// about 10 µs more than the bookkeeping's own 1 µs (measured on `bench-churn`: cold code and data
/// on a thread that runs it once); in a batch on the scan thread it costs only itself.
pub(super) static EXIT_NOTES: Mutex<Vec<ExitNote>> = Mutex::new(Vec::new());

/// Notes held at most (16 bytes each): a full queue sends the exit down the direct path, which
/// applies the queue first. Room is reserved once, so that a push never allocates.
pub(super) const EXIT_NOTES_HELD: usize = 4096;

/// Leave `note` for the tracker; false if the queue is full (or was never given room: no scan).
pub(super) fn leave_exit_note(note: ExitNote) -> bool {
    let mut notes = crate::sync::lock(&EXIT_NOTES);
    if notes.len() >= notes.capacity() {
        return false;
    }
    notes.push(note);
    true
}

#[derive(Clone, Copy, Debug)]
pub(super) struct Exited {
    pub(super) cpu: u64,
    pub(super) second: u64,
}

/// Exited tids remembered without a scan to forget them (`scan=off`): past this many, those older
/// than [`TEARDOWN_SECONDS`] are dropped (no system call per entry).
pub(super) const EXITED_REMEMBERED: usize = 16384;
/// A teardown takes micro- to milliseconds: a tid seen this many seconds after its thread's exit
/// probe names a new thread (tids are reused once the kernel's pid counter wraps).
const TEARDOWN_SECONDS: u64 = 2;

/// A thread past its exit probe: what it uses until its end (the C library's and the kernel's exit
/// work) goes to the part of its time outside contexts, once it has ended.
pub(super) struct Teardown {
    tid: i32,
    part: Part,
    /// Among the listed ended threads: its row of that part, if it has one (rows are only added).
    listed: Option<Option<usize>>,
    name: String,
    rest: RestOfThread,
}

#[cfg(test)]
impl Teardown {
    pub(super) fn tid(&self) -> i32 {
        self.tid
    }
}

/// Teardowns counted at once at most, one descriptor each: a program's descriptor numbers move up
/// by no more than this (a `select()` caller near FD_SETSIZE, a fd-leak check), and threads that
/// end one after another still all have it. The scan, or the next thread's exit, places those whose
/// threads have ended.
pub(super) const TEARDOWNS_PENDING: usize = 2;

/// Teardowns counted per second, of other threads and of Java threads: each costs the agent about
/// 15 µs (the perf event's open and close), so a program that churns threads pays at most 15 ms of
/// CPU a second for them, and Java thread churn (`bench-churn`) at most 1.5 ms.
pub(super) const TEARDOWNS_PER_S: [u32; 2] = [1000, 100];

/// The teardown counts left this second ([`TEARDOWNS_PER_S`]), of other threads and of Java
/// threads: a word each, the second above bit 32 and the counts claimed below. Lock-free, so that
/// a Java thread's exit probe can look at it before it takes the tracker, which alone claims.
pub(super) struct TeardownBudget {
    words: [AtomicU64; 2],
}

/// A word no second matches that reads as spent: teardowns cannot be counted here at all.
const SPENT_FOR_GOOD: u64 = u64::MAX;

/// The process tracker's budget.
pub(super) static TEARDOWN_BUDGET: TeardownBudget = TeardownBudget::new();

impl TeardownBudget {
    pub(super) const fn new() -> TeardownBudget {
        TeardownBudget {
            words: [const { AtomicU64::new(0) }; 2],
        }
    }

    fn claimed_in(word: u64, second: u64) -> u32 {
        match word {
            SPENT_FOR_GOOD => u32::MAX,
            word if word >> 32 == second => word as u32,
            _ => 0,
        }
    }

    /// Whether a teardown of a Java thread (`java`) or of another may still be counted this
    /// second. Claims nothing.
    pub(super) fn left(&self, java: bool) -> bool {
        let kind = usize::from(java);
        let word = self.words[kind].load(Relaxed);
        Self::claimed_in(word, coarse_seconds()) < TEARDOWNS_PER_S[kind]
    }

    /// Take one of this second's counts of that kind, if one is left.
    pub(super) fn claim(&self, java: bool) -> bool {
        let kind = usize::from(java);
        let second = coarse_seconds();
        let word = &self.words[kind];
        let mut seen = word.load(Relaxed);
        loop {
            let claimed = Self::claimed_in(seen, second);
            if claimed >= TEARDOWNS_PER_S[kind] {
                return false;
            }
            let next = second << 32 | u64::from(claimed + 1);
            match word.compare_exchange_weak(seen, next, Relaxed, Relaxed) {
                Ok(_) => return true,
                Err(now) => seen = now,
            }
        }
    }

    /// Teardowns cannot be counted here (perf events denied): none is left, ever.
    pub(super) fn spend_for_good(&self) {
        for word in &self.words {
            word.store(SPENT_FOR_GOOD, Relaxed);
        }
    }

    /// The counts claimed this second, both kinds.
    #[cfg(test)]
    pub(super) fn claimed(&self) -> u32 {
        let second = coarse_seconds();
        self.words
            .iter()
            .map(|w| Self::claimed_in(w.load(Relaxed), second))
            .sum()
    }
}

/// How the tracker sees threads end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Method {
    /// Every thread started since the agent loaded is read as it exits (`thread_hook`).
    ExitHook,
    /// Only the scan (and Java threads' own exits): why.
    Scan(&'static str),
}

impl Method {
    pub(super) fn key(self) -> &'static str {
        match self {
            Method::ExitHook => "exit_hook",
            Method::Scan(_) => "scan",
        }
    }
}

/// The row of the agent's work on exiting threads.
const EXIT_WORK: &str = "(nativeacct on exiting threads)";

pub(super) static TRACKER: once_cell::sync::Lazy<Mutex<Tracker>> =
    once_cell::sync::Lazy::new(|| Mutex::new(Tracker::with_budget(&TEARDOWN_BUDGET)));

/// GC pauses per thread (tid). Apart from the tracker so that the VM thread, inside a pause, never
/// waits for a scan.
pub(super) static GC_PAUSES: Mutex<Vec<(i32, GcPause)>> = Mutex::new(Vec::new());

pub(super) fn tracker() -> MutexGuard<'static, Tracker> {
    crate::sync::lock(&TRACKER)
}

pub(super) fn gc_pauses() -> MutexGuard<'static, Vec<(i32, GcPause)>> {
    crate::sync::lock(&GC_PAUSES)
}

/// CPU `tid` spent in GC pauses, an unfinished one counted up to `cpu_now`.
pub(super) fn gc_pause_ns(tid: i32, cpu_now: u64) -> u64 {
    gc_pauses()
        .iter()
        .find(|(t, _)| *t == tid)
        .map(|(_, p)| p.total + p.started.map_or(0, |s| cpu_now.saturating_sub(s)))
        .unwrap_or(0)
}

impl Tracker {
    /// Tests: a tracker with a budget of its own.
    #[cfg(test)]
    pub(super) fn new() -> Tracker {
        Tracker::with_budget(Box::leak(Box::new(TeardownBudget::new())))
    }

    pub(super) fn with_budget(teardown_budget: &'static TeardownBudget) -> Tracker {
        Tracker {
            records: HashMap::default(),
            ended_rows: Vec::new(),
            other_ended_rows: Vec::new(),
            ended_parts: Parts::default(),
            ended_threads: 0,
            agent_tids: HashSet::default(),
            vm_main_tid: None,
            first_tid: std::process::id() as i32,
            scans: 0,
            scan_period: None,
            closed: None,
            list_error: None,
            task_dir: None,
            tids: Vec::new(),
            method: Method::Scan("not started"),
            exit_work_ns: 0,
            teardowns: Vec::new(),
            teardown_ns: 0,
            teardown_unmeasured: 0,
            teardown_error: None,
            teardown_over_budget: 0,
            teardown_budget,
            exited: HashMap::default(),
            exit_notes: Vec::new(),
        }
    }

    /// Give the exit notes their room (the queue and the spare buffer): from now on Java threads'
    /// exits may be left as notes.
    pub(super) fn reserve_exit_notes(&mut self) {
        self.exit_notes.reserve_exact(EXIT_NOTES_HELD);
        let mut notes = crate::sync::lock(&EXIT_NOTES);
        let room = EXIT_NOTES_HELD.saturating_sub(notes.len());
        notes.reserve_exact(room);
    }

    /// Apply the exits left as notes, in the order they were left.
    pub(super) fn apply_exit_notes(&mut self) {
        let mut notes = std::mem::take(&mut self.exit_notes);
        std::mem::swap(&mut *crate::sync::lock(&EXIT_NOTES), &mut notes);
        for note in notes.drain(..) {
            // Not on the thread: its teardown cannot be counted (the probe left a note because
            // the second's budget was spent).
            self.thread_exited(note, None);
        }
        self.exit_notes = notes;
    }

    /// A thread's exit probe read it for the last time (`note`): what it used since it was last
    /// seen is time outside contexts. `on_its_thread`: called by the probe itself, with the
    /// thread's OS name for a thread no scan saw (started through the hook), which gets its record
    /// now; its teardown may be counted.
    pub(super) fn thread_exited(&mut self, note: ExitNote, on_its_thread: Option<fn() -> String>) {
        let tid = note.tid;
        let r = match self.records.get_mut(&tid) {
            Some(r) if r.open.is_some() => {
                r.exited = true;
                return;
            }
            Some(r) => r,
            None if note.started_by.is_some() => {
                let scan = self.scans;
                let r = self
                    .records
                    .entry(tid)
                    .or_insert_with(|| Record::new(tid, scan));
                r.comm = on_its_thread.map(|comm| comm()).unwrap_or_default();
                r
            }
            None => return,
        };
        r.started_by = r.started_by.or(note.started_by);
        r.observe_outside(note.cpu);
        // Its figures are final: keep its rows now rather than at the next scan (with `scan=off`
        // there is none, and records of ended threads would pile up).
        if let Some(r) = self.records.remove(&tid) {
            self.finish_at_exit(r, on_its_thread.is_some());
        }
        // The tid may name a program's thread next.
        self.agent_tids.remove(&tid);
    }

    fn story(&self, tid: i32) -> Story {
        Story {
            agent: self.agent_tids.contains(&tid),
            vm_main: self.vm_main_tid == Some(tid),
            first: tid == self.first_tid,
        }
    }

    fn parts_of(&self, r: &Record) -> [(Part, u64); 5] {
        let pause = gc_pause_ns(r.tid, r.cpu_seen);
        attribute(r, classify(&r.comm), self.story(r.tid), pause)
    }

    /// A thread ended (or its tid now names another thread): keep its rows.
    pub(super) fn finish(&mut self, r: Record) {
        if self.ended_threads < ENDED_THREADS_LISTED {
            // Straight into the list: no vector of its own per ending thread.
            let parts = self.parts_of(&r);
            push_rows(&r, parts, &mut self.ended_rows, &mut self.ended_parts);
        } else {
            // Folded: no row (nor its name) is made for it.
            for (part, ns) in self.parts_of(&r) {
                if ns == 0 {
                    continue;
                }
                self.ended_parts.add(part, ns);
                self.add_folded(part, ns);
            }
        }
        self.ended_threads += 1;
        gc_pauses().retain(|(t, _)| *t != r.tid);
    }

    /// A thread's exit probe read it for the last time: keep its rows, and count its teardown
    /// (within [`TEARDOWNS_PER_S`]) when called on the thread itself (`on_its_thread`; the count
    /// is of the calling thread). A note applied later is past the budget.
    pub(super) fn finish_at_exit(&mut self, r: Record, on_its_thread: bool) {
        let part = outside_part(&r, classify(&r.comm), self.story(r.tid));
        let listed = self.ended_threads < ENDED_THREADS_LISTED;
        if self.teardowns.len() >= TEARDOWNS_PENDING {
            self.place_teardowns(false);
        }
        // A teardown that cannot be counted (denied, no room, past the budget) uses no budget.
        let room = self.teardowns.len() < TEARDOWNS_PENDING;
        let counted = on_its_thread
            && self.teardown_error.is_none()
            && room
            && self.teardown_budget.claim(r.had_context);
        let (tid, first_row) = (r.tid, self.ended_rows.len());
        self.remember_exited(tid, r.cpu_seen);
        let name = if listed && counted {
            r.name()
        } else {
            String::new()
        };
        self.finish(r);
        if !counted {
            if self.teardown_error.is_some() || (on_its_thread && !room) {
                self.teardown_unmeasured += 1;
            } else {
                self.teardown_over_budget += 1;
            }
            return;
        }
        let row = (first_row..self.ended_rows.len()).find(|&i| self.ended_rows[i].part == part);
        match RestOfThread::start() {
            Ok(rest) => self.teardowns.push(Teardown {
                tid,
                part,
                listed: listed.then_some(row),
                name,
                rest,
            }),
            Err(e) => {
                self.teardown_unmeasured += 1;
                // Denied stays denied; running out of descriptors may pass.
                if !matches!(e.errno, libc::EMFILE | libc::ENFILE | libc::ENOMEM) {
                    self.teardown_error = Some(e.to_string());
                    self.teardown_budget.spend_for_good();
                }
            }
        }
    }

    pub(super) fn remember_exited(&mut self, tid: i32, cpu: u64) {
        let second = coarse_seconds();
        if self.exited.len() >= EXITED_REMEMBERED {
            self.forget_old_exits();
            if self.exited.len() >= EXITED_REMEMBERED * 3 / 4 {
                // More thread ends within [`TEARDOWN_SECONDS`] than the table holds (above about
                // 8,000 a second): keep this second's only, or none (a teardown takes
                // milliseconds). Else every later end would pay a pass over the full table.
                self.exited.retain(|_, e| e.second >= second);
                if self.exited.len() >= EXITED_REMEMBERED * 3 / 4 {
                    self.exited.clear();
                }
            }
        }
        self.exited.insert(tid, Exited { cpu, second });
    }

    /// Drop the exited tids older than a teardown: [`Tracker::past_its_exit`] would take any of
    /// them for a new thread anyway. No system call per entry.
    fn forget_old_exits(&mut self) {
        let second = coarse_seconds();
        self.exited
            .retain(|_, e| second.saturating_sub(e.second) < TEARDOWN_SECONDS);
    }

    /// Whether `tid`, whose CPU clock reads `cpu`, is a thread past its exit probe (its teardown,
    /// counted apart or unmeasured) rather than a new thread with its tid, whose clock would read
    /// less than the probe's last figure, or which is seen long after it.
    fn past_its_exit(&mut self, tid: i32, cpu: u64) -> bool {
        match self.exited.get(&tid) {
            Some(e)
                if cpu >= e.cpu && coarse_seconds().saturating_sub(e.second) < TEARDOWN_SECONDS =>
            {
                true
            }
            Some(_) => {
                self.exited.remove(&tid);
                false
            }
            None => false,
        }
    }

    /// The context of `tid`, whose CPU clock read `cpu`, closed on its thread after `java` ns of
    /// bytecode and native time. A thread whose exit probe ran while the context was open is
    /// past its last read now: its record ends here, and the rest is its teardown.
    pub(super) fn close_context(
        &mut self,
        tid: i32,
        cpu: u64,
        java: [u64; 2],
        began_native: bool,
        name: Option<String>,
    ) {
        let Some(r) = self.records.get_mut(&tid) else {
            return;
        };
        if r.open.is_none() {
            return;
        }
        r.commit(cpu, java[0], java[1], false);
        r.open = None;
        r.began_native |= began_native;
        if name.is_some() {
            r.java_name = name;
        }
        if r.exited {
            if let Some(r) = self.records.remove(&tid) {
                self.finish_at_exit(r, true);
            }
        }
    }

    /// Place the teardown of the threads that have ended (`all`: of every counted one, as the run
    /// ends; one still exiting then gives what it used so far).
    pub(super) fn place_teardowns(&mut self, all: bool) {
        let mut i = 0;
        while i < self.teardowns.len() {
            // A thread's CPU clock reads until the thread is reaped, right after its exit.
            if !all && thread_cpu_ns(self.teardowns[i].tid).is_some() {
                i += 1;
                continue;
            }
            let t = self.teardowns.swap_remove(i);
            match t.rest.ns() {
                Some(ns) => self.add_teardown(t, ns),
                None => self.teardown_unmeasured += 1,
            }
        }
    }

    fn add_teardown(&mut self, t: Teardown, ns: u64) {
        self.ended_parts.add(t.part, ns);
        self.teardown_ns += ns;
        match t.listed {
            Some(Some(row)) => self.ended_rows[row].cpu_ns += ns,
            Some(None) => self.ended_rows.push(ThreadRow {
                name: t.name,
                tid: t.tid as i64,
                part: t.part,
                cpu_ns: ns,
            }),
            None => self.add_folded(t.part, ns),
        }
    }

    /// `ns` of `part` to the rows of the ended threads past the listed ones.
    fn add_folded(&mut self, part: Part, ns: u64) {
        match self
            .other_ended_rows
            .iter_mut()
            .find(|row| row.part == part)
        {
            Some(row) => row.cpu_ns += ns,
            None => self.other_ended_rows.push(ThreadRow {
                name: OTHER_ENDED_THREADS.to_string(),
                tid: 0,
                part,
                cpu_ns: ns,
            }),
        }
    }

    /// The record of `tid`'s current thread, given that it has now used `cpu`: a record whose
    /// figures are ahead of `cpu` (or that still has a context open, which a live thread would have
    /// closed) belongs to an earlier thread with the same tid, which ended unseen.
    pub(super) fn current(&mut self, tid: i32, cpu: u64, opening: bool) -> &mut Record {
        let stale = self
            .records
            .get(&tid)
            .is_some_and(|r| r.exited || cpu < r.cpu_seen || (opening && r.open.is_some()));
        if stale {
            if let Some(old) = self.records.remove(&tid) {
                self.finish(old);
            }
        }
        if opening {
            // A thread past its exit opens no context: this is a new thread with the tid.
            self.exited.remove(&tid);
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
    pub(super) fn scan(&mut self, live: Option<&HashMap<i32, &LiveJava>>, all_names: bool) {
        self.scans += 1;
        let mut tids = std::mem::take(&mut self.tids);
        let listed = match list_tids(&mut self.task_dir, &mut tids) {
            Ok(()) => true,
            Err(e) => {
                self.list_error
                    .get_or_insert_with(|| format!("/proc/self/task: {e}"));
                false
            }
        };
        // After the listing: a thread missing from it left its note before it ended.
        self.apply_exit_notes();
        self.scan_listed(&tids, listed, live, all_names);
        self.tids = tids;
        self.place_teardowns(false);
    }

    /// [`Tracker::scan`] given the listing (`listed`: read in full, so that a record it lacks may
    /// be of a thread that has ended).
    pub(super) fn scan_listed(
        &mut self,
        tids: &[i32],
        listed: bool,
        live: Option<&HashMap<i32, &LiveJava>>,
        all_names: bool,
    ) {
        let scan = self.scans;
        for &tid in tids {
            self.look_at(tid, scan, live, all_names);
        }
        if !self.exited.is_empty() {
            self.forget_old_exits();
        }
        if listed {
            let unlisted: Vec<i32> = self
                .records
                .values()
                .filter(|r| r.scan != scan)
                .map(|r| r.tid)
                .collect();
            for tid in unlisted {
                // A listing can miss live threads: one that ends while it is read cuts it short.
                if thread_cpu_ns(tid).is_some() {
                    self.look_at(tid, scan, live, all_names);
                } else if let Some(r) = self.records.remove(&tid) {
                    self.finish(r);
                }
            }
        }
    }

    /// One thread of a scan: read its CPU unless a context of its own will (commit the open
    /// context too, with `live`), and name it while it is new (every time with `all_names`).
    fn look_at(
        &mut self,
        tid: i32,
        scan: u64,
        live: Option<&HashMap<i32, &LiveJava>>,
        all_names: bool,
    ) {
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
            return;
        }
        let Some(cpu) = thread_cpu_ns(tid) else {
            return; // ended since the listing
        };
        if !self.records.contains_key(&tid) && self.past_its_exit(tid, cpu) {
            return;
        }
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

    /// Every thread's rows (ended and live) and their sum per part.
    pub(super) fn rows_and_parts(&self) -> (Vec<ThreadRow>, Parts) {
        let mut rows = self.ended_rows.clone();
        rows.extend(self.other_ended_rows.iter().cloned());
        let mut parts = self.ended_parts;
        if self.exit_work_ns > 0 {
            parts.add(Part::Agent, self.exit_work_ns);
            rows.push(ThreadRow {
                name: EXIT_WORK.to_string(),
                tid: 0,
                part: Part::Agent,
                cpu_ns: self.exit_work_ns,
            });
        }
        for r in self.records.values() {
            push_rows(r, self.parts_of(r), &mut rows, &mut parts);
        }
        (rows, parts)
    }

    pub(super) fn parts_now(&self) -> Parts {
        let mut parts = self.ended_parts;
        parts.add(Part::Agent, self.exit_work_ns);
        for r in self.records.values() {
            for (part, ns) in self.parts_of(r) {
                parts.add(part, ns);
            }
        }
        parts
    }
}

/// Append a row to `rows` for each part thread `r` used (`parts`: what it used of each), with the
/// thread's name, and add them to `sum`.
fn push_rows(r: &Record, parts: [(Part, u64); 5], rows: &mut Vec<ThreadRow>, sum: &mut Parts) {
    let first = rows.len();
    for (part, ns) in parts {
        if ns == 0 {
            continue;
        }
        sum.add(part, ns);
        match rows[first..].iter_mut().find(|row| row.part == part) {
            Some(row) => row.cpu_ns += ns,
            None => rows.push(ThreadRow {
                name: r.name(),
                tid: r.tid as i64,
                part,
                cpu_ns: ns,
            }),
        }
    }
}

pub(super) fn by_tid(live: &[LiveJava]) -> HashMap<i32, &LiveJava> {
    live.iter().map(|j| (j.tid as i32, j)).collect()
}
