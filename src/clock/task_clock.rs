//! `task-clock`: the per-thread software event PERF_COUNT_SW_TASK_CLOCK, read with `read()`.

use super::perf::{EventKind, OpenError, PerfEvent};

#[derive(Debug)]
pub struct TaskClock {
    last_ns: u64,
    event: PerfEvent,
}

impl TaskClock {
    pub fn open() -> Result<TaskClock, OpenError> {
        let event = PerfEvent::open_current_thread(EventKind::SwTaskClock, false)?;
        Ok(TaskClock { last_ns: 0, event })
    }

    /// Thread CPU ns (one `read()` syscall). After close: the last value.
    #[inline]
    pub fn read(&mut self) -> u64 {
        if let Some(ns) = self.event.read_count() {
            self.last_ns = ns;
        }
        self.last_ns
    }

    pub fn read_exact_ns(&self) -> Option<u64> {
        self.event.read_count()
    }

    pub fn close(&mut self) {
        self.event.close();
    }
}
