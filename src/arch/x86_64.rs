//! x86-64: the time-stamp counter (`rdtsc`), its CPUID-stated frequencies, user-space `rdpmc`, the
//! interrupted program counter (`RIP`) of a signal's context, and the bind trampolines' System V
//! code: the stub's bytes and the shared routine.

/// The architecture's name as reports show it.
pub(crate) const NAME: &str = "x86_64";

/// The counter's name as clock reasons show it.
pub(crate) const COUNTER_NAME: &str = "TSC";

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

/// Whether the counter ticks at the core's nominal clock, so that `cycles` can become ns at its
/// rate: the TSC does (to within the nominal-versus-actual frequency the reasons state).
pub(crate) const fn counter_rate_is_core_clock() -> bool {
    true
}

/// Whether user space can read a perf event's hardware counter itself (`rdpmc`, when the kernel
/// sets `cap_user_rdpmc`).
pub(crate) const fn user_pmc_available() -> bool {
    true
}

/// Read performance counter `counter` (a perf mmap page's `index - 1`).
#[inline(always)]
pub(crate) fn read_pmc(counter: u32) -> u64 {
    let low: u32;
    let high: u32;
    // SAFETY: only called when the kernel set cap_user_rdpmc for this event (CR4.PCE enabled for
    // this mm) and `counter` comes from the page's index; RDPMC has no memory effects. No `nomem`, so
    // the compiler keeps it between the seqlock's volatile loads.
    unsafe {
        core::arch::asm!(
            "rdpmc",
            in("ecx") counter,
            out("eax") low,
            out("edx") high,
            options(nostack, preserves_flags)
        );
    }
    (u64::from(high) << 32) | u64::from(low)
}

/// The program counter where a signal interrupted the thread.
///
/// # Safety
/// `context` is the third argument of an `SA_SIGINFO` handler.
#[inline]
pub(crate) unsafe fn interrupted_pc(context: *const libc::c_void) -> usize {
    let context = context as *const libc::ucontext_t;
    // SAFETY: the caller's contract: the kernel's ucontext for this signal.
    unsafe { (*context).uc_mcontext.gregs[libc::REG_RIP as usize] as usize }
}

/// The stack pointer where a signal interrupted the thread.
///
/// # Safety
/// `context` is the third argument of an `SA_SIGINFO` handler.
#[inline]
pub(crate) unsafe fn interrupted_sp(context: *const libc::c_void) -> usize {
    let context = context as *const libc::ucontext_t;
    // SAFETY: the caller's contract: the kernel's ucontext for this signal.
    unsafe { (*context).uc_mcontext.gregs[libc::REG_RSP as usize] as usize }
}

// The bind trampolines (src/bind/trampoline.rs): System V AMD64.

/// Integer argument registers: rdi, rsi, rdx, rcx, r8, r9.
pub(crate) const INTEGER_ARGUMENT_REGISTERS: usize = 6;
/// Vector argument registers: xmm0–xmm7.
pub(crate) const VECTOR_ARGUMENT_REGISTERS: usize = 8;
/// Whether the bind routines of `timing=exact` and `timing=sampled` do their common case inline
/// (the thread word is one `fs`-relative load).
pub(crate) const BIND_ROUTINES_INLINE: bool = true;
/// Bytes of one stub.
pub(crate) const STUB_SIZE: usize = 16;

/// One stub, `lea r11, [rip + record]; jmp qword ptr [r11]`, padded with `int3`: it hands the
/// shared routine its record in r11 (a scratch register no argument uses). `record_distance` is the
/// record's address minus the stub's.
pub(crate) fn write_stub(stub: &mut [u8], record_distance: usize) {
    // The displacement counts from the end of the 7-byte `lea`.
    let displacement = u32::try_from(record_distance - 7).expect("record within 4 GiB of its stub");
    stub.fill(0xCC);
    stub[..3].copy_from_slice(&[0x4C, 0x8D, 0x1D]);
    stub[3..7].copy_from_slice(&displacement.to_le_bytes());
    stub[7..10].copy_from_slice(&[0x41, 0xFF, 0x23]);
}

/// Make freshly written code visible to instruction fetch: nothing to do on x86-64, whose
/// instruction cache is coherent with data writes (and the code was never executed before).
pub(crate) fn flush_instruction_cache(_code: &[u8]) {}

/// Assembly text that opens the hidden global function `$name`, with its unwind info.
macro_rules! function_start {
    ($name:literal) => {
        concat!(
            ".text\n.p2align 4\n.globl ",
            $name,
            "\n.hidden ",
            $name,
            "\n.type ",
            $name,
            ",@function\n",
            $name,
            ":\n.cfi_startproc",
        )
    };
}
pub(crate) use function_start;

/// Assembly text of a standard `rbp` frame's prologue, with its unwind info.
macro_rules! rbp_frame {
    () => {
        concat!(
            "push rbp\n.cfi_def_cfa_offset 16\n.cfi_offset rbp, -16\n",
            "mov rbp, rsp\n.cfi_def_cfa_register rbp",
        )
    };
}
pub(crate) use rbp_frame;

/// Assembly text that loads the calling thread's context into `$reg`, jumping to `9f` when it
/// has none.
macro_rules! thread_context {
    ($reg:literal) => {
        concat!(
            "mov ",
            $reg,
            ", qword ptr [rip + nativeacct_thread_word@GOTTPOFF]\n",
            "mov ",
            $reg,
            ", qword ptr fs:[",
            $reg,
            "]\n",
            "test ",
            $reg,
            ", ",
            $reg,
            "\n",
            "jz 9f",
        )
    };
}
pub(crate) use thread_context;

/// Assembly text that copies the record's stack-passed argument bytes (the record in r11), last
/// slot first, from the caller's frame (`[rbp+16..)`) to `[rsp..)`, and calls the real function;
/// it clobbers rax and r10.
macro_rules! call_real_function {
    () => {
        concat!(
            "mov r10, qword ptr [r11 + 16]\n",
            "test r10, r10\n",
            "jz 3f\n",
            "sub rsp, r10\n",
            "2:\n",
            "mov rax, [rbp+r10+8]\n",
            "mov [rsp+r10-8], rax\n",
            "sub r10, 8\n",
            "jnz 2b\n",
            "3:\n",
            "call qword ptr [r11 + 8]",
        )
    };
}
pub(crate) use call_real_function;

/// A shared routine named `$name` (`nativeacct_bind_common`, and a copy for `timing=sampled`
/// with its own hooks) that stubs jump to, with the record in r11. It
/// keeps a standard `rbp` frame (with DWARF unwind info), saves the six integer and eight vector
/// argument registers, calls `$enter(method id)` (which returns the thread's context), copies the
/// record's stack-argument bytes, calls the real function with every argument untouched, calls
/// `$exit(method id, context)` and returns the real function's `rax`/`xmm0`. The record's layout:
/// +0 this routine, +8 the real function, +16 stack bytes (a multiple of 16), +24 the method id (u32).
/// The hooks are passed in so that this file names nothing above it.
macro_rules! bind_common_routine {
    ($name:literal, $enter:path, $exit:path) => {
        std::arch::global_asm!(
            $crate::arch::function_start!($name),
            $crate::arch::rbp_frame!(),
            // Record, six integer and eight vector argument registers, the context: 16 slots (aligned).
            "sub rsp, 128",
            "mov [rbp-8], r11",
            "mov [rbp-16], rdi",
            "mov [rbp-24], rsi",
            "mov [rbp-32], rdx",
            "mov [rbp-40], rcx",
            "mov [rbp-48], r8",
            "mov [rbp-56], r9",
            "movq qword ptr [rbp-64], xmm0",
            "movq qword ptr [rbp-72], xmm1",
            "movq qword ptr [rbp-80], xmm2",
            "movq qword ptr [rbp-88], xmm3",
            "movq qword ptr [rbp-96], xmm4",
            "movq qword ptr [rbp-104], xmm5",
            "movq qword ptr [rbp-112], xmm6",
            "movq qword ptr [rbp-120], xmm7",
            "mov edi, dword ptr [r11+24]",
            "call {enter}",
            // The thread's context, handed to the exit hook so it need not look it up again.
            "mov [rbp-128], rax",
            // Copy the stack-passed arguments, last slot first: [rbp+16..) to [rsp..).
            "mov r11, [rbp-8]",
            "mov rcx, [r11+16]",
            "sub rsp, rcx",
            "test rcx, rcx",
            "jz 3f",
            "2:",
            "mov rax, [rbp+rcx+8]",
            "mov [rsp+rcx-8], rax",
            "sub rcx, 8",
            "jnz 2b",
            "3:",
            "mov rdi, [rbp-16]",
            "mov rsi, [rbp-24]",
            "mov rdx, [rbp-32]",
            "mov rcx, [rbp-40]",
            "mov r8, [rbp-48]",
            "mov r9, [rbp-56]",
            "movq xmm0, qword ptr [rbp-64]",
            "movq xmm1, qword ptr [rbp-72]",
            "movq xmm2, qword ptr [rbp-80]",
            "movq xmm3, qword ptr [rbp-88]",
            "movq xmm4, qword ptr [rbp-96]",
            "movq xmm5, qword ptr [rbp-104]",
            "movq xmm6, qword ptr [rbp-112]",
            "movq xmm7, qword ptr [rbp-120]",
            "mov r11, [rbp-8]",
            "call qword ptr [r11+8]",
            "mov [rbp-16], rax",
            "movq qword ptr [rbp-64], xmm0",
            "mov rdi, [rbp-8]",
            "mov edi, dword ptr [rdi+24]",
            "mov rsi, [rbp-128]",
            "call {exit}",
            "mov rax, [rbp-16]",
            "movq xmm0, qword ptr [rbp-64]",
            "leave",
            ".cfi_def_cfa rsp, 8",
            "ret",
            ".cfi_endproc",
            concat!(".size ", $name, ", .-", $name),
            enter = sym $enter,
            exit = sym $exit,
        );
    };
}
pub(crate) use bind_common_routine;

/// `timing=sampled`'s routine named `$name` that stubs jump to, with the record in r11: the J2N
/// transition inline, with no hook call and no register saved. It keeps the same `rbp` frame (and
/// unwind info) as [`bind_common_routine!`] and the same record layout. Using only rax, r10 and r11
/// (no argument register), it finds the thread's context through the thread word, counts the call,
/// marks the thread native with the method innermost, copies the stack-passed arguments, calls the
/// real function, then restores the state and the outer innermost method and counts the call in
/// the method's row; the open native's record, context, row and outer method live in its frame.
/// A thread with no context, an undecided one, a method id past `max_methods`, one whose row
/// chunk does not exist yet or whose row counted no call yet leaves through `$fallback` (the
/// hooks' routine) with every register as it came. `$layout` is a [`super::SampledLayout`] constant.
macro_rules! bind_sampled_routine {
    ($name:literal, $fallback:literal, $layout:path) => {
        std::arch::global_asm!(
            $crate::arch::function_start!($name),
            $crate::arch::rbp_frame!(),
            $crate::arch::thread_context!("rax"),
            "cmp byte ptr [rax + {undecided}], 0",
            "jne 9f",
            "mov r10d, dword ptr [r11 + 24]",
            "cmp r10d, {max_methods}",
            "jae 9f",
            "shr r10d, {chunk_shift}",
            // Frame: record, context, method row, outer innermost method (aligned).
            "sub rsp, 32",
            "mov [rbp-8], r11",
            "mov [rbp-16], rax",
            "mov rax, qword ptr [rax + {chunks}]",
            "mov rax, qword ptr [rax + r10*8]",
            "test rax, rax",
            "jz 9f",
            "mov r10d, dword ptr [r11 + 24]",
            "and r10d, {row_mask}",
            "imul r10, r10, {row_size}",
            "add rax, r10",
            // A row's first call goes through the hooks, which mark it touched.
            "cmp qword ptr [rax + {row_calls}], 0",
            "je 9f",
            "mov [rbp-24], rax",
            "mov rax, [rbp-16]",
            "mov r10d, dword ptr [rax + {innermost}]",
            "mov [rbp-32], r10",
            "mov r10d, dword ptr [r11 + 24]",
            "add r10d, 1",
            "mov dword ptr [rax + {innermost}], r10d",
            "add qword ptr [rax + {native_calls}], 1",
            "mov byte ptr [rax + {in_native}], 1",
            $crate::arch::call_real_function!(),
            // rax, rdx and xmm0 hold the result; r10 and r11 are free.
            "mov r10, [rbp-16]",
            "mov byte ptr [r10 + {in_native}], 0",
            "mov r11, [rbp-32]",
            "mov dword ptr [r10 + {innermost}], r11d",
            "mov r11, [rbp-24]",
            "add qword ptr [r11 + {row_calls}], 1",
            ".cfi_remember_state",
            "leave",
            ".cfi_def_cfa rsp, 8",
            "ret",
            ".cfi_restore_state",
            // The hooks' routine, with r11 still the record and the caller's frame as it came.
            "9:",
            "leave",
            ".cfi_def_cfa rsp, 8",
            concat!("jmp ", $fallback),
            ".cfi_endproc",
            concat!(".size ", $name, ", .-", $name),
            undecided = const $layout.undecided,
            in_native = const $layout.in_native,
            native_calls = const $layout.native_calls,
            innermost = const $layout.innermost,
            chunks = const $layout.chunks,
            chunk_shift = const $layout.chunk_shift,
            row_mask = const (1usize << $layout.chunk_shift) - 1,
            row_size = const $layout.row_size,
            row_calls = const $layout.row_calls,
            max_methods = const $layout.max_methods,
        );
    };
}
pub(crate) use bind_sampled_routine;

/// The fast path of the thread's `tsc-hybrid` or `tsc-gated` clock as assembly text, for the
/// routines below: the reading in rax, or a jump to `$fail` when the clock is another one or an
/// exact read is due. `tsc-hybrid`: the TSC, then the page's lock against the base's and the
/// resample bound. `tsc-gated`: the TSC against the last read's and the gate, the switch marker,
/// the base and the resample bound, and the TSC stored as the last read's. `$ctx` holds the
/// context; `$scratch` (and its 32-bit name `$scratch32`) is clobbered, and so are rax and rdx.
macro_rules! tsc_clock_read {
    ($ctx:literal, $scratch:literal, $scratch32:literal, $fail:literal) => {
        concat!(
            "cmp byte ptr [",
            $ctx,
            " + {clock_tag}], {hybrid_tag}\n",
            "jne 11f\n",
            "rdtsc\n",
            "shl rdx, 32\n",
            "or rax, rdx\n",
            "mov ",
            $scratch,
            ", qword ptr [",
            $ctx,
            " + {page}]\n",
            "mov ",
            $scratch32,
            ", dword ptr [",
            $scratch,
            " + {lock}]\n",
            "cmp ",
            $scratch,
            ", qword ptr [",
            $ctx,
            " + {base_seq}]\n",
            "jne ",
            $fail,
            "\n",
            "sub rax, qword ptr [",
            $ctx,
            " + {base_tsc}]\n",
            "cmp rax, qword ptr [",
            $ctx,
            " + {resample_ticks}]\n",
            "jae ",
            $fail,
            "\n",
            "mul qword ptr [",
            $ctx,
            " + {mult}]\n",
            "shrd rax, rdx, 32\n",
            "add rax, qword ptr [",
            $ctx,
            " + {base_ns}]\n",
            "jmp 12f\n",
            "11:\n",
            "cmp byte ptr [",
            $ctx,
            " + {clock_tag}], {gated_tag}\n",
            "jne ",
            $fail,
            "\n",
            "rdtsc\n",
            "shl rdx, 32\n",
            "or rax, rdx\n",
            "mov ",
            $scratch,
            ", rax\n",
            "sub ",
            $scratch,
            ", qword ptr [",
            $ctx,
            " + {gated_last_tsc}]\n",
            "cmp ",
            $scratch,
            ", qword ptr [",
            $ctx,
            " + {gated_gate_ticks}]\n",
            "jae ",
            $fail,
            "\n",
            "mov ",
            $scratch,
            ", qword ptr [",
            $ctx,
            " + {gated_marker_slot}]\n",
            "mov ",
            $scratch,
            ", qword ptr [",
            $scratch,
            "]\n",
            "cmp ",
            $scratch,
            ", qword ptr [",
            $ctx,
            " + {gated_marker_value}]\n",
            "jne ",
            $fail,
            "\n",
            "cmp qword ptr [",
            $ctx,
            " + {gated_base_seq}], {gated_no_page}\n",
            "jne ",
            $fail,
            "\n",
            "mov ",
            $scratch,
            ", rax\n",
            "sub rax, qword ptr [",
            $ctx,
            " + {gated_base_tsc}]\n",
            "cmp rax, qword ptr [",
            $ctx,
            " + {gated_resample_ticks}]\n",
            "jae ",
            $fail,
            "\n",
            "mov qword ptr [",
            $ctx,
            " + {gated_last_tsc}], ",
            $scratch,
            "\n",
            "mul qword ptr [",
            $ctx,
            " + {gated_mult}]\n",
            "shrd rax, rdx, 32\n",
            "add rax, qword ptr [",
            $ctx,
            " + {gated_base_ns}]\n",
            "12:",
        )
    };
}
pub(crate) use tsc_clock_read;

/// `timing=exact`'s inline paths, in one block so that they share their operands (`$layout`, an
/// [`super::ExactLayout`] constant). Each checks every condition before its first write.
///
/// `$bind`, the routine that stubs jump to with the record in r11: the J2N transition, clock reads
/// included, with no hook call. It keeps the same `rbp` frame (and unwind info) as
/// [`bind_common_routine!`] and the same record layout. It handles a decided thread in bytecode
/// whose clock is `tsc-hybrid` and can be extrapolated, whose method row counted a call already
/// and whose frame stack has room, while `$stacks_enabled` (an `AtomicBool`) is off. At the begin
/// it reads the clock, charges bytecode (to the open native's nested time too), counts the call,
/// pushes the native's frame and marks the thread native; at the end, with its frame still
/// innermost, it reads the clock, charges native, pops the frame, counts the call's total and self
/// time in the row, writes the crossing into the latency list, charges the total to the frame
/// outside and marks the thread in bytecode. A begin that fails a check leaves through
/// `$bind_fallback` (the hooks' routine) with the argument registers as they came; an end calls
/// `$exit(method id, context)` and returns what the real function did.
///
/// `$begin` and `$end` (`extern "C" fn(function index)`), which the JNI wrappers call around an
/// upcall: the N2J transition, for a decided thread whose clock is `tsc-hybrid` and can be
/// extrapolated, and whose frame stack has room (begin) or holds this upcall's frame innermost
/// with the function's latency slot assigned and room in the latency list (end). The begin reads
/// the clock, charges native, counts the call, pushes the upcall's frame and marks the thread in
/// bytecode; the end reads the clock, charges bytecode, pops the frame, adds the upcall's Java
/// time to the function's row, writes the crossing into the latency list, charges the Java time
/// to the native outside as not its own and marks the thread native. A hook that fails a check
/// jumps to `$begin_fallback` or `$end_fallback` (the Rust hooks) with its argument as it came.
macro_rules! exact_routines {
    (
        bind: $bind:literal, bind_fallback: $bind_fallback:literal, exit: $exit:path,
        stacks_enabled: $stacks_enabled:path,
        begin: $begin:literal, end: $end:literal, begin_fallback: $begin_fallback:path,
        end_fallback: $end_fallback:path, layout: $layout:path $(,)?
    ) => {
        std::arch::global_asm!(
            $crate::arch::function_start!($bind),
            $crate::arch::rbp_frame!(),
            $crate::arch::thread_context!("rax"),
            "cmp byte ptr [rax + {undecided}], 0",
            "jne 9f",
            "cmp byte ptr [rax + {in_native}], 0",
            "jne 9f",
            "cmp byte ptr [rip + {stacks_enabled}], 0",
            "jne 9f",
            "mov r10d, dword ptr [r11 + 24]",
            "cmp r10d, {max_methods}",
            "jae 9f",
            "shr r10d, {chunk_shift}",
            // Frame: record, context, method row, rdx then the result's rax, rcx then its rdx,
            // the result's xmm0 (aligned).
            "sub rsp, 48",
            "mov [rbp-8], r11",
            "mov [rbp-16], rax",
            "mov [rbp-32], rdx",
            "mov [rbp-40], rcx",
            "mov rcx, qword ptr [rax + {chunks}]",
            "mov rcx, qword ptr [rcx + r10*8]",
            "test rcx, rcx",
            "jz 8f",
            "mov r10d, dword ptr [r11 + 24]",
            "and r10d, {row_mask}",
            "imul r10, r10, {row_size}",
            "add rcx, r10",
            // A row's first call goes through the hooks, which mark it touched.
            "cmp qword ptr [rcx + {row_calls}], 0",
            "je 8f",
            "mov [rbp-24], rcx",
            "mov r11, rax",
            "mov r10, qword ptr [r11 + {stack_len}]",
            "cmp r10, qword ptr [r11 + {stack_capacity}]",
            "jae 8f",
            $crate::arch::tsc_clock_read!("r11", "r10", "r10d", "8f"),
            // rax: now; rdx: the bytecode interval (a step back is the hooks' to charge).
            "mov rdx, rax",
            "sub rdx, qword ptr [r11 + {last}]",
            "jb 8f",
            "add qword ptr [r11 + {bytecode_ns}], rdx",
            "mov qword ptr [r11 + {last}], rax",
            // r10: the new frame; bytecode inside an open native is not its own time.
            "mov rcx, qword ptr [r11 + {stack_base}]",
            "mov r10, qword ptr [r11 + {stack_len}]",
            "imul r10, r10, {frame_size}",
            "add r10, rcx",
            "cmp r10, rcx",
            "je 4f",
            "cmp dword ptr [r10 - {frame_size} + {frame_kind}], {native_kind}",
            "jne 4f",
            "add qword ptr [r10 - {frame_size} + {frame_nested}], rdx",
            "4:",
            "add qword ptr [r11 + {native_calls}], 1",
            "add qword ptr [r11 + {stack_len}], 1",
            "mov dword ptr [r10 + {frame_kind}], {native_kind}",
            "mov ecx, dword ptr [r11 + {innermost}]",
            "mov dword ptr [r10 + {frame_outer}], ecx",
            "mov rcx, [rbp-8]",
            "mov ecx, dword ptr [rcx + 24]",
            "mov dword ptr [r10 + {frame_id}], ecx",
            "add ecx, 1",
            "mov dword ptr [r11 + {innermost}], ecx",
            "mov qword ptr [r10 + {frame_start}], rax",
            "mov qword ptr [r10 + {frame_nested}], 0",
            "mov byte ptr [r11 + {in_native}], 1",
            "mov rdx, [rbp-32]",
            "mov rcx, [rbp-40]",
            "mov r11, [rbp-8]",
            $crate::arch::call_real_function!(),
            // The result is in rax, rdx or xmm0; every other caller-saved register is free.
            "mov [rbp-32], rax",
            "mov [rbp-40], rdx",
            "mov r11, [rbp-16]",
            "cmp byte ptr [rip + {stacks_enabled}], 0",
            "jne 7f",
            "cmp byte ptr [r11 + {in_native}], 0",
            "je 7f",
            // rcx: the innermost frame, which must be this call's.
            "mov rcx, qword ptr [r11 + {stack_len}]",
            "test rcx, rcx",
            "jz 7f",
            "imul rcx, rcx, {frame_size}",
            "add rcx, qword ptr [r11 + {stack_base}]",
            "sub rcx, {frame_size}",
            "cmp dword ptr [rcx + {frame_kind}], {native_kind}",
            "jne 7f",
            "mov r10, [rbp-8]",
            "mov r10d, dword ptr [r10 + 24]",
            "cmp dword ptr [rcx + {frame_id}], r10d",
            "jne 7f",
            $crate::arch::tsc_clock_read!("r11", "r10", "r10d", "7f"),
            // rax: now; rdx: the native interval; r10: the call's total; rsi: its self time.
            "mov rdx, rax",
            "sub rdx, qword ptr [r11 + {last}]",
            "jb 7f",
            "mov r10, rax",
            "sub r10, qword ptr [rcx + {frame_start}]",
            "jb 7f",
            "xor edi, edi",
            "mov rsi, r10",
            "sub rsi, qword ptr [rcx + {frame_nested}]",
            "cmovb rsi, rdi",
            // rdi: the row; r8: its latency slot; r9: the waiting crossings.
            "mov rdi, [rbp-24]",
            "mov r8, qword ptr [rdi + {row_slot}]",
            "cmp r8, {no_slot}",
            "jbe 7f",
            "cmp rsi, {slot_ns}",
            "jae 7f",
            "mov r9, qword ptr [r11 + {waiting_len}]",
            "cmp r9, {last_entry}",
            "jae 7f",
            "add qword ptr [r11 + {native_ns}], rdx",
            "mov qword ptr [r11 + {last}], rax",
            "sub qword ptr [r11 + {stack_len}], 1",
            "mov edx, dword ptr [rcx + {frame_outer}]",
            "mov dword ptr [r11 + {innermost}], edx",
            "add qword ptr [rdi + {row_calls}], 1",
            "add qword ptr [rdi + {row_total}], r10",
            "add qword ptr [rdi + {row_self}], rsi",
            "imul rdx, r9, {entry_size}",
            "add rdx, r11",
            "mov qword ptr [rdx + {waiting} + {entry_slot}], r8",
            "mov qword ptr [rdx + {waiting} + {entry_ns}], rsi",
            "add r9, 1",
            "mov qword ptr [r11 + {waiting_len}], r9",
            // The call's total is not the own time of the native outside it.
            "cmp rcx, qword ptr [r11 + {stack_base}]",
            "je 6f",
            "cmp dword ptr [rcx - {frame_size} + {frame_kind}], {native_kind}",
            "jne 6f",
            "add qword ptr [rcx - {frame_size} + {frame_nested}], r10",
            "6:",
            "mov byte ptr [r11 + {in_native}], 0",
            "mov rax, [rbp-32]",
            "mov rdx, [rbp-40]",
            ".cfi_remember_state",
            "leave",
            ".cfi_def_cfa rsp, 8",
            "ret",
            ".cfi_restore_state",
            // The end through the hook, which reads the clock again.
            "7:",
            "movq qword ptr [rbp-48], xmm0",
            "mov rdi, [rbp-8]",
            "mov edi, dword ptr [rdi + 24]",
            "mov rsi, [rbp-16]",
            "call {exit}",
            "mov rax, [rbp-32]",
            "mov rdx, [rbp-40]",
            "movq xmm0, qword ptr [rbp-48]",
            ".cfi_remember_state",
            "leave",
            ".cfi_def_cfa rsp, 8",
            "ret",
            ".cfi_restore_state",
            // The hooks' routine, with r11 the record and the argument registers as they came.
            "8:",
            "mov rdx, [rbp-32]",
            "mov rcx, [rbp-40]",
            "mov r11, [rbp-8]",
            "9:",
            "leave",
            ".cfi_def_cfa rsp, 8",
            concat!("jmp ", $bind_fallback),
            ".cfi_endproc",
            concat!(".size ", $bind, ", .-", $bind),
            $crate::arch::function_start!($begin),
            $crate::arch::thread_context!("r11"),
            "cmp byte ptr [r11 + {undecided}], 0",
            "jne 9f",
            "cmp byte ptr [r11 + {in_native}], 0",
            "je 9f",
            "cmp edi, {jni_count}",
            "jae 9f",
            "mov r10, qword ptr [r11 + {stack_len}]",
            "cmp r10, qword ptr [r11 + {stack_capacity}]",
            "jae 9f",
            $crate::arch::tsc_clock_read!("r11", "rcx", "ecx", "9f"),
            // rax: now; rdx: the native interval.
            "mov rdx, rax",
            "sub rdx, qword ptr [r11 + {last}]",
            "jb 9f",
            "add qword ptr [r11 + {native_ns}], rdx",
            "mov qword ptr [r11 + {last}], rax",
            "add qword ptr [r11 + {jni_calls}], 1",
            "mov ecx, edi",
            "imul rcx, rcx, {jni_size}",
            "add rcx, qword ptr [r11 + {jni}]",
            "add qword ptr [rcx + {jni_row_calls}], 1",
            // The upcall's frame: only its kind, function and start are ever read.
            "imul r10, r10, {frame_size}",
            "add r10, qword ptr [r11 + {stack_base}]",
            "mov dword ptr [r10 + {frame_kind}], {upcall_kind}",
            "mov dword ptr [r10 + {frame_id}], edi",
            "mov qword ptr [r10 + {frame_start}], rax",
            "add qword ptr [r11 + {stack_len}], 1",
            "mov byte ptr [r11 + {in_native}], 0",
            "ret",
            "9:",
            "jmp {begin_fallback}",
            ".cfi_endproc",
            concat!(".size ", $begin, ", .-", $begin),
            $crate::arch::function_start!($end),
            $crate::arch::thread_context!("r11"),
            "cmp byte ptr [r11 + {undecided}], 0",
            "jne 9f",
            "cmp byte ptr [r11 + {in_native}], 0",
            "jne 9f",
            "cmp edi, {jni_count}",
            "jae 9f",
            // rcx: the innermost frame, which must be this upcall's.
            "mov rcx, qword ptr [r11 + {stack_len}]",
            "test rcx, rcx",
            "jz 9f",
            "imul rcx, rcx, {frame_size}",
            "add rcx, qword ptr [r11 + {stack_base}]",
            "sub rcx, {frame_size}",
            "cmp dword ptr [rcx + {frame_kind}], {upcall_kind}",
            "jne 9f",
            "cmp dword ptr [rcx + {frame_id}], edi",
            "jne 9f",
            // r8: the function's row; r9: its latency slot; rsi: the waiting crossings.
            "mov r8d, edi",
            "imul r8, r8, {jni_size}",
            "add r8, qword ptr [r11 + {jni}]",
            "mov r9, qword ptr [r8 + {jni_row_slot}]",
            "cmp r9, {no_slot}",
            "jbe 9f",
            "mov rsi, qword ptr [r11 + {waiting_len}]",
            "cmp rsi, {last_entry}",
            "jae 9f",
            $crate::arch::tsc_clock_read!("r11", "r10", "r10d", "9f"),
            // rax: now; rdx: the bytecode interval; r10: the upcall's Java time.
            "mov rdx, rax",
            "sub rdx, qword ptr [r11 + {last}]",
            "jb 9f",
            "mov r10, rax",
            "sub r10, qword ptr [rcx + {frame_start}]",
            "jb 9f",
            "cmp r10, {slot_ns}",
            "jae 9f",
            "add qword ptr [r11 + {bytecode_ns}], rdx",
            "mov qword ptr [r11 + {last}], rax",
            "sub qword ptr [r11 + {stack_len}], 1",
            "add qword ptr [r8 + {jni_row_java}], r10",
            "imul rdx, rsi, {entry_size}",
            "add rdx, r11",
            "mov qword ptr [rdx + {waiting} + {entry_slot}], r9",
            "mov qword ptr [rdx + {waiting} + {entry_ns}], r10",
            "add rsi, 1",
            "mov qword ptr [r11 + {waiting_len}], rsi",
            // The Java time is not the own time of the native that made the upcall.
            "cmp rcx, qword ptr [r11 + {stack_base}]",
            "je 6f",
            "cmp dword ptr [rcx - {frame_size} + {frame_kind}], {native_kind}",
            "jne 6f",
            "add qword ptr [rcx - {frame_size} + {frame_nested}], r10",
            "6:",
            "mov byte ptr [r11 + {in_native}], 1",
            "ret",
            "9:",
            "jmp {end_fallback}",
            ".cfi_endproc",
            concat!(".size ", $end, ", .-", $end),
            exit = sym $exit,
            stacks_enabled = sym $stacks_enabled,
            undecided = const $layout.rows.undecided,
            in_native = const $layout.rows.in_native,
            native_calls = const $layout.rows.native_calls,
            innermost = const $layout.rows.innermost,
            chunks = const $layout.rows.chunks,
            chunk_shift = const $layout.rows.chunk_shift,
            row_mask = const (1usize << $layout.rows.chunk_shift) - 1,
            row_size = const $layout.rows.row_size,
            row_calls = const $layout.rows.row_calls,
            max_methods = const $layout.rows.max_methods,
            bytecode_ns = const $layout.bytecode_ns,
            native_ns = const $layout.native_ns,
            last = const $layout.last,
            clock_tag = const $layout.clock_tag,
            hybrid_tag = const $layout.hybrid_tag,
            page = const $layout.page,
            lock = const $layout.lock,
            base_seq = const $layout.base_seq,
            base_tsc = const $layout.base_tsc,
            base_ns = const $layout.base_ns,
            resample_ticks = const $layout.resample_ticks,
            mult = const $layout.mult,
            gated_tag = const $layout.gated_tag,
            gated_last_tsc = const $layout.gated_last_tsc,
            gated_gate_ticks = const $layout.gated_gate_ticks,
            gated_marker_slot = const $layout.gated_marker_slot,
            gated_marker_value = const $layout.gated_marker_value,
            gated_base_seq = const $layout.gated_base_seq,
            gated_base_tsc = const $layout.gated_base_tsc,
            gated_base_ns = const $layout.gated_base_ns,
            gated_resample_ticks = const $layout.gated_resample_ticks,
            gated_mult = const $layout.gated_mult,
            gated_no_page = const $layout.gated_no_page,
            stack_base = const $layout.stack_base,
            stack_len = const $layout.stack_len,
            stack_capacity = const $layout.stack_capacity,
            frame_size = const $layout.frame_size,
            frame_kind = const $layout.frame_kind,
            frame_id = const $layout.frame_id,
            frame_outer = const $layout.frame_outer,
            frame_start = const $layout.frame_start,
            frame_nested = const $layout.frame_nested,
            native_kind = const $layout.native_kind,
            row_total = const $layout.row_total,
            row_self = const $layout.row_self,
            row_slot = const $layout.row_slot,
            no_slot = const $layout.no_slot,
            slot_ns = const $layout.slot_ns,
            waiting = const $layout.waiting,
            entry_size = const $layout.entry_size,
            entry_slot = const $layout.entry_slot,
            entry_ns = const $layout.entry_ns,
            waiting_len = const $layout.waiting_len,
            last_entry = const $layout.last_entry,
            begin_fallback = sym $begin_fallback,
            end_fallback = sym $end_fallback,
            upcall_kind = const $layout.upcall_kind,
            jni_calls = const $layout.jni_calls,
            jni = const $layout.jni,
            jni_count = const $layout.jni_count,
            jni_size = const $layout.jni_size,
            jni_row_calls = const $layout.jni_row_calls,
            jni_row_java = const $layout.jni_row_java,
            jni_row_slot = const $layout.jni_row_slot,
        );
    };
}
pub(crate) use exact_routines;

/// ELF relocation types of a GOT slot that holds a function's address: a PLT call's
/// (`R_X86_64_JUMP_SLOT`) and an address taken (`R_X86_64_GLOB_DAT`).
pub(crate) const RELOC_JUMP_SLOT: u32 = 7;
pub(crate) const RELOC_GLOB_DAT: u32 = 6;

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

/// The signature glibc registers its restartable-sequences area with (`RSEQ_SIG`): the kernel
/// wants it just before the abort address of any critical section a thread points the area at.
pub(crate) const RSEQ_SIGNATURE: u32 = 0x5305_3053;

/// The calling thread's thread pointer (the TCB's self pointer at `fs:0`), which glibc's
/// `__rseq_offset` counts from.
#[inline(always)]
pub(crate) fn thread_pointer() -> usize {
    let pointer: usize;
    // SAFETY: reads the calling thread's own TCB self pointer, which every thread has.
    unsafe {
        core::arch::asm!(
            "mov {p}, qword ptr fs:[0]",
            p = out(reg) pointer,
            options(nostack, readonly, preserves_flags),
        );
    }
    pointer
}

/// The calling thread's word (0 until [`set_thread_word`] on this thread).
#[inline(always)]
pub(crate) fn thread_word() -> usize {
    jni_wrappers::initial_exec_load!("nativeacct_thread_word")
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stubs_point_at_their_records() {
        let mut stub = [0u8; STUB_SIZE];
        write_stub(&mut stub, 0x1234 + 7);
        assert_eq!(
            &stub[..10],
            &[0x4C, 0x8D, 0x1D, 0x34, 0x12, 0, 0, 0x41, 0xFF, 0x23]
        );
        assert!(stub[10..].iter().all(|&b| b == 0xCC));
    }
}
