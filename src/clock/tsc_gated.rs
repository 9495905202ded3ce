//! `tsc-gated`: CPU time without perf events. Counter deltas for short intervals, an exact
//! CLOCK_THREAD_CPUTIME_ID read ending every long one and, where it is seen, every one with a switch.
//!
//! Where glibc registered the thread's rseq area, a [`SwitchMarker`] also shows whether the thread
//! was switched out since its last read: an interval with a switch ends with an exact read however
//! short it is, so the gate below no longer hides a brief block. The gate stays for longer
//! intervals, which bounds what steal and interrupt time counted by the counter can move between
//! the states before an exact read pays it back.
//!
//! Where `perf_event_open` is denied (a container's seccomp profile, `perf_event_paranoid` ≥ 3,
//! gVisor, qemu-user), nothing tells a thread that it was switched out. But a thread that was
//! switched out for a while makes the interval between two of its crossings at least that long in
//! counter time. So an interval shorter than [`GATE_NS`] is taken as all on-CPU, and counted as its
//! counter delta. A longer interval ends with one exact read. That read gives the CPU time since
//! the last exact read exactly; the long interval is charged that minus the short intervals charged
//! in between. As in tsc-hybrid, a read also re-bases after [`RESAMPLE_NS`] of counter time, so
//! the steal counted by counter deltas is paid back within 250 µs.
//!
//! Error bound. Off-CPU time (a switch-out, an interrupt's time not charged to the thread, steal)
//! inside a short interval is counted as CPU: at most [`GATE_NS`] per interval, and in all at most
//! the [`RESAMPLE_NS`] of counter time extrapolated since the last exact read. The next exact read
//! pays all of it back, charged to the interval that read ends (a step back of at most
//! [`RESAMPLE_NS`], [`super::MAX_STEP_BACK_NS`]). The thread's total is exact at every exact read;
//! its split moves by the off-CPU time that short intervals hid.
//!
//! The gate, measured (`scripts/bench-gate`, 2-core KVM guest, load average 4–5): a thread reading
//! the counter back to back, with an exact read after every jump of more than 1 µs, saw off-CPU
//! time inside jumps shorter than 20, 30, 50 and 100 µs of 83, 89, 302 and 395 µs per second of
//! CPU quiet, and 247, 250, 315 and 399 beside 2 CPU hogs: under 0.03 % of CPU time, below the
//! split's resolution. A preemption by another runnable thread lasts a time slice (milliseconds),
//! far beyond any gate. The cost of the gate is one exact read (~0.45 µs) per interval longer than
//! it: at most 0.45 / 30 = 1.5 % of a thread whose every interval just exceeds 30 µs, nothing for
//! crossing-heavy code whose intervals are shorter. 30 µs keeps both under 1.5 %.
//!
//! Natives that block briefly. A native that blocks for less than the gate at every call (a lock
//! handed over at once, a worker pool signalling a condition variable) would be counted its wait,
//! again and again, until an exact read paid it back to some other interval. So each exact read
//! also checks what the short intervals since the last one counted beyond the CPU time: when that
//! hidden time exceeds 1 % of the counter time since the last exact read, the gate narrows to
//! [`NARROW_GATE_NS`] for the next 64 exact reads, twice as many each time hidden time is found
//! again after it widened. A thread that keeps blocking briefly thus runs with the narrow gate
//! almost always, and its split stays within about 1 point; a thread that never does keeps the
//! wide gate. Random interruptions (about 20 a second of 10–20 µs here) narrow it now and then.

use super::switch_marker::SwitchMarker;
use super::thread_cputime::ThreadCputime;
use super::tsc::{rdtsc, TscScale};
use super::tsc_hybrid::{ExactRead, Extrapolation, RESAMPLE_NS};

/// An interval of counter time shorter than this is taken as all on-CPU; a longer one ends with an
/// exact read. Chosen from the measurement above.
pub(crate) const GATE_NS: u64 = 30_000;

/// An exact read that took longer than this (an interrupt or hypervisor steal inside it, where a
/// switch marker shows no switch) has an unknown place in counter time, so the next read is exact
/// too. A read is placed at the middle of its bracket, so one within the bound is placed within
/// half of it. A read takes 0.5–1 µs natively; of 2,000,000 on the 2-core dev VM, 0.01 % took
/// 1–5 µs (interrupts) and fewer 10–20 µs. Without a marker the gate is the bound (under qemu an
/// emulated read takes longer than this every time).
const READ_BOUND_NS: u64 = 3_000;

/// What a thread's [`SwitchMarker`] said around an exact read.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct SwitchesSeen {
    /// The thread was switched out since the last read: the interval this read ends is long.
    pub(crate) before: bool,
    /// It was switched out during the read itself: the read's place in counter time is unknown.
    pub(crate) during: bool,
}

/// The gate of a thread whose short intervals were found hiding off-CPU time: its natives block
/// for less than [`GATE_NS`] (a lock handed over at once, a condition variable signalled by a
/// worker pool), or the hypervisor steals its vCPU often. A context switch alone takes a few µs, so
/// a block shorter than this is rare; intervals of this length or more then pay an exact read
/// each (at most 0.45 / 5 = 9 % of a thread whose every interval is just over 5 µs).
pub(crate) const NARROW_GATE_NS: u64 = 5_000;

/// An exact read finds short intervals hiding off-CPU time when what they counted exceeds the
/// thread's CPU time by more than 1/[`HIDDEN_SHARE`] of the counter time since the last exact read
/// (and by [`HIDDEN_MIN_NS`], above the exact read's own uncertainty): then the gate narrows.
const HIDDEN_SHARE: u64 = 100;
const HIDDEN_MIN_NS: u64 = 2_000;

/// Exact reads the gate stays narrow after its first narrowing; each time hidden time is found
/// again once it widened, the period doubles (up to [`MOST_NARROW_READS`]), so a thread that keeps
/// blocking briefly spends ever less of its time with the wide gate.
const FIRST_NARROW_READS: u32 = 64;
const MOST_NARROW_READS: u32 = 1 << 20;

/// The lock value the arithmetic sees: there is no page, so every base "matches" until an exact
/// read finds itself switched out (then [`SWITCHED_IN_READ`] forces the next read exact too).
const NO_PAGE: u32 = 0;
const SWITCHED_IN_READ: u32 = 1;

/// How the gate tells a switched-out interval, for the clock's report line.
pub(crate) fn how_switches_are_seen() -> String {
    match super::switch_marker::unavailable_reason() {
        None => format!(
            "counter deltas for intervals shorter than {} us without a switch, which each \
             thread's rseq area shows (a switch clears a marker the thread sets, no system call); \
             an exact CLOCK_THREAD_CPUTIME_ID read after each switch, ending every longer interval \
             and after 250 us",
            GATE_NS / 1000
        ),
        Some(why) => format!(
            "counter deltas for intervals shorter than {} us (a thread switched out makes its \
             interval longer), an exact CLOCK_THREAD_CPUTIME_ID read ending every longer interval \
             and after 250 us of short ones (switches are not seen directly: {why})",
            GATE_NS / 1000
        ),
    }
}

/// The clock's arithmetic, separate from the counter and the kernel so a simulation can drive it.
#[derive(Debug)]
pub(crate) struct Gated {
    arithmetic: Extrapolation,
    /// The gate now: `wide_ticks`, or `narrow_ticks` for `narrow_left` more exact reads.
    gate_ticks: u64,
    wide_ticks: u64,
    narrow_ticks: u64,
    narrow_left: u32,
    /// Exact reads of the next narrow period (0 before the first).
    narrow_period: u32,
    /// Times the gate narrowed from wide.
    narrowings: u64,
    /// The counter at the end of the last read: where the current interval started.
    last_tsc: u64,
    /// Exact reads that ended an interval longer than the gate.
    long_intervals: u64,
    /// Whether the last exact read was not switched out itself (its place in counter time is known).
    base_reliable: bool,
    /// An exact read this long is taken as switched out itself (u64::MAX: the gate is the bound).
    read_bound_ticks: u64,
}

impl Gated {
    pub(crate) fn new(scale: TscScale, gate_ns: u64, resample_ns: u64) -> Gated {
        Gated {
            arithmetic: Extrapolation::new(scale, resample_ns),
            gate_ticks: scale.ns_to_ticks(gate_ns),
            wide_ticks: scale.ns_to_ticks(gate_ns),
            narrow_ticks: scale.ns_to_ticks(gate_ns.min(NARROW_GATE_NS)),
            narrow_left: 0,
            narrow_period: 0,
            narrowings: 0,
            last_tsc: 0,
            long_intervals: 0,
            base_reliable: false,
            read_bound_ticks: u64::MAX,
        }
    }

    /// Where [`extrapolate`](Self::extrapolate) finds the last read's counter value, the gate
    /// and the arithmetic, from the `Gated`'s address.
    const LAST_TSC_FIELD: usize = std::mem::offset_of!(Gated, last_tsc);
    const GATE_TICKS_FIELD: usize = std::mem::offset_of!(Gated, gate_ticks);
    const ARITHMETIC_FIELD: usize = std::mem::offset_of!(Gated, arithmetic);

    /// The fast path: CPU ns at counter `tsc` when the interval since the last read is short and the
    /// base is fresh, or `None` when an exact read is due.
    #[inline(always)]
    pub(crate) fn extrapolate(&mut self, tsc: u64) -> Option<u64> {
        if tsc.wrapping_sub(self.last_tsc) >= self.gate_ticks {
            return None;
        }
        let ns = self.arithmetic.extrapolate(tsc, NO_PAGE)?;
        self.last_tsc = tsc;
        Some(ns)
    }

    /// Re-base on an exact read taken between counter values `before` and `after`.
    #[cfg(test)]
    pub(crate) fn rebase(&mut self, before: u64, cpu_ns: u64, after: u64) -> u64 {
        self.rebase_seen(before, cpu_ns, after, SwitchesSeen::default())
    }

    /// [`Gated::rebase`], with what a switch marker saw around the read.
    #[cold]
    pub(crate) fn rebase_seen(
        &mut self,
        before: u64,
        cpu_ns: u64,
        after: u64,
        seen: SwitchesSeen,
    ) -> u64 {
        let bracket = after.wrapping_sub(before);
        let read_at = before.wrapping_add(bracket / 2);
        // (The read at open ends no interval.)
        let long = self.arithmetic.exact_reads() > 0
            && (seen.before || before.wrapping_sub(self.last_tsc) >= self.gate_ticks);
        if long {
            self.long_intervals += 1;
        }
        // What the short intervals since the last exact read counted beyond the CPU time: the
        // off-CPU time they hid (all of it when this read ends a short interval; when it ends a
        // long one, at least this much, the long interval's own CPU time being unknown).
        let short_until = if long { self.last_tsc } else { read_at };
        if let Some(counted) = self
            .arithmetic
            .extrapolated_at(short_until)
            .filter(|_| self.base_reliable)
        {
            let hidden = counted.saturating_sub(cpu_ns);
            let window = self.arithmetic.since_base_ns(read_at);
            self.adapt_gate(hidden >= HIDDEN_MIN_NS && hidden * HIDDEN_SHARE > window);
        }
        // A read that took longer than the gate (or the read bound) was switched out or stolen
        // itself: its place in counter time is unknown, so the next read is exact too.
        let seq_after = if seen.during || bracket >= self.gate_ticks.min(self.read_bound_ticks) {
            SWITCHED_IN_READ
        } else {
            NO_PAGE
        };
        self.last_tsc = after;
        self.base_reliable = seq_after == NO_PAGE;
        self.arithmetic.rebase(ExactRead {
            seq_before: NO_PAGE,
            tsc: read_at,
            cpu_ns,
            seq_after,
        })
    }

    /// Narrow the gate when an exact read found hidden off-CPU time; widen it again after the
    /// narrow period's exact reads found none.
    fn adapt_gate(&mut self, found_hidden: bool) {
        if found_hidden {
            if self.narrow_left == 0 {
                self.narrowings += 1;
                self.narrow_period = match self.narrow_period {
                    0 => FIRST_NARROW_READS,
                    period => period.saturating_mul(2).min(MOST_NARROW_READS),
                };
            }
            self.narrow_left = self.narrow_period;
            self.gate_ticks = self.narrow_ticks;
        } else if self.narrow_left > 0 {
            self.narrow_left -= 1;
            if self.narrow_left == 0 {
                self.gate_ticks = self.wide_ticks;
            }
        }
    }
}

/// The per-thread clock: [`Gated`] arithmetic over the counter and CLOCK_THREAD_CPUTIME_ID. Holds
/// no kernel resource.
#[derive(Debug)]
pub(crate) struct TscGatedClock {
    gated: Gated,
    marker: SwitchMarker,
    cputime: ThreadCputime,
    closed: bool,
    born: u64,
}

impl TscGatedClock {
    /// Where [`read`](Self::read)'s fast path finds its state, from the clock's address; the
    /// sequence it extrapolates with is [`NO_PAGE`].
    pub(crate) const FAST_PATH: super::GatedFields = {
        let gated = std::mem::offset_of!(TscGatedClock, gated);
        super::GatedFields {
            last_tsc: gated + Gated::LAST_TSC_FIELD,
            gate_ticks: gated + Gated::GATE_TICKS_FIELD,
            marker_slot: std::mem::offset_of!(TscGatedClock, marker) + SwitchMarker::SLOT_FIELD,
            marker_value: std::mem::offset_of!(TscGatedClock, marker) + SwitchMarker::VALUE_FIELD,
            arithmetic: Extrapolation::FIELDS.at(gated + Gated::ARITHMETIC_FIELD),
            no_page: NO_PAGE,
        }
    };

    /// Open for the calling thread, which alone reads it. The gate stays where the switch marker
    /// works: an interval longer than it still ends with an exact read, which bounds what
    /// hypervisor steal and interrupt time inside one interval can move between the two states.
    pub(crate) fn open(scale: TscScale) -> TscGatedClock {
        let marker = SwitchMarker::for_current_thread();
        let mut gated = Gated::new(scale, GATE_NS, RESAMPLE_NS);
        if marker.present() {
            gated.read_bound_ticks = scale.ns_to_ticks(READ_BOUND_NS);
        }
        let mut clock = TscGatedClock {
            gated,
            marker,
            cputime: ThreadCputime::open(),
            closed: false,
            born: 0,
        };
        clock.born = clock.exact_path();
        clock
    }

    /// Thread CPU ns. Fast path: one counter read, three compares, a multiply, one store.
    #[inline(always)]
    pub(crate) fn read(&mut self) -> u64 {
        match self.extrapolate_now() {
            Some(ns) => ns,
            None => self.exact_now(),
        }
    }

    /// The fast path of [`read`](Self::read) alone: `None` when an exact read is due.
    #[inline(always)]
    pub(crate) fn extrapolate_now(&mut self) -> Option<u64> {
        let tsc = rdtsc();
        if !self.marker.intact() {
            return None;
        }
        self.gated.extrapolate(tsc)
    }

    /// The slow path of [`read`](Self::read).
    pub(crate) fn exact_now(&mut self) -> u64 {
        self.exact_path()
    }

    /// The counter rate this clock converts with.
    pub(crate) fn scale(&self) -> TscScale {
        self.gated.arithmetic.scale()
    }

    #[cold]
    #[inline(never)]
    fn exact_path(&mut self) -> u64 {
        if self.closed {
            return self.gated.arithmetic.closed_ns();
        }
        let switched_before = !self.marker.intact();
        self.marker.arm();
        let before = rdtsc();
        let cpu_ns = self.cputime.read();
        let after = rdtsc();
        let during = !self.marker.intact();
        if during {
            self.marker.arm();
        }
        let seen = SwitchesSeen {
            before: switched_before,
            during,
        };
        self.gated.rebase_seen(before, cpu_ns, after, seen)
    }

    /// The exact reading taken at open.
    pub(crate) fn value_at_open(&self) -> u64 {
        self.born
    }

    /// Exact reads that ended an interval longer than the gate, or one with a switch.
    pub(crate) fn long_intervals(&self) -> u64 {
        self.gated.long_intervals
    }

    /// The other exact reads: at open, after the resample period, after a read switched out itself.
    pub(crate) fn resamples(&self) -> u64 {
        self.gated.arithmetic.exact_reads() - self.gated.long_intervals
    }

    /// The final read; reads after it return its value. Like any other read it extrapolates when
    /// the gate allows (an exact read here would be one more system call in every thread's life;
    /// what the thread runs after this is read exactly by the process's exit probe).
    pub(crate) fn close(&mut self) {
        if self.closed {
            return;
        }
        let final_ns = self.read();
        self.gated.arithmetic.close(final_ns);
        self.closed = true;
        // Reads after close never look at the thread's rseq area, which ends with the thread.
        self.marker = SwitchMarker::absent();
    }
}

#[cfg(test)]
mod tests;
