//! The report: built once from the merged totals, rendered by one module per format.

pub mod json;
pub mod text;

use crate::merge::Totals;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;

/// Facts about the run that are not counters.
pub struct RunInfo {
    pub mode: &'static str,
    pub clock: String,
    pub clock_reason: String,
    pub tsc_hz: Option<u64>,
    pub jdk_version: String,
    pub jdk_feature: u32,
    pub transition_pair_ns: f64,
    pub wall_ns: u64,
    pub j2n_enabled: bool,
    pub jni_wrapped: bool,
    pub notes: Vec<String>,
}

#[derive(Serialize, Clone, Debug)]
pub struct NativeMethodRow {
    pub class: String,
    pub name: String,
    pub descriptor: String,
    pub calls: u64,
    pub total_ns: u64,
    pub self_ns: u64,
}

#[derive(Serialize, Clone, Debug)]
pub struct JniFunctionRow {
    pub name: String,
    pub calls: u64,
    pub java_ns: u64,
}

#[derive(Serialize, Clone, Debug)]
pub struct ThreadRow {
    pub name: String,
    pub tid: i64,
    pub bytecode_ns: u64,
    pub native_ns: u64,
    pub jni_calls: u64,
    pub native_calls: u64,
    pub alive_at_exit: bool,
}

/// Everything the agent reports. Field names are the JSON keys (documented in the README).
#[derive(Serialize, Clone, Debug)]
pub struct Report {
    pub tool: &'static str,
    pub version: &'static str,
    pub mode: &'static str,
    pub jdk_version: String,
    pub jdk_feature: u32,
    pub clock: String,
    pub clock_reason: String,
    pub tsc_hz: Option<u64>,
    pub wall_ns: u64,
    /// Raw CPU time per state, as the clock measured it.
    pub bytecode_ns: u64,
    pub native_ns: u64,
    pub native_pct: f64,
    /// The same, minus the agent's own transition cost measured at start-up.
    pub compensated_bytecode_ns: u64,
    pub compensated_native_ns: u64,
    pub compensated_native_pct: f64,
    pub transition_pair_ns: f64,
    pub jni_calls: u64,
    pub jni_calls_by_function: BTreeMap<String, u64>,
    pub jni_functions: Vec<JniFunctionRow>,
    pub native_calls: u64,
    pub native_methods: Vec<NativeMethodRow>,
    pub unmatched_transitions: u64,
    pub threads: u64,
    pub threads_merged: u64,
    pub per_thread: Vec<ThreadRow>,
    pub classes_seen: u64,
    pub classes_with_natives: u64,
    pub classes_rewritten: u64,
    pub classes_failed: u64,
    pub natives_wrapped: u64,
    pub natives_skipped: u64,
    pub natives_skipped_by_reason: BTreeMap<String, u64>,
    pub class_failures: Vec<String>,
    pub j2n_enabled: bool,
    pub jni_wrapped: bool,
    pub notes: Vec<String>,
    /// Latency histograms (written by the histogram formats, not part of the JSON).
    #[serde(skip)]
    pub histograms: Option<std::sync::Arc<crate::histograms::Histograms>>,
}

fn pct(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        (part as f64 * 10000.0 / whole as f64).round() / 100.0
    }
}

impl Report {
    pub fn build(totals: &Totals, histograms: crate::histograms::Histograms, info: RunInfo) -> Report {
        use std::sync::atomic::Ordering::Relaxed;
        let stats = &*crate::class_hook::STATS;
        let method_refs = crate::methods::snapshot();
        let mut native_methods: Vec<NativeMethodRow> = totals
            .methods
            .iter()
            .map(|(&id, m)| {
                let r = method_refs.get(id as usize);
                NativeMethodRow {
                    class: r
                        .map(|r| r.class.clone())
                        .unwrap_or_else(|| format!("?id{id}")),
                    name: r.map(|r| r.name.clone()).unwrap_or_default(),
                    descriptor: r.map(|r| r.descriptor.clone()).unwrap_or_default(),
                    calls: m.calls,
                    total_ns: m.total_ns,
                    self_ns: m.self_ns,
                }
            })
            .collect();
        native_methods.sort_by(|a, b| b.self_ns.cmp(&a.self_ns).then(b.calls.cmp(&a.calls)));
        let jni_functions: Vec<JniFunctionRow> = totals
            .jni
            .iter()
            .enumerate()
            .map(|(i, j)| JniFunctionRow {
                name: jni_wrappers::FUNCTION_NAMES
                    .get(i)
                    .copied()
                    .unwrap_or("?")
                    .to_string(),
                calls: j.calls,
                java_ns: j.java_ns,
            })
            .collect();
        let jni_calls_by_function = jni_functions
            .iter()
            .filter(|f| f.calls > 0)
            .map(|f| (f.name.clone(), f.calls))
            .collect();
        let pairs = totals.native_calls + totals.jni_calls;
        let half_cost = (pairs as f64 * info.transition_pair_ns / 2.0) as u64;
        let comp_bytecode = totals.bytecode_ns.saturating_sub(half_cost);
        let comp_native = totals.native_ns.saturating_sub(half_cost);
        let mut per_thread: Vec<ThreadRow> = totals
            .threads
            .iter()
            .map(|t| ThreadRow {
                name: t.name.clone(),
                tid: t.tid,
                bytecode_ns: t.bytecode_ns,
                native_ns: t.native_ns,
                jni_calls: t.jni_calls,
                native_calls: t.native_calls,
                alive_at_exit: t.alive_at_exit,
            })
            .collect();
        per_thread
            .sort_by(|a, b| (b.bytecode_ns + b.native_ns).cmp(&(a.bytecode_ns + a.native_ns)));
        Report {
            tool: "nativeacct",
            version: env!("CARGO_PKG_VERSION"),
            mode: info.mode,
            jdk_version: info.jdk_version,
            jdk_feature: info.jdk_feature,
            clock: info.clock,
            clock_reason: info.clock_reason,
            tsc_hz: info.tsc_hz,
            wall_ns: info.wall_ns,
            bytecode_ns: totals.bytecode_ns,
            native_ns: totals.native_ns,
            native_pct: pct(totals.native_ns, totals.native_ns + totals.bytecode_ns),
            compensated_bytecode_ns: comp_bytecode,
            compensated_native_ns: comp_native,
            compensated_native_pct: pct(comp_native, comp_native + comp_bytecode),
            transition_pair_ns: (info.transition_pair_ns * 10.0).round() / 10.0,
            jni_calls: totals.jni_calls,
            jni_calls_by_function,
            jni_functions,
            native_calls: totals.native_calls,
            native_methods,
            unmatched_transitions: totals.unmatched,
            threads: totals.threads_seen,
            threads_merged: totals.threads_merged,
            per_thread,
            classes_seen: stats.classes_seen.load(Relaxed),
            classes_with_natives: stats.classes_with_natives.load(Relaxed),
            classes_rewritten: stats.classes_rewritten.load(Relaxed),
            classes_failed: stats.classes_failed.load(Relaxed),
            natives_wrapped: stats.natives_wrapped.load(Relaxed),
            natives_skipped: stats.natives_skipped.load(Relaxed),
            natives_skipped_by_reason: stats
                .skip_reasons
                .lock()
                .map(|r| r.clone())
                .unwrap_or_default(),
            class_failures: stats.failures.lock().map(|f| f.clone()).unwrap_or_default(),
            j2n_enabled: info.j2n_enabled,
            jni_wrapped: info.jni_wrapped,
            notes: info.notes,
            histograms: Some(std::sync::Arc::new(histograms)),
        }
    }
}

/// Write `contents` to `path` atomically: a temporary file in the same directory, then a rename.
pub fn write_atomically(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let tmp = temp_path_for(path);
    let result = (|| {
        let mut file = std::fs::File::create(&tmp)?;
        file.write_all(contents)?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Check at start-up that `path` will be writable at exit (creates and removes the temporary file).
pub fn check_writable(path: &Path) -> std::io::Result<()> {
    let tmp = temp_path_for(path);
    std::fs::File::create(&tmp)?;
    std::fs::remove_file(&tmp)
}

fn temp_path_for(path: &Path) -> std::path::PathBuf {
    let mut name = path
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_default();
    name.push(format!(".tmp-{}", std::process::id()));
    path.with_file_name(name)
}
