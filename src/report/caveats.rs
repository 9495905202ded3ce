//! What qualifies a report's numbers: a partial report, a window after a reset, a late attach. The
//! facts are decided once here; the text and HTML summaries each word them their own way.

use super::Coverage;
use super::Report;

pub(super) enum Caveat<'a> {
    /// Written while the program ran: a `dump` or a `snapshot`, taken `at_s` seconds after start.
    Partial { what: &'static str, at_s: f64 },
    /// Every count covers only the `length_s` seconds since a reset at `start_s`.
    Window { length_s: f64, start_s: f64 },
    /// Loaded into a running JVM: which natives bound before are counted.
    Attached(&'a Coverage),
}

/// The caveats that apply to `r`, in the order the summaries state them.
pub(super) fn caveats(r: &Report) -> Vec<Caveat<'_>> {
    let seconds = |ns: u64| ns as f64 / 1e9;
    let mut out = Vec::new();
    if let Some(at) = r.snapshot_at_ns.filter(|_| r.partial) {
        let what = if r.written_at == "dump" {
            "dump"
        } else {
            "snapshot"
        };
        out.push(Caveat::Partial {
            what,
            at_s: seconds(at),
        });
    }
    if let Some(start) = r.window_start_ns {
        out.push(Caveat::Window {
            length_s: seconds(r.run.wall_ns),
            start_s: seconds(start),
        });
    }
    if let Some(a) = &r.attach {
        out.push(Caveat::Attached(a));
    }
    out
}
