//! The HTML report's JNI-boundary section (`svg#boundary`): the Java threads' CPU time as one
//! stacked bar of the five parts (Java code, JVM for Java, native code, JVM for native, agent) for
//! all threads and one per thread, each part with its 95 % interval drawn as an error bar at the
//! part's end; a key that says which parts a sampling profiler would call "native"; and the
//! numbers in `table#boundary-table`.

use super::html_parts::{esc, BYTECODE_COLOR, NATIVE_COLOR, WIDTH};
use super::{boundary_values, Report};
use crate::sampler::Boundary;
use std::fmt::Write;

/// Threads with a bar of their own (the rest are in the JSON's `per_thread`).
const MAX_THREADS: usize = 40;

/// Color of each part, in the order of `BOUNDARY_PARTS`: the Java side in blues, the native side
/// in oranges (the split chart's colors for the code itself), the agent apart.
const COLORS: [&str; 5] = [
    BYTECODE_COLOR,
    "#a0cbe8",
    NATIVE_COLOR,
    "#ffbe7d",
    "#b07aa1",
];

fn pct(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}

pub(super) fn boundary_section(h: &mut String, r: &Report) {
    let cpu = r.bytecode_ns + r.native_ns;
    let b = &r.boundary;
    h.push_str("<h2>The JNI boundary: Java code, the JVM, native code</h2>\n");
    let _ = writeln!(
        h,
        "<p>The Java threads' {:.3} s of CPU time in five parts that add up to it, from {} samples. Error bars: 95 % intervals. <span class=\"note\">Method: {}</span></p>",
        cpu as f64 / 1e9,
        b.samples,
        esc(b.method.as_deref().unwrap_or("not stated (a report written before the boundary existed)"))
    );
    let values = boundary_values(b);
    let mut key = String::new();
    let mut sampler_native = 0;
    let mut sampler_labels = Vec::new();
    for ((part, ns, err), color) in values.iter().zip(COLORS) {
        if part.sampler_native {
            sampler_native += ns;
            sampler_labels.push(part.label);
        }
        let _ = write!(
            key,
            "<em class=\"item\"><span style=\"background:{color}\"></span>{}{} {:.1} ±{:.1} %</em>",
            part.label,
            if part.sampler_native { " *" } else { "" },
            pct(*ns, cpu),
            pct(*err, cpu)
        );
    }
    let _ = writeln!(h, "<p class=\"key\">{key}</p>");
    let _ = writeln!(
        h,
        "<p class=\"note\">* A sampling profiler (async-profiler, JFR, perf) would call these {:.1} % \"native\": {} (its samples have no Java frame on top). nativeacct's headline native ({:.1} %) is native code + JVM for native, plus the agent's share on that side; the tick under the first bar marks it.</p>",
        pct(sampler_native, cpu),
        sampler_labels.join(" + "),
        pct(r.native_ns, cpu)
    );

    let mut rows: Vec<(String, u64, &Boundary)> = vec![("all threads".into(), cpu, b)];
    for t in r.per_thread.iter().take(MAX_THREADS) {
        rows.push((t.name.clone(), t.counts.cpu_ns(), &t.boundary));
    }
    if let Some(o) = &r.other_threads {
        rows.push((
            format!("{} other threads", o.threads),
            o.counts.cpu_ns(),
            &o.boundary,
        ));
    }
    let label_w = 200.0;
    let bar_w = WIDTH - label_w - 240.0;
    let row_h = 22.0;
    let first_h = 30.0;
    let longest = rows
        .iter()
        .skip(1)
        .map(|(_, cpu, _)| *cpu)
        .max()
        .unwrap_or(1)
        .max(1);
    let height = first_h + (rows.len() - 1) as f64 * row_h + 10.0;
    let _ = writeln!(
        h,
        "<svg id=\"boundary\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{height}\">"
    );
    for (i, (name, total, boundary)) in rows.iter().enumerate() {
        let (y, bar_h) = if i == 0 {
            (2.0, 18.0)
        } else {
            (first_h + (i - 1) as f64 * row_h + 2.0, 14.0)
        };
        // The first row is all threads at full width; threads are scaled to the busiest one.
        let scale = if i == 0 {
            bar_w / (*total).max(1) as f64
        } else {
            bar_w / longest as f64
        };
        let _ = write!(
            h,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            label_w - 6.0,
            y + bar_h - 3.0,
            esc(name)
        );
        let mut x = label_w;
        let mut whiskers = String::new();
        // Where the row's text may start: after the bar and its error bars.
        let mut text_x = label_w + *total as f64 * scale;
        for ((part, ns, err), color) in boundary_values(boundary).iter().zip(COLORS) {
            let w = *ns as f64 * scale;
            if w > 0.0 {
                let _ = write!(
                    h,
                    "<rect x=\"{x:.2}\" y=\"{y:.1}\" width=\"{w:.2}\" height=\"{bar_h}\" fill=\"{color}\"><title>{}: {} {:.3} ms ±{:.3} ms ({:.1} ±{:.1} %, 95 %)</title></rect>",
                    esc(name),
                    part.label,
                    *ns as f64 / 1e6,
                    *err as f64 / 1e6,
                    pct(*ns, *total),
                    pct(*err, *total)
                );
            }
            x += w;
            // The error bar: the part's end ± its half-width, drawn after every segment so that
            // no segment covers it.
            let half = *err as f64 * scale;
            if (*ns > 0 || *err > 0) && half >= 0.5 {
                let (x0, x1, mid) = (
                    (x - half).max(label_w),
                    (x + half).min(label_w + bar_w + 40.0),
                    y + bar_h / 2.0,
                );
                text_x = text_x.max(x1);
                let _ = write!(
                    whiskers,
                    "<path class=\"err\" d=\"M{x0:.2} {mid:.1}H{x1:.2}M{x0:.2} {:.1}V{:.1}M{x1:.2} {:.1}V{:.1}\"/>",
                    mid - 4.0,
                    mid + 4.0,
                    mid - 4.0,
                    mid + 4.0
                );
            }
        }
        h.push_str(&whiskers);
        if i == 0 {
            // IPA's split, where the bytecode side ends.
            let tick = label_w + r.bytecode_ns as f64 * scale;
            let _ = write!(
                h,
                "<path d=\"M{tick:.2} {:.1}V{:.1}\" stroke=\"#222\" stroke-width=\"2\"><title>bytecode | native (IPA): {:.2} % native</title></path>",
                y + bar_h,
                y + bar_h + 6.0,
                r.native_pct
            );
        }
        let _ = writeln!(
            h,
            "<text x=\"{:.1}\" y=\"{:.1}\">{:.1} % sampler-native, {:.1} ms</text>",
            text_x + 6.0,
            y + bar_h - 3.0,
            pct(
                boundary_values(boundary)
                    .iter()
                    .filter(|(p, _, _)| p.sampler_native)
                    .map(|(_, ns, _)| ns)
                    .sum(),
                *total
            ),
            *total as f64 / 1e6
        );
    }
    h.push_str("</svg>\n");

    h.push_str("<table id=\"boundary-table\"><tr><th class=\"m\">part</th><th>ms</th><th>±ms (95 %)</th><th>share</th><th>±share</th><th class=\"m\">a sampler calls it</th></tr>\n");
    for (part, ns, err) in values {
        let _ = writeln!(
            h,
            "<tr><td class=\"m\">{}</td><td>{:.3}</td><td>{:.3}</td><td>{:.2}%</td><td>{:.2}%</td><td class=\"m\">{}</td></tr>",
            part.label,
            ns as f64 / 1e6,
            err as f64 / 1e6,
            pct(ns, cpu),
            pct(err, cpu),
            if part.sampler_native { "native" } else { "Java" }
        );
    }
    h.push_str("</table>\n");
    if b.unsampled_ns > 0 {
        let _ = writeln!(
            h,
            "<p class=\"note\">{:.3} ms ran on a side that got no sample (short threads): counted as Java code or native code, with its whole time as error.</p>",
            b.unsampled_ns as f64 / 1e6
        );
    }
}
