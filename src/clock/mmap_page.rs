//! Reading a perf event's first mmap page (`struct perf_event_mmap_page`) from user space.
//!
//! The kernel updates the page under a sequence counter (`lock`): it increments `lock`, writes the
//! fields, increments `lock` again. A reader copies the fields and retries when `lock` moved meanwhile.
//! The arithmetic is kept free of the `rdpmc` instruction (passed in as a closure) so that it can be
//! tested against a synthetic page on machines without a PMU.

use perf_event_open_sys::bindings::perf_event_mmap_page;
use std::ptr::{addr_of, read_volatile};
use std::sync::atomic::{fence, Ordering};

/// `capabilities` bit: user space may read the counter with `rdpmc`.
pub(crate) const CAP_USER_RDPMC: u64 = 1 << 2;
/// `capabilities` bit: `time_mult`/`time_shift` convert TSC ticks to the kernel's perf clock.
pub(crate) const CAP_USER_TIME: u64 = 1 << 3;

/// Give up on a seqlock that keeps moving (a writer stuck on another CPU, or a corrupt page) after this
/// many attempts; the caller then falls back to `read()`.
const MAX_SEQLOCK_ATTEMPTS: u32 = 1000;

/// A consistent copy of the page fields the clocks use.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct PageSnapshot {
    pub(crate) lock: u32,
    pub(crate) index: u32,
    pub(crate) offset: i64,
    pub(crate) capabilities: u64,
    pub(crate) pmc_width: u16,
    pub(crate) time_shift: u16,
    pub(crate) time_mult: u32,
}

impl PageSnapshot {
    pub(crate) fn cap_user_rdpmc(&self) -> bool {
        self.capabilities & CAP_USER_RDPMC != 0
    }

    pub(crate) fn cap_user_time(&self) -> bool {
        self.capabilities & CAP_USER_TIME != 0
    }

    /// TSC frequency implied by the kernel's ticks→ns conversion, when it publishes one.
    pub(crate) fn kernel_tsc_hz(&self) -> Option<u64> {
        if !self.cap_user_time() || self.time_mult == 0 || self.time_shift >= 64 {
            return None;
        }
        // ns = ticks * mult >> shift, so hz = 1e9 * 2^shift / mult.
        let hz = (1_000_000_000u128 << self.time_shift) / self.time_mult as u128;
        u64::try_from(hz).ok()
    }
}

/// A read-only view of a mapped (or synthetic) `perf_event_mmap_page`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PageView {
    page: *const perf_event_mmap_page,
}

// SAFETY: the view only performs volatile reads of a page that stays mapped while the owning clock
// lives; reads from any thread are harmless (the kernel page is shared memory).
unsafe impl Send for PageView {}
// SAFETY: as above, every access is a read.
unsafe impl Sync for PageView {}

/// A page that is never written: what a closed clock's view points at, so a stray read after close
/// touches valid memory.
struct ClosedPage(perf_event_mmap_page);
// SAFETY: never written after initialisation.
unsafe impl Sync for ClosedPage {}
// SAFETY: all-zero is a valid perf_event_mmap_page (plain old data).
static CLOSED_PAGE: ClosedPage = ClosedPage(unsafe { std::mem::zeroed() });

impl PageView {
    /// Where the view keeps the page's address, and where the page keeps its `lock`.
    pub(crate) const POINTER_OFFSET: usize = std::mem::offset_of!(PageView, page);
    pub(crate) const LOCK_OFFSET: usize = std::mem::offset_of!(perf_event_mmap_page, lock);

    /// A view of a static all-zero page (lock 0, no capabilities).
    pub(crate) fn closed() -> PageView {
        PageView {
            page: &CLOSED_PAGE.0,
        }
    }

    /// # Safety
    /// `page` must point to a readable `perf_event_mmap_page` that outlives every use of the view.
    pub(crate) unsafe fn new(page: *const perf_event_mmap_page) -> PageView {
        PageView { page }
    }

    /// The sequence counter alone: the hot-path check of `tsc-hybrid`.
    #[inline(always)]
    pub(crate) fn lock(&self) -> u32 {
        // SAFETY: `new`'s contract keeps the page readable; volatile because the kernel writes it.
        unsafe { read_volatile(addr_of!((*self.page).lock)) }
    }

    /// Copy the fields under the seqlock protocol. `None` if the lock never settled.
    pub(crate) fn snapshot(&self) -> Option<PageSnapshot> {
        self.read_consistent(|snapshot| *snapshot)
    }

    /// Run `body` on a snapshot taken inside one seqlock read section and return its result, retrying
    /// (body included, so an `rdpmc` inside it is redone) until the lock did not move.
    #[inline]
    pub(crate) fn read_consistent<T>(&self, mut body: impl FnMut(&PageSnapshot) -> T) -> Option<T> {
        let page = self.page;
        for _ in 0..MAX_SEQLOCK_ATTEMPTS {
            let before = self.lock();
            // Keep the field reads after the first lock read and before the second one. An acquire
            // fence is no instruction on x86 (loads are not reordered with loads) and a `dmb ishld`
            // on arm64, whose loads may be.
            fence(Ordering::Acquire);
            if before & 1 != 0 {
                // A writer on another CPU is mid-update.
                std::hint::spin_loop();
                continue;
            }
            // SAFETY: `new`'s contract keeps the page readable; each field read is volatile.
            let snapshot = unsafe {
                PageSnapshot {
                    lock: before,
                    index: read_volatile(addr_of!((*page).index)),
                    offset: read_volatile(addr_of!((*page).offset)),
                    capabilities: read_volatile(addr_of!((*page).__bindgen_anon_1.capabilities)),
                    pmc_width: read_volatile(addr_of!((*page).pmc_width)),
                    time_shift: read_volatile(addr_of!((*page).time_shift)),
                    time_mult: read_volatile(addr_of!((*page).time_mult)),
                }
            };
            let result = body(&snapshot);
            fence(Ordering::Acquire);
            if self.lock() == before {
                return Some(result);
            }
        }
        None
    }

    /// The event's count read in user space: `offset` plus the sign-extended hardware counter when
    /// the event is on a PMU counter right now. `None` when user-space reading is not allowed
    /// (`cap_user_rdpmc` is 0) or the lock never settled: the caller must use `read()` on the fd.
    #[inline]
    pub(crate) fn read_count(&self, mut rdpmc: impl FnMut(u32) -> u64) -> Option<u64> {
        self.read_consistent(|snapshot| {
            if !snapshot.cap_user_rdpmc() {
                return None;
            }
            Some(count_from_snapshot(snapshot, &mut rdpmc))
        })
        .flatten()
    }
}

/// `offset` + sign-extended `rdpmc(index - 1)`; just `offset` when the event is not on a counter.
#[inline]
pub(crate) fn count_from_snapshot(
    snapshot: &PageSnapshot,
    rdpmc: &mut impl FnMut(u32) -> u64,
) -> u64 {
    let mut count = snapshot.offset;
    if snapshot.index != 0 {
        let raw = rdpmc(snapshot.index - 1);
        count = count.wrapping_add(sign_extend(raw, snapshot.pmc_width));
    }
    count as u64
}

/// Interpret the low `width` bits of a counter as a two's-complement number (the kernel programs
/// counters with negative values, and only `pmc_width` bits are implemented).
#[inline]
pub(crate) fn sign_extend(raw: u64, width: u16) -> i64 {
    if width == 0 || width >= 64 {
        return raw as i64;
    }
    let unused = 64 - u32::from(width);
    ((raw << unused) as i64) >> unused
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    fn blank_page() -> Box<perf_event_mmap_page> {
        // SAFETY: the page is plain old data; all-zero is a valid value.
        Box::new(unsafe { std::mem::zeroed() })
    }

    /// A page whose event sits on counter `index - 1` (0: on none), with its offset, the counters'
    /// width and the capability bits.
    fn counter_page(
        index: u32,
        offset: i64,
        pmc_width: u16,
        capabilities: u64,
    ) -> Box<perf_event_mmap_page> {
        let mut page = blank_page();
        page.index = index;
        page.offset = offset;
        page.pmc_width = pmc_width;
        page.__bindgen_anon_1.capabilities = capabilities;
        page
    }

    fn view(page: &perf_event_mmap_page) -> PageView {
        // SAFETY: the boxed page outlives the view in every test.
        unsafe { PageView::new(page) }
    }

    #[test]
    fn sign_extension_of_narrow_counters() {
        assert_eq!(sign_extend(0xFFFF_FFFF_FFF0, 48), -16);
        assert_eq!(sign_extend(0x7FFF_FFFF_FFFF, 48), 0x7FFF_FFFF_FFFF);
        assert_eq!(sign_extend(0x8000_0000_0000, 48), -(1i64 << 47));
        // Bits above the width are garbage and must be ignored.
        assert_eq!(sign_extend(0xABCD_0000_0000_0005, 48), 5);
        assert_eq!(sign_extend(0xFFFF_FFFF, 32), -1);
        assert_eq!(sign_extend(u64::MAX, 64), -1);
        assert_eq!(sign_extend(12345, 0), 12345);
    }

    #[test]
    fn count_is_offset_plus_sign_extended_pmc() {
        let mut page = counter_page(3, 1_000_000, 48, CAP_USER_RDPMC);
        page.lock = 4;
        let asked = Cell::new(u32::MAX);
        // The counter started at -500 (48-bit) and has counted 700 events since: raw = 2^48 - 500 + 700.
        let raw = (1u64 << 48) - 500 + 700;
        let count = view(&page).read_count(|counter| {
            asked.set(counter);
            raw
        });
        assert_eq!(asked.get(), 2, "rdpmc takes index - 1");
        assert_eq!(count, Some(1_000_000 + 200));
    }

    #[test]
    fn negative_sum_wraps_like_the_kernel() {
        let page = counter_page(1, 10, 40, CAP_USER_RDPMC);
        // Counter value -25 in 40 bits: offset + pmc = -15, which the u64 result holds wrapped.
        let raw = (1u64 << 40) - 25;
        assert_eq!(view(&page).read_count(|_| raw), Some((-15i64) as u64));
    }

    #[test]
    fn inactive_event_reads_offset_only() {
        let page = counter_page(0, 777, 48, CAP_USER_RDPMC);
        let count = view(&page).read_count(|_| panic!("rdpmc must not run for index 0"));
        assert_eq!(count, Some(777));
    }

    #[test]
    fn no_rdpmc_capability_asks_for_read_fallback() {
        let page = counter_page(1, 5, 0, CAP_USER_TIME);
        let count = view(&page).read_count(|_| panic!("rdpmc is not allowed"));
        assert_eq!(count, None);
    }

    #[test]
    fn retries_when_the_lock_moves_during_the_read() {
        let mut page = counter_page(1, 100, 48, CAP_USER_RDPMC);
        page.lock = 10;
        let page_ptr: *mut perf_event_mmap_page = &mut *page;
        let calls = Cell::new(0u32);
        // SAFETY: page_ptr points to the live boxed page for the whole test.
        let view = unsafe { PageView::new(page_ptr) };
        let count = view.read_count(|_| {
            calls.set(calls.get() + 1);
            if calls.get() == 1 {
                // Simulate a kernel update between the two lock reads: new offset, lock +2.
                // SAFETY: single-threaded test; volatile writes to the live page.
                unsafe {
                    std::ptr::write_volatile(std::ptr::addr_of_mut!((*page_ptr).offset), 5_000);
                    std::ptr::write_volatile(std::ptr::addr_of_mut!((*page_ptr).lock), 12);
                }
                1
            } else {
                2
            }
        });
        assert_eq!(calls.get(), 2, "the torn first attempt must be redone");
        assert_eq!(
            count,
            Some(5_002),
            "only the second, consistent attempt counts"
        );
    }

    #[test]
    fn odd_lock_that_never_settles_gives_up() {
        let mut page = counter_page(0, 0, 0, CAP_USER_RDPMC);
        page.lock = 7;
        assert_eq!(view(&page).read_count(|_| 0), None);
        assert_eq!(view(&page).snapshot(), None);
    }

    #[test]
    fn kernel_time_conversion_gives_tsc_frequency() {
        let mut page = blank_page();
        // 2 GHz: ns = ticks / 2 = ticks * 2^31 >> 32.
        page.time_mult = 1 << 31;
        page.time_shift = 32;
        page.__bindgen_anon_1.capabilities = CAP_USER_TIME;
        let snapshot = view(&page).snapshot().expect("even lock settles");
        assert_eq!(snapshot.kernel_tsc_hz(), Some(2_000_000_000));
        page.__bindgen_anon_1.capabilities = 0;
        assert_eq!(view(&page).snapshot().unwrap().kernel_tsc_hz(), None);
    }
}
