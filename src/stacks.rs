//! Java caller chains of native calls, for the collapsed-stacks output (`stacks=`, `depth=`).
//! Stacks are captured only for sampled calls, since a JVMTI GetStackTrace costs microseconds.

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

static ENABLED: AtomicBool = AtomicBool::new(false);

/// Whether any stack sampling is on (one relaxed load on the hot path).
#[inline]
pub fn enabled() -> bool {
    ENABLED.load(Relaxed)
}

pub fn enable(on: bool) {
    ENABLED.store(on, Relaxed);
}

/// Called on the owning thread at the end of a wrapped native call, before J2N end returns.
#[cold]
pub fn on_native_exit(_method: u32, _self_ns: u64) {}
