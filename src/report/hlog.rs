//! HdrHistogram interval log (`.hlog`): per interval, the histograms of what happened in it, base64
//! V2-compressed, one line each (`Tag=…,start,length,max,histogram`), readable by HdrHistogram's
//! `HistogramLogProcessor` and plotters. Values are ns; `Interval_Max` is in ms (divisor 1e6, stated in
//! the header).
//!
//! Tags: `native` (self time per native call, all methods), `jni` (Java time per upcall),
//! `jni.<Function>` per JNI function, and `method.<pkg.Class>.<name><descriptor>` for the top `top=`
//! methods of the interval by sample count. A tag appears in an interval only if it has samples there
//! (`native` and `jni` always do).
//!
//! The process's CPU time in the interval (see [`crate::process`]) comes as `cpu.process` and one
//! `cpu.<part>` per part (`cpu.java_bytecode`, ..., `cpu.unattributed`), in every interval: each is a
//! histogram holding one value, the CPU ns of that part in the interval (recorded with 3 significant
//! digits), so its max (`Interval_Max`, in ms) and its mean are that figure. Dividing a part by
//! `cpu.process` gives its share of the interval.
//!
//! The JNI boundary's parts of the Java threads come the same way, one value per part and interval:
//! `boundary.java_code`, `boundary.jvm_in_java`, `boundary.native_code`, `boundary.jvm_in_native` and
//! `boundary.agent_in_thread`, in ns: each thread's exact time in the interval split by its boundary
//! samples in the interval (as the report splits a thread's whole run; a side with no sample in the
//! interval by the thread's samples so far), summed over the threads.
//! They add up to the Java threads' CPU time of the interval, so over the log to the JSON's
//! `bytecode_ns + native_ns`; part by part they follow a thread's mix as it changes, which the
//! JSON's whole-run split per thread does not (the two can differ by more than `error95_ns` when a
//! thread's mix changes over the run).
//!
//! The periodic part is the top-level `interval` module, which calls this one; this module encodes intervals and finishes the file.

use crate::histograms::Histograms;
use crate::process::CpuSnapshot;
use hdrhistogram::serialization::interval_log::{IntervalLogWriterBuilder, Tag};
use hdrhistogram::serialization::V2DeflateSerializer;
use hdrhistogram::Histogram;
use std::time::{Duration, SystemTime};

/// `Interval_Max` is written in ms.
pub(crate) const MAX_VALUE_DIVISOR: f64 = 1e6;

/// The log header: start time, divisor note and the column legend.
pub(crate) fn header(start: SystemTime) -> Vec<u8> {
    let mut out = Vec::new();
    let mut serializer = V2DeflateSerializer::new();
    let written = IntervalLogWriterBuilder::new()
        .add_comment("nativeacct interval log: native self time per call and Java time per JNI upcall, in ns; cpu.* tags: the process CPU time of each part in the interval, in ns (one value each); boundary.* tags: the Java threads' CPU time in each JNI-boundary part in the interval, in ns (one value each, estimated by the boundary sampler)")
        .with_start_time(start)
        .with_base_time(start)
        .with_max_value_divisor(MAX_VALUE_DIVISOR)
        .begin_log_with(&mut out, &mut serializer)
        .is_ok();
    if written {
        out.extend_from_slice(
            b"\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n",
        );
    }
    out
}

/// A tag-safe name: no commas, spaces or line breaks.
pub(crate) fn tag_name(s: &str) -> String {
    s.chars()
        .map(|c| {
            if matches!(c, ',' | ' ' | '\r' | '\n') {
                '_'
            } else {
                c
            }
        })
        .collect()
}

/// `current - previous` (both cumulative), or `current` if the ranges do not fit.
fn delta(current: &Histogram<u64>, previous: Option<&Histogram<u64>>) -> Histogram<u64> {
    let mut d = current.clone();
    if let Some(p) = previous {
        if d.subtract(p).is_err() {
            return current.clone();
        }
    }
    d
}

/// A histogram holding the single value `ns` (one count: a u8 counter keeps the 3-digit range small).
fn single_value(ns: u64) -> Histogram<u8> {
    let mut h = Histogram::new(3).expect("valid histogram precision");
    if h.record(ns).is_err() {
        h.saturating_record(ns);
    }
    h
}

/// Encode the interval `[start, start + length)` (relative to the base time) between two cumulative
/// snapshots. `method_names` maps method ids to their tag names; `cpu` is the process CPU time in the
/// interval, `boundary` what each boundary part grew by in it (order of `BOUNDARY_PARTS`).
#[allow(clippy::too_many_arguments)]
pub(crate) fn encode_interval(
    current: &Histograms,
    previous: Option<&Histograms>,
    start: Duration,
    length: Duration,
    top: usize,
    method_name: &dyn Fn(u32) -> String,
    cpu: &CpuSnapshot,
    boundary: &[u64; 5],
) -> Vec<u8> {
    let mut entries: Vec<(String, Histogram<u64>)> = vec![
        (
            "native".to_string(),
            delta(&current.native_overall, previous.map(|p| &p.native_overall)),
        ),
        (
            "jni".to_string(),
            delta(&current.upcall_overall, previous.map(|p| &p.upcall_overall)),
        ),
    ];
    let mut functions: Vec<_> = current.upcall_by_function.iter().collect();
    functions.sort_by_key(|(id, _)| **id);
    for (id, h) in functions {
        let d = delta(h, previous.and_then(|p| p.upcall_by_function.get(id)));
        if !d.is_empty() {
            let name = jni_wrappers::FUNCTION_NAMES
                .get(*id as usize)
                .copied()
                .unwrap_or("unknown");
            entries.push((format!("jni.{name}"), d));
        }
    }
    let mut methods: Vec<(u32, Histogram<u64>)> = current
        .native_by_method
        .iter()
        .map(|(id, h)| {
            (
                *id,
                delta(h, previous.and_then(|p| p.native_by_method.get(id))),
            )
        })
        .filter(|(_, d)| !d.is_empty())
        .collect();
    methods.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(a.0.cmp(&b.0)));
    for (id, d) in methods.into_iter().take(top) {
        entries.push((format!("method.{}", tag_name(&method_name(id))), d));
    }
    let mut cpu_entries = vec![("cpu.process".to_string(), single_value(cpu.cpu_ns))];
    for (part, ns) in cpu.parts.iter() {
        cpu_entries.push((format!("cpu.{}", part.key()), single_value(ns)));
    }
    for (part, ns) in super::BOUNDARY_PARTS.iter().zip(boundary) {
        cpu_entries.push((format!("boundary.{}", part.key), single_value(*ns)));
    }

    let mut out = Vec::new();
    let mut serializer = V2DeflateSerializer::new();
    if let Ok(mut writer) = IntervalLogWriterBuilder::new()
        .with_max_value_divisor(MAX_VALUE_DIVISOR)
        .begin_log_with(&mut out, &mut serializer)
    {
        for (tag, h) in &entries {
            let _ = writer.write_histogram(h, start, length, Tag::new(tag));
        }
        for (tag, h) in &cpu_entries {
            let _ = writer.write_histogram(h, start, length, Tag::new(tag));
        }
    }
    // The builder notes the divisor in a comment each time it begins; keep it in the header only.
    let text = String::from_utf8_lossy(&out);
    text.lines()
        .filter(|l| !l.starts_with("#[MaxValueDivisor"))
        .flat_map(|l| [l, "\n"])
        .collect::<String>()
        .into_bytes()
}
