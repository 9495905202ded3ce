//! `nativeacct diff`: two runs' reports compared. The rows pair native methods (by class, name and
//! descriptor) and JNI functions (by name); a row in only one run is marked `new` or `gone`. Rendered
//! as text (the table people read), CSV (one row per method or function) and HTML (see
//! `diff_html.rs`, with a differential flame graph).

use super::text::short_duration;
use super::{boundary_values, Report, RowLatency};
use std::collections::BTreeMap;
use std::fmt::Write;

/// One side of a row: what one run measured.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Side {
    pub(crate) calls: u64,
    /// Native self time (methods) or Java time in upcalls (JNI functions), ns.
    pub(crate) time_ns: u64,
    pub(crate) latency: RowLatency,
}

#[derive(Clone, Debug)]
pub(crate) struct Row {
    pub(crate) name: String,
    pub(crate) before: Option<Side>,
    pub(crate) after: Option<Side>,
}

impl Row {
    pub(crate) fn status(&self) -> &'static str {
        match (self.before, self.after) {
            (None, Some(_)) => "new",
            (Some(_), None) => "gone",
            _ => "",
        }
    }

    fn time(side: Option<Side>) -> u64 {
        side.map_or(0, |s| s.time_ns)
    }

    /// How much the time moved, in ns (what the rows are ranked by).
    fn moved(&self) -> u64 {
        Row::time(self.after).abs_diff(Row::time(self.before))
    }
}

/// Two reports, paired row by row.
pub struct Diff<'a> {
    pub(crate) before: &'a Report,
    pub(crate) after: &'a Report,
    pub(crate) before_name: String,
    pub(crate) after_name: String,
    /// Native methods, largest change in self time first.
    pub(crate) methods: Vec<Row>,
    /// JNI upcalls called in either run, largest change in Java time first.
    pub(crate) functions: Vec<Row>,
    /// The other JNI functions called in either run, largest change in time inside (by the
    /// boundary sampler) first.
    pub(crate) counted: Vec<Row>,
    /// Rows shown per table.
    pub(crate) top: usize,
}

fn pair(before: Vec<(String, Side)>, after: Vec<(String, Side)>) -> Vec<Row> {
    fn row(rows: &mut BTreeMap<String, Row>, name: String) -> &mut Row {
        rows.entry(name.clone()).or_insert(Row {
            name,
            before: None,
            after: None,
        })
    }
    let mut rows: BTreeMap<String, Row> = BTreeMap::new();
    for (name, side) in before {
        row(&mut rows, name).before = Some(side);
    }
    for (name, side) in after {
        row(&mut rows, name).after = Some(side);
    }
    let mut rows: Vec<Row> = rows.into_values().collect();
    rows.sort_by(|a, b| b.moved().cmp(&a.moved()).then(a.name.cmp(&b.name)));
    rows
}

fn methods_of(r: &Report) -> Vec<(String, Side)> {
    r.native_methods
        .iter()
        .map(|m| {
            let side = Side {
                calls: m.calls,
                time_ns: m.self_ns,
                latency: m.latency,
            };
            (m.display_name(), side)
        })
        .collect()
}

/// The JNI functions of `kind` (`upcall` or `counted`) called in the run; time: Java time for
/// upcalls, time inside by samples for the others.
fn functions_of(r: &Report, kind: &str) -> Vec<(String, Side)> {
    r.jni_functions
        .iter()
        .filter(|f| f.calls > 0 && f.kind == kind)
        .map(|f| {
            let side = Side {
                calls: f.calls,
                time_ns: if kind == "upcall" {
                    f.java_ns
                } else {
                    f.sampled_ns.unwrap_or(0)
                },
                latency: f.latency,
            };
            (f.name.clone(), side)
        })
        .collect()
}

fn counts_every_function(r: &Report) -> bool {
    r.run.counted_every_jni_function()
}

impl<'a> Diff<'a> {
    /// `before_name` and `after_name` say which run is which (the files' names).
    pub fn new(before: &'a Report, after: &'a Report, names: (String, String), top: usize) -> Self {
        Diff {
            before,
            after,
            before_name: names.0,
            after_name: names.1,
            methods: pair(methods_of(before), methods_of(after)),
            functions: pair(
                functions_of(before, "upcall"),
                functions_of(after, "upcall"),
            ),
            // A run with `jni_counts=upcalls` counted none of them: no change to show.
            counted: if counts_every_function(before) && counts_every_function(after) {
                pair(
                    functions_of(before, "counted"),
                    functions_of(after, "counted"),
                )
            } else {
                Vec::new()
            },
            top,
        }
    }
}

/// The change from `before` to `after` in percent (`+12.3%`), or `new` / `gone` / `=`.
pub(crate) fn change(before: Option<u64>, after: Option<u64>) -> String {
    match (before, after) {
        (None, Some(_)) => "new".to_string(),
        (Some(_), None) => "gone".to_string(),
        (Some(b), Some(a)) if a == b => "=".to_string(),
        (Some(0), Some(_)) => "new".to_string(),
        (Some(b), Some(a)) => format!("{:+.1}%", (a as f64 - b as f64) * 100.0 / b as f64),
        (None, None) => String::new(),
    }
}

fn ms(ns: Option<u64>) -> String {
    ns.map_or("-".to_string(), |ns| format!("{:.3}", ns as f64 / 1e6))
}

fn latency(ns: Option<u64>) -> String {
    ns.map_or("-".to_string(), short_duration)
}

fn opt<T: Copy>(side: Option<Side>, f: impl Fn(Side) -> T) -> Option<T> {
    side.map(f)
}

/// The summary lines: CPU time, native %, crossings, and the process split, side by side.
pub(crate) fn summary_rows(d: &Diff) -> Vec<(String, String, String, String)> {
    let (b, a) = (d.before, d.after);
    let secs = |ns: u64| format!("{:.3} s", ns as f64 / 1e9);
    let pt = |x: f64, y: f64| format!("{:+.2} pt", y - x);
    let mut rows = vec![
        (
            "Java threads' CPU time".to_string(),
            secs(b.bytecode_ns + b.native_ns),
            secs(a.bytecode_ns + a.native_ns),
            change(
                Some(b.bytecode_ns + b.native_ns),
                Some(a.bytecode_ns + a.native_ns),
            ),
        ),
        (
            "native %".to_string(),
            format!("{:.2} %", b.native_pct),
            format!("{:.2} %", a.native_pct),
            pt(b.native_pct, a.native_pct),
        ),
        (
            "native % (compensated)".to_string(),
            format!("{:.2} %", b.compensated_native_pct),
            format!("{:.2} %", a.compensated_native_pct),
            pt(b.compensated_native_pct, a.compensated_native_pct),
        ),
        (
            "native-method calls".to_string(),
            b.native_calls.to_string(),
            a.native_calls.to_string(),
            change(Some(b.native_calls), Some(a.native_calls)),
        ),
        (
            "JNI upcalls".to_string(),
            b.jni_calls.to_string(),
            a.jni_calls.to_string(),
            change(Some(b.jni_calls), Some(a.jni_calls)),
        ),
        (
            "process CPU time".to_string(),
            secs(b.process.cpu_ns),
            secs(a.process.cpu_ns),
            change(Some(b.process.cpu_ns), Some(a.process.cpu_ns)),
        ),
    ];
    let share = |ns: u64, all: u64| {
        if all == 0 {
            0.0
        } else {
            100.0 * ns as f64 / all as f64
        }
    };
    for ((part, nb), (_, na)) in b.process.parts.iter().zip(a.process.parts.iter()) {
        rows.push((
            format!("  {}", part.label()),
            format!("{} ({:.1} %)", secs(nb), share(nb, b.process.cpu_ns)),
            format!("{} ({:.1} %)", secs(na), share(na, a.process.cpu_ns)),
            change(Some(nb), Some(na)),
        ));
    }
    rows.extend(boundary_rows(d));
    rows
}

/// The JNI boundary's parts side by side: time, share of the Java threads' CPU time with its 95 %
/// interval, and the change of the share in points.
fn boundary_rows(d: &Diff) -> Vec<(String, String, String, String)> {
    let (b, a) = (d.before, d.after);
    let (cpu_b, cpu_a) = (b.bytecode_ns + b.native_ns, a.bytecode_ns + a.native_ns);
    let share = |ns: u64, all: u64| {
        if all == 0 {
            0.0
        } else {
            100.0 * ns as f64 / all as f64
        }
    };
    let cell = |ns: u64, err: u64, all: u64| {
        format!(
            "{:.3} s ({:.1} ±{:.1} %)",
            ns as f64 / 1e9,
            share(ns, all),
            share(err, all)
        )
    };
    let mut rows = vec![
        (
            "JNI function calls (all)".to_string(),
            b.jni_function_calls.to_string(),
            a.jni_function_calls.to_string(),
            change(Some(b.jni_function_calls), Some(a.jni_function_calls)),
        ),
        (
            "JNI boundary (samples)".to_string(),
            b.boundary.samples.to_string(),
            a.boundary.samples.to_string(),
            change(Some(b.boundary.samples), Some(a.boundary.samples)),
        ),
    ];
    let (parts_b, parts_a) = (boundary_values(&b.boundary), boundary_values(&a.boundary));
    let (mut native_b, mut native_a) = (0, 0);
    for ((part, nb, eb), (_, na, ea)) in parts_b.into_iter().zip(parts_a) {
        if part.sampler_native {
            native_b += nb;
            native_a += na;
        }
        rows.push((
            format!("  {}", part.label),
            cell(nb, eb, cpu_b),
            cell(na, ea, cpu_a),
            format!("{:+.2} pt", share(na, cpu_a) - share(nb, cpu_b)),
        ));
    }
    rows.push((
        "  sampler's \"native\"".to_string(),
        format!("{:.1} %", share(native_b, cpu_b)),
        format!("{:.1} %", share(native_a, cpu_a)),
        format!("{:+.2} pt", share(native_a, cpu_a) - share(native_b, cpu_b)),
    ));
    rows
}

/// The cells of a row of a method or function table, in the order of [`TABLE_HEADER`].
pub(crate) fn cells(row: &Row) -> [String; 10] {
    let (b, a) = (row.before, row.after);
    let time = |s: Side| s.time_ns;
    // "A → B" and the change, for one percentile.
    let percentile = |of: fn(&RowLatency) -> Option<u64>| {
        let (before, after) = (
            b.and_then(|s| of(&s.latency)),
            a.and_then(|s| of(&s.latency)),
        );
        [
            format!("{} → {}", latency(before), latency(after)),
            change(before, after),
        ]
    };
    let [p50, p50_change] = percentile(|l| l.p50_ns);
    let [p99, p99_change] = percentile(|l| l.p99_ns);
    [
        opt(b, |s| s.calls).map_or("-".into(), |c| c.to_string()),
        opt(a, |s| s.calls).map_or("-".into(), |c| c.to_string()),
        change(opt(b, |s| s.calls), opt(a, |s| s.calls)),
        ms(opt(b, time)),
        ms(opt(a, time)),
        change(opt(b, time), opt(a, time)),
        p50,
        p50_change,
        p99,
        p99_change,
    ]
}

/// Column heads of the method and function tables (`TIME` is self time or Java time).
pub(crate) const TABLE_HEADER: [&str; 10] = [
    "calls A",
    "calls B",
    "±",
    "TIME A ms",
    "TIME B ms",
    "±",
    "p50",
    "±",
    "p99",
    "±",
];

fn table(s: &mut String, rows: &[Row], time: &str, what: &str, top: usize) {
    let head: Vec<String> = TABLE_HEADER
        .iter()
        .map(|h| h.replace("TIME", time))
        .collect();
    let _ = writeln!(
        s,
        "  {:>10} {:>10} {:>8} {:>12} {:>12} {:>8} {:>19} {:>7} {:>19} {:>7}  {what}",
        head[0], head[1], head[2], head[3], head[4], head[5], head[6], head[7], head[8], head[9]
    );
    for row in rows.iter().take(top) {
        let c = cells(row);
        let marker = match row.status() {
            "" => String::new(),
            status => format!("[{status}] "),
        };
        let _ = writeln!(
            s,
            "  {:>10} {:>10} {:>8} {:>12} {:>12} {:>8} {:>19} {:>7} {:>19} {:>7}  {marker}{}",
            c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8], c[9], row.name
        );
    }
    if rows.len() > top {
        let _ = writeln!(
            s,
            "  ({} more rows with smaller changes; top= shows more)",
            rows.len() - top
        );
    }
}

/// The diff for people.
pub fn text(d: &Diff) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "nativeacct diff: A = {}, B = {}",
        d.before_name, d.after_name
    );
    let _ = writeln!(s, "  {:<26} {:>22} {:>22} {:>10}", "", "A", "B", "±");
    for (what, b, a, ch) in summary_rows(d) {
        let _ = writeln!(s, "  {what:<26} {b:>22} {a:>22} {ch:>10}");
    }
    let _ = writeln!(
        s,
        "native methods, by change in self time ({} in A, {} in B):",
        d.before.native_methods.len(),
        d.after.native_methods.len()
    );
    table(&mut s, &d.methods, "self", "method", d.top);
    let _ = writeln!(s, "JNI functions, by change in Java time per upcall:");
    table(&mut s, &d.functions, "java", "function", d.top);
    if !d.counted.is_empty() {
        let _ = writeln!(
            s,
            "Other JNI functions, by change in time inside (estimated by the boundary sampler):"
        );
        table(&mut s, &d.counted, "smpl", "function", d.top);
    } else if !counts_every_function(d.before) || !counts_every_function(d.after) {
        let _ = writeln!(
            s,
            "Other JNI functions: not compared (a run with jni_counts=upcalls did not count them)"
        );
    }
    s
}

/// One row per method and function: `kind,name,status,calls_a,calls_b,time_ns_a,time_ns_b,
/// time_change_pct,p50_ns_a,p50_ns_b,p99_ns_a,p99_ns_b` (`time` is self time for methods
/// (`native_method`), Java time for JNI upcalls (`jni_function`), time inside by samples for the
/// other JNI functions (`jni_function_counted`); empty where a run has no value). Then the JNI
/// boundary: one `boundary` row per part (`name` its JSON key, `time` its ns) and one
/// `boundary_error95` row per part (`time`: the half-width of its 95 % interval).
pub fn csv(d: &Diff) -> String {
    let mut s = String::from(
        "kind,name,status,calls_a,calls_b,time_ns_a,time_ns_b,time_change_pct,p50_ns_a,p50_ns_b,p99_ns_a,p99_ns_b\n",
    );
    let num = |v: Option<u64>| v.map(|v| v.to_string()).unwrap_or_default();
    for (kind, rows) in [
        ("native_method", &d.methods),
        ("jni_function", &d.functions),
        ("jni_function_counted", &d.counted),
    ] {
        for row in rows {
            let (b, a) = (row.before, row.after);
            let pct = match (b, a) {
                (Some(b), Some(a)) if b.time_ns > 0 => format!(
                    "{:.3}",
                    (a.time_ns as f64 - b.time_ns as f64) * 100.0 / b.time_ns as f64
                ),
                _ => String::new(),
            };
            let name = if row.name.contains([',', '"']) {
                format!("\"{}\"", row.name.replace('"', "\"\""))
            } else {
                row.name.clone()
            };
            let _ = writeln!(
                s,
                "{kind},{name},{},{},{},{},{},{pct},{},{},{},{}",
                row.status(),
                num(b.map(|s| s.calls)),
                num(a.map(|s| s.calls)),
                num(b.map(|s| s.time_ns)),
                num(a.map(|s| s.time_ns)),
                num(b.and_then(|s| s.latency.p50_ns)),
                num(a.and_then(|s| s.latency.p50_ns)),
                num(b.and_then(|s| s.latency.p99_ns)),
                num(a.and_then(|s| s.latency.p99_ns)),
            );
        }
    }
    let parts = boundary_values(&d.before.boundary)
        .into_iter()
        .zip(boundary_values(&d.after.boundary));
    for ((part, nb, eb), (_, na, ea)) in parts {
        let pct = if nb > 0 {
            format!("{:.3}", (na as f64 - nb as f64) * 100.0 / nb as f64)
        } else {
            String::new()
        };
        let _ = writeln!(s, "boundary,{},,,,{nb},{na},{pct},,,,", part.key);
        let _ = writeln!(s, "boundary_error95,{},,,,{eb},{ea},,,,,", part.key);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::change;

    #[test]
    fn changes_say_new_gone_and_percent() {
        assert_eq!(change(Some(100), Some(300)), "+200.0%");
        assert_eq!(change(Some(300), Some(150)), "-50.0%");
        assert_eq!(change(None, Some(1)), "new");
        assert_eq!(change(Some(1), None), "gone");
        assert_eq!(change(Some(7), Some(7)), "=");
    }
}
