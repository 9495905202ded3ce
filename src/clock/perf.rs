//! Per-thread perf events: open for the calling thread, map the first page, read, close.

use super::mmap_page::PageView;
use perf_event_open_sys as sys;
use std::fmt;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use sys::bindings::{perf_event_attr, perf_event_mmap_page};

/// The two events the clocks use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum EventKind {
    HwCycles,
    SwTaskClock,
}

impl EventKind {
    fn type_and_config(self) -> (u32, u64) {
        match self {
            EventKind::HwCycles => (
                sys::bindings::PERF_TYPE_HARDWARE,
                u64::from(sys::bindings::PERF_COUNT_HW_CPU_CYCLES),
            ),
            EventKind::SwTaskClock => (
                sys::bindings::PERF_TYPE_SOFTWARE,
                u64::from(sys::bindings::PERF_COUNT_SW_TASK_CLOCK),
            ),
        }
    }

    pub(crate) fn perf_name(self) -> &'static str {
        match self {
            EventKind::HwCycles => "PERF_COUNT_HW_CPU_CYCLES",
            EventKind::SwTaskClock => "PERF_COUNT_SW_TASK_CLOCK",
        }
    }

    fn user_only_flag(self) -> &'static AtomicBool {
        static CYCLES_USER_ONLY: AtomicBool = AtomicBool::new(false);
        static TASK_CLOCK_USER_ONLY: AtomicBool = AtomicBool::new(false);
        match self {
            EventKind::HwCycles => &CYCLES_USER_ONLY,
            EventKind::SwTaskClock => &TASK_CLOCK_USER_ONLY,
        }
    }

    /// Whether opens of this event have had to exclude the kernel (perf_event_paranoid ≥ 2 without
    /// CAP_PERFMON). Sticky, so later threads skip the failing attempt.
    pub(crate) fn user_only(self) -> bool {
        self.user_only_flag().load(Relaxed)
    }
}

/// Why an event could not be opened or mapped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct OpenError {
    pub(crate) event: EventKind,
    pub(crate) step: &'static str,
    pub(crate) errno: i32,
}

impl OpenError {
    /// A short stable class for rate-limiting messages: one line per class per clock.
    pub(crate) fn class(&self) -> usize {
        match self.errno {
            libc::EMFILE | libc::ENFILE => 0,
            libc::EACCES | libc::EPERM => 1,
            libc::ENOENT | libc::EOPNOTSUPP | libc::ENODEV | libc::ENOSYS => 2,
            _ => 3,
        }
    }
}

pub(crate) const ERROR_CLASSES: usize = 4;

impl fmt::Display for OpenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = std::io::Error::from_raw_os_error(self.errno).to_string();
        // Drop std's " (os error N)" suffix: the errno name is already there.
        let text = text.split(" (os error").next().unwrap_or_default();
        write!(
            f,
            "{} of {}: {} {}",
            self.step,
            self.event.perf_name(),
            errno_name(self.errno),
            text
        )?;
        if self.event == EventKind::HwCycles && self.class() == 2 {
            write!(f, ", no usable PMU")?;
        }
        Ok(())
    }
}

pub(crate) fn errno_name(errno: i32) -> &'static str {
    match errno {
        libc::EMFILE => "EMFILE",
        libc::ENFILE => "ENFILE",
        libc::EACCES => "EACCES",
        libc::EPERM => "EPERM",
        libc::ENOENT => "ENOENT",
        libc::EOPNOTSUPP => "EOPNOTSUPP",
        libc::ENODEV => "ENODEV",
        libc::ENOSYS => "ENOSYS",
        libc::EINVAL => "EINVAL",
        libc::ENOMEM => "ENOMEM",
        libc::E2BIG => "E2BIG",
        _ => "errno",
    }
}

/// An open per-thread counter, optionally with its first page mapped read-only.
#[derive(Debug)]
pub(crate) struct PerfEvent {
    /// `None` once closed.
    fd: Option<OwnedFd>,
    page: *mut libc::c_void,
    page_len: usize,
}

// SAFETY: the read-only mapping may be used and released from any thread (the fd is Send); the per-thread
// meaning of the counter does not depend on which thread holds this handle.
unsafe impl Send for PerfEvent {}
// SAFETY: `&self` methods only read the fd (thread-safe syscall) or the read-only page.
unsafe impl Sync for PerfEvent {}

fn last_errno() -> i32 {
    std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

fn attr_for(event: EventKind, exclude_kernel: bool) -> perf_event_attr {
    // SAFETY: perf_event_attr is plain old data; all-zero is the documented "default" value.
    let mut attr: perf_event_attr = unsafe { std::mem::zeroed() };
    let (type_, config) = event.type_and_config();
    attr.type_ = type_;
    attr.config = config;
    attr.size = std::mem::size_of::<perf_event_attr>() as u32;
    attr.set_exclude_kernel(u64::from(exclude_kernel));
    attr.set_exclude_hv(1);
    attr
}

fn open_fd(event: EventKind, exclude_kernel: bool) -> Result<OwnedFd, i32> {
    let mut attr = attr_for(event, exclude_kernel);
    loop {
        // SAFETY: attr is a valid, fully initialised perf_event_attr; pid 0 / cpu -1 means "this
        // thread on any CPU"; no group.
        let fd = unsafe {
            sys::perf_event_open(
                &mut attr,
                0,
                -1,
                -1,
                sys::bindings::PERF_FLAG_FD_CLOEXEC as libc::c_ulong,
            )
        };
        if fd >= 0 {
            // SAFETY: perf_event_open just returned this descriptor; nothing else owns it.
            return Ok(unsafe { OwnedFd::from_raw_fd(fd) });
        }
        // A signal that arrives while the kernel waits for the task's exec lock interrupts it.
        match last_errno() {
            libc::EINTR => continue,
            errno => return Err(errno),
        }
    }
}

impl PerfEvent {
    /// Open `event` counting the calling thread only, starting now. Counts kernel time too unless
    /// perf_event_paranoid forbids it, in which case it retries user-only (and remembers that).
    pub(crate) fn open_current_thread(
        event: EventKind,
        map_page: bool,
    ) -> Result<PerfEvent, OpenError> {
        let error = |step, errno| OpenError { event, step, errno };
        let fd = match open_fd(event, event.user_only()) {
            Ok(fd) => fd,
            Err(errno) if !event.user_only() && matches!(errno, libc::EACCES | libc::EPERM) => {
                let fd = open_fd(event, true).map_err(|errno| error("perf_event_open", errno))?;
                event.user_only_flag().store(true, Relaxed);
                fd
            }
            Err(errno) => return Err(error("perf_event_open", errno)),
        };
        let raw_fd = fd.as_raw_fd();
        let mut opened = PerfEvent {
            fd: Some(fd),
            page: std::ptr::null_mut(),
            page_len: 0,
        };
        if map_page {
            // SAFETY: sysconf has no preconditions.
            let page_len = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(4096) as usize;
            // SAFETY: mapping only the first (metadata) page of a valid perf fd, read-only and shared,
            // is the documented way to read it; the kernel picks the address.
            let page = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    page_len,
                    libc::PROT_READ,
                    libc::MAP_SHARED,
                    raw_fd,
                    0,
                )
            };
            if page == libc::MAP_FAILED {
                let errno = last_errno();
                opened.close();
                return Err(error("mmap", errno));
            }
            opened.page = page;
            opened.page_len = page_len;
        }
        Ok(opened)
    }

    /// The mapped first page, if it was mapped and is still open.
    pub(crate) fn page(&self) -> Option<PageView> {
        if self.page.is_null() {
            None
        } else {
            // SAFETY: the mapping stays valid until `close`, which needs `&mut self`, and the view is
            // only used by the clock that owns this event.
            Some(unsafe { PageView::new(self.page as *const perf_event_mmap_page) })
        }
    }

    /// The current count via `read()`: exact, about 0.6 µs. `None` once closed or on error.
    #[inline]
    pub(crate) fn read_count(&self) -> Option<u64> {
        let fd = self.fd.as_ref()?.as_raw_fd();
        let mut value: u64 = 0;
        // SAFETY: reading 8 bytes (read_format 0: the bare count) into a valid u64.
        let n = unsafe {
            libc::read(
                fd,
                (&mut value as *mut u64).cast::<libc::c_void>(),
                std::mem::size_of::<u64>(),
            )
        };
        (n == std::mem::size_of::<u64>() as isize).then_some(value)
    }

    /// Unmap and close. Idempotent.
    pub(crate) fn close(&mut self) {
        if !self.page.is_null() {
            // SAFETY: `page` / `page_len` are exactly what mmap returned; unmapped once.
            unsafe { libc::munmap(self.page, self.page_len) };
            self.page = std::ptr::null_mut();
            self.page_len = 0;
        }
        self.fd = None;
    }
}

impl Drop for PerfEvent {
    fn drop(&mut self) {
        self.close();
    }
}
