//! Sets of small indexes kept as bits in atomic words: which method rows, row chunks and latency
//! buckets a thread wrote, so that a merge or a reset visits those and nothing else.

use std::sync::atomic::{AtomicU64, Ordering};

/// `f(index)` for every bit set in `words`, in order. Acquire: a bit may publish what it marks
/// (an allocated chunk).
pub(crate) fn each_set_bit(words: &[AtomicU64], mut f: impl FnMut(usize)) {
    for (w, word) in words.iter().enumerate() {
        let mut bits = word.load(Ordering::Acquire);
        while bits != 0 {
            f(w * 64 + bits.trailing_zeros() as usize);
            bits &= bits - 1;
        }
    }
}

/// Clear every bit (the owner, once it has visited them).
pub(crate) fn clear(words: &[AtomicU64]) {
    for word in words {
        word.store(0, Ordering::Relaxed);
    }
}
