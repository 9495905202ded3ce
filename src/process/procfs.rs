//! The OS side: CPU clocks of this thread and the process, and the thread list in /proc/self/task.

pub(super) fn own_cpu_ns() -> u64 {
    crate::clock::read_clock(libc::CLOCK_THREAD_CPUTIME_ID).unwrap_or(0)
}

pub(super) fn own_tid() -> i32 {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::gettid() }
}

/// The calling thread's OS name (at most 15 bytes), without reading a file.
pub(super) fn own_comm() -> String {
    let mut name = [0u8; 17];
    // SAFETY: PR_GET_NAME writes at most 16 bytes, NUL-terminated, into the buffer.
    let rc = unsafe { libc::prctl(libc::PR_GET_NAME, name.as_mut_ptr()) };
    if rc != 0 {
        return String::new();
    }
    let end = name.iter().position(|&b| b == 0).unwrap_or(16);
    String::from_utf8_lossy(&name[..end]).into_owned()
}

/// The process's CPU time: every live thread's plus every ended thread's, in the same units as
/// [`thread_cpu_ns`].
pub(super) fn process_cpu_ns() -> u64 {
    crate::clock::read_clock(libc::CLOCK_PROCESS_CPUTIME_ID).unwrap_or(0)
}

/// `/proc/self/task`, opened once and read again from the start at each scan: opening it costs
/// more than reading it.
pub(super) struct TaskDir(*mut libc::DIR);

// SAFETY: the DIR is used only by the holder of the tracker's lock, one thread at a time.
unsafe impl Send for TaskDir {}

impl TaskDir {
    fn open() -> std::io::Result<TaskDir> {
        // SAFETY: a NUL-terminated path; the result is checked.
        let dir = unsafe { libc::opendir(c"/proc/self/task".as_ptr()) };
        if dir.is_null() {
            Err(std::io::Error::last_os_error())
        } else {
            Ok(TaskDir(dir))
        }
    }

    /// The tids of every thread of the process now.
    fn list(&mut self, out: &mut Vec<i32>) -> std::io::Result<()> {
        out.clear();
        // SAFETY: `self.0` is an open DIR (closed only in Drop); we hold the only access to it. errno
        // is this thread's and is reset so that readdir's end of stream can be told from an error.
        unsafe {
            libc::rewinddir(self.0);
            *libc::__errno_location() = 0;
        }
        loop {
            // SAFETY: as above; the entry stays valid until the next readdir64 on this DIR.
            let entry = unsafe { libc::readdir64(self.0) };
            if entry.is_null() {
                break;
            }
            // SAFETY: d_name is NUL-terminated inside the entry.
            let name = unsafe { std::ffi::CStr::from_ptr((*entry).d_name.as_ptr()) };
            if let Some(tid) = name.to_str().ok().and_then(|s| s.parse().ok()) {
                out.push(tid);
            }
        }
        // SAFETY: errno of this thread.
        match unsafe { *libc::__errno_location() } {
            0 => Ok(()),
            e => Err(std::io::Error::from_raw_os_error(e)),
        }
    }
}

impl Drop for TaskDir {
    fn drop(&mut self) {
        // SAFETY: opened by opendir and closed once here.
        unsafe { libc::closedir(self.0) };
    }
}

/// The tids of the process's threads, through `dir` (opened on first use).
pub(super) fn list_tids(dir: &mut Option<TaskDir>, out: &mut Vec<i32>) -> std::io::Result<()> {
    if dir.is_none() {
        *dir = Some(TaskDir::open()?);
    }
    match dir.as_mut() {
        Some(d) => d.list(out),
        None => Ok(()),
    }
}

pub(super) fn read_comm(tid: i32) -> Option<String> {
    std::fs::read_to_string(format!("/proc/self/task/{tid}/comm"))
        .ok()
        .map(|s| s.trim_end_matches('\n').to_string())
}

/// Seconds of a coarse monotonic clock (a vDSO read, no syscall).
pub(super) fn coarse_seconds() -> u64 {
    crate::clock::read_clock(libc::CLOCK_MONOTONIC_COARSE).unwrap_or(0) / 1_000_000_000
}
