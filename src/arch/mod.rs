//! What differs between CPU architectures, behind one interface: the cheap wall-clock counter
//! (`read_counter`, `counter_available`, `COUNTER_NAME`, `stated_counter_frequencies`,
//! `counter_constant_rate`), user-space performance-counter reads (`user_pmc_available`,
//! `read_pmc`), the program counter and stack pointer of an interrupted thread (`interrupted_pc`,
//! `interrupted_sp`), and the bind
//! trampolines' code: the calling convention's argument registers, the stub's bytes
//! (`STUB_SIZE`, `write_stub`), `flush_instruction_cache` and the shared routine
//! (`bind_common_routine!`), the thread word that holds the calling thread's context
//! (`thread_word`, `set_thread_word`), and the thread pointer with glibc's restartable-sequences
//! signature (`thread_pointer`, `RSEQ_SIGNATURE`). One file per architecture; nothing outside this module
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

/// Byte offsets and constants that `timing=exact`'s bind routine (`bind_exact_routine!`) reads and
/// writes, from the thread's context unless said otherwise; the context module composes them with
/// `offset_of!`, so the assembly names nothing above this module.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
pub(crate) struct ExactLayout {
    /// What the sampled routine reads too: the undecided flag, the state, the call counter, the
    /// innermost native and the method rows.
    pub(crate) rows: SampledLayout,
    /// `AtomicU64`s: the thread's bytecode and native time, and the clock's reading at its last
    /// transition.
    pub(crate) bytecode_ns: usize,
    pub(crate) native_ns: usize,
    pub(crate) last: usize,
    /// The clock is `tsc-hybrid` when the byte at `clock_tag` is `hybrid_tag`. Its reading is then
    /// `base_ns + (tsc - base_tsc) * mult >> 32`, TSC read first, while the `u32` at `lock` in the
    /// page whose address is at `page` equals `base_seq` and `tsc - base_tsc` is below
    /// `resample_ticks`; otherwise the hooks read it.
    pub(crate) clock_tag: usize,
    pub(crate) hybrid_tag: u8,
    pub(crate) page: usize,
    pub(crate) lock: usize,
    pub(crate) base_seq: usize,
    pub(crate) base_tsc: usize,
    pub(crate) base_ns: usize,
    pub(crate) resample_ticks: usize,
    pub(crate) mult: usize,
    /// Or it is `tsc-gated` when that byte is `gated_tag`. Its reading is then the same
    /// arithmetic over its own `gated_base_*` fields, with `gated_no_page` for the lock, while the
    /// TSC moved less than `gated_gate_ticks` since `gated_last_tsc`, which the read then sets,
    /// and, read after the TSC, the `u64` whose address is at `gated_marker_slot` still equals
    /// the one at `gated_marker_value` (the thread was not switched out).
    pub(crate) gated_tag: u8,
    pub(crate) gated_last_tsc: usize,
    pub(crate) gated_gate_ticks: usize,
    pub(crate) gated_marker_slot: usize,
    pub(crate) gated_marker_value: usize,
    pub(crate) gated_base_seq: usize,
    pub(crate) gated_base_tsc: usize,
    pub(crate) gated_base_ns: usize,
    pub(crate) gated_resample_ticks: usize,
    pub(crate) gated_mult: usize,
    pub(crate) gated_no_page: u32,
    /// The open frames: `len` frames of `frame_size` bytes at the address in `stack_base`, room for
    /// `stack_capacity`; a frame's fields (offsets in the frame), and the kind of a native's.
    pub(crate) stack_base: usize,
    pub(crate) stack_len: usize,
    pub(crate) stack_capacity: usize,
    pub(crate) frame_size: usize,
    pub(crate) frame_kind: usize,
    pub(crate) frame_id: usize,
    pub(crate) frame_outer: usize,
    pub(crate) frame_start: usize,
    pub(crate) frame_nested: usize,
    pub(crate) native_kind: u32,
    /// A method row's time counters and its latency slot's address (offsets in the row).
    pub(crate) row_total: usize,
    pub(crate) row_self: usize,
    pub(crate) row_slot: usize,
    /// The crossings waiting to be counted in their slots: a crossing of `ns` below `slot_ns`
    /// whose slot address is above `no_slot` is written to entry `waiting_len` of the `waiting`
    /// array (`entry_size` bytes each; the slot's address and the ns at `entry_slot` and
    /// `entry_ns`), while `waiting_len` is below `last_entry`.
    pub(crate) no_slot: usize,
    pub(crate) slot_ns: u64,
    pub(crate) waiting: usize,
    pub(crate) entry_size: usize,
    pub(crate) entry_slot: usize,
    pub(crate) entry_ns: usize,
    pub(crate) waiting_len: usize,
    pub(crate) last_entry: usize,
    /// The JNI upcalls (`n2j_exact_hooks!`): the frame kind of an upcall, the thread's upcall
    /// counter, the address of its array of `jni_count` rows of `jni_size` bytes, and a row's
    /// calls, Java time and latency slot's address (offsets in the row).
    pub(crate) upcall_kind: u32,
    pub(crate) jni_calls: usize,
    pub(crate) jni: usize,
    pub(crate) jni_count: usize,
    pub(crate) jni_size: usize,
    pub(crate) jni_row_calls: usize,
    pub(crate) jni_row_java: usize,
    pub(crate) jni_row_slot: usize,
}
