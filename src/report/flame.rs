//! Flame graphs of native self time by Java call chain, drawn by `inferno` (the Rust port of Brendan
//! Gregg's FlameGraph): the interactive SVG everyone knows, with search (Ctrl-F or the Search button),
//! click-to-zoom and tooltips. `format=svg` writes it alone; the HTML report embeds it.
//!
//! Input is the collapsed stacks (see `collapsed.rs`). The native method, the top frame of each
//! tower, is drawn in orange and its Java callers in green (inferno's Java palette; the leaf is
//! marked with the `_[k]` annotation, which inferno strips from the names it shows). Widths are
//! native self time in ns, not samples.

use super::Report;
use inferno::flamegraph::{self, color::MultiPalette, Options, Palette};

/// The annotation that colors a frame orange in inferno's Java palette (not shown).
const NATIVE_MARK: &str = "_[k]";

/// inferno's options for the graphs of a report: fluid width, deterministic colors.
pub(crate) fn options<'a>(title: &str, subtitle: String) -> Options<'a> {
    let mut options = Options::default();
    options.title = title.to_string();
    options.subtitle = Some(subtitle);
    options.count_name = "ns".to_string();
    options.name_type = "Frame:".to_string();
    options.colors = Palette::Multi(MultiPalette::Java);
    options.deterministic = true;
    options.image_width = None;
    options
}

/// A collapsed line's stack with its leaf (the native method) marked native.
fn marked(stack: &str) -> String {
    format!("{stack}{NATIVE_MARK}")
}

/// The flame graph of `r`'s collapsed stacks as a standalone SVG document.
pub(crate) fn svg(r: &Report) -> Vec<u8> {
    let total: u64 = r.collapsed.iter().map(|(_, ns)| ns).sum();
    let lines: Vec<String> = r
        .collapsed
        .iter()
        .map(|(stack, ns)| format!("{} {ns}", marked(stack)))
        .collect();
    let subtitle = format!(
        "{:.3} ms of native self time in {} methods; orange: native method, green: its Java callers{}",
        total as f64 / 1e6,
        r.native_methods.iter().filter(|m| m.self_ns > 0).count(),
        match &r.stacks {
            Some(s) => format!(" ({} sampling, depth {})", s.sampling, s.depth),
            None => " (run without stacks=: native methods only)".to_string(),
        }
    );
    let mut options = options("Native self time by Java call chain", subtitle);
    draw(&mut options, lines.iter().map(String::as_str))
}

/// inferno's SVG of `lines` (`stack value` or `stack before after`), or a small SVG that says there
/// was nothing to draw.
pub(crate) fn draw<'a>(options: &mut Options<'_>, lines: impl Iterator<Item = &'a str>) -> Vec<u8> {
    let lines: Vec<&str> = lines.collect();
    let mut out = Vec::new();
    if !lines.is_empty() && flamegraph::from_lines(options, lines, &mut out).is_ok() {
        return out;
    }
    empty_svg(&options.title)
}

fn empty_svg(title: &str) -> Vec<u8> {
    let title = title.replace('&', "&amp;").replace('<', "&lt;");
    format!(
        "<?xml version=\"1.0\" standalone=\"no\"?>\n<svg version=\"1.1\" width=\"600\" height=\"60\" xmlns=\"http://www.w3.org/2000/svg\"><text x=\"10\" y=\"24\" font-family=\"Verdana\" font-size=\"17\">{title}</text><text x=\"10\" y=\"48\" font-family=\"Verdana\" font-size=\"12\">no native self time was recorded</text></svg>\n"
    )
    .into_bytes()
}

/// The height in pixels an SVG document asks for (its root's `height`), if it says.
pub(crate) fn svg_height(svg: &[u8]) -> Option<u32> {
    let text = std::str::from_utf8(svg).ok()?;
    let root = &text[text.find("<svg")?..];
    let root = &root[..root.find('>')?];
    let value = root.split(" height=\"").nth(1)?.split('"').next()?;
    value.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inferno_draws_every_stack_and_says_its_height() {
        let mut options = options("t", "s".to_string());
        let svg = draw(
            &mut options,
            [
                "a.Main.run();a.N.x(int)_[k] 300",
                "a.Main.run();a.N.y()_[k] 100",
            ]
            .into_iter(),
        );
        let text = String::from_utf8(svg.clone()).unwrap();
        assert!(text.contains("a.N.x(int) (300 ns, 75.00%)"), "{text}");
        assert!(!text.contains("_[k]"), "the annotation is not shown");
        assert!(svg_height(&svg).is_some_and(|h| h > 50));
        let empty = draw(&mut options, std::iter::empty());
        assert!(String::from_utf8(empty)
            .unwrap()
            .contains("no native self time"));
    }
}
