//! JSON output: the whole [`Report`], keys as documented in the README.

use super::Report;

pub(crate) fn render(report: &Report) -> Vec<u8> {
    let mut out = serde_json::to_vec_pretty(report)
        .unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}").into_bytes());
    out.push(b'\n');
    out
}
