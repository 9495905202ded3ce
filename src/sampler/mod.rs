//! The boundary sampler: a per-thread CPU-time timer whose signal classifies the interrupted
//! program counter, so that each thread's exact bytecode and native time can be split into the
//! parts of the JNI boundary (see `report::boundary`).
//!
//! Each counted thread gets a sampling source aimed at it once it has run [`DEFAULT_ARM_AFTER`] of
//! CPU time (`boundary_after=`), armed from outside by the armer (see `merge::start_armer`), or at
//! once when its context is created with `boundary_after=0`; the owner closes it when its context
//! retires. Opening one costs about 20 µs of CPU, more than a short thread's whole accounting, and
//! a thread of under 1 ms would get 0.1 samples on average at the default period: such threads
//! carry no sampler, and their time is the report's `unsampled_ns`. The source is either
//! - a perf software `task-clock` event (the default when `perf_event_open` is allowed): an
//!   hrtimer that fires every period of the thread's CPU time, signalled to the thread through
//!   `F_SETSIG`/`F_SETOWN_EX`; its rate follows the CPU the thread gets, loaded machine or not;
//! - or a `timer_create(CLOCK_THREAD_CPUTIME_ID)` timer (`SIGEV_THREAD_ID`), when perf is denied
//!   (containers) or with `boundary=timer`. Linux checks CPU timers only at scheduler ticks, so
//!   this samples at most once per tick (250 Hz on a `CONFIG_HZ=250` kernel), and fewer under CPU
//!   contention: measured 255 samples per CPU second alone, 75 beside two CPU hogs on 2 cores.
//!
//! Either way each sample is the PC where the thread was interrupted: a uniform draw from its CPU
//! time. The signal is a real-time one, not SIGPROF (which profilers such as async-profiler use).
//!
//! The handler is async-signal-safe: it reads the thread's [`Probe`] through the JNI wrappers'
//! initial-exec TLS word (no `__tls_get_addr`, no allocation, no lock), the PC from the signal's
//! context, and bumps owner-only counters (the handler runs on the owning thread). Signals that
//! are not ours are passed to the handler that was there before.
//!
//! Files: this one (timers, handler, per-thread counters); `ranges` (which code a PC is in);
//! `parts` (what the samples mean: the five parts and their error).

use jni_wrappers::{Mark, StackWord};
use std::sync::atomic::{
    AtomicBool, AtomicI32, AtomicU32, AtomicU64, AtomicUsize,
    Ordering::{AcqRel, Acquire, Relaxed, Release},
};
use std::sync::OnceLock;

mod parts;
mod ranges;
pub(crate) use parts::{count_error95, share_of_native, wilson_half_width, Boundary, METHOD, Z95};
pub(crate) use ranges::{note_agent_pages, set_code_cache, CodeClass};

/// Default period: 10 ms of a thread's CPU time, a sampling profiler's usual interval. A sample
/// costs about 30 µs of CPU through perf's task-clock on the 2-core dev VM (its hrtimer interrupt),
/// so 1 ms would cost 3 %; timers cost less per sample but take at most one per scheduler tick.
pub(crate) const DEFAULT_PERIOD: std::time::Duration = std::time::Duration::from_millis(10);

/// Default CPU time a thread runs before its sampler is armed: at the default period it would
/// have had 0.1 samples by then, while the sampler's per-thread cost (about 20 µs) is 2 % of it.
pub(crate) const DEFAULT_ARM_AFTER: std::time::Duration = std::time::Duration::from_millis(1);

/// The raw sample counts of one thread or any sum of threads, by side (the state the exact
/// accounting was in) and by what the PC was in. These are what the boundary parts are split by.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
pub(crate) struct BoundarySamples {
    /// Bytecode side, PC in the code cache (interpreter, compiled code, stubs).
    pub(crate) java_code: u64,
    /// Bytecode side, PC in libjvm or any other library the VM calls.
    pub(crate) jvm_in_java: u64,
    /// Bytecode side, PC in the agent.
    pub(crate) agent_in_java: u64,
    /// Native side, PC outside libjvm, the code cache and the agent, with no JNI function open.
    pub(crate) native_code: u64,
    /// Native side, inside a JNI function, or PC in libjvm or the code cache.
    pub(crate) jvm_in_native: u64,
    /// Native side, PC in the agent.
    pub(crate) agent_in_native: u64,
}

impl BoundarySamples {
    pub(crate) fn bytecode_side(&self) -> [u64; 3] {
        [self.java_code, self.jvm_in_java, self.agent_in_java]
    }

    pub(crate) fn native_side(&self) -> [u64; 3] {
        [self.native_code, self.jvm_in_native, self.agent_in_native]
    }

    pub(crate) fn total(&self) -> u64 {
        self.bytecode_side().iter().sum::<u64>() + self.native_side().iter().sum::<u64>()
    }

    pub(crate) fn add(&mut self, other: &BoundarySamples) {
        self.java_code += other.java_code;
        self.jvm_in_java += other.jvm_in_java;
        self.agent_in_java += other.agent_in_java;
        self.native_code += other.native_code;
        self.jvm_in_native += other.jvm_in_native;
        self.agent_in_native += other.agent_in_native;
    }

    /// What was added between `earlier` and `self` (both cumulative), at least 0 each.
    pub(crate) fn since(&self, earlier: &BoundarySamples) -> BoundarySamples {
        BoundarySamples {
            java_code: self.java_code.saturating_sub(earlier.java_code),
            jvm_in_java: self.jvm_in_java.saturating_sub(earlier.jvm_in_java),
            agent_in_java: self.agent_in_java.saturating_sub(earlier.agent_in_java),
            native_code: self.native_code.saturating_sub(earlier.native_code),
            jvm_in_native: self.jvm_in_native.saturating_sub(earlier.jvm_in_native),
            agent_in_native: self.agent_in_native.saturating_sub(earlier.agent_in_native),
        }
    }
}

/// Samples of one native method while it was the innermost open native, on the native side.
#[derive(Default)]
pub(crate) struct MethodSamples {
    /// PC in the method's own code or the libraries it calls.
    pub(crate) own: AtomicU64,
    /// Inside a JNI function (or libjvm).
    pub(crate) jni: AtomicU64,
    /// In the agent (its wrappers and trampolines).
    pub(crate) agent: AtomicU64,
}

/// Where the handler finds a native method's [`MethodSamples`] by id, without allocating.
pub(crate) trait MethodSampleRows: Sync {
    /// The row of `method` if it exists already, marked as written to.
    fn existing(&self, method: u32) -> Option<&MethodSamples>;
}

/// One thread's sampler state, inside its context (a stable heap address while the thread runs).
pub(crate) struct Probe {
    /// The JNI wrappers' per-thread block: exact call counts and the open-function marker.
    pub(crate) block: Box<jni_wrappers::ThreadBlock>,
    /// The innermost open native method's id + 1 (0: none), written by the context.
    pub(crate) innermost: AtomicU32,
    pub(crate) counts: [AtomicU64; 6],
    /// Native-side samples inside each counted JNI function, by index among all functions.
    pub(crate) jni: Box<[AtomicU64]>,
    /// Samples whose innermost native had no row yet (its first call), by side-neutral count.
    pub(crate) unattributed: AtomicU64,
    /// The timer (`timer_t`) or the perf event's descriptor, by `source`.
    timer: AtomicUsize,
    /// One of the `SOURCE_*` states: who may touch `timer`, see [`Probe::arm`].
    source: AtomicU32,
    /// A perf-sampled thread's CPU ns and times switched in when it was armed, for the armer's
    /// one later look (see [`Probe::move_if_switchy`]); `NO_LOOK` once looked, or never to look.
    perf_armed_cpu: AtomicU64,
    perf_armed_runs: AtomicU64,
    /// The context around this probe: its state mirror and its method rows (set once; a reused
    /// context keeps both).
    owner: OnceLock<OwnerRefs>,
}

/// Pointers into the context that holds the probe; valid as long as the probe.
struct OwnerRefs {
    in_native: *const AtomicBool,
    methods: *const dyn MethodSampleRows,
}

// SAFETY: both point into the context that owns the probe, which is shared between threads
// anyway (its fields are atomics or only read by the owner); they are only dereferenced while
// the probe is alive.
unsafe impl Send for OwnerRefs {}
// SAFETY: as above.
unsafe impl Sync for OwnerRefs {}

// Index of each class in `Probe::counts`, in `BoundarySamples` field order.
const JAVA_CODE: usize = 0;
const JVM_IN_JAVA: usize = 1;
const AGENT_IN_JAVA: usize = 2;
const NATIVE_CODE: usize = 3;
const JVM_IN_NATIVE: usize = 4;
const AGENT_IN_NATIVE: usize = 5;

#[inline]
fn bump(counter: &AtomicU64) {
    // Owner-only writer (the handler runs on the owning thread): no locked instruction.
    counter.store(counter.load(Relaxed).wrapping_add(1), Relaxed);
}

impl Probe {
    pub(crate) fn new() -> Probe {
        Probe {
            block: Box::new(jni_wrappers::ThreadBlock::new()),
            innermost: AtomicU32::new(0),
            counts: std::array::from_fn(|_| AtomicU64::new(0)),
            jni: (0..jni_wrappers::ALL_FUNCTION_COUNT)
                .map(|_| AtomicU64::new(0))
                .collect(),
            unattributed: AtomicU64::new(0),
            timer: AtomicUsize::new(0),
            source: AtomicU32::new(SOURCE_NONE),
            perf_armed_cpu: AtomicU64::new(0),
            perf_armed_runs: AtomicU64::new(NO_LOOK),
            owner: OnceLock::new(),
        }
    }

    /// Zero everything, for a context reused by another thread (not armed).
    pub(crate) fn reset(&mut self) {
        self.block.reset();
        *self.source.get_mut() = SOURCE_NONE;
        *self.timer.get_mut() = 0;
        *self.perf_armed_runs.get_mut() = NO_LOOK;
        *self.innermost.get_mut() = 0;
        // A sample inside a JNI function is counted in `counts` too: a thread never sampled (most
        // short ones) left the 230 counters of `jni` at zero, and they are not written again.
        let sampled = self.counts.iter_mut().any(|c| *c.get_mut() != 0);
        for c in self.counts.iter_mut() {
            *c.get_mut() = 0;
        }
        if sampled {
            for c in self.jni.iter_mut() {
                *c.get_mut() = 0;
            }
        }
        *self.unattributed.get_mut() = 0;
    }

    /// The sample counts so far (any thread may read them).
    pub(crate) fn samples(&self) -> BoundarySamples {
        let c = |i: usize| self.counts[i].load(Relaxed);
        BoundarySamples {
            java_code: c(JAVA_CODE),
            jvm_in_java: c(JVM_IN_JAVA),
            agent_in_java: c(AGENT_IN_JAVA),
            native_code: c(NATIVE_CODE),
            jvm_in_native: c(JVM_IN_NATIVE),
            agent_in_native: c(AGENT_IN_NATIVE),
        }
    }

    /// Exact calls of each counted JNI function on this thread, by counted index.
    pub(crate) fn counted_calls(&self) -> impl Iterator<Item = u64> + '_ {
        self.block.calls.iter().map(|c| c.load(Relaxed))
    }

    /// The same calls handed to `f`, zeroed as they are read: for a retired thread's merge.
    pub(crate) fn take_counted_calls(&self, f: impl FnMut(usize, u64)) {
        self.block.take_calls(f);
    }

    /// Samples taken inside each counted JNI function, by counted index.
    pub(crate) fn samples_inside_counted(&self) -> impl Iterator<Item = u64> + '_ {
        let counted = self
            .jni
            .get(jni_wrappers::FUNCTION_COUNT..)
            .unwrap_or_default();
        counted.iter().map(|c| c.load(Relaxed))
    }

    /// On the owning thread, once its context is in place: publish the block to the JNI wrappers
    /// and, with `boundary_after=0`, arm the thread's sampler (else the armer does, later).
    /// `in_native` is the context's state mirror, `native_calls` its count of native calls and
    /// `methods` its method rows: fields of the same context as the probe, so they live as long as
    /// it does.
    pub(crate) fn start_current(
        &self,
        in_native: &AtomicBool,
        native_calls: &AtomicU64,
        methods: &dyn MethodSampleRows,
    ) {
        let _ = self.owner.set(OwnerRefs {
            in_native,
            // SAFETY: erases the borrow's lifetime only; see the method's contract.
            methods: unsafe {
                std::mem::transmute::<&dyn MethodSampleRows, &'static dyn MethodSampleRows>(methods)
            },
        });
        self.block
            .owner
            .store(self as *const Probe as usize, Relaxed);
        // SAFETY: `native_calls` is a field of the context that holds this probe and its block.
        // A mark left in one native call is stale in the next (see `ThreadBlock::mark`).
        unsafe { self.block.set_entries(native_calls) };
        // SAFETY: the block is boxed in this probe, which outlives its publication: the owning
        // thread unpublishes it in `stop_current` before its context retires.
        unsafe { jni_wrappers::set_thread_block(&*self.block) };
        if let Some(config) = CONFIG.get().filter(|c| c.enabled && c.arm_after.is_zero()) {
            // SAFETY: gettid has no preconditions.
            self.arm(unsafe { libc::gettid() }, config);
        }
    }

    /// Whether the sampler still waits to be armed (the armer's question).
    pub(crate) fn waits_for_arming(&self) -> bool {
        self.source.load(Acquire) == SOURCE_NONE
    }

    /// `source` from `from` to `to` for [`Probe::move_if_switchy`]; if the owner stopped the probe
    /// first (or it was never perf), `timer` is still the armer's alone and is deleted.
    fn advance_or_delete(&self, from: u32, to: u32, timer: libc::timer_t) -> bool {
        let advanced = self
            .source
            .compare_exchange(from, to, AcqRel, Acquire)
            .is_ok();
        if !advanced {
            close_source(SOURCE_TIMER, timer as usize);
        }
        advanced
    }

    /// Whether the armer is to look at this perf-sampled thread once more (see
    /// [`Probe::move_if_switchy`]).
    pub(crate) fn awaits_a_look(&self) -> bool {
        self.perf_armed_runs.load(Relaxed) != NO_LOOK
    }

    /// Whether that look is due, the thread having run to `cpu_now` ns: [`LOOK_AFTER_CPU`] (or a
    /// period, if longer) since it was armed.
    pub(crate) fn due_for_a_look(&self, cpu_now: u64, config: &Config) -> bool {
        let window = config.period.max(LOOK_AFTER_CPU).as_nanos() as u64;
        cpu_now >= self.perf_armed_cpu.load(Relaxed) + window
    }

    /// The armer's one later look at a perf-sampled thread (`tid`, whose probe this is): one that
    /// was switched in more than [`SWITCHES_PER_CPU_MS_FOR_TIMER`] times per ms of CPU since it
    /// was armed moves to a CPU-time timer. A perf sampling event re-arms its hrtimer at every
    /// switch of its thread, a timer costs nothing there. The armer holds the registry lock (the
    /// context cannot be reused meanwhile); the owner may stop the probe at any moment, and the
    /// `source` states decide who closes what, as in [`Probe::arm`]: `PERF` → `ARMING` (the perf
    /// descriptor is now the armer's to close) → `TIMER` (the timer is the owner's).
    pub(crate) fn move_if_switchy(&self, tid: i32, config: &Config) {
        let runs_then = self.perf_armed_runs.swap(NO_LOOK, Relaxed);
        if runs_then == NO_LOOK {
            return;
        }
        let Some((cpu, runs)) = schedstat(tid) else {
            return;
        };
        let cpu_ms = cpu.saturating_sub(self.perf_armed_cpu.load(Relaxed)) / 1_000_000;
        if runs.saturating_sub(runs_then) <= cpu_ms.max(1) * SWITCHES_PER_CPU_MS_FOR_TIMER {
            return;
        }
        let Some(timer) = arm_timer(tid, config) else {
            return; // perf stays
        };
        if !self.advance_or_delete(SOURCE_PERF, SOURCE_ARMING, timer) {
            return;
        }
        let perf = self.timer.swap(timer as usize, AcqRel);
        close_source(SOURCE_PERF, perf);
        if !self.advance_or_delete(SOURCE_ARMING, SOURCE_TIMER, timer) {
            return;
        }
        TIMER_THREADS.fetch_add(1, Relaxed);
        MOVED_TO_TIMER.fetch_add(1, Relaxed);
    }

    /// Arm the sampler of thread `tid`, whose probe this is, if nobody did: from the owner
    /// (`boundary_after=0`) or from the armer, which holds the registry lock, so the context
    /// cannot be retired and reused meanwhile. The `source` state decides who closes the handle:
    /// `NONE` → `ARMING` (the armer's; the handle is stored before it is enabled, so a sample that
    /// fires at once is recognised) → `PERF`/`TIMER` (the owner's, closed by `stop_current`). If
    /// the owner stopped meanwhile (`STOPPED`), the armer closes what it opened.
    pub(crate) fn arm(&self, tid: i32, config: &Config) {
        if self
            .source
            .compare_exchange(SOURCE_NONE, SOURCE_ARMING, AcqRel, Acquire)
            .is_err()
        {
            return;
        }
        // Armed from outside: the armer looks once more, some CPU time later. A timer takes at
        // most one sample per scheduler tick, so a shorter period stays with perf.
        let seen = (!config.arm_after.is_zero() && config.period >= TIMER_KEEPS_PERIOD)
            .then(|| schedstat(tid))
            .flatten();
        // A thread that blocked often already gets a timer at once: a perf event, even once
        // closed, leaves the kernel a per-thread perf context to switch at every switch.
        let switchy = seen.is_some_and(|(cpu, _)| {
            voluntary_switches(tid).is_some_and(|n| n > switches_for_a_timer_at_once(cpu))
        });
        let perf = (!config.timer_only && !switchy)
            .then(|| open_task_clock(tid, config))
            .flatten();
        let (source, handle) = match perf {
            Some(fd) => (SOURCE_PERF, fd as usize),
            None => match arm_timer(tid, config) {
                Some(timer) => (SOURCE_TIMER, timer as usize),
                None => {
                    ARM_FAILURES.fetch_add(1, Relaxed);
                    let _ =
                        self.source
                            .compare_exchange(SOURCE_ARMING, SOURCE_FAILED, AcqRel, Acquire);
                    return;
                }
            },
        };
        self.timer.store(handle, Release);
        if source == SOURCE_PERF {
            // SAFETY: our own descriptor, fully set up and known to nobody else yet; from here
            // on it signals the thread.
            unsafe { libc::ioctl(handle as i32, PERF_EVENT_IOC_ENABLE, 0) };
        }
        if self
            .source
            .compare_exchange(SOURCE_ARMING, source, AcqRel, Acquire)
            .is_err()
        {
            // The owner stopped while we armed: the handle is still ours alone.
            close_source(source, handle);
            return;
        }
        if source == SOURCE_PERF {
            PERF_THREADS.fetch_add(1, Relaxed);
            if let Some((cpu, runs)) = seen {
                self.perf_armed_cpu.store(cpu, Relaxed);
                self.perf_armed_runs.store(runs, Relaxed);
            }
        } else {
            TIMER_THREADS.fetch_add(1, Relaxed);
            if switchy {
                TIMED_AT_ONCE.fetch_add(1, Relaxed);
            }
        }
    }

    /// On the owning thread, before its context retires: close the sampling source and unpublish
    /// the block.
    pub(crate) fn stop_current(&self) {
        match self.source.swap(SOURCE_STOPPED, AcqRel) {
            // Armed: the handle is the owner's to close (see `arm`).
            source @ (SOURCE_TIMER | SOURCE_PERF) => close_source(source, self.timer.load(Acquire)),
            SOURCE_NONE if CONFIG.get().is_some_and(|c| c.enabled) => {
                ENDED_UNARMED.fetch_add(1, Relaxed);
            }
            // ARMING: the armer sees STOPPED and closes its handle itself.
            _ => {}
        }
        // SAFETY: null unpublishes.
        unsafe { jni_wrappers::set_thread_block(std::ptr::null()) };
        self.block.owner.store(0, Relaxed);
    }

    /// One sample: the handler's work, on the owning thread, interrupted at `pc` with its stack
    /// pointer at `sp`.
    #[inline]
    fn record(&self, pc: usize, sp: usize) {
        let Some(owner) = self.owner.get() else {
            return;
        };
        let class = ranges::classify(pc);
        // SAFETY: `OwnerRefs` points into the context that holds this probe (alive: we are in it).
        let native = unsafe { &*owner.in_native }.load(Relaxed);
        // Which counted JNI function the thread is in, if any: asked only where it decides. Where
        // the kernel refuses to read the stack, a sample in libjvm keeps the mark (the JVM runs
        // there) and one elsewhere does not.
        let inside = match class {
            CodeClass::Jvm | CodeClass::Other if native => {
                match self.block.mark(sp, read_own_stack) {
                    Mark::Inside(mark) => mark as usize,
                    Mark::Unverified(mark) if class == CodeClass::Jvm => mark as usize,
                    Mark::Unverified(_) | Mark::Outside => 0,
                }
            }
            _ => 0,
        };
        let index = if native {
            match class {
                CodeClass::Agent => AGENT_IN_NATIVE,
                CodeClass::Jvm | CodeClass::CodeCache => JVM_IN_NATIVE,
                CodeClass::Other if inside != 0 => JVM_IN_NATIVE,
                CodeClass::Other => NATIVE_CODE,
            }
        } else {
            match class {
                CodeClass::Agent => AGENT_IN_JAVA,
                CodeClass::CodeCache => JAVA_CODE,
                CodeClass::Jvm | CodeClass::Other => JVM_IN_JAVA,
            }
        };
        bump(&self.counts[index]);
        if !native {
            return;
        }
        if inside != 0 && index == JVM_IN_NATIVE {
            if let Some(counter) = self.jni.get(inside - 1) {
                bump(counter);
            }
        }
        let innermost = self.innermost.load(Relaxed);
        if innermost == 0 {
            return;
        }
        // SAFETY: as for `in_native` above.
        let rows = unsafe { &*owner.methods };
        match rows.existing(innermost - 1) {
            Some(row) => bump(match index {
                NATIVE_CODE => &row.own,
                AGENT_IN_NATIVE => &row.agent,
                _ => &row.jni,
            }),
            None => bump(&self.unattributed),
        }
    }
}

/// Not armed yet.
const SOURCE_NONE: u32 = 0;
const SOURCE_TIMER: u32 = 1;
const SOURCE_PERF: u32 = 2;
/// Being armed (the handle, once stored, is the armer's).
const SOURCE_ARMING: u32 = 3;
/// The owner stopped the probe: it is never armed again (until the context is reused).
const SOURCE_STOPPED: u32 = 4;
/// Neither perf nor a timer could be had: the thread stays unsampled.
const SOURCE_FAILED: u32 = 5;

/// Close a sampling source's handle.
fn close_source(source: u32, handle: usize) {
    match source {
        // SAFETY: a timer created by `arm` and deleted only here, once.
        SOURCE_TIMER => unsafe {
            libc::timer_delete(handle as libc::timer_t);
        },
        // SAFETY: a descriptor opened by `arm` and closed only here, once.
        SOURCE_PERF => unsafe {
            libc::close(handle as i32);
        },
        _ => {}
    }
}
/// `_IO('$', 0)`.
const PERF_EVENT_IOC_ENABLE: libc::c_ulong = 0x2400;

/// Times a thread was switched in per ms of its CPU time, over [`LOOK_AFTER_CPU`] (or a period)
/// after it was armed, above which a perf-sampled thread moves to a CPU-time timer. Two threads
/// handing a byte back and forth on one CPU took 7.6 µs of CPU a round trip, 7.7 with a timer on
/// the first and 9.4 with a perf sampling event (its hrtimer, at every switch): a thread that
/// blocks and wakes all the time (one that starts and joins others, or waits on I/O) pays more
/// for perf at its switches than for its samples.
const SWITCHES_PER_CPU_MS_FOR_TIMER: u64 = 1;
/// Times a thread blocked, since it started, above which it is armed with a timer at once, at
/// `cpu_ns` of its CPU: more than 4 per ms of its CPU (what makes its clock keep tsc-gated's gate)
/// and more than 16 in all, so that the few waits of a thread's start do not count.
fn switches_for_a_timer_at_once(cpu_ns: u64) -> u64 {
    (cpu_ns * crate::clock::SWITCHES_PER_CPU_MS_FOR_GATE / 1_000_000).max(16)
}
/// `Probe::perf_armed_runs` when the armer has no look left to take.
const NO_LOOK: u64 = u64::MAX;
/// CPU time after arming at which the armer looks (or a period, if longer): enough for a thread
/// that is only preempted now and then (every few ms beside CPU hogs) to show it.
const LOOK_AFTER_CPU: std::time::Duration = std::time::Duration::from_millis(20);
/// The shortest period at which a thread may move to a timer: a scheduler tick at 250 Hz (timers
/// fire at most once per tick, so a shorter period would lose samples).
const TIMER_KEEPS_PERIOD: std::time::Duration = std::time::Duration::from_millis(4);

/// Thread `tid`'s voluntary context switches (it blocked), from `/proc/self/task/TID/status`.
fn voluntary_switches(tid: i32) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/self/task/{tid}/status")).ok()?;
    text.lines()
        .find_map(|line| line.strip_prefix("voluntary_ctxt_switches:"))
        .and_then(|n| n.trim().parse().ok())
}

/// Thread `tid`'s CPU ns and the times it was switched in, from `/proc/self/task/TID/schedstat`
/// (its CPU ns, its ns waiting to run, its runs on a CPU); None if the kernel does not say.
fn schedstat(tid: i32) -> Option<(u64, u64)> {
    let text = std::fs::read_to_string(format!("/proc/self/task/{tid}/schedstat")).ok()?;
    let mut fields = text.split_ascii_whitespace();
    let cpu: u64 = fields.next()?.parse().ok()?;
    let runs: u64 = fields.nth(1)?.parse().ok()?;
    Some((cpu, runs))
}

impl Default for Probe {
    fn default() -> Self {
        Probe::new()
    }
}

/// How the sampler runs, fixed at start-up.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Config {
    pub(crate) enabled: bool,
    /// Never try perf: CPU-time timers only (`boundary=timer`).
    pub(crate) timer_only: bool,
    pub(crate) period: std::time::Duration,
    /// CPU time a thread runs before its sampler is armed (0: when its context opens).
    pub(crate) arm_after: std::time::Duration,
    pub(crate) signal: i32,
    /// This process, whose stack words the handler reads through the kernel.
    pub(crate) pid: libc::pid_t,
}

static CONFIG: OnceLock<Config> = OnceLock::new();
/// Threads whose timer could not be created (they are counted, not sampled).
static ARM_FAILURES: AtomicU64 = AtomicU64::new(0);
/// Threads sampled by each source.
static PERF_THREADS: AtomicU64 = AtomicU64::new(0);
static TIMER_THREADS: AtomicU64 = AtomicU64::new(0);
/// Perf-sampled threads that moved to a timer (see [`Probe::move_if_switchy`]).
static MOVED_TO_TIMER: AtomicU64 = AtomicU64::new(0);
/// Threads armed with a timer at once because they had switched often already.
static TIMED_AT_ONCE: AtomicU64 = AtomicU64::new(0);
/// Threads whose context retired before their sampler was armed (they ran less than
/// `arm_after`, or ended before the armer's next look).
static ENDED_UNARMED: AtomicU64 = AtomicU64::new(0);
/// Our signals that found no probe on their thread (after its context retired).
static STRAY: AtomicU64 = AtomicU64::new(0);
/// Samples whose JNI-function mark could not be read (process_vm_readv refused), and the errno.
static UNREAD_MARKS: AtomicU64 = AtomicU64::new(0);
static UNREAD_ERRNO: AtomicI32 = AtomicI32::new(0);
/// The handler that was installed for our signal before ours, as a raw `sigaction` copy.
static PREVIOUS: OnceLock<libc::sigaction> = OnceLock::new();
/// What `sigev_value` carries for our timers, to tell their signals from anyone else's.
const COOKIE: usize = 0x6e61_6374; // "nact"

/// The signal the sampler uses: a real-time one, so that it never collides with SIGPROF users.
fn our_signal() -> i32 {
    libc::SIGRTMIN() + 5
}

/// Install the handler (once) and remember how to arm timers. With `enabled` false nothing is
/// installed: threads still publish their JNI counter blocks.
pub(crate) fn configure(
    enabled: bool,
    timer_only: bool,
    period: std::time::Duration,
    arm_after: std::time::Duration,
) -> Result<(), String> {
    let config = Config {
        enabled,
        timer_only,
        period,
        arm_after,
        signal: our_signal(),
        // SAFETY: getpid has no preconditions.
        pid: unsafe { libc::getpid() },
    };
    ranges::learn_objects();
    if enabled {
        install_handler(config.signal)?;
    }
    let _ = CONFIG.set(config);
    Ok(())
}

/// The configuration in force (None before `configure`).
pub(crate) fn config() -> Option<Config> {
    CONFIG.get().copied()
}

/// Threads sampled through perf's task-clock and through CPU-time timers, so far.
pub(crate) fn sources() -> (u64, u64) {
    (PERF_THREADS.load(Relaxed), TIMER_THREADS.load(Relaxed))
}

/// Threads that moved from perf to a timer because they switch often, so far (counted in both
/// [`sources`]).
pub(crate) fn moved_to_timer() -> u64 {
    MOVED_TO_TIMER.load(Relaxed)
}

/// Threads armed with a timer at once because they had switched often already, so far (counted in
/// [`sources`]).
pub(crate) fn timed_at_once() -> u64 {
    TIMED_AT_ONCE.load(Relaxed)
}

/// Threads that ended before their sampler was armed, so far.
pub(crate) fn ended_unarmed() -> u64 {
    ENDED_UNARMED.load(Relaxed)
}

/// What the report should say about the sampler: threads it could not sample, code it could
/// not place.
pub(crate) fn notes() -> Vec<String> {
    let mut notes = Vec::new();
    if !CONFIG.get().is_some_and(|c| c.enabled) {
        return notes;
    }
    let failures = ARM_FAILURES.load(Relaxed);
    if failures > 0 {
        notes.push(format!(
            "boundary: {failures} threads got no CPU-time timer (timer_create refused); their time is split as IPA reads it, with its whole time as error"
        ));
    }
    let unread = UNREAD_MARKS.load(Relaxed);
    if unread > 0 {
        let errno = std::io::Error::from_raw_os_error(UNREAD_ERRNO.load(Relaxed));
        notes.push(format!(
            "boundary: {unread} samples could not read their thread's stack to tell whether it was inside a JNI function (process_vm_readv refused: {errno}); those in libjvm keep the last JNI function the thread entered, those elsewhere (a C library under a JNI function) count as native code"
        ));
    }
    if !ranges::code_cache_known() {
        notes.push("boundary: the VM does not publish its code cache bounds (CodeCache::_low_bound/_high_bound); samples in compiled Java code count as other code".to_string());
    }
    notes
}

fn install_handler(signal: i32) -> Result<(), String> {
    // SAFETY: a zeroed sigaction is a valid "no handler" value; fields are set below.
    let mut action: libc::sigaction = unsafe { std::mem::zeroed() };
    action.sa_sigaction = on_signal as *const () as usize;
    action.sa_flags = libc::SA_SIGINFO | libc::SA_RESTART | libc::SA_ONSTACK;
    // SAFETY: initialises the mask of our own local struct.
    unsafe { libc::sigemptyset(&mut action.sa_mask) };
    // SAFETY: as above.
    let mut previous: libc::sigaction = unsafe { std::mem::zeroed() };
    // SAFETY: installs a handler for a real-time signal; both structs are valid.
    if unsafe { libc::sigaction(signal, &action, &mut previous) } != 0 {
        return Err(format!(
            "cannot install the sampler's signal handler: {}",
            std::io::Error::last_os_error()
        ));
    }
    let _ = PREVIOUS.set(previous);
    Ok(())
}

/// `struct f_owner_ex` and the fcntl commands of <linux/fcntl.h> that the libc crate lacks (the
/// same numbers on every Linux architecture).
#[repr(C)]
struct OwnerEx {
    kind: i32,
    tid: i32,
}
const F_OWNER_TID: i32 = 0;
const F_SETSIG: i32 = 10;
const F_SETOWN_EX: i32 = 15;

/// Open a perf `task-clock` event on thread `tid` of this process that signals it every `period`
/// of its CPU time (disabled until the caller enables it); None if perf is denied. Counts kernel
/// time too where allowed, else user time only.
fn open_task_clock(tid: i32, config: &Config) -> Option<i32> {
    use perf_event_open_sys as sys;
    for exclude_kernel in [0, 1] {
        // SAFETY: perf_event_attr is plain old data; all-zero is its documented default.
        let mut attr: sys::bindings::perf_event_attr = unsafe { std::mem::zeroed() };
        attr.type_ = sys::bindings::PERF_TYPE_SOFTWARE;
        attr.config = sys::bindings::PERF_COUNT_SW_TASK_CLOCK as u64;
        attr.size = std::mem::size_of::<sys::bindings::perf_event_attr>() as u32;
        attr.__bindgen_anon_1.sample_period = config.period.as_nanos().max(10_000) as u64;
        attr.__bindgen_anon_2.wakeup_events = 1;
        attr.set_disabled(1);
        attr.set_exclude_kernel(exclude_kernel);
        attr.set_exclude_hv(1);
        // SAFETY: a valid attr; pid `tid` / cpu -1: that thread on any CPU; no group.
        let fd = unsafe {
            sys::perf_event_open(
                &mut attr,
                tid,
                -1,
                -1,
                sys::bindings::PERF_FLAG_FD_CLOEXEC as libc::c_ulong,
            )
        };
        if fd < 0 {
            continue;
        }
        let owner = OwnerEx {
            kind: F_OWNER_TID,
            tid,
        };
        // SAFETY: fcntl on our own descriptor with valid arguments.
        let ok = unsafe {
            libc::fcntl(fd, F_SETOWN_EX, &owner) == 0
                && libc::fcntl(fd, F_SETSIG, config.signal) == 0
                && libc::fcntl(
                    fd,
                    libc::F_SETFL,
                    libc::fcntl(fd, libc::F_GETFL) | libc::O_ASYNC,
                ) == 0
        };
        if ok {
            return Some(fd);
        }
        // SAFETY: our own descriptor.
        unsafe { libc::close(fd) };
        return None;
    }
    None
}

/// Create and start a CPU-time timer on thread `tid` of this process that signals it; None if the
/// kernel refuses.
fn arm_timer(tid: i32, config: &Config) -> Option<libc::timer_t> {
    // SAFETY: a zeroed sigevent is valid; the fields used are set below.
    let mut event: libc::sigevent = unsafe { std::mem::zeroed() };
    event.sigev_notify = libc::SIGEV_THREAD_ID;
    event.sigev_signo = config.signal;
    event.sigev_value = libc::sigval {
        sival_ptr: COOKIE as *mut libc::c_void,
    };
    event.sigev_notify_thread_id = tid;
    let mut timer: libc::timer_t = std::ptr::null_mut();
    // SAFETY: valid pointers to our locals; the clock is thread `tid`'s CPU clock.
    if unsafe { libc::timer_create(crate::clock::thread_clock_id(tid), &mut event, &mut timer) }
        != 0
    {
        return None;
    }
    let period = libc::timespec {
        tv_sec: config.period.as_secs() as libc::time_t,
        tv_nsec: config.period.subsec_nanos() as libc::c_long,
    };
    let spec = libc::itimerspec {
        it_interval: period,
        it_value: period,
    };
    // SAFETY: `timer` was just created; `spec` is valid.
    if unsafe { libc::timer_settime(timer, 0, &spec, std::ptr::null_mut()) } != 0 {
        // SAFETY: as above.
        unsafe { libc::timer_delete(timer) };
        return None;
    }
    Some(timer)
}

/// The signal handler. Async-signal-safe: loads, stores, a TLS read and at most one
/// `process_vm_readv`; no allocation, no lock, no errno change.
extern "C" fn on_signal(signal: i32, info: *mut libc::siginfo_t, context: *mut libc::c_void) {
    if info.is_null() {
        chain(signal, info, context);
        return;
    }
    let block = jni_wrappers::thread_block();
    let probe = if block.is_null() {
        0
    } else {
        // SAFETY: a published block is valid until its thread unpublishes it (on this thread).
        unsafe { &*block }.owner.load(Relaxed)
    };
    // SAFETY: `owner` is the address of the probe that published this block, alive while published.
    let probe = (probe != 0).then(|| unsafe { &*(probe as *const Probe) });
    // SAFETY: the kernel passes a valid siginfo for an SA_SIGINFO handler.
    let code = unsafe { (*info).si_code };
    let ours = match code {
        // SAFETY: for SI_TIMER the value field is the timer's sigev_value.
        libc::SI_TIMER => (unsafe { (*info).si_value().sival_ptr }) as usize == COOKIE,
        // F_SETSIG signals carry the descriptor: ours if it is this thread's perf event.
        _ => probe.is_some_and(|p| {
            matches!(p.source.load(Relaxed), SOURCE_PERF | SOURCE_ARMING)
                // SAFETY: not SI_TIMER: the siginfo's union holds the sigpoll fields.
                && unsafe { si_fd(info) } == p.timer.load(Relaxed) as i32
        }),
    };
    if !ours {
        chain(signal, info, context);
        return;
    }
    let Some(probe) = probe else {
        STRAY.fetch_add(1, Relaxed);
        return;
    };
    // SAFETY: `context` is the handler's third argument.
    let pc = unsafe { crate::arch::interrupted_pc(context) };
    // SAFETY: as above.
    let sp = unsafe { crate::arch::interrupted_sp(context) };
    probe.record(pc, sp);
}

/// One word of the calling thread's stack at `address`, read by the kernel (`process_vm_readv` on
/// this process), so that an address that is no longer mapped fails instead of faulting.
/// Async-signal-safe; errno is left as it was. A refused read is counted for the report's notes.
fn read_own_stack(address: usize) -> StackWord {
    let Some(pid) = CONFIG.get().map(|c| c.pid) else {
        return StackWord::Unreadable;
    };
    let mut word = 0usize;
    let local = libc::iovec {
        iov_base: (&mut word as *mut usize).cast(),
        iov_len: std::mem::size_of::<usize>(),
    };
    let remote = libc::iovec {
        iov_base: address as *mut libc::c_void,
        iov_len: std::mem::size_of::<usize>(),
    };
    // SAFETY: errno is this thread's; saved and restored around the call.
    let errno = unsafe { *libc::__errno_location() };
    // SAFETY: one local iovec over `word`, one remote iovec the kernel checks; no other memory.
    let read = unsafe { libc::process_vm_readv(pid, &local, 1, &remote, 1, 0) };
    // SAFETY: as above.
    let failure = unsafe { *libc::__errno_location() };
    // SAFETY: as above.
    unsafe { *libc::__errno_location() = errno };
    if read == std::mem::size_of::<usize>() as isize {
        StackWord::Holds(word)
    } else if read >= 0 || failure == libc::EFAULT {
        StackWord::Unmapped
    } else {
        UNREAD_MARKS.fetch_add(1, Relaxed);
        UNREAD_ERRNO.store(failure, Relaxed);
        StackWord::Unreadable
    }
}

/// The descriptor of a SIGPOLL-style siginfo (`si_fd`, after `si_band` in the kernel's union).
///
/// # Safety
/// `info` is a valid siginfo whose union holds the sigpoll fields.
unsafe fn si_fd(info: *const libc::siginfo_t) -> i32 {
    #[repr(C)]
    struct SigPoll {
        signo: i32,
        errno: i32,
        code: i32,
        band: libc::c_long,
        fd: i32,
    }
    // SAFETY: the caller's contract; `SigPoll` is the kernel's layout of these fields.
    unsafe { (*(info as *const SigPoll)).fd }
}

/// Hand a signal that is not ours to the handler that was there before.
fn chain(signal: i32, info: *mut libc::siginfo_t, context: *mut libc::c_void) {
    let Some(previous) = PREVIOUS.get() else {
        return;
    };
    let handler = previous.sa_sigaction;
    if handler == libc::SIG_DFL || handler == libc::SIG_IGN {
        // A real-time signal's default action ends the process; nobody else sent one on purpose
        // to a thread of ours with our number, so dropping it is the safe choice.
        return;
    }
    if previous.sa_flags & libc::SA_SIGINFO != 0 {
        // SAFETY: the previous handler was installed as an SA_SIGINFO handler.
        let f: extern "C" fn(i32, *mut libc::siginfo_t, *mut libc::c_void) =
            unsafe { std::mem::transmute(handler) };
        f(signal, info, context);
    } else {
        // SAFETY: the previous handler was installed as a plain handler.
        let f: extern "C" fn(i32) = unsafe { std::mem::transmute(handler) };
        f(signal);
    }
}
