//! What differs between CPU architectures in the wrappers, behind one interface: how the calling
//! thread's block is read (`thread_block`). One file per architecture; nothing outside this
//! module names an architecture.

#[cfg(target_arch = "x86_64")]
mod x86_64;
#[cfg(target_arch = "x86_64")]
pub(crate) use x86_64::*;

// No inline read written for it: the C reader does the same load behind a call.
#[cfg(not(target_arch = "x86_64"))]
mod generic;
#[cfg(not(target_arch = "x86_64"))]
pub(crate) use generic::*;
