//! A window of the process section: what the process's CPU time did between two readings (a
//! `--reset` baseline or the attach, and now).

use super::{split_exactly, Part, Parts, ProcessCpu, ThreadRow};
use std::collections::HashMap;

/// `now - base` for the process section. Per thread, what its CPU clock moved by; of that, the
/// Java parts (exact, from the thread's context) as they moved, and the rest to the thread's other
/// parts that grew, in proportion. (A thread can change parts: one running before an attach has
/// its earlier CPU in another part than later.) `unattributed` is what the window's process time
/// leaves after the other parts.
pub(crate) fn since(now: &ProcessCpu, base: &ProcessCpu) -> ProcessCpu {
    let is_java = |part: Part| matches!(part, Part::JavaBytecode | Part::JavaNative);
    let mut earlier: HashMap<(i64, Part), u64> = HashMap::new();
    let mut earlier_total: HashMap<i64, u64> = HashMap::new();
    let mut base_rows = Parts::default();
    for row in &base.threads {
        *earlier.entry((row.tid, row.part)).or_default() += row.cpu_ns;
        *earlier_total.entry(row.tid).or_default() += row.cpu_ns;
        base_rows.add(row.part, row.cpu_ns);
    }
    let mut by_tid: HashMap<i64, Vec<&ThreadRow>> = HashMap::new();
    let mut now_rows = Parts::default();
    for row in &now.threads {
        by_tid.entry(row.tid).or_default().push(row);
        now_rows.add(row.part, row.cpu_ns);
    }
    let mut threads = Vec::new();
    let mut parts = Parts::default();
    for (tid, rows) in by_tid {
        let total: u64 = rows.iter().map(|r| r.cpu_ns).sum();
        let moved = total.saturating_sub(earlier_total.get(&tid).copied().unwrap_or(0));
        let grew = |r: &ThreadRow| {
            r.cpu_ns
                .saturating_sub(earlier.get(&(tid, r.part)).copied().unwrap_or(0))
        };
        let java: u64 = rows
            .iter()
            .filter(|r| is_java(r.part))
            .map(|r| grew(r))
            .sum();
        let java = java.min(moved);
        let others: Vec<(usize, u64)> = rows
            .iter()
            .enumerate()
            .filter(|(_, r)| !is_java(r.part))
            .map(|(i, r)| (i, grew(r)))
            .collect();
        let weights: Vec<u64> = others.iter().map(|(_, w)| *w).collect();
        let shares = split_exactly(moved - java, &weights);
        let mut java_left = java;
        for (i, row) in rows.iter().enumerate() {
            let cpu_ns = if is_java(row.part) {
                let share = grew(row).min(java_left);
                java_left -= share;
                share
            } else {
                others
                    .iter()
                    .position(|(j, _)| *j == i)
                    .map_or(0, |k| shares[k])
            };
            if cpu_ns != 0 {
                parts.add(row.part, cpu_ns);
                threads.push(ThreadRow {
                    cpu_ns,
                    ..(*row).clone()
                });
            }
        }
    }
    // Folded rows of ended threads (no per-thread rows): their part totals, as they moved.
    for part in Part::ALL {
        if part == Part::Unattributed {
            continue;
        }
        let folded_now = now.parts.get(part).saturating_sub(now_rows.get(part));
        let folded_then = base.parts.get(part).saturating_sub(base_rows.get(part));
        parts.add(part, folded_now.saturating_sub(folded_then));
    }
    let cpu_ns = now.cpu_ns.saturating_sub(base.cpu_ns).max(parts.sum());
    parts.set(Part::Unattributed, cpu_ns - parts.sum());
    threads.sort_by(|a, b| b.cpu_ns.cmp(&a.cpu_ns).then(a.tid.cmp(&b.tid)));
    ProcessCpu {
        cpu_ns,
        parts,
        threads,
        scan_period_ms: now.scan_period_ms,
        scans: now.scans.saturating_sub(base.scans),
        threads_ended: now.threads_ended.saturating_sub(base.threads_ended),
        method: now.method.clone(),
        libraries_hooked: now.libraries_hooked,
        notes: now.notes.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thread_that_changes_parts_is_charged_what_its_clock_moved() {
        let row = |tid, part, cpu_ns| ThreadRow {
            name: format!("t{tid}"),
            tid,
            part,
            cpu_ns,
        };
        // At the attach: a Java thread without a context yet, seen as a VM thread; a JIT thread.
        let mut base = ProcessCpu {
            cpu_ns: 1_000,
            threads: vec![row(1, Part::VmOther, 500), row(2, Part::JitCompiler, 300)],
            ..ProcessCpu::default()
        };
        base.parts.add(Part::VmOther, 500);
        base.parts.add(Part::JitCompiler, 300);
        base.parts.add(Part::Unattributed, 200);
        // Later: its 300 ns since are Java (from its context), the rest still where it was.
        let mut now = ProcessCpu {
            cpu_ns: 1_500,
            threads: vec![
                row(1, Part::VmOther, 510),
                row(1, Part::JavaBytecode, 100),
                row(1, Part::JavaNative, 190),
                row(2, Part::JitCompiler, 400),
            ],
            ..ProcessCpu::default()
        };
        for r in now.threads.clone() {
            now.parts.add(r.part, r.cpu_ns);
        }
        now.parts.add(Part::Unattributed, 300);
        let window = since(&now, &base);
        // Thread 1 moved 300 (800 - 500): 290 Java, 10 left for its other part.
        assert_eq!(window.parts.get(Part::JavaBytecode), 100);
        assert_eq!(window.parts.get(Part::JavaNative), 190);
        assert_eq!(window.parts.get(Part::VmOther), 10);
        assert_eq!(window.parts.get(Part::JitCompiler), 100);
        assert_eq!(window.cpu_ns, 500);
        assert_eq!(window.parts.sum(), window.cpu_ns);
        assert_eq!(window.parts.get(Part::Unattributed), 100);
    }
}
