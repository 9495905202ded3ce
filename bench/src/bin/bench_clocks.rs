//! Cost of one `ThreadClock::read()` per clock: median ns per read over 10 M reads (in batches of
//! 100 k, each batch timed with CLOCK_MONOTONIC), plus bare references for comparison.
//!
//! stdout, one line each: `clock=<name> ns_per_read=<x>` for every clock that works here and for
//! `auto`, `reference=<what> ns_per_read=<x>`, and `transition_pair_ns=<x>`.
//! Usage: bench_clocks [--reads N]

use nativeacct::clock::{choose, ClockKind, ClockRequest, ThreadClock};
use std::hint::black_box;
use std::time::Instant;

const BATCH: u64 = 100_000;

fn median(mut samples: Vec<f64>) -> f64 {
    samples.sort_by(f64::total_cmp);
    let middle = samples.len() / 2;
    if samples.len() % 2 == 0 {
        (samples[middle - 1] + samples[middle]) / 2.0
    } else {
        samples[middle]
    }
}

/// Median over batches of the mean ns per call of `read`.
fn ns_per_call(reads: u64, mut read: impl FnMut() -> u64) -> f64 {
    let batches = (reads / BATCH).max(1);
    // Warm up: page faults, branch predictors, the first exact read of tsc-hybrid.
    for _ in 0..BATCH / 10 {
        black_box(read());
    }
    let samples = (0..batches)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..BATCH {
                black_box(read());
            }
            start.elapsed().as_nanos() as f64 / BATCH as f64
        })
        .collect();
    median(samples)
}

#[cfg(target_arch = "x86_64")]
fn bare_rdtsc() -> u64 {
    // SAFETY: RDTSC exists on every x86_64 CPU.
    unsafe { core::arch::x86_64::_rdtsc() }
}

fn main() {
    let mut reads: u64 = 10_000_000;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--reads" => {
                reads = args
                    .next()
                    .and_then(|n| n.parse().ok())
                    .expect("--reads needs a number")
            }
            other => panic!("unknown argument {other}; usage: bench_clocks [--reads N]"),
        }
    }

    let auto = choose(ClockRequest::Auto);
    eprintln!("# {}", auto.describe());
    let mut clock = ThreadClock::open(&auto);
    let ns = ns_per_call(reads, || clock.read());
    clock.close();
    println!("clock=auto ns_per_read={ns:.2}");
    eprintln!("# auto = {}", auto.kind.name());

    for kind in ClockKind::all() {
        let choice = choose(ClockRequest::Exactly(kind));
        if choice.kind != kind {
            eprintln!("# clock={} not available: {}", kind.name(), choice.reason);
            continue;
        }
        let mut clock = ThreadClock::open(&choice);
        let ns = ns_per_call(reads, || clock.read());
        if kind == ClockKind::TscHybrid {
            eprintln!(
                "# tsc-hybrid took the exact path on {} of {} reads (context switches)",
                clock.exact_reads(),
                reads + BATCH / 10
            );
        }
        clock.close();
        println!("clock={} ns_per_read={ns:.2}", kind.name());
    }

    #[cfg(target_arch = "x86_64")]
    println!(
        "reference=rdtsc ns_per_read={:.2}",
        ns_per_call(reads, bare_rdtsc)
    );
    // Instant::now is clock_gettime(CLOCK_MONOTONIC) through the vDSO.
    let origin = Instant::now();
    println!(
        "reference=clock_gettime_monotonic ns_per_read={:.2}",
        ns_per_call(reads, || origin.elapsed().as_nanos() as u64)
    );

    // The agent's real begin+end transition code, timed by the lead's context module with `auto`.
    let pairs = 10_000_000;
    println!(
        "transition_pair_ns={:.2}",
        nativeacct::context::bench_transition_pairs(pairs)
    );
}
