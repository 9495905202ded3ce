//! The human summary printed to stderr at VM death (and written by `format=text`).

use super::Report;
use std::fmt::Write;

/// Rows of the top-natives table in the summary.
const TOP_METHODS: usize = 10;

fn ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}

pub fn render(r: &Report) -> String {
    let mut s = String::new();
    let cpu = r.bytecode_ns + r.native_ns;
    let _ = writeln!(
        s,
        "nativeacct report ({} mode, clock {}, JDK {})",
        r.mode, r.clock, r.jdk_version
    );
    let _ = writeln!(
        s,
        "  CPU time     {:.3} s in {} threads: bytecode {:.2} %, native {:.2} %",
        cpu as f64 / 1e9,
        r.threads,
        100.0 - r.native_pct,
        r.native_pct
    );
    let _ = writeln!(
        s,
        "  compensated  native {:.2} % (agent cost {:.1} ns per crossing pair subtracted)",
        r.compensated_native_pct, r.transition_pair_ns
    );
    let _ = writeln!(
        s,
        "  crossings    {} native-method calls in {} methods, {} JNI upcalls",
        r.native_calls,
        r.native_methods.len(),
        r.jni_calls
    );
    if !r.jni_calls_by_function.is_empty() {
        let mut by_fn: Vec<_> = r.jni_calls_by_function.iter().collect();
        by_fn.sort_by(|a, b| b.1.cmp(a.1));
        let list: Vec<String> = by_fn
            .iter()
            .map(|(name, n)| format!("{name} {n}"))
            .collect();
        let _ = writeln!(s, "  JNI upcalls  {}", list.join(", "));
    }
    if !r.native_methods.is_empty() {
        let _ = writeln!(s, "  top natives by self time:");
        let _ = writeln!(
            s,
            "    {:>10} {:>10} {:>10}  method",
            "self_ms", "total_ms", "calls"
        );
        for m in r.native_methods.iter().take(TOP_METHODS) {
            let _ = writeln!(
                s,
                "    {:>10.3} {:>10.3} {:>10}  {}.{}{}",
                ms(m.self_ns),
                ms(m.total_ns),
                m.calls,
                m.class.replace('/', "."),
                m.name,
                m.descriptor
            );
        }
    }
    let _ = writeln!(
        s,
        "  threads      {} seen, {} merged",
        r.threads, r.threads_merged
    );
    let _ = writeln!(
        s,
        "  classes      {} loaded, {} with natives, {} rewritten, {} failed; natives {} wrapped, {} skipped",
        r.classes_seen, r.classes_with_natives, r.classes_rewritten, r.classes_failed, r.natives_wrapped, r.natives_skipped
    );
    if r.unmatched_transitions > 0 {
        let _ = writeln!(
            s,
            "  note         {} crossings ended without a recorded start (already running when accounting began)",
            r.unmatched_transitions
        );
    }
    for note in &r.notes {
        let _ = writeln!(s, "  note         {note}");
    }
    s
}
