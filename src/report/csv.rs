//! CSV output: one row per native method, per JNI function, per part of the process's CPU time and
//! per thread and part, and the JNI boundary's parts of the Java threads (RFC 4180 quoting).
//!
//! Columns: `kind,class,name,descriptor,calls,total_ns,self_ns,java_ns,p50_ns,p99_ns,max_ns`, then the
//! boundary's columns `samples`, the five parts `java_code_ns,jvm_in_java_ns,native_code_ns,
//! jvm_in_native_ns,agent_in_thread_ns` and their 95 % half-widths `java_code_error95_ns, ...,
//! agent_in_thread_error95_ns` (the JSON's `boundary`). `kind` is
//! - `native_method` (time columns: `total_ns`, `self_ns`; percentiles of self time); its self time
//!   split by the boundary sampler, when it has samples: `native_code_ns` (its own code),
//!   `jvm_in_native_ns` (the JNI functions it calls), `agent_in_thread_ns`, and `samples`;
//! - `jni_function` (`class` is `upcall` or `counted`, `name` the JNI function; time column `java_ns`
//!   for upcalls, percentiles of Java time per upcall; counted functions: time inside by samples in
//!   `jvm_in_native_ns` and `jvm_in_native_error95_ns`, and `samples`);
//! - `boundary`: `name` is `all_threads` (the Java threads, the JSON's top-level `boundary`, its
//!   method in `descriptor`), `total_ns` their bytecode plus native time, `calls` their native-method
//!   calls; the boundary columns add up to `total_ns`;
//! - `thread`: one per `per_thread` row, `name` the thread, `descriptor` its tid, the same columns;
//! - `other_threads`: the threads folded out of `per_thread`, summed (`calls`: native-method calls,
//!   `descriptor`: how many threads);
//! - `process`: `name` is `cpu_ns` (the process's CPU time) or a part (`java_bytecode`, ...,
//!   `unattributed`), `total_ns` its CPU time;
//! - `process_thread`: `class` is the part, `name` the thread, `descriptor` its tid, `total_ns` its
//!   CPU time in that part.
//!
//! Columns that do not apply to a row are empty.

use super::{boundary_values, Report};
use crate::sampler::Boundary;

pub(crate) const HEADER: &str = "kind,class,name,descriptor,calls,total_ns,self_ns,java_ns,p50_ns,p99_ns,max_ns,samples,java_code_ns,jvm_in_java_ns,native_code_ns,jvm_in_native_ns,agent_in_thread_ns,java_code_error95_ns,jvm_in_java_error95_ns,native_code_error95_ns,jvm_in_native_error95_ns,agent_in_thread_error95_ns";

/// Empty boundary cells, after a row's `max_ns` (rows the boundary does not apply to).
const NO_BOUNDARY: &str = ",,,,,,,,,,,";

/// The boundary cells of a thread or of all threads: samples, parts, half-widths.
fn boundary_cells(b: &Boundary) -> String {
    let values = boundary_values(b);
    let parts: Vec<String> = values.iter().map(|(_, ns, _)| ns.to_string()).collect();
    let errors: Vec<String> = values.iter().map(|(_, _, e)| e.to_string()).collect();
    format!("{},{},{}", b.samples, parts.join(","), errors.join(","))
}

fn field(value: &str) -> String {
    if value.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", value.replace('"', "\"\""))
    } else {
        value.to_string()
    }
}

fn opt(v: Option<u64>) -> String {
    v.map(|v| v.to_string()).unwrap_or_default()
}

/// The `p50_ns,p99_ns,max_ns` cells of a row.
fn latency_cells(l: &super::RowLatency) -> String {
    format!("{},{},{}", opt(l.p50_ns), opt(l.p99_ns), opt(l.max_ns))
}

pub(crate) fn render(r: &Report) -> String {
    let mut out = String::from(HEADER);
    out.push('\n');
    for m in &r.native_methods {
        out.push_str(&format!(
            "native_method,{},{},{},{},{},{},,{},{},,,{},{},{},,,,,\n",
            field(&m.class),
            field(&m.name),
            field(&m.descriptor),
            m.calls,
            m.total_ns,
            m.self_ns,
            latency_cells(&m.latency),
            opt((m.boundary_samples > 0).then_some(m.boundary_samples)),
            opt(m.own_code_ns),
            opt(m.jni_functions_ns),
            opt(m.agent_ns),
        ));
    }
    for f in &r.jni_functions {
        let (java_ns, counted) = if f.kind == "upcall" {
            (f.java_ns.to_string(), NO_BOUNDARY.to_string())
        } else {
            (
                String::new(),
                format!(
                    ",{},,,,{},,,,,{},",
                    f.samples,
                    opt(f.sampled_ns),
                    opt(f.sampled_error95_ns)
                ),
            )
        };
        out.push_str(&format!(
            "jni_function,{},{},,{},,,{java_ns},{}{counted}\n",
            field(&f.kind),
            field(&f.name),
            f.calls,
            latency_cells(&f.latency)
        ));
    }
    out.push_str(&format!(
        "boundary,,all_threads,{},{},{},,,,,,{}\n",
        field(r.boundary.method.as_deref().unwrap_or("")),
        r.native_calls,
        r.bytecode_ns + r.native_ns,
        boundary_cells(&r.boundary)
    ));
    for t in &r.per_thread {
        out.push_str(&format!(
            "thread,,{},{},{},{},,,,,,{}\n",
            field(&t.name),
            t.tid,
            t.counts.native_calls,
            t.counts.cpu_ns(),
            boundary_cells(&t.boundary)
        ));
    }
    if let Some(o) = &r.other_threads {
        out.push_str(&format!(
            "other_threads,,,{},{},{},,,,,,{}\n",
            o.threads,
            o.counts.native_calls,
            o.counts.cpu_ns(),
            boundary_cells(&o.boundary)
        ));
    }
    let p = &r.process;
    out.push_str(&format!(
        "process,,cpu_ns,,,{},,,,,{NO_BOUNDARY}\n",
        p.cpu_ns
    ));
    for (part, ns) in p.parts.iter() {
        out.push_str(&format!(
            "process,,{},,,{ns},,,,,{NO_BOUNDARY}\n",
            part.key()
        ));
    }
    for t in &p.threads {
        out.push_str(&format!(
            "process_thread,{},{},{},,{},,,,,{NO_BOUNDARY}\n",
            t.part.key(),
            field(&t.name),
            t.tid,
            t.cpu_ns
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::field;

    #[test]
    fn quotes_only_what_needs_it() {
        assert_eq!(field("a/B$C"), "a/B$C");
        assert_eq!(field("(I,J)"), "\"(I,J)\"");
        assert_eq!(field("say \"x\""), "\"say \"\"x\"\"\"");
    }
}
