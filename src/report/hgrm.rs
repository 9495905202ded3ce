//! HdrHistogram percentile distributions (`.hgrm`), the text format HdrHistogram's
//! `outputPercentileDistribution` prints and its plotters read: a header, one line per percentile step
//! (value, percentile, total count, 1/(1-percentile)), and `#[Mean/Max/Buckets]` footers. Values are
//! in microseconds (the recorded ns divided by 1000).
//!
//! Files: `native` (self time per native call, all methods), `jni` (Java time per upcall, all
//! functions), `jni.<Function>` per JNI function called, and `method.<rank>.<Class.name>` for the top
//! `top=` methods by self time that have a histogram.

use super::Report;
use hdrhistogram::Histogram;
use std::fmt::Write;

/// Percentile steps per halving of the distance to 100 % (HdrHistogram's usual 5).
const TICKS_PER_HALF_DISTANCE: u32 = 5;
/// ns per output unit (µs).
const VALUE_SCALE: f64 = 1000.0;
/// Decimals of the values: the histograms keep 2 significant digits, µs with 3 decimals keep ns.
const VALUE_DECIMALS: usize = 3;

/// The percentile distribution of `h` in `.hgrm` text.
pub(crate) fn distribution(h: &Histogram<u64>) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:>12} {:>14} {:>10} {:>14}\n",
        "Value", "Percentile", "TotalCount", "1/(1-Percentile)"
    );
    if !h.is_empty() {
        for v in h.iter_quantiles(TICKS_PER_HALF_DISTANCE) {
            let value = h.highest_equivalent(v.value_iterated_to()) as f64 / VALUE_SCALE;
            let quantile = v.quantile_iterated_to();
            let total = count_up_to(h, v.value_iterated_to());
            if quantile < 1.0 {
                let _ = writeln!(
                    s,
                    "{value:>12.VALUE_DECIMALS$} {quantile:>2.12} {total:>10} {:>14.2}",
                    1.0 / (1.0 - quantile)
                );
            } else {
                let _ = writeln!(
                    s,
                    "{value:>12.VALUE_DECIMALS$} {quantile:>2.12} {total:>10}"
                );
            }
        }
    }
    let _ = writeln!(
        s,
        "#[Mean    = {:>12.VALUE_DECIMALS$}, StdDeviation   = {:>12.VALUE_DECIMALS$}]",
        h.mean() / VALUE_SCALE,
        h.stdev() / VALUE_SCALE
    );
    let _ = writeln!(
        s,
        "#[Max     = {:>12.VALUE_DECIMALS$}, Total count    = {:>12}]",
        h.max() as f64 / VALUE_SCALE,
        h.len()
    );
    let _ = writeln!(
        s,
        "#[Buckets = {:>12}, SubBuckets     = {:>12}]",
        h.buckets(),
        h.distinct_values() / (h.buckets() as usize + 1) * 2
    );
    s
}

/// Recorded values at or below the bucket of `value`.
fn count_up_to(h: &Histogram<u64>, value: u64) -> u64 {
    h.count_between(0, value)
}

/// Every `.hgrm` file of the report: (name part, contents).
pub(crate) fn render_all(r: &Report) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let Some(hist) = &r.histograms else {
        return out;
    };
    out.push(("native".to_string(), distribution(&hist.native_overall)));
    out.push(("jni".to_string(), distribution(&hist.upcall_overall)));
    for (i, f) in r.jni_functions.iter().enumerate() {
        if let Some(h) = hist.upcall_by_function.get(&(i as u32)) {
            out.push((format!("jni.{}", f.name), distribution(h)));
        }
    }
    let ranked = r.native_methods.iter().take(r.top).enumerate();
    for (rank, m) in ranked {
        if let Some(h) = m.id.and_then(|id| hist.native_by_method.get(&id)) {
            let name = format!(
                "method.{:02}.{}.{}",
                rank + 1,
                m.class.replace('/', "."),
                m.name
            );
            out.push((name, distribution(h)));
        }
    }
    out
}
