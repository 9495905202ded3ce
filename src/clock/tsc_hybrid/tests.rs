//! Tests of tsc-hybrid's arithmetic: TSC deltas, exact rebases and steal payback.

use super::*;

/// A thread on a VM, in simulated nanoseconds (the TSC ticks at 1 GHz): it runs, the hypervisor
/// steals its vCPU now and then (wall time passes, CPU time does not, the page lock stays), and
/// the guest scheduler switches it out at the end of each time slice (the lock moves).
struct SimulatedThread {
    wall: u64,
    cpu: u64,
    lock: u32,
    rng: u64,
    mean_steal_gap: u64,
    mean_steal: u64,
    until_steal: u64,
    until_switch: u64,
    /// The highest value the clock returned: no read may fall a resample period below it.
    last_read: u64,
}

impl SimulatedThread {
    fn new(mean_steal_gap: u64, mean_steal: u64) -> SimulatedThread {
        let mut thread = SimulatedThread {
            wall: 1_000_000,
            cpu: 0,
            lock: 2,
            rng: 0x9e37_79b9_7f4a_7c15,
            mean_steal_gap,
            mean_steal,
            until_steal: 0,
            until_switch: 0,
            last_read: 0,
        };
        thread.until_steal = thread.uniform(2 * mean_steal_gap);
        thread.until_switch = thread.slice();
        thread
    }

    fn uniform(&mut self, below: u64) -> u64 {
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        self.rng % below.max(1)
    }

    /// CFS-like slices of 1–5 ms.
    fn slice(&mut self) -> u64 {
        1_000_000 + self.uniform(4_000_000)
    }

    fn run(&mut self, mut cpu_ns: u64) {
        while cpu_ns > 0 {
            let step = cpu_ns.min(self.until_steal).min(self.until_switch);
            self.wall += step;
            self.cpu += step;
            cpu_ns -= step;
            self.until_steal -= step;
            self.until_switch -= step;
            if self.until_steal == 0 {
                self.wall += self.uniform(2 * self.mean_steal);
                self.until_steal = 1 + self.uniform(2 * self.mean_steal_gap);
            }
            if self.until_switch == 0 {
                self.wall += 3_000_000 + self.uniform(6_000_000);
                self.lock = self.lock.wrapping_add(2);
                self.until_switch = self.slice();
            }
        }
    }

    fn read(&mut self, clock: &mut Extrapolation) -> u64 {
        let (lock, wall, cpu) = (self.lock, self.wall, self.cpu);
        let ns = clock.read(wall, lock, || {
            Some(ExactRead {
                seq_before: lock,
                tsc: wall,
                cpu_ns: cpu,
                seq_after: lock,
            })
        });
        let bound = clock.scale.ticks_to_ns(clock.resample_ticks);
        assert!(
            ns.saturating_add(bound) > self.last_read,
            "stepped back from {} to {ns}",
            self.last_read
        );
        self.last_read = self.last_read.max(ns);
        ns
    }
}

/// Native share in points, (clock's, true), over `phases` alternating native and bytecode
/// stretches of the given CPU lengths.
fn native_share(
    resample_ns: u64,
    steal: (u64, u64),
    phases: usize,
    native_ns: impl Fn(usize) -> u64,
    bytecode_ns: impl Fn(usize) -> u64,
) -> (f64, f64) {
    let mut thread = SimulatedThread::new(steal.0, steal.1);
    let mut clock = Extrapolation::new(TscScale::from_hz(1_000_000_000), resample_ns);
    let (mut clock_native, mut true_native) = (0u64, 0u64);
    let start_cpu = thread.cpu;
    let mut last = thread.read(&mut clock);
    let start = last;
    for i in 0..phases {
        thread.run(native_ns(i));
        true_native += native_ns(i);
        // Signed, as the agent's context charges it: a step back is taken from this interval.
        let now = thread.read(&mut clock);
        clock_native = clock_native.wrapping_add(now.wrapping_sub(last));
        thread.run(bytecode_ns(i));
        last = thread.read(&mut clock);
    }
    let clock_pct = 100.0 * clock_native as f64 / (last - start) as f64;
    let true_pct = 100.0 * true_native as f64 / (thread.cpu - start_cpu) as f64;
    (clock_pct, true_pct)
}

/// Steal patterns as (mean gap, mean burst), each about 25 % of wall time, from long rare
/// bursts to short frequent ones.
const STEAL_PATTERNS: [(u64, u64); 3] = [
    (1_500_000, 500_000),
    (6_000_000, 2_000_000),
    (100_000, 33_000),
];

type Phases = (&'static str, fn(usize) -> u64, fn(usize) -> u64, usize);

/// Native and bytecode stretch lengths by phase number: long alternating stretches (the
/// agent_e2e workers' shape), short calls between short stretches, short calls between long
/// stretches, and mostly short calls with every 7th a long one.
const SHAPES: [Phases; 4] = [
    ("6 ms / 4 ms", |_| 6_000_000, |_| 4_000_000, 2_000),
    ("20 µs / 30 µs", |_| 20_000, |_| 30_000, 50_000),
    ("10 µs / 3 ms", |_| 10_000, |_| 3_000_000, 5_000),
    (
        "15 µs or 5 ms / 200 µs",
        |i| if i % 7 == 0 { 5_000_000 } else { 15_000 },
        |_| 200_000,
        20_000,
    ),
];

#[test]
fn steal_is_charged_where_it_happens() {
    for steal in STEAL_PATTERNS {
        for (name, native, bytecode, phases) in SHAPES {
            let (clock, truth) = native_share(RESAMPLE_NS, steal, phases, native, bytecode);
            assert!(
                (clock - truth).abs() < 0.3,
                "{name}, steal {steal:?}: {clock:.2} % native vs true {truth:.2} %"
            );
        }
    }
}

#[test]
fn rebasing_only_at_switches_would_tilt_the_split() {
    // The simulation reproduces the failure the resampling fixes: with mixed call lengths,
    // steal paid back at switches lands on the long calls.
    let (_, native, bytecode, phases) = SHAPES[3];
    for steal in STEAL_PATTERNS {
        let (clock, truth) = native_share(u64::MAX, steal, phases, native, bytecode);
        assert!(
            truth - clock > 3.0,
            "steal {steal:?}: {clock:.2} % native vs true {truth:.2} %"
        );
    }
}

#[test]
fn without_steal_reads_are_exact() {
    for (name, native, bytecode, phases) in SHAPES {
        let (clock, truth) = native_share(RESAMPLE_NS, (u64::MAX / 4, 0), phases, native, bytecode);
        assert!(
            (clock - truth).abs() < 0.001,
            "{name}: {clock:.3} % vs true {truth:.3} %"
        );
    }
}

#[test]
fn the_fast_path_fields_hold_what_read_uses() {
    let scale = TscScale::from_hz(2_500_000_000);
    // Over the static page a closed view points at, based on a reading as an exact read would.
    let mut clock = TscHybridClock::over(scale, PageView::closed());
    let lock = clock.page.lock();
    clock.arithmetic.rebase(ExactRead {
        seq_before: lock,
        tsc: rdtsc(),
        cpu_ns: 1_000_000,
        seq_after: lock,
    });
    let at = &clock as *const TscHybridClock as *const u8;
    let fields = Extrapolation::FIELDS.at(TscHybridClock::ARITHMETIC_FIELD);
    // SAFETY: every offset lies inside `clock` (offset_of!), aligned for its field, and nothing
    // writes the clock meanwhile.
    let word = |offset: usize| unsafe { at.add(offset).cast::<u64>().read() };
    let page = word(TscHybridClock::PAGE_FIELD) as *const u8;
    // SAFETY: the page's address, as the view holds it: the static page of a closed view.
    let lock = unsafe {
        page.add(PageView::LOCK_OFFSET)
            .cast::<u32>()
            .read_volatile()
    };
    assert_eq!(lock, clock.page.lock());
    let arithmetic = &clock.arithmetic;
    assert_eq!(word(fields.base_seq), arithmetic.base_seq);
    assert_eq!(word(fields.base_tsc), arithmetic.base_tsc);
    assert_eq!(word(fields.base_ns), arithmetic.base_ns);
    assert_eq!(word(fields.resample_ticks), arithmetic.resample_ticks);
    assert_eq!(word(fields.mult), scale.ticks_to_ns(1 << 32));
    // The assembly's reading at a TSC just after the base: what `extrapolate` gives.
    let tsc = arithmetic.base_tsc + 12_345;
    let ns = word(fields.base_ns)
        + ((u128::from(tsc - word(fields.base_tsc)) * u128::from(word(fields.mult))) >> 32) as u64;
    assert_eq!(Some(ns), arithmetic.extrapolate(tsc, lock));
}
