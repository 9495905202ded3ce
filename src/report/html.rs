//! A self-contained HTML report: inline CSS, inline SVG, the flame graph's own script and a few lines
//! for its search box, no network resources. Sections (each SVG has an id the screenshot check looks for):
//! - `svg#process`: the whole process's CPU time as one stacked bar of its parts (Java bytecode, Java
//!   native, JIT, GC, VM, native threads, agent, unattributed), with a table of the busiest threads;
//! - `svg#split`: bytecode vs native CPU time, overall and per thread;
//! - `svg#boundary` (`html_boundary.rs`): the JNI boundary's five parts with their error bars,
//!   overall and per thread, and which of them a sampling profiler would call native;
//! - the ranked table of top natives and `svg#top-natives`, their self time;
//! - `svg.latency` (`html_latency.rs`): latency histograms (native self time per call, Java time per JNI upcall, and per top
//!   method) on a logarithmic time axis;
//! - `iframe#flame`: inferno's interactive flame graph of the collapsed stacks (native self time),
//!   with a search box (see `flame.rs`).

use super::caveats::{caveats, Caveat};
pub(crate) use super::html_parts::esc;
use super::html_parts::{page_head, BYTECODE_COLOR, NATIVE_COLOR, WIDTH};
use super::text::short_duration;
use super::Report;
use crate::process::Part;
use std::fmt::Write;

/// Threads shown in the split chart (the rest are summed in one row).
const MAX_THREADS: usize = 40;

fn pct(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}

/// The style rules of the charts and their keys.
const CHART_CSS: &str = "svg text { font: 11px sans-serif; fill: #222; }
.key span { display: inline-block; width: 12px; height: 12px; margin: 0 4px 0 12px; vertical-align: middle; }
.key .item { white-space: nowrap; font-style: normal; }
path.err { stroke: #222; stroke-width: 1.2; fill: none; }
";

pub(crate) fn render(r: &Report) -> String {
    let cpu = r.bytecode_ns + r.native_ns;
    let mut h = page_head("nativeacct report", 1000, "", CHART_CSS);
    let _ = write!(
        h,
        r#"{script}
<p>{mode} mode, clock {clock}, JDK {jdk}. CPU time {cpu:.3} s in {threads} threads:
<b>bytecode {bc:.2} %</b>, <b>native {nat:.2} %</b> (compensated for the agent's cost: native {cnat:.2} %).
{calls} native-method calls in {methods} methods, {jni} JNI upcalls.</p>
"#,
        mode = r.run.mode,
        clock = esc(&r.run.clock),
        jdk = esc(&r.run.jdk_version),
        cpu = cpu as f64 / 1e9,
        threads = r.threads,
        bc = 100.0 - r.native_pct,
        nat = r.native_pct,
        cnat = r.compensated_native_pct,
        calls = r.native_calls,
        methods = r.native_methods.len(),
        jni = r.jni_calls,
        script = FLAME_SCRIPT,
    );
    for caveat in caveats(r) {
        let _ = match caveat {
            Caveat::Partial { what, at_s } => writeln!(
                h,
                "<p><b>Partial report:</b> a {what} taken {at_s:.3} s after start, while the program ran.</p>"
            ),
            Caveat::Window { length_s, start_s } => writeln!(
                h,
                "<p><b>Window:</b> the {length_s:.3} s since the reset at {start_s:.3} s; every count and time covers it only.</p>"
            ),
            Caveat::Attached(a) => writeln!(
                h,
                "<p><b>Attached</b> to a running JVM: of its {} natives then, {} are counted by rebinding, {} in place, {} were not bound yet (counted once bound), {} are not counted (see <code>attach</code> in the JSON).</p>",
                a.natives_at_attach, a.covered_by_rebind, a.covered_in_place, a.not_bound_yet, a.not_covered
            ),
        };
    }
    process_section(&mut h, r);
    split_section(&mut h, r);
    super::html_boundary::boundary_section(&mut h, r);
    top_section(&mut h, r);
    super::html_latency::latency_section(&mut h, r);
    flame_section(&mut h, r);
    for note in &r.notes {
        let _ = writeln!(h, "<p class=\"note\">{}</p>", esc(note));
    }
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
    // The bar's segments and the key below it, one part at a time.
    let mut x = 0.0;
    let mut key = String::new();
    for (part, ns) in p.parts.iter() {
        let (color, label, ms, share) = (
            part_color(part),
            part.label(),
            ns as f64 / 1e6,
            pct(ns, p.cpu_ns),
        );
        let w = if p.cpu_ns == 0 {
            0.0
        } else {
            ns as f64 * WIDTH / p.cpu_ns as f64
        };
        if w > 0.0 {
            let _ = writeln!(
                h,
                "<rect x=\"{x:.2}\" y=\"2\" width=\"{w:.2}\" height=\"{bar_h}\" fill=\"{color}\"><title>{label} {ms:.3} ms ({share:.2} %)</title></rect>"
            );
        }
        x += w;
        let _ = write!(
            key,
            "<em class=\"item\"><span style=\"background:{color}\"></span>{label} {ms:.1} ms ({share:.2} %)</em>"
        );
    }
    let _ = writeln!(h, "</svg>\n<p class=\"key\">{key}</p>");
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
        rows.push((t.name.clone(), t.counts.bytecode_ns, t.counts.native_ns));
    }
    if r.per_thread.len() > MAX_THREADS {
        let rest = &r.per_thread[MAX_THREADS..];
        rows.push((
            format!("{} more threads", rest.len()),
            rest.iter().map(|t| t.counts.bytecode_ns).sum(),
            rest.iter().map(|t| t.counts.native_ns).sum(),
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
            m.latency.p50_ns.map(short_duration).unwrap_or_else(|| "-".into()),
            m.latency.p99_ns.map(short_duration).unwrap_or_else(|| "-".into()),
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

fn flame_section(h: &mut String, r: &Report) {
    h.push_str("<h2>Flame graph of native self time</h2>\n");
    h.push_str(
        "<p class=\"note\">Width is native self time (exact ns, not samples). The top frame of each tower is the native method (orange), below it its Java callers (green). Hover for numbers, click a frame to zoom; search finds frames by regular expression and says what share of the time they hold.</p>\n",
    );
    embed_flame_graph(h, "flame", &super::flame::svg(r));
}

/// Embed an inferno SVG document: in an iframe (its script addresses the document it is in), sized
/// to the graph, with a search box on the page that drives the graph's own search. `?s=REGEX` in the
/// page's address searches at load.
pub(crate) fn embed_flame_graph(h: &mut String, id: &str, svg: &[u8]) {
    let height = super::flame::svg_height(svg).unwrap_or(400);
    // An HTML document around the SVG root (srcdoc is always HTML): no margin, full width.
    let text = String::from_utf8_lossy(svg);
    let root = text.find("<svg").map_or(&text[..], |at| &text[at..]);
    let doc = format!(
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><style>html,body{{margin:0;overflow:hidden}}svg{{display:block;width:100%}}</style></head><body>{root}</body></html>"
    );
    let _ = writeln!(
        h,
        "<p class=\"flame-search\"><input id=\"{id}-term\" type=\"search\" placeholder=\"search frames (regex)\" size=\"40\"> <button id=\"{id}-search\" type=\"button\">Search</button> <button id=\"{id}-reset\" type=\"button\">Reset</button> <span id=\"{id}-matched\" class=\"note\"></span></p>"
    );
    let _ = writeln!(
        h,
        "<iframe id=\"{id}\" class=\"flame\" title=\"flame graph\" style=\"width:100%;height:{height}px;border:0\" srcdoc=\"{}\"></iframe>",
        esc(&doc)
    );
    let _ = writeln!(h, "<script>nativeacctFlame({id:?});</script>");
}

/// The page side of [`embed_flame_graph`]: the search box calls the graph's `search(term)`, and shows
/// the share it matched.
pub(crate) const FLAME_SCRIPT: &str = r#"<script>
function nativeacctFlame(id) {
  var frame = document.getElementById(id), term = document.getElementById(id + '-term');
  var shown = document.getElementById(id + '-matched');
  function graph() {
    var w = frame.contentWindow;
    // The graph keeps its state in its address; an embedded document has none to change.
    try { w.history.replaceState = function () {}; } catch (e) {}
    return w;
  }
  function report() {
    var m = frame.contentDocument && frame.contentDocument.getElementById('matched');
    shown.textContent = m && m.textContent ? m.textContent : (term.value ? 'no match' : '');
  }
  function reset() {
    var w = graph();
    if (w.searching) w.search_prompt();
    report();
  }
  function run() {
    var w = graph();
    if (!w.search) return;
    if (w.searching) w.search_prompt();
    if (term.value) { try { w.search(term.value); } catch (e) { shown.textContent = String(e); return; } }
    report();
  }
  document.getElementById(id + '-search').addEventListener('click', run);
  document.getElementById(id + '-reset').addEventListener('click', function () { term.value = ''; reset(); });
  term.addEventListener('keydown', function (e) { if (e.key === 'Enter') run(); });
  frame.addEventListener('load', function () {
    graph();
    var s = new URLSearchParams(window.location.search).get('s');
    if (s) { term.value = s; setTimeout(run, 50); }
  });
}
</script>
"#;
