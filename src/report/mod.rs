//! The report: built once from the merged totals, rendered by one module per format.
//!
//! This module holds the run's model ([`Report`] and its rows); each format is a file that turns
//! the model into bytes (`text`, `json`, `csv`, `hgrm`, `hlog`, `collapsed`, `html`, `svg` through
//! `flame`, `pprof`; `diff` and `diff_html` compare two reports). Where the bytes go is
//! `crate::publish`, above this module.

mod caveats;
pub(crate) mod collapsed;
pub(crate) mod csv;
pub(crate) mod diff;
pub(crate) mod diff_html;
pub(crate) mod flame;
pub(crate) mod hgrm;
pub(crate) mod hlog;
pub(crate) mod html;
mod html_boundary;
mod html_latency;
mod html_parts;
pub(crate) mod json;
pub(crate) mod openmetrics;
pub(crate) mod pprof;
pub(crate) mod text;

use crate::merge::Totals;
use crate::options::{Format, Options};
pub(crate) use crate::process::split_exactly;
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

mod descriptor;
mod render;
pub use render::render_single;

/// How the run was measured and on what. In the JSON, these keys follow `tool` and `version`.
#[derive(Serialize, Deserialize, Clone, Debug, Default)]
pub(crate) struct RunFacts {
    /// `ipa` or `spa`.
    pub(crate) mode: String,
    /// How J2N was caught: `bind` or `wrap`.
    pub(crate) j2n: String,
    pub(crate) jdk_version: String,
    pub(crate) jdk_feature: u32,
    pub(crate) clock: String,
    pub(crate) clock_reason: String,
    /// `exact` (a clock read at every crossing) or `sampled` (the split estimated by the sampler).
    #[serde(default = "exact_timing")]
    pub(crate) timing: String,
    /// `timing=sampled`: 95 % half-width of `native_ns` (and so of `bytecode_ns`), in ns. Null in
    /// exact timing.
    #[serde(default)]
    pub(crate) split_error95_ns: Option<u64>,
    /// `all` (every JNI function counted) or `upcalls` (only the 93 that run Java: `jni_functions`
    /// then lists those alone).
    #[serde(default = "every_jni_function")]
    pub(crate) jni_counts: String,
    pub(crate) tsc_hz: Option<u64>,
    pub(crate) wall_ns: u64,
}

fn exact_timing() -> String {
    "exact".to_string()
}

fn every_jni_function() -> String {
    "all".to_string()
}

impl RunFacts {
    /// Whether the run counted every JNI function (not only the upcalls: `jni_counts=upcalls`).
    pub(crate) fn counted_every_jni_function(&self) -> bool {
        self.jni_counts != "upcalls"
    }
}

/// What the report takes from the run besides the merged totals.
pub(crate) struct RunInfo {
    pub(crate) facts: RunFacts,
    /// What the bind hook did (bind mode only).
    pub(crate) bind: Option<crate::bind::BindStats>,
    /// Bind mode: ids of the methods that are JIT intrinsics (None when not known).
    pub(crate) intrinsics: Option<std::collections::BTreeSet<u32>>,
    pub(crate) transition_pair_ns: f64,
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
    /// Self time per call (null without a histogram, see `histograms::METHOD_HISTOGRAM_BUDGET`).
    #[serde(flatten)]
    pub(crate) latency: RowLatency,
    /// Bind mode: whether the method is a JIT intrinsic. Compiled code may then run it without
    /// entering native code; `calls` counts only the calls that did. Null when not known.
    pub(crate) intrinsic: Option<bool>,
    /// The agent's method id (keys `histograms.native_self_by_method`).
    pub(crate) id: Option<u32>,
    /// `self_ns` split by the boundary sampler's samples taken while the method was the innermost
    /// native: its own code (and the libraries it calls), the JNI functions it calls, the agent.
    /// Null without samples.
    #[serde(default)]
    pub(crate) own_code_ns: Option<u64>,
    #[serde(default)]
    pub(crate) jni_functions_ns: Option<u64>,
    #[serde(default)]
    pub(crate) agent_ns: Option<u64>,
    /// Those samples.
    #[serde(default)]
    pub(crate) boundary_samples: u64,
}

#[derive(Serialize, Deserialize, Clone, Debug)]
pub(crate) struct JniFunctionRow {
    pub(crate) name: String,
    /// `upcall`: one of the 93 that run Java (timed exactly: `java_ns`); `counted`: any other
    /// (counted exactly, timed by the boundary sampler: `sampled_ns`).
    #[serde(default = "upcall_kind")]
    pub(crate) kind: String,
    pub(crate) calls: u64,
    pub(crate) java_ns: u64,
    /// Java time per upcall (null if never called).
    #[serde(flatten)]
    pub(crate) latency: RowLatency,
    /// Counted functions: native-side samples inside the function.
    #[serde(default)]
    pub(crate) samples: u64,
    /// Counted functions: time inside, estimated from those samples (null for upcalls).
    #[serde(default)]
    pub(crate) sampled_ns: Option<u64>,
    /// Half-width of its 95 % interval (Poisson on the sample count).
    #[serde(default)]
    pub(crate) sampled_error95_ns: Option<u64>,
}

fn upcall_kind() -> String {
    "upcall".to_string()
}

/// One row's time per call: median, 99th percentile and maximum, in ns; null without a histogram.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct RowLatency {
    pub(crate) p50_ns: Option<u64>,
    pub(crate) p99_ns: Option<u64>,
    pub(crate) max_ns: Option<u64>,
}

impl RowLatency {
    fn of(h: Option<&Histogram<u64>>) -> RowLatency {
        let summary = h.and_then(LatencySummary::of);
        RowLatency {
            p50_ns: summary.as_ref().map(|s| s.p50_ns),
            p99_ns: summary.as_ref().map(|s| s.p99_ns),
            max_ns: summary.as_ref().map(|s| s.max_ns),
        }
    }
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

/// After `nativeacct attach`: which natives bound before the attach are counted, and why the others are not.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(crate) struct Coverage {
    /// Native methods declared by the classes loaded at the attach.
    pub(crate) natives_at_attach: u64,
    /// Already bound then and now counted: bound again with RegisterNatives (application classes).
    pub(crate) covered_by_rebind: u64,
    /// Already bound then and now counted: binding word replaced (boot and platform classes).
    pub(crate) covered_in_place: u64,
    /// Not bound yet at the attach: counted from their first call, when the VM binds them.
    pub(crate) not_bound_yet: u64,
    /// Bound before the attach and not counted.
    pub(crate) not_covered: u64,
    pub(crate) not_covered_by_reason: BTreeMap<String, u64>,
    /// `class.name descriptor: reason`, at most 500.
    pub(crate) not_covered_methods: Vec<String>,
}

/// Everything the agent reports. Field names are the JSON keys (documented in the README).
#[derive(Serialize, Deserialize, Clone, Debug)]
pub struct Report {
    pub(crate) tool: String,
    pub(crate) version: String,
    #[serde(flatten)]
    pub(crate) run: RunFacts,
    /// Raw CPU time per state, as the clock measured it.
    pub(crate) bytecode_ns: u64,
    pub(crate) native_ns: u64,
    pub(crate) native_pct: f64,
    /// The same, minus the agent's own transition cost measured at start-up.
    pub(crate) compensated_bytecode_ns: u64,
    pub(crate) compensated_native_ns: u64,
    pub(crate) compensated_native_pct: f64,
    pub(crate) transition_pair_ns: f64,
    /// JNI upcalls (the 93 functions that run Java).
    pub(crate) jni_calls: u64,
    /// The same, per function.
    pub(crate) jni_calls_by_function: BTreeMap<String, u64>,
    /// Calls of every JNI function, the upcalls included.
    #[serde(default)]
    pub(crate) jni_function_calls: u64,
    /// Every JNI function: the 93 upcalls, then the 137 others.
    pub(crate) jni_functions: Vec<JniFunctionRow>,
    /// The Java threads' CPU time split into the boundary's parts (see `crate::sampler`).
    #[serde(default)]
    pub(crate) boundary: crate::sampler::Boundary,
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
    /// e.g. C `exit()` called in a native method), `snapshot`, `dump` (`nativeacct dump`) or
    /// `detach` (`nativeacct detach`).
    pub(crate) written_at: String,
    /// For a dump after `nativeacct dump --reset`: when its window began (ns since the agent
    /// started); `wall_ns` and every count then cover the window only. Null: the whole run.
    pub(crate) window_start_ns: Option<u64>,
    /// Loaded into a running JVM (`nativeacct attach`): which natives bound before the attach are
    /// counted and why the others are not. Null when the agent was loaded at start-up.
    pub(crate) attach: Option<Coverage>,
}

/// One of the boundary's five parts, as every format names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct BoundaryPart {
    /// The JSON key without `_ns` (`java_code`, ..., `agent_in_thread`).
    pub(crate) key: &'static str,
    pub(crate) label: &'static str,
    /// Whether a sampling profiler would count it as "native" (every part but Java code: its
    /// samples have a non-Java innermost frame).
    pub(crate) sampler_native: bool,
}

/// The five parts in their order in the JSON.
pub(crate) const BOUNDARY_PARTS: [BoundaryPart; 5] = [
    BoundaryPart {
        key: "java_code",
        label: "Java code",
        sampler_native: false,
    },
    BoundaryPart {
        key: "jvm_in_java",
        label: "JVM for Java",
        sampler_native: true,
    },
    BoundaryPart {
        key: "native_code",
        label: "native code",
        sampler_native: true,
    },
    BoundaryPart {
        key: "jvm_in_native",
        label: "JVM for native",
        sampler_native: true,
    },
    BoundaryPart {
        key: "agent_in_thread",
        label: "agent",
        sampler_native: true,
    },
];

/// A boundary's parts with their 95 % half-widths, in ns, in the order of [`BOUNDARY_PARTS`].
pub(crate) fn boundary_values(b: &crate::sampler::Boundary) -> [(BoundaryPart, u64, u64); 5] {
    let (p, e) = (&b.parts, &b.error95_ns);
    let values = [
        (p.java_code_ns, e.java_code_ns),
        (p.jvm_in_java_ns, e.jvm_in_java_ns),
        (p.native_code_ns, e.native_code_ns),
        (p.jvm_in_native_ns, e.jvm_in_native_ns),
        (p.agent_in_thread_ns, e.agent_in_thread_ns),
    ];
    let mut out = [(BOUNDARY_PARTS[0], 0, 0); 5];
    for (slot, (part, (ns, err))) in out.iter_mut().zip(BOUNDARY_PARTS.into_iter().zip(values)) {
        *slot = (part, ns, err);
    }
    out
}

fn pct(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        (part as f64 * 10000.0 / whole as f64).round() / 100.0
    }
}

/// Fill each thread row's (and the folded threads') boundary from its exact times and samples;
/// the run's boundary is their sum, with the method stated.
pub(crate) fn split_threads(
    rows: &mut [ThreadRow],
    other: Option<&mut crate::merge::OtherThreads>,
) -> crate::sampler::Boundary {
    use crate::sampler::Boundary;
    for row in rows.iter_mut() {
        row.boundary = Boundary::of_thread(
            row.counts.bytecode_ns,
            row.counts.native_ns,
            &row.boundary_samples,
        );
    }
    let other = other.map(|other| {
        other.boundary = Boundary::of_thread(
            other.counts.bytecode_ns,
            other.counts.native_ns,
            &other.boundary_samples,
        );
        &other.boundary
    });
    let mut boundary = Boundary::sum(rows.iter().map(|r| &r.boundary).chain(other));
    boundary.method = Some(match crate::sampler::config() {
        Some(config) if config.enabled => {
            let (perf, timer) = crate::sampler::sources();
            let moved = crate::sampler::moved_to_timer();
            let at_once = crate::sampler::timed_at_once();
            let unarmed = crate::sampler::ended_unarmed();
            format!(
                "{} (period {} us, armed after {} us of a thread's CPU; threads sampled by perf task-clock: {perf}, by timer_create: {timer} ({moved} of them moved from perf: switched in more than once per ms of CPU in the 20 ms of CPU, or the period if longer, after they were armed; {at_once} armed with a timer at once: they had blocked more than 4 times per ms of CPU before); threads that ended before: {unarmed}, their time unsampled_ns)",
                crate::sampler::METHOD,
                config.period.as_micros(),
                config.arm_after.as_micros()
            )
        }
        _ => "boundary=off: no sampler; bytecode counted as Java code and native as native code, with their whole time as error".to_string(),
    });
    boundary
}

/// The Java threads' rows at one moment (cumulative), as the interval log keeps them.
pub(crate) type ThreadRows = (Vec<ThreadRow>, Option<crate::merge::OtherThreads>);

/// The Java threads' boundary parts in the interval between two moments, in ns in the order of
/// [`BOUNDARY_PARTS`]: each thread's time and samples in the interval, split as the report splits
/// a thread, summed (for the interval log). A side without samples in the interval is split by
/// the thread's samples so far. Rows pair by tid (and name, when a tid was reused); a row without
/// a partner counts from zero.
pub(crate) fn boundary_parts_between(now: &ThreadRows, then: &ThreadRows) -> [u64; 5] {
    use crate::sampler::Boundary;
    let mut earlier: std::collections::HashMap<i64, Vec<&ThreadRow>> =
        std::collections::HashMap::new();
    for row in &then.0 {
        earlier.entry(row.tid).or_default().push(row);
    }
    let mut parts = [0u64; 5];
    let mut add = |b: Boundary| {
        for (sum, (_, ns, _)) in parts.iter_mut().zip(boundary_values(&b)) {
            *sum += ns;
        }
    };
    for row in &now.0 {
        // The same thread: same tid and name, else the same tid still running then (the VM
        // renames the main thread DestroyJavaVM at exit).
        let base = earlier.get_mut(&row.tid).and_then(|rows| {
            let at = rows
                .iter()
                .position(|r| r.name == row.name)
                .or_else(|| rows.iter().position(|r| r.alive_at_exit))?;
            Some(rows.swap_remove(at))
        });
        let (counts, samples) = match base {
            Some(base) => (
                row.counts.since(&base.counts),
                sampled_sides(
                    row.boundary_samples.since(&base.boundary_samples),
                    &row.boundary_samples,
                ),
            ),
            None => (row.counts, row.boundary_samples),
        };
        add(Boundary::of_thread(
            counts.bytecode_ns,
            counts.native_ns,
            &samples,
        ));
    }
    if let Some(other) = &now.1 {
        let (counts, samples) = match &then.1 {
            Some(base) => (
                other.counts.since(&base.counts),
                sampled_sides(
                    other.boundary_samples.since(&base.boundary_samples),
                    &other.boundary_samples,
                ),
            ),
            None => (other.counts, other.boundary_samples),
        };
        add(Boundary::of_thread(
            counts.bytecode_ns,
            counts.native_ns,
            &samples,
        ));
    }
    parts
}

/// An interval's samples, with a side that got none in the interval taken from the thread's
/// samples so far: a short interval then gets the thread's proportions rather than all of its
/// time in Java code or native code.
fn sampled_sides(
    interval: crate::sampler::BoundarySamples,
    so_far: &crate::sampler::BoundarySamples,
) -> crate::sampler::BoundarySamples {
    let mut out = interval;
    if interval.bytecode_side().iter().sum::<u64>() == 0 {
        out.java_code = so_far.java_code;
        out.jvm_in_java = so_far.jvm_in_java;
        out.agent_in_java = so_far.agent_in_java;
    }
    if interval.native_side().iter().sum::<u64>() == 0 {
        out.native_code = so_far.native_code;
        out.jvm_in_native = so_far.jvm_in_native;
        out.agent_in_native = so_far.agent_in_native;
    }
    out
}

impl NativeMethodRow {
    /// Split `self_ns` by the samples (own code, JNI functions, agent) taken while it was innermost.
    fn with_boundary(mut self, samples: [u64; 3]) -> NativeMethodRow {
        if samples.iter().sum::<u64>() > 0 {
            let split = split_exactly(self.self_ns, &samples);
            self.own_code_ns = Some(split[0]);
            self.jni_functions_ns = Some(split[1]);
            self.agent_ns = Some(split[2]);
        }
        self
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
        // Only the counted methods' names (a live exposition builds an empty report each time).
        let ids: Vec<u32> = totals.methods.keys().copied().collect();
        let method_refs = crate::methods::some(&ids);
        let mut native_methods: Vec<NativeMethodRow> = totals
            .methods
            .iter()
            .zip(&method_refs)
            .map(|((&id, m), r)| {
                let r = r.as_ref();
                NativeMethodRow {
                    class: r
                        .map(|r| r.class.clone())
                        .unwrap_or_else(|| format!("?id{id}")),
                    name: r.map(|r| r.name.clone()).unwrap_or_default(),
                    descriptor: r.map(|r| r.descriptor.clone()).unwrap_or_default(),
                    calls: m.calls,
                    total_ns: m.total_ns,
                    self_ns: m.self_ns,
                    latency: RowLatency::of(histograms.native_by_method.get(&id)),
                    intrinsic: info.intrinsics.as_ref().map(|set| set.contains(&id)),
                    id: Some(id),
                    own_code_ns: None,
                    jni_functions_ns: None,
                    agent_ns: None,
                    boundary_samples: m.samples.iter().sum(),
                }
                .with_boundary(m.samples)
            })
            .collect();
        native_methods.sort_by(|a, b| {
            b.self_ns
                .cmp(&a.self_ns)
                .then(b.calls.cmp(&a.calls))
                .then(a.class.cmp(&b.class))
                .then(a.name.cmp(&b.name))
                .then(a.descriptor.cmp(&b.descriptor))
        });
        let counted_too = info.facts.counted_every_jni_function();
        let jni_functions: Vec<JniFunctionRow> = totals
            .jni
            .iter()
            .enumerate()
            .filter(|(i, _)| counted_too || *i < jni_wrappers::FUNCTION_COUNT)
            .map(|(i, j)| {
                let upcall = i < jni_wrappers::FUNCTION_COUNT;
                JniFunctionRow {
                    name: jni_wrappers::any_function_name(i)
                        .unwrap_or("?")
                        .to_string(),
                    kind: if upcall { "upcall" } else { "counted" }.to_string(),
                    calls: j.calls,
                    java_ns: j.java_ns,
                    latency: RowLatency::of(histograms.upcall_by_function.get(&(i as u32))),
                    samples: j.samples,
                    sampled_ns: (!upcall).then_some(j.estimated_ns),
                    sampled_error95_ns: (!upcall)
                        .then(|| crate::sampler::count_error95(j.estimated_ns, j.samples)),
                }
            })
            .collect();
        let jni_calls_by_function = jni_functions
            .iter()
            .filter(|f| f.calls > 0 && f.kind == "upcall")
            .map(|f| (f.name.clone(), f.calls))
            .collect();
        let jni_function_calls = jni_functions.iter().map(|f| f.calls).sum();
        let counts = &totals.counts;
        let pairs = counts.native_calls + counts.jni_calls;
        let half_cost = (pairs as f64 * info.transition_pair_ns / 2.0) as u64;
        let comp_bytecode = counts.bytecode_ns.saturating_sub(half_cost);
        let comp_native = counts.native_ns.saturating_sub(half_cost);
        let mut per_thread: Vec<ThreadRow> = totals.threads.clone();
        per_thread.sort_by_key(|t| std::cmp::Reverse(t.counts.cpu_ns()));
        let mut other_threads = totals.other_threads.clone();
        let boundary = split_threads(&mut per_thread, other_threads.as_mut());
        Report {
            tool: "nativeacct".to_string(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            run: info.facts,
            bytecode_ns: counts.bytecode_ns,
            native_ns: counts.native_ns,
            native_pct: pct(counts.native_ns, counts.cpu_ns()),
            compensated_bytecode_ns: comp_bytecode,
            compensated_native_ns: comp_native,
            compensated_native_pct: pct(comp_native, comp_native + comp_bytecode),
            transition_pair_ns: (info.transition_pair_ns * 10.0).round() / 10.0,
            jni_calls: counts.jni_calls,
            jni_calls_by_function,
            jni_function_calls,
            jni_functions,
            boundary,
            native_calls: counts.native_calls,
            native_methods,
            unmatched_transitions: totals.unmatched,
            threads: totals.threads_seen,
            threads_merged: totals.threads_merged,
            per_thread,
            other_threads,
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
            window_start_ns: None,
            attach: None,
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

#[cfg(test)]
mod tests;
