//! What the HTML pages share: escaping and the palette and width of their charts (below both
//! `html.rs` and `html_latency.rs`, so that neither imports the other's internals).

/// Bytecode time in every chart.
pub(super) const BYTECODE_COLOR: &str = "#4e79a7";
/// Native time in every chart.
pub(super) const NATIVE_COLOR: &str = "#f28e2b";
/// Width of the charts, in SVG units.
pub(super) const WIDTH: f64 = 960.0;

/// `s` escaped for HTML text and attribute values.
pub(crate) fn esc(s: &str) -> String {
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
