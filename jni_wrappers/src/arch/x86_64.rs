//! x86-64: the calling thread's block read inline from its initial-exec TLS word, so that every
//! counted wrapper does two loads instead of a call.

use crate::counted::ThreadBlock;

/// The calling thread's initial-exec TLS word `$symbol`, as a `usize`: two loads, no call, safe in
/// a signal handler. The agent reads its own thread word with it too (its `src/arch/x86_64.rs`).
#[macro_export]
macro_rules! initial_exec_load {
    ($symbol:literal) => {{
        let value: usize;
        // SAFETY: loads the calling thread's own initial-exec TLS word `$symbol`; no other memory
        // is touched.
        unsafe {
            ::core::arch::asm!(
                concat!("mov {v}, qword ptr [rip + ", $symbol, "@GOTTPOFF]"),
                "mov {v}, qword ptr fs:[{v}]",
                v = out(reg) value,
                options(nostack, readonly, preserves_flags),
            );
        }
        value
    }};
}

/// The calling thread's block, or null (see [`crate::thread_block`]): its word in
/// `csrc/thread_block.c`.
#[inline(always)]
pub(crate) fn thread_block() -> *const ThreadBlock {
    initial_exec_load!("nativeacct_thread_block_word") as *const ThreadBlock
}
