//! The agent's hot path without a JVM, for exact instruction counts under callgrind: the hooks a
//! bind trampoline calls around a native (`bind_enter`/`bind_exit`), the hooks a JNI wrapper calls
//! around an upcall (`n2j_begin`/`n2j_end`), and the nested shape (native → upcall → native), each
//! `N` times, with the clock named by NATIVEACCT_BENCH_CLOCK (default: auto), in `timing=exact`
//! or, with NATIVEACCT_BENCH_TIMING=sampled, in `timing=sampled`.
//!
//! Usage: [NATIVEACCT_BENCH_CLOCK=CLOCK] [NATIVEACCT_BENCH_TIMING=exact|sampled] bench_crossings [N] [CASE...]
//!   (cases: native upcall nested)
//!   valgrind --tool=callgrind --toggle-collect='*bench_crossings*run*' target/release/bench_crossings 100000 native
//! prints ns per crossing pair (thread CPU time) per case; under callgrind, divide Ir by N.

use nativeacct::testing::clock::{choose_in_background, chosen, ClockKind, ClockRequest};
use nativeacct::testing::context::{self, Lifecycle};
use nativeacct::testing::transitions::{bind_enter, bind_exit, n2j_begin, n2j_end};
use std::hint::black_box;

/// `CallStaticIntMethod`'s index in the JNI wrappers' table (kind 2 × 30 + Int 5 × 3 + variadic 0).
const CALL_STATIC_INT_METHOD: u32 = 75;

fn thread_cpu_ns() -> u64 {
    nativeacct::testing::clock::read_clock(libc::CLOCK_THREAD_CPUTIME_ID).unwrap_or(0)
}

#[inline(never)]
fn run_native(n: u64, method: u32) {
    for _ in 0..n {
        let current = bind_enter(black_box(method));
        // SAFETY: what `bind_enter` returned on this thread for this call.
        unsafe { bind_exit(method, black_box(current)) };
    }
}

#[inline(never)]
fn run_upcall(n: u64) {
    for _ in 0..n {
        n2j_begin(black_box(CALL_STATIC_INT_METHOD));
        n2j_end(black_box(CALL_STATIC_INT_METHOD));
    }
}

/// One native that makes an upcall whose Java calls a native: three pairs per round.
#[inline(never)]
fn run_nested(n: u64, outer: u32, inner: u32) {
    for _ in 0..n {
        let a = bind_enter(black_box(outer));
        n2j_begin(black_box(CALL_STATIC_INT_METHOD));
        let b = bind_enter(black_box(inner));
        // SAFETY: each exit gets what its own `bind_enter` returned on this thread.
        unsafe { bind_exit(inner, black_box(b)) };
        n2j_end(black_box(CALL_STATIC_INT_METHOD));
        // SAFETY: as above.
        unsafe { bind_exit(outer, black_box(a)) };
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
    run_nested(10_000, outer, inner);
    println!(
        "clock {} timing {}",
        chosen().kind.name(),
        if sampled { "sampled" } else { "exact" }
    );
    for case in &cases {
        let start = thread_cpu_ns();
        let pairs = match case.as_str() {
            "native" => {
                run_native(n, outer);
                n
            }
            "upcall" => {
                run_upcall(n);
                n
            }
            "nested" => {
                run_nested(n, outer, inner);
                3 * n
            }
            other => panic!("unknown case {other} (native, upcall, nested)"),
        };
        let ns = (thread_cpu_ns() - start) as f64 / pairs as f64;
        println!("case {case} {pairs} pairs {ns:.2} ns per pair");
    }
    context::retire_current();
}
