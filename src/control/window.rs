//! Accounting windows for `nativeacct dump --reset`: the numbers since a reset are the whole run's
//! numbers now minus a baseline taken at the reset.
//!
//! Nothing is ever written into a thread's counters: they are owner-written atomics, and the
//! VM-death report still needs the whole run. The baseline is a [`crate::merge::snapshot`] (taken
//! under the registry lock, live threads included up to that moment), the histograms so far, and
//! the process CPU section so far. Every aggregate is a sum of per-thread counters that only grow,
//! so a difference of two such sums is exactly what was added in between.

use crate::histograms::Histograms;
use crate::merge::{ThreadSummary, Totals};
use crate::process::ProcessCpu;
use std::collections::HashMap;

/// The whole-run numbers at the start of the current window.
#[derive(Clone)]
pub(crate) struct Baseline {
    pub(crate) totals: Totals,
    pub(crate) histograms: Histograms,
    pub(crate) process: ProcessCpu,
    /// ns since the agent started (the clock of `wall_ns`) when the window began.
    pub(crate) at_ns: u64,
}

/// `now - base`, field by field, for merged totals.
///
/// Rows: a thread that had ended before the reset has the same row in both (dropped); a thread
/// alive at the reset keeps its row, less its numbers then; a thread started since keeps its row.
pub(crate) fn totals_since(now: &Totals, base: &Totals) -> Totals {
    let mut out = Totals {
        counts: now.counts.since(&base.counts),
        unmatched: now.unmatched.saturating_sub(base.unmatched),
        // The run's variance so far: an upper bound for the window's.
        sampled_split_variance: now.sampled_split_variance,
        ..Totals::default()
    };
    out.jni = now.jni.clone();
    for (row, earlier) in out.jni.iter_mut().zip(&base.jni) {
        row.calls = row.calls.saturating_sub(earlier.calls);
        row.java_ns = row.java_ns.saturating_sub(earlier.java_ns);
        row.samples = row.samples.saturating_sub(earlier.samples);
        row.estimated_ns = row.estimated_ns.saturating_sub(earlier.estimated_ns);
    }
    for (&id, row) in &now.methods {
        let mut row = row.clone();
        if let Some(earlier) = base.methods.get(&id) {
            row.calls = row.calls.saturating_sub(earlier.calls);
            row.total_ns = row.total_ns.saturating_sub(earlier.total_ns);
            row.self_ns = row.self_ns.saturating_sub(earlier.self_ns);
            for (now, then) in row.samples.iter_mut().zip(earlier.samples) {
                *now = now.saturating_sub(then);
            }
        }
        if row.calls != 0 {
            out.methods.insert(id, row);
        }
    }
    let (over, earlier) = (&now.overflow_method, &base.overflow_method);
    out.overflow_method.calls = over.calls.saturating_sub(earlier.calls);
    out.overflow_method.total_ns = over.total_ns.saturating_sub(earlier.total_ns);
    out.overflow_method.self_ns = over.self_ns.saturating_sub(earlier.self_ns);

    // Rows of threads that had ended at the reset, by their exact numbers (a tid may be reused).
    let mut ended: HashMap<RowKey, usize> = HashMap::new();
    // Rows of threads alive at the reset, by (tid, name).
    let mut alive: HashMap<(i64, String), &ThreadSummary> = HashMap::new();
    for row in &base.threads {
        if row.alive_at_exit {
            alive.insert((row.tid, row.name.clone()), row);
        } else {
            *ended.entry(RowKey::of(row)).or_default() += 1;
        }
    }
    for row in &now.threads {
        if !row.alive_at_exit {
            if let Some(left) = ended.get_mut(&RowKey::of(row)).filter(|n| **n > 0) {
                *left -= 1;
                continue;
            }
        }
        let mut row = row.clone();
        if let Some(earlier) = alive.remove(&(row.tid, row.name.clone())) {
            row.counts = row.counts.since(&earlier.counts);
            row.boundary_samples = row.boundary_samples.since(&earlier.boundary_samples);
        }
        out.threads.push(row);
    }
    out.other_threads = match (&now.other_threads, &base.other_threads) {
        (Some(now), Some(base)) => {
            let mut other = now.clone();
            other.threads = other.threads.saturating_sub(base.threads);
            other.counts = other.counts.since(&base.counts);
            other.boundary_samples = other.boundary_samples.since(&base.boundary_samples);
            other.alive_at_exit = now.alive_at_exit;
            Some(other)
        }
        (other, _) => other.clone(),
    };
    // Threads seen in the window: those alive at its start plus those started since.
    let alive_at_reset = base.threads.iter().filter(|t| t.alive_at_exit).count() as u64;
    out.threads_seen = now.threads_seen.saturating_sub(base.threads_seen) + alive_at_reset;
    out.threads_merged =
        out.threads.len() as u64 + out.other_threads.as_ref().map_or(0, |o| o.threads);
    out
}

/// Rows of threads that had no Java name when their context was made (threads running before an
/// attach) get the kernel's name of the thread, which HotSpot sets to the Java name (15 bytes).
pub(crate) fn name_rows_from_os(totals: &mut Totals) {
    for row in &mut totals.threads {
        if row.name != format!("tid-{}", row.tid) {
            continue;
        }
        if let Ok(comm) = std::fs::read_to_string(format!("/proc/self/task/{}/comm", row.tid)) {
            let comm = comm.trim();
            if !comm.is_empty() {
                row.name = comm.to_string();
            }
        }
    }
}

#[derive(Hash, PartialEq, Eq)]
struct RowKey {
    tid: i64,
    name: String,
    numbers: crate::merge::JavaCounts,
}

impl RowKey {
    fn of(row: &ThreadSummary) -> RowKey {
        RowKey {
            tid: row.tid,
            name: row.name.clone(),
            numbers: row.counts,
        }
    }
}

/// `now - base` for the latency histograms (each holds every sample so far, so `base` is a
/// subset of `now`). A histogram that cannot be subtracted (its range grew) is kept whole.
pub(crate) fn histograms_since(now: &Histograms, base: &Histograms) -> Histograms {
    fn minus(h: &mut hdrhistogram::Histogram<u64>, base: Option<&hdrhistogram::Histogram<u64>>) {
        if let Some(base) = base {
            if h.subtract(base).is_err() {
                // Leave it: a whole-run distribution is better than a wrong one.
            }
        }
    }
    let mut out = now.clone();
    minus(&mut out.native_overall, Some(&base.native_overall));
    minus(&mut out.upcall_overall, Some(&base.upcall_overall));
    for (id, h) in out.native_by_method.iter_mut() {
        minus(h, base.native_by_method.get(id));
    }
    out.native_by_method.retain(|_, h| !h.is_empty());
    for (id, h) in out.upcall_by_function.iter_mut() {
        minus(h, base.upcall_by_function.get(id));
    }
    out.upcall_by_function.retain(|_, h| !h.is_empty());
    out.methods_without_histogram = now
        .methods_without_histogram
        .saturating_sub(base.methods_without_histogram);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::merge::MethodTotals;

    fn row(tid: i64, name: &str, cpu: u64, alive: bool) -> ThreadSummary {
        ThreadSummary {
            name: name.into(),
            tid,
            counts: crate::merge::JavaCounts {
                bytecode_ns: cpu,
                native_ns: 2 * cpu,
                jni_calls: cpu / 10,
                native_calls: cpu / 5,
            },
            alive_at_exit: alive,
            boundary_samples: Default::default(),
            boundary: Default::default(),
        }
    }

    #[test]
    fn a_window_keeps_only_what_was_added_after_the_reset() {
        let mut base = Totals {
            counts: crate::merge::JavaCounts {
                bytecode_ns: 100,
                native_ns: 200,
                native_calls: 20,
                jni_calls: 10,
            },
            threads_seen: 3,
            ..Totals::default()
        };
        base.methods.insert(
            7,
            MethodTotals {
                calls: 20,
                total_ns: 200,
                self_ns: 150,
                samples: [0; 3],
            },
        );
        base.threads = vec![row(1, "ended", 40, false), row(2, "alive", 60, true)];
        let mut now = base.clone();
        now.counts.bytecode_ns = 180;
        now.counts.native_ns = 330;
        now.counts.native_calls = 25;
        now.methods.get_mut(&7).unwrap().calls = 25;
        now.methods.insert(
            9,
            MethodTotals {
                calls: 1,
                total_ns: 5,
                self_ns: 5,
                samples: [0; 3],
            },
        );
        now.threads_seen = 4;
        // tid 2 still alive with more time; tid 1 reused by a new thread.
        now.threads = vec![
            row(1, "ended", 40, false),
            row(2, "alive", 90, true),
            row(1, "new", 10, true),
        ];
        let window = totals_since(&now, &base);
        assert_eq!(window.counts.bytecode_ns, 80);
        assert_eq!(window.counts.native_ns, 130);
        assert_eq!(window.counts.native_calls, 5);
        assert_eq!(window.methods[&7].calls, 5);
        assert_eq!(window.methods[&9].calls, 1);
        assert_eq!(window.threads.len(), 2);
        assert_eq!(window.threads[0].name, "alive");
        assert_eq!(window.threads[0].counts.bytecode_ns, 30);
        assert_eq!(window.threads[1].name, "new");
        assert_eq!(window.threads[1].counts.bytecode_ns, 10);
        assert_eq!(window.threads_seen, 2);
    }
}
