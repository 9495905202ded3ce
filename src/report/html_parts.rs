//! What the HTML pages share: the page's head and style, escaping, and the palette and width of
//! their charts (below `html.rs`, `html_latency.rs` and `diff_html.rs`, so that none imports another's
//! internals).

/// Bytecode time in every chart.
pub(super) const BYTECODE_COLOR: &str = "#4e79a7";
/// Native time in every chart.
pub(super) const NATIVE_COLOR: &str = "#f28e2b";
/// Width of the charts, in SVG units.
pub(super) const WIDTH: f64 = 960.0;

/// The start of a page up to its heading: `title`, the style both pages share with the body at most
/// `max_width` px wide, `cell_css` added to every table cell's rule, and the page's own `css` rules.
pub(super) fn page_head(title: &str, max_width: u32, cell_css: &str, css: &str) -> String {
    format!(
        r#"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>{title}</title>
<style>
body {{ font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #222; max-width: {max_width}px; }}
h1 {{ font-size: 22px; }} h2 {{ font-size: 17px; margin-top: 32px; border-bottom: 1px solid #ddd; }}
table {{ border-collapse: collapse; font: 12px monospace; }}
td, th {{ padding: 2px 8px; text-align: right; border-bottom: 1px solid #eee;{cell_css} }}
td.m, th.m {{ text-align: left; }}
{css}.note {{ color: #666; font-size: 12px; }}
</style></head><body>
<h1>{title}</h1>
"#
    )
}

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
