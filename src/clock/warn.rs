//! Rate-limited stderr messages of the clocks: one line per clock and failure class.

use super::perf;
use super::ClockKind;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

/// Failure class for "no usable TSC" (after the perf errno classes).
pub(crate) const NO_TSC_CLASS: usize = perf::ERROR_CLASSES;
/// Failure class for "explicit request could not be met" messages from `probe::choose`.
pub(crate) const REQUEST_CLASS: usize = perf::ERROR_CLASSES + 1;
const CLASSES: usize = perf::ERROR_CLASSES + 2;

/// Print `message` on stderr unless a message for this clock and failure class was printed before.
pub(crate) fn warn_once(kind: ClockKind, class: usize, message: impl FnOnce() -> String) {
    static PRINTED: [AtomicBool; 6 * CLASSES] = [const { AtomicBool::new(false) }; 6 * CLASSES];
    let slot = &PRINTED[kind.index() * CLASSES + class.min(CLASSES - 1)];
    if !slot.swap(true, Relaxed) {
        // Straight to stderr (not eprintln!, which test harnesses capture): one whole line.
        let line = format!("{}\n", message());
        let _ = std::io::Write::write_all(&mut std::io::stderr(), line.as_bytes());
    }
}
