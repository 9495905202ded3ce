//! x86-64: the calling thread's block read inline from its initial-exec TLS word, so that every
//! counted wrapper does two loads instead of a call.

use crate::counted::ThreadBlock;

/// The calling thread's block, or null (see [`crate::thread_block`]).
#[inline(always)]
pub(crate) fn thread_block() -> *const ThreadBlock {
    let block: *const ThreadBlock;
    // SAFETY: loads the calling thread's own initial-exec TLS word (`csrc/thread_block.c`); no
    // other memory is touched.
    unsafe {
        std::arch::asm!(
            "mov {b}, qword ptr [rip + nativeacct_thread_block_word@GOTTPOFF]",
            "mov {b}, qword ptr fs:[{b}]",
            b = out(reg) block,
            options(nostack, readonly, preserves_flags),
        );
    }
    block
}
