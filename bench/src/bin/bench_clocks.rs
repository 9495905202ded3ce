//! Cost of one `ThreadClock::read()` per clock: median ns per read over 10 M reads, in batches of
//! 100 k reads. Each batch is timed in this thread's CPU time (CLOCK_THREAD_CPUTIME_ID, two reads per
//! batch), so time spent preempted by other processes on this shared 2-core VM is not charged to the
//! clock; the wall-clock median is printed to stderr beside it. Batches of all clocks are interleaved
//! round-robin so load bursts hit every clock alike.
//!
//! stdout, one line each: `clock=<name> ns_per_read=<x>` for every clock that works here and for
//! `auto`, `reference=<what> ns_per_read=<x>` (bare rdtsc, vDSO CLOCK_MONOTONIC, and
//! CLOCK_MONOTONIC_COARSE: the one time source that may beat rdtsc, at tick resolution), and
//! `transition_pair_ns=<x>` (the agent's real begin+end code). Details go to stderr.
//! Usage: bench_clocks [--reads N]

use nativeacct::testing::clock::{choose, ClockKind, ClockRequest, ThreadClock};
use nativeacct_bench::median;
use std::cell::RefCell;
use std::hint::black_box;
use std::time::Instant;

const BATCH: u64 = 100_000;

/// `clock_gettime` or `clock_getres` of CLOCK_MONOTONIC_COARSE, in ns.
fn coarse(query: unsafe extern "C" fn(libc::clockid_t, *mut libc::timespec) -> libc::c_int) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: both functions write only into `ts`.
    unsafe { query(libc::CLOCK_MONOTONIC_COARSE, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// This thread's CPU time, through the agent's thread-cputime clock (one per thread).
fn thread_cpu_ns() -> u64 {
    thread_local! {
        static CPU_CLOCK: RefCell<ThreadClock> = RefCell::new(ThreadClock::open(&choose(
            ClockRequest::Exactly(ClockKind::ThreadCputime),
        )));
    }
    CPU_CLOCK.with(|clock| clock.borrow_mut().read())
}

/// Mean ns per call of `read` over one batch, in thread CPU time and in wall time (monomorphised per
/// clock: no indirect call per read).
fn time_batch(mut read: impl FnMut() -> u64) -> (f64, f64) {
    let wall = Instant::now();
    let cpu = thread_cpu_ns();
    for _ in 0..BATCH {
        black_box(read());
    }
    let cpu = thread_cpu_ns() - cpu;
    let wall = wall.elapsed().as_nanos() as f64;
    (cpu as f64 / BATCH as f64, wall / BATCH as f64)
}

#[cfg(target_arch = "x86_64")]
fn bare_rdtsc() -> u64 {
    // SAFETY: RDTSC exists on every x86_64 CPU.
    unsafe { core::arch::x86_64::_rdtsc() }
}

/// A measured subject: its output label and a batch runner.
struct Subject<'a> {
    label: String,
    run_batch: Box<dyn FnMut() -> (f64, f64) + 'a>,
    samples: Vec<f64>,
    wall_samples: Vec<f64>,
}

fn clock_subject(label: String, mut clock: ThreadClock) -> Subject<'static> {
    // Warm up: page faults, branch predictors, the first exact read of tsc-hybrid.
    for _ in 0..BATCH / 10 {
        black_box(clock.read());
    }
    Subject {
        label,
        run_batch: Box::new(move || time_batch(|| clock.read())),
        samples: Vec::new(),
        wall_samples: Vec::new(),
    }
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
    let batches = (reads / BATCH).max(1);

    let auto = choose(ClockRequest::Auto);
    eprintln!("# {}", auto.describe());
    let mut subjects = vec![clock_subject("clock=auto".into(), ThreadClock::open(&auto))];
    for kind in ClockKind::all() {
        let choice = choose(ClockRequest::Exactly(kind));
        if choice.kind != kind {
            eprintln!("# clock={} not available: {}", kind.name(), choice.reason);
            continue;
        }
        subjects.push(clock_subject(
            format!("clock={}", kind.name()),
            ThreadClock::open(&choice),
        ));
    }
    #[cfg(target_arch = "x86_64")]
    subjects.push(Subject {
        label: "reference=rdtsc".into(),
        run_batch: Box::new(|| time_batch(bare_rdtsc)),
        samples: Vec::new(),
        wall_samples: Vec::new(),
    });
    // Instant::now is clock_gettime(CLOCK_MONOTONIC) through the vDSO.
    let origin = Instant::now();
    subjects.push(Subject {
        label: "reference=clock_gettime_monotonic".into(),
        run_batch: Box::new(move || time_batch(|| origin.elapsed().as_nanos() as u64)),
        samples: Vec::new(),
        wall_samples: Vec::new(),
    });
    // Cheap but coarse (one kernel tick, e.g. 4 ms): shown to say why no clock uses it.
    eprintln!(
        "# reference=clock_gettime_monotonic_coarse has a resolution of {} ns",
        coarse(libc::clock_getres)
    );
    subjects.push(Subject {
        label: "reference=clock_gettime_monotonic_coarse".into(),
        run_batch: Box::new(|| time_batch(|| coarse(libc::clock_gettime))),
        samples: Vec::new(),
        wall_samples: Vec::new(),
    });

    for _ in 0..batches {
        for subject in subjects.iter_mut() {
            let (cpu_ns, wall_ns) = (subject.run_batch)();
            subject.samples.push(cpu_ns);
            subject.wall_samples.push(wall_ns);
        }
    }
    for subject in subjects {
        let min = subject
            .samples
            .iter()
            .copied()
            .fold(f64::INFINITY, f64::min);
        eprintln!(
            "# {}: {} batches of {BATCH}, CPU-time min {min:.2} ns, wall-time median {:.2} ns",
            subject.label,
            subject.samples.len(),
            median(subject.wall_samples)
        );
        println!(
            "{} ns_per_read={:.2}",
            subject.label,
            median(subject.samples)
        );
    }

    // The agent's real begin+end transition code, timed by the context module with `auto`.
    let pairs = 10_000_000;
    println!(
        "transition_pair_ns={:.2}",
        nativeacct::testing::merge::bench_transition_pairs(pairs)
    );
}
