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

/// CPU ns per part, indexed by [`Part`]. In JSON, an object with the parts' keys in
/// [`Part::ALL`] order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Parts([u64; Part::ALL.len()]);

impl Parts {
    pub(crate) fn get(&self, part: Part) -> u64 {
        self.0[part as usize]
    }

    pub(crate) fn set(&mut self, part: Part, ns: u64) {
        self.0[part as usize] = ns;
    }

    pub(crate) fn add(&mut self, part: Part, ns: u64) {
        let slot = &mut self.0[part as usize];
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

impl Serialize for Parts {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(Part::ALL.len()))?;
        for (part, ns) in self.iter() {
            map.serialize_entry(part.key(), &ns)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for Parts {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let by_key = std::collections::HashMap::<String, u64>::deserialize(deserializer)?;
        let mut parts = Parts::default();
        for part in Part::ALL {
            let ns = by_key
                .get(part.key())
                .ok_or_else(|| serde::de::Error::missing_field(part.key()))?;
            parts.set(part, *ns);
        }
        Ok(parts)
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
    /// Threads that ended before VMDeath, accounted up to their last look or their exit.
    pub(crate) threads_ended: u64,
    /// How thread ends were seen: `exit_hook` (every thread started after the agent loaded is read
    /// as it exits) or `scan` (only by the scan; the reason is in the notes).
    #[serde(default)]
    pub(crate) method: String,
    /// Libraries whose `pthread_create` the exit hook replaced.
    #[serde(default)]
    pub(crate) libraries_hooked: u32,
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
        parts.set(Part::Unattributed, 0);
        parts.set(Part::Unattributed, cpu_ns.saturating_sub(parts.sum()));
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

/// [`split_exactly`] of two weights, with no allocation and (while `total × a` fits in 64 bits)
/// no 128-bit division: every thread's commit takes it. The same result: two remainders add up
/// to 0 or to the sum, so at most one unit is left over, and it goes to `a` unless `b`'s
/// remainder is larger.
pub(crate) fn split_two(total: u64, a: u64, b: u64) -> [u64; 2] {
    match (a.checked_add(b), total.checked_mul(a)) {
        (Some(sum), Some(exact)) if sum != 0 => {
            let (quotient, remainder) = (exact / sum, exact % sum);
            let to_a = quotient + u64::from(remainder != 0 && remainder >= sum - remainder);
            [to_a, total - to_a]
        }
        _ => {
            let split = split_exactly(total, &[a, b]);
            [split[0], split[1]]
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_two_is_split_exactly_of_two_weights() {
        let edges = [
            0,
            1,
            2,
            3,
            7,
            10,
            999,
            1 << 31,
            u64::MAX / 3,
            u64::MAX - 1,
            u64::MAX,
        ];
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed >> (seed % 61)
        };
        let mut cases: Vec<[u64; 3]> = Vec::new();
        for &t in &edges {
            for &a in &edges {
                for &b in &edges {
                    cases.push([t, a, b]);
                }
            }
        }
        cases.extend((0..20_000).map(|_| [next(), next() % 1000, next() % 1000]));
        cases.extend((0..20_000).map(|_| [next(), next(), next()]));
        for [total, a, b] in cases {
            assert_eq!(
                split_two(total, a, b).to_vec(),
                split_exactly(total, &[a, b]),
                "split_two({total}, {a}, {b})"
            );
        }
    }

    #[test]
    fn parts_index_follows_all_and_json_keeps_the_keys_in_order() {
        for (i, part) in Part::ALL.into_iter().enumerate() {
            assert_eq!(part as usize, i, "{part:?}");
        }
        let mut parts = Parts::default();
        for (i, part) in Part::ALL.into_iter().enumerate() {
            parts.set(part, 10 * i as u64);
        }
        let json = serde_json::to_string(&parts).unwrap();
        assert_eq!(
            json,
            "{\"java_bytecode\":0,\"java_native\":10,\"jit_compiler\":20,\"gc\":30,\"vm_other\":40,\"native_threads\":50,\"agent\":60,\"unattributed\":70}"
        );
        assert_eq!(serde_json::from_str::<Parts>(&json).unwrap(), parts);
        let missing = json.replace(",\"agent\":60", "");
        assert!(serde_json::from_str::<Parts>(&missing).is_err());
    }

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
        a.parts.set(Part::JavaBytecode, 600);
        a.parts.set(Part::Unattributed, 400);
        let mut b = a;
        b.cpu_ns = 2000;
        b.parts.set(Part::JavaBytecode, 1500);
        b.parts.set(Part::Unattributed, 500);
        let d = b.since(&a);
        assert_eq!(d.cpu_ns, 1000);
        assert_eq!(d.parts.get(Part::JavaBytecode), 900);
        assert_eq!(d.parts.get(Part::Unattributed), 100);
        assert_eq!(d.parts.sum(), d.cpu_ns);
    }
}
