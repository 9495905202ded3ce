//! arm64: the virtual counter (`CNTVCT_EL0`, rate in `CNTFRQ_EL0`) and the interrupted program
//! counter of a signal's context. To be completed by the arm64 port (issue 25).

/// The architecture's name as reports show it.
#[allow(dead_code)] // used by the boundary sampler and the arm64 port, which land next
pub(crate) const NAME: &str = "aarch64";

/// Whether this architecture has a cheap counter that [`read_counter`] reads.
pub(crate) const fn counter_available() -> bool {
    false
}

/// Evidence that the counter ticks at a constant rate whatever the CPU does, when the architecture
/// guarantees it (`None`: decided from the CPU's flags).
pub(crate) const fn counter_constant_rate() -> Option<&'static str> {
    Some("the arm64 generic timer (CNTVCT_EL0) ticks at a constant rate by the architecture")
}

/// Read the counter (not yet on this architecture).
#[inline(always)]
pub(crate) fn read_counter() -> u64 {
    0
}

/// The counter frequencies the hardware states (Hz, and where each came from).
pub(crate) fn stated_counter_frequencies() -> Vec<(u64, String)> {
    Vec::new()
}

/// The program counter where a signal interrupted the thread.
#[allow(dead_code)] // used by the boundary sampler, which lands next
///
/// # Safety
/// `context` is the third argument of an `SA_SIGINFO` handler.
#[inline]
pub(crate) unsafe fn interrupted_pc(context: *const libc::c_void) -> usize {
    let context = context as *const libc::ucontext_t;
    // SAFETY: the caller's contract: the kernel's ucontext for this signal.
    unsafe { (*context).uc_mcontext.pc as usize }
}

std::thread_local! {
    static THREAD_WORD: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// The calling thread's word (0 until [`set_thread_word`] on this thread).
#[inline(always)]
pub(crate) fn thread_word() -> usize {
    THREAD_WORD.with(std::cell::Cell::get)
}

/// Set the calling thread's word.
#[inline]
pub(crate) fn set_thread_word(value: usize) {
    THREAD_WORD.with(|w| w.set(value));
}
