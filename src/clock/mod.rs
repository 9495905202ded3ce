//! Per-thread CPU clocks. One small interface: [`choose`] once at start-up, then per thread
//! [`ThreadClock::open`], [`ThreadClock::read`], [`ThreadClock::close`].
//!
//! INTERFACE CONTRACT (used by the rest of the agent): keep these names and signatures stable; extend freely.

/// The clocks the agent can use (`clock=` option values).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClockKind {
    Cycles,
    TaskClock,
    ThreadCputime,
    Tsc,
    TscHybrid,
}

impl ClockKind {
    pub fn name(self) -> &'static str {
        match self {
            ClockKind::Cycles => "cycles",
            ClockKind::TaskClock => "task-clock",
            ClockKind::ThreadCputime => "thread-cputime",
            ClockKind::Tsc => "tsc",
            ClockKind::TscHybrid => "tsc-hybrid",
        }
    }

    /// Every clock, in `clock=` documentation order.
    pub fn all() -> [ClockKind; 5] {
        [
            ClockKind::Cycles,
            ClockKind::TaskClock,
            ClockKind::ThreadCputime,
            ClockKind::Tsc,
            ClockKind::TscHybrid,
        ]
    }

    /// Parse a `clock=` value (not `auto`, which is a [`ClockRequest`]).
    pub fn from_name(name: &str) -> Option<ClockKind> {
        ClockKind::all().into_iter().find(|kind| kind.name() == name)
    }
}

/// What the user asked for with `clock=`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ClockRequest {
    #[default]
    Auto,
    Exactly(ClockKind),
}

/// The clock chosen at start-up, and why (shown in the report).
#[derive(Clone, Debug)]
pub struct ClockChoice {
    pub kind: ClockKind,
    pub reason: String,
    /// Calibrated TSC frequency, when a TSC-based clock is used.
    pub tsc_hz: Option<u64>,
}

/// Probe once and pick a clock. Degrades (with one line on stderr) when the request cannot be met.
pub fn choose(request: ClockRequest) -> ClockChoice {
    let _ = request;
    ClockChoice {
        kind: ClockKind::ThreadCputime,
        reason: "stub".into(),
        tsc_hz: None,
    }
}

/// A clock for the calling thread. Not `Send`: open, read and close it on the owning thread.
pub struct ThreadClock {
    kind: ClockKind,
}

impl ThreadClock {
    /// Open for the calling thread. Never fails: falls back to `thread-cputime`.
    pub fn open(choice: &ClockChoice) -> ThreadClock {
        let _ = choice;
        ThreadClock {
            kind: ClockKind::ThreadCputime,
        }
    }

    /// Nanoseconds of this thread's CPU time (or of wall time for `tsc`), monotonic per thread.
    #[inline]
    pub fn read(&mut self) -> u64 {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: clock_gettime writes only into `ts`, which is a valid timespec.
        unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
        ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
    }

    /// Release file descriptors and mappings. Idempotent.
    pub fn close(&mut self) {}

    pub fn kind(&self) -> ClockKind {
        self.kind
    }
}
