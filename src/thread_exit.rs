//! Running a function as a thread exits: a pthread key with a destructor, armed per thread with
//! one `pthread_setspecific` (a store into the thread's own key block).
//!
//! Cheaper than a Rust thread-local with a destructor: the first of those on a thread registers
//! with the C library (`__cxa_thread_atexit_impl`), which takes the dynamic loader's global lock,
//! looks up the calling library among all those loaded and allocates; Rust's list of destructors
//! allocates once more. A thread that lives 150 µs felt it (about 1 µs, and more in lock waits).
//!
//! Key destructors run after every C++ and Rust thread-local destructor of the thread, in rounds;
//! a hook may ask for a later round (`Armed::later`) to run after the other keys' destructors.

use std::ffi::c_void;
use std::sync::OnceLock;

/// A word kept for the thread until it exits, handed to the hook then. Never 0 (0 is "not armed").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Armed(usize);

/// Bit 0 is always set, so that an armed word is never null; bit 1 marks a word re-armed for a
/// later round; the caller's payload sits above.
const ARMED: usize = 1;
const LATER_ROUND: usize = 2;
const PAYLOAD_SHIFT: u32 = 2;

impl Armed {
    pub(crate) fn new(payload: usize) -> Armed {
        Armed(payload << PAYLOAD_SHIFT | ARMED)
    }

    pub(crate) fn payload(self) -> usize {
        self.0 >> PAYLOAD_SHIFT
    }

    fn in_later_round(self) -> bool {
        self.0 & LATER_ROUND != 0
    }
}

/// One thread-exit hook: `on_exit` runs on each armed thread as it exits, with its word.
pub(crate) struct ExitHook {
    key: OnceLock<Option<libc::pthread_key_t>>,
    destructor: unsafe extern "C" fn(*mut c_void),
}

impl ExitHook {
    /// `destructor` is the hook's own `extern "C"` function, which calls [`ExitHook::take`] (a
    /// function pointer cannot carry the hook).
    pub(crate) const fn new(destructor: unsafe extern "C" fn(*mut c_void)) -> ExitHook {
        ExitHook {
            key: OnceLock::new(),
            destructor,
        }
    }

    fn key(&self) -> Option<libc::pthread_key_t> {
        *self.key.get_or_init(|| {
            let mut key: libc::pthread_key_t = 0;
            // SAFETY: `key` is a valid out-pointer; the destructor is a plain `extern "C"`
            // function that stays loaded (the agent is never unloaded).
            let rc = unsafe { libc::pthread_key_create(&mut key, Some(self.destructor)) };
            (rc == 0).then_some(key)
        })
    }

    /// Arm (or re-arm with a new word) the calling thread. False if no key could be created.
    pub(crate) fn arm(&self, word: Armed) -> bool {
        let Some(key) = self.key() else {
            return false;
        };
        // SAFETY: a key of ours; the value is a plain word, never dereferenced.
        unsafe { libc::pthread_setspecific(key, word.0 as *const c_void) == 0 }
    }

    /// The calling thread's word, if armed.
    pub(crate) fn armed(&self) -> Option<Armed> {
        let key = self.key.get().copied().flatten()?;
        // SAFETY: a key of ours.
        let word = unsafe { libc::pthread_getspecific(key) } as usize;
        (word != 0).then_some(Armed(word))
    }

    /// In the destructor: the word to act on now, or None when it was handed on to a later
    /// round (`later`: run after the other keys' destructors of this round).
    pub(crate) fn take(&self, value: *mut c_void, later: bool) -> Option<Armed> {
        let word = Armed(value as usize);
        if later && !word.in_later_round() {
            let again = Armed(word.0 | LATER_ROUND);
            if self.arm(again) {
                return None;
            }
        }
        Some(word)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};

    static SEEN: AtomicUsize = AtomicUsize::new(0);
    static ROUNDS: AtomicUsize = AtomicUsize::new(0);
    static HOOK: ExitHook = ExitHook::new(on_exit);

    unsafe extern "C" fn on_exit(value: *mut c_void) {
        ROUNDS.fetch_add(1, SeqCst);
        if let Some(word) = HOOK.take(value, true) {
            SEEN.store(word.payload(), SeqCst);
        }
    }

    #[test]
    fn the_hook_runs_once_with_the_last_word_in_a_later_round() {
        std::thread::spawn(|| {
            assert!(HOOK.armed().is_none());
            assert!(HOOK.arm(Armed::new(7)));
            assert!(HOOK.arm(Armed::new(41)));
            assert_eq!(HOOK.armed().map(Armed::payload), Some(41));
        })
        .join()
        .unwrap();
        assert_eq!(SEEN.load(SeqCst), 41);
        assert_eq!(ROUNDS.load(SeqCst), 2);
        // A thread never armed runs nothing.
        std::thread::spawn(|| ()).join().unwrap();
        assert_eq!(ROUNDS.load(SeqCst), 2);
    }
}
