//! The agent's hot path without a JVM, for exact instruction counts under callgrind: the hooks a
//! bind trampoline calls around a native (`bind_enter`/`bind_exit`), the hooks a JNI wrapper calls
//! around an upcall (`n2j_begin`/`n2j_end`), and the nested shape (native → upcall → native), each
//! `N` times, and a bound native called through a real bind trampoline (`bound`: the routine of
//! the `timing=` in force, around an empty native; `fallback` the same with a method id past the method table, which the sampled routine leaves to
//! the hooks' routine; `direct` calls that native without one), with the clock named by NATIVEACCT_BENCH_CLOCK (default: auto), in `timing=exact`
//! or, with NATIVEACCT_BENCH_TIMING=sampled, in `timing=sampled`.
//!
//! Usage: [NATIVEACCT_BENCH_CLOCK=CLOCK] [NATIVEACCT_BENCH_TIMING=exact|sampled] bench_crossings [N] [CASE...]
//!   (cases: native upcall nested bound fallback direct)
//!   valgrind --tool=callgrind --toggle-collect='*bench_crossings*run*' target/release/bench_crossings 100000 native
//! prints ns per crossing pair (thread CPU time) per case; under callgrind, divide Ir by N.

use nativeacct::testing::clock::{choose_in_background, chosen, ClockKind, ClockRequest};
use nativeacct::testing::context::ThreadContext;
use nativeacct::testing::context::{self, Lifecycle};
use nativeacct::testing::transitions as hooks;
use std::hint::black_box;

/// The four hooks of one `timing=` mode, as the trampolines and the JNI wrappers get them.
#[derive(Clone, Copy)]
struct Hooks {
    enter: extern "C" fn(u32) -> *const ThreadContext,
    exit: unsafe extern "C" fn(u32, *const ThreadContext),
    begin: extern "C" fn(u32),
    end: extern "C" fn(u32),
}

const EXACT: Hooks = Hooks {
    enter: hooks::bind_enter,
    exit: hooks::bind_exit,
    begin: hooks::n2j_begin,
    end: hooks::n2j_end,
};

const SAMPLED: Hooks = Hooks {
    enter: hooks::bind_enter_sampled,
    exit: hooks::bind_exit_sampled,
    begin: hooks::n2j_begin_sampled,
    end: hooks::n2j_end_sampled,
};

/// `CallStaticIntMethod`'s index in the JNI wrappers' table (kind 2 × 30 + Int 5 × 3 + variadic 0).
const CALL_STATIC_INT_METHOD: u32 = 75;

fn thread_cpu_ns() -> u64 {
    nativeacct::testing::clock::read_clock(libc::CLOCK_THREAD_CPUTIME_ID).unwrap_or(0)
}

// The hooks are called through pointers, as the trampolines and the JNI wrappers call them.
#[inline(never)]
fn run_native(h: Hooks, n: u64, method: u32) {
    for _ in 0..n {
        let current = (h.enter)(black_box(method));
        // SAFETY: what the enter hook returned on this thread for this call.
        unsafe { (h.exit)(method, black_box(current)) };
    }
}

#[inline(never)]
fn run_upcall(h: Hooks, n: u64) {
    for _ in 0..n {
        (h.begin)(black_box(CALL_STATIC_INT_METHOD));
        (h.end)(black_box(CALL_STATIC_INT_METHOD));
    }
}

/// One native that makes an upcall whose Java calls a native: three pairs per round.
#[inline(never)]
fn run_nested(h: Hooks, n: u64, outer: u32, inner: u32) {
    for _ in 0..n {
        let a = (h.enter)(black_box(outer));
        (h.begin)(black_box(CALL_STATIC_INT_METHOD));
        let b = (h.enter)(black_box(inner));
        // SAFETY: each exit gets what its own enter hook returned on this thread.
        unsafe { (h.exit)(inner, black_box(b)) };
        (h.end)(black_box(CALL_STATIC_INT_METHOD));
        // SAFETY: as above.
        unsafe { (h.exit)(outer, black_box(a)) };
    }
}

/// The bound native of the `bound` and `direct` cases: a JNI native with nothing to do.
extern "C" fn empty_native(_env: *mut libc::c_void, _class: *mut libc::c_void) -> i64 {
    black_box(0)
}

type Native = extern "C" fn(*mut libc::c_void, *mut libc::c_void) -> i64;

/// `n` calls of `native`, through a pointer as the VM makes them.
#[inline(never)]
fn run_bound(native: Native, n: u64) {
    for _ in 0..n {
        black_box(native(std::ptr::null_mut(), std::ptr::null_mut()));
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let n: u64 = args
        .next()
        .and_then(|a| a.parse().ok())
        .unwrap_or(10_000_000);
    let mut cases: Vec<String> = args.collect();
    if cases.is_empty() {
        cases = ["native", "upcall", "nested"].map(String::from).to_vec();
    }
    let request = std::env::var("NATIVEACCT_BENCH_CLOCK")
        .ok()
        .and_then(|name| ClockKind::from_name(&name))
        .map_or(ClockRequest::Auto, ClockRequest::Exactly);
    let sampled = match std::env::var("NATIVEACCT_BENCH_TIMING").as_deref() {
        Ok("sampled") => true,
        Ok("exact") | Err(_) => false,
        Ok(other) => panic!("NATIVEACCT_BENCH_TIMING={other}: exact or sampled"),
    };
    context::set_sampled_timing(sampled);
    choose_in_background(request, || {});
    context::set_lifecycle(Lifecycle {
        clock: chosen,
        register: nativeacct::testing::merge::register,
        retire: nativeacct::testing::merge::retire,
    });
    let id = |name: &str| {
        nativeacct::testing::id_for(&nativeacct_classfile::NativeMethodRef {
            class: "bench/Crossings".into(),
            name: name.into(),
            descriptor: "()V".into(),
        }) as u32
    };
    let (outer, inner) = (id("outer"), id("inner"));
    context::thread_started(Some("bench".into()));
    // Warm up: the first crossings open the context's clock and its latency slots.
    let h = if sampled { SAMPLED } else { EXACT };
    run_nested(h, 10_000, outer, inner);
    println!(
        "clock {} timing {}",
        chosen().kind.name(),
        if sampled { "sampled" } else { "exact" }
    );
    for case in &cases {
        let start = thread_cpu_ns();
        let pairs = match case.as_str() {
            "native" => {
                run_native(h, n, outer);
                n
            }
            "upcall" => {
                run_upcall(h, n);
                n
            }
            "nested" => {
                run_nested(h, n, outer, inner);
                3 * n
            }
            "bound" | "fallback" | "direct" => {
                let native: Native = if case != "direct" {
                    // A method id past the method table takes the routine's fallback: the hooks.
                    let method = if case == "bound" { outer } else { u32::MAX - 1 };
                    let stub = nativeacct::testing::bench_trampoline(
                        method,
                        empty_native as *const () as usize,
                    )
                    .expect("executable memory");
                    // SAFETY: the stub forwards to `empty_native`, whose signature this is.
                    unsafe { std::mem::transmute::<usize, Native>(stub) }
                } else {
                    empty_native
                };
                // Warm up: the method's row exists after its first call on this thread.
                run_bound(native, 10);
                run_bound(native, n);
                n
            }
            other => {
                panic!("unknown case {other} (native, upcall, nested, bound, fallback, direct)")
            }
        };
        let ns = (thread_cpu_ns() - start) as f64 / pairs as f64;
        println!("case {case} {pairs} pairs {ns:.2} ns per pair");
    }
    context::retire_current();
}
