//! `tsc-hybrid`: TSC deltas while the thread stays on its CPU, an exact CPU-time read after it was
//! switched out or had run for 250 µs.
//!
//! The kernel rewrites a per-thread perf event's mmap page, bumping its `lock` seqlock by 2, each
//! time the thread is scheduled back in (measured: one update per context switch, none while a thread
//! spins or makes non-blocking syscalls). So while the lock of the thread's task-clock page is
//! unchanged since the last exact read, the thread has been running the whole time and its CPU time
//! grew as wall time did: a TSC delta. When the lock moved, the thread was off the CPU for an unknown
//! part of the interval, and an exact read re-bases the clock.
//!
//! A thread gets its perf event only when it is worth it. It starts on tsc-gated's gate (no kernel
//! resource) and opens the event after 1 ms of its CPU (`ThreadClock`); a thread that then keeps
//! being switched in more than [`SWITCHES_PER_CPU_MS_FOR_GATE`] times per ms of its CPU goes back to
//! the gate for good, since the event costs it about 1 µs at every switch.
//!
//! The exact read is CLOCK_THREAD_CPUTIME_ID rather than `read()` of the task-clock fd: it is cheaper
//! here (~0.5 µs vs ~0.6 µs) and, unlike the raw task-clock count, it does not count time the hypervisor stole
//! from the vCPU (measured: task-clock ran up to 4.7 % ahead of it on this loaded host).
//!
//! Steal. TSC deltas also count time the hypervisor stole from the vCPU, which CPU time does not.
//! An exact read pays that back: it may return less than the last extrapolated value, and the
//! caller charges the step back to the interval that read ends. (Standing still until CPU time
//! caught up, which kept the clock monotonic, charged it to the intervals after the read instead;
//! with alternating short calls those are mostly of one kind, and in the simulation below that
//! tilted the split by up to 1 point, against 0.1 with the step back.)
//!
//! If only switches forced exact reads, the steal of many intervals would be paid back by the few
//! that contain switches, and long intervals contain them more often: in a CI run with 25 % steal,
//! workers with 6 ms native calls and 4 ms bytecode stretches came out 2.7 points less native than
//! their ground truth. So a read also re-bases after [`RESAMPLE_NS`] of uninterrupted running: an
//! interval longer than that is always exact, and a step back is never more than what
//! extrapolation added since the last exact read, which is under [`RESAMPLE_NS`]. (Scaling TSC
//! deltas by a steal share measured on switch-free intervals was tried and dropped: on these VMs
//! such intervals carry far more steal than the average, 50 % vs 21 % in one run, so the scaled
//! clock tilted short calls instead.)

use super::mmap_page::PageView;
use super::perf::{EventKind, OpenError, PerfEvent};
use super::thread_cputime::ThreadCputime;
use super::tsc::{rdtsc, TscScale};

/// `base_seq` value that no 32-bit lock can equal: forces an exact read.
const NO_BASE: u64 = u64::MAX;

/// Uninterrupted running after which a read re-bases anyway, so that no more than this much TSC
/// time (and the steal in it) is ever extrapolated. One CLOCK_THREAD_CPUTIME_ID read (~0.4 µs) per
/// 250 µs of a thread's crossings costs about 0.2 %.
pub(crate) const RESAMPLE_NS: u64 = 250_000;

/// What one exact read saw: the page lock before and after, the TSC at the read, the CPU time.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ExactRead {
    pub(crate) seq_before: u32,
    pub(crate) tsc: u64,
    pub(crate) cpu_ns: u64,
    pub(crate) seq_after: u32,
}

/// The clock's arithmetic, separate from the TSC and the kernel so a simulation can drive it.
#[derive(Debug)]
pub(crate) struct Extrapolation {
    /// The page's `lock` when `base_ns`/`base_tsc` were taken, or [`NO_BASE`].
    base_seq: u64,
    base_tsc: u64,
    base_ns: u64,
    /// What a closed clock keeps returning: its value at close.
    closed_ns: u64,
    scale: TscScale,
    resample_ticks: u64,
    /// Exact reads forced by a context switch (or a first read), and by the resample period.
    switch_rebases: u64,
    resamples: u64,
}

impl Extrapolation {
    /// Where [`extrapolate`](Self::extrapolate) finds its state, from the arithmetic's address.
    pub(crate) const FIELDS: super::ExtrapolationFields = {
        use std::mem::offset_of;
        super::ExtrapolationFields {
            base_seq: offset_of!(Extrapolation, base_seq),
            base_tsc: offset_of!(Extrapolation, base_tsc),
            base_ns: offset_of!(Extrapolation, base_ns),
            resample_ticks: offset_of!(Extrapolation, resample_ticks),
            mult: offset_of!(Extrapolation, scale) + TscScale::MULT_OFFSET,
        }
    };

    /// `resample_ns` of uninterrupted running forces an exact read (`u64::MAX`: only switches do).
    pub(crate) fn new(scale: TscScale, resample_ns: u64) -> Extrapolation {
        Extrapolation {
            base_seq: NO_BASE,
            base_tsc: 0,
            base_ns: 0,
            closed_ns: 0,
            scale,
            resample_ticks: scale.ns_to_ticks(resample_ns),
            switch_rebases: 0,
            resamples: 0,
        }
    }

    /// CPU ns at TSC `tsc` with the page's lock at `seq`; `exact` performs an exact read when the
    /// thread was switched out since the base or ran for the resample interval (`None`: the clock
    /// is closed, return its value at close).
    #[cfg(test)]
    #[inline(always)]
    pub(crate) fn read(
        &mut self,
        tsc: u64,
        seq: u32,
        exact: impl FnOnce() -> Option<ExactRead>,
    ) -> u64 {
        match self.extrapolate(tsc, seq) {
            Some(ns) => ns,
            None => match exact() {
                Some(read) => self.rebase(read),
                None => self.closed_ns,
            },
        }
    }

    /// The fast path alone: CPU ns at `tsc`, or `None` when an exact read is due.
    #[inline(always)]
    pub(crate) fn extrapolate(&self, tsc: u64, seq: u32) -> Option<u64> {
        let elapsed = tsc.wrapping_sub(self.base_tsc);
        (u64::from(seq) == self.base_seq && elapsed < self.resample_ticks)
            .then(|| self.base_ns + self.scale.ticks_to_ns(elapsed))
    }

    /// What extrapolating from the last base to `tsc` would give, whatever the lock did (`None`
    /// before the first base): compared with an exact read, it shows the time off the CPU.
    pub(crate) fn extrapolated_at(&self, tsc: u64) -> Option<u64> {
        (self.base_seq != NO_BASE || self.base_tsc != 0)
            .then(|| self.base_ns + self.scale.ticks_to_ns(tsc.wrapping_sub(self.base_tsc)))
    }

    /// Re-base on an exact read.
    #[cold]
    #[inline(never)]
    pub(crate) fn rebase(&mut self, read: ExactRead) -> u64 {
        if u64::from(read.seq_before) == self.base_seq {
            self.resamples += 1;
        } else {
            self.switch_rebases += 1;
        }
        self.base_ns = read.cpu_ns;
        self.base_tsc = read.tsc;
        self.base_seq = if read.seq_before == read.seq_after {
            u64::from(read.seq_after)
        } else {
            // Switched during the read: this base is unreliable, so re-read next time too.
            NO_BASE
        };
        read.cpu_ns
    }

    /// The counter rate it converts with.
    pub(crate) fn scale(&self) -> TscScale {
        self.scale
    }

    /// Nanoseconds of counter time from the last base to `tsc`.
    pub(crate) fn since_base_ns(&self, tsc: u64) -> u64 {
        self.scale.ticks_to_ns(tsc.wrapping_sub(self.base_tsc))
    }

    /// Exact reads so far, of both kinds.
    pub(crate) fn exact_reads(&self) -> u64 {
        self.switch_rebases + self.resamples
    }

    /// What a closed clock returns.
    pub(crate) fn closed_ns(&self) -> u64 {
        self.closed_ns
    }

    /// From now on, reads go the exact way and, finding the clock closed, return `final_ns`.
    pub(crate) fn close(&mut self, final_ns: u64) {
        self.base_seq = NO_BASE;
        self.closed_ns = final_ns;
    }
}

/// A thread switched in more often than this per ms of its CPU time goes to the gate
/// ([`super::tsc_gated`]): its perf event costs about 1 µs of the thread's CPU at every switch
/// (measured: 2 threads handing a token back and forth on one CPU, 1.15 µs more per round with a
/// counting task-clock event on one of them), 0.5 % of its CPU at this rate and 25 % in a
/// park/unpark hand-off; the gate costs at most one exact read per interval longer than it, which
/// a switch forces here too.
pub(crate) const SWITCHES_PER_CPU_MS_FOR_GATE: u64 = 4;
/// Switch rebases between two looks at a thread's switch rate: the rate is that of the last this
/// many switches.
const SWITCHES_PER_LOOK: u64 = 64;

/// The clock of a thread with its perf event open (for its page: switch detection). A thread
/// starts on tsc-gated's gate, which holds no kernel resource, and moves here once it has run
/// [`super::GROW_AFTER_CPU_NS`] of CPU (see `ThreadClock`): most threads a server creates live for
/// microseconds, and the event (~7 µs to open, map, unmap and close) would cost them more than
/// everything else the agent does.
#[derive(Debug)]
pub(crate) struct TscHybridClock {
    page: PageView,
    arithmetic: Extrapolation,
    cputime: ThreadCputime,
    /// Taken at close.
    event: Option<PerfEvent>,
    /// The exact reading at open.
    born: u64,
    /// Where the current look at the thread's switch rate began: (CPU ns, switch rebases).
    look_from: (u64, u64),
    /// The thread switches so often that the gate would cost it less (see
    /// [`SWITCHES_PER_CPU_MS_FOR_GATE`]): its owner moves it there.
    wants_gate: bool,
}

impl TscHybridClock {
    /// Where [`read`](Self::read)'s fast path finds the page's address and its arithmetic, from
    /// the clock's address.
    pub(crate) const PAGE_FIELD: usize =
        std::mem::offset_of!(TscHybridClock, page) + PageView::POINTER_OFFSET;
    pub(crate) const ARITHMETIC_FIELD: usize = std::mem::offset_of!(TscHybridClock, arithmetic);

    /// Open for the calling thread: its perf event, then an exact read.
    pub(crate) fn open(scale: TscScale) -> Result<TscHybridClock, OpenError> {
        let event = PerfEvent::open_current_thread(EventKind::SwTaskClock, true)?;
        let mut clock = TscHybridClock::over(scale, event.page().expect("mapped on request"));
        clock.event = Some(event);
        clock.born = clock.exact_path(false);
        clock.look_from = (clock.born, clock.arithmetic.switch_rebases);
        Ok(clock)
    }

    /// The clock over `page`, before its first read.
    fn over(scale: TscScale, page: PageView) -> TscHybridClock {
        TscHybridClock {
            page,
            arithmetic: Extrapolation::new(scale, RESAMPLE_NS),
            cputime: ThreadCputime::open(),
            event: None,
            born: 0,
            look_from: (0, 0),
            wants_gate: false,
        }
    }

    /// Thread CPU ns. Fast path: one rdtsc, one load of the page's lock, a multiply, a compare.
    #[inline(always)]
    pub(crate) fn read(&mut self) -> u64 {
        match self.extrapolate_now() {
            Some(ns) => ns,
            None => self.exact_now(),
        }
    }

    /// The fast path of [`read`](Self::read) alone: `None` when an exact read is due.
    #[inline(always)]
    pub(crate) fn extrapolate_now(&self) -> Option<u64> {
        // The TSC is read before the lock: a switch-out before the rdtsc is followed by a switch-in
        // that bumps the lock before the load below executes (interrupts are precise).
        let tsc = rdtsc();
        let seq = self.page.lock();
        self.arithmetic.extrapolate(tsc, seq)
    }

    /// The slow path of [`read`](Self::read): an exact read, which may find that the thread
    /// [`wants_gate`](Self::wants_gate).
    pub(crate) fn exact_now(&mut self) -> u64 {
        self.exact_path(true)
    }

    /// An exact read (or the value at close), then a look at the switch rate if `look`.
    #[cold]
    #[inline(never)]
    fn exact_path(&mut self, look: bool) -> u64 {
        if self.event.is_none() {
            return self.arithmetic.closed_ns;
        }
        let read = exact_read(&self.page, &self.cputime);
        let ns = self.arithmetic.rebase(read);
        if look {
            self.look_at_switch_rate(ns);
        }
        ns
    }

    /// Every [`SWITCHES_PER_LOOK`] switch rebases: did they come faster than
    /// [`SWITCHES_PER_CPU_MS_FOR_GATE`] per ms of its CPU?
    fn look_at_switch_rate(&mut self, ns: u64) {
        let (cpu_from, switches_from) = self.look_from;
        let switches = self.arithmetic.switch_rebases - switches_from;
        if switches < SWITCHES_PER_LOOK {
            return;
        }
        let cpu = ns.saturating_sub(cpu_from);
        self.wants_gate |= switches * 1_000_000 > SWITCHES_PER_CPU_MS_FOR_GATE * cpu;
        self.look_from = (ns, self.arithmetic.switch_rebases);
    }

    /// Whether the thread switches so often that its owner should move it to the gate (see
    /// [`SWITCHES_PER_CPU_MS_FOR_GATE`]).
    pub(crate) fn wants_gate(&self) -> bool {
        self.wants_gate
    }

    /// The TSC rate this clock converts with.
    pub(crate) fn scale(&self) -> TscScale {
        self.arithmetic.scale()
    }

    /// The exact reading taken at open.
    pub(crate) fn value_at_open(&self) -> u64 {
        self.born
    }

    /// Whether the perf event is open (until close).
    pub(crate) fn holds_event(&self) -> bool {
        self.event.is_some()
    }

    /// Check, on the calling (owning) thread, the kernel behaviour this clock relies on: a blocking
    /// sleep switches the thread out, and the page's lock must have moved when it comes back.
    pub(crate) fn switch_moves_lock(&self) -> bool {
        let before = self.page.lock();
        std::thread::sleep(std::time::Duration::from_micros(200));
        self.event.is_some() && self.page.lock() != before
    }

    /// How many reads took the exact (syscall) path because the thread had been switched out.
    pub(crate) fn switch_rebases(&self) -> u64 {
        self.arithmetic.switch_rebases
    }

    /// How many reads took the exact path only because the resample period had passed.
    pub(crate) fn resamples(&self) -> u64 {
        self.arithmetic.resamples
    }

    /// The final read (exact), then release the event.
    pub(crate) fn close(&mut self) {
        if self.event.is_none() {
            return;
        }
        let final_ns = self.exact_path(false);
        // Point the fast path at a page whose lock never matches, before the real page goes away.
        self.page = PageView::closed();
        self.arithmetic.close(final_ns);
        if let Some(mut event) = self.event.take() {
            event.close();
        }
    }
}

/// One exact read, bracketed by the page lock and the TSC. The kernel sampled the time somewhere
/// inside the syscall: the midpoint stands for its TSC.
#[cold]
fn exact_read(page: &PageView, cputime: &ThreadCputime) -> ExactRead {
    let seq_before = page.lock();
    let tsc_before = rdtsc();
    let cpu_ns = cputime.read();
    let tsc_after = rdtsc();
    let seq_after = page.lock();
    ExactRead {
        seq_before,
        tsc: tsc_before.wrapping_add(tsc_after.wrapping_sub(tsc_before) / 2),
        cpu_ns,
        seq_after,
    }
}

#[cfg(test)]
mod tests;
