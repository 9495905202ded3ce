//! Per-method trampolines for bound natives, one design on every architecture; the machine code is
//! in `crate::arch` (x86-64: `lea r11, [rip + record]; jmp [r11]`; arm64: `adr x16, record;
//! ldr x17, [x16]; br x17`).
//!
//! A trampoline is a 16-byte stub that hands its record to the address in the record's first word:
//! one shared routine (`nativeacct_bind_common`). The record also holds the real C function, the
//! bytes of stack-passed arguments and the method's id. The shared routine keeps a standard frame
//! (`rbp` on x86-64, a frame record x29/x30 on arm64), saves the argument registers, calls `transitions::bind_enter` with the
//! method's id (it returns the thread's context), copies the stack-passed arguments, calls the real
//! function with every argument untouched, calls `transitions::bind_exit` with the id and that
//! context, and returns the real function's result.
//!
//! Stubs are written once per chunk, while the chunk's code pages are still only writable, the
//! instruction cache is brought up to date, and the pages are made read+execute for good: code is
//! never writable and executable at once, and no page flips back.
//! Records live in separate read+write pages of the same mapping, at a fixed distance from their
//! stubs, so handing out a stub only writes data.

use crate::arch::{self, STUB_SIZE};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};

/// Stubs (and records) per chunk; one chunk is 16 KiB of code and 32 KiB of records.
const STUBS_PER_CHUNK: usize = 1024;
const CODE_BYTES: usize = STUBS_PER_CHUNK * STUB_SIZE;
const RECORD_SIZE: usize = std::mem::size_of::<Record>();
const CHUNK_BYTES: usize = CODE_BYTES + STUBS_PER_CHUNK * RECORD_SIZE;

/// Stack-passed argument bytes copied while a method's descriptor is not known yet: 16 slots. Every
/// native is described at bind time in the start and live phases (see `bind`), so this only covers
/// calls that could come before; reading past the real arguments only reads the caller's frame.
pub(crate) const UNKNOWN_STACK_BYTES: usize = 16 * 8;

/// What the shared routine reads for one bound method. The offsets are part of the assembly
/// (`bind_common_routine!` in `crate::arch`).
#[repr(C)]
pub(crate) struct Record {
    /// +0: where the stub jumps: `nativeacct_bind_common`, or the real C function once the method
    /// is left alone (see [`Record::pass_through`]).
    common: AtomicUsize,
    /// +8: the real C function.
    target: AtomicUsize,
    /// +16: bytes of stack-passed arguments to copy, a multiple of 16.
    stack_bytes: AtomicUsize,
    /// +24: the agent's method id.
    method: AtomicU32,
    /// +28: set by [`Record::pass_through`] (not read by the assembly).
    passes_through: AtomicBool,
    _pad: [u8; 3],
}

const _: () = assert!(RECORD_SIZE == 32);

impl Record {
    #[cfg(test)]
    fn method(&self) -> u32 {
        self.method.load(Ordering::Relaxed)
    }

    pub(crate) fn set_target(&self, address: usize) {
        self.target.store(address, Ordering::Release);
        if self.passes_through.load(Ordering::Acquire) {
            self.common.store(address, Ordering::Release);
        }
    }

    /// From now on the stub jumps straight to the real function: nothing is counted. For a method
    /// bound before it could be named, which the options then exclude. An aligned 8-byte store, so a
    /// thread jumping through the record sees the old or the new address, never a mix.
    pub(crate) fn pass_through(&self) {
        self.passes_through.store(true, Ordering::Release);
        self.common
            .store(self.target.load(Ordering::Acquire), Ordering::Release);
    }

    /// Set the bytes of stack-passed arguments from the method's descriptor.
    pub(crate) fn set_stack_bytes(&self, bytes: usize) {
        self.stack_bytes.store(bytes, Ordering::Release);
    }

    #[cfg(test)]
    fn stack_bytes(&self) -> usize {
        self.stack_bytes.load(Ordering::Relaxed)
    }
}

/// Bytes of stack-passed arguments of a JNI native with this descriptor, rounded up to 16 so the
/// call keeps the stack pointer aligned. `None` for a malformed descriptor.
pub(crate) fn stack_bytes_for(descriptor: &str) -> Option<usize> {
    stack_bytes_with(
        descriptor,
        arch::INTEGER_ARGUMENT_REGISTERS,
        arch::VECTOR_ARGUMENT_REGISTERS,
    )
}

/// [`stack_bytes_for`] with that many integer and vector argument registers. The `JNIEnv*` and the
/// class or receiver take two integer registers; every stack argument takes an 8-byte slot (System V
/// and AAPCS64 on Linux alike), and neither convention back-fills registers.
fn stack_bytes_with(
    descriptor: &str,
    integer_registers: usize,
    vector_registers: usize,
) -> Option<usize> {
    let params = descriptor.strip_prefix('(')?.split(')').next()?;
    let (mut integer, mut vector) = (2usize, 0usize);
    let mut chars = params.chars();
    while let Some(c) = chars.next() {
        match c {
            'F' | 'D' => vector += 1,
            'Z' | 'B' | 'C' | 'S' | 'I' | 'J' => integer += 1,
            'L' => {
                chars.by_ref().find(|&c| c == ';')?;
                integer += 1;
            }
            '[' => {
                let mut element = chars.next()?;
                while element == '[' {
                    element = chars.next()?;
                }
                if element == 'L' {
                    chars.by_ref().find(|&c| c == ';')?;
                }
                integer += 1;
            }
            _ => return None,
        }
    }
    let slots = integer.saturating_sub(integer_registers) + vector.saturating_sub(vector_registers);
    Some((slots * 8).div_ceil(16) * 16)
}

// The shared routine, in the architecture's file; it calls these two hooks. `timing=sampled` has
// its own copy calling its own hooks, whose code reads no clock.
crate::arch::bind_common_routine!(
    "nativeacct_bind_common",
    crate::transitions::bind_enter,
    crate::transitions::bind_exit
);
crate::arch::bind_common_routine!(
    "nativeacct_bind_common_sampled",
    crate::transitions::bind_enter_sampled,
    crate::transitions::bind_exit_sampled
);

// `timing=sampled`'s stubs jump here: the transition inline, with the hooks' routine above as its
// fallback for the cases it leaves to them.
crate::arch::bind_sampled_routine!(
    "nativeacct_bind_sampled",
    "nativeacct_bind_common_sampled",
    crate::context::SAMPLED_LAYOUT
);

extern "C" {
    /// The shared routines above. Never called from Rust; only their addresses are used.
    fn nativeacct_bind_common();
    fn nativeacct_bind_sampled();
    fn nativeacct_bind_exact();
}

/// The shared routine for trampolines made now.
fn common_routine() -> usize {
    if crate::transitions::sampled_hooks() {
        nativeacct_bind_sampled as *const () as usize
    } else if crate::transitions::exact_inline() {
        nativeacct_bind_exact as *const () as usize
    } else {
        nativeacct_bind_common as *const () as usize
    }
}

/// Benchmark entry for `bench/` (`bench_crossings bound`): a trampoline of the `timing=` in force
/// for method `method`, calling `target` (a JNI native with no stack-passed arguments). Kept for
/// the rest of the process, like every trampoline.
pub fn bench_trampoline(method: u32, target: usize) -> Option<usize> {
    let trampolines: &'static mut Trampolines = Box::leak(Box::default());
    trampolines.make(method, target, 0).map(|(stub, _)| stub)
}

/// A chunk of stubs and their records, in one mapping that is never unmapped (the VM may call a
/// stub at any time until the process ends).
struct Chunk {
    base: usize,
    used: usize,
}

/// Hands out trampolines. Callers serialize (the bind registry's lock).
#[derive(Default)]
pub(crate) struct Trampolines {
    chunks: Vec<Chunk>,
}

impl Trampolines {
    /// A fresh trampoline for `method`, calling `target`, copying `stack_bytes` of stack arguments.
    /// Returns the stub's address and its record, or None if no executable memory could be had.
    pub(crate) fn make(
        &mut self,
        method: u32,
        target: usize,
        stack_bytes: usize,
    ) -> Option<(usize, &'static Record)> {
        if self.chunks.last().is_none_or(|c| c.used == STUBS_PER_CHUNK) {
            self.chunks.push(Chunk::map()?);
        }
        let chunk = self.chunks.last_mut()?;
        let index = chunk.used;
        chunk.used += 1;
        let record_ptr = (chunk.base + CODE_BYTES + index * RECORD_SIZE) as *mut Record;
        // SAFETY: the record slot lies in the chunk's read+write pages, is handed out once, and no stub
        // can reach it before its address is returned below.
        unsafe {
            record_ptr.write(Record {
                common: AtomicUsize::new(common_routine()),
                target: AtomicUsize::new(target),
                stack_bytes: AtomicUsize::new(stack_bytes),
                method: AtomicU32::new(method),
                passes_through: AtomicBool::new(false),
                _pad: [0; 3],
            })
        };
        // SAFETY: the mapping is never unmapped, so the record lives for the rest of the process.
        let record: &'static Record = unsafe { &*record_ptr };
        Some((chunk.base + index * STUB_SIZE, record))
    }

    /// Whether `address` is one of our stubs (a re-bind to a stub must not be wrapped again).
    pub(crate) fn owns(&self, address: usize) -> bool {
        self.chunks
            .iter()
            .any(|c| (c.base..c.base + CODE_BYTES).contains(&address))
    }
}

impl Chunk {
    /// Map a chunk, write all its stubs, and make the code pages read+execute.
    fn map() -> Option<Chunk> {
        // SAFETY: an anonymous private mapping with no address hint; the result is checked.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                CHUNK_BYTES,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return None;
        }
        // SAFETY: the first CODE_BYTES of the fresh read+write mapping belong to us alone.
        let code = unsafe { std::slice::from_raw_parts_mut(base as *mut u8, CODE_BYTES) };
        for (index, stub) in code.chunks_exact_mut(STUB_SIZE).enumerate() {
            let record_offset = CODE_BYTES + index * RECORD_SIZE;
            arch::write_stub(stub, record_offset - index * STUB_SIZE);
        }
        arch::flush_instruction_cache(code);
        // SAFETY: the code pages of our own mapping; from now on they are never written again.
        let rc = unsafe { libc::mprotect(base, CODE_BYTES, libc::PROT_READ | libc::PROT_EXEC) };
        if rc != 0 {
            // SAFETY: our own mapping, not yet handed out.
            unsafe { libc::munmap(base, CHUNK_BYTES) };
            return None;
        }
        crate::sampler::note_agent_pages(base as usize, base as usize + CODE_BYTES);
        Some(Chunk {
            base: base as usize,
            used: 0,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// System V AMD64 (6 integer, 8 vector registers).
    fn system_v(descriptor: &str) -> Option<usize> {
        stack_bytes_with(descriptor, 6, 8)
    }

    /// AAPCS64 (8 integer, 8 vector registers).
    fn aapcs64(descriptor: &str) -> Option<usize> {
        stack_bytes_with(descriptor, 8, 8)
    }

    #[test]
    fn stack_bytes_follow_the_calling_convention() {
        // env, class + 4 ints: all in registers.
        assert_eq!(system_v("(IIII)V"), Some(0));
        assert_eq!(aapcs64("(IIII)V"), Some(0));
        // env, class + 5 ints: one on the stack on x86-64, rounded to 16; x5–x7 still free on arm64.
        assert_eq!(system_v("(IIIII)V"), Some(16));
        assert_eq!(aapcs64("(IIIII)V"), Some(0));
        assert_eq!(aapcs64("(IIIIIII)V"), Some(16));
        // Deflater.deflateBytesBytes(J[BII[BIIII)J: 11 integer args, 5 (or 3) on the stack.
        assert_eq!(system_v("(J[BII[BIIII)J"), Some(48));
        assert_eq!(aapcs64("(J[BII[BIIII)J"), Some(32));
        // Eight doubles fit in xmm0-7 / v0-v7; the ninth goes on the stack.
        for abi in [system_v, aapcs64] {
            assert_eq!(abi("(DDDDDDDD)D"), Some(0));
            assert_eq!(abi("(DDDDDDDDD)D"), Some(16));
            assert_eq!(abi("([[Ljava/lang/String;Ljava/lang/Object;II)V"), Some(0));
            assert_eq!(abi("(Q)V"), None);
            assert_eq!(abi("(Ljava/lang"), None);
        }
        // 255 int slots: 251 (or 249) on the stack.
        let wide = format!("({})V", "I".repeat(255));
        assert_eq!(system_v(&wide), Some(251_usize.div_ceil(2) * 16));
        assert_eq!(aapcs64(&wide), Some(249_usize.div_ceil(2) * 16));
        // This build's convention is one of the two.
        assert!([system_v(&wide), aapcs64(&wide)].contains(&stack_bytes_for(&wide)));
    }

    /// The stub of [`inner_native`], for [`outer_native`] to call.
    static INNER_STUB: AtomicUsize = AtomicUsize::new(0);
    /// The JNI function index `outer_native`'s upcall is counted under.
    const UPCALL: u32 = 5;

    extern "C" fn inner_native(_env: usize, _class: usize) -> u64 {
        // Some work of its own, so that its time is not all in the clock's rounding.
        (0..200u64).fold(1, |acc, i| std::hint::black_box(acc.wrapping_mul(31) ^ i))
    }

    type Native = extern "C" fn(usize, usize) -> u64;

    /// A native that calls back into "Java" (the N2J hooks, as a JNI wrapper would), where the
    /// "Java" code calls another native through its stub: a JNA callback's shape.
    extern "C" fn outer_native(env: usize, class: usize) -> u64 {
        let hooks = crate::transitions::jni_hooks();
        (hooks.begin)(UPCALL);
        // SAFETY: the stub forwards to `inner_native`, whose signature this is.
        let inner: Native = unsafe { std::mem::transmute(INNER_STUB.load(Ordering::Relaxed)) };
        let result = inner(env, class);
        (hooks.end)(UPCALL);
        result
    }

    #[test]
    fn the_exact_paths_time_calls_inline_as_the_hooks_would_with_tsc_hybrid() {
        exact_paths_time_calls_as_the_hooks_would(crate::clock::ClockKind::TscHybrid);
    }

    #[test]
    fn the_exact_paths_time_calls_inline_as_the_hooks_would_with_tsc_gated() {
        exact_paths_time_calls_as_the_hooks_would(crate::clock::ClockKind::TscGated);
    }

    /// Native calls, and an upcall with a native inside it, through real stubs and the JNI hooks
    /// of `timing=exact` on a context with clock `kind`: every count, charge, nested time and
    /// latency crossing as the hooks make them, and most of them made inline.
    fn exact_paths_time_calls_as_the_hooks_would(kind: crate::clock::ClockKind) {
        if crate::transitions::sampled_hooks() {
            return;
        }
        // The TSC's own rate, so that an exact read steps back only by what the thread spent off
        // the CPU (see the assertions below).
        let Some(calibration) = crate::clock::tsc_calibration() else {
            return;
        };
        let choice = crate::clock::ClockChoice {
            kind,
            reason: String::new(),
            tsc_hz: Some(calibration.hz),
        };
        let ctx = crate::context::test_context(&choice);
        let (opened, _, _) = ctx.last_and_open_frames();
        let mut trampolines = Trampolines::default();
        let (outer, inner, weighed) = (11, 12, 13);
        let (outer_stub, _) = trampolines
            .make(outer, outer_native as *const () as usize, 0)
            .expect("executable memory");
        let (inner_stub, _) = trampolines
            .make(inner, inner_native as *const () as usize, 0)
            .expect("executable memory");
        let stack_bytes = stack_bytes_for("(JJJJJJJIDDDDDDDDFD)D").expect("well-formed");
        let (weigh_stub, _) = trampolines
            .make(weighed, weigh as *const () as usize, stack_bytes)
            .expect("executable memory");
        INNER_STUB.store(inner_stub, Ordering::Relaxed);
        // SAFETY: each stub forwards to the function whose signature it is given.
        let (outer_call, inner_call, weigh_call) = unsafe {
            (
                std::mem::transmute::<usize, Native>(outer_stub),
                std::mem::transmute::<usize, Native>(inner_stub),
                std::mem::transmute::<usize, Weigh>(weigh_stub),
            )
        };
        let weigh_args = |f: Weigh| {
            f(
                1, -2, 3, -4, 5, -6, 7, 8, -9, -10, 0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.25,
                9.125,
            )
        };
        let weighed_directly = weigh_args(weigh);
        const ROUNDS: u64 = 20_000;
        let mut cpu = crate::clock::ThreadClock::open(&crate::clock::ClockChoice {
            kind: crate::clock::ClockKind::ThreadCputime,
            reason: String::new(),
            tsc_hz: None,
        });
        let (cpu_start, wall_start) = (cpu.read(), std::time::Instant::now());
        crate::context::set_test_current(Some(&ctx));
        let hooks_before = crate::transitions::HOOK_BEGINS.with(|b| b.get());
        let mut results = 0u64;
        for round in 0..ROUNDS {
            results = results.wrapping_add(inner_call(0, 0));
            results = results.wrapping_add(outer_call(0, 0));
            if round % 1000 == 0 {
                assert_eq!(weigh_args(weigh_call).to_bits(), weighed_directly.to_bits());
            }
        }
        let hook_begins = crate::transitions::HOOK_BEGINS.with(|b| b.get());
        let hook_begins = (
            hook_begins.0 - hooks_before.0,
            hook_begins.1 - hooks_before.1,
        );
        crate::context::set_test_current(None);
        let off_cpu =
            (wall_start.elapsed().as_nanos() as u64).saturating_sub(cpu.read() - cpu_start);
        assert_eq!(results, 2 * ROUNDS * inner_native(0, 0));

        // Every call counted, every frame closed, every interval charged once.
        let calls = 3 * ROUNDS + ROUNDS / 1000;
        let (native_hooks, upcall_hooks) = hook_begins;
        if crate::transitions::exact_inline() {
            assert!(
                native_hooks < calls / 2 && upcall_hooks < ROUNDS / 2,
                "most crossings run inline ({native_hooks} of {calls} native calls and \
                 {upcall_hooks} of {ROUNDS} upcalls took the hooks)"
            );
        } else {
            assert_eq!(hook_begins, (calls, ROUNDS));
        }
        let (last, open, in_native) = ctx.last_and_open_frames();
        assert_eq!((open, in_native), (0, false));
        assert_eq!(ctx.native_calls.load(Ordering::Relaxed), calls);
        // Each interval is charged once: the charges add up to the clock's movement, but for a
        // step back (see below) taken from a counter that held less.
        let charged =
            ctx.bytecode_ns.load(Ordering::Relaxed) + ctx.native_ns.load(Ordering::Relaxed);
        assert!(
            charged.abs_diff(last - opened) <= off_cpu + 1_000,
            "the intervals charged ({charged} ns) add up to the clock's movement ({} ns)",
            last - opened
        );
        let mut rows = std::collections::HashMap::new();
        ctx.methods.for_each(|id, row| {
            let ns = |c: &std::sync::atomic::AtomicU64| c.load(Ordering::Relaxed);
            rows.insert(id, (ns(&row.calls), ns(&row.total_ns), ns(&row.self_ns)));
        });
        let (outer_calls, outer_total, outer_self) = rows[&outer];
        let (inner_calls, inner_total, inner_self) = rows[&inner];
        assert_eq!((outer_calls, inner_calls), (ROUNDS, 2 * ROUNDS));
        assert_eq!(rows[&weighed].0, ROUNDS / 1000);
        assert_eq!(inner_self, inner_total);
        use crate::histograms::SampleKind::{NativeSelf, UpcallJava};
        assert_eq!(ctx.latency.crossings_of(NativeSelf, outer), ROUNDS);
        assert_eq!(ctx.latency.crossings_of(NativeSelf, inner), 2 * ROUNDS);
        assert_eq!(ctx.latency.crossings_of(UpcallJava, UPCALL), ROUNDS);
        // The upcall's Java time, the inner calls' included, is not the outer native's own.
        let upcall = &ctx.jni[UPCALL as usize];
        assert_eq!(upcall.calls.load(Ordering::Relaxed), ROUNDS);
        let java = upcall.java_ns.load(Ordering::Relaxed);
        // A call's durations are differences of its readings, floored at 0: when an exact read
        // inside it paid back time the thread spent off the CPU (preempted, or its vCPU stolen)
        // that the TSC had counted, its upcall can come out longer than the call. Such steps
        // back add up to at most that time off the CPU; with none, the two sides are equal.
        assert!(outer_self + java >= outer_total);
        assert!(
            outer_self + java - outer_total <= off_cpu + 1_000,
            "outer self {outer_self} + upcall {java} against total {outer_total} ns, {off_cpu} ns \
             off the CPU"
        );
        assert!(outer_total + inner_total <= ctx.native_ns.load(Ordering::Relaxed) + java);
    }

    /// Whether a backtrace taken inside the real function reached its caller: unwinding walked
    /// through the trampoline's frame.
    static UNWOUND_THROUGH: AtomicBool = AtomicBool::new(false);

    /// Ten integer and ten floating-point arguments: on x86-64 four integer and two floating-point
    /// ones go on the stack, on arm64 two of each.
    extern "C" fn weigh(
        a: i64,
        b: i64,
        c: i64,
        d: i64,
        e: i64,
        f: i64,
        g: i64,
        h: i64,
        i: i64,
        j: i32,
        x0: f64,
        x1: f64,
        x2: f64,
        x3: f64,
        x4: f64,
        x5: f64,
        x6: f64,
        x7: f64,
        x8: f32,
        x9: f64,
    ) -> f64 {
        let backtrace = std::backtrace::Backtrace::force_capture().to_string();
        if backtrace.contains("a_trampoline_passes_every_argument_and_the_result_through") {
            UNWOUND_THROUGH.store(true, Ordering::Relaxed);
        }
        let ints = [a, b, c, d, e, f, g, h, i, i64::from(j)];
        let floats = [x0, x1, x2, x3, x4, x5, x6, x7, f64::from(x8), x9];
        let mut sum = 0.0;
        for (i, v) in ints.iter().enumerate() {
            sum += (i + 1) as f64 * *v as f64;
        }
        for (i, v) in floats.iter().enumerate() {
            sum += (i + 11) as f64 * v;
        }
        sum
    }

    type Weigh = extern "C" fn(
        i64,
        i64,
        i64,
        i64,
        i64,
        i64,
        i64,
        i64,
        i64,
        i32,
        f64,
        f64,
        f64,
        f64,
        f64,
        f64,
        f64,
        f64,
        f32,
        f64,
    ) -> f64;

    #[test]
    fn a_trampoline_passes_every_argument_and_the_result_through() {
        // As a JNI native: env and class, then eight more integer arguments, then the floats.
        let stack_bytes = stack_bytes_for("(JJJJJJJIDDDDDDDDFD)D").expect("well-formed");
        assert_eq!(
            stack_bytes,
            if arch::INTEGER_ARGUMENT_REGISTERS == 6 {
                48
            } else {
                32
            }
        );
        let mut trampolines = Trampolines::default();
        let (stub, record) = trampolines
            .make(7, weigh as *const () as usize, stack_bytes)
            .expect("executable memory");
        assert_eq!(record.method(), 7);
        assert_eq!(record.stack_bytes(), stack_bytes);
        assert!(trampolines.owns(stub));
        // SAFETY: the stub forwards to `weigh`, whose signature this is.
        let through: Weigh = unsafe { std::mem::transmute::<usize, Weigh>(stub) };
        let args = (1, -2, 3, -4, 5, -6, 7, i64::MAX / 3, -9, -10);
        let call = |f: Weigh| {
            f(
                args.0, args.1, args.2, args.3, args.4, args.5, args.6, args.7, args.8, args.9,
                0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.25, 9.125,
            )
        };
        let direct = call(weigh);
        UNWOUND_THROUGH.store(false, Ordering::Relaxed);
        let via = call(through);
        assert_eq!(direct.to_bits(), via.to_bits());
        assert!(
            UNWOUND_THROUGH.load(Ordering::Relaxed),
            "a backtrace inside the real function reaches the test through the trampoline"
        );
        // A re-target takes effect for the next call.
        record.set_target(weigh as *const () as usize);
        assert_eq!(via.to_bits(), call(through).to_bits());
        // A pass-through stub jumps straight to the real function.
        record.pass_through();
        assert_eq!(via.to_bits(), call(through).to_bits());
    }
}
