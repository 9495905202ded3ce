//! Per-thread context and the four IPA transitions.
//!
//! A thread is either running bytecode or native code. Each transition reads the thread's clock once,
//! charges the elapsed time to the state being left, and switches state:
//!
//! | transition | from → to | signalled by |
//! |---|---|---|
//! | J2N begin | bytecode → native | a native-method wrapper, before the renamed native |
//! | J2N end   | native → bytecode | the wrapper, after it returns or throws |
//! | N2J begin | native → bytecode | a JNI `Call*Method*` / `NewObject*` wrapper, before the call |
//! | N2J end   | bytecode → native | the same wrapper, after the call |
//!
//! Only the owning thread writes its context. Totals are atomics written with plain relaxed stores,
//! so the merge at VMDeath can read a live thread's numbers without locks on the hot path.
//!
//! Files: the context itself and its clock arithmetic here; `method_table` (per-method rows),
//! `current` (finding the calling thread's context, the pool, the lifecycle hooks) and `crossings`
//! (the four transitions as the instrumentation calls them).

use crate::clock::{ClockChoice, RemoteCpu, ThreadClock};
use crate::histograms::{SampleKind, ThreadLatency};
use crate::methods::{LINK_PROBE_ID, MAX_METHODS};
use std::cell::{Cell, UnsafeCell};
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;

pub(crate) use jni_wrappers::FUNCTION_COUNT as JNI_FUNCTION_COUNT;

mod crossings;
mod current;
mod frames;
mod method_table;
pub(crate) use crossings::*;
pub use crossings::{j2n_begin, j2n_end};
pub(crate) use current::*;
pub use current::{retire_current, set_lifecycle, thread_started, Lifecycle};
use frames::{Frame, FrameStack};
pub(crate) use method_table::*;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum State {
    Bytecode,
    Native,
    /// Not known yet: a thread at JVMTI ThreadStart is either about to run `Thread.run()` (bytecode)
    /// or is a native thread that just attached (native). Its first crossing tells which, since
    /// every crossing implies the state it leaves; a thread that never crosses ran bytecode.
    Undecided,
}

impl State {
    /// The state a transition into `self` leaves.
    #[inline]
    fn opposite(self) -> State {
        match self {
            State::Native => State::Bytecode,
            _ => State::Native,
        }
    }
}

/// State that only the owning thread touches.
struct Owned {
    clock: ThreadClock,
    /// The thread has not crossed since JVMTI ThreadStart (see [`State::Undecided`]); otherwise
    /// its state is the context's `in_native`.
    undecided: bool,
    /// The state the context was created in (SPA uses it for the bottom of its reified stack).
    initial: State,
    stack: FrameStack,
    /// `timing=exact`: read the clock at every crossing. `timing=sampled`: only when the context
    /// opens and settles; the boundary sampler splits the time in between (see `merge`).
    timed: bool,
}

impl Owned {
    /// Time inside the innermost open native that is not its own joins its `nested` time: a JNI
    /// upcall's or an inner native's total, or bytecode charged while it was innermost. The last
    /// two happen when the VM runs Java inside a native without a JNI call (class loading and
    /// `<clinit>` under `Class.forName0` or JNI `FindClass`, reflection's native accessor). So a
    /// native's self time is native time only.
    #[inline]
    fn not_own(&mut self, ns: u64) {
        if let Some(frame) = self.stack.last_mut().filter(|f| f.kind == frames::NATIVE) {
            frame.nested += ns;
        }
    }
}

/// Which transition code a hook runs.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Timing {
    /// The context's own setting (`timing=exact` reads the clock at every crossing).
    OfContext,
    /// `timing=exact` alone: the hooks installed in that mode read the clock at every crossing
    /// without asking the context (the mode is chosen before the first context, so every context
    /// is timed then; one load, one branch and one register fewer per hook).
    Exact,
    /// `timing=sampled` alone: the hooks installed in that mode, with no clock read in their code.
    Sampled,
}

impl Timing {
    #[inline(always)]
    fn timed(self, owned: &Owned) -> bool {
        match self {
            Timing::OfContext => owned.timed,
            Timing::Exact => true,
            Timing::Sampled => false,
        }
    }
}

/// What [`ThreadContext::switch`] did.
#[derive(Clone, Copy)]
struct Switched {
    /// The clock's reading.
    now: u64,
    /// The interval it charged was bytecode (or an undecided thread's, decided bytecode).
    left_bytecode: bool,
    /// How long that interval was.
    charged: u64,
}

/// One thread's accounting.
pub struct ThreadContext {
    owned: UnsafeCell<Owned>,
    pub(crate) bytecode_ns: AtomicU64,
    pub(crate) native_ns: AtomicU64,
    pub(crate) native_calls: AtomicU64,
    pub(crate) jni_calls: AtomicU64,
    /// Ends whose begin was never seen (e.g. a native already running when accounting was switched on).
    pub(crate) unmatched: AtomicU64,
    /// A fixed-size array: an upcall's row is found with no length load.
    pub(crate) jni: Box<[JniStat; JNI_FUNCTION_COUNT]>,
    pub(crate) methods: MethodTable,
    /// Per-crossing durations, counted for the latency histograms.
    pub(crate) latency: ThreadLatency,
    pub(crate) tid: i64,
    pub(crate) name: Mutex<Option<String>>,
    /// The clock's reading at the owner's last transition, and whether it is in native code now
    /// (else bytecode, or undecided: see `Owned::undecided`). Written by the owner only, read by
    /// the merge of live threads at VMDeath and by the boundary sampler.
    last: AtomicU64,
    in_native: AtomicBool,
    /// The thread entered Java from native code: it was created native, or its first crossing after
    /// ThreadStart left native (a thread attached with JNI AttachCurrentThread). Process accounting.
    began_native: AtomicBool,
    /// Reads the owner's CPU time from the merging thread at VMDeath, for threads still running.
    remote: RemoteCpu,
    /// The thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`) when the context opened and when it
    /// finished, where the clock read exactly that (0: not known): the process accounting takes
    /// them instead of two more reads.
    cpu_at_open: u64,
    cpu_at_finish: AtomicU64,
    /// When the context opened: with `cpu_at_open`, a bound on the thread's CPU time so far.
    opened_at: std::time::Instant,
    /// Where the merge registry keeps this context (see `merge::register`).
    pub(crate) registry_slot: std::sync::atomic::AtomicUsize,
    /// The boundary sampler's per-thread state, and the JNI wrappers' call counters.
    pub(crate) probe: crate::sampler::Probe,
}

// SAFETY: `owned` is only accessed by the owning thread (through `current`); every other field is an
// atomic or a Mutex, so sharing a `&ThreadContext` with the merging thread is sound.
unsafe impl Sync for ThreadContext {}
// SAFETY: as above; the context is created on its thread and may be dropped by another after retirement.
unsafe impl Send for ThreadContext {}

/// `timing=sampled` is in force (set once at start-up, before the first context).
static SAMPLED_TIMING: AtomicBool = AtomicBool::new(false);

/// Choose `timing=` for the contexts created from now on.
pub fn set_sampled_timing(sampled: bool) {
    SAMPLED_TIMING.store(sampled, Relaxed);
}

/// Whether new contexts read their clock at every crossing.
fn timed() -> bool {
    !SAMPLED_TIMING.load(Relaxed)
}

/// Whether `timing=sampled` is in force.
pub(crate) fn sampled_timing() -> bool {
    SAMPLED_TIMING.load(Relaxed)
}

#[inline]
fn add(counter: &AtomicU64, value: u64) {
    // Owner-only writer: a load and a store, no locked instruction.
    counter.store(counter.load(Relaxed).wrapping_add(value), Relaxed);
}

/// Charge the clock's movement from `last` to `now` to `counter`. A step back (tsc-hybrid paying
/// back steal its TSC deltas counted, see `clock::MAX_STEP_BACK_NS`) is taken from the same
/// counter, i.e. from the interval whose reading revealed it.
#[inline]
fn charge(counter: &AtomicU64, last: u64, now: u64) {
    let value = counter.load(Relaxed);
    let next = if now >= last {
        value.wrapping_add(now - last)
    } else {
        value.saturating_sub(last - now)
    };
    counter.store(next, Relaxed);
}

/// `reading` of `clock` as the thread's CPU time, if the clock's opening and final readings are
/// that (0: not).
fn cpu_reading(clock: &ThreadClock, reading: u64) -> u64 {
    if clock.kind().ends_read_thread_cputime() {
        reading
    } else {
        0
    }
}

impl ThreadContext {
    pub(crate) fn new(choice: &ClockChoice, state: State, name: Option<String>) -> ThreadContext {
        let clock = ThreadClock::open(choice);
        // Not `read()`: that would open the perf event of a lazy clock before any crossing.
        let last = clock.value_at_open();
        let remote = RemoteCpu::for_current_thread(last, clock.kind());
        let cpu_at_open = cpu_reading(&clock, last);
        ThreadContext {
            owned: UnsafeCell::new(Owned {
                clock,
                undecided: state == State::Undecided,
                initial: state,
                stack: FrameStack::new(),
                timed: timed(),
            }),
            bytecode_ns: AtomicU64::new(0),
            native_ns: AtomicU64::new(0),
            native_calls: AtomicU64::new(0),
            jni_calls: AtomicU64::new(0),
            unmatched: AtomicU64::new(0),
            jni: Box::new(std::array::from_fn(|_| JniStat::default())),
            methods: MethodTable::new(),
            latency: ThreadLatency::default(),
            // SAFETY: gettid has no preconditions.
            tid: unsafe { libc::gettid() } as i64,
            name: Mutex::new(name),
            last: AtomicU64::new(last),
            in_native: AtomicBool::new(state == State::Native),
            began_native: AtomicBool::new(state == State::Native),
            remote,
            cpu_at_open,
            cpu_at_finish: AtomicU64::new(0),
            opened_at: std::time::Instant::now(),
            registry_slot: std::sync::atomic::AtomicUsize::new(usize::MAX),
            probe: crate::sampler::Probe::new(),
        }
    }

    /// Make a retired context ready for the calling thread, as [`ThreadContext::new`] would, but
    /// keeping its allocations (latency slots, JNI rows, method chunks).
    fn reuse(&mut self, choice: &ClockChoice, state: State, name: Option<String>) {
        let clock = ThreadClock::open(choice);
        let last = clock.value_at_open();
        let remote = RemoteCpu::for_current_thread(last, clock.kind());
        self.cpu_at_open = cpu_reading(&clock, last);
        *self.cpu_at_finish.get_mut() = 0;
        self.opened_at = std::time::Instant::now();
        let owned = self.owned.get_mut();
        owned.clock = clock;
        owned.undecided = state == State::Undecided;
        owned.initial = state;
        owned.stack.clear();
        owned.timed = timed();
        if *self.jni_calls.get_mut() != 0 {
            for stat in self.jni.iter_mut() {
                *stat = JniStat::default();
            }
        }
        if *self.native_calls.get_mut() != 0 {
            self.methods.reset();
        }
        for counter in [
            &mut self.bytecode_ns,
            &mut self.native_ns,
            &mut self.native_calls,
            &mut self.jni_calls,
            &mut self.unmatched,
        ] {
            *counter.get_mut() = 0;
        }
        // SAFETY: gettid has no preconditions.
        self.tid = unsafe { libc::gettid() } as i64;
        *self.name.get_mut().unwrap_or_else(|e| e.into_inner()) = name;
        *self.last.get_mut() = last;
        *self.in_native.get_mut() = state == State::Native;
        self.remote = remote;
        *self.registry_slot.get_mut() = usize::MAX;
        self.probe.reset();
    }

    /// On the owning thread, once the context is its current one: let the JNI wrappers count
    /// into it and start the thread's boundary sampler.
    fn start_probe(&self) {
        self.probe
            .start_current(&self.in_native, &self.native_calls, &self.methods);
    }

    /// From any thread: the state of the owner and the CPU time it has spent in it since its last
    /// transition (a syscall; VMDeath only). None if it cannot be read.
    pub(crate) fn open_interval(&self) -> Option<(State, u64)> {
        let state = if self.in_native.load(Relaxed) {
            State::Native
        } else {
            State::Bytecode
        };
        let now = self.remote.now()?;
        Some((state, now.saturating_sub(self.last.load(Relaxed))))
    }

    /// The thread's CPU time when the context opened, if its clock read it (see `cpu_at_open`).
    pub(crate) fn cpu_at_open(&self) -> Option<u64> {
        (self.cpu_at_open != 0).then_some(self.cpu_at_open)
    }

    /// Whether the thread may have used `ns` of CPU time by `now`: false only when its CPU time at
    /// open plus the wall time since (a thread runs on one CPU at most) is still short of it, so
    /// that the armer need not read the thread's clock (a syscall) for a thread that is surely young.
    pub(crate) fn may_have_run(&self, ns: u64, now: std::time::Instant) -> bool {
        let Some(at_open) = self.cpu_at_open() else {
            return true;
        };
        let since = now.saturating_duration_since(self.opened_at).as_nanos() as u64;
        at_open.saturating_add(since) >= ns
    }

    /// The thread's CPU time when the context finished, if its clock read it.
    pub(crate) fn cpu_at_finish(&self) -> Option<u64> {
        Some(self.cpu_at_finish.load(Relaxed)).filter(|&ns| ns != 0)
    }

    /// Whether the context has its thread's Java name.
    pub(crate) fn has_name(&self) -> bool {
        self.name.lock().is_ok_and(|n| n.is_some())
    }

    /// Whether the thread entered Java from native code (see `began_native`).
    pub(crate) fn began_native(&self) -> bool {
        self.began_native.load(Relaxed)
    }

    /// Whether the thread is in native code now (as of its last transition).
    pub(crate) fn is_in_native(&self) -> bool {
        self.in_native.load(Relaxed)
    }

    /// The state an undecided thread leaves by switching to `next`; a crossing into Java means it
    /// was native.
    #[cold]
    fn decide(&self, next: State) -> State {
        if next == State::Bytecode {
            self.began_native.store(true, Relaxed);
        }
        next.opposite()
    }

    /// # Safety
    /// Only the thread that owns this context may call this, and not re-entrantly.
    #[allow(clippy::mut_from_ref)]
    unsafe fn owned(&self) -> &mut Owned {
        // SAFETY: the caller is the owning thread, so no other reference to `Owned` is live.
        unsafe { &mut *self.owned.get() }
    }

    /// Charge the time since the last transition to the current state and switch to `next`.
    /// Inlined into each transition, where `next` is a constant.
    #[inline(always)]
    fn switch(&self, owned: &mut Owned, next: State) -> Switched {
        let now = owned.clock.read();
        let from = self.leaving(owned, next);
        let last = self.last.load(Relaxed);
        match from {
            State::Native => charge(&self.native_ns, last, now),
            _ => charge(&self.bytecode_ns, last, now),
        }
        self.last.store(now, Relaxed);
        self.set_state(owned, next);
        Switched {
            now,
            left_bytecode: from != State::Native,
            charged: now.saturating_sub(last),
        }
    }

    /// `timing=sampled`: switch to `next` without reading the clock (nothing is charged until the
    /// context settles). Returns the last reading, so every duration comes out 0.
    #[inline(always)]
    fn flip(&self, owned: &mut Owned, next: State) -> u64 {
        self.flip_unread(owned, next);
        self.last.load(Relaxed)
    }

    /// [`ThreadContext::flip`] for the sampled hooks, which need no reading: no load but the
    /// undecided flag's (the state left is not needed when nothing is charged).
    #[inline(always)]
    fn flip_unread(&self, owned: &mut Owned, next: State) {
        if owned.undecided {
            owned.undecided = false;
            self.decide(next);
        }
        self.set_state(owned, next);
    }

    /// Enter `next` (a constant in the transitions, so the undecided test folds away there).
    #[inline(always)]
    fn set_state(&self, owned: &mut Owned, next: State) {
        if next == State::Undecided {
            // JVMTI ThreadStart of a thread that already crossed (see `attach_current_in`).
            owned.undecided = true;
        }
        self.in_native.store(next == State::Native, Relaxed);
    }

    /// The state a switch to `next` leaves (deciding an undecided thread).
    #[inline(always)]
    fn leaving(&self, owned: &mut Owned, next: State) -> State {
        if owned.undecided {
            owned.undecided = false;
            return self.decide(next);
        }
        self.state_decided()
    }

    /// The owner's state, known to be decided.
    #[inline(always)]
    fn state_decided(&self) -> State {
        if self.in_native.load(Relaxed) {
            State::Native
        } else {
            State::Bytecode
        }
    }

    /// The owner's state. Owner thread only.
    fn state(&self, owned: &Owned) -> State {
        if owned.undecided {
            State::Undecided
        } else {
            self.state_decided()
        }
    }

    /// [`ThreadContext::switch`], then bytecode it charged goes to the innermost native's nested
    /// time (see `Owned::not_own`); when a call begins or a native ends.
    #[inline(always)]
    fn switch_crediting_native(&self, owned: &mut Owned, next: State, timed: bool) -> u64 {
        if !timed {
            return self.flip(owned, next);
        }
        let switched = self.switch(owned, next);
        if switched.left_bytecode {
            owned.not_own(switched.charged);
        }
        switched.now
    }

    /// `timing` is [`Timing::Sampled`] in the hooks of `timing=sampled` (a constant there, so
    /// their code holds no clock read) and [`Timing::Exact`] in those of `timing=exact`; the J2N
    /// helper natives of `j2n=wrap` follow the context.
    #[inline(always)]
    fn j2n_begin(&self, method: u32, timing: Timing) {
        // SAFETY: reached only through `current_or_attach`, on the owning thread.
        let owned = unsafe { self.owned() };
        let timed = timing.timed(owned);
        let now = self.switch_crediting_native(owned, State::Native, timed);
        add(&self.native_calls, 1);
        // The sampler's view of the innermost native: id + 1, restored from the frame at the end.
        let outer = self.probe.innermost.load(Relaxed);
        self.probe.innermost.store(method.wrapping_add(1), Relaxed);
        owned.stack.push(Frame::native(method, outer, now));
    }

    #[inline(always)]
    fn j2n_end(&self, method: u32, timing: Timing) {
        // SAFETY: reached only through `current_or_attach`, on the owning thread.
        let owned = unsafe { self.owned() };
        let timed = timing.timed(owned);
        let now = self.switch_crediting_native(owned, State::Bytecode, timed);
        match owned.stack.last().copied().filter(|f| f.is_native(method)) {
            Some(Frame {
                outer,
                start,
                nested,
                ..
            }) => {
                owned.stack.pop();
                self.probe.innermost.store(outer, Relaxed);
                let row = self.methods.count_call(method);
                if !timed {
                    // `timing=sampled`: no clock was read, every duration is 0.
                    return;
                }
                let total = now.saturating_sub(start);
                owned.not_own(total);
                add(&row.total_ns, total);
                let self_ns = total.saturating_sub(nested);
                add(&row.self_ns, self_ns);
                self.latency
                    .record(&row.latency, SampleKind::NativeSelf, method, self_ns);
                if crate::stacks::enabled() {
                    crate::stacks::on_native_exit(method, self_ns);
                }
            }
            _ => add(&self.unmatched, 1),
        }
    }

    #[inline(always)]
    fn n2j_begin(&self, function: u32, timing: Timing) {
        // SAFETY: reached only through `current_or_attach`, on the owning thread.
        let owned = unsafe { self.owned() };
        let timed = timing.timed(owned);
        let now = self.switch_crediting_native(owned, State::Bytecode, timed);
        add(&self.jni_calls, 1);
        if let Some(stat) = self.jni.get(function as usize) {
            add(&stat.calls, 1);
        }
        owned.stack.push(Frame::upcall(function, now));
    }

    #[inline(always)]
    fn n2j_end(&self, function: u32, timing: Timing) {
        // SAFETY: reached only through `current_or_attach`, on the owning thread.
        let owned = unsafe { self.owned() };
        let timed = timing.timed(owned);
        let now = if timed {
            self.switch(owned, State::Native).now
        } else {
            self.flip(owned, State::Native)
        };
        match owned
            .stack
            .last()
            .copied()
            .filter(|f| f.is_upcall(function))
        {
            Some(Frame { start, .. }) => {
                owned.stack.pop();
                if !timed {
                    // `timing=sampled`: no clock was read, the upcall's duration is 0.
                    return;
                }
                let java = now.saturating_sub(start);
                if let Some(stat) = self.jni.get(function as usize) {
                    add(&stat.java_ns, java);
                    self.latency
                        .record(&stat.latency, SampleKind::UpcallJava, function, java);
                }
                owned.not_own(java);
            }
            _ => add(&self.unmatched, 1),
        }
    }

    /// `timing=sampled`'s N2J begin: count the call and enter bytecode, with no frame pushed. A
    /// sampled upcall's frame would only match its own end, which the same JNI wrapper call
    /// makes; nothing is timed, and the natives' frames never look below their own.
    #[inline(always)]
    fn n2j_begin_sampled(&self, function: u32) {
        // SAFETY: reached only through `current_or_attach`, on the owning thread.
        let owned = unsafe { self.owned() };
        self.flip_unread(owned, State::Bytecode);
        add(&self.jni_calls, 1);
        if let Some(stat) = self.jni.get(function as usize) {
            add(&stat.calls, 1);
        }
    }

    /// `timing=sampled`'s N2J end: back in native code.
    #[inline(always)]
    fn n2j_end_sampled(&self) {
        // SAFETY: reached only through `current_or_attach`, on the owning thread.
        let owned = unsafe { self.owned() };
        self.flip_unread(owned, State::Native);
    }

    /// Tests: the clock's reading at the last transition, the frames still open, and whether the
    /// thread is in native code. Owner thread only.
    #[cfg(test)]
    pub(crate) fn last_and_open_frames(&self) -> (u64, usize, bool) {
        // SAFETY: the caller is the owning thread.
        let owned = unsafe { self.owned() };
        (
            self.last.load(Relaxed),
            owned.stack.len(),
            self.is_in_native(),
        )
    }

    /// Charge the open interval and close the clock. Owner thread only, once, before retirement.
    fn finish(&self) {
        // SAFETY: called by the owning thread from `retire_current`.
        let owned = unsafe { self.owned() };
        // Closed first, the clock takes its final reading without opening anything; the settle
        // then charges up to that reading.
        owned.clock.close();
        self.settle(owned);
        self.cpu_at_finish
            .store(cpu_reading(&owned.clock, self.last.load(Relaxed)), Relaxed);
        self.latency.drain();
    }

    /// Charge the open interval to the current state, which stays. A thread still undecided has
    /// never crossed: it ran bytecode.
    fn settle(&self, owned: &mut Owned) {
        // Undecided, `in_native` is false: the thread ran bytecode and stays there.
        owned.undecided = false;
        let state = self.state_decided();
        self.switch(owned, state);
    }
}
