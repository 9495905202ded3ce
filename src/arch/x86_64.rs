//! x86-64: the time-stamp counter (`rdtsc`), its CPUID-stated frequencies, the interrupted
//! program counter (`RIP`) of a signal's context, and the thread's context word in initial-exec TLS.

/// The architecture's name as reports show it.
#[allow(dead_code)] // used by the boundary sampler and the arm64 port, which land next
pub(crate) const NAME: &str = "x86_64";

/// Whether this architecture has a cheap counter that [`read_counter`] reads.
pub(crate) const fn counter_available() -> bool {
    true
}

/// Evidence that the counter ticks at a constant rate whatever the CPU does, when the architecture
/// guarantees it; `None`: decided from the CPU's flags (`constant_tsc`, `nonstop_tsc`).
pub(crate) const fn counter_constant_rate() -> Option<&'static str> {
    None
}

/// Read the time-stamp counter.
#[inline(always)]
pub(crate) fn read_counter() -> u64 {
    // SAFETY: RDTSC exists on every x86_64 CPU and has no memory effects.
    unsafe { core::arch::x86_64::_rdtsc() }
}

/// The counter frequencies the hardware states (Hz, and where each came from).
pub(crate) fn stated_counter_frequencies() -> Vec<(u64, String)> {
    use core::arch::x86_64::__cpuid;
    let mut stated = Vec::new();
    // CPUID exists on every x86_64 CPU (the intrinsic is safe); leaves above the maximum return
    // zeros or another leaf's data, which the checks below reject.
    let max_leaf = __cpuid(0).eax;
    let crystal = (max_leaf >= 0x15).then(|| __cpuid(0x15));
    let hypervisor_max = __cpuid(0x4000_0000).eax;
    let hypervisor = (0x4000_0010..0x4001_0000)
        .contains(&hypervisor_max)
        .then(|| __cpuid(0x4000_0010));
    if let Some(leaf) = crystal {
        // TSC = crystal (ECX Hz) * EBX / EAX.
        if leaf.eax != 0 && leaf.ebx != 0 && leaf.ecx != 0 {
            let hz = u64::from(leaf.ecx) * u64::from(leaf.ebx) / u64::from(leaf.eax);
            stated.push((hz, "CPUID leaf 0x15 (crystal ratio)".to_string()));
        }
    }
    if let Some(leaf) = hypervisor {
        if leaf.eax != 0 {
            stated.push((
                u64::from(leaf.eax) * 1000,
                "hypervisor CPUID leaf 0x40000010".to_string(),
            ));
        }
    }
    stated
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
    unsafe { (*context).uc_mcontext.gregs[libc::REG_RIP as usize] as usize }
}

// The calling thread's context word, in initial-exec TLS: a read is one load relative to `fs`, where
// Rust's `thread_local!` in a shared library calls `__tls_get_addr` (general-dynamic model). The
// library then takes 8 bytes of the static TLS surplus that glibc keeps for libraries loaded later.
std::arch::global_asm!(
    ".pushsection .tbss,\"awT\",@nobits",
    ".p2align 3",
    ".globl nativeacct_thread_word",
    ".hidden nativeacct_thread_word",
    ".type nativeacct_thread_word,@object",
    ".size nativeacct_thread_word, 8",
    "nativeacct_thread_word:",
    ".zero 8",
    ".popsection",
);

/// The calling thread's word (0 until [`set_thread_word`] on this thread).
#[inline(always)]
pub(crate) fn thread_word() -> usize {
    let value: usize;
    // SAFETY: loads the calling thread's own TLS word defined above; no other memory is touched.
    unsafe {
        core::arch::asm!(
            "mov {v}, qword ptr [rip + nativeacct_thread_word@GOTTPOFF]",
            "mov {v}, qword ptr fs:[{v}]",
            v = out(reg) value,
            options(nostack, readonly, preserves_flags),
        );
    }
    value
}

/// Set the calling thread's word.
#[inline]
pub(crate) fn set_thread_word(value: usize) {
    // SAFETY: stores into the calling thread's own TLS word defined above.
    unsafe {
        core::arch::asm!(
            "mov {t}, qword ptr [rip + nativeacct_thread_word@GOTTPOFF]",
            "mov qword ptr fs:[{t}], {v}",
            t = out(reg) _,
            v = in(reg) value,
            options(nostack, preserves_flags),
        );
    }
}
