//! Whether a thread was switched out since a moment, seen without a system call, through the
//! restartable-sequences area (`rseq`) that glibc registers for every thread it starts.
//!
//! The thread writes the address of a critical-section descriptor of ours into its area's
//! `rseq_cs` word: the marker. Whenever the kernel switches the thread out (or delivers it a
//! signal, or moves it to another CPU), it looks at that word before the thread runs user code
//! again and, the thread not being inside our section (a range of data that never runs), clears
//! it. So a marker still in place says that the thread ran without a switch since it was written,
//! and a counter delta since then is all its own CPU time.
//!
//! Only the owner thread writes its marker, and never from a signal handler, so a library's own
//! critical sections (which set the word as they begin) are never disturbed; a word that holds
//! another descriptor reads as "switched", which costs an exact read and is never wrong.
//!
//! Used when glibc registered the area (`__rseq_size`), the thread's registration succeeded, and a
//! test at first use saw a blocking sleep clear the marker (a kernel may skip the look after a
//! system call; then the gate's time bound decides, as without rseq).

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::OnceLock;

/// glibc's `struct rseq_cs` (32-byte aligned), followed by the section it describes: one byte at
/// `start_ip` that never runs (it is data), and the registered signature just before `abort_ip`.
#[repr(C, align(32))]
struct Section {
    version: u32,
    flags: u32,
    start_ip: u64,
    post_commit_offset: u64,
    abort_ip: u64,
    body: [u32; 2],
}

/// Offsets in the kernel's `struct rseq`: the CPU number (negative while unregistered) and the
/// critical-section word.
const CPU_ID_FIELD: usize = 4;
const RSEQ_CS_FIELD: usize = 8;
/// The area holds `rseq_cs` when glibc registered at least this many bytes of it.
const LEAST_AREA: u32 = 16;
/// `cpu_id` values of a thread whose registration is missing or failed (-1, -2).
const CPU_ID_UNREGISTERED: u32 = u32::MAX - 1;

/// What the test at first use found: the area's offset from the thread pointer and the markers
/// (our descriptors' addresses), or why no marker is used.
struct Rseq {
    offset: isize,
    markers: [u64; MARKERS],
}

/// Descriptors to mark with: a thread's successive clocks take them in turn, so that two clocks
/// alive on one thread (tests open several) never take each other's marker for their own.
const MARKERS: usize = 8;

std::thread_local! {
    static MARKERS_TAKEN: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

static RSEQ: OnceLock<Result<Rseq, &'static str>> = OnceLock::new();

/// The slot and value of a thread that uses no marker: the same value, so the check passes.
static ABSENT: AtomicU64 = AtomicU64::new(0);

/// How long the test's sleeps block: long enough to be a sure switch.
const TEST_SLEEP: std::time::Duration = std::time::Duration::from_micros(50);

fn rseq() -> Result<&'static Rseq, &'static str> {
    RSEQ.get_or_init(find_and_test).as_ref().map_err(|why| *why)
}

/// Why the marker is not used, if it is not (for the clock's report line).
pub(crate) fn unavailable_reason() -> Option<&'static str> {
    rseq().err()
}

/// A descriptor of a section that never runs, never freed (a thread's word may point at it until
/// the process ends); its address.
fn leaked_section() -> u64 {
    let section = Box::leak(Box::new(Section {
        version: 0,
        flags: 0,
        start_ip: 0,
        post_commit_offset: 1,
        abort_ip: 0,
        body: [0, crate::arch::RSEQ_SIGNATURE],
    }));
    let body = section.body.as_ptr() as u64;
    section.start_ip = body;
    section.abort_ip = body + 8;
    section as *const Section as u64
}

fn find_and_test() -> Result<Rseq, &'static str> {
    // SAFETY: dlsym with RTLD_DEFAULT and a NUL-terminated name only looks the symbol up.
    let offset = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"__rseq_offset".as_ptr()) };
    // SAFETY: as above.
    let size = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"__rseq_size".as_ptr()) };
    if offset.is_null() || size.is_null() {
        return Err("the C library registers no rseq area (glibc 2.35 or later does)");
    }
    // SAFETY: glibc's `__rseq_size` is a `const unsigned int` and `__rseq_offset` a `const
    // ptrdiff_t`, both set before any user code runs.
    let (offset, size) = unsafe { (*(offset as *const isize), *(size as *const u32)) };
    if size < LEAST_AREA {
        return Err("no rseq area is registered (kernel before 4.18, or glibc.pthread.rseq=0)");
    }
    let rseq = Rseq {
        offset,
        markers: std::array::from_fn(|_| leaked_section()),
    };
    let marker =
        SwitchMarker::on_current_thread(&rseq).ok_or("this thread's rseq registration failed")?;
    let before = marker.slot().load(Relaxed);
    let mut cleared = true;
    for _ in 0..2 {
        marker.arm();
        std::thread::sleep(TEST_SLEEP);
        cleared &= !marker.intact();
    }
    marker.slot().store(before, Relaxed);
    if cleared {
        Ok(rseq)
    } else {
        Err("this kernel does not clear rseq's critical-section word after a blocking sleep")
    }
}

/// A thread's marker: the address of its area's `rseq_cs` word and the value that says "not
/// switched out since armed" (or, without one, a shared word that always says so).
#[derive(Debug)]
pub(crate) struct SwitchMarker {
    slot: usize,
    value: u64,
}

impl SwitchMarker {
    /// The calling thread's marker, or [`SwitchMarker::absent`]. Owner thread only from here on.
    pub(crate) fn for_current_thread() -> SwitchMarker {
        rseq()
            .ok()
            .and_then(SwitchMarker::on_current_thread)
            .unwrap_or_else(SwitchMarker::absent)
    }

    /// A marker that always reads intact: the caller bounds intervals by time instead.
    pub(crate) fn absent() -> SwitchMarker {
        SwitchMarker {
            slot: &ABSENT as *const AtomicU64 as usize,
            value: ABSENT.load(Relaxed),
        }
    }

    fn on_current_thread(rseq: &Rseq) -> Option<SwitchMarker> {
        let area = crate::arch::thread_pointer().wrapping_add_signed(rseq.offset);
        // SAFETY: glibc's area lies at `__rseq_offset` from every thread's thread pointer, for
        // the thread's whole life; `cpu_id` is a naturally aligned u32 the kernel writes.
        let cpu_id = unsafe {
            (*((area + CPU_ID_FIELD) as *const std::sync::atomic::AtomicU32)).load(Relaxed)
        };
        let taken = MARKERS_TAKEN.with(|taken| taken.replace(taken.get().wrapping_add(1)));
        (cpu_id < CPU_ID_UNREGISTERED).then_some(SwitchMarker {
            slot: area + RSEQ_CS_FIELD,
            value: rseq.markers[taken % MARKERS],
        })
    }

    /// Whether switches are seen (false: [`SwitchMarker::absent`]).
    pub(crate) fn present(&self) -> bool {
        self.slot != &ABSENT as *const AtomicU64 as usize
    }

    fn slot(&self) -> &AtomicU64 {
        // SAFETY: `slot` is the owner's `rseq_cs` word (naturally aligned, alive as long as the
        // thread) or the static `ABSENT`.
        unsafe { &*(self.slot as *const AtomicU64) }
    }

    /// From now on, a switch out clears the marker. Owner thread only, never in a signal handler.
    #[inline(always)]
    pub(crate) fn arm(&self) {
        if self.present() {
            self.slot().store(self.value, Relaxed);
        }
    }

    /// Whether the thread has not been switched out since [`SwitchMarker::arm`]. Read after the
    /// counter: a switch before the counter read cleared the marker before it.
    #[inline(always)]
    pub(crate) fn intact(&self) -> bool {
        self.slot().load(Relaxed) == self.value
    }

    /// Byte offsets of the slot address and the value in this struct (for the assembly fast path).
    pub(crate) const SLOT_FIELD: usize = std::mem::offset_of!(SwitchMarker, slot);
    pub(crate) const VALUE_FIELD: usize = std::mem::offset_of!(SwitchMarker, value);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Where the kernel and glibc allow it (the dev VM and CI do; qemu-user does not register
    /// rseq), a sleep clears the marker and a short spin mostly does not.
    #[test]
    fn a_sleep_clears_the_marker_and_a_spin_keeps_it() {
        let marker = SwitchMarker::for_current_thread();
        if !marker.present() {
            eprintln!("no switch marker here: {:?}", unavailable_reason());
            return;
        }
        marker.arm();
        std::thread::sleep(TEST_SLEEP);
        assert!(!marker.intact(), "a sleep switched the thread out");
        let mut kept = 0;
        for _ in 0..100 {
            marker.arm();
            std::hint::black_box((0..1000u64).sum::<u64>());
            kept += u32::from(marker.intact());
        }
        assert!(kept > 0, "a 1 µs spin was switched out 100 times of 100");
    }
}
