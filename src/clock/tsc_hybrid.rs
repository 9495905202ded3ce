//! `tsc-hybrid`: TSC deltas while the thread stays on its CPU, an exact task-clock read after it was
//! switched out.
//!
//! The kernel rewrites a per-thread perf event's mmap page, bumping its `lock` seqlock by 2, each
//! time the thread is scheduled back in (measured: one update per context switch, none while a thread
//! spins or makes non-blocking syscalls). So while `lock` is unchanged since the last exact read, the
//! thread has been running the whole time and its CPU time grew exactly as wall time did: a TSC delta.
//! When `lock` moved, the thread was off the CPU for an unknown part of the interval, and `read()` of
//! the task-clock fd gives the exact CPU time (about 0.6 µs, once per switch).

use super::mmap_page::PageView;
use super::perf::{EventKind, OpenError, PerfEvent};
use super::tsc::{rdtsc, TscScale};

/// `base_seq` value that no 32-bit lock can equal: forces an exact read.
const NO_BASE: u64 = u64::MAX;

#[derive(Debug)]
pub struct TscHybridClock {
    page: PageView,
    /// The page's `lock` when `base_ns`/`base_tsc` were taken, or [`NO_BASE`].
    base_seq: u64,
    base_tsc: u64,
    base_ns: u64,
    last_ns: u64,
    scale: TscScale,
    exact_reads: u64,
    event: PerfEvent,
}

impl TscHybridClock {
    pub fn open(scale: TscScale) -> Result<TscHybridClock, OpenError> {
        let event = PerfEvent::open_current_thread(EventKind::SwTaskClock, true)?;
        let page = event.page().expect("mapped on request");
        let mut clock = TscHybridClock {
            page,
            base_seq: NO_BASE,
            base_tsc: 0,
            base_ns: 0,
            last_ns: 0,
            scale,
            exact_reads: 0,
            event,
        };
        clock.resync();
        Ok(clock)
    }

    /// Thread CPU ns. Fast path: one rdtsc, one load of the page's lock, a multiply.
    #[inline(always)]
    pub fn read(&mut self) -> u64 {
        // The TSC is read before the lock: a switch-out before the rdtsc is followed by a switch-in
        // that bumps the lock before the load below executes (interrupts are precise).
        let tsc = rdtsc();
        if u64::from(self.page.lock()) == self.base_seq {
            let ns = self.base_ns + self.scale.ticks_to_ns(tsc.wrapping_sub(self.base_tsc));
            self.last_ns = ns;
            ns
        } else {
            self.resync()
        }
    }

    /// Exact task-clock read; re-bases the TSC extrapolation on it.
    #[cold]
    #[inline(never)]
    fn resync(&mut self) -> u64 {
        let seq_before = self.page.lock();
        let tsc_before = rdtsc();
        let Some(exact) = self.event.read_count() else {
            // Closed (or a failing fd): stay at the last value, keep taking this path.
            self.base_seq = NO_BASE;
            return self.last_ns;
        };
        let tsc_after = rdtsc();
        let seq_after = self.page.lock();
        // The kernel sampled the count somewhere inside the syscall: take the midpoint as its TSC.
        // Never go below a value already returned (extrapolation may have run slightly ahead).
        let ns = exact.max(self.last_ns);
        self.base_ns = ns;
        self.base_tsc = tsc_before.wrapping_add(tsc_after.wrapping_sub(tsc_before) / 2);
        self.base_seq = if seq_before == seq_after {
            u64::from(seq_after)
        } else {
            // Switched during the read: this base is unreliable, so re-read next time too.
            NO_BASE
        };
        self.last_ns = ns;
        self.exact_reads += 1;
        ns
    }

    /// Check, on the calling (owning) thread, the kernel behaviour this clock relies on: a blocking
    /// sleep switches the thread out, and the page's lock must have moved when it comes back.
    pub fn switch_moves_lock(&self) -> bool {
        let before = self.page.lock();
        std::thread::sleep(std::time::Duration::from_micros(200));
        self.page.lock() != before
    }

    /// Exact task-clock ns from any thread (VMDeath settlement). May be a little below the owner's
    /// last `read()`; callers should saturate.
    pub fn read_exact_ns(&self) -> Option<u64> {
        self.event.read_count()
    }

    /// How many reads had to take the exact (syscall) path.
    pub fn exact_reads(&self) -> u64 {
        self.exact_reads
    }

    pub fn close(&mut self) {
        // Point the fast path at a page whose lock never matches, before the real page goes away.
        self.page = PageView::closed();
        self.base_seq = NO_BASE;
        self.event.close();
    }
}
