//! The four transitions (J2N and N2J, begin and end), as the J2N helper natives, the bind trampolines and the JNI wrappers call them.

use super::*;

/// A native method's call begins (`method` from [`crate::methods::id_for`]).
#[inline]
pub fn j2n_begin(method: i32) {
    if method == LINK_PROBE_ID {
        return;
    }
    if let Some(ctx) = current_or_attach(State::Bytecode) {
        ctx.j2n_begin(method as u32, Timing::OfContext);
    }
}

/// A native method's call ends.
#[inline]
pub fn j2n_end(method: i32) {
    if method == LINK_PROBE_ID {
        return;
    }
    if let Some(ctx) = current_or_attach(State::Native) {
        ctx.j2n_end(method as u32, Timing::OfContext);
    }
}

/// J2N begin from a bind trampoline (no link probe to filter). Returns the context it charged, for
/// [`j2n_end_bound`] (null if there is none).
/// `timing`: see [`Timing`].
#[inline(always)]
pub(crate) fn j2n_begin_bound(method: u32, timing: Timing) -> *const ThreadContext {
    match current_or_attach(State::Bytecode) {
        Some(ctx) => {
            ctx.j2n_begin(method, timing);
            ctx
        }
        None => std::ptr::null(),
    }
}

/// J2N end from a bind trampoline, with the context its begin returned on this thread.
///
/// # Safety
/// `current` is null or what [`j2n_begin_bound`] returned on this thread for the same native call.
#[inline(always)]
pub(crate) unsafe fn j2n_end_bound(method: u32, current: *const ThreadContext, timing: Timing) {
    let ctx = if current.is_null() {
        current_or_attach(State::Native)
    } else {
        // SAFETY: the caller's contract: this thread's context; a context is only retired when its
        // thread ends, which cannot happen inside a native call.
        Some(unsafe { &*current })
    };
    if let Some(ctx) = ctx {
        ctx.j2n_end(method, timing);
    }
}

#[inline(always)]
pub(crate) fn n2j_begin(function: u32, timing: Timing) {
    if let Some(ctx) = current_or_attach(State::Native) {
        ctx.n2j_begin(function, timing);
    }
}

#[inline(always)]
pub(crate) fn n2j_end(function: u32, timing: Timing) {
    if let Some(ctx) = current_or_attach(State::Bytecode) {
        ctx.n2j_end(function, timing);
    }
}

/// Where `timing=sampled`'s bind routine finds what its J2N transition touches (see
/// [`crate::arch::SampledLayout`]): it does the work of [`ThreadContext::j2n_begin`] and `j2n_end`
/// with [`Timing::Sampled`] inline, for a decided thread whose method row exists, and leaves every
/// other case to the hooks. The open native is kept in the routine's own frame instead of the
/// context's stack, whose frames no sampled transition reads but to match its own begin and end.
pub(crate) const SAMPLED_LAYOUT: crate::arch::SampledLayout = {
    use std::mem::{offset_of, size_of};
    assert!(CHUNK.is_power_of_two());
    crate::arch::SampledLayout {
        undecided: offset_of!(ThreadContext, owned) + offset_of!(Owned, undecided),
        in_native: offset_of!(ThreadContext, in_native),
        native_calls: offset_of!(ThreadContext, native_calls),
        innermost: offset_of!(ThreadContext, probe) + offset_of!(crate::sampler::Probe, innermost),
        chunks: offset_of!(ThreadContext, methods) + offset_of!(MethodTable, chunks),
        chunk_shift: CHUNK.trailing_zeros() as usize,
        row_size: size_of::<MethodStat>(),
        row_calls: offset_of!(MethodStat, calls),
        max_methods: MAX_METHODS,
    }
};

/// Where `timing=exact`'s inline paths find what their transitions touch (see
/// [`crate::arch::ExactLayout`]): the bind routine does the work of [`ThreadContext::j2n_begin`]
/// and `j2n_end`, the upcall hooks that of `n2j_begin` and `n2j_end`, with [`Timing::Exact`],
/// for a decided thread whose `tsc-hybrid` or `tsc-gated` clock can be extrapolated; every other
/// case goes to the Rust hooks.
pub(crate) const EXACT_LAYOUT: crate::arch::ExactLayout = {
    use crate::clock::{GATED_FIELDS as GATED, HYBRID_FIELDS as CLOCK};
    use crate::histograms::WAITING_FIELDS as LATENCY;
    use std::mem::{offset_of, size_of};
    let owned = offset_of!(ThreadContext, owned);
    let clock = owned + offset_of!(Owned, clock);
    let stack = owned + offset_of!(Owned, stack);
    let latency = offset_of!(ThreadContext, latency);
    crate::arch::ExactLayout {
        rows: SAMPLED_LAYOUT,
        bytecode_ns: offset_of!(ThreadContext, bytecode_ns),
        native_ns: offset_of!(ThreadContext, native_ns),
        last: offset_of!(ThreadContext, last),
        clock_tag: clock + CLOCK.tag,
        hybrid_tag: CLOCK.tag_value,
        page: clock + CLOCK.page,
        lock: CLOCK.lock,
        base_seq: clock + CLOCK.arithmetic.base_seq,
        base_tsc: clock + CLOCK.arithmetic.base_tsc,
        base_ns: clock + CLOCK.arithmetic.base_ns,
        resample_ticks: clock + CLOCK.arithmetic.resample_ticks,
        mult: clock + CLOCK.arithmetic.mult,
        gated_tag: crate::clock::GATED_TAG,
        gated_last_tsc: clock + GATED.last_tsc,
        gated_gate_ticks: clock + GATED.gate_ticks,
        gated_marker_slot: clock + GATED.marker_slot,
        gated_marker_value: clock + GATED.marker_value,
        gated_base_seq: clock + GATED.arithmetic.base_seq,
        gated_base_tsc: clock + GATED.arithmetic.base_tsc,
        gated_base_ns: clock + GATED.arithmetic.base_ns,
        gated_resample_ticks: clock + GATED.arithmetic.resample_ticks,
        gated_mult: clock + GATED.arithmetic.mult,
        gated_no_page: GATED.no_page,
        stack_base: stack + FrameStack::BASE,
        stack_len: stack + FrameStack::LEN,
        stack_capacity: stack + FrameStack::CAPACITY,
        frame_size: size_of::<Frame>(),
        frame_kind: offset_of!(Frame, kind),
        frame_id: offset_of!(Frame, id),
        frame_outer: offset_of!(Frame, outer),
        frame_start: offset_of!(Frame, start),
        frame_nested: offset_of!(Frame, nested),
        native_kind: super::frames::NATIVE,
        row_total: offset_of!(MethodStat, total_ns),
        row_self: offset_of!(MethodStat, self_ns),
        row_slot: offset_of!(MethodStat, latency) + LATENCY.slot_ref,
        no_slot: LATENCY.no_slot,
        slot_ns: LATENCY.slot_ns,
        waiting: latency + LATENCY.waiting,
        entry_size: LATENCY.entry_size,
        entry_slot: LATENCY.entry_slot,
        entry_ns: LATENCY.entry_ns,
        waiting_len: latency + LATENCY.waiting_len,
        last_entry: LATENCY.last_entry,
        upcall_kind: super::frames::UPCALL,
        jni_calls: offset_of!(ThreadContext, jni_calls),
        jni: offset_of!(ThreadContext, jni),
        jni_count: JNI_FUNCTION_COUNT,
        jni_size: size_of::<JniStat>(),
        jni_row_calls: offset_of!(JniStat, calls),
        jni_row_java: offset_of!(JniStat, java_ns),
        jni_row_slot: offset_of!(JniStat, latency) + LATENCY.slot_ref,
    }
};

/// N2J begin of `timing=sampled`'s JNI wrapper hooks (see `ThreadContext::n2j_begin_sampled`).
#[inline(always)]
pub(crate) fn n2j_begin_sampled(function: u32) {
    if let Some(ctx) = current_or_attach(State::Native) {
        ctx.n2j_begin_sampled(function);
    }
}

/// N2J end of `timing=sampled`'s JNI wrapper hooks.
#[inline(always)]
pub(crate) fn n2j_end_sampled() {
    if let Some(ctx) = current_or_attach(State::Bytecode) {
        ctx.n2j_end_sampled();
    }
}

/// Only the clock read of a transition, for the benchmark floor (see `transitions::floor`).
#[cfg(feature = "bench-floor")]
pub(crate) fn read_clock_only() {
    if let Some(ctx) = current_or_attach(State::Bytecode) {
        // SAFETY: reached only through `current_or_attach`, on the owning thread.
        std::hint::black_box(unsafe { ctx.owned() }.clock.read());
    }
}

/// Cost of one begin+end pair through the real transition code on this thread, in clock ns: at
/// most `iterations` pairs, stopping early once `budget_ns` of clock time has passed (a slow clock
/// needs fewer pairs for a stable mean). Uses a private context, so it counts nothing.
pub(crate) fn measure_transition_pair_ns(
    choice: &ClockChoice,
    iterations: u64,
    budget_ns: u64,
) -> f64 {
    const BATCH: u64 = 500;
    let ctx = ThreadContext::new(choice, State::Bytecode, None);
    let mut probe = ThreadClock::open(choice);
    let start = probe.read();
    let (mut done, mut elapsed) = (0u64, 0u64);
    while done < iterations.max(1) && (done == 0 || elapsed < budget_ns) {
        for _ in 0..BATCH {
            ctx.j2n_begin(0, Timing::OfContext);
            ctx.j2n_end(0, Timing::OfContext);
        }
        done += BATCH;
        elapsed = probe.read().saturating_sub(start);
    }
    probe.close();
    // SAFETY: `ctx` is private to this thread.
    unsafe { ctx.owned() }.clock.close();
    elapsed as f64 / done as f64
}
