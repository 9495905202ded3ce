//! What differs between CPU architectures, behind one interface: the cheap wall-clock counter
//! (`read_counter`, `counter_available`, `COUNTER_NAME`, `stated_counter_frequencies`,
//! `counter_constant_rate`), user-space performance-counter reads (`user_pmc_available`,
//! `read_pmc`), the program counter of an interrupted thread (`interrupted_pc`), and the bind
//! trampolines' code: the calling convention's argument registers, the stub's bytes
//! (`STUB_SIZE`, `write_stub`), `flush_instruction_cache` and the shared routine
//! (`bind_common_routine!`), and the thread word that holds the calling thread's context
//! (`thread_word`, `set_thread_word`). One file per architecture; nothing outside this module
//! names an architecture.

#[cfg(target_arch = "aarch64")]
mod aarch64;
#[cfg(target_arch = "aarch64")]
pub(crate) use aarch64::*;

#[cfg(target_arch = "x86_64")]
mod x86_64;
#[cfg(target_arch = "x86_64")]
pub(crate) use x86_64::*;

/// Byte offsets into a thread's context that `timing=sampled`'s bind routine
/// (`bind_sampled_routine!`) reads and writes; the context module computes them with `offset_of!`,
/// so the assembly names nothing above this module.
// arm64's routine only falls back, so it reads none of the fields.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
pub(crate) struct SampledLayout {
    /// `bool`: the thread has not crossed since ThreadStart (the routine leaves it to the hooks).
    pub(crate) undecided: usize,
    /// `AtomicBool`: the thread is in native code (what the boundary sampler reads).
    pub(crate) in_native: usize,
    /// `AtomicU64`: native calls of the thread.
    pub(crate) native_calls: usize,
    /// `AtomicU32`: the innermost open native's id + 1 (the sampler's per-method attribution).
    pub(crate) innermost: usize,
    /// Pointer to the array of method-row chunk pointers.
    pub(crate) chunks: usize,
    /// log2 of the rows per chunk.
    pub(crate) chunk_shift: usize,
    /// Bytes of one method row, and where its `calls` counter is.
    pub(crate) row_size: usize,
    pub(crate) row_calls: usize,
    /// Method ids from here on take the hooks' path (their row is the overflow row).
    pub(crate) max_methods: usize,
}
