//! Per-method and per-JNI-function totals of one thread: rows in chunks that only the owner writes.

use super::*;
use crate::bit_words::{self, each_set_bit};
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

/// `CHUNK` rows and which of them hold figures. The rows come first: `timing=sampled`'s routine
/// finds a row at the chunk's address plus its index times the row size.
#[repr(C)]
pub(super) struct Chunk {
    rows: [MethodStat; CHUNK],
    /// One bit per row that may hold a figure (a row is only written once its bit is set): merging
    /// and resetting a context visit those rows, not every row of every chunk it allocated.
    touched: [AtomicU64; CHUNK / 64],
}

impl Chunk {
    /// Mark row `index` as holding figures. An atomic OR: the boundary sampler's signal handler
    /// marks rows too, on the same thread.
    fn touch(&self, index: usize) {
        let word = &self.touched[index / 64];
        let bit = 1u64 << (index % 64);
        if word.load(Relaxed) & bit == 0 {
            word.fetch_or(bit, Relaxed);
        }
    }

    /// Row `index` is about to count its first call (out of line: once per row and thread).
    #[cold]
    #[inline(never)]
    fn first_call(&self, index: usize) {
        self.touch(index);
    }

    /// Every touched row, with its index in the chunk.
    fn each_touched(&self, mut f: impl FnMut(usize, &MethodStat)) {
        each_set_bit(&self.touched, |index| f(index, &self.rows[index]));
    }
}

/// Method stats indexed by id, allocated a chunk at a time so that a thread only pays for the ids it
/// calls, and so that chunks never move (the VMDeath merge may read them while the owner runs).
pub(crate) struct MethodTable {
    /// A fixed-size array: `count_call` indexes it without a bounds check.
    pub(super) chunks: Box<[AtomicPtr<Chunk>; CHUNKS]>,
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

    /// Count a call of `id` and return its row: the chunk is allocated on first use, and the row
    /// marked touched at its first call (the sampled routine counts calls only on rows that have
    /// one already). Owner thread only.
    #[inline]
    pub(super) fn count_call(&self, id: u32) -> &MethodStat {
        let id = id as usize;
        if id >= MAX_METHODS {
            add(&self.overflow.calls, 1);
            return &self.overflow;
        }
        let slot = &self.chunks[id / CHUNK];
        let mut chunk = slot.load(std::sync::atomic::Ordering::Acquire);
        if chunk.is_null() {
            chunk = self.allocate(id / CHUNK);
        }
        // SAFETY: chunks are allocated once, published with Release, and freed only in Drop, when no
        // reference to the table remains.
        let chunk = unsafe { &*chunk };
        let row = &chunk.rows[id % CHUNK];
        let calls = row.calls.load(Relaxed);
        if calls == 0 {
            chunk.first_call(id % CHUNK);
        }
        // Owner-only writer: a store, no locked instruction (see `add`).
        row.calls.store(calls + 1, Relaxed);
        row
    }

    #[cold]
    fn allocate(&self, index: usize) -> *mut Chunk {
        let fresh = Box::new(Chunk {
            rows: std::array::from_fn(|_| MethodStat::default()),
            touched: std::array::from_fn(|_| AtomicU64::new(0)),
        });
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
    fn each_chunk(&self, mut f: impl FnMut(usize, &Chunk)) {
        each_set_bit(&self.allocated, |index| {
            let chunk = self.chunks[index].load(std::sync::atomic::Ordering::Acquire);
            if !chunk.is_null() {
                // SAFETY: a non-null chunk stays valid until the table is dropped (see `count_call`).
                f(index, unsafe { &*chunk });
            }
        });
    }

    /// Every row that counted a call, with its id.
    pub(crate) fn for_each(&self, mut f: impl FnMut(u32, &MethodStat)) {
        self.each_chunk(|c, chunk| {
            chunk.each_touched(|i, row| {
                if row.calls.load(Relaxed) != 0 {
                    f((c * CHUNK + i) as u32, row);
                }
            })
        });
    }

    /// Zero every touched row for the next thread; the chunks stay allocated.
    pub(super) fn reset(&mut self) {
        self.each_chunk(|_, chunk| {
            chunk.each_touched(|_, row| {
                row.calls.store(0, Relaxed);
                row.total_ns.store(0, Relaxed);
                row.self_ns.store(0, Relaxed);
                row.latency.clear();
                let samples = &row.samples;
                for counter in [&samples.own, &samples.jni, &samples.agent] {
                    counter.store(0, Relaxed);
                }
            });
            bit_words::clear(&chunk.touched);
        });
        self.overflow = MethodStat::default();
    }
}

impl crate::sampler::MethodSampleRows for MethodTable {
    /// Async-signal-safe: an acquire load and an atomic OR (the row is marked touched, so that a
    /// reset zeroes its samples); never allocates.
    fn existing(&self, id: u32) -> Option<&crate::sampler::MethodSamples> {
        let id = id as usize;
        let chunk = self
            .chunks
            .get(id / CHUNK)?
            .load(std::sync::atomic::Ordering::Acquire);
        if chunk.is_null() {
            return None;
        }
        // SAFETY: as in `count_call`: a published chunk stays valid while the table lives.
        let chunk = unsafe { &*chunk };
        chunk.touch(id % CHUNK);
        Some(&chunk.rows[id % CHUNK].samples)
    }
}

impl Drop for MethodTable {
    fn drop(&mut self) {
        for slot in self.chunks.iter() {
            let chunk = slot.swap(std::ptr::null_mut(), Relaxed);
            if !chunk.is_null() {
                // SAFETY: the pointer came from Box::into_raw in `allocate` and is freed exactly once here.
                drop(unsafe { Box::from_raw(chunk) });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sampler::MethodSampleRows;

    fn count_call(table: &MethodTable, id: u32, ns: u64) {
        let row = table.count_call(id);
        add(&row.total_ns, ns);
        add(&row.self_ns, ns);
    }

    fn visited(table: &MethodTable) -> Vec<(u32, u64)> {
        let mut seen = Vec::new();
        table.for_each(|id, row| seen.push((id, row.calls.load(Relaxed))));
        seen
    }

    #[test]
    fn merging_and_resetting_visit_exactly_the_rows_written() {
        let mut table = MethodTable::new();
        let ids = [3, 64, 255, CHUNK as u32 + 7, 5 * CHUNK as u32 + 200];
        for (n, &id) in ids.iter().enumerate() {
            for _ in 0..=n {
                count_call(&table, id, 10);
            }
        }
        let expected: Vec<(u32, u64)> = ids.iter().zip(1..).map(|(&id, n)| (id, n)).collect();
        assert_eq!(visited(&table), expected);
        // A sample in a row whose first call has not ended yet: no call to merge, but the row
        // was written, so the reset must zero it.
        let open = 2 * CHUNK as u32 + 9;
        count_call(&table, open - 1, 1);
        let samples = table.existing(open).expect("the chunk exists");
        samples.own.fetch_add(2, Relaxed);
        assert!(visited(&table).iter().all(|&(id, _)| id != open));

        table.reset();
        assert!(visited(&table).is_empty());
        table.each_chunk(|_, chunk| {
            assert!(chunk.touched.iter().all(|w| w.load(Relaxed) == 0));
            for row in &chunk.rows {
                assert_eq!(row.calls.load(Relaxed), 0);
                assert_eq!(row.total_ns.load(Relaxed), 0);
                assert_eq!(row.self_ns.load(Relaxed), 0);
                assert_eq!(row.samples.own.load(Relaxed), 0);
            }
        });

        // The next thread's calls are seen again, from zero.
        count_call(&table, 64, 5);
        assert_eq!(visited(&table), vec![(64, 1)]);
        assert_eq!(table.count_call(64).total_ns.load(Relaxed), 5);
    }
}
