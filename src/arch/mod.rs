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
