//! The HTML report's latency charts: per-call durations as histograms on a logarithmic time axis
//! (`svg.latency`), for native self time, Java time per JNI upcall and the top methods.

use super::html_parts::{esc, BYTECODE_COLOR, NATIVE_COLOR, WIDTH};
use super::text::short_duration;
use super::Report;
use hdrhistogram::Histogram;
use std::collections::BTreeMap;
use std::fmt::Write;

/// Latency charts for the top methods.
const LATENCY_METHODS: usize = 4;

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

pub(super) fn latency_section(h: &mut String, r: &Report) {
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
