//! Every other architecture: the calling thread's block read by the C reader, a direct call.

use crate::counted::ThreadBlock;

extern "C" {
    /// Defined in `csrc/thread_block.c`.
    fn nativeacct_thread_block() -> *const ThreadBlock;
}

/// The calling thread's block, or null (see [`crate::thread_block`]).
#[inline(always)]
pub(crate) fn thread_block() -> *const ThreadBlock {
    // SAFETY: reads the calling thread's own initial-exec TLS word.
    unsafe { nativeacct_thread_block() }
}
