//! Tests of the process accounting: parts, thread rows, and the by-tid CPU clocks.

use super::*;

fn record(java: [u64; 2], startup: u64, outside: u64) -> Record {
    let mut r = Record::new(42, 0);
    r.java = java;
    r.startup_ns = startup;
    r.outside_ns = outside;
    r
}

/// Spin until the calling thread has used `ns` more of its CPU; returns what it used.
fn spin_own_cpu(ns: u64) -> u64 {
    let began = own_cpu_ns();
    while own_cpu_ns() - began < ns {
        std::hint::spin_loop();
    }
    own_cpu_ns() - began
}

/// A thread that does some work, then waits (its CPU clock still) until ended.
struct Idler {
    tid: i32,
    /// Its CPU time when it began to wait.
    spun: u64,
    done: std::sync::mpsc::Sender<()>,
    thread: std::thread::JoinHandle<()>,
}

impl Idler {
    fn after_spinning(ns: u64) -> Idler {
        Idler::after(move || {
            spin_own_cpu(ns);
        })
    }

    /// A thread that runs `work`, then waits.
    fn after(work: impl FnOnce() + Send + 'static) -> Idler {
        let (tx, rx) = std::sync::mpsc::channel();
        let (done, done_rx) = std::sync::mpsc::channel::<()>();
        let thread = std::thread::spawn(move || {
            work();
            tx.send((own_tid(), own_cpu_ns())).unwrap();
            let _ = done_rx.recv();
        });
        let (tid, spun) = rx.recv().unwrap();
        Idler {
            tid,
            spun,
            done,
            thread,
        }
    }

    fn end(self) {
        self.done.send(()).unwrap();
        self.thread.join().unwrap();
    }
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
    assert_eq!(parts.get(Part::NativeThreads), 500);
    assert_eq!(parts.sum(), 500);
}

#[test]
fn a_thread_libjvm_started_with_an_unknown_name_is_the_vm_s() {
    let mut r = record([0, 0], 0, 500);
    r.started_by = Some(Origin::Vm);
    let parts = sum_by_part(&attribute(&r, NameClass::Unknown, Story::default(), 0));
    assert_eq!((parts.get(Part::VmOther), parts.sum()), (500, 500));
    r.started_by = Some(Origin::Native);
    let parts = sum_by_part(&attribute(&r, NameClass::Unknown, Story::default(), 0));
    assert_eq!((parts.get(Part::NativeThreads), parts.sum()), (500, 500));
}

#[test]
fn vm_threads_go_by_name_and_gc_pauses_move_to_gc() {
    let r = record([0, 0], 0, 1000);
    let vm = sum_by_part(&attribute(&r, NameClass::VmOther, Story::default(), 300));
    assert_eq!(
        (vm.get(Part::VmOther), vm.get(Part::Gc), vm.sum()),
        (700, 300, 1000)
    );
    // A pause can never move more than the time seen.
    let vm = sum_by_part(&attribute(&r, NameClass::VmOther, Story::default(), 5000));
    assert_eq!((vm.get(Part::VmOther), vm.get(Part::Gc)), (0, 1000));
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
        (
            p.get(Part::JavaBytecode),
            p.get(Part::JavaNative),
            p.get(Part::VmOther),
            p.sum()
        ),
        (600, 300, 70, 970)
    );
    // Attached from native code: before attaching and after detaching it is a native thread.
    r.began_native = true;
    let p = sum_by_part(&attribute(&r, NameClass::Unknown, Story::default(), 0));
    assert_eq!((p.get(Part::NativeThreads), p.get(Part::VmOther)), (70, 0));
    // The thread the VM was created on: its time before VMInit is the VM's start-up.
    let main = Story {
        vm_main: true,
        ..Story::default()
    };
    let p = sum_by_part(&attribute(&r, NameClass::Unknown, main, 0));
    assert_eq!((p.get(Part::NativeThreads), p.get(Part::VmOther)), (0, 70));
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
    assert_eq!(p.get(Part::VmOther), 9);
    let agent = Story {
        agent: true,
        ..Story::default()
    };
    let p = sum_by_part(&attribute(&r, NameClass::Unknown, agent, 0));
    assert_eq!(p.get(Part::Agent), 970);
    // The JDK's own Java threads without a context ran bytecode.
    let p = sum_by_part(&attribute(
        &record([0, 0], 0, 8),
        NameClass::JdkJava,
        Story::default(),
        0,
    ));
    assert_eq!(p.get(Part::JavaBytecode), 8);
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
    assert_eq!(
        parts.get(Part::NativeThreads),
        10 * (ENDED_THREADS_LISTED + extra)
    );
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

/// What a native thread does after its exit probe is counted and placed once the thread is gone:
/// it spins 20 ms of its own CPU after the probe, and its row and part grow by at least that, and
/// by exactly what the counter read. Where perf events are denied the teardown is only counted
/// as unmeasured.
#[test]
fn a_native_thread_s_teardown_after_its_probe_is_placed() {
    let tracker = std::sync::Arc::new(Mutex::new(Tracker::new()));
    let shared = tracker.clone();
    let (tid, after_probe_ns) = std::thread::spawn(move || {
        let tid = own_tid();
        let mut r = record([0, 0], 0, 1_000);
        r.tid = tid;
        r.comm = "codec-worker".into();
        crate::sync::lock(&shared).finish_at_exit(r, true);
        (tid, spin_own_cpu(20_000_000))
    })
    .join()
    .unwrap();
    let mut t = crate::sync::lock(&tracker);
    if t.teardown_error.is_some() {
        assert_eq!((t.teardown_unmeasured, t.teardowns.len()), (1, 0));
        return;
    }
    // A join returns once the kernel clears the thread's tid, before its exit is over.
    while t.teardowns.len() == 1 && thread_cpu_ns(tid).is_some() {
        std::thread::sleep(Duration::from_millis(1));
    }
    t.place_teardowns(false);
    assert!(t.teardowns.is_empty());
    let placed = t.teardown_ns;
    assert!(placed >= after_probe_ns, "{placed} < {after_probe_ns}");
    let row = t
        .ended_rows
        .iter()
        .find(|row| row.tid == tid as i64)
        .unwrap();
    assert_eq!(
        (row.part, row.cpu_ns),
        (Part::NativeThreads, 1_000 + placed)
    );
    assert_eq!(t.ended_parts.get(Part::NativeThreads), 1_000 + placed);
}

/// Teardown counters have a budget per second, apart for Java threads; looking at it (the Java
/// threads' exit probes do) claims nothing.
#[test]
fn teardown_counters_keep_to_their_budget_per_second() {
    let [others, java] = TEARDOWNS_PER_S;
    // All within one second of the coarse clock: tried again if its second turns meanwhile.
    loop {
        let second = coarse_seconds();
        let budget = TeardownBudget::new();
        let looked = (0..java + 5).all(|_| budget.left(true));
        let took_java = (0..java + 5).filter(|_| budget.claim(true)).count();
        let java_left = budget.left(true);
        let took_others = (0..others + 5).filter(|_| budget.claim(false)).count();
        if coarse_seconds() == second {
            assert!(looked, "looking claimed counts");
            assert_eq!((took_java, took_others), (java as usize, others as usize));
            assert!(!java_left);
            assert_eq!(budget.claimed(), java + others);
            return;
        }
    }
}

/// A listing of /proc/self/task that misses a live thread (one that ends while the listing is read
/// cuts it short) must not end that thread's record: else the next scan opens a new one, and counts
/// the thread's whole CPU time again.
#[test]
fn a_live_thread_a_listing_misses_is_counted_once() {
    let worker = Idler::after_spinning(20_000_000);
    let (tid, spun) = (worker.tid, worker.spun);
    let mut t = Tracker::new();
    for listing in [vec![tid], vec![], vec![tid]] {
        t.scans += 1;
        t.scan_listed(&listing, true, None, false);
    }
    worker.end();
    assert_eq!((t.ended_threads, t.records.len()), (0, 1));
    let counted = t.parts_now().get(Part::NativeThreads);
    // The worker blocks on the channel: its CPU clock moved by at most the send and the wait.
    assert!(
        counted >= spun && counted < spun + 5_000_000,
        "{counted} ns counted for a thread that used {spun} ns"
    );
}

/// A teardown that finds no room among the pending counts is unmeasured and uses none of the
/// second's budget (which would otherwise run out on threads it never counted).
#[test]
fn a_teardown_without_room_uses_no_budget() {
    // All within one second of the coarse clock: tried again if its second turns meanwhile.
    let t = loop {
        let second = coarse_seconds();
        let mut t = Tracker::new();
        for _ in 0..TEARDOWNS_PENDING + 1 {
            let mut r = record([0, 0], 0, 1_000);
            r.tid = own_tid();
            t.finish_at_exit(r, true);
        }
        if coarse_seconds() == second {
            break t;
        }
    };
    if t.teardown_error.is_some() {
        return; // perf events denied here: nothing is pending, nothing is budgeted.
    }
    // This thread lives on, so its pending counts stay pending.
    assert_eq!(t.teardowns.len(), TEARDOWNS_PENDING);
    assert_eq!((t.teardown_unmeasured, t.teardown_over_budget), (1, 0));
    assert_eq!(t.teardown_budget.claimed() as usize, TEARDOWNS_PENDING);
}

#[test]
fn the_exit_probe_times_a_short_stretch_by_the_wall_clock_and_a_long_one_by_the_cpu_clock() {
    // Short: the wall time since `began`, which the thread's CPU time cannot exceed.
    let cpu = own_cpu_ns();
    let began = std::time::Instant::now();
    let short = exit_work_ns(cpu, began);
    assert!(short < EXIT_WORK_WALL_BOUND.as_nanos() as u64, "{short} ns");
    // Long and mostly asleep: the CPU clock, not the 50 ms of wall time.
    let cpu = own_cpu_ns();
    let began = std::time::Instant::now();
    std::thread::sleep(std::time::Duration::from_millis(50));
    let cpu_after = own_cpu_ns();
    let long = exit_work_ns(cpu, began);
    let upper = own_cpu_ns() - cpu;
    assert!(
        long >= cpu_after - cpu && long <= upper,
        "{long} ns of CPU for a 50 ms sleep ({} to {upper} ns on the thread's clock)",
        cpu_after - cpu
    );
}

/// A thread whose exit probe placed it is still listed while its teardown runs: a scan then must
/// not take it for a new thread with its tid and count its whole CPU time again (seen once in CI:
/// a 600 ms native thread counted 1,214 ms). A new thread with the tid is still seen.
#[test]
fn a_scan_during_a_thread_s_teardown_counts_it_once() {
    let tracker = std::sync::Arc::new(Mutex::new(Tracker::new()));
    let shared = tracker.clone();
    // Then its teardown: still listed, its CPU clock still readable.
    let worker = Idler::after(move || {
        spin_own_cpu(20_000_000);
        let mut r = Record::new(own_tid(), 0);
        r.comm = "codec-worker".into();
        r.observe_outside(own_cpu_ns());
        crate::sync::lock(&shared).finish_at_exit(r, true);
    });
    let tid = worker.tid;
    let mut t = crate::sync::lock(&tracker);
    let placed = t.ended_parts.get(Part::NativeThreads);
    assert!(placed >= 20_000_000, "{placed}");
    for _ in 0..2 {
        t.scans += 1;
        t.scan_listed(&[tid], true, None, false);
    }
    assert!(t.records.is_empty(), "the exited thread got a new record");
    assert_eq!(t.parts_now().get(Part::NativeThreads), placed);
    // A tid whose clock reads less than the probe's last figure names a new thread, as does one
    // seen long after the probe.
    let last = t.exited[&tid];
    for (cpu, second) in [(u64::MAX, last.second), (last.cpu, 0)] {
        t.exited.insert(tid, Exited { cpu, second });
        t.scans += 1;
        t.scan_listed(&[tid], true, None, false);
        assert_eq!(t.records.len(), 1);
        assert!(t.exited.is_empty());
        t.records.clear();
    }
    drop(t);
    worker.end();
}

/// A thread whose exit probe ran while its context was still open (the context closes after, on
/// the same thread): its record ends as the context closes, and a scan that lists it during its
/// teardown opens no new one with its whole CPU.
#[test]
fn a_thread_whose_probe_saw_its_context_open_is_counted_once() {
    let tracker = std::sync::Arc::new(Mutex::new(Tracker::new()));
    let shared = tracker.clone();
    let worker = Idler::after(move || {
        let tid = own_tid();
        let mut r = Record::new(tid, 0);
        r.open = Some(OpenContext {
            cpu: 0,
            bytecode_ns: 0,
            native_ns: 0,
        });
        r.exited = true;
        let mut t = crate::sync::lock(&shared);
        t.records.insert(tid, r);
        drop(t);
        let spun = spin_own_cpu(20_000_000);
        crate::sync::lock(&shared).close_context(tid, own_cpu_ns(), [spun, 0], false, None);
    });
    let tid = worker.tid;
    let mut t = crate::sync::lock(&tracker);
    assert_eq!((t.ended_threads, t.records.len()), (1, 0));
    let placed = t.ended_parts.get(Part::JavaBytecode);
    assert!(placed >= 20_000_000, "{placed}");
    for _ in 0..2 {
        t.scans += 1;
        t.scan_listed(&[tid], true, None, false);
    }
    assert_eq!((t.ended_threads, t.records.len()), (1, 0));
    assert_eq!(t.parts_now().get(Part::JavaBytecode), placed);
    drop(t);
    worker.end();
}

/// A Java thread's exit left as a note (its teardown past the second's budget) is applied by the
/// next scan before the listing that no longer shows the thread is read: its time after its
/// context goes to the VM, once, and no teardown is counted on the scan's own thread.
#[test]
fn a_java_thread_s_exit_note_is_applied_before_the_listing_that_misses_it() {
    let mut t = Tracker::new();
    t.reserve_exit_notes();
    // Above the kernel's largest pid: no thread has it.
    let tid = i32::MAX - 3;
    let mut r = Record::new(tid, 0);
    r.had_context = true;
    r.started_by = Some(Origin::Vm);
    r.java = [6_000, 3_000];
    r.startup_ns = 500;
    r.cpu_seen = 9_500;
    t.records.insert(tid, r);
    let note = ExitNote {
        tid,
        started_by: Some(Origin::Vm),
        cpu: 10_200,
    };
    assert!(leave_exit_note(note));
    t.scan(None, false);
    assert!(!t.records.contains_key(&tid));
    let mine: Vec<(Part, u64)> = t
        .ended_rows
        .iter()
        .filter(|row| row.tid == tid as i64)
        .map(|row| (row.part, row.cpu_ns))
        .collect();
    let parts = sum_by_part(&mine);
    assert_eq!(
        (
            parts.get(Part::JavaBytecode),
            parts.get(Part::JavaNative),
            parts.get(Part::VmOther),
        ),
        (6_000, 3_000, 1_200)
    );
    assert!(t.teardowns.iter().all(|d| d.tid() != tid));
    // Applied once: a second scan changes nothing of it.
    t.scan(None, false);
    let again: u64 = t
        .ended_rows
        .iter()
        .filter(|row| row.tid == tid as i64)
        .map(|row| row.cpu_ns)
        .sum();
    assert_eq!(again, 10_200);
}

#[test]
fn the_exit_word_keeps_who_started_the_thread_and_its_tid() {
    for started_by in [None, Some(Origin::Vm), Some(Origin::Native)] {
        for tid in [0, 1, 4_194_304, i32::MAX] {
            let word = ExitWord { started_by, tid };
            assert_eq!(ExitWord::unpack(word.pack()), word);
        }
    }
}

/// Thread ends faster than the table of exited tids holds within its window (over 8,000 a
/// second) make room for a quarter of it at once: no end pays a pass over a full table.
#[test]
fn a_full_table_of_exited_threads_makes_room_for_a_quarter_at_once() {
    let mut t = Tracker::new();
    let second = coarse_seconds();
    for tid in 0..EXITED_REMEMBERED as i32 {
        t.exited.insert(tid, Exited { cpu: 1, second });
    }
    t.remember_exited(-1, 1);
    let after = t.exited.len();
    assert!(after <= EXITED_REMEMBERED * 3 / 4, "{after} left");
    assert!(t.exited.contains_key(&-1));
    // Older ends go first: this second's stay while they fit (tried again if the coarse clock's
    // second turns meanwhile).
    loop {
        let second = coarse_seconds();
        let mut t = Tracker::new();
        for tid in 0..EXITED_REMEMBERED as i32 {
            let second = if tid % 2 == 0 { second } else { second - 1 };
            t.exited.insert(tid, Exited { cpu: 1, second });
        }
        t.remember_exited(-1, 1);
        if coarse_seconds() == second {
            assert_eq!(t.exited.len(), EXITED_REMEMBERED / 2 + 1);
            break;
        }
    }
}

/// A budget spent for good (perf events denied) has nothing left for either kind.
#[test]
fn a_teardown_budget_spent_for_good_has_nothing_left() {
    let budget = TeardownBudget::new();
    budget.spend_for_good();
    assert!(!budget.left(true) && !budget.left(false));
    assert!(!budget.claim(true) && !budget.claim(false));
}
