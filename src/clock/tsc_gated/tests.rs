//! Tests of tsc-gated's arithmetic on a simulated thread (the counter ticks at 1 GHz).

use super::*;

/// A thread in simulated nanoseconds: running advances its CPU time and the counter, being off the
/// CPU (blocked, preempted, stolen) only the counter.
struct Thread {
    wall: u64,
    cpu: u64,
    clock: Gated,
    last: u64,
    /// The highest value read so far: no read may fall more than a resample period below it.
    highest: u64,
}

impl Thread {
    fn new() -> Thread {
        let mut thread = Thread {
            wall: 1_000_000,
            cpu: 0,
            clock: Gated::new(TscScale::from_hz(1_000_000_000), GATE_NS, RESAMPLE_NS),
            last: 0,
            highest: 0,
        };
        thread.last = thread.read_now();
        thread
    }

    fn run(&mut self, ns: u64) {
        self.wall += ns;
        self.cpu += ns;
    }

    fn off(&mut self, ns: u64) {
        self.wall += ns;
    }

    fn read_now(&mut self) -> u64 {
        let ns = match self.clock.extrapolate(self.wall) {
            Some(ns) => ns,
            None => self.clock.rebase(self.wall, self.cpu, self.wall),
        };
        assert!(
            ns + RESAMPLE_NS >= self.highest,
            "stepped back from {} to {ns}",
            self.highest
        );
        self.highest = self.highest.max(ns);
        ns
    }

    /// A crossing: the clock's charge (signed, as the context takes it) for the interval it ends.
    fn cross(&mut self) -> i64 {
        let now = self.read_now();
        let charged = now as i64 - self.last as i64;
        self.last = now;
        charged
    }
}

#[test]
fn a_native_that_blocks_counts_its_cpu_not_its_wall_time() {
    // Natives that sleep 6 ms and then spin 1 ms (wall time 7 × CPU), between bytecode stretches
    // full of short JNA-style calls (2 µs native, 3 µs bytecode).
    let mut thread = Thread::new();
    let (mut native, mut total, mut true_native) = (0i64, 0i64, 0u64);
    let cpu_start = thread.cpu;
    for _ in 0..200 {
        for _ in 0..300 {
            thread.run(3_000);
            total += thread.cross();
            thread.run(2_000);
            let charged = thread.cross();
            native += charged;
            total += charged;
            true_native += 2_000;
        }
        thread.run(3_000);
        total += thread.cross();
        thread.off(6_000_000);
        thread.run(1_000_000);
        let charged = thread.cross();
        assert_eq!(charged, 1_000_000, "the blocking native's CPU, exactly");
        native += charged;
        total += charged;
        true_native += 1_000_000;
    }
    assert_eq!(total as u64, thread.cpu - cpu_start);
    assert_eq!(native as u64, true_native);
    assert_eq!(thread.clock.narrowings, 0, "nothing was hidden");
}

/// (clock's, true) native share of a thread whose natives wait 15 µs (under the wide gate) and
/// then work 5 µs, with 10 µs of bytecode between: a third of the CPU time is native.
fn briefly_blocking_split(thread: &mut Thread) -> (f64, f64) {
    let (mut native, mut total, mut true_native) = (0i64, 0i64, 0u64);
    for _ in 0..100_000 {
        thread.run(10_000);
        total += thread.cross();
        thread.off(15_000);
        thread.run(5_000);
        let charged = thread.cross();
        native += charged;
        total += charged;
        true_native += 5_000;
    }
    (
        100.0 * native as f64 / total as f64,
        100.0 * true_native as f64 / total as f64,
    )
}

#[test]
fn without_narrowing_brief_blocks_would_tilt_the_split() {
    let mut thread = Thread::new();
    thread.clock.narrow_ticks = thread.clock.wide_ticks;
    let (share, truth) = briefly_blocking_split(&mut thread);
    assert!(
        share - truth > 10.0,
        "{share:.2} % native vs true {truth:.2} %"
    );
}

#[test]
fn a_native_that_blocks_briefly_at_every_call_narrows_the_gate() {
    let mut thread = Thread::new();
    let cpu_start = thread.cpu;
    let start = thread.last;
    let (share, truth) = briefly_blocking_split(&mut thread);
    assert_eq!(
        thread.last - start,
        thread.cpu - cpu_start,
        "the total stays exact"
    );
    assert!(
        (share - truth).abs() < 1.0,
        "{share:.2} % native vs true {truth:.2} %"
    );
    assert_eq!(thread.clock.gate_ticks, thread.clock.narrow_ticks);
    assert!(
        (1..=16).contains(&thread.clock.narrowings),
        "{} narrowings",
        thread.clock.narrowings
    );
}

#[test]
fn off_cpu_time_hidden_in_short_intervals_stays_within_the_bound() {
    // 2 µs natives and 2 µs bytecode (JNA-style); every 97th native is switched out for 20 µs,
    // which its interval (22 µs, under the wide gate) may hide until an exact read pays it back.
    let mut thread = Thread::new();
    let (mut native, mut true_native, mut hidden, mut events) = (0i64, 0u64, 0u64, 0u64);
    for i in 0..500_000u64 {
        thread.run(2_000);
        thread.cross();
        thread.run(1_000);
        if i % 97 == 0 {
            thread.off(20_000);
            hidden += 20_000;
            events += 1;
        }
        thread.run(1_000);
        let charged = thread.cross();
        assert!(
            charged <= 2_000 + GATE_NS as i64,
            "an interval charged {charged} ns"
        );
        native += charged;
        true_native += 2_000;
    }
    let error = native - true_native as i64;
    assert!(
        error.unsigned_abs() <= hidden,
        "native off by {error} ns, {hidden} ns hidden"
    );
    // Exact reads only every 250 µs of short intervals, and (narrow gate) after a switch-out:
    // the 2 µs crossings cost the counter alone.
    let reads = thread.clock.arithmetic.exact_reads();
    let most = thread.wall / RESAMPLE_NS + events + 2;
    assert!(
        reads <= most,
        "{reads} exact reads, at most {most} expected"
    );
}

#[test]
fn every_interval_longer_than_the_gate_is_exact() {
    let mut thread = Thread::new();
    for i in 0..1_000u64 {
        thread.run(10_000 + i * 97);
        thread.off(GATE_NS + i);
        thread.run(1_000);
        thread.cross();
        assert_eq!(thread.last, thread.cpu);
    }
    assert_eq!(thread.clock.long_intervals, 1_000);
}

#[test]
fn an_exact_read_switched_out_itself_makes_the_next_read_exact() {
    let mut clock = Gated::new(TscScale::from_hz(1_000_000_000), GATE_NS, RESAMPLE_NS);
    assert_eq!(clock.rebase(1_000_000, 500, 1_000_400), 500);
    assert_eq!(clock.extrapolate(1_001_400), Some(500 + 1_200));
    // This read's bracket spans 2 ms: it was switched out inside the syscall.
    assert_eq!(clock.rebase(1_002_000, 2_000, 3_002_000), 2_000);
    assert_eq!(clock.extrapolate(3_002_100), None);
    assert_eq!(clock.rebase(3_002_100, 2_100, 3_002_500), 2_100);
    assert_eq!(clock.extrapolate(3_003_000), Some(2_100 + 700));
}

#[test]
fn the_fast_path_fields_hold_what_read_uses() {
    let scale = TscScale::from_hz(2_500_000_000);
    let mut clock = TscGatedClock::open(scale);
    clock.read();
    let fields = TscGatedClock::FAST_PATH;
    let at = &clock as *const TscGatedClock as *const u8;
    // SAFETY: every offset lies inside `clock` (offset_of!), aligned for its field, and nothing
    // writes the clock while the value is read.
    let word = |offset: usize| unsafe { at.add(offset).cast::<u64>().read() };
    assert_eq!(word(fields.last_tsc), clock.gated.last_tsc);
    assert_eq!(word(fields.gate_ticks), clock.gated.gate_ticks);
    assert_eq!(word(fields.arithmetic.mult), scale.ticks_to_ns(1 << 32));
    // The assembly's reading at a TSC just after the last read: what `extrapolate` gives. (A
    // read switched out itself leaves the base unreliable until the next one: read again.)
    let arithmetic = fields.arithmetic;
    for _ in 0..1000 {
        let tsc = word(fields.last_tsc) + 1_000;
        let elapsed = tsc - word(arithmetic.base_tsc);
        let expected = (word(arithmetic.base_seq) == u64::from(fields.no_page)
            && elapsed < word(arithmetic.resample_ticks))
        .then(|| {
            word(arithmetic.base_ns)
                + ((u128::from(elapsed) * u128::from(word(arithmetic.mult))) >> 32) as u64
        });
        assert_eq!(clock.gated.extrapolate(tsc), expected);
        if expected.is_some() {
            let at = &clock as *const TscGatedClock as *const u8;
            // SAFETY: as above.
            assert_eq!(unsafe { at.add(fields.last_tsc).cast::<u64>().read() }, tsc);
            return;
        }
        clock.read();
    }
    panic!("the clock never extrapolated");
}
