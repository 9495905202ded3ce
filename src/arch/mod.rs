//! What differs between CPU architectures, behind one interface: the cheap wall-clock counter, the
//! frequency the hardware states for it, the program counter of an interrupted thread, and the
//! thread-local word that holds the calling thread's context. One file
//! per architecture; nothing outside this module names an architecture.

#[cfg(target_arch = "aarch64")]
mod aarch64;
#[cfg(target_arch = "aarch64")]
pub(crate) use aarch64::*;

#[cfg(target_arch = "x86_64")]
mod x86_64;
#[cfg(target_arch = "x86_64")]
pub(crate) use x86_64::*;
