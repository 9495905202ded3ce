//! A format's bytes from the report, for the formats that are one file.

use super::*;

/// The bytes of a format that is one file (every format but `hgrm` and `hlog`).
pub fn render_single(report: &Report, format: Format) -> Option<Vec<u8>> {
    Some(match format {
        Format::Text => text::render(report).into_bytes(),
        Format::Json => json::render(report),
        Format::Csv => csv::render(report).into_bytes(),
        Format::Collapsed => collapsed::render(report).into_bytes(),
        Format::Html => html::render(report).into_bytes(),
        Format::Svg => flame::svg(report),
        Format::Pprof => pprof::render(report),
        Format::Hgrm | Format::Hlog => return None,
    })
}
