//! The entry points the instrumentation calls: the bind trampolines (J2N in `j2n=bind`), the J2N
//! helper natives that the rewritten `java/lang/Object` declares (J2N in `j2n=wrap`), and the hooks
//! of the JNI wrappers (N2J). Each forwards to `context`.
//!
//! These are `extern` functions called by the VM, so none of them may unwind: a panic is caught,
//! reported once, and the transition is dropped.

use crate::context::{self, Timing};
use jni::sys::{jclass, jint, JNIEnv};

/// Benchmark-only builds (`--features bench-floor`) can cut each transition short, so that
/// `scripts/bench-transitions --floor` can split the agent's added cost into the crossing itself, the
/// clock reads and the bookkeeping: `NATIVEACCT_BENCH_FLOOR=empty` returns at once, `=rdtsc` only
/// executes one bare `rdtsc` (the hardware floor), `=clock` reads the thread's clock and nothing
/// else, `=hooks` runs the whole transition in the hooks (no inline bind routine). Each of them
/// makes the trampolines call the hooks. Normal builds compile this to `false`.
#[cfg(feature = "bench-floor")]
mod floor {
    #[derive(PartialEq, Eq)]
    enum Floor {
        Off,
        Empty,
        Rdtsc,
        Clock,
        Hooks,
    }

    static MODE: once_cell::sync::Lazy<Floor> =
        once_cell::sync::Lazy::new(
            || match std::env::var("NATIVEACCT_BENCH_FLOOR").as_deref() {
                Ok("empty") => Floor::Empty,
                Ok("rdtsc") => Floor::Rdtsc,
                Ok("clock") => Floor::Clock,
                Ok("hooks") => Floor::Hooks,
                _ => Floor::Off,
            },
        );

    /// Whether to skip the transition (after doing the floor's share of its work).
    #[inline]
    pub(crate) fn cut_short() -> bool {
        match *MODE {
            Floor::Off | Floor::Hooks => false,
            Floor::Empty => true,
            Floor::Rdtsc => {
                std::hint::black_box(crate::arch::read_counter());
                true
            }
            Floor::Clock => {
                crate::context::read_clock_only();
                true
            }
        }
    }

    /// Whether the trampolines may run the transition inline (not while measuring the hooks).
    pub(crate) fn inline_allowed() -> bool {
        *MODE == Floor::Off
    }
}

#[cfg(not(feature = "bench-floor"))]
mod floor {
    #[inline(always)]
    pub(crate) fn cut_short() -> bool {
        false
    }

    #[inline(always)]
    pub(crate) fn inline_allowed() -> bool {
        true
    }
}

#[inline(always)]
fn guarded(f: impl FnOnce()) {
    crate::diag::no_unwind(&crate::diag::TRANSITION, (), || {
        if !floor::cut_short() {
            f()
        }
    })
}

/// Called by a bind trampoline, with its method's id, before the real native function runs.
/// Returns the thread's context (or null), which the trampoline hands back to [`bind_exit`].
pub extern "C" fn bind_enter(method: u32) -> *const context::ThreadContext {
    enter::<false>(method)
}

/// Called by a bind trampoline after the real native function returned (an exception may be
/// pending), with the context [`bind_enter`] returned: a thread cannot end while inside a native.
///
/// # Safety
/// `current` is what [`bind_enter`] returned on this thread for the same call.
pub unsafe extern "C" fn bind_exit(method: u32, current: *const context::ThreadContext) {
    // SAFETY: the caller's contract.
    unsafe { exit::<false>(method, current) }
}

/// [`bind_enter`] of `timing=sampled`: the same transition with no clock read in its code.
pub extern "C" fn bind_enter_sampled(method: u32) -> *const context::ThreadContext {
    enter::<true>(method)
}

/// [`bind_exit`] of `timing=sampled`.
///
/// # Safety
/// `current` is what [`bind_enter_sampled`] returned on this thread for the same call.
pub unsafe extern "C" fn bind_exit_sampled(method: u32, current: *const context::ThreadContext) {
    // SAFETY: the caller's contract.
    unsafe { exit::<true>(method, current) }
}

/// The timing a hook pair compiles in (a const parameter: each pair gets code of its own).
const fn timing(sampled: bool) -> Timing {
    if sampled {
        Timing::Sampled
    } else {
        Timing::Exact
    }
}

#[cfg(test)]
thread_local! {
    /// Native calls and upcalls whose begin the Rust hooks ran on this thread (the rest ran
    /// inline, in the bind routine or the upcall hooks of `timing=exact`).
    pub(crate) static HOOK_BEGINS: std::cell::Cell<(u64, u64)> = const { std::cell::Cell::new((0, 0)) };
}

#[inline(always)]
fn enter<const SAMPLED: bool>(method: u32) -> *const context::ThreadContext {
    #[cfg(test)]
    HOOK_BEGINS.with(|begins| begins.set((begins.get().0 + 1, begins.get().1)));
    let mut current = std::ptr::null();
    guarded(|| current = context::j2n_begin_bound(method, timing(SAMPLED)));
    current
}

/// # Safety
/// `current` is what the matching `enter` returned on this thread.
#[inline(always)]
unsafe fn exit<const SAMPLED: bool>(method: u32, current: *const context::ThreadContext) {
    // SAFETY: the caller's contract (the trampoline passes what its enter hook returned).
    guarded(|| unsafe { context::j2n_end_bound(method, current, timing(SAMPLED)) });
}

/// Whether the bind trampolines made from now on call the hooks of `timing=sampled`.
pub(crate) fn sampled_hooks() -> bool {
    context::sampled_timing()
}

/// Whether `timing=exact`'s trampolines run the transition inline, calling [`bind_exit`] only
/// for the cases the routine leaves to the hooks.
pub(crate) fn exact_inline() -> bool {
    crate::arch::BIND_ROUTINES_INLINE && floor::inline_allowed()
}

/// `private static native void java.lang.Object.j2n$beginN(int)`: a wrapped native is about to run.
#[no_mangle]
pub extern "system" fn Java_java_lang_Object_j2n_00024beginN(
    _env: *mut JNIEnv,
    _class: jclass,
    method: jint,
) {
    guarded(|| context::j2n_begin(method));
}

/// `private static native void java.lang.Object.j2n$endN(int)`: a wrapped native returned or threw.
#[no_mangle]
pub extern "system" fn Java_java_lang_Object_j2n_00024endN(
    _env: *mut JNIEnv,
    _class: jclass,
    method: jint,
) {
    guarded(|| context::j2n_end(method));
}

/// JNI wrapper hook: a `Call*Method*` / `NewObject*` function is about to run Java code.
pub extern "C" fn n2j_begin(function: u32) {
    #[cfg(test)]
    HOOK_BEGINS.with(|begins| begins.set((begins.get().0, begins.get().1 + 1)));
    guarded(|| context::n2j_begin(function, Timing::Exact));
}

/// JNI wrapper hook: the Java code called through JNI returned (normally or with an exception pending).
pub extern "C" fn n2j_end(function: u32) {
    guarded(|| context::n2j_end(function, Timing::Exact));
}

/// [`n2j_begin`] of `timing=sampled`: no clock read in its code.
pub extern "C" fn n2j_begin_sampled(function: u32) {
    guarded(|| context::n2j_begin_sampled(function));
}

/// [`n2j_end`] of `timing=sampled`.
pub extern "C" fn n2j_end_sampled(_function: u32) {
    guarded(context::n2j_end_sampled);
}

// `timing=exact`'s inline paths: the bind routine that its stubs jump to (the hooks' routine
// `nativeacct_bind_common` is its fallback) and the JNI wrapper hooks (the two above are theirs).
crate::arch::exact_routines!(
    bind: "nativeacct_bind_exact",
    bind_fallback: "nativeacct_bind_common",
    exit: bind_exit,
    stacks_enabled: crate::stacks::ENABLED,
    begin: "nativeacct_n2j_begin_exact",
    end: "nativeacct_n2j_end_exact",
    begin_fallback: n2j_begin,
    end_fallback: n2j_end,
    layout: crate::context::EXACT_LAYOUT,
);

unsafe extern "C" {
    /// The hooks above: each checks every precondition of its inline path itself.
    safe fn nativeacct_n2j_begin_exact(function: u32);
    safe fn nativeacct_n2j_end_exact(function: u32);
}

/// The JNI wrappers' hooks for the `timing=` in force.
pub(crate) fn jni_hooks() -> jni_wrappers::Hooks {
    if context::sampled_timing() {
        jni_wrappers::Hooks {
            begin: n2j_begin_sampled,
            end: n2j_end_sampled,
        }
    } else if exact_inline() {
        jni_wrappers::Hooks {
            begin: nativeacct_n2j_begin_exact,
            end: nativeacct_n2j_end_exact,
        }
    } else {
        jni_wrappers::Hooks {
            begin: n2j_begin,
            end: n2j_end,
        }
    }
}
