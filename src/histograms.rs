//! Latency histograms: native self time per call (per method and overall) and Java time per JNI upcall
//! (per function).
//!
//! Recording is per thread and lock-free: each context appends a packed `(kind, id, ns)` word to its
//! [`SampleLog`].
//! A full half of the log is drained into the process histograms by a background thread (or, if it
//! falls behind, by the owner under one lock, once per [`LOG_CAPACITY`] crossings). At ThreadEnd and
//! VMDeath the logs are drained completely, so every completed crossing lands in a histogram.

use hdrhistogram::Histogram;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

/// Samples a thread buffers before it takes the histogram lock.
pub(crate) const LOG_CAPACITY: usize = 2048;
/// Histogram range: 1 ns to 1000 s per crossing, 2 significant digits.
const MAX_NS: u64 = 1_000_000_000_000;
const SIGFIG: u8 = 2;
/// Memory for per-method histograms. Each one grows with the largest value it holds (about 1 KiB per
/// power of two above 256 ns) up to ~34 KiB for the full range; the budget counts that worst case, so
/// it is a hard bound: at most `METHOD_HISTOGRAM_BUDGET / 34 KiB` (~1900) methods get a histogram,
/// first come first served. Later methods are still counted exactly (calls, total and self time) and
/// in the overall histogram; they just have no per-method percentiles.
pub(crate) const METHOD_HISTOGRAM_BUDGET: usize = 64 << 20;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum SampleKind {
    /// Self time of one native-method call; id = method id.
    NativeSelf = 0,
    /// Java time of one JNI upcall; id = JNI function index.
    UpcallJava = 1,
}

/// One half of a [`SampleLog`].
struct Buffer {
    /// Packed samples (see [`pack`]): 8 bytes each, so a cache line carries 8 of them to the drainer.
    entries: Box<[AtomicU64]>,
    len: AtomicUsize,
}

/// Bits of a packed sample that hold the duration (enough for `MAX_NS`).
const NS_BITS: u32 = 44;
/// Bits that hold the id (enough for `MAX_METHODS` and the JNI function indexes).
const ID_BITS: u32 = 63 - NS_BITS;

/// `kind` in the top bit, the id below it, the duration (clamped to `MAX_NS`) at the bottom.
#[inline(always)]
fn pack(kind: SampleKind, id: u32, ns: u64) -> u64 {
    let id = (id as u64).min((1 << ID_BITS) - 1);
    ((kind as u64) << 63) | (id << NS_BITS) | ns.min(MAX_NS)
}

fn unpack(sample: u64) -> (SampleKind, u32, u64) {
    let kind = if sample >> 63 == 0 {
        SampleKind::NativeSelf
    } else {
        SampleKind::UpcallJava
    };
    let id = ((sample >> NS_BITS) & ((1 << ID_BITS) - 1)) as u32;
    (kind, id, sample & ((1 << NS_BITS) - 1))
}

impl Buffer {
    fn new() -> Buffer {
        Buffer {
            entries: (0..LOG_CAPACITY).map(|_| AtomicU64::new(0)).collect(),
            len: AtomicUsize::new(0),
        }
    }

    /// Record every published entry and empty the buffer. Caller holds [`LOCK`].
    fn drain_locked(&self, hist: &mut Histograms) {
        let len = self.len.load(Ordering::Acquire);
        if !hist.closed && !discarding_now() {
            for entry in &self.entries[..len] {
                match unpack(entry.load(Ordering::Relaxed)) {
                    (SampleKind::NativeSelf, id, ns) => hist.record_native(id, ns),
                    (SampleKind::UpcallJava, id, ns) => hist.record_upcall(id, ns),
                }
            }
        }
        self.len.store(0, Ordering::Release);
    }
}

const NO_PENDING: usize = usize::MAX;

/// A thread's buffer of samples: two halves. The owner fills the active half; a full half is handed
/// to the background drainer ([`drain_pending`]) and the owner goes on in the other one, so recording
/// into the histograms mostly happens off the application's threads. If the drainer falls behind, the
/// owner drains its full half itself under [`LOCK`].
pub(crate) struct SampleLog {
    buffers: [Buffer; 2],
    /// The half being filled. Written by the owner only.
    active: AtomicUsize,
    /// The full half waiting for the drainer, or `NO_PENDING`.
    pending: AtomicUsize,
}

impl Default for SampleLog {
    fn default() -> Self {
        SampleLog {
            buffers: [Buffer::new(), Buffer::new()],
            active: AtomicUsize::new(0),
            pending: AtomicUsize::new(NO_PENDING),
        }
    }
}

impl SampleLog {
    /// Owner thread only.
    #[inline]
    pub(crate) fn push(&self, kind: SampleKind, id: u32, ns: u64) {
        let mut active = self.active.load(Ordering::Relaxed);
        let mut len = self.buffers[active].len.load(Ordering::Relaxed);
        if len == LOG_CAPACITY {
            (active, len) = self.hand_over(active);
        }
        self.buffers[active].entries[len].store(pack(kind, id, ns), Ordering::Relaxed);
        // Publish the entry before a drainer can see it.
        self.buffers[active].len.store(len + 1, Ordering::Release);
    }

    /// The active half is full: give it to the drainer and switch halves, or drain it here if the
    /// other half is still waiting. Returns the half to write into and its length.
    #[cold]
    fn hand_over(&self, full: usize) -> (usize, usize) {
        if self.pending.load(Ordering::Acquire) == NO_PENDING {
            let next = 1 - full;
            self.active.store(next, Ordering::Relaxed);
            // The drainer emptied `next` before it cleared `pending` (Acquire above).
            self.pending.store(full, Ordering::Release);
            wake_drainer();
            (next, self.buffers[next].len.load(Ordering::Relaxed))
        } else {
            let mut hist = crate::sync::lock(&LOCK);
            self.buffers[full].drain_locked(&mut hist);
            (full, 0)
        }
    }

    /// Drain the half waiting for the drainer, if any. Caller holds [`LOCK`].
    fn drain_pending_locked(&self, hist: &mut Histograms) {
        let pending = self.pending.load(Ordering::Acquire);
        if pending != NO_PENDING {
            self.buffers[pending].drain_locked(hist);
            self.pending.store(NO_PENDING, Ordering::Release);
        }
    }

    /// Whether a full half waits for the background drainer.
    pub(crate) fn has_pending(&self) -> bool {
        self.pending.load(Ordering::Relaxed) != NO_PENDING
    }

    /// Move every buffered sample into the process histograms (the owner at thread end).
    pub(crate) fn drain(&self) {
        let mut hist = crate::sync::lock(&LOCK);
        self.drain_locked(&mut hist);
    }

    fn drain_locked(&self, hist: &mut Histograms) {
        self.drain_pending_locked(hist);
        let active = self.active.load(Ordering::Relaxed);
        self.buffers[active].drain_locked(hist);
    }
}

/// The background drainer: drains the full halves of `logs` (the live threads' logs, which the caller
/// keeps alive for the duration of the call).
pub(crate) fn drain_pending(logs: &[&SampleLog]) {
    let mut hist = crate::sync::lock(&LOCK);
    for log in logs {
        log.drain_pending_locked(&mut hist);
    }
}

static DRAINER: once_cell::sync::OnceCell<std::thread::Thread> = once_cell::sync::OnceCell::new();

fn wake_drainer() {
    if let Some(thread) = DRAINER.get() {
        thread.unpark();
    }
}

/// Start the background drainer thread; `sweep` drains the pending halves of every live thread.
/// Without it, owners drain their own logs.
/// `on_start` runs first on the drainer thread (the process accounting counts it as the agent's).
pub fn start_drainer(sweep: fn(), on_start: fn()) {
    let spawned = std::thread::Builder::new()
        .name("nativeacct-drain".into())
        .spawn(move || {
            on_start();
            loop {
                std::thread::park_timeout(std::time::Duration::from_millis(100));
                if std::panic::catch_unwind(sweep).is_err() {
                    crate::diag::line(
                        "internal error in the histogram drainer; threads drain their own samples",
                    );
                    return;
                }
            }
        });
    if let Ok(handle) = spawned {
        let _ = DRAINER.set(handle.thread().clone());
    }
}

thread_local! {
    /// Set while this thread runs the agent's own cost calibration on a private context.
    static DISCARDING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Run `f` (the start-up calibration, which drives a private context through 10^5 fake crossings)
/// with every sample this thread drains discarded, so that none of them reaches the histograms or the
/// stacks. Other threads are not affected.
pub(crate) fn discarding<T>(f: impl FnOnce() -> T) -> T {
    DISCARDING.with(|d| d.set(true));
    let result = f();
    DISCARDING.with(|d| d.set(false));
    result
}

/// Whether the calling thread is inside [`discarding`].
pub(crate) fn discarding_now() -> bool {
    DISCARDING.try_with(|d| d.get()).unwrap_or(false)
}

/// Hashes a dense u32 id with one multiplication: the drain looks up a histogram per sample, and
/// SipHash there cost more than recording the value.
#[derive(Default, Clone, Copy)]
pub(crate) struct IdHasher(u64);

impl std::hash::Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8 | b as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_u32(&mut self, id: u32) {
        self.0 = (id as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// A map keyed by method id or JNI function index.
pub(crate) type IdMap<V> = HashMap<u32, V, std::hash::BuildHasherDefault<IdHasher>>;

/// The process-wide histograms.
#[derive(Debug, Clone)]
pub(crate) struct Histograms {
    pub(crate) native_by_method: IdMap<Histogram<u64>>,
    pub(crate) native_overall: Histogram<u64>,
    pub(crate) upcall_by_function: IdMap<Histogram<u64>>,
    pub(crate) upcall_overall: Histogram<u64>,
    /// Methods whose samples went only to `native_overall` (the histogram budget was used up).
    pub(crate) methods_without_histogram: u64,
    refused: std::collections::HashSet<u32>,
    /// Set at VMDeath after the final drain: later samples are dropped.
    closed: bool,
}

fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, MAX_NS, SIGFIG).expect("valid histogram bounds")
}

/// A histogram that starts small and grows with the largest value recorded (at most to `MAX_NS`).
fn new_growing_histogram() -> Histogram<u64> {
    Histogram::new(SIGFIG).expect("valid histogram precision")
}

/// Record into a growing histogram (`saturating_record` would clamp instead of growing).
fn record_growing(h: &mut Histogram<u64>, ns: u64) {
    if h.record(ns).is_err() {
        h.saturating_record(ns);
    }
}

/// Bytes of a histogram grown to the full range: what the budget charges per method.
fn worst_case_histogram_bytes() -> usize {
    static BYTES: once_cell::sync::Lazy<usize> = once_cell::sync::Lazy::new(|| {
        new_histogram().distinct_values() * std::mem::size_of::<u64>()
    });
    *BYTES
}

/// How many per-method histograms fit in [`METHOD_HISTOGRAM_BUDGET`].
pub(crate) fn method_histogram_limit() -> usize {
    METHOD_HISTOGRAM_BUDGET / worst_case_histogram_bytes()
}

impl Histograms {
    fn new() -> Histograms {
        Histograms {
            native_by_method: IdMap::default(),
            native_overall: new_histogram(),
            upcall_by_function: IdMap::default(),
            upcall_overall: new_histogram(),
            methods_without_histogram: 0,
            refused: Default::default(),
            closed: false,
        }
    }

    /// Histograms read back from a saved report: closed, nothing is recorded into them.
    pub(crate) fn restored(
        native_overall: Histogram<u64>,
        upcall_overall: Histogram<u64>,
        native_by_method: IdMap<Histogram<u64>>,
        upcall_by_function: IdMap<Histogram<u64>>,
        methods_without_histogram: u64,
    ) -> Histograms {
        Histograms {
            native_by_method,
            native_overall,
            upcall_by_function,
            upcall_overall,
            methods_without_histogram,
            refused: Default::default(),
            closed: true,
        }
    }

    /// True for the histograms handed out at VMDeath (and for snapshots taken after it, whose
    /// per-method maps are empty because they moved to the final report).
    pub(crate) fn is_closed(&self) -> bool {
        self.closed
    }

    fn record_native(&mut self, method: u32, ns: u64) {
        let ns = ns.clamp(1, MAX_NS);
        // The overall histograms are summed from the per-key ones when handed out (`summed`), so a
        // sample is recorded once; only samples of methods without a histogram go there directly.
        if let Some(h) = self.native_by_method.get_mut(&method) {
            record_growing(h, ns);
        } else if self.native_by_method.len() < method_histogram_limit() {
            let mut h = new_growing_histogram();
            record_growing(&mut h, ns);
            self.native_by_method.insert(method, h);
        } else {
            // Budget used up: the method is counted once, however many samples it brings.
            self.native_overall.saturating_record(ns);
            if self.refused.insert(method) {
                self.methods_without_histogram += 1;
            }
        }
    }

    fn record_upcall(&mut self, function: u32, ns: u64) {
        let ns = ns.clamp(1, MAX_NS);
        record_growing(
            self.upcall_by_function
                .entry(function)
                .or_insert_with(new_growing_histogram),
            ns,
        );
    }

    /// A copy for reports: the overall histograms hold every sample (per-key ones added in).
    fn summed(
        &self,
        native_by_method: IdMap<Histogram<u64>>,
        upcall_by_function: IdMap<Histogram<u64>>,
    ) -> Histograms {
        let mut native_overall = self.native_overall.clone();
        for h in native_by_method.values() {
            let _ = native_overall.add(h);
        }
        let mut upcall_overall = self.upcall_overall.clone();
        for h in upcall_by_function.values() {
            let _ = upcall_overall.add(h);
        }
        Histograms {
            native_by_method,
            native_overall,
            upcall_by_function,
            upcall_overall,
            methods_without_histogram: self.methods_without_histogram,
            refused: Default::default(),
            closed: self.closed,
        }
    }
}

static LOCK: once_cell::sync::Lazy<Mutex<Histograms>> =
    once_cell::sync::Lazy::new(|| Mutex::new(Histograms::new()));

/// At VMDeath: drain the logs of the threads still alive, close, and hand out the histograms.
pub(crate) fn close(live_logs: &[&SampleLog]) -> Histograms {
    let mut hist = crate::sync::lock(&LOCK);
    for log in live_logs {
        log.drain_locked(&mut hist);
    }
    hist.closed = true;
    let native = std::mem::take(&mut hist.native_by_method);
    let upcall = std::mem::take(&mut hist.upcall_by_function);
    hist.summed(native, upcall)
}

/// A copy of the current histograms (for periodic interval snapshots); buffered samples not included.
pub(crate) fn snapshot() -> Histograms {
    let hist = crate::sync::lock(&LOCK);
    hist.summed(
        hist.native_by_method.clone(),
        hist.upcall_by_function.clone(),
    )
}

/// `read` the histograms so far in place, under their lock (a live exposition reads a few
/// numbers from each; copying them all would cost more than the rest of it). The overall ones hold
/// only the samples recorded straight into them; the per-key ones hold the rest.
pub(crate) fn read_locked<R>(read: impl FnOnce(&Histograms) -> R) -> R {
    read(&crate::sync::lock(&LOCK))
}

#[cfg(test)]
mod tests;
