//! The agent's per-thread lifecycle without a JVM: CPU time per short thread (8 at a time) that
//! starts, makes 12 native-call crossings and ends, with and without a context, with the clock
//! named by NATIVEACCT_BENCH_CLOCK (default: auto). The JVM side of a thread's life (JVMTI events,
//! the thread name) is in `scripts/bench-churn`.
//!
//! Usage: [NATIVEACCT_BENCH_CLOCK=CLOCK] bench_lifecycle [THREADS] [REPS]

use nativeacct::testing::clock::{
    choose_in_background, chosen, read_clock, ClockKind, ClockRequest,
};
use nativeacct::testing::context::{self, Lifecycle};

const CROSSING_PAIRS: usize = 12;

fn process_cpu_ns() -> u64 {
    read_clock(libc::CLOCK_PROCESS_CPUTIME_ID).unwrap_or(0)
}

/// µs of process CPU per thread for `threads` threads, with or without the agent's context.
fn per_thread_us(threads: usize, method: i32, with_agent: bool) -> f64 {
    let start = process_cpu_ns();
    for _ in 0..threads.div_ceil(8) {
        let batch: Vec<_> = (0..8)
            .map(|_| {
                std::thread::spawn(move || {
                    if with_agent {
                        context::thread_started(Some("churn".into()));
                        for _ in 0..CROSSING_PAIRS {
                            context::j2n_begin(method);
                            context::j2n_end(method);
                        }
                        context::retire_current();
                    }
                })
            })
            .collect();
        for thread in batch {
            thread.join().expect("thread panicked");
        }
    }
    (process_cpu_ns() - start) as f64 / (threads.div_ceil(8) * 8) as f64 / 1000.0
}

fn main() {
    let mut args = std::env::args().skip(1);
    let threads: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(20_000);
    let reps: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(3);
    let method = nativeacct::testing::id_for(&nativeacct_classfile::NativeMethodRef {
        class: "bench/Lifecycle".into(),
        name: "nop".into(),
        descriptor: "()V".into(),
    });
    println!(
        "Per-thread lifecycle without a JVM: {threads} threads, 8 at a time, {CROSSING_PAIRS} crossing pairs each; median of {reps}"
    );
    println!();
    println!("| clock | no context (µs CPU) | context (µs CPU) | added (µs) |");
    println!("|---|---:|---:|---:|");
    // One lifecycle (and clock) per process.
    let kind = std::env::var("NATIVEACCT_BENCH_CLOCK")
        .ok()
        .and_then(|name| ClockKind::from_name(&name));
    let request = match kind {
        Some(kind) => ClockRequest::Exactly(kind),
        None => ClockRequest::Auto,
    };
    choose_in_background(request, || {});
    let name = chosen().kind.name();
    context::set_lifecycle(Lifecycle {
        clock: chosen,
        register: nativeacct::testing::merge::register,
        retire: nativeacct::testing::merge::retire,
    });
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (mut without, mut with) = (Vec::new(), Vec::new());
    for _ in 0..reps.max(1) {
        without.push(per_thread_us(threads, method, false));
        with.push(per_thread_us(threads, method, true));
    }
    let (without, with) = (median(without), median(with));
    println!(
        "| {name} | {without:.1} | {with:.1} | {:+.1} |",
        with - without
    );
}
