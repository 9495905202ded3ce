//! arm64 (AAPCS64, Linux): the virtual counter (`CNTVCT_EL0`, rate in `CNTFRQ_EL0`), the
//! interrupted program counter of a signal's context, the instruction-cache maintenance that new
//! code needs, and the bind trampolines' code: the stub's instructions and the shared routine.

/// The architecture's name as reports show it.
pub(crate) const NAME: &str = "aarch64";

/// The counter's name as clock reasons show it.
pub(crate) const COUNTER_NAME: &str = "CNTVCT_EL0";

/// Whether this architecture has a cheap counter that [`read_counter`] reads: the generic timer's
/// virtual count, which Linux lets user space read on every arm64 system.
pub(crate) const fn counter_available() -> bool {
    true
}

/// Read the virtual counter. The `isb` keeps the read from being taken early, ahead of the
/// instructions before it (the counter read is not ordered otherwise).
#[inline(always)]
pub(crate) fn read_counter() -> u64 {
    let count: u64;
    // SAFETY: CNTVCT_EL0 is readable at EL0 on Linux (CNTKCTL_EL1.EL0VCTEN is set); ISB and MRS have
    // no memory effects. No `nomem`, so the compiler keeps the read between the memory accesses
    // around it, as it does for `rdtsc`.
    unsafe {
        core::arch::asm!(
            "isb",
            "mrs {count}, cntvct_el0",
            count = out(reg) count,
            options(nostack, preserves_flags)
        );
    }
    count
}

/// The counter frequencies the hardware states (Hz, and where each came from): CNTFRQ_EL0, which
/// firmware sets; read at run time since it differs between parts (62.5 MHz under qemu, 121.875 MHz
/// on Graviton2, 1 GHz on Armv8.6+ parts, 1–50 MHz on older SoCs). Calibration checks it.
pub(crate) fn stated_counter_frequencies() -> Vec<(u64, String)> {
    let hz: u64;
    // SAFETY: CNTFRQ_EL0 is readable at EL0 wherever CNTVCT_EL0 is; MRS has no memory effects.
    unsafe {
        core::arch::asm!("mrs {hz}, cntfrq_el0", hz = out(reg) hz, options(nomem, nostack, preserves_flags));
    }
    let hz = hz & 0xFFFF_FFFF;
    if hz == 0 {
        Vec::new()
    } else {
        vec![(hz, "CNTFRQ_EL0".to_string())]
    }
}

/// Evidence that the counter ticks at a constant rate whatever the CPU does, when the architecture
/// guarantees it (`None`: decided from the CPU's flags): the system counter must.
pub(crate) const fn counter_constant_rate() -> Option<&'static str> {
    Some("the arm64 generic timer (CNTVCT_EL0) ticks at a constant rate by the architecture")
}

/// Whether the counter ticks at the core's nominal clock, so that `cycles` can become ns at its
/// rate: no, the system counter's rate (tens of MHz to 1 GHz) is unrelated to the core clock.
pub(crate) const fn counter_rate_is_core_clock() -> bool {
    false
}

/// Whether user space can read a perf event's hardware counter itself: not on arm64 here (the
/// agent does not use the PMU's EL0 access), so `cycles` is read with `read()`.
pub(crate) const fn user_pmc_available() -> bool {
    false
}

/// Never called (see [`user_pmc_available`]).
#[inline(always)]
pub(crate) fn read_pmc(_counter: u32) -> u64 {
    0
}

/// The program counter where a signal interrupted the thread.
///
/// # Safety
/// `context` is the third argument of an `SA_SIGINFO` handler.
#[inline]
pub(crate) unsafe fn interrupted_pc(context: *const libc::c_void) -> usize {
    let context = context as *const libc::ucontext_t;
    // SAFETY: the caller's contract: the kernel's ucontext for this signal.
    unsafe { (*context).uc_mcontext.pc as usize }
}

/// The stack pointer where a signal interrupted the thread.
///
/// # Safety
/// `context` is the third argument of an `SA_SIGINFO` handler.
#[inline]
pub(crate) unsafe fn interrupted_sp(context: *const libc::c_void) -> usize {
    let context = context as *const libc::ucontext_t;
    // SAFETY: the caller's contract: the kernel's ucontext for this signal.
    unsafe { (*context).uc_mcontext.sp as usize }
}

// The bind trampolines (src/bind/trampoline.rs): AAPCS64.

/// Integer argument registers: x0–x7.
pub(crate) const INTEGER_ARGUMENT_REGISTERS: usize = 8;
/// Vector argument registers: v0–v7.
pub(crate) const VECTOR_ARGUMENT_REGISTERS: usize = 8;
/// Whether the bind routines of `timing=exact` and `timing=sampled` do their common case inline
/// (the thread word is a Rust thread-local).
pub(crate) const BIND_ROUTINES_INLINE: bool = false;
/// Bytes of one stub.
pub(crate) const STUB_SIZE: usize = 16;

/// `adr x16, record`, `ldr x17, [x16]`, `br x17`, `brk #0`: the stub hands the shared routine its
/// record in x16 and jumps through x17, the two intra-procedure-call scratch registers that no
/// argument uses (and the ones a BTI `c` landing pad accepts from `br`). `record_distance` is the
/// record's address minus the stub's, within ±1 MiB.
pub(crate) fn write_stub(stub: &mut [u8], record_distance: usize) {
    assert!(record_distance < 1 << 20, "adr reaches ±1 MiB");
    let offset = record_distance as u32;
    let adr_x16 = 0x1000_0000 | ((offset & 3) << 29) | ((offset >> 2) << 5) | 16;
    let ldr_x17_x16 = 0xF940_0211;
    let br_x17 = 0xD61F_0220;
    let brk_0 = 0xD420_0000;
    for (slot, word) in stub
        .chunks_exact_mut(4)
        .zip([adr_x16, ldr_x17_x16, br_x17, brk_0])
    {
        slot.copy_from_slice(&u32::to_le_bytes(word));
    }
}

/// Make freshly written code visible to instruction fetch: clean the data cache and invalidate the
/// instruction cache to the point of unification, line by line, then synchronize. Arm's caches are
/// not coherent with instruction fetch; CTR_EL0 gives the line sizes and whether a step is needed.
pub(crate) fn flush_instruction_cache(code: &[u8]) {
    let ctr: u64;
    // SAFETY: CTR_EL0 is readable at EL0 on Linux (SCTLR_EL1.UCT, or trapped and emulated).
    unsafe {
        core::arch::asm!("mrs {ctr}, ctr_el0", ctr = out(reg) ctr, options(nomem, nostack, preserves_flags));
    }
    let data_line = 4usize << ((ctr >> 16) & 0xF);
    let instruction_line = 4usize << (ctr & 0xF);
    let (start, end) = (code.as_ptr() as usize, code.as_ptr() as usize + code.len());
    // IDC (bit 28): cleaning to the point of unification is not needed.
    if ctr & (1 << 28) == 0 {
        for line in (start & !(data_line - 1)..end).step_by(data_line) {
            // SAFETY: cleans a line of our own mapping (EL0 may, SCTLR_EL1.UCI); no data changes.
            unsafe {
                core::arch::asm!("dc cvau, {line}", line = in(reg) line, options(nostack, preserves_flags))
            };
        }
    }
    // SAFETY: a barrier; no memory is changed.
    unsafe { core::arch::asm!("dsb ish", options(nostack, preserves_flags)) };
    // DIC (bit 29): invalidating the instruction cache is not needed.
    if ctr & (1 << 29) == 0 {
        for line in (start & !(instruction_line - 1)..end).step_by(instruction_line) {
            // SAFETY: invalidates instruction-cache lines of our own mapping; no data changes.
            unsafe {
                core::arch::asm!("ic ivau, {line}", line = in(reg) line, options(nostack, preserves_flags))
            };
        }
    }
    // SAFETY: barriers; no memory is changed.
    unsafe { core::arch::asm!("dsb ish", "isb", options(nostack, preserves_flags)) };
}

/// A shared routine named `$name` (`nativeacct_bind_common`, and a copy for `timing=sampled`
/// with its own hooks) that stubs jump to, with the record in x16. It
/// starts with a BTI `c` landing pad (a no-op on cores without BTI), pushes a frame record
/// (x29, x30) so frame-pointer unwinders walk through it (with DWARF unwind info too), saves x0–x7
/// and d0–d7 (JNI passes only `float`/`double` in vector registers), calls `$enter(method id)`
/// (which returns the thread's context), copies the record's stack-argument bytes, calls the real
/// function with every argument untouched, calls `$exit(method id, context)` and returns the real
/// function's x0/d0. The record's layout: +0 this routine, +8 the real function, +16 stack bytes
/// (a multiple of 16), +24 the method id (u32). The hooks are passed in so that this file names
/// nothing above it.
///
/// The frame, from x29: +0 x29, +8 x30, +16..+80 x0–x7, +80..+144 d0–d7, +144 the record,
/// +152 the context; the caller's stack arguments start at +160 (the CFA).
macro_rules! bind_common_routine {
    ($name:literal, $enter:path, $exit:path) => {
        std::arch::global_asm!(
            ".text",
            ".p2align 4",
            concat!(".globl ", $name),
            concat!(".hidden ", $name),
            concat!(".type ", $name, ",%function"),
            concat!($name, ":"),
            ".cfi_startproc",
            "hint #34", // bti c
            "stp x29, x30, [sp, #-160]!",
            ".cfi_def_cfa_offset 160",
            ".cfi_offset x29, -160",
            ".cfi_offset x30, -152",
            "mov x29, sp",
            ".cfi_def_cfa x29, 160",
            "stp x0, x1, [x29, #16]",
            "stp x2, x3, [x29, #32]",
            "stp x4, x5, [x29, #48]",
            "stp x6, x7, [x29, #64]",
            "stp d0, d1, [x29, #80]",
            "stp d2, d3, [x29, #96]",
            "stp d4, d5, [x29, #112]",
            "stp d6, d7, [x29, #128]",
            "str x16, [x29, #144]",
            "ldr w0, [x16, #24]",
            "bl {enter}",
            // The thread's context, handed to the exit hook so it need not look it up again.
            "str x0, [x29, #152]",
            // Copy the stack-passed arguments, last slot first: [x29+160..) to [sp..).
            "ldr x16, [x29, #144]",
            "ldr x9, [x16, #16]",
            "sub sp, sp, x9",
            "add x10, x29, #160",
            "cbz x9, 3f",
            "2:",
            "sub x9, x9, #8",
            "ldr x11, [x10, x9]",
            "str x11, [sp, x9]",
            "cbnz x9, 2b",
            "3:",
            "ldp x0, x1, [x29, #16]",
            "ldp x2, x3, [x29, #32]",
            "ldp x4, x5, [x29, #48]",
            "ldp x6, x7, [x29, #64]",
            "ldp d0, d1, [x29, #80]",
            "ldp d2, d3, [x29, #96]",
            "ldp d4, d5, [x29, #112]",
            "ldp d6, d7, [x29, #128]",
            "ldr x16, [x29, #144]",
            "ldr x16, [x16, #8]",
            "blr x16",
            "mov sp, x29",
            "str x0, [x29, #16]",
            "str d0, [x29, #80]",
            "ldr x16, [x29, #144]",
            "ldr w0, [x16, #24]",
            "ldr x1, [x29, #152]",
            "bl {exit}",
            "ldr x0, [x29, #16]",
            "ldr d0, [x29, #80]",
            "ldp x29, x30, [sp], #160",
            ".cfi_def_cfa sp, 0",
            ".cfi_restore x29",
            ".cfi_restore x30",
            "ret",
            ".cfi_endproc",
            concat!(".size ", $name, ", .-", $name),
            enter = sym $enter,
            exit = sym $exit,
        );
    };
}
pub(crate) use bind_common_routine;

/// `timing=sampled`'s routine named `$name`, with the record in x16: on arm64 it branches to
/// `$fallback` (the hooks' routine) with every register as it came. The x86-64 routine does the
/// transition inline through its initial-exec thread word; here the thread word is a Rust
/// thread-local, which assembly cannot reach without a call. `$layout` is unused.
macro_rules! bind_sampled_routine {
    ($name:literal, $fallback:literal, $layout:path) => {
        std::arch::global_asm!(
            ".text",
            ".p2align 4",
            concat!(".globl ", $name),
            concat!(".hidden ", $name),
            concat!(".type ", $name, ",%function"),
            concat!($name, ":"),
            ".cfi_startproc",
            "hint #34", // bti c
            concat!("b ", $fallback),
            ".cfi_endproc",
            concat!(".size ", $name, ", .-", $name),
        );
        const _: $crate::arch::SampledLayout = $layout;
    };
}
pub(crate) use bind_sampled_routine;

/// `timing=exact`'s inline paths: on arm64 the routine `$bind` and the upcall hooks `$begin` and
/// `$end` branch to `$bind_fallback`, `$begin_fallback` and `$end_fallback` with every register as
/// it came, for the reason [`bind_sampled_routine!`] gives ([`BIND_ROUTINES_INLINE`] keeps the
/// stubs and the wrappers off them). `$exit`, `$stacks_enabled` and `$layout` are unused.
macro_rules! exact_routines {
    (
        bind: $bind:literal, bind_fallback: $bind_fallback:literal, exit: $exit:path,
        stacks_enabled: $stacks_enabled:path,
        begin: $begin:literal, end: $end:literal, begin_fallback: $begin_fallback:path,
        end_fallback: $end_fallback:path, layout: $layout:path $(,)?
    ) => {
        std::arch::global_asm!(
            ".text",
            ".p2align 4",
            concat!(".globl ", $bind),
            concat!(".hidden ", $bind),
            concat!(".type ", $bind, ",%function"),
            concat!($bind, ":"),
            ".cfi_startproc",
            "hint #34", // bti c
            concat!("b ", $bind_fallback),
            ".cfi_endproc",
            concat!(".size ", $bind, ", .-", $bind),
            ".p2align 4",
            concat!(".globl ", $begin),
            concat!(".hidden ", $begin),
            concat!(".type ", $begin, ",%function"),
            concat!($begin, ":"),
            ".cfi_startproc",
            "hint #34", // bti c
            "b {begin_fallback}",
            ".cfi_endproc",
            concat!(".size ", $begin, ", .-", $begin),
            ".p2align 4",
            concat!(".globl ", $end),
            concat!(".hidden ", $end),
            concat!(".type ", $end, ",%function"),
            concat!($end, ":"),
            ".cfi_startproc",
            "hint #34", // bti c
            "b {end_fallback}",
            ".cfi_endproc",
            concat!(".size ", $end, ", .-", $end),
            begin_fallback = sym $begin_fallback,
            end_fallback = sym $end_fallback,
        );
        const _: $crate::arch::ExactLayout = $layout;
    };
}
pub(crate) use exact_routines;

/// ELF relocation types of a GOT slot that holds a function's address: a PLT call's
/// (`R_AARCH64_JUMP_SLOT`) and an address taken (`R_AARCH64_GLOB_DAT`).
pub(crate) const RELOC_JUMP_SLOT: u32 = 1026;
pub(crate) const RELOC_GLOB_DAT: u32 = 1025;

/// The signature glibc registers its restartable-sequences area with (`RSEQ_SIG`, little-endian
/// data): the kernel wants it just before the abort address of any critical section a thread
/// points the area at.
pub(crate) const RSEQ_SIGNATURE: u32 = 0xD428_BC00;

/// The calling thread's thread pointer (`TPIDR_EL0`), which glibc's `__rseq_offset` counts from.
#[inline(always)]
pub(crate) fn thread_pointer() -> usize {
    let pointer: usize;
    // SAFETY: reads the calling thread's own thread-pointer register.
    unsafe {
        core::arch::asm!(
            "mrs {p}, tpidr_el0",
            p = out(reg) pointer,
            options(nostack, nomem, preserves_flags),
        );
    }
    pointer
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stubs_point_at_their_records() {
        let mut stub = [0u8; STUB_SIZE];
        write_stub(&mut stub, 0xC000 + 5);
        let words: Vec<u32> = stub
            .chunks_exact(4)
            .map(|w| u32::from_le_bytes(w.try_into().unwrap()))
            .collect();
        // adr x16, #0xc005: immlo = 1, immhi = 0x3001.
        assert_eq!(words, [0x3006_0030, 0xF940_0211, 0xD61F_0220, 0xD420_0000]);
    }

    #[test]
    fn the_counter_moves_at_the_stated_rate() {
        let stated = stated_counter_frequencies();
        assert_eq!(stated.len(), 1, "CNTFRQ_EL0 is set");
        let before = read_counter();
        std::thread::sleep(std::time::Duration::from_millis(20));
        let ticks = read_counter() - before;
        let at_least = stated[0].0 / 50;
        assert!(
            ticks >= at_least,
            "{ticks} ticks in 20 ms at {} Hz",
            stated[0].0
        );
    }

    /// The counter's resolution, which bounds the error on one native's time: back-to-back reads
    /// differ by whole ticks only, and with a coarse counter most differ by none. Prints what a
    /// short call's time is made of here (see README, "Clocks on arm64").
    #[test]
    fn back_to_back_reads_step_by_whole_ticks() {
        let hz = stated_counter_frequencies()[0].0;
        let tick_ns = 1e9 / hz as f64;
        let samples = 100_000;
        let (mut zero, mut one, mut more) = (0u32, 0u32, 0u32);
        for _ in 0..samples {
            let first = read_counter();
            match read_counter() - first {
                0 => zero += 1,
                1 => one += 1,
                _ => more += 1,
            }
        }
        eprintln!(
            "CNTVCT_EL0 at {hz} Hz ({tick_ns:.2} ns per tick): back-to-back reads differ by 0 ticks \
             {zero} times, by 1 tick {one} times, by more {more} times, of {samples}"
        );
        assert!(
            zero + one + more == samples && one + more > 0,
            "the counter moves"
        );
    }
}
