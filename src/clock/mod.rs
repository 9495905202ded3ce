//! Per-thread CPU clocks. One small interface: [`choose`] once at start-up, then per thread
//! [`ThreadClock::open`], [`ThreadClock::read`], [`ThreadClock::close`].
//!
//! INTERFACE CONTRACT (used by the rest of the agent): keep these names and signatures stable; extend freely.
//!
//! | clock | reads | cost here | counts blocked time? |
//! |---|---|---|---|
//! | `cycles` | rdpmc via the perf mmap page (read() if not allowed) | no PMU on these VMs | no |
//! | `task-clock` | read() of a perf SW task-clock fd, steal paid back by a CLOCK_THREAD_CPUTIME_ID read per 250 µs of running | ~0.6 µs | no |
//! | `thread-cputime` | clock_gettime(CLOCK_THREAD_CPUTIME_ID) | ~0.5 µs | no |
//! | `tsc` | rdtsc, scaled | 10–25 ns (host-dependent) | **yes** (wall time: wrong for blocking natives) |
//! | `tsc-hybrid` | rdtsc while the task-clock page's seqlock is unchanged, CLOCK_THREAD_CPUTIME_ID after a switch or 250 µs of running | rdtsc + ~4 ns | no |
//! | `tsc-gated` | rdtsc deltas for intervals under 30 µs without a switch (seen in the thread's rseq area, or taken as none), CLOCK_THREAD_CPUTIME_ID after each switch, ending every longer interval and after 250 µs; no perf event | rdtsc + a few ns (as tsc-hybrid) | no |
//!
//! - `auto` tries cycles (only with user-space rdpmc), then tsc-hybrid (only with an invariant TSC:
//!   `constant_tsc` and `nonstop_tsc`, and only if the page's seqlock is seen to move across a sleep),
//!   then tsc-gated (perf events denied, invariant counter), then thread-cputime. [`ClockChoice::reason`] says what was picked and why the others were not.
//! - `cycles` counts user-space cycles only when perf_event_paranoid ≥ 2 and the process lacks
//!   CAP_PERFMON (then time in syscalls is missing); ns are cycles at the TSC rate.
//! - The TSC frequency is calibrated once per process ([`tsc_calibration`]): a frequency the kernel or
//!   hypervisor states is used when a 2 ms measurement against CLOCK_MONOTONIC_RAW agrees with it,
//!   otherwise a 20 ms measurement.
//! - Lazy kernel resources: a `tsc-hybrid` thread opens its perf event only once it needs switch
//!   detection (1 ms of CPU, or repeatedly seen off the CPU), a `task-clock` thread at its first
//!   crossing; until then both read CLOCK_THREAD_CPUTIME_ID, which their values extend.
//! - Failures: an explicit `clock=` that cannot be used falls back (one stderr line); a thread whose
//!   clock cannot be opened (EMFILE, EACCES, ENOENT, ...) falls back for that thread only (one stderr
//!   line per clock and failure class per process). Descriptors are released by `close` or drop.

mod cycles;
pub(crate) mod mmap_page;
mod perf;
mod probe;
mod remote;
mod switch_marker;
mod task_clock;
mod thread_cputime;
mod tsc;
mod tsc_gated;
mod tsc_hybrid;
mod warn;

use cycles::CyclesClock;
use task_clock::TaskClock;
use thread_cputime::ThreadCputime;
use tsc::{TscClock, TscScale};
use tsc_gated::TscGatedClock;
use tsc_hybrid::TscHybridClock;

pub use remote::RemoteCpu;
pub(crate) use remote::{thread_clock_id, thread_cpu_ns, RestOfThread};
pub use thread_cputime::read_clock;
pub use tsc::measure_hz as measure_tsc_hz;
pub use tsc::Calibration as TscCalibration;

/// The most a read can step back below an earlier read on the same thread. `tsc-hybrid`,
/// `tsc-gated` and `task-clock` step back at an exact read that finds their extrapolation (TSC or
/// task-clock deltas) counted hypervisor steal (tsc-gated: or a switch-out hidden in a short
/// interval); extrapolation never runs longer than this past an exact read. Other clocks never
/// step back.
pub const MAX_STEP_BACK_NS: u64 = tsc_hybrid::RESAMPLE_NS;

/// The clocks the agent can use (`clock=` option values).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClockKind {
    /// Core cycles of the thread (perf `PERF_COUNT_HW_CPU_CYCLES`) at the TSC rate.
    Cycles,
    /// The kernel's task-clock of the thread, read from its perf mmap page.
    TaskClock,
    /// `CLOCK_THREAD_CPUTIME_ID`, exact, one vDSO-less syscall per read.
    ThreadCputime,
    /// The TSC: wall time, not CPU time.
    Tsc,
    /// TSC deltas while the thread stays on its CPU, exact CPU-time reads after a switch.
    TscHybrid,
    /// TSC deltas for short intervals, an exact CPU-time read ending every long one: no perf event.
    TscGated,
}

impl ClockKind {
    /// The `clock=` value.
    pub fn name(self) -> &'static str {
        match self {
            ClockKind::Cycles => "cycles",
            ClockKind::TaskClock => "task-clock",
            ClockKind::ThreadCputime => "thread-cputime",
            ClockKind::Tsc => "tsc",
            ClockKind::TscHybrid => "tsc-hybrid",
            ClockKind::TscGated => "tsc-gated",
        }
    }

    /// Every clock, in `clock=` documentation order.
    pub fn all() -> [ClockKind; 6] {
        [
            ClockKind::Cycles,
            ClockKind::TaskClock,
            ClockKind::ThreadCputime,
            ClockKind::Tsc,
            ClockKind::TscHybrid,
            ClockKind::TscGated,
        ]
    }

    /// Parse a `clock=` value (not `auto`, which is a [`ClockRequest`]).
    pub fn from_name(name: &str) -> Option<ClockKind> {
        ClockKind::all()
            .into_iter()
            .find(|kind| kind.name() == name)
    }

    /// Whether its readings are CLOCK_THREAD_CPUTIME_ID nanoseconds themselves (thread-cputime,
    /// and tsc-hybrid and task-clock, which extrapolate from exact CPU-time reads): then any
    /// reader of the thread's CPU-time clock id is on the same timeline.
    pub(crate) fn on_cpu_time_timeline(self) -> bool {
        matches!(
            self,
            ClockKind::ThreadCputime
                | ClockKind::TscHybrid
                | ClockKind::TscGated
                | ClockKind::TaskClock
        )
    }

    /// Whether the value at open and the final reading (at close) are `CLOCK_THREAD_CPUTIME_ID`
    /// readings, so that the process accounting can take them instead of reading it again.
    pub(crate) fn ends_read_thread_cputime(self) -> bool {
        matches!(
            self,
            ClockKind::ThreadCputime | ClockKind::TscHybrid | ClockKind::TscGated
        )
    }

    /// Whether the clock needs a per-thread perf event.
    pub(crate) fn uses_perf_events(self) -> bool {
        matches!(
            self,
            ClockKind::Cycles | ClockKind::TaskClock | ClockKind::TscHybrid
        )
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// What the user asked for with `clock=`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ClockRequest {
    /// The best clock this machine offers (see `probe`).
    #[default]
    Auto,
    /// This clock, or the documented fallback when it cannot open.
    Exactly(ClockKind),
}

impl ClockRequest {
    /// Parse a `clock=` value, `auto` included.
    pub(crate) fn from_name(name: &str) -> Option<ClockRequest> {
        if name == "auto" {
            Some(ClockRequest::Auto)
        } else {
            ClockKind::from_name(name).map(ClockRequest::Exactly)
        }
    }
}

/// The clock chosen at start-up, and why (shown in the report).
#[derive(Clone, Debug)]
pub struct ClockChoice {
    /// The clock.
    pub kind: ClockKind,
    /// Why it was chosen (and why others were not), for the report.
    pub reason: String,
    /// Calibrated TSC frequency, when a TSC-based clock is used (also the cycles→ns rate of `cycles`).
    pub tsc_hz: Option<u64>,
}

impl ClockChoice {
    /// One line for the report: the clock, why, and the TSC frequency when one is used.
    pub fn describe(&self) -> String {
        match self.tsc_hz {
            Some(hz) => format!(
                "clock={} ({} {:.3} MHz): {}",
                self.kind.name(),
                crate::arch::COUNTER_NAME,
                hz as f64 / 1e6,
                self.reason
            ),
            None => format!("clock={}: {}", self.kind.name(), self.reason),
        }
    }
}

/// Probe once and pick a clock. Degrades (with one line on stderr) when an explicitly requested
/// clock cannot be used; `Auto` degrades silently and explains itself in `reason`.
/// The choice made by [`choose_in_background`].
static CHOSEN: std::sync::OnceLock<ClockChoice> = std::sync::OnceLock::new();

/// Make the choice on a thread of its own, beside the JVM's start-up: its probes open perf events
/// (the first one in a quiet system waits 8–10 ms for the kernel to switch its scheduler hooks on),
/// sleep 200 µs to see a context switch, and may measure the TSC. Read it with [`chosen`].
/// `on_start` runs first on that thread (the process accounting counts it as the agent's).
pub fn choose_in_background(request: ClockRequest, on_start: fn()) {
    let spawned = std::thread::Builder::new()
        .name("nativeacct-clock-probe".into())
        .spawn(move || {
            on_start();
            let choice =
                std::panic::catch_unwind(|| choose(request)).unwrap_or_else(|_| ClockChoice {
                    kind: ClockKind::ThreadCputime,
                    reason: "clock probing failed; clock_gettime(CLOCK_THREAD_CPUTIME_ID)".into(),
                    tsc_hz: None,
                });
            let _ = CHOSEN.set(choice);
        });
    if spawned.is_err() {
        let _ = CHOSEN.set(choose(request));
    }
}

/// The choice of [`choose_in_background`], waiting for it if the probe still runs.
pub fn chosen() -> &'static ClockChoice {
    CHOSEN.wait()
}

/// Probe the clocks and choose one now, on the calling thread.
pub fn choose(request: ClockRequest) -> ClockChoice {
    probe::choose(request)
}

/// `tsc-hybrid` threads that blocked or switched so often that they kept the gate they started on
/// or went back to it (see `tsc_hybrid::SWITCHES_PER_CPU_MS_FOR_GATE`).
static MOVED_TO_GATE: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Whether the calling thread, at `cpu_ns` of CPU time, blocked more than
/// [`SWITCHES_PER_CPU_MS_FOR_GATE`] times per ms of it since it started (the kernel's count of its
/// voluntary switches: one `getrusage`, about 0.5 µs).
fn switches_often(cpu_ns: u64) -> bool {
    thread_cputime::own_voluntary_switches()
        .is_some_and(|switches| switches * 1_000_000 > SWITCHES_PER_CPU_MS_FOR_GATE * cpu_ns)
}

/// How many `tsc-hybrid` threads kept or went back to the gate so far.
pub(crate) fn moved_to_gate() -> u64 {
    MOVED_TO_GATE.load(std::sync::atomic::Ordering::Relaxed)
}

/// The switch rate above which a `tsc-hybrid` thread moves to the gate, per ms of its CPU.
pub(crate) const SWITCHES_PER_CPU_MS_FOR_GATE: u64 = tsc_hybrid::SWITCHES_PER_CPU_MS_FOR_GATE;

/// The stated TSC rate checked over the run (see `tsc::check_over_run`).
pub(crate) fn tsc_check_over_run() -> Option<(u64, f64, f64)> {
    tsc::check_over_run()
}

/// The counter's effective resolution in ticks (see `tsc::observed_step_ticks`).
pub(crate) fn counter_step_ticks() -> u64 {
    tsc::observed_step_ticks()
}

/// The TSC calibration used by TSC-based clocks, done once per process: about 2 ms when a
/// measurement confirms a frequency the kernel or hypervisor states, 20 ms otherwise.
pub fn tsc_calibration() -> Option<&'static TscCalibration> {
    tsc::calibration()
}

/// Where an extrapolation from the last exact read keeps its state (byte offsets): a reading
/// at counter value `tsc` is `base_ns + (tsc - base_tsc) * mult >> 32` while the clock's sequence
/// still equals `base_seq` and `tsc - base_tsc` is below `resample_ticks`.
#[derive(Clone, Copy)]
pub(crate) struct ExtrapolationFields {
    pub(crate) base_seq: usize,
    pub(crate) base_tsc: usize,
    pub(crate) base_ns: usize,
    pub(crate) resample_ticks: usize,
    pub(crate) mult: usize,
}

impl ExtrapolationFields {
    /// The same fields, for an extrapolation that sits `offset` bytes into something else.
    pub(crate) const fn at(self, offset: usize) -> ExtrapolationFields {
        ExtrapolationFields {
            base_seq: offset + self.base_seq,
            base_tsc: offset + self.base_tsc,
            base_ns: offset + self.base_ns,
            resample_ticks: offset + self.resample_ticks,
            mult: offset + self.mult,
        }
    }
}

/// Where a [`ThreadClock`] keeps the state of `tsc-hybrid`'s fast path (byte offsets from the
/// clock), for an assembly copy of that read. The clock is `tsc-hybrid` when the byte at `tag` is
/// `tag_value`. It extrapolates (TSC read first) while the `u32` at `lock` in the page whose
/// address is at `page` is the sequence; otherwise the clock's own read is due.
pub(crate) struct HybridFields {
    pub(crate) tag: usize,
    pub(crate) tag_value: u8,
    pub(crate) page: usize,
    pub(crate) lock: usize,
    pub(crate) arithmetic: ExtrapolationFields,
}

/// Where a [`ThreadClock`] keeps the state of `tsc-gated`'s fast path (byte offsets from the
/// clock): the clock is `tsc-gated` when the byte at [`HybridFields::tag`] is [`GATED_TAG`]. It
/// extrapolates, with `no_page` as the sequence, while the TSC moved less than the `u64` at
/// `gate_ticks` since the one at `last_tsc` and the `u64` whose address is at `marker_slot`
/// equals the one at `marker_value` (read after the TSC), and then stores the TSC at `last_tsc`.
pub(crate) struct GatedFields {
    pub(crate) last_tsc: usize,
    pub(crate) gate_ticks: usize,
    /// The switch marker: the address of the word to compare, and the value it must hold.
    pub(crate) marker_slot: usize,
    pub(crate) marker_value: usize,
    pub(crate) arithmetic: ExtrapolationFields,
    pub(crate) no_page: u32,
}

/// [`HybridFields`] of a [`ThreadClock`]. `Imp` has a primitive representation, so it is laid out
/// as a `repr(C)` union of `repr(C)` structs that each start with the `u8` tag: each clock follows
/// the tag at its own alignment.
pub(crate) const HYBRID_FIELDS: HybridFields = {
    let at = std::mem::offset_of!(ThreadClock, imp);
    let clock = at + std::mem::align_of::<TscHybridClock>();
    HybridFields {
        tag: at,
        tag_value: Imp::TSC_HYBRID,
        page: clock + TscHybridClock::PAGE_FIELD,
        lock: mmap_page::PageView::LOCK_OFFSET,
        arithmetic: tsc_hybrid::Extrapolation::FIELDS.at(clock + TscHybridClock::ARITHMETIC_FIELD),
    }
};

/// The tag of a `tsc-gated` [`ThreadClock`] (see [`GatedFields`]).
pub(crate) const GATED_TAG: u8 = Imp::TSC_GATED;

/// [`GatedFields`] of a [`ThreadClock`] (see [`HYBRID_FIELDS`]).
pub(crate) const GATED_FIELDS: GatedFields = {
    let clock = std::mem::offset_of!(ThreadClock, imp) + std::mem::align_of::<TscGatedClock>();
    let fields = TscGatedClock::FAST_PATH;
    GatedFields {
        last_tsc: clock + fields.last_tsc,
        gate_ticks: clock + fields.gate_ticks,
        marker_slot: clock + fields.marker_slot,
        marker_value: clock + fields.marker_value,
        arithmetic: fields.arithmetic.at(clock),
        no_page: fields.no_page,
    }
};

// An explicit tag: `read` tests it with one byte compare (a niche-encoded tag costs a few
// instructions more to decode, at every crossing). The default clocks come first: a tag of 0 is
// tested first, with no compare.
#[repr(u8)]
enum Imp {
    TscHybrid(TscHybridClock) = Imp::TSC_HYBRID,
    TscGated(TscGatedClock) = Imp::TSC_GATED,
    Tsc(TscClock),
    Cycles(CyclesClock),
    TaskClock(TaskClock),
    ThreadCputime(ThreadCputime),
}

impl Imp {
    /// The tags of the clocks whose fast path the inline crossing paths copy (see
    /// [`HYBRID_FIELDS`]).
    const TSC_HYBRID: u8 = 0;
    const TSC_GATED: u8 = 1;
}

/// A clock for the calling thread. Open it on the thread it measures and call [`read`](Self::read)
/// only there (rdtsc bases, rdpmc and CLOCK_THREAD_CPUTIME_ID refer to the caller). It may be moved
/// into a heap context and dropped elsewhere (dropping closes it); another thread reads the owner's
/// CPU time through a [`RemoteCpu`].
pub struct ThreadClock {
    imp: Imp,
    /// Why this thread runs a different clock than the one chosen (per-thread degradation).
    fallback: Option<Box<str>>,
    /// The reading taken at open.
    opened_at: u64,
    /// `tsc-hybrid` on the gate, before its perf event: it opens the event once the thread has run
    /// [`GROW_AFTER_CPU_NS`] of CPU.
    young: bool,
}

/// CPU time after which a `tsc-hybrid` thread opens its perf event: by then the ~7 µs of opening,
/// mapping and closing it cost under 1 % of the thread's time. Until then it runs on tsc-gated's
/// gate, which holds no kernel resource.
pub const GROW_AFTER_CPU_NS: u64 = 1_000_000;

impl ThreadClock {
    /// Open for the calling thread. Never fails: degrades (cycles → tsc-hybrid → thread-cputime,
    /// others → thread-cputime) with one stderr line per clock and failure class per process.
    /// `tsc-hybrid` and `task-clock` open no kernel resource here: tsc-hybrid starts on
    /// tsc-gated's gate and opens its perf event once the thread has run [`GROW_AFTER_CPU_NS`]
    /// without blocking often (see `tsc_hybrid`), task-clock at the first [`read`](Self::read).
    pub fn open(choice: &ClockChoice) -> ThreadClock {
        let mut kind = choice.kind;
        let mut fallback: Option<String> = None;
        loop {
            match open_kind(kind, choice) {
                Ok(mut imp) => {
                    let opened_at = match &mut imp {
                        Imp::TaskClock(clock) => clock.value_at_open(),
                        Imp::TscHybrid(clock) => clock.value_at_open(),
                        Imp::TscGated(clock) => clock.value_at_open(),
                        Imp::Tsc(clock) => clock.read(),
                        Imp::Cycles(clock) => clock.read(),
                        Imp::ThreadCputime(clock) => clock.read(),
                    };
                    return ThreadClock {
                        young: kind == ClockKind::TscHybrid,
                        imp,
                        fallback: fallback.map(String::into_boxed_str),
                        opened_at,
                    };
                }
                Err(failure) => {
                    let next = degrade(kind, &failure, &mut fallback);
                    kind = next;
                }
            }
        }
    }

    /// The reading taken at open, without reading again (and without opening anything).
    pub(crate) fn value_at_open(&self) -> u64 {
        self.opened_at
    }

    /// Nanoseconds of this thread's CPU time (or of wall time for `tsc`). Monotonic per thread,
    /// except that `tsc-hybrid`, `tsc-gated` and `task-clock` may step back by up to [`MAX_STEP_BACK_NS`] to pay
    /// back steal:
    /// take differences as signed. Owner thread only. After `close`, returns the value at close
    /// (thread-cputime and tsc, which hold no resources, keep reading).
    #[inline(always)]
    pub fn read(&mut self) -> u64 {
        // The TSC clocks are inlined into the caller; the others cost a syscall or a seqlock loop
        // anyway, so they stay out of line to keep the caller small.
        match &mut self.imp {
            Imp::TscHybrid(clock) => match clock.extrapolate_now() {
                Some(ns) => ns,
                None => self.exact_then_adapt(),
            },
            Imp::TscGated(clock) => match clock.extrapolate_now() {
                Some(ns) => ns,
                None => self.exact_then_adapt(),
            },
            Imp::Tsc(clock) => clock.read(),
            _ => self.read_out_of_line(),
        }
    }

    /// The exact read of `tsc-hybrid` or `tsc-gated`, then `tsc-hybrid`'s one step of life, if due:
    /// a young thread that has run [`GROW_AFTER_CPU_NS`] opens its perf event unless it blocks
    /// often; a grown one that switches often goes back to the gate for good.
    #[cold]
    #[inline(never)]
    fn exact_then_adapt(&mut self) -> u64 {
        let ns = match &mut self.imp {
            Imp::TscHybrid(clock) => clock.exact_now(),
            Imp::TscGated(clock) => clock.exact_now(),
            _ => return self.read_out_of_line(),
        };
        match &self.imp {
            Imp::TscGated(clock)
                if self.young && ns.saturating_sub(clock.value_at_open()) >= GROW_AFTER_CPU_NS =>
            {
                self.young = false;
                if switches_often(ns) {
                    // The event would cost it more than the gate, and once opened, even closed, it
                    // leaves the kernel a per-thread perf context to switch at every switch.
                    MOVED_TO_GATE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                } else {
                    self.grow_up(clock.scale());
                }
            }
            Imp::TscHybrid(clock) if clock.wants_gate() => {
                // Dropping the hybrid clock closes its perf event. The gated clock opens with an
                // exact read on the same CPU-time timeline, a moment after `ns`.
                self.imp = Imp::TscGated(TscGatedClock::open(clock.scale()));
                MOVED_TO_GATE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
            _ => {}
        }
        ns
    }

    /// A young `tsc-hybrid` thread opens its perf event; if it cannot, it stays on the gate.
    fn grow_up(&mut self, scale: TscScale) {
        match TscHybridClock::open(scale) {
            // Its exact read at open follows the gate's last one on the same CPU-time timeline.
            Ok(hybrid) => self.imp = Imp::TscHybrid(hybrid),
            Err(error) => {
                warn::warn_once(ClockKind::TscHybrid, error.class(), || {
                    format!(
                        "nativeacct: clock tsc-hybrid unavailable for a thread ({error}); such threads stay on tsc-gated's gate"
                    )
                });
                self.fallback = Some(format!("tsc-hybrid: {error}").into_boxed_str());
            }
        }
    }

    #[inline(never)]
    fn read_out_of_line(&mut self) -> u64 {
        match &mut self.imp {
            Imp::TscHybrid(clock) => clock.read(),
            Imp::TscGated(clock) => clock.read(),
            Imp::Tsc(clock) => clock.read(),
            Imp::Cycles(clock) => clock.read(),
            Imp::TaskClock(clock) => match clock.read() {
                Ok(ns) => ns,
                Err(error) => {
                    // The event could not be opened at the thread's first crossing: the same
                    // fallback as at open, on the same (CPU-time) timeline.
                    let mut fallback = self.fallback.take().map(String::from);
                    let next = degrade(ClockKind::TaskClock, &error.into(), &mut fallback);
                    self.fallback = fallback.map(String::into_boxed_str);
                    self.imp = Imp::ThreadCputime(ThreadCputime::open());
                    debug_assert_eq!(next, ClockKind::ThreadCputime);
                    self.read()
                }
            },
            Imp::ThreadCputime(clock) => clock.read(),
        }
    }

    /// Release file descriptors and mappings. Idempotent. Dropping the clock does the same.
    pub fn close(&mut self) {
        match &mut self.imp {
            Imp::TscHybrid(clock) => clock.close(),
            Imp::TscGated(clock) => clock.close(),
            Imp::Cycles(clock) => clock.close(),
            Imp::TaskClock(clock) => clock.close(),
            Imp::Tsc(_) | Imp::ThreadCputime(_) => {}
        }
    }

    /// The clock this thread actually uses (differs from the choice after per-thread degradation).
    pub fn kind(&self) -> ClockKind {
        match &self.imp {
            Imp::TscGated(_) if self.young => ClockKind::TscHybrid,
            Imp::Cycles(_) => ClockKind::Cycles,
            Imp::TaskClock(_) => ClockKind::TaskClock,
            Imp::ThreadCputime(_) => ClockKind::ThreadCputime,
            Imp::Tsc(_) => ClockKind::Tsc,
            Imp::TscHybrid(_) => ClockKind::TscHybrid,
            Imp::TscGated(_) => ClockKind::TscGated,
        }
    }

    /// Why this thread degraded from the chosen clock, if it did.
    pub fn fallback_reason(&self) -> Option<&str> {
        self.fallback.as_deref()
    }

    /// For `tsc-hybrid`: how many reads took the exact (syscall) path because they came after a
    /// context switch. For `tsc-gated`: how many ended an interval longer than its gate (30 µs).
    /// 0 for other clocks.
    pub fn switch_rebases(&self) -> u64 {
        match &self.imp {
            Imp::TscHybrid(clock) => clock.switch_rebases(),
            Imp::TscGated(clock) => clock.long_intervals(),
            _ => 0,
        }
    }

    /// For `tsc-hybrid`: how many reads took the exact path only because the thread had run for
    /// the resample period (250 µs) without a switch. For `task-clock`: how many reads re-based on
    /// CPU time (the first one included). For `tsc-gated`: its other exact reads (at open, after
    /// 250 µs of short intervals). 0 for other clocks.
    pub fn resamples(&self) -> u64 {
        match &self.imp {
            Imp::TscHybrid(clock) => clock.resamples(),
            Imp::TscGated(clock) => clock.resamples(),
            Imp::TaskClock(clock) => clock.resamples(),
            _ => 0,
        }
    }

    /// Whether the clock holds a per-thread perf event now (tsc-hybrid once grown up, task-clock
    /// after its first read, cycles always).
    pub fn holds_perf_event(&self) -> bool {
        match &self.imp {
            Imp::TscHybrid(clock) => clock.holds_event(),
            Imp::TaskClock(clock) => clock.holds_event(),
            Imp::Cycles(_) => true,
            Imp::Tsc(_) | Imp::ThreadCputime(_) | Imp::TscGated(_) => false,
        }
    }

    /// For `cycles`: the raw cycle count of this thread (owner thread only).
    pub fn read_cycles(&self) -> Option<u64> {
        match &self.imp {
            Imp::Cycles(clock) => clock.read_cycles(),
            _ => None,
        }
    }
}

/// One stderr line per clock and failure class, the reason recorded; returns the clock to try next.
fn degrade(kind: ClockKind, failure: &OpenFailure, fallback: &mut Option<String>) -> ClockKind {
    let next = probe::per_thread_fallback(kind);
    warn::warn_once(kind, failure.class, || {
        format!(
            "nativeacct: clock {} unavailable for a thread ({}); such threads use {}",
            kind.name(),
            failure.message,
            next.name()
        )
    });
    let step = format!("{}: {}", kind.name(), failure.message);
    *fallback = Some(match fallback.take() {
        Some(earlier) => format!("{earlier}; {step}"),
        None => step,
    });
    next
}

/// Why a clock could not be opened for a thread.
struct OpenFailure {
    class: usize,
    message: String,
}

impl From<perf::OpenError> for OpenFailure {
    fn from(error: perf::OpenError) -> OpenFailure {
        OpenFailure {
            class: error.class(),
            message: error.to_string(),
        }
    }
}

fn tsc_scale(choice: &ClockChoice) -> Result<TscScale, OpenFailure> {
    if !tsc::available() {
        return Err(OpenFailure {
            class: warn::NO_TSC_CLASS,
            message: "no TSC on this architecture".into(),
        });
    }
    choice
        .tsc_hz
        .map(TscScale::from_hz)
        .or_else(|| tsc::calibration().map(TscCalibration::scale))
        // The failure only when it fails: every thread's clock opens here, and its message
        // is an allocation.
        .ok_or_else(|| OpenFailure {
            class: warn::NO_TSC_CLASS,
            message: "TSC could not be calibrated".into(),
        })
}

fn open_kind(kind: ClockKind, choice: &ClockChoice) -> Result<Imp, OpenFailure> {
    Ok(match kind {
        ClockKind::Cycles => Imp::Cycles(CyclesClock::open(tsc_scale(choice)?)?),
        ClockKind::TaskClock => Imp::TaskClock(TaskClock::open()),
        ClockKind::ThreadCputime => Imp::ThreadCputime(ThreadCputime::open()),
        ClockKind::Tsc => Imp::Tsc(TscClock::open(tsc_scale(choice)?)),
        // Young: on the gate until the thread has run long enough to pay for its perf event.
        ClockKind::TscHybrid => Imp::TscGated(TscGatedClock::open(tsc_scale(choice)?)),
        ClockKind::TscGated => Imp::TscGated(TscGatedClock::open(tsc_scale(choice)?)),
    })
}

#[cfg(test)]
mod tests;
