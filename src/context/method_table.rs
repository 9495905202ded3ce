//! Per-method and per-JNI-function totals of one thread: rows in chunks that only the owner writes.

use super::*;
use crate::histograms::SlotRef;

/// Per-method totals of one thread.
#[derive(Default)]
pub(crate) struct MethodStat {
    pub(crate) calls: AtomicU64,
    pub(crate) total_ns: AtomicU64,
    pub(crate) self_ns: AtomicU64,
    /// This thread's latency slot of the method.
    pub(crate) latency: SlotRef,
    /// The boundary sampler's samples while this method was the innermost native.
    pub(crate) samples: crate::sampler::MethodSamples,
}

/// Per-JNI-function totals of one thread.
#[derive(Default)]
pub(crate) struct JniStat {
    pub(crate) calls: AtomicU64,
    pub(crate) java_ns: AtomicU64,
    /// This thread's latency slot of the function.
    pub(crate) latency: SlotRef,
}

pub(super) const CHUNK: usize = 256;
pub(super) const CHUNKS: usize = MAX_METHODS / CHUNK;

/// Method stats indexed by id, allocated a chunk at a time so that a thread only pays for the ids it
/// calls, and so that chunks never move (the VMDeath merge may read them while the owner runs).
pub(crate) struct MethodTable {
    /// A fixed-size array: `row` indexes it without a bounds check.
    pub(super) chunks: Box<[AtomicPtr<[MethodStat; CHUNK]>; CHUNKS]>,
    /// One bit per allocated chunk, so that merging and resetting visit only those.
    pub(super) allocated: [AtomicU64; CHUNKS / 64],
    /// Calls of methods whose id is past `MAX_METHODS`.
    pub(crate) overflow: MethodStat,
}

impl MethodTable {
    pub(super) fn new() -> Self {
        MethodTable {
            chunks: Box::new(std::array::from_fn(
                |_| AtomicPtr::new(std::ptr::null_mut()),
            )),
            allocated: std::array::from_fn(|_| AtomicU64::new(0)),
            overflow: MethodStat::default(),
        }
    }

    /// The stat row of `id`, allocating its chunk on first use. Owner thread only.
    pub(super) fn row(&self, id: u32) -> &MethodStat {
        let id = id as usize;
        if id >= MAX_METHODS {
            return &self.overflow;
        }
        let slot = &self.chunks[id / CHUNK];
        let mut chunk = slot.load(std::sync::atomic::Ordering::Acquire);
        if chunk.is_null() {
            chunk = self.allocate(id / CHUNK);
        }
        // SAFETY: chunks are allocated once, published with Release, and freed only in Drop, when no
        // reference to the table remains.
        unsafe { &(*chunk)[id % CHUNK] }
    }

    #[cold]
    fn allocate(&self, index: usize) -> *mut [MethodStat; CHUNK] {
        let fresh: Box<[MethodStat; CHUNK]> =
            Box::new(std::array::from_fn(|_| MethodStat::default()));
        let chunk = Box::into_raw(fresh);
        self.chunks[index].store(chunk, std::sync::atomic::Ordering::Release);
        let word = &self.allocated[index / 64];
        // Owner-only writer: published after the chunk, so a reader that sees the bit sees it.
        word.store(
            word.load(Relaxed) | 1 << (index % 64),
            std::sync::atomic::Ordering::Release,
        );
        chunk
    }

    /// Every allocated chunk, with its index.
    fn each_chunk(&self, mut f: impl FnMut(usize, &[MethodStat; CHUNK])) {
        for (w, word) in self.allocated.iter().enumerate() {
            let mut bits = word.load(std::sync::atomic::Ordering::Acquire);
            while bits != 0 {
                let index = w * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let chunk = self.chunks[index].load(std::sync::atomic::Ordering::Acquire);
                if !chunk.is_null() {
                    // SAFETY: a non-null chunk stays valid until the table is dropped (see `row`).
                    f(index, unsafe { &*chunk });
                }
            }
        }
    }

    /// Every row that was touched, with its id.
    pub(crate) fn for_each(&self, mut f: impl FnMut(u32, &MethodStat)) {
        self.each_chunk(|c, rows| {
            for (i, row) in rows.iter().enumerate() {
                if row.calls.load(Relaxed) != 0 {
                    f((c * CHUNK + i) as u32, row);
                }
            }
        });
    }

    /// Zero every row for the next thread; the chunks stay allocated.
    pub(super) fn reset(&mut self) {
        self.each_chunk(|_, rows| {
            for row in rows.iter() {
                if row.calls.load(Relaxed) != 0 {
                    row.calls.store(0, Relaxed);
                    row.total_ns.store(0, Relaxed);
                    row.self_ns.store(0, Relaxed);
                    row.latency.clear();
                }
                let samples = &row.samples;
                for counter in [&samples.own, &samples.jni, &samples.agent] {
                    counter.store(0, Relaxed);
                }
            }
        });
        self.overflow = MethodStat::default();
    }
}

impl crate::sampler::MethodSampleRows for MethodTable {
    /// Async-signal-safe: one acquire load; never allocates.
    fn existing(&self, id: u32) -> Option<&crate::sampler::MethodSamples> {
        let id = id as usize;
        let chunk = self
            .chunks
            .get(id / CHUNK)?
            .load(std::sync::atomic::Ordering::Acquire);
        // SAFETY: as in `row`: a published chunk stays valid while the table lives.
        (!chunk.is_null()).then(|| unsafe { &(*chunk)[id % CHUNK].samples })
    }
}

impl Drop for MethodTable {
    fn drop(&mut self) {
        for slot in self.chunks.iter() {
            let chunk = slot.swap(std::ptr::null_mut(), Relaxed);
            if !chunk.is_null() {
                // SAFETY: the pointer came from Box::into_raw in `row` and is freed exactly once here.
                drop(unsafe { Box::from_raw(chunk) });
            }
        }
    }
}
