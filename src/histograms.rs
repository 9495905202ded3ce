//! Latency histograms: native self time per call (per method and overall) and Java time per JNI upcall
//! (per function).
//!
//! Recording is per thread, lock-free and needs no thread of its own: each context counts a crossing
//! into a fixed bucket array of its own for that method or JNI function (a [`Slot`]), with
//! HdrHistogram's bucket layout at 2 significant digits: the bucket index is a leading-zeros count, a
//! shift and an add, and recording is one increment, made once the thread has written down 64
//! crossings (see [`ThreadLatency::record`]). The slots are merged into the process's
//! HdrHistograms when the thread ends, and read (without resetting them) for live dumps, snapshots,
//! `interval=` logs and at VMDeath. Merging records each bucket's lowest value with its count, so
//! the HdrHistograms hold exactly what recording every value into them would have.
//!
//! Two cases take the lock and record into the process's histograms at once: a crossing longer than
//! a slot covers (2^22 ns, about 4.2 ms: the lock costs nothing next to it), and a method or function
//! for which no slot is left ([`SLOTS_PER_THREAD`] per thread, [`SLOT_BUDGET`] bytes in the process).
//! Slots are handed out first come, first served, and a thread's start-up alone crosses a hundred or
//! more natives, so the per-thread limit is high: a hot method found after start-up must still get one.

use crate::bit_words;
use hdrhistogram::Histogram;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::{Mutex, OnceLock};

/// Histogram range: 1 ns to 1000 s per crossing, 2 significant digits.
const MAX_NS: u64 = 1_000_000_000_000;
const SIGFIG: u8 = 2;
/// Memory for per-method histograms. Each one grows with the largest value it holds (about 1 KiB per
/// power of two above 256 ns) up to ~34 KiB for the full range; the budget counts that worst case, so
/// it is a hard bound: at most `METHOD_HISTOGRAM_BUDGET / 34 KiB` (~1900) methods get a histogram,
/// first come first served. Later methods are still counted exactly (calls, total and self time) and
/// in the overall histogram; they just have no per-method percentiles.
pub(crate) const METHOD_HISTOGRAM_BUDGET: usize = 64 << 20;

/// Buckets of a slot: HdrHistogram's layout for 2 significant digits and a lowest value of 1 (256
/// buckets of 1 ns, then 128 per power of two), up to 2^22 ns.
pub(crate) const SLOT_BUCKETS: usize = 2048;
/// Slots one thread may hold, in the order its methods and JNI functions are first crossed.
pub(crate) const SLOTS_PER_THREAD: usize = 1024;
/// A thread's slot cells come in chunks of this many, allocated as needed: a short thread that
/// crosses a few keys allocates one small chunk.
const SLOTS_PER_CHUNK: usize = 32;
const CHUNKS_PER_THREAD: usize = SLOTS_PER_THREAD / SLOTS_PER_CHUNK;
/// Bytes of slots in the whole process (8 KiB each, allocated on a key's first crossing and kept
/// with the context when a later thread reuses it).
pub(crate) const SLOT_BUDGET: usize = 64 << 20;
const SLOT_BYTES: usize = SLOT_BUCKETS * std::mem::size_of::<u32>();
/// The first crossing a slot cannot count: the lowest value of the bucket past its array.
const SLOT_NS: u64 = 1 << 22;
const TOUCHED_WORDS: usize = SLOT_BUCKETS / 64;
const _: () = assert!(TOUCHED_WORDS <= 64, "one summary bit per touched word");
static SLOTS_ALLOCATED: AtomicUsize = AtomicUsize::new(0);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum SampleKind {
    /// Self time of one native-method call; id = method id.
    NativeSelf = 0,
    /// Java time of one JNI upcall; id = JNI function index.
    UpcallJava = 1,
}

/// HdrHistogram's counts index of `ns` at 2 significant digits (`sub_bucket_count` 256, unit 1).
#[inline(always)]
pub(crate) fn bucket_index(ns: u64) -> usize {
    // The power of two above the first 256 values: 0 for ns < 256. `ns | 255` is never 0, so
    // this is one `bsr`.
    let octave = (ns | 255).ilog2() - 7;
    (((octave as u64) << 7) + (ns >> octave)) as usize
}

/// The lowest value of bucket `index` (the inverse of [`bucket_index`]).
pub(crate) const fn bucket_value(index: usize) -> u64 {
    if index < 256 {
        index as u64
    } else {
        let octave = (index >> 7) - 1;
        (((index & 127) + 128) as u64) << octave
    }
}

/// One method's or JNI function's crossings on one thread, by bucket.
pub(crate) struct Slot {
    counts: Box<[AtomicU32; SLOT_BUCKETS]>,
    /// One bit per bucket that holds a count, so that merging visits only those: a short thread's
    /// few crossings are merged without reading the buckets around them.
    touched: [AtomicU64; TOUCHED_WORDS],
    /// One bit per word of `touched` that has a bit set: a merge reads those words only (a short
    /// thread's slot has one or two; passes over all 32 made the retire of a `bench-churn` thread
    /// 1,500 instructions longer, by callgrind).
    touched_words: AtomicU64,
    /// `(kind << 32) | id` of the key it counts.
    key: AtomicU64,
}

impl Slot {
    fn new() -> Slot {
        Slot {
            counts: Box::new([const { AtomicU32::new(0) }; SLOT_BUCKETS]),
            touched: [const { AtomicU64::new(0) }; TOUCHED_WORDS],
            touched_words: AtomicU64::new(0),
            key: AtomicU64::new(0),
        }
    }

    fn key(&self) -> (SampleKind, u32) {
        let key = self.key.load(Relaxed);
        let kind = if key >> 32 == 0 {
            SampleKind::NativeSelf
        } else {
            SampleKind::UpcallJava
        };
        (kind, key as u32)
    }

    /// `each(bucket index, count)` for every bucket that holds a count.
    #[inline]
    fn each_count(&self, mut each: impl FnMut(usize, u32)) {
        bit_words::each_set_bit(std::slice::from_ref(&self.touched_words), |word| {
            bit_words::each_set_bit(std::slice::from_ref(&self.touched[word]), |bit| {
                let index = word * 64 + bit;
                // A bucket that wrapped at 2^32 is touched and holds 0 (see `count`).
                let count = self.counts[index].load(Relaxed);
                if count != 0 {
                    each(index, count);
                }
            });
        });
    }

    fn is_untouched(&self) -> bool {
        self.touched_words.load(Relaxed) == 0
    }

    /// Forget which buckets were touched (their counts were zeroed). Owner thread only.
    fn clear_touched(&self) {
        bit_words::each_set_bit(std::slice::from_ref(&self.touched_words), |word| {
            self.touched[word].store(0, Relaxed);
        });
        self.touched_words.store(0, Relaxed);
    }

    /// Count one crossing in bucket `bucket` (below [`SLOT_BUCKETS`]). Owner thread only.
    #[inline(always)]
    fn count(&self, bucket: usize) {
        debug_assert!(bucket < SLOT_BUCKETS);
        // Every caller's bucket is below SLOT_BUCKETS (a crossing under SLOT_NS): the mask only
        // spares the bounds check, a compare and a branch per count.
        let bucket = bucket & (SLOT_BUCKETS - 1);
        let count = &self.counts[bucket];
        let before = count.load(Relaxed);
        let next = before.wrapping_add(1);
        count.store(next, Relaxed);
        if before == 0 {
            // The bucket's first count since it was last merged and reset: a bucket that holds a
            // count was marked then (a wrapped one stays marked). Testing the count just loaded
            // costs no other load, and a store at every count would chain the counts of a batch
            // through one word's store-to-load forwarding.
            let word = bucket / 64;
            let touched = &self.touched[word];
            touched.store(touched.load(Relaxed) | 1 << (bucket % 64), Relaxed);
            let words = &self.touched_words;
            words.store(words.load(Relaxed) | 1 << word, Relaxed);
        }
        if next == 0 {
            // 2^32 in one bucket: hand them to the process histograms, the bucket starts over.
            let (kind, id) = self.key();
            record_now(kind, id, bucket_value(bucket), 1 << 32);
        }
    }

    /// Add every count into `hist` (zeroing them if `reset`). Caller holds [`LOCK`].
    fn merge_into(&self, hist: &mut Histograms, reset: bool) {
        if self.is_untouched() {
            return;
        }
        // One map lookup for the slot, not one per bucket.
        let (kind, id) = self.key();
        let mut target = hist.target(kind, id);
        self.each_count(|index, count| {
            target.record(bucket_value(index), u64::from(count));
            if reset {
                self.counts[index].store(0, Relaxed);
            }
        });
        if reset {
            self.clear_touched();
        }
    }
}

/// A live thread's slot as a live exposition reads it: in place, under the histogram lock, with
/// its thread's crossings still waiting to be counted.
pub(crate) struct SlotCounts<'a> {
    slot: &'a Slot,
    waiting: &'a [Waiting],
}

impl SlotCounts<'_> {
    /// The method or JNI function it counts.
    pub(crate) fn key(&self) -> (SampleKind, u32) {
        self.slot.key()
    }

    /// `each(bucket index, count)` for every bucket that holds a count (a bucket may come more
    /// than once); bucket `i` holds the samples from [`bucket_value`]`(i)` up to the next
    /// bucket's value, as an HdrHistogram's.
    pub(crate) fn each_count(&self, mut each: impl FnMut(usize, u32)) {
        self.slot.each_count(&mut each);
        self.each_waiting(|ns| each(bucket_index(ns), 1));
    }

    /// `each(ns)` for every crossing of this slot still waiting to be counted.
    fn each_waiting(&self, mut each: impl FnMut(u64)) {
        let address = self.slot as *const Slot as usize;
        for waiting in self.waiting {
            if waiting.slot.load(Relaxed) == address {
                each(waiting.ns.load(Relaxed));
            }
        }
    }
}

/// A crossing recorded but not yet counted in its slot (see [`ThreadLatency::record`]).
#[derive(Default)]
struct Waiting {
    /// The slot's address.
    slot: AtomicUsize,
    ns: AtomicU64,
}

/// Crossings a thread records before it counts them in their slots, all at once.
const WAITING: usize = 64;

/// Where a method's or function's crossings go on one thread: kept in its per-thread row. 0 = not
/// decided yet, [`NO_SLOT`] = none left, else the address of the row's slot in the same context's
/// [`ThreadLatency`]: recording needs no chunk or cell lookup.
#[derive(Default)]
pub(crate) struct SlotRef(AtomicUsize);

const NO_SLOT: usize = 1;

impl SlotRef {
    /// Forget the slot (the row is reset for a new thread).
    pub(crate) fn clear(&self) {
        self.0.store(0, Relaxed);
    }
}

type SlotChunk = [OnceLock<Slot>; SLOTS_PER_CHUNK];

/// One thread's latency slots. The owner assigns and writes them; the merge reads them.
pub(crate) struct ThreadLatency {
    chunks: [OnceLock<Box<SlotChunk>>; CHUNKS_PER_THREAD],
    /// Slots `0..assigned` count a key; the others are free (allocated or not).
    assigned: AtomicUsize,
    /// Crossings `waiting[..waiting_len]` are recorded but not yet in their slots.
    waiting: [Waiting; WAITING],
    waiting_len: AtomicUsize,
}

impl Default for ThreadLatency {
    fn default() -> Self {
        ThreadLatency {
            chunks: std::array::from_fn(|_| OnceLock::new()),
            assigned: AtomicUsize::new(0),
            waiting: std::array::from_fn(|_| Waiting::default()),
            waiting_len: AtomicUsize::new(0),
        }
    }
}

impl Drop for ThreadLatency {
    fn drop(&mut self) {
        let allocated = (0..SLOTS_PER_THREAD)
            .filter(|&index| self.cell(index).and_then(OnceLock::get).is_some())
            .count();
        SLOTS_ALLOCATED.fetch_sub(allocated * SLOT_BYTES, Relaxed);
    }
}

/// Where [`ThreadLatency::record`]'s fast path finds what it reads and writes (byte offsets from
/// the `ThreadLatency`, and from a [`SlotRef`]), for an assembly copy of it: a crossing of `ns`
/// below `slot_ns` whose slot address is above `no_slot` goes to entry `waiting_len` of the
/// `waiting` array, while that leaves the list short of full (`waiting_len` below `last_entry`).
pub(crate) struct WaitingFields {
    pub(crate) slot_ref: usize,
    pub(crate) no_slot: usize,
    pub(crate) slot_ns: u64,
    pub(crate) waiting: usize,
    pub(crate) entry_size: usize,
    pub(crate) entry_slot: usize,
    pub(crate) entry_ns: usize,
    pub(crate) waiting_len: usize,
    pub(crate) last_entry: usize,
}

pub(crate) const WAITING_FIELDS: WaitingFields = {
    use std::mem::{offset_of, size_of};
    WaitingFields {
        slot_ref: offset_of!(SlotRef, 0),
        no_slot: NO_SLOT,
        slot_ns: SLOT_NS,
        waiting: offset_of!(ThreadLatency, waiting),
        entry_size: size_of::<Waiting>(),
        entry_slot: offset_of!(Waiting, slot),
        entry_ns: offset_of!(Waiting, ns),
        waiting_len: offset_of!(ThreadLatency, waiting_len),
        last_entry: WAITING - 1,
    }
};

impl ThreadLatency {
    /// Count one crossing of `ns` for `(kind, id)`, whose row holds `slot`. Owner thread only.
    #[inline(always)]
    pub(crate) fn record(&self, slot: &SlotRef, kind: SampleKind, id: u32, ns: u64) {
        let at = slot.0.load(Relaxed);
        if at > NO_SLOT && ns < SLOT_NS {
            // The bucket a crossing lands in depends on the clock reading just taken: an increment
            // there at once made the CPU wait for that reading (a native call pair 37.3 against
            // 29.3 ns, an upcall pair 35.9 against 28.0, `bench_crossings`). So the crossing is
            // written down at an address that does not depend on it, and counted with the others
            // when the list is full, from values long read.
            let len = self.waiting_len.load(Relaxed);
            let waiting = &self.waiting[len];
            waiting.slot.store(at, Relaxed);
            waiting.ns.store(ns, Relaxed);
            if len + 1 < WAITING {
                self.waiting_len.store(len + 1, Relaxed);
                return;
            }
            self.waiting_len.store(WAITING, Relaxed);
            return self.count_waiting();
        }
        self.record_cold(slot, kind, id, ns)
    }

    /// Count the waiting crossings in their slots. Owner thread only.
    #[cold]
    #[inline(never)]
    fn count_waiting(&self) {
        for waiting in &self.waiting[..self.waiting_len.load(Relaxed)] {
            // SAFETY: `record` writes down only addresses above NO_SLOT from a row's `SlotRef`,
            // which `record_cold` of this thread's own `ThreadLatency` set (rows and slots belong
            // to one context) to an assigned slot's; slots sit in boxed chunks that never move and
            // are freed only with the `ThreadLatency`, and `drain` counts these before the context
            // serves another thread.
            let counted = unsafe { &*(waiting.slot.load(Relaxed) as *const Slot) };
            counted.count(bucket_index(waiting.ns.load(Relaxed)));
        }
        self.waiting_len.store(0, Relaxed);
    }

    /// The crossings waiting to be counted. Relaxed on both sides, so that the hot path has no
    /// release store on arm64: another thread never dereferences an entry, it only matches its
    /// address against its own slots, so an entry it sees before the owner's write lands can only
    /// miscount a live read, as a crossing in flight does.
    fn waiting_now(&self) -> &[Waiting] {
        &self.waiting[..self.waiting_len.load(Relaxed).min(WAITING)]
    }

    /// No slot yet, none left, or a crossing longer than a slot covers.
    #[cold]
    #[inline(never)]
    fn record_cold(&self, slot: &SlotRef, kind: SampleKind, id: u32, ns: u64) {
        if slot.0.load(Relaxed) == 0 {
            let assigned = self.assign(kind, id);
            slot.0.store(
                assigned.map_or(NO_SLOT, |counted| counted as *const Slot as usize),
                Relaxed,
            );
            if assigned.is_some() {
                return self.record(slot, kind, id, ns);
            }
        }
        record_now(kind, id, ns, 1);
    }

    /// The cell of slot `index`, if its chunk is allocated.
    #[inline(always)]
    fn cell(&self, index: usize) -> Option<&OnceLock<Slot>> {
        let chunk = self.chunks.get(index / SLOTS_PER_CHUNK)?.get()?;
        chunk.get(index % SLOTS_PER_CHUNK)
    }

    /// A slot for a key seen for the first time on this thread, or None if none is left.
    fn assign(&self, kind: SampleKind, id: u32) -> Option<&Slot> {
        let index = self.assigned.load(Relaxed);
        let chunk = self.chunks.get(index / SLOTS_PER_CHUNK)?;
        let chunk = chunk.get_or_init(|| Box::new(std::array::from_fn(|_| OnceLock::new())));
        let cell = &chunk[index % SLOTS_PER_CHUNK];
        if cell.get().is_none() {
            if SLOTS_ALLOCATED.fetch_add(SLOT_BYTES, Relaxed) + SLOT_BYTES > SLOT_BUDGET {
                SLOTS_ALLOCATED.fetch_sub(SLOT_BYTES, Relaxed);
                return None;
            }
            let _ = cell.set(Slot::new());
        }
        let counted = cell.get()?;
        counted
            .key
            .store(((kind as u64) << 32) | u64::from(id), Relaxed);
        // Published after the key: a reader that sees the slot as assigned sees its key.
        self.assigned
            .store(index + 1, std::sync::atomic::Ordering::Release);
        Some(counted)
    }

    /// The assigned slots.
    fn each(&self) -> impl Iterator<Item = &Slot> {
        let assigned = self.assigned.load(std::sync::atomic::Ordering::Acquire);
        (0..assigned.min(SLOTS_PER_THREAD))
            .filter_map(|index| self.cell(index).and_then(OnceLock::get))
    }

    /// Merge every slot into the process histograms and free the slots for the next thread (the
    /// owner at thread end; the rows that point at them are reset separately).
    pub(crate) fn drain(&self) {
        if self.assigned.load(Relaxed) == 0 {
            // Nothing counted (a thread that made no timed crossing): no global lock.
            return;
        }
        self.count_waiting();
        let mut hist = crate::sync::lock(&LOCK);
        let keep = !hist.closed && !discarding_now();
        for slot in self.each() {
            if keep {
                slot.merge_into(&mut hist, true);
            } else {
                slot.merge_into(&mut Histograms::new(), true);
            }
        }
        drop(hist);
        self.assigned.store(0, Relaxed);
    }

    /// Tests: the crossings of `(kind, id)` in this thread's slots, waiting ones included.
    #[cfg(test)]
    pub(crate) fn crossings_of(&self, kind: SampleKind, id: u32) -> u64 {
        let mut hist = Histograms::new();
        self.add_to(&mut hist);
        let counted = match kind {
            SampleKind::NativeSelf => hist.native_by_method.get(&id),
            SampleKind::UpcallJava => hist.upcall_by_function.get(&id),
        };
        counted.map_or(0, |h| h.len())
    }

    /// Add the counts so far to `hist` without resetting them (another thread, the owner may run).
    fn add_to(&self, hist: &mut Histograms) {
        for slot in self.each() {
            slot.merge_into(hist, false);
        }
        let waiting = self.waiting_now();
        if waiting.is_empty() {
            return;
        }
        for counted in self.each() {
            let counts = SlotCounts {
                slot: counted,
                waiting,
            };
            let (kind, id) = counted.key();
            counts.each_waiting(|ns| hist.record(kind, id, ns, 1));
        }
    }
}

/// Record into the process histograms under the lock (the rare cases of [`ThreadLatency::record`]).
#[cold]
fn record_now(kind: SampleKind, id: u32, ns: u64, count: u64) {
    if discarding_now() {
        return;
    }
    let mut hist = crate::sync::lock(&LOCK);
    if !hist.closed {
        hist.record(kind, id, ns, count);
    }
}

thread_local! {
    /// Set while this thread runs the agent's own cost calibration on a private context.
    static DISCARDING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Run `f` (the start-up calibration, which drives a private context through 10^5 fake crossings)
/// with every sample this thread merges discarded, so that none of them reaches the histograms or the
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

/// A map keyed by method id or JNI function index.
pub(crate) type IdMap<V> = HashMap<u32, V, crate::id_hash::IdBuild>;

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
    /// Set at VMDeath after the final merge: later samples are dropped.
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
fn record_growing(h: &mut Histogram<u64>, ns: u64, count: u64) {
    if h.record_n(ns, count).is_err() {
        h.saturating_record_n(ns, count);
    }
}

/// A histogram that samples of one key are recorded into (see [`Histograms::target`]).
enum Target<'a> {
    /// The key's own, which grows to hold any value.
    Own(&'a mut Histogram<u64>),
    /// The overall one, bounded: a value past its range is clamped.
    Overall(&'a mut Histogram<u64>),
}

impl Target<'_> {
    fn record(&mut self, ns: u64, count: u64) {
        let ns = ns.clamp(1, MAX_NS);
        match self {
            Target::Own(h) => record_growing(h, ns, count),
            Target::Overall(h) => h.saturating_record_n(ns, count),
        }
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

    /// Whether the samples of native method `method` merged now would go to a histogram of its
    /// own (it has one, or the budget has room), rather than only to the overall one.
    pub(crate) fn keeps_method(&self, method: u32) -> bool {
        self.native_by_method.contains_key(&method)
            || self.native_by_method.len() < method_histogram_limit()
    }

    /// True for the histograms handed out at VMDeath (and for snapshots taken after it, whose
    /// per-method maps are empty because they moved to the final report).
    pub(crate) fn is_closed(&self) -> bool {
        self.closed
    }

    /// Record `count` crossings of `ns` (clamped to the range) for a method or JNI function.
    fn record(&mut self, kind: SampleKind, id: u32, ns: u64, count: u64) {
        self.target(kind, id).record(ns, count);
    }

    /// Where the samples of a method or JNI function go: its own histogram (made at its first
    /// sample), or for a native method past the histogram budget the overall one, where the method
    /// is counted once however many samples it brings. The overall histograms are summed from the
    /// per-key ones when handed out (`summed`), so a sample is recorded once.
    fn target(&mut self, kind: SampleKind, id: u32) -> Target<'_> {
        match kind {
            SampleKind::UpcallJava => Target::Own(
                self.upcall_by_function
                    .entry(id)
                    .or_insert_with(new_growing_histogram),
            ),
            SampleKind::NativeSelf => {
                let keep = self.keeps_method(id);
                if keep {
                    return Target::Own(
                        self.native_by_method
                            .entry(id)
                            .or_insert_with(new_growing_histogram),
                    );
                }
                if self.refused.insert(id) {
                    self.methods_without_histogram += 1;
                }
                Target::Overall(&mut self.native_overall)
            }
        }
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

/// At VMDeath: add the slots of the threads still alive, close, and hand out the histograms.
pub(crate) fn close(live: &[&ThreadLatency]) -> Histograms {
    let mut hist = crate::sync::lock(&LOCK);
    if !hist.closed {
        for latency in live {
            latency.add_to(&mut hist);
        }
    }
    hist.closed = true;
    let native = std::mem::take(&mut hist.native_by_method);
    let upcall = std::mem::take(&mut hist.upcall_by_function);
    hist.summed(native, upcall)
}

/// A copy of the histograms so far, the slots of the threads still alive (`live`) included, for
/// dumps, snapshots and `interval=` logs.
pub(crate) fn snapshot(live: &[&ThreadLatency]) -> Histograms {
    let hist = crate::sync::lock(&LOCK);
    if hist.closed {
        return hist.summed(
            hist.native_by_method.clone(),
            hist.upcall_by_function.clone(),
        );
    }
    // Under the lock: a thread that ends meanwhile is either still in its slots or already merged.
    let mut copy = hist.clone();
    for latency in live {
        latency.add_to(&mut copy);
    }
    let native = std::mem::take(&mut copy.native_by_method);
    let upcall = std::mem::take(&mut copy.upcall_by_function);
    copy.summed(native, upcall)
}

/// `read` the histograms so far in place, under their lock, with the slots of the threads still
/// alive (`live`) beside them: the samples a dump's [`snapshot`] would merge, without merging or
/// copying anything (a live exposition reads a few numbers from each; merging 1,000 keys would
/// cost more than the rest of it). The overall histograms hold only the samples recorded straight
/// into them; the per-key ones and the slots hold the rest.
pub(crate) fn read_locked<R>(
    live: &[&ThreadLatency],
    read: impl FnOnce(&Histograms, &[SlotCounts<'_>]) -> R,
) -> R {
    let hist = crate::sync::lock(&LOCK);
    if hist.closed {
        return read(&hist, &[]);
    }
    // Under the lock: a thread that ends meanwhile is either still in its slots or already merged.
    let slots: Vec<SlotCounts<'_>> = live
        .iter()
        .flat_map(|latency| {
            let waiting = latency.waiting_now();
            latency.each().map(move |slot| SlotCounts { slot, waiting })
        })
        .collect();
    read(&hist, &slots)
}

#[cfg(test)]
mod tests;
