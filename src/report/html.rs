//! A self-contained HTML report: inline CSS, inline SVG, a few lines of inline script for the flame
//! graph's zoom, no network resources. Sections (each SVG has an id the screenshot check looks for):
//! - `svg#process`: the whole process's CPU time as one stacked bar of its parts (Java bytecode, Java
//!   native, JIT, GC, VM, native threads, agent, unattributed), with a table of the busiest threads;
//! - `svg#split`: bytecode vs native CPU time, overall and per thread;
//! - the ranked table of top natives and `svg#top-natives`, their self time;
//! - `svg.latency`: latency histograms (native self time per call, Java time per JNI upcall, and per top
//!   method) on a logarithmic time axis;
//! - `svg#flame`: a flame graph of the collapsed stacks (native self time).

use super::text::short_duration;
use super::Report;
use crate::process::Part;
use hdrhistogram::Histogram;
use std::collections::BTreeMap;
use std::fmt::Write;

const BYTECODE_COLOR: &str = "#4e79a7";
const NATIVE_COLOR: &str = "#f28e2b";
const WIDTH: f64 = 960.0;
/// Threads shown in the split chart (the rest are summed in one row).
const MAX_THREADS: usize = 40;
/// Latency charts for the top methods.
const LATENCY_METHODS: usize = 4;
/// Flame graph frames narrower than this many pixels are left out.
const MIN_FLAME_PX: f64 = 0.3;

fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

fn pct(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}

pub(crate) fn render(r: &Report) -> String {
    let mut h = String::new();
    let cpu = r.bytecode_ns + r.native_ns;
    let _ = write!(
        h,
        r#"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>nativeacct report</title>
<style>
body {{ font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #222; max-width: 1000px; }}
h1 {{ font-size: 22px; }} h2 {{ font-size: 17px; margin-top: 32px; border-bottom: 1px solid #ddd; }}
table {{ border-collapse: collapse; font: 12px monospace; }}
td, th {{ padding: 2px 8px; text-align: right; border-bottom: 1px solid #eee; }}
td.m, th.m {{ text-align: left; }}
svg text {{ font: 11px sans-serif; fill: #222; }}
.key span {{ display: inline-block; width: 12px; height: 12px; margin: 0 4px 0 12px; vertical-align: middle; }}
.key .item {{ white-space: nowrap; font-style: normal; }}
.note {{ color: #666; font-size: 12px; }}
#flame rect {{ stroke: #fff; stroke-width: 0.5; cursor: pointer; }}
</style></head><body>
<h1>nativeacct report</h1>
<p>{mode} mode, clock {clock}, JDK {jdk}. CPU time {cpu:.3} s in {threads} threads:
<b>bytecode {bc:.2} %</b>, <b>native {nat:.2} %</b> (compensated for the agent's cost: native {cnat:.2} %).
{calls} native-method calls in {methods} methods, {jni} JNI upcalls.</p>
"#,
        mode = r.mode,
        clock = esc(&r.clock),
        jdk = esc(&r.jdk_version),
        cpu = cpu as f64 / 1e9,
        threads = r.threads,
        bc = 100.0 - r.native_pct,
        nat = r.native_pct,
        cnat = r.compensated_native_pct,
        calls = r.native_calls,
        methods = r.native_methods.len(),
        jni = r.jni_calls,
    );
    if let Some(at) = r.snapshot_at_ns.filter(|_| r.partial) {
        let _ = writeln!(
            h,
            "<p><b>Partial report:</b> a snapshot taken {:.3} s after start, while the program ran.</p>",
            at as f64 / 1e9
        );
    }
    process_section(&mut h, r);
    split_section(&mut h, r);
    top_section(&mut h, r);
    latency_section(&mut h, r);
    flame_section(&mut h, r);
    for note in &r.notes {
        let _ = writeln!(h, "<p class=\"note\">{}</p>", esc(note));
    }
    h.push_str(FLAME_SCRIPT);
    h.push_str("</body></html>\n");
    h
}

/// Color of each part in the process bar (Java bytecode and native as in the split chart).
fn part_color(part: Part) -> &'static str {
    match part {
        Part::JavaBytecode => BYTECODE_COLOR,
        Part::JavaNative => NATIVE_COLOR,
        Part::JitCompiler => "#59a14f",
        Part::Gc => "#e15759",
        Part::VmOther => "#76b7b2",
        Part::NativeThreads => "#edc948",
        Part::Agent => "#b07aa1",
        Part::Unattributed => "#bab0ac",
    }
}

/// Threads listed under the process bar.
const PROCESS_THREAD_ROWS: usize = 15;

fn process_section(h: &mut String, r: &Report) {
    let p = &r.process;
    h.push_str("<h2>Where the process's CPU time goes</h2>\n");
    let _ = writeln!(
        h,
        "<p>{:.3} s of CPU time (user + system, every thread, at VM death), split into parts that add up to it.</p>",
        p.cpu_ns as f64 / 1e9
    );
    let bar_h = 28.0;
    let _ = writeln!(
        h,
        "<svg id=\"process\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{}\">",
        bar_h + 4.0
    );
    let mut x = 0.0;
    for (part, ns) in p.parts.iter() {
        let w = if p.cpu_ns == 0 {
            0.0
        } else {
            ns as f64 * WIDTH / p.cpu_ns as f64
        };
        if w > 0.0 {
            let _ = writeln!(
                h,
                "<rect x=\"{x:.2}\" y=\"2\" width=\"{w:.2}\" height=\"{bar_h}\" fill=\"{}\"><title>{} {:.3} ms ({:.2} %)</title></rect>",
                part_color(part),
                part.label(),
                ns as f64 / 1e6,
                pct(ns, p.cpu_ns)
            );
        }
        x += w;
    }
    h.push_str("</svg>\n<p class=\"key\">");
    for (part, ns) in p.parts.iter() {
        let _ = write!(
            h,
            "<em class=\"item\"><span style=\"background:{}\"></span>{} {:.1} ms ({:.2} %)</em>",
            part_color(part),
            part.label(),
            ns as f64 / 1e6,
            pct(ns, p.cpu_ns)
        );
    }
    h.push_str("</p>\n");
    if p.threads.is_empty() {
        return;
    }
    h.push_str("<table id=\"process-threads\"><tr><th class=\"m\">thread</th><th>tid</th><th class=\"m\">part</th><th>cpu_ms</th><th>share</th></tr>\n");
    for t in p.threads.iter().take(PROCESS_THREAD_ROWS) {
        let _ = writeln!(
            h,
            "<tr><td class=\"m\">{}</td><td>{}</td><td class=\"m\">{}</td><td>{:.3}</td><td>{:.2}%</td></tr>",
            esc(&t.name),
            t.tid,
            t.part.label(),
            t.cpu_ns as f64 / 1e6,
            pct(t.cpu_ns, p.cpu_ns)
        );
    }
    h.push_str("</table>\n");
    if p.threads.len() > PROCESS_THREAD_ROWS {
        let _ = writeln!(
            h,
            "<p class=\"note\">{} more rows (thread and part) in the JSON report's <code>process.threads</code>.</p>",
            p.threads.len() - PROCESS_THREAD_ROWS
        );
    }
}

fn split_section(h: &mut String, r: &Report) {
    h.push_str("<h2>Bytecode vs native, per thread</h2>\n");
    let _ = writeln!(
        h,
        "<p class=\"key\"><span style=\"background:{BYTECODE_COLOR}\"></span>bytecode<span style=\"background:{NATIVE_COLOR}\"></span>native</p>"
    );
    let mut rows: Vec<(String, u64, u64)> =
        vec![("all threads".into(), r.bytecode_ns, r.native_ns)];
    for t in r.per_thread.iter().take(MAX_THREADS) {
        rows.push((t.name.clone(), t.bytecode_ns, t.native_ns));
    }
    if r.per_thread.len() > MAX_THREADS {
        let rest = &r.per_thread[MAX_THREADS..];
        rows.push((
            format!("{} more threads", rest.len()),
            rest.iter().map(|t| t.bytecode_ns).sum(),
            rest.iter().map(|t| t.native_ns).sum(),
        ));
    }
    let label_w = 200.0;
    let bar_w = WIDTH - label_w - 150.0;
    let row_h = 20.0;
    let longest = rows
        .iter()
        .skip(1)
        .map(|(_, b, n)| b + n)
        .max()
        .unwrap_or(1)
        .max(1);
    let _ = writeln!(
        h,
        "<svg id=\"split\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{}\">",
        rows.len() as f64 * row_h + 10.0
    );
    for (i, (name, bytecode, native)) in rows.iter().enumerate() {
        let y = i as f64 * row_h + 4.0;
        let total = bytecode + native;
        // The first row is the whole process at full width; threads are scaled to the busiest one.
        let scale = if i == 0 {
            bar_w / total.max(1) as f64
        } else {
            bar_w / longest as f64
        };
        let bw = *bytecode as f64 * scale;
        let nw = *native as f64 * scale;
        let _ = writeln!(
            h,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>\
             <rect x=\"{label_w}\" y=\"{y:.1}\" width=\"{bw:.2}\" height=\"14\" fill=\"{BYTECODE_COLOR}\"><title>{} bytecode {:.3} ms</title></rect>\
             <rect x=\"{:.2}\" y=\"{y:.1}\" width=\"{nw:.2}\" height=\"14\" fill=\"{NATIVE_COLOR}\"><title>{} native {:.3} ms</title></rect>\
             <text x=\"{:.1}\" y=\"{:.1}\">{:.1} % native, {:.1} ms</text>",
            label_w - 6.0,
            y + 11.0,
            esc(name),
            esc(name),
            *bytecode as f64 / 1e6,
            label_w + bw,
            esc(name),
            *native as f64 / 1e6,
            label_w + bw + nw + 6.0,
            y + 11.0,
            pct(*native, total),
            total as f64 / 1e6
        );
    }
    h.push_str("</svg>\n");
}

fn top_section(h: &mut String, r: &Report) {
    let _ = writeln!(
        h,
        "<h2>Top {} natives by self time</h2>",
        r.top.min(r.native_methods.len())
    );
    h.push_str("<table id=\"top-table\"><tr><th>rank</th><th>self</th><th>accum</th><th>calls</th><th>total_ms</th><th>self_ms</th><th>p50</th><th>p99</th><th class=\"m\">method</th></tr>\n");
    let all_self: u64 = r.native_methods.iter().map(|m| m.self_ns).sum();
    let mut accum = 0;
    let top: Vec<_> = r.native_methods.iter().take(r.top).collect();
    for (i, m) in top.iter().enumerate() {
        accum += m.self_ns;
        let _ = writeln!(
            h,
            "<tr><td>{}</td><td>{:.2}%</td><td>{:.2}%</td><td>{}</td><td>{:.3}</td><td>{:.3}</td><td>{}</td><td>{}</td><td class=\"m\">{}</td></tr>",
            i + 1,
            pct(m.self_ns, all_self),
            pct(accum, all_self),
            m.calls,
            m.total_ns as f64 / 1e6,
            m.self_ns as f64 / 1e6,
            m.p50_ns.map(short_duration).unwrap_or_else(|| "-".into()),
            m.p99_ns.map(short_duration).unwrap_or_else(|| "-".into()),
            esc(&m.display_name())
        );
    }
    h.push_str("</table>\n");
    let row_h = 18.0;
    let label_w = 420.0;
    let bar_w = WIDTH - label_w - 100.0;
    let longest = top.iter().map(|m| m.self_ns).max().unwrap_or(1).max(1);
    let _ = writeln!(
        h,
        "<svg id=\"top-natives\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{}\">",
        top.len() as f64 * row_h + 10.0
    );
    for (i, m) in top.iter().enumerate() {
        let y = i as f64 * row_h + 4.0;
        let mut label = m.frame_name();
        if label.chars().count() > 64 {
            label = format!("{}…", label.chars().take(63).collect::<String>());
        }
        let w = m.self_ns as f64 * bar_w / longest as f64;
        let _ = writeln!(
            h,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text><rect x=\"{label_w}\" y=\"{y:.1}\" width=\"{w:.2}\" height=\"13\" fill=\"{NATIVE_COLOR}\"><title>{} self {:.3} ms in {} calls</title></rect><text x=\"{:.1}\" y=\"{:.1}\">{:.3} ms</text>",
            label_w - 6.0,
            y + 10.0,
            esc(&label),
            esc(&m.display_name()),
            m.self_ns as f64 / 1e6,
            m.calls,
            label_w + w + 6.0,
            y + 10.0,
            m.self_ns as f64 / 1e6
        );
    }
    h.push_str("</svg>\n");
}

/// Counts of `hist` in bins of a tenth of a decade: (bin lower edge in ns, count).
fn log_bins(hist: &Histogram<u64>) -> BTreeMap<i32, u64> {
    let mut bins = BTreeMap::new();
    for v in hist.iter_recorded() {
        let value = v.value_iterated_to().max(1) as f64;
        let bin = (value.log10() * 10.0).floor() as i32;
        *bins.entry(bin).or_insert(0) += v.count_at_value();
    }
    bins
}

fn latency_chart(h: &mut String, title: &str, hist: &Histogram<u64>, color: &str) {
    let bins = log_bins(hist);
    let (Some(&lo), Some(&hi)) = (bins.keys().next(), bins.keys().last()) else {
        return;
    };
    // Whole decades around the data.
    let first = lo.div_euclid(10) * 10;
    let last = (hi.div_euclid(10) + 1) * 10;
    let (left, bottom, plot_w, plot_h) = (60.0, 30.0, WIDTH - 80.0, 140.0);
    let height = plot_h + bottom + 44.0;
    let peak = bins.values().copied().max().unwrap_or(1).max(1) as f64;
    let bin_w = plot_w / (last - first) as f64;
    let _ = writeln!(
        h,
        "<svg class=\"latency\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{height}\">\
         <text x=\"{left}\" y=\"14\" font-weight=\"bold\">{}</text>",
        esc(title)
    );
    let top = 36.0;
    for (bin, count) in &bins {
        let x = left + (bin - first) as f64 * bin_w;
        let bh = *count as f64 / peak * plot_h;
        let lower = 10f64.powf(*bin as f64 / 10.0);
        let upper = 10f64.powf((*bin + 1) as f64 / 10.0);
        let _ = writeln!(
            h,
            "<rect x=\"{x:.2}\" y=\"{:.2}\" width=\"{:.2}\" height=\"{bh:.2}\" fill=\"{color}\"><title>{} to {}: {count} calls</title></rect>",
            top + plot_h - bh,
            (bin_w - 1.0).max(0.5),
            short_duration(lower as u64),
            short_duration(upper as u64)
        );
    }
    // Axes: one tick per decade, labelled with the time.
    let _ = writeln!(
        h,
        "<line x1=\"{left}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\" stroke=\"#444\"/><line x1=\"{left}\" y1=\"{top}\" x2=\"{left}\" y2=\"{y:.1}\" stroke=\"#444\"/>\
         <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text><text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">0</text>",
        left + plot_w,
        left - 4.0,
        top + 10.0,
        peak as u64,
        left - 4.0,
        top + plot_h,
        y = top + plot_h
    );
    for decade in (first..=last).step_by(10) {
        let x = left + (decade - first) as f64 * bin_w;
        let _ = writeln!(
            h,
            "<line x1=\"{x:.1}\" y1=\"{:.1}\" x2=\"{x:.1}\" y2=\"{:.1}\" stroke=\"#444\"/><text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            top + plot_h,
            top + plot_h + 5.0,
            top + plot_h + 18.0,
            short_duration(10f64.powi(decade / 10) as u64)
        );
    }
    let _ = writeln!(
        h,
        "<text x=\"{left}\" y=\"28\" fill=\"#555\">{} calls, p50 {}, p99 {}, max {} (log time axis)</text></svg>",
        hist.len(),
        short_duration(hist.value_at_quantile(0.5)),
        short_duration(hist.value_at_quantile(0.99)),
        short_duration(hist.max())
    );
}

fn latency_section(h: &mut String, r: &Report) {
    h.push_str("<h2>Latency histograms (log time axis)</h2>\n");
    let Some(hist) = &r.histograms else {
        h.push_str("<p class=\"note\">No histograms were recorded.</p>\n");
        return;
    };
    if hist.native_overall.is_empty() && hist.upcall_overall.is_empty() {
        h.push_str("<p class=\"note\">No native calls or JNI upcalls were recorded.</p>\n");
    }
    latency_chart(
        h,
        "Native self time per call, all methods",
        &hist.native_overall,
        NATIVE_COLOR,
    );
    latency_chart(
        h,
        "Java time per JNI upcall, all functions",
        &hist.upcall_overall,
        BYTECODE_COLOR,
    );
    for m in r.native_methods.iter().take(LATENCY_METHODS.min(r.top)) {
        if let Some(mh) = m.id.and_then(|id| hist.native_by_method.get(&id)) {
            latency_chart(
                h,
                &format!("Self time per call: {}", m.frame_name()),
                mh,
                NATIVE_COLOR,
            );
        }
    }
}

/// A node of the flame graph: total ns of every stack through it.
#[derive(Default)]
struct Node {
    total: u64,
    children: BTreeMap<String, Node>,
}

fn flame_section(h: &mut String, r: &Report) {
    h.push_str("<h2>Flame graph of native self time</h2>\n");
    let mut root = Node::default();
    for (stack, ns) in &r.collapsed {
        root.total += ns;
        let mut node = &mut root;
        for frame in stack.split(';') {
            node = node.children.entry(frame.to_string()).or_default();
            node.total += ns;
        }
    }
    let depth = max_depth(&root);
    let frame_h = 17.0;
    let height = (depth + 1) as f64 * frame_h + 4.0;
    let _ = writeln!(
        h,
        "<p class=\"note\">Width is native self time (exact ns, not samples); the top frame of each tower is the native method, below it its Java callers{}. Click a frame to zoom, click the root to reset.</p>",
        match &r.stacks {
            Some(s) => format!(" ({} sampling, depth {}, {} captured calls, {:.1} µs per capture)", s.sampling, s.depth, s.captured_calls, s.capture_ns_per_call / 1e3),
            None => " (no stacks= given: native methods only)".to_string(),
        }
    );
    let _ = writeln!(
        h,
        "<svg id=\"flame\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{height}\" data-total=\"{}\">",
        root.total
    );
    if root.total > 0 {
        let mut out = String::new();
        draw(
            &mut out, "all", &root, 0.0, WIDTH, 0, depth, frame_h, root.total, true,
        );
        h.push_str(&out);
    } else {
        let _ = writeln!(
            h,
            "<text x=\"10\" y=\"14\">no native self time was recorded</text>"
        );
    }
    h.push_str("</svg>\n");
}

fn max_depth(node: &Node) -> usize {
    node.children
        .values()
        .map(|c| 1 + max_depth(c))
        .max()
        .unwrap_or(0)
}

fn flame_color(name: &str, leaf: bool) -> String {
    // A stable warm color per name; native methods (leaves) in orange hues, Java frames in yellows.
    let hash = name
        .bytes()
        .fold(2166136261u32, |h, b| (h ^ b as u32).wrapping_mul(16777619));
    let jitter = (hash % 40) as u8;
    if leaf {
        format!("rgb(240,{},{})", 110 + jitter, 40 + jitter / 2)
    } else {
        format!("rgb(230,{},{})", 180 + jitter, 60 + jitter)
    }
}

#[allow(clippy::too_many_arguments)]
fn draw(
    out: &mut String,
    name: &str,
    node: &Node,
    x: f64,
    w: f64,
    level: usize,
    depth: usize,
    frame_h: f64,
    all: u64,
    root: bool,
) {
    if w < MIN_FLAME_PX {
        return;
    }
    let y = (depth - level) as f64 * frame_h;
    let leaf = node.children.is_empty();
    let color = if root {
        "rgb(200,200,200)".to_string()
    } else {
        flame_color(name, leaf)
    };
    let _ = write!(
        out,
        "<g><title>{} — {} ({:.2} %)</title><rect x=\"{x:.2}\" y=\"{y:.1}\" width=\"{w:.2}\" height=\"{:.1}\" fill=\"{color}\" data-x=\"{x:.2}\" data-w=\"{w:.2}\"/>",
        esc(name),
        short_duration(node.total),
        pct(node.total, all),
        frame_h - 1.0
    );
    if w > 30.0 {
        let chars = ((w - 6.0) / 6.5) as usize;
        let label: String = if name.chars().count() > chars {
            format!(
                "{}…",
                name.chars()
                    .take(chars.saturating_sub(1))
                    .collect::<String>()
            )
        } else {
            name.to_string()
        };
        let _ = write!(
            out,
            "<text x=\"{:.2}\" y=\"{:.1}\">{}</text>",
            x + 3.0,
            y + frame_h - 5.0,
            esc(&label)
        );
    }
    out.push_str("</g>\n");
    let mut cx = x;
    for (child_name, child) in &node.children {
        let cw = w * child.total as f64 / node.total.max(1) as f64;
        draw(
            out,
            child_name,
            child,
            cx,
            cw,
            level + 1,
            depth,
            frame_h,
            all,
            false,
        );
        cx += cw;
    }
}

/// Click-to-zoom for the flame graph: a clicked frame and its descendants are stretched to full width;
/// frames outside its span are hidden. Inline, no external resources.
const FLAME_SCRIPT: &str = r#"<script>
(function () {
  var svg = document.getElementById('flame');
  if (!svg) return;
  var W = svg.width.baseVal.value;
  svg.addEventListener('click', function (e) {
    var r = e.target.closest('g') && e.target.closest('g').querySelector('rect');
    if (!r) return;
    var x0 = parseFloat(r.dataset.x), w0 = parseFloat(r.dataset.w), y0 = parseFloat(r.getAttribute('y'));
    svg.querySelectorAll('g').forEach(function (g) {
      var rr = g.querySelector('rect'), t = g.querySelector('text');
      var x = parseFloat(rr.dataset.x), w = parseFloat(rr.dataset.w), y = parseFloat(rr.getAttribute('y'));
      var inside = x >= x0 - 0.01 && x + w <= x0 + w0 + 0.01 && y <= y0;
      var below = y > y0 && x <= x0 + 0.01 && x + w >= x0 + w0 - 0.01;
      g.style.display = inside || below ? '' : 'none';
      var nx = inside ? (x - x0) * W / w0 : 0, nw = inside ? w * W / w0 : W;
      rr.setAttribute('x', nx); rr.setAttribute('width', nw);
      if (t) { t.setAttribute('x', nx + 3); t.style.display = nw > 30 ? '' : 'none'; }
    });
  });
})();
</script>
"#;
