//! Finding the current thread's context: the thread-local slot, the pool of retired contexts, and the lifecycle hooks.

use super::*;
use crate::thread_exit::{Armed, ExitHook};

/// The current thread's context (null if none yet): the architecture's thread word, one load.
#[inline(always)]
fn current() -> *const ThreadContext {
    crate::arch::thread_word() as *const ThreadContext
}

fn set_current(ctx: *const ThreadContext) {
    crate::arch::set_thread_word(ctx as usize);
}

/// Retires the context if the thread exits without a JVMTI ThreadEnd (e.g. a native thread that
/// never detaches). Armed when a context is created.
static EXIT_GUARD: ExitHook = ExitHook::new(exit_guard);

unsafe extern "C" fn exit_guard(value: *mut std::ffi::c_void) {
    if EXIT_GUARD.take(value, false).is_some() {
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

pub(super) static LIFECYCLE: once_cell::sync::OnceCell<Lifecycle> =
    once_cell::sync::OnceCell::new();

/// Install the hooks (once; later calls are ignored).
pub fn set_lifecycle(lifecycle: Lifecycle) {
    let _ = LIFECYCLE.set(lifecycle);
}

thread_local! {
    /// Set while one of the agent's own threads runs as a VM thread (detach): it gets no context.
    static UNCOUNTED: Cell<bool> = const { Cell::new(false) };
}

/// Run `f` with nothing the calling (agent) thread does counted: no context is made for it.
pub(crate) fn uncounted<T>(f: impl FnOnce() -> T) -> T {
    UNCOUNTED.with(|u| u.set(true));
    let result = f();
    UNCOUNTED.with(|u| u.set(false));
    result
}

/// Create (or return) the calling thread's context, starting in `state`.
pub(crate) fn attach_current(state: State, name: Option<String>) -> Option<&'static ThreadContext> {
    let existing = current();
    if !existing.is_null() {
        // SAFETY: the thread word only ever holds a registered, not yet retired context of this thread.
        return Some(unsafe { &*existing });
    }
    if UNCOUNTED.try_with(|u| u.get()).unwrap_or(false) {
        return None;
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
    set_current(ctx);
    ctx.start_probe();
    EXIT_GUARD.arm(Armed::new(0));
    Some(ctx)
}

/// Retired contexts kept for reuse: a new thread takes one instead of allocating (and zeroing) its
/// rows, method chunks and latency slots. Bounded, so that memory after a burst of threads stays
/// at this many contexts.
// Boxed on purpose: a context lives at a stable heap address while a thread uses it, and the pool
// hands that allocation back as it is.
#[allow(clippy::vec_box)]
pub(super) static POOL: Mutex<Vec<Box<ThreadContext>>> = Mutex::new(Vec::new());
pub(super) const POOL_MAX: usize = 64;

pub(super) fn take_pooled() -> Option<Box<ThreadContext>> {
    crate::sync::lock(&POOL).pop()
}

/// Keep a merged context for a later thread (or free it when the pool is full). Its clock was
/// closed and its latency slots merged by the owner's retirement.
pub(crate) fn recycle(ctx: Box<ThreadContext>) {
    let mut pool = crate::sync::lock(&POOL);
    if pool.len() < POOL_MAX {
        pool.push(ctx);
    }
}

pub(super) fn with_existing<T>(f: impl FnOnce(&ThreadContext, &mut Owned) -> T) -> Option<T> {
    let ptr = current();
    if ptr.is_null() {
        return None;
    }
    // SAFETY: the thread word only holds this thread's registered, live context; we are on its thread and no
    // transition is running (callers are event callbacks, not transitions).
    let ctx = unsafe { &*ptr };
    // SAFETY: as above.
    Some(f(ctx, unsafe { ctx.owned() }))
}

/// The calling thread's current state, if it has a context.
pub(crate) fn current_state() -> Option<State> {
    with_existing(|ctx, o| ctx.state(o))
}

/// Whether the calling thread's context was created in native state.
pub(crate) fn started_native() -> bool {
    with_existing(|_, o| o.initial == State::Native).unwrap_or(false)
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
    let existing = current();
    if existing.is_null() {
        return attach_current(state, name);
    }
    // SAFETY: the thread word only holds this thread's registered, live context; we are on its thread.
    let ctx: &'static ThreadContext = unsafe { &*existing };
    // SAFETY: owning thread, outside any transition.
    ctx.switch(unsafe { ctx.owned() }, state);
    if let (Ok(mut slot), Some(name)) = (ctx.name.lock(), name) {
        slot.get_or_insert(name);
    }
    Some(ctx)
}

/// Name the calling thread's context if it has no name yet (a thread that was running before the
/// agent attached got its context at its first crossing, without one).
pub(crate) fn name_current(name: Option<String>) {
    let ptr = current();
    if let (false, Some(name)) = (ptr.is_null(), name) {
        // SAFETY: the thread word only holds this thread's registered, live context.
        if let Ok(mut slot) = unsafe { &*ptr }.name.lock() {
            slot.get_or_insert(name);
        }
    }
}

/// Charge the calling thread's open interval to its current state (used at VMDeath for the thread that
/// reports, so its last interval is not lost).
pub(crate) fn settle_current() {
    let ptr = current();
    if !ptr.is_null() {
        // SAFETY: the thread word only holds this thread's registered, live context; we are on its thread.
        let ctx = unsafe { &*ptr };
        // SAFETY: owning thread.
        ctx.settle(unsafe { ctx.owned() });
    }
}

/// Charge the open interval, detach the context from this thread and hand it to the merge.
pub fn retire_current() {
    let ptr = current();
    set_current(std::ptr::null());
    if ptr.is_null() {
        return;
    }
    // SAFETY: `ptr` was this thread's live context; it is now unreachable through the thread word.
    let ctx: &'static ThreadContext = unsafe { &*ptr };
    ctx.probe.stop_current();
    ctx.finish();
    if let Some(lifecycle) = LIFECYCLE.get() {
        (lifecycle.retire)(ctx);
    }
}

/// The calling thread's context, created (in `first_seen`) at its first crossing; None for a
/// thread that gets none (an agent thread, or before the lifecycle hooks are installed). The
/// transitions call their body on it directly, so that the body inlines into the hook.
#[inline(always)]
pub(super) fn current_or_attach(first_seen: State) -> Option<&'static ThreadContext> {
    let ptr = current();
    if ptr.is_null() {
        return attach_at_first_crossing(first_seen);
    }
    // SAFETY: the thread word only holds this thread's registered, live context.
    Some(unsafe { &*ptr })
}

#[cold]
#[inline(never)]
fn attach_at_first_crossing(first_seen: State) -> Option<&'static ThreadContext> {
    attach_current(first_seen, None)
}

/// Tests: a fresh context in bytecode, with clock `choice`, owned by the calling thread but not
/// registered; [`set_test_current`] makes it the thread's current one.
#[cfg(test)]
pub(crate) fn test_context(choice: &ClockChoice) -> Box<ThreadContext> {
    Box::new(ThreadContext::new(choice, State::Bytecode, None))
}

/// Tests: make `ctx` the calling thread's current context (None: no context).
#[cfg(test)]
pub(crate) fn set_test_current(ctx: Option<&ThreadContext>) {
    set_current(ctx.map_or(std::ptr::null(), |ctx| ctx as *const ThreadContext));
}
