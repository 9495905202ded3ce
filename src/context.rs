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

use crate::clock::{ClockChoice, RemoteCpu, ThreadClock};
use crate::histograms::{SampleKind, SampleLog};
use crate::methods::{LINK_PROBE_ID, MAX_METHODS};
use std::cell::{Cell, UnsafeCell};
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;

pub(crate) use jni_wrappers::FUNCTION_COUNT as JNI_FUNCTION_COUNT;

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

/// Per-method totals of one thread.
#[derive(Default)]
pub(crate) struct MethodStat {
    pub(crate) calls: AtomicU64,
    pub(crate) total_ns: AtomicU64,
    pub(crate) self_ns: AtomicU64,
}

/// Per-JNI-function totals of one thread.
#[derive(Default)]
pub(crate) struct JniStat {
    pub(crate) calls: AtomicU64,
    pub(crate) java_ns: AtomicU64,
}

const CHUNK: usize = 256;
const CHUNKS: usize = MAX_METHODS / CHUNK;

/// Method stats indexed by id, allocated a chunk at a time so that a thread only pays for the ids it
/// calls, and so that chunks never move (the VMDeath merge may read them while the owner runs).
pub(crate) struct MethodTable {
    chunks: Box<[AtomicPtr<[MethodStat; CHUNK]>]>,
    /// One bit per allocated chunk, so that merging and resetting visit only those.
    allocated: [AtomicU64; CHUNKS / 64],
    /// Calls of methods whose id is past `MAX_METHODS`.
    pub(crate) overflow: MethodStat,
}

impl MethodTable {
    fn new() -> Self {
        MethodTable {
            chunks: (0..CHUNKS)
                .map(|_| AtomicPtr::new(std::ptr::null_mut()))
                .collect(),
            allocated: std::array::from_fn(|_| AtomicU64::new(0)),
            overflow: MethodStat::default(),
        }
    }

    /// The stat row of `id`, allocating its chunk on first use. Owner thread only.
    fn row(&self, id: u32) -> &MethodStat {
        let id = id as usize;
        if id >= MAX_METHODS {
            return &self.overflow;
        }
        let slot = &self.chunks[id / CHUNK];
        let mut chunk = slot.load(std::sync::atomic::Ordering::Acquire);
        if chunk.is_null() {
            chunk = self.allocate(id / CHUNK);
        }
        // SAFETY: chunks are allocated once, published with Release, and freed only in Drop, when no
        // reference to the table remains.
        unsafe { &(*chunk)[id % CHUNK] }
    }

    #[cold]
    fn allocate(&self, index: usize) -> *mut [MethodStat; CHUNK] {
        let fresh: Box<[MethodStat; CHUNK]> =
            Box::new(std::array::from_fn(|_| MethodStat::default()));
        let chunk = Box::into_raw(fresh);
        self.chunks[index].store(chunk, std::sync::atomic::Ordering::Release);
        let word = &self.allocated[index / 64];
        // Owner-only writer: published after the chunk, so a reader that sees the bit sees it.
        word.store(
            word.load(Relaxed) | 1 << (index % 64),
            std::sync::atomic::Ordering::Release,
        );
        chunk
    }

    /// Every allocated chunk, with its index.
    fn each_chunk(&self, mut f: impl FnMut(usize, &[MethodStat; CHUNK])) {
        for (w, word) in self.allocated.iter().enumerate() {
            let mut bits = word.load(std::sync::atomic::Ordering::Acquire);
            while bits != 0 {
                let index = w * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let chunk = self.chunks[index].load(std::sync::atomic::Ordering::Acquire);
                if !chunk.is_null() {
                    // SAFETY: a non-null chunk stays valid until the table is dropped (see `row`).
                    f(index, unsafe { &*chunk });
                }
            }
        }
    }

    /// Every row that was touched, with its id.
    pub(crate) fn for_each(&self, mut f: impl FnMut(u32, &MethodStat)) {
        self.each_chunk(|c, rows| {
            for (i, row) in rows.iter().enumerate() {
                if row.calls.load(Relaxed) != 0 {
                    f((c * CHUNK + i) as u32, row);
                }
            }
        });
    }

    /// Zero every row for the next thread; the chunks stay allocated.
    fn reset(&mut self) {
        self.each_chunk(|_, rows| {
            for row in rows.iter().filter(|row| row.calls.load(Relaxed) != 0) {
                row.calls.store(0, Relaxed);
                row.total_ns.store(0, Relaxed);
                row.self_ns.store(0, Relaxed);
            }
        });
        self.overflow = MethodStat::default();
    }
}

impl Drop for MethodTable {
    fn drop(&mut self) {
        for slot in self.chunks.iter() {
            let chunk = slot.swap(std::ptr::null_mut(), Relaxed);
            if !chunk.is_null() {
                // SAFETY: the pointer came from Box::into_raw in `row` and is freed exactly once here.
                drop(unsafe { Box::from_raw(chunk) });
            }
        }
    }
}

/// An open native call or JNI upcall on the thread's stack.
#[derive(Clone, Copy)]
enum Frame {
    /// A wrapped native method: its id, start time and time spent in nested upcalls.
    Native {
        method: u32,
        start: u64,
        nested: u64,
    },
    /// A JNI upcall into Java.
    Upcall { function: u32, start: u64 },
}

/// State that only the owning thread touches.
struct Owned {
    clock: ThreadClock,
    state: State,
    /// The state the context was created in (SPA uses it for the bottom of its reified stack).
    initial: State,
    last: u64,
    stack: Vec<Frame>,
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
    pub(crate) jni: Box<[JniStat]>,
    pub(crate) methods: MethodTable,
    /// Per-crossing durations on their way to the latency histograms.
    pub(crate) samples: SampleLog,
    pub(crate) tid: i64,
    pub(crate) name: Mutex<Option<String>>,
    /// Mirrors of the owner's last transition time and state, for the merge of live threads at VMDeath.
    last_seen: AtomicU64,
    in_native: AtomicBool,
    /// The thread entered Java from native code: it was created native, or its first crossing after
    /// ThreadStart left native (a thread attached with JNI AttachCurrentThread). Process accounting.
    began_native: AtomicBool,
    /// Reads the owner's CPU time from the merging thread at VMDeath, for threads still running.
    remote: RemoteCpu,
    /// Where the merge registry keeps this context (see `merge::register`).
    pub(crate) registry_slot: std::sync::atomic::AtomicUsize,
}

// SAFETY: `owned` is only accessed by the owning thread (through `current`); every other field is an
// atomic or a Mutex, so sharing a `&ThreadContext` with the merging thread is sound.
unsafe impl Sync for ThreadContext {}
// SAFETY: as above; the context is created on its thread and may be dropped by another after retirement.
unsafe impl Send for ThreadContext {}

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

impl ThreadContext {
    pub(crate) fn new(choice: &ClockChoice, state: State, name: Option<String>) -> ThreadContext {
        let clock = ThreadClock::open(choice);
        // Not `read()`: that would open the perf event of a lazy clock before any crossing.
        let last = clock.value_at_open();
        let remote = RemoteCpu::for_current_thread(last, clock.kind());
        ThreadContext {
            owned: UnsafeCell::new(Owned {
                clock,
                state,
                initial: state,
                last,
                stack: Vec::with_capacity(16),
            }),
            bytecode_ns: AtomicU64::new(0),
            native_ns: AtomicU64::new(0),
            native_calls: AtomicU64::new(0),
            jni_calls: AtomicU64::new(0),
            unmatched: AtomicU64::new(0),
            jni: (0..JNI_FUNCTION_COUNT)
                .map(|_| JniStat::default())
                .collect(),
            methods: MethodTable::new(),
            samples: SampleLog::default(),
            // SAFETY: gettid has no preconditions.
            tid: unsafe { libc::gettid() } as i64,
            name: Mutex::new(name),
            last_seen: AtomicU64::new(last),
            in_native: AtomicBool::new(state == State::Native),
            began_native: AtomicBool::new(state == State::Native),
            remote,
            registry_slot: std::sync::atomic::AtomicUsize::new(usize::MAX),
        }
    }

    /// Make a retired context ready for the calling thread, as [`ThreadContext::new`] would, but
    /// keeping its allocations (sample log, JNI rows, method chunks).
    fn reuse(&mut self, choice: &ClockChoice, state: State, name: Option<String>) {
        let clock = ThreadClock::open(choice);
        let last = clock.value_at_open();
        let remote = RemoteCpu::for_current_thread(last, clock.kind());
        let owned = self.owned.get_mut();
        owned.clock = clock;
        owned.state = state;
        owned.initial = state;
        owned.last = last;
        owned.stack.clear();
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
        *self.last_seen.get_mut() = last;
        *self.in_native.get_mut() = state == State::Native;
        self.remote = remote;
        *self.registry_slot.get_mut() = usize::MAX;
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
        Some((state, now.saturating_sub(self.last_seen.load(Relaxed))))
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
    #[inline]
    fn switch(&self, owned: &mut Owned, next: State) -> u64 {
        let now = owned.clock.read();
        let from = match owned.state {
            State::Undecided => self.decide(next),
            known => known,
        };
        match from {
            State::Native => charge(&self.native_ns, owned.last, now),
            _ => charge(&self.bytecode_ns, owned.last, now),
        }
        owned.last = now;
        owned.state = next;
        self.last_seen.store(now, Relaxed);
        self.in_native.store(next == State::Native, Relaxed);
        now
    }

    #[inline]
    fn j2n_begin(&self, method: u32) {
        // SAFETY: reached only through `with_current`, on the owning thread.
        let owned = unsafe { self.owned() };
        let now = self.switch(owned, State::Native);
        add(&self.native_calls, 1);
        owned.stack.push(Frame::Native {
            method,
            start: now,
            nested: 0,
        });
    }

    #[inline]
    fn j2n_end(&self, method: u32) {
        // SAFETY: reached only through `with_current`, on the owning thread.
        let owned = unsafe { self.owned() };
        let now = self.switch(owned, State::Bytecode);
        match owned.stack.last() {
            Some(&Frame::Native {
                method: open,
                start,
                nested,
            }) if open == method => {
                owned.stack.pop();
                let total = now.saturating_sub(start);
                let row = self.methods.row(method);
                add(&row.calls, 1);
                add(&row.total_ns, total);
                let self_ns = total.saturating_sub(nested);
                add(&row.self_ns, self_ns);
                self.samples.push(SampleKind::NativeSelf, method, self_ns);
                if crate::stacks::enabled() {
                    crate::stacks::on_native_exit(method, self_ns);
                }
            }
            _ => add(&self.unmatched, 1),
        }
    }

    #[inline]
    fn n2j_begin(&self, function: u32) {
        // SAFETY: reached only through `with_current`, on the owning thread.
        let owned = unsafe { self.owned() };
        let now = self.switch(owned, State::Bytecode);
        add(&self.jni_calls, 1);
        if let Some(stat) = self.jni.get(function as usize) {
            add(&stat.calls, 1);
        }
        owned.stack.push(Frame::Upcall {
            function,
            start: now,
        });
    }

    #[inline]
    fn n2j_end(&self, function: u32) {
        // SAFETY: reached only through `with_current`, on the owning thread.
        let owned = unsafe { self.owned() };
        let now = self.switch(owned, State::Native);
        match owned.stack.last() {
            Some(&Frame::Upcall {
                function: open,
                start,
            }) if open == function => {
                owned.stack.pop();
                let java = now.saturating_sub(start);
                if let Some(stat) = self.jni.get(function as usize) {
                    add(&stat.java_ns, java);
                    self.samples.push(SampleKind::UpcallJava, function, java);
                }
                if let Some(Frame::Native { nested, .. }) = owned.stack.last_mut() {
                    *nested += java;
                }
            }
            _ => add(&self.unmatched, 1),
        }
    }

    /// Charge the open interval and close the clock. Owner thread only, once, before retirement.
    fn finish(&self) {
        // SAFETY: called by the owning thread from `retire_current`.
        let owned = unsafe { self.owned() };
        // Closed first, the clock takes its final reading without opening anything; the settle
        // then charges up to that reading.
        owned.clock.close();
        self.settle(owned);
        self.samples.drain();
    }

    /// Charge the open interval to the current state, which stays. A thread still undecided has
    /// never crossed: it ran bytecode.
    fn settle(&self, owned: &mut Owned) {
        if owned.state == State::Undecided {
            owned.state = State::Bytecode;
        }
        let state = owned.state;
        self.switch(owned, state);
    }
}

// ---------------------------------------------------------------------------------------------------
// Finding the current thread's context.

thread_local! {
    /// Fast path: the current thread's context (null if none yet). `const` init: no lazy-init check.
    static CURRENT: Cell<*const ThreadContext> = const { Cell::new(std::ptr::null()) };
    /// Retires the context if the thread exits without a JVMTI ThreadEnd (e.g. a native thread that
    /// never detaches). Registered only when a context is created.
    static EXIT_GUARD: ExitGuard = const { ExitGuard };
}

struct ExitGuard;

impl Drop for ExitGuard {
    fn drop(&mut self) {
        crate::diag::no_unwind(&crate::diag::PROCESS_EXIT, (), retire_current);
    }
}

/// Hooks the rest of the agent provides for context creation and retirement.
pub struct Lifecycle {
    /// The clock every context opens (may wait for the start-up probe).
    pub clock: fn() -> &'static ClockChoice,
    /// Called with a new context (already leaked to a stable address) to register it.
    pub register: fn(&'static ThreadContext),
    /// Called on the owning thread when it ends; takes back ownership.
    pub retire: fn(&'static ThreadContext),
}

static LIFECYCLE: once_cell::sync::OnceCell<Lifecycle> = once_cell::sync::OnceCell::new();

/// Install the hooks (once; later calls are ignored).
pub fn set_lifecycle(lifecycle: Lifecycle) {
    let _ = LIFECYCLE.set(lifecycle);
}

/// Create (or return) the calling thread's context, starting in `state`.
pub(crate) fn attach_current(state: State, name: Option<String>) -> Option<&'static ThreadContext> {
    let existing = CURRENT.with(|c| c.get());
    if !existing.is_null() {
        // SAFETY: CURRENT only ever holds a registered, not yet retired context of this thread.
        return Some(unsafe { &*existing });
    }
    let lifecycle = LIFECYCLE.get()?;
    let ctx = match take_pooled() {
        Some(mut ctx) => {
            ctx.reuse((lifecycle.clock)(), state, name);
            ctx
        }
        None => Box::new(ThreadContext::new((lifecycle.clock)(), state, name)),
    };
    let ctx: &'static ThreadContext = Box::leak(ctx);
    (lifecycle.register)(ctx);
    CURRENT.with(|c| c.set(ctx));
    // Touch the guard so that its destructor runs at thread exit; fails harmlessly during TLS teardown.
    let _ = EXIT_GUARD.try_with(|_| ());
    Some(ctx)
}

/// Retired contexts kept for reuse: a new thread takes one instead of allocating (and zeroing)
/// about 45 KiB, most of it the sample log. Bounded, so that memory after a burst of threads stays
/// at this many contexts.
// Boxed on purpose: a context lives at a stable heap address while a thread uses it, and the pool
// hands that allocation back as it is.
#[allow(clippy::vec_box)]
static POOL: Mutex<Vec<Box<ThreadContext>>> = Mutex::new(Vec::new());
const POOL_MAX: usize = 64;

fn take_pooled() -> Option<Box<ThreadContext>> {
    crate::sync::lock(&POOL).pop()
}

/// Keep a merged context for a later thread (or free it when the pool is full). Its clock was
/// closed and its samples drained by the owner's retirement.
pub(crate) fn recycle(ctx: Box<ThreadContext>) {
    let mut pool = crate::sync::lock(&POOL);
    if pool.len() < POOL_MAX {
        pool.push(ctx);
    }
}

fn with_existing<T>(f: impl FnOnce(&mut Owned) -> T) -> Option<T> {
    let ptr = CURRENT.try_with(|c| c.get()).ok()?;
    if ptr.is_null() {
        return None;
    }
    // SAFETY: CURRENT only holds this thread's registered, live context; we are on its thread and no
    // transition is running (callers are event callbacks, not transitions).
    Some(f(unsafe { (*ptr).owned() }))
}

/// The calling thread's current state, if it has a context.
pub(crate) fn current_state() -> Option<State> {
    with_existing(|o| o.state)
}

/// Whether the calling thread's context was created in native state.
pub(crate) fn started_native() -> bool {
    with_existing(|o| o.initial == State::Native).unwrap_or(false)
}

/// JVMTI ThreadStart on the calling thread: its state becomes undecided until its first crossing
/// (see [`State::Undecided`]). A context may already exist: attaching a native thread runs Java code
/// (the `Thread` constructor) whose crossings were counted before ThreadStart.
pub fn thread_started(name: Option<String>) -> Option<&'static ThreadContext> {
    attach_current_in(State::Undecided, name)
}

/// The calling thread's context, now in `state`: created in it, or switched to it (the time since
/// its last crossing is charged to the state it was in). Used at VMInit for the main thread, which
/// may have crossed during VM start-up already (bind mode counts from the first native call).
pub(crate) fn attach_current_in(
    state: State,
    name: Option<String>,
) -> Option<&'static ThreadContext> {
    let existing = CURRENT.try_with(|c| c.get()).unwrap_or(std::ptr::null());
    if existing.is_null() {
        return attach_current(state, name);
    }
    // SAFETY: CURRENT only holds this thread's registered, live context; we are on its thread.
    let ctx: &'static ThreadContext = unsafe { &*existing };
    // SAFETY: owning thread, outside any transition.
    ctx.switch(unsafe { ctx.owned() }, state);
    if let (Ok(mut slot), Some(name)) = (ctx.name.lock(), name) {
        slot.get_or_insert(name);
    }
    Some(ctx)
}

/// Charge the calling thread's open interval to its current state (used at VMDeath for the thread that
/// reports, so its last interval is not lost).
pub(crate) fn settle_current() {
    let ptr = CURRENT.try_with(|c| c.get()).unwrap_or(std::ptr::null());
    if !ptr.is_null() {
        // SAFETY: CURRENT only holds this thread's registered, live context; we are on its thread.
        let ctx = unsafe { &*ptr };
        // SAFETY: owning thread.
        ctx.settle(unsafe { ctx.owned() });
    }
}

/// Charge the open interval, detach the context from this thread and hand it to the merge.
pub fn retire_current() {
    let Ok(ptr) = CURRENT.try_with(|c| c.replace(std::ptr::null())) else {
        return;
    };
    if ptr.is_null() {
        return;
    }
    // SAFETY: `ptr` was this thread's live context; it is now unreachable through CURRENT.
    let ctx: &'static ThreadContext = unsafe { &*ptr };
    ctx.finish();
    if let Some(lifecycle) = LIFECYCLE.get() {
        (lifecycle.retire)(ctx);
    }
}

#[inline]
fn with_current(first_seen: State, f: impl FnOnce(&ThreadContext)) {
    let ptr = CURRENT.try_with(|c| c.get()).unwrap_or(std::ptr::null());
    if !ptr.is_null() {
        // SAFETY: CURRENT only holds this thread's registered, live context.
        f(unsafe { &*ptr });
        return;
    }
    if let Some(ctx) = attach_current(first_seen, None) {
        f(ctx);
    }
}

// ---------------------------------------------------------------------------------------------------
// The four transitions, as called by the J2N helper natives and the JNI wrappers.

/// A native method's call begins (`method` from [`crate::methods::id_for`]).
#[inline]
pub fn j2n_begin(method: i32) {
    if method == LINK_PROBE_ID {
        return;
    }
    with_current(State::Bytecode, |ctx| ctx.j2n_begin(method as u32));
}

/// A native method's call ends.
#[inline]
pub fn j2n_end(method: i32) {
    if method == LINK_PROBE_ID {
        return;
    }
    with_current(State::Native, |ctx| ctx.j2n_end(method as u32));
}

/// J2N begin from a bind trampoline (no link probe to filter). Returns the context it charged, for
/// [`j2n_end_bound`] (null if there is none).
#[inline]
pub(crate) fn j2n_begin_bound(method: u32) -> *const ThreadContext {
    let mut current = std::ptr::null();
    with_current(State::Bytecode, |ctx| {
        ctx.j2n_begin(method);
        current = ctx;
    });
    current
}

/// J2N end from a bind trampoline, with the context its begin returned on this thread.
///
/// # Safety
/// `current` is null or what [`j2n_begin_bound`] returned on this thread for the same native call.
#[inline]
pub(crate) unsafe fn j2n_end_bound(method: u32, current: *const ThreadContext) {
    if current.is_null() {
        with_current(State::Native, |ctx| ctx.j2n_end(method));
    } else {
        // SAFETY: the caller's contract: this thread's context; a context is only retired when its
        // thread ends, which cannot happen inside a native call.
        unsafe { &*current }.j2n_end(method);
    }
}

#[inline]
pub(crate) fn n2j_begin(function: u32) {
    with_current(State::Native, |ctx| ctx.n2j_begin(function));
}

#[inline]
pub(crate) fn n2j_end(function: u32) {
    with_current(State::Bytecode, |ctx| ctx.n2j_end(function));
}

/// Only the clock read of a transition, for the benchmark floor (see `transitions::floor`).
#[cfg(feature = "bench-floor")]
pub(crate) fn read_clock_only() {
    with_current(State::Bytecode, |ctx| {
        // SAFETY: reached only through `with_current`, on the owning thread.
        std::hint::black_box(unsafe { ctx.owned() }.clock.read());
    });
}

/// Cost of one begin+end pair through the real transition code on this thread, in clock ns: at
/// most `iterations` pairs, stopping early once `budget_ns` of clock time has passed (a slow clock
/// needs fewer pairs for a stable mean). Uses a private context, so it counts nothing.
pub(crate) fn measure_transition_pair_ns(
    choice: &ClockChoice,
    iterations: u64,
    budget_ns: u64,
) -> f64 {
    const BATCH: u64 = 500;
    let ctx = ThreadContext::new(choice, State::Bytecode, None);
    let mut probe = ThreadClock::open(choice);
    let start = probe.read();
    let (mut done, mut elapsed) = (0u64, 0u64);
    while done < iterations.max(1) && (done == 0 || elapsed < budget_ns) {
        for _ in 0..BATCH {
            ctx.j2n_begin(0);
            ctx.j2n_end(0);
        }
        done += BATCH;
        elapsed = probe.read().saturating_sub(start);
    }
    probe.close();
    // SAFETY: `ctx` is private to this thread.
    unsafe { ctx.owned() }.clock.close();
    elapsed as f64 / done as f64
}
