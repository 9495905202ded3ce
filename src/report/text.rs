//! The human summary printed to stderr at VM death (and written by `format=text`).

use super::caveats::{caveats, Caveat};
use super::Report;
use std::fmt::Write;

fn ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}

fn pct_of(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 * 100.0 / whole as f64
    }
}

/// The boundary's parts, the line that maps them to a sampling profiler's "native", and the JNI
/// functions with the most sampled time.
fn boundary_lines(r: &Report) -> String {
    let mut s = String::new();
    let b = &r.boundary;
    let p = &b.parts;
    let e = &b.error95_ns;
    let cpu = r.bytecode_ns + r.native_ns;
    if cpu == 0 {
        return s;
    }
    let part = |ns: u64, err: u64| format!("{:.1} ±{:.1} %", pct_of(ns, cpu), pct_of(err, cpu));
    let _ = writeln!(
        s,
        "  boundary     Java code {}, JVM for Java {}, native code {}, JVM for native {}, agent {} ({} samples, 95 % intervals)",
        part(p.java_code_ns, e.java_code_ns),
        part(p.jvm_in_java_ns, e.jvm_in_java_ns),
        part(p.native_code_ns, e.native_code_ns),
        part(p.jvm_in_native_ns, e.jvm_in_native_ns),
        part(p.agent_in_thread_ns, e.agent_in_thread_ns),
        b.samples
    );
    let sampler_native =
        p.jvm_in_java_ns + p.native_code_ns + p.jvm_in_native_ns + p.agent_in_thread_ns;
    let _ = writeln!(
        s,
        "  as sampled   a sampling profiler would call {:.1} % native (everything but Java code: JVM for Java + native code + JVM for native + agent); IPA's native above is native code + JVM for native (+ the agent's share on that side)",
        pct_of(sampler_native, cpu)
    );
    let mut timed: Vec<_> = r
        .jni_functions
        .iter()
        .filter(|f| f.sampled_ns.unwrap_or(0) > 0)
        .collect();
    timed.sort_by_key(|f| std::cmp::Reverse(f.sampled_ns));
    let other_calls: u64 = r
        .jni_functions
        .iter()
        .filter(|f| f.kind != "upcall")
        .map(|f| f.calls)
        .sum();
    if other_calls > 0 {
        let list: Vec<String> = timed
            .iter()
            .take(8)
            .map(|f| {
                format!(
                    "{} {:.1} % ({} calls)",
                    f.name,
                    pct_of(f.sampled_ns.unwrap_or(0), cpu),
                    f.calls
                )
            })
            .collect();
        let _ = writeln!(
            s,
            "  JNI calls    {} calls of the other JNI functions (counted exactly); time by samples: {}",
            other_calls,
            if list.is_empty() { "none sampled".to_string() } else { list.join(", ") }
        );
    }
    s
}

pub(crate) fn render(r: &Report) -> String {
    let mut s = String::new();
    let cpu = r.bytecode_ns + r.native_ns;
    let _ = writeln!(
        s,
        "nativeacct report ({} mode, j2n {}, clock {}, JDK {})",
        r.run.mode, r.run.j2n, r.run.clock, r.run.jdk_version
    );
    if let Some(error) = r.run.split_error95_ns {
        let _ = writeln!(
            s,
            "  timing       sampled: no clock read at crossings; the split and per-method times are estimated from {} samples, native share ±{:.2} pt (95 %); no latency histograms",
            r.boundary.samples,
            100.0 * error as f64 / cpu.max(1) as f64
        );
    }
    for caveat in caveats(r) {
        let _ = match caveat {
            Caveat::Partial { what, at_s } => writeln!(
                s,
                "  partial      {what} taken {at_s:.3} s after start; the run went on"
            ),
            Caveat::Window { length_s, start_s } => writeln!(
                s,
                "  window       the {length_s:.3} s since the reset at {start_s:.3} s: every count and time covers it only"
            ),
            Caveat::Attached(a) => writeln!(
                s,
                "  attached     to a running JVM; of its {} natives then: {} counted by rebinding, {} in place, {} not bound yet (counted once bound), {} not counted{}",
                a.natives_at_attach,
                a.covered_by_rebind,
                a.covered_in_place,
                a.not_bound_yet,
                a.not_covered,
                a.not_covered_by_reason
                    .iter()
                    .map(|(why, n)| format!("; {n}: {why}"))
                    .collect::<String>()
            ),
        };
    }
    s.push_str(&process_lines(r));
    let _ = writeln!(
        s,
        "  CPU time     {:.3} s in {} threads: bytecode {:.2} %, native {:.2} %",
        cpu as f64 / 1e9,
        r.threads,
        100.0 - r.native_pct,
        r.native_pct
    );
    s.push_str(&boundary_lines(r));
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
        s.push_str(&ranked_table(r, "    "));
    }
    let _ = writeln!(
        s,
        "  threads      {} seen, {} merged",
        r.threads, r.threads_merged
    );
    match &r.bind {
        Some(bind) => {
            let left: u64 = bind.not_redirected.values().sum();
            let _ = writeln!(
                s,
                "  natives      {} bound to trampolines ({} re-binds), {} left alone; no class changed",
                bind.methods_bound, bind.rebinds, left
            );
        }
        None => {
            let _ = writeln!(
                s,
                "  classes      {} loaded, {} with natives, {} rewritten, {} failed; natives {} wrapped, {} skipped",
                r.classes_seen, r.classes_with_natives, r.classes_rewritten, r.classes_failed, r.natives_wrapped, r.natives_skipped
            );
        }
    }
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

/// The process's CPU time (the OS's figure at VM death) and one line per part with its share.
pub(crate) fn process_lines(r: &Report) -> String {
    let p = &r.process;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "  process      {:.3} s of CPU time (user + system, all threads, at VM death):",
        p.cpu_ns as f64 / 1e9
    );
    for (part, ns) in p.parts.iter() {
        let share = if p.cpu_ns == 0 {
            0.0
        } else {
            100.0 * ns as f64 / p.cpu_ns as f64
        };
        let _ = writeln!(
            s,
            "    {:<18} {:>9.3} s {:>6.2} %",
            part.label(),
            ns as f64 / 1e9,
            share
        );
    }
    s
}

/// A latency in ns with a readable unit: `850ns`, `12.5us`, `3.20ms`, `1.50s`.
pub(crate) fn short_duration(ns: u64) -> String {
    let v = ns as f64;
    if ns < 1_000 {
        format!("{ns}ns")
    } else if ns < 1_000_000 {
        format!("{:.1}us", v / 1e3)
    } else if ns < 1_000_000_000 {
        format!("{:.2}ms", v / 1e6)
    } else {
        format!("{:.2}s", v / 1e9)
    }
}

/// The hprof-style ranked table of the top `r.top` natives by self time: share of all native self
/// time, running share, calls, total and self ms, median and 99th percentile of self time per call.
pub(crate) fn ranked_table(r: &Report, indent: &str) -> String {
    let mut s = String::new();
    let all_self: u64 = r.native_methods.iter().map(|m| m.self_ns).sum();
    let share = |ns: u64| {
        if all_self == 0 {
            0.0
        } else {
            100.0 * ns as f64 / all_self as f64
        }
    };
    let _ = writeln!(
        s,
        "{indent}{:>4} {:>7} {:>7} {:>10} {:>11} {:>11} {:>9} {:>9}  method",
        "rank", "self", "accum", "calls", "total_ms", "self_ms", "p50", "p99"
    );
    let mut accum = 0u64;
    let absent = || "-".to_string();
    for (rank, m) in r.native_methods.iter().take(r.top).enumerate() {
        accum += m.self_ns;
        let _ = writeln!(
            s,
            "{indent}{:>4} {:>6.2}% {:>6.2}% {:>10} {:>11.3} {:>11.3} {:>9} {:>9}  {}{}",
            rank + 1,
            share(m.self_ns),
            share(accum),
            m.calls,
            ms(m.total_ns),
            ms(m.self_ns),
            m.latency.p50_ns.map(short_duration).unwrap_or_else(absent),
            m.latency.p99_ns.map(short_duration).unwrap_or_else(absent),
            m.display_name(),
            if m.intrinsic == Some(true) {
                "  [JIT intrinsic: calls that entered native code]"
            } else {
                ""
            }
        );
    }
    if r.native_methods.len() > r.top {
        let rest: u64 = r.native_methods.iter().skip(r.top).map(|m| m.self_ns).sum();
        let _ = writeln!(
            s,
            "{indent}     ({} more methods, {:.2}% of native self time; top= shows more)",
            r.native_methods.len() - r.top,
            share(rest)
        );
    }
    s
}
