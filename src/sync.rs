//! The one poison-tolerant lock: a panic elsewhere (caught at an `extern "C"` edge) must not turn
//! every later lock of shared state into a second panic.

use std::sync::{Mutex, MutexGuard};

/// Lock `mutex`, taking the data as it is if a panicking thread held it.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
