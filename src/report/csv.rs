//! CSV output: one row per native method, per JNI function, per part of the process's CPU time and
//! per thread and part (RFC 4180 quoting).
//!
//! Columns: `kind,class,name,descriptor,calls,total_ns,self_ns,java_ns,p50_ns,p99_ns,max_ns`.
//! `kind` is
//! - `native_method` (time columns: `total_ns`, `self_ns`; percentiles of self time);
//! - `jni_function` (`name` is the JNI function, time column `java_ns`; percentiles of Java time per
//!   upcall);
//! - `process`: `name` is `cpu_ns` (the process's CPU time) or a part (`java_bytecode`, ...,
//!   `unattributed`), `total_ns` its CPU time;
//! - `process_thread`: `class` is the part, `name` the thread, `descriptor` its tid, `total_ns` its
//!   CPU time in that part.
//!
//! Columns that do not apply to a row are empty.

use super::Report;

pub(crate) const HEADER: &str =
    "kind,class,name,descriptor,calls,total_ns,self_ns,java_ns,p50_ns,p99_ns,max_ns";

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
            "native_method,{},{},{},{},{},{},,{}\n",
            field(&m.class),
            field(&m.name),
            field(&m.descriptor),
            m.calls,
            m.total_ns,
            m.self_ns,
            latency_cells(&m.latency)
        ));
    }
    for f in &r.jni_functions {
        out.push_str(&format!(
            "jni_function,,{},,{},,,{},{}\n",
            field(&f.name),
            f.calls,
            f.java_ns,
            latency_cells(&f.latency)
        ));
    }
    let p = &r.process;
    out.push_str(&format!("process,,cpu_ns,,,{},,,,,\n", p.cpu_ns));
    for (part, ns) in p.parts.iter() {
        out.push_str(&format!("process,,{},,,{ns},,,,,\n", part.key()));
    }
    for t in &p.threads {
        out.push_str(&format!(
            "process_thread,{},{},{},,{},,,,,\n",
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
