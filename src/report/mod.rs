//! The report: built once from the merged totals, rendered by one module per format.

pub(crate) mod collapsed;
pub(crate) mod csv;
pub(crate) mod diff;
pub(crate) mod diff_html;
pub(crate) mod flame;
pub(crate) mod hgrm;
pub(crate) mod hlog;
pub(crate) mod html;
pub(crate) mod json;
pub(crate) mod pprof;
pub(crate) mod text;

use crate::merge::Totals;
use crate::options::{Format, Options};
pub(crate) use crate::process::split_exactly;
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Facts about the run that are not counters.
pub(crate) struct RunInfo {
    pub(crate) mode: &'static str,
    /// How J2N was caught: `bind` or `wrap`.
    pub(crate) j2n: &'static str,
    /// What the bind hook did (bind mode only).
    pub(crate) bind: Option<crate::bind::BindStats>,
    /// Bind mode: ids of the methods that are JIT intrinsics (None when not known).
    pub(crate) intrinsics: Option<std::collections::BTreeSet<u32>>,
    pub(crate) clock: String,
    pub(crate) clock_reason: String,
    pub(crate) tsc_hz: Option<u64>,
    pub(crate) jdk_version: String,
    pub(crate) jdk_feature: u32,
    pub(crate) transition_pair_ns: f64,
    pub(crate) wall_ns: u64,
    pub(crate) j2n_enabled: bool,
    pub(crate) jni_wrapped: bool,
    pub(crate) notes: Vec<String>,
}

#[derive(Serialize, Deserialize, Clone, Debug)]
pub(crate) struct NativeMethodRow {
    pub(crate) class: String,
    pub(crate) name: String,
    pub(crate) descriptor: String,
    pub(crate) calls: u64,
    pub(crate) total_ns: u64,
    pub(crate) self_ns: u64,
    /// Self time per call: median, 99th percentile and maximum (null without a histogram, see
    /// `histograms::METHOD_HISTOGRAM_BUDGET`).
    pub(crate) p50_ns: Option<u64>,
    pub(crate) p99_ns: Option<u64>,
    pub(crate) max_ns: Option<u64>,
    /// Bind mode: whether the method is a JIT intrinsic. Compiled code may then run it without
    /// entering native code; `calls` counts only the calls that did. Null when not known.
    pub(crate) intrinsic: Option<bool>,
    /// The agent's method id (keys `histograms.native_self_by_method`).
    pub(crate) id: Option<u32>,
}

impl NativeMethodRow {
    /// `pkg.Class.name(param,param)`: the method as a frame name (no spaces or semicolons).
    pub(crate) fn frame_name(&self) -> String {
        format!(
            "{}.{}({})",
            self.class.replace('/', "."),
            self.name,
            java_parameter_types(&self.descriptor).join(",")
        )
    }

    /// `pkg/Class.name(descriptor)` as in the text table.
    pub(crate) fn display_name(&self) -> String {
        format!(
            "{}.{}{}",
            self.class.replace('/', "."),
            self.name,
            self.descriptor
        )
    }
}

/// Parameter types of a method descriptor in Java source spelling: `(J[Ljava/lang/String;)V` →
/// `["long", "java.lang.String[]"]`. Malformed input yields what could be read.
pub(crate) fn java_parameter_types(descriptor: &str) -> Vec<String> {
    let inner = descriptor
        .strip_prefix('(')
        .and_then(|d| d.split(')').next())
        .unwrap_or("");
    let mut out = Vec::new();
    let mut chars = inner.chars();
    let mut dims = 0;
    while let Some(c) = chars.next() {
        let base = match c {
            '[' => {
                dims += 1;
                continue;
            }
            'B' => "byte".to_string(),
            'C' => "char".to_string(),
            'D' => "double".to_string(),
            'F' => "float".to_string(),
            'I' => "int".to_string(),
            'J' => "long".to_string(),
            'S' => "short".to_string(),
            'Z' => "boolean".to_string(),
            'L' => chars
                .by_ref()
                .take_while(|&c| c != ';')
                .collect::<String>()
                .replace('/', "."),
            other => other.to_string(),
        };
        out.push(format!("{base}{}", "[]".repeat(dims)));
        dims = 0;
    }
    out
}

#[derive(Serialize, Deserialize, Clone, Debug)]
pub(crate) struct JniFunctionRow {
    pub(crate) name: String,
    pub(crate) calls: u64,
    pub(crate) java_ns: u64,
    /// Java time per upcall: median, 99th percentile and maximum (null if never called).
    pub(crate) p50_ns: Option<u64>,
    pub(crate) p99_ns: Option<u64>,
    pub(crate) max_ns: Option<u64>,
}

/// Percentiles of one latency histogram, in ns.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub(crate) struct LatencySummary {
    pub(crate) count: u64,
    pub(crate) min_ns: u64,
    pub(crate) mean_ns: f64,
    pub(crate) p50_ns: u64,
    pub(crate) p90_ns: u64,
    pub(crate) p99_ns: u64,
    pub(crate) p999_ns: u64,
    pub(crate) max_ns: u64,
}

impl LatencySummary {
    pub(crate) fn of(h: &Histogram<u64>) -> Option<LatencySummary> {
        (!h.is_empty()).then(|| LatencySummary {
            count: h.len(),
            min_ns: h.min(),
            mean_ns: (h.mean() * 10.0).round() / 10.0,
            p50_ns: h.value_at_quantile(0.5),
            p90_ns: h.value_at_quantile(0.9),
            p99_ns: h.value_at_quantile(0.99),
            p999_ns: h.value_at_quantile(0.999),
            max_ns: h.max(),
        })
    }
}

/// The collapsed-stacks sampling of the run (`stacks=`), with its measured cost.
#[derive(Serialize, Deserialize, Clone, Debug)]
pub(crate) struct StacksSummary {
    /// `every` or `every Nth` (the first call of each method on each thread is always sampled).
    pub(crate) sampling: String,
    pub(crate) depth: u32,
    /// Calls whose Java stack was captured.
    pub(crate) captured_calls: u64,
    /// Captures where GetStackTrace failed (kept without callers).
    pub(crate) failed_captures: u64,
    /// Calls that ended before the VM's live phase, when no stack can be read (bind mode counts
    /// natives from the VM's start; their time is split over the method's sampled stacks).
    pub(crate) calls_before_live_phase: u64,
    /// Mean wall-clock cost of one capture (GetStackTrace plus naming new frames), in ns.
    pub(crate) capture_ns_per_call: f64,
    /// Total capture time; it runs after the native call's clock read, so it is charged to bytecode.
    pub(crate) capture_ns_total: u64,
    pub(crate) distinct_stacks: usize,
}

/// One `per_thread` entry: the thread's merged numbers as they are.
pub(crate) type ThreadRow = crate::merge::ThreadSummary;

/// Everything the agent reports. Field names are the JSON keys (documented in the README).
#[derive(Serialize, Deserialize, Clone, Debug)]
pub struct Report {
    pub(crate) tool: String,
    pub(crate) version: String,
    pub(crate) mode: String,
    pub(crate) j2n: String,
    pub(crate) jdk_version: String,
    pub(crate) jdk_feature: u32,
    pub(crate) clock: String,
    pub(crate) clock_reason: String,
    pub(crate) tsc_hz: Option<u64>,
    pub(crate) wall_ns: u64,
    /// Raw CPU time per state, as the clock measured it.
    pub(crate) bytecode_ns: u64,
    pub(crate) native_ns: u64,
    pub(crate) native_pct: f64,
    /// The same, minus the agent's own transition cost measured at start-up.
    pub(crate) compensated_bytecode_ns: u64,
    pub(crate) compensated_native_ns: u64,
    pub(crate) compensated_native_pct: f64,
    pub(crate) transition_pair_ns: f64,
    pub(crate) jni_calls: u64,
    pub(crate) jni_calls_by_function: BTreeMap<String, u64>,
    pub(crate) jni_functions: Vec<JniFunctionRow>,
    pub(crate) native_calls: u64,
    pub(crate) native_methods: Vec<NativeMethodRow>,
    pub(crate) unmatched_transitions: u64,
    pub(crate) threads: u64,
    pub(crate) threads_merged: u64,
    pub(crate) per_thread: Vec<ThreadRow>,
    /// The threads beyond the `per_thread` rows (the least busy ones, when more than
    /// `merge::THREAD_ROWS` threads ran), summed; null when every thread has a row.
    pub(crate) other_threads: Option<crate::merge::OtherThreads>,
    pub(crate) classes_seen: u64,
    pub(crate) classes_with_natives: u64,
    pub(crate) classes_rewritten: u64,
    pub(crate) classes_failed: u64,
    pub(crate) natives_wrapped: u64,
    pub(crate) natives_skipped: u64,
    pub(crate) natives_skipped_by_reason: BTreeMap<String, u64>,
    /// Bind mode: natives redirected to trampolines, re-binds, and binds left alone by reason.
    pub(crate) bind: Option<crate::bind::BindStats>,
    pub(crate) class_failures: Vec<String>,
    pub(crate) j2n_enabled: bool,
    pub(crate) jni_wrapped: bool,
    pub(crate) notes: Vec<String>,
    /// Native self time per call over all methods, and Java time per JNI upcall over all functions.
    pub(crate) native_self_latency: Option<LatencySummary>,
    pub(crate) jni_java_latency: Option<LatencySummary>,
    /// Native methods that got no latency histogram because the budget was used up.
    pub(crate) methods_without_histogram: u64,
    /// Stack sampling (null unless `stacks=` was given).
    pub(crate) stacks: Option<StacksSummary>,
    /// The whole process's CPU time split into parts (see [`crate::process`]).
    pub(crate) process: crate::process::ProcessCpu,
    /// Latency histograms, base64 HdrHistogram V2 (what `nativeacct report` renders `.hgrm` and
    /// the HTML charts from).
    #[serde(with = "json::saved_histograms")]
    pub(crate) histograms: Option<std::sync::Arc<crate::histograms::Histograms>>,
    /// Collapsed stacks `frame;frame;frame` → exact native self ns (see [`Report::attach_stacks`]).
    #[serde(rename = "collapsed_stacks")]
    pub(crate) collapsed: Vec<(String, u64)>,
    /// Rows of ranked tables (`top=`).
    pub top: usize,
    /// True for a periodic snapshot written during the run (`snapshot=`): the numbers so far.
    pub(crate) partial: bool,
    /// For a snapshot, when it was taken: ns since the agent started (the clock of `wall_ns`).
    pub(crate) snapshot_at_ns: Option<u64>,
    /// What wrote this report: `vm_death`, `process_exit` (the process exited without VMDeath,
    /// e.g. C `exit()` called in a native method) or `snapshot`.
    pub(crate) written_at: String,
}

fn pct(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        (part as f64 * 10000.0 / whole as f64).round() / 100.0
    }
}

impl Report {
    pub(crate) fn build(
        totals: &Totals,
        histograms: crate::histograms::Histograms,
        info: RunInfo,
    ) -> Report {
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
                    p50_ns: None,
                    p99_ns: None,
                    max_ns: None,
                    intrinsic: info.intrinsics.as_ref().map(|set| set.contains(&id)),
                    id: Some(id),
                }
            })
            .collect();
        for row in &mut native_methods {
            if let Some(h) = row.id.and_then(|id| histograms.native_by_method.get(&id)) {
                if let Some(summary) = LatencySummary::of(h) {
                    row.p50_ns = Some(summary.p50_ns);
                    row.p99_ns = Some(summary.p99_ns);
                    row.max_ns = Some(summary.max_ns);
                }
            }
        }
        native_methods.sort_by(|a, b| {
            b.self_ns
                .cmp(&a.self_ns)
                .then(b.calls.cmp(&a.calls))
                .then(a.class.cmp(&b.class))
                .then(a.name.cmp(&b.name))
                .then(a.descriptor.cmp(&b.descriptor))
        });
        let jni_functions: Vec<JniFunctionRow> = totals
            .jni
            .iter()
            .enumerate()
            .map(|(i, j)| {
                let summary = histograms
                    .upcall_by_function
                    .get(&(i as u32))
                    .and_then(LatencySummary::of);
                JniFunctionRow {
                    name: jni_wrappers::FUNCTION_NAMES
                        .get(i)
                        .copied()
                        .unwrap_or("?")
                        .to_string(),
                    calls: j.calls,
                    java_ns: j.java_ns,
                    p50_ns: summary.as_ref().map(|s| s.p50_ns),
                    p99_ns: summary.as_ref().map(|s| s.p99_ns),
                    max_ns: summary.as_ref().map(|s| s.max_ns),
                }
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
        let mut per_thread: Vec<ThreadRow> = totals.threads.clone();
        per_thread.sort_by_key(|t| std::cmp::Reverse(t.bytecode_ns + t.native_ns));
        Report {
            tool: "nativeacct".to_string(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            mode: info.mode.to_string(),
            j2n: info.j2n.to_string(),
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
            other_threads: totals.other_threads.clone(),
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
            bind: info.bind,
            class_failures: stats.failures.lock().map(|f| f.clone()).unwrap_or_default(),
            j2n_enabled: info.j2n_enabled,
            jni_wrapped: info.jni_wrapped,
            notes: info.notes,
            native_self_latency: LatencySummary::of(&histograms.native_overall),
            jni_java_latency: LatencySummary::of(&histograms.upcall_overall),
            methods_without_histogram: histograms.methods_without_histogram,
            stacks: None,
            process: crate::process::ProcessCpu::default(),
            histograms: Some(std::sync::Arc::new(histograms)),
            collapsed: Vec::new(),
            top: crate::options::DEFAULT_TOP,
            partial: false,
            snapshot_at_ns: None,
            written_at: "vm_death".to_string(),
        }
    }

    /// Build the collapsed stacks: each native method's exact self time, split over the Java caller
    /// chains of its sampled calls in proportion to their sampled self time (with `stacks=every` the
    /// split is exact too). A method with no sampled call gets one single-frame line.
    pub(crate) fn attach_stacks(
        &mut self,
        data: Option<crate::stacks::StackData>,
        options: &Options,
    ) {
        use std::collections::HashMap;
        let mut by_method: HashMap<u32, Vec<&crate::stacks::StackSample>> = HashMap::new();
        if let Some(data) = &data {
            for sample in &data.samples {
                by_method.entry(sample.method).or_default().push(sample);
            }
            self.stacks = Some(StacksSummary {
                sampling: match options.stacks {
                    crate::options::StackSampling::Nth(n) => format!("every {n}th"),
                    _ => "every".to_string(),
                },
                depth: options.depth,
                captured_calls: data.captures,
                failed_captures: data.failures,
                calls_before_live_phase: data.before_live,
                capture_ns_per_call: if data.captures == 0 {
                    0.0
                } else {
                    (data.capture_ns as f64 / data.captures as f64 * 10.0).round() / 10.0
                },
                capture_ns_total: data.capture_ns,
                distinct_stacks: data.samples.len(),
            });
        }
        let mut lines: HashMap<String, u64> = HashMap::new();
        for row in &self.native_methods {
            if row.self_ns == 0 {
                continue;
            }
            let leaf = row.frame_name();
            let samples = row
                .id
                .and_then(|id| by_method.get(&id))
                .map(Vec::as_slice)
                .unwrap_or(&[]);
            let weights: Vec<u64> = if samples.iter().any(|s| s.sampled_ns > 0) {
                samples.iter().map(|s| s.sampled_ns).collect()
            } else {
                samples.iter().map(|s| s.sampled_calls).collect()
            };
            if weights.iter().sum::<u64>() == 0 {
                *lines.entry(leaf).or_default() += row.self_ns;
                continue;
            }
            for (sample, share) in samples.iter().zip(split_exactly(row.self_ns, &weights)) {
                let mut key = sample.callers.join(";");
                if !key.is_empty() {
                    key.push(';');
                }
                key.push_str(&leaf);
                *lines.entry(key).or_default() += share;
            }
        }
        let mut collapsed: Vec<(String, u64)> =
            lines.into_iter().filter(|(_, ns)| *ns > 0).collect();
        collapsed.sort();
        self.collapsed = collapsed;
    }
}

/// At VMDeath: the last interval from the final histograms, then the log is put in place as `target`.
fn finish_interval_log(
    report: &Report,
    target: &crate::outputs::Target,
) -> std::io::Result<std::path::PathBuf> {
    let Some(histograms) = &report.histograms else {
        return Err(std::io::Error::other("no histograms"));
    };
    let cpu = crate::process::CpuSnapshot {
        cpu_ns: report.process.cpu_ns,
        parts: report.process.parts,
    };
    crate::interval::finish(histograms, &cpu, report.top, target)
}

/// The bytes of a format that is one file (every format but `hgrm` and `hlog`).
pub fn render_single(report: &Report, format: Format) -> Option<Vec<u8>> {
    Some(match format {
        Format::Text => text::render(report).into_bytes(),
        Format::Json => json::render(report),
        Format::Csv => csv::render(report).into_bytes(),
        Format::Collapsed => collapsed::render(report).into_bytes(),
        Format::Html => html::render(report).into_bytes(),
        Format::Svg => flame::svg(report),
        Format::Pprof => pprof::render(report),
        Format::Hgrm | Format::Hlog => return None,
    })
}

/// Write every format `options` selects, each where [`crate::outputs`] puts it; returns the paths
/// written. Failures are reported on stderr and do not stop the other formats.
pub(crate) fn write_outputs(report: &Report, options: &Options) -> Vec<std::path::PathBuf> {
    let (written, failed) =
        write_counting_failures(report, options, "; the report follows on stderr as JSON");
    if failed > 0 {
        // A full disk or a vanished directory must not lose the run: the whole report, once.
        let mut body = json::render(report);
        body.push(b'\n');
        let _ = std::io::Write::write_all(&mut std::io::stderr().lock(), &body);
    }
    written
}

/// Write the files of [`write_outputs`]; returns them and how many could not be written (each said
/// on stderr, followed by `after_error`).
fn write_counting_failures(
    report: &Report,
    options: &Options,
    after_error: &str,
) -> (Vec<std::path::PathBuf>, usize) {
    use crate::outputs::OutputName;
    // (name, body); no body for the interval log, which `hlog::finish` completes.
    let mut files: Vec<(OutputName, Option<Vec<u8>>)> = Vec::new();
    for &format in &options.formats {
        let body = match format {
            Format::Hgrm => {
                for (what, body) in hgrm::render_all(report) {
                    files.push((OutputName::Hgrm(what), Some(body.into_bytes())));
                }
                continue;
            }
            Format::Hlog => {
                files.push((OutputName::Format(Format::Hlog), None));
                continue;
            }
            single => render_single(report, single).unwrap_or_default(),
        };
        files.push((OutputName::Format(format), Some(body)));
    }
    let names: Vec<OutputName> = files.iter().map(|(name, _)| name.clone()).collect();
    let targets = crate::outputs::targets_at_exit(options, &names);
    let mut written = Vec::new();
    let mut failed = 0;
    for ((_, body), target) in files.into_iter().zip(targets) {
        let result = match body {
            Some(body) => crate::outputs::write(&target, &body),
            None => finish_interval_log(report, &target),
        };
        match result {
            Ok(path) => written.push(path),
            Err(e) => {
                failed += 1;
                crate::diag::line(&format!(
                    "error: could not write {}: {e}{after_error}",
                    target.path.display()
                ))
            }
        }
    }
    (written, failed)
}

/// For `nativeacct report`: write the formats `options` selects from a saved report, named and
/// placed as the agent would (see [`crate::outputs`]). The interval log is not among them: it is
/// written while the program runs.
pub fn write_saved(report: &Report, options: &Options) -> Result<Vec<std::path::PathBuf>, String> {
    if options.formats.contains(&Format::Hlog) {
        return Err("format=hlog is written while the program runs (interval=); a saved report has only the whole run".to_string());
    }
    crate::outputs::settle(options)
        .map_err(|(path, e)| format!("cannot write {}: {e}", path.display()))?;
    match write_counting_failures(report, options, "") {
        (written, 0) => Ok(written),
        (_, failed) => Err(format!("{failed} file(s) could not be written")),
    }
}

/// The written paths for people: every path, except that `.hgrm` files are summed up as one pattern.
pub(crate) fn describe_paths(paths: &[std::path::PathBuf]) -> String {
    let is_hgrm = |p: &std::path::PathBuf| p.extension().is_some_and(|e| e == "hgrm");
    let mut parts: Vec<String> = paths
        .iter()
        .filter(|p| !is_hgrm(p))
        .map(|p| p.display().to_string())
        .collect();
    let hgrm: Vec<_> = paths.iter().filter(|p| is_hgrm(p)).collect();
    if let Some(first) = hgrm.first() {
        // `<base>.native.hgrm` is always first: the pattern is `<base>.*.hgrm`.
        let shown = first.display().to_string();
        let pattern = shown
            .strip_suffix("native.hgrm")
            .map(|b| format!("{b}*.hgrm"))
            .unwrap_or(shown);
        parts.push(format!("{} .hgrm files ({pattern})", hgrm.len()));
    }
    parts.join(", ")
}

/// At start-up: decide where every output goes and check that it can be written there (see
/// [`crate::outputs::settle`]), switch on stack sampling and open the interval log as the options ask.
/// Returns the path that cannot be written, and why.
pub(crate) fn prepare_outputs(
    options: &Options,
) -> Result<(), (std::path::PathBuf, std::io::Error)> {
    crate::outputs::settle(options)?;
    crate::stacks::configure(options.stacks, options.depth);
    if options.formats.contains(&Format::Hlog) && options.interval.is_some() {
        let target = crate::outputs::target(options, Format::Hlog);
        crate::interval::start(&target, options.interval, options.top)
            .map_err(|e| (target.path.clone(), e))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameter_types_read_every_descriptor_shape() {
        assert_eq!(
            java_parameter_types("(IJ[Ljava/lang/String;[[DZLa/B$C;)V"),
            [
                "int",
                "long",
                "java.lang.String[]",
                "double[][]",
                "boolean",
                "a.B$C"
            ]
        );
        assert!(java_parameter_types("()V").is_empty());
    }

    #[test]
    fn split_is_proportional_and_adds_up() {
        assert_eq!(split_exactly(10, &[1, 1, 1]), [4, 3, 3]);
        assert_eq!(split_exactly(1000, &[3, 1]), [750, 250]);
        assert_eq!(split_exactly(7, &[0, 5]), [0, 7]);
        let parts = split_exactly(u64::MAX, &[u64::MAX, 3, 7]);
        assert_eq!(
            parts.iter().map(|&p| p as u128).sum::<u128>(),
            u64::MAX as u128
        );
    }
}
