//! `nativeacct diff … format=html`: the summary side by side, the method and JNI function tables,
//! and inferno's differential flame graph of native self time (width: B; red: grew since A, blue:
//! shrank).

use super::diff::{cells, summary_rows, Diff, Row, TABLE_HEADER};
use super::html::{embed_flame_graph, esc, FLAME_SCRIPT};
use super::html_parts::page_head;
use std::fmt::Write;

/// The comparison of two reports as one self-contained HTML page.
pub fn render(d: &Diff) -> String {
    let mut h = page_head(
        "nativeacct diff",
        1200,
        " white-space: nowrap;",
        ".up { color: #b2182b; } .down { color: #2166ac; } .mark { font-weight: bold; }\n",
    );
    let _ = write!(
        h,
        r#"{FLAME_SCRIPT}<p>A = <code>{}</code>, B = <code>{}</code>.</p>
<h2>Native share, the process's CPU time and the JNI boundary</h2>
<table id="summary"><tr><th class="m"></th><th>A</th><th>B</th><th>±</th></tr>
"#,
        esc(&d.before_name),
        esc(&d.after_name)
    );
    for (what, b, a, ch) in summary_rows(d) {
        let _ = writeln!(
            h,
            "<tr><td class=\"m\">{}</td><td>{}</td><td>{}</td><td{}>{}</td></tr>",
            esc(&what).replace("  ", "&nbsp;&nbsp;"),
            esc(&b),
            esc(&a),
            class_of(&ch),
            esc(&ch)
        );
    }
    h.push_str("</table>\n");
    table(
        &mut h,
        "methods",
        "Native methods, by change in self time",
        &d.methods,
        "self",
        d.top,
    );
    table(
        &mut h,
        "functions",
        "JNI functions, by change in Java time per upcall",
        &d.functions,
        "java",
        d.top,
    );
    if !d.counted.is_empty() {
        table(
            &mut h,
            "counted-functions",
            "Other JNI functions, by change in time inside (estimated by the boundary sampler)",
            &d.counted,
            "sampled",
            d.top,
        );
    }
    h.push_str("<h2>Differential flame graph of native self time</h2>\n");
    h.push_str("<p class=\"note\">Frames are as wide as their native self time in B. Red frames grew since A, blue ones shrank, the deeper the color the larger the change; hover for both numbers.</p>\n");
    embed_flame_graph(&mut h, "flame", &differential_svg(d));
    h.push_str("</body></html>\n");
    h
}

/// Red for growth, blue for shrinking, bold for `new` and `gone`.
fn class_of(change: &str) -> &'static str {
    match change {
        "new" | "gone" => " class=\"mark\"",
        c if c.starts_with('+') => " class=\"up\"",
        c if c.starts_with('-') => " class=\"down\"",
        _ => "",
    }
}

fn table(h: &mut String, id: &str, title: &str, rows: &[Row], time: &str, top: usize) {
    let _ = writeln!(h, "<h2>{}</h2>\n<table id=\"{id}\"><tr>", esc(title));
    for head in TABLE_HEADER {
        let _ = write!(h, "<th>{}</th>", esc(&head.replace("TIME", time)));
    }
    h.push_str("<th class=\"m\">name</th></tr>\n");
    for row in rows.iter().take(top) {
        h.push_str("<tr>");
        for cell in cells(row) {
            let _ = write!(h, "<td{}>{}</td>", class_of(&cell), esc(&cell));
        }
        let marker = match row.status() {
            "" => String::new(),
            status => format!("<span class=\"mark\">[{status}]</span> "),
        };
        let _ = writeln!(h, "<td class=\"m\">{marker}{}</td></tr>", esc(&row.name));
    }
    h.push_str("</table>\n");
    if rows.len() > top {
        let _ = writeln!(
            h,
            "<p class=\"note\">{} more rows with smaller changes (top= shows more).</p>",
            rows.len() - top
        );
    }
}

/// inferno's differential flame graph of the two runs' collapsed stacks.
fn differential_svg(d: &Diff) -> Vec<u8> {
    let before = super::collapsed::render(d.before);
    let after = super::collapsed::render(d.after);
    let mut lines = Vec::new();
    let merged = inferno::differential::from_readers(
        inferno::differential::Options::default(),
        before.as_bytes(),
        after.as_bytes(),
        &mut lines,
    );
    let lines = if merged.is_ok() {
        String::from_utf8_lossy(&lines).into_owned()
    } else {
        String::new()
    };
    let total = |r: &super::Report| r.collapsed.iter().map(|(_, ns)| ns).sum::<u64>() as f64 / 1e6;
    let mut options = super::flame::options(
        "Native self time, B against A",
        format!(
            "{:.3} ms in A, {:.3} ms in B; width: B; red: grew, blue: shrank",
            total(d.before),
            total(d.after)
        ),
    );
    options.colors = Default::default();
    super::flame::draw(&mut options, lines.lines())
}
