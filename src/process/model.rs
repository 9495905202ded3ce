//! The `process` section's model: the parts, their sums, per-thread rows and snapshots.

use serde::{Deserialize, Serialize};

/// A part of the process's CPU time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Part {
    JavaBytecode,
    JavaNative,
    JitCompiler,
    Gc,
    VmOther,
    NativeThreads,
    Agent,
    Unattributed,
}

impl Part {
    pub(crate) const ALL: [Part; 8] = [
        Part::JavaBytecode,
        Part::JavaNative,
        Part::JitCompiler,
        Part::Gc,
        Part::VmOther,
        Part::NativeThreads,
        Part::Agent,
        Part::Unattributed,
    ];

    /// The JSON key (and CSV / `.hlog` tag name).
    pub(crate) fn key(self) -> &'static str {
        match self {
            Part::JavaBytecode => "java_bytecode",
            Part::JavaNative => "java_native",
            Part::JitCompiler => "jit_compiler",
            Part::Gc => "gc",
            Part::VmOther => "vm_other",
            Part::NativeThreads => "native_threads",
            Part::Agent => "agent",
            Part::Unattributed => "unattributed",
        }
    }

    /// The name for people (text summary, HTML).
    pub(crate) fn label(self) -> &'static str {
        match self {
            Part::JavaBytecode => "Java bytecode",
            Part::JavaNative => "Java native (JNI)",
            Part::JitCompiler => "JIT compiler",
            Part::Gc => "GC",
            Part::VmOther => "VM other",
            Part::NativeThreads => "native threads",
            Part::Agent => "agent",
            Part::Unattributed => "unattributed",
        }
    }
}

/// CPU ns per part. Field names are the JSON keys.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Parts {
    pub(crate) java_bytecode: u64,
    pub(crate) java_native: u64,
    pub(crate) jit_compiler: u64,
    pub(crate) gc: u64,
    pub(crate) vm_other: u64,
    pub(crate) native_threads: u64,
    pub(crate) agent: u64,
    pub(crate) unattributed: u64,
}

impl Parts {
    fn slot(&mut self, part: Part) -> &mut u64 {
        match part {
            Part::JavaBytecode => &mut self.java_bytecode,
            Part::JavaNative => &mut self.java_native,
            Part::JitCompiler => &mut self.jit_compiler,
            Part::Gc => &mut self.gc,
            Part::VmOther => &mut self.vm_other,
            Part::NativeThreads => &mut self.native_threads,
            Part::Agent => &mut self.agent,
            Part::Unattributed => &mut self.unattributed,
        }
    }

    pub(crate) fn get(&self, part: Part) -> u64 {
        match part {
            Part::JavaBytecode => self.java_bytecode,
            Part::JavaNative => self.java_native,
            Part::JitCompiler => self.jit_compiler,
            Part::Gc => self.gc,
            Part::VmOther => self.vm_other,
            Part::NativeThreads => self.native_threads,
            Part::Agent => self.agent,
            Part::Unattributed => self.unattributed,
        }
    }

    pub(crate) fn add(&mut self, part: Part, ns: u64) {
        let slot = self.slot(part);
        *slot = slot.saturating_add(ns);
    }

    /// The sum of all parts.
    pub(crate) fn sum(&self) -> u64 {
        Part::ALL.iter().map(|&p| self.get(p)).sum()
    }

    /// Every part with its value, in [`Part::ALL`] order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (Part, u64)> + '_ {
        Part::ALL.iter().map(move |&p| (p, self.get(p)))
    }

    /// What was added between `earlier` and `self` (both cumulative), part by part, at least 0.
    pub(crate) fn since(&self, earlier: &Parts) -> Parts {
        let mut out = Parts::default();
        for part in Part::ALL {
            out.add(part, self.get(part).saturating_sub(earlier.get(part)));
        }
        out
    }
}

/// One thread's CPU time in one part (a thread has a row per part it has time in).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ThreadRow {
    /// The Java name of a Java thread, else the OS name (at most 15 characters).
    pub(crate) name: String,
    pub(crate) tid: i64,
    pub(crate) part: Part,
    pub(crate) cpu_ns: u64,
}

/// The `process` section of the report.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(crate) struct ProcessCpu {
    /// The process's CPU time (user + system, all threads, ended ones included) at VMDeath.
    pub(crate) cpu_ns: u64,
    /// `cpu_ns` split; the parts add up to it exactly.
    pub(crate) parts: Parts,
    /// Per thread and part, largest first. Their sum per part is that part (except `unattributed`).
    pub(crate) threads: Vec<ThreadRow>,
    /// Period of the background scan in ms (null with `scan=off`).
    pub(crate) scan_period_ms: Option<u64>,
    /// Scans made (periodic, interval snapshots and the final one).
    pub(crate) scans: u64,
    /// Threads that ended before VMDeath, accounted up to their last look or JVMTI ThreadEnd.
    pub(crate) threads_ended: u64,
    /// Caveats, added to the report's notes.
    #[serde(skip)]
    pub(crate) notes: Vec<String>,
}

/// The cumulative process figures at one moment (`.hlog` intervals are differences of these).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct CpuSnapshot {
    pub(crate) cpu_ns: u64,
    pub(crate) parts: Parts,
}

impl CpuSnapshot {
    /// The interval from `earlier` to `self`. Parts are clamped at 0, and `unattributed` is what the
    /// interval's process time leaves after the others (a thread read just before the process clock
    /// at one snapshot and attributed at the next can make it a few µs short of exact).
    pub(crate) fn since(&self, earlier: &CpuSnapshot) -> CpuSnapshot {
        let mut parts = self.parts.since(&earlier.parts);
        let cpu_ns = self.cpu_ns.saturating_sub(earlier.cpu_ns);
        parts.unattributed = 0;
        parts.unattributed = cpu_ns.saturating_sub(parts.sum());
        CpuSnapshot { cpu_ns, parts }
    }
}

/// A Java thread with a live context, as the merge sees it now (its open interval included).
#[derive(Clone, Debug, Default)]
pub(crate) struct LiveJava {
    pub(crate) tid: i64,
    pub(crate) name: Option<String>,
    pub(crate) bytecode_ns: u64,
    pub(crate) native_ns: u64,
    pub(crate) in_native: bool,
    pub(crate) began_native: bool,
}

/// `total` split in proportion to `weights`, rounded so that the parts add up to `total` exactly
/// (largest remainders get the leftover units).
pub(crate) fn split_exactly(total: u64, weights: &[u64]) -> Vec<u64> {
    let sum: u128 = weights.iter().map(|&w| w as u128).sum();
    if sum == 0 {
        return vec![0; weights.len()];
    }
    let mut parts: Vec<(u64, u128, usize)> = weights
        .iter()
        .enumerate()
        .map(|(i, &w)| {
            let exact = total as u128 * w as u128;
            ((exact / sum) as u64, exact % sum, i)
        })
        .collect();
    let assigned: u64 = parts.iter().map(|p| p.0).sum();
    let mut order: Vec<usize> = (0..parts.len()).collect();
    order.sort_by(|&a, &b| parts[b].1.cmp(&parts[a].1).then(a.cmp(&b)));
    for &i in order.iter().take((total - assigned) as usize) {
        parts[i].0 += 1;
    }
    parts.into_iter().map(|p| p.0).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_add_get_and_since() {
        let mut a = Parts::default();
        for (i, p) in Part::ALL.into_iter().enumerate() {
            a.add(p, i as u64 + 1);
        }
        assert_eq!(a.sum(), 36);
        assert_eq!(a.get(Part::Gc), 4);
        let mut b = a;
        b.add(Part::Gc, 10);
        assert_eq!(b.since(&a).sum(), 10);
        assert_eq!(a.since(&b).sum(), 0);
        let keys: Vec<_> = a.iter().map(|(p, _)| p.key()).collect();
        let json = serde_json::to_value(a).unwrap();
        assert_eq!(json.as_object().unwrap().len(), 8);
        for key in keys {
            assert!(json.get(key).is_some(), "{key}");
        }
    }

    #[test]
    fn snapshot_intervals_add_up() {
        let mut a = CpuSnapshot {
            cpu_ns: 1000,
            ..CpuSnapshot::default()
        };
        a.parts.java_bytecode = 600;
        a.parts.unattributed = 400;
        let mut b = a;
        b.cpu_ns = 2000;
        b.parts.java_bytecode = 1500;
        b.parts.unattributed = 500;
        let d = b.since(&a);
        assert_eq!(d.cpu_ns, 1000);
        assert_eq!(d.parts.java_bytecode, 900);
        assert_eq!(d.parts.unattributed, 100);
        assert_eq!(d.parts.sum(), d.cpu_ns);
    }
}
