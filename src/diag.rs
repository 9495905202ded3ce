//! Diagnostics: one line at a time to stderr, never to the program's stdout, never panicking; and
//! the one panic guard used at every `extern "C"` edge, so that no panic unwinds into the VM, a
//! trampoline, a JNI wrapper or the C library.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

pub(crate) fn line(message: &str) {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "nativeacct: {message}");
}

/// A kind of `extern "C"` edge, and the line it says on stderr the first time code behind it panics.
pub(crate) struct Edge {
    message: &'static str,
    reported: AtomicBool,
}

impl Edge {
    const fn new(message: &'static str) -> Edge {
        Edge {
            message,
            reported: AtomicBool::new(false),
        }
    }
}

/// JVMTI event callbacks and `Agent_OnLoad`.
pub(crate) static JVMTI_CALLBACK: Edge =
    Edge::new("internal error in a JVMTI callback; continuing without it");
/// The hooks that bind trampolines, J2N helper natives and JNI wrappers call on every crossing.
pub(crate) static TRANSITION: Edge =
    Edge::new("internal error in a transition; some crossings may be missing from the report");
/// The C library's exit: the `atexit` handler and thread-local destructors.
pub(crate) static PROCESS_EXIT: Edge =
    Edge::new("internal error at thread or process exit; the report may be incomplete");

/// Run `f` at an `extern "C"` edge. A panic does not unwind past it: the result is `fallback`, and
/// the edge's line goes to stderr once. Costs nothing when nothing panics.
#[inline]
pub(crate) fn no_unwind<T>(edge: &Edge, fallback: T, f: impl FnOnce() -> T) -> T {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(value) => value,
        Err(_) => {
            if !edge.reported.swap(true, Relaxed) {
                line(edge.message);
            }
            fallback
        }
    }
}
