//! Where the report goes: each format the options select, rendered by [`crate::report`] and written
//! through [`crate::outputs`] (atomic writes, in-place targets), and the start-up side of it:
//! checking every output can be written, switching on stack sampling, opening the interval log.

use crate::options::{Format, Options};
use crate::report::{hgrm, json, render_single, Report};

/// At VMDeath: the last interval from the final histograms, then the log is put in place as `target`.
fn finish_interval_log(
    report: &Report,
    target: &crate::outputs::Target,
) -> std::io::Result<std::path::PathBuf> {
    let Some(histograms) = &report.histograms else {
        return Err(std::io::Error::other("no histograms"));
    };
    let cpu = crate::process::CpuSnapshot {
        cpu_ns: report.process.cpu_ns,
        parts: report.process.parts,
    };
    let threads = (report.per_thread.clone(), report.other_threads.clone());
    crate::interval::finish(histograms, &cpu, threads, report.top, target)
}

/// Write every format `options` selects, each where [`crate::outputs`] puts it; returns the paths
/// written. Failures are reported on stderr and do not stop the other formats.
pub(crate) fn write_outputs(report: &Report, options: &Options) -> Vec<std::path::PathBuf> {
    let (written, failed) =
        write_counting_failures(report, options, "; the report follows on stderr as JSON");
    if failed > 0 {
        // A full disk or a vanished directory must not lose the run: the whole report, once.
        let mut body = json::render(report);
        body.push(b'\n');
        let _ = std::io::Write::write_all(&mut std::io::stderr().lock(), &body);
    }
    written
}

/// Write the files of [`write_outputs`]; returns them and how many could not be written (each said
/// on stderr, followed by `after_error`).
fn write_counting_failures(
    report: &Report,
    options: &Options,
    after_error: &str,
) -> (Vec<std::path::PathBuf>, usize) {
    use crate::outputs::OutputName;
    // (name, body); no body for the interval log, which `hlog::finish` completes.
    let mut files: Vec<(OutputName, Option<Vec<u8>>)> = Vec::new();
    for &format in &options.formats {
        let body = match format {
            Format::Hgrm => {
                for (what, body) in hgrm::render_all(report) {
                    files.push((OutputName::Hgrm(what), Some(body.into_bytes())));
                }
                continue;
            }
            Format::Hlog => {
                files.push((OutputName::Format(Format::Hlog), None));
                continue;
            }
            single => render_single(report, single).unwrap_or_default(),
        };
        files.push((OutputName::Format(format), Some(body)));
    }
    let names: Vec<OutputName> = files.iter().map(|(name, _)| name.clone()).collect();
    let targets = crate::outputs::targets_at_exit(options, &names);
    let mut written = Vec::new();
    let mut failed = 0;
    for ((_, body), target) in files.into_iter().zip(targets) {
        let result = match body {
            Some(body) => crate::outputs::write(&target, &body),
            None => finish_interval_log(report, &target),
        };
        match result {
            Ok(path) => written.push(path),
            Err(e) => {
                failed += 1;
                crate::diag::line(&format!(
                    "error: could not write {}: {e}{after_error}",
                    target.path.display()
                ))
            }
        }
    }
    (written, failed)
}

/// For `nativeacct report`: write the formats `options` selects from a saved report, named and
/// placed as the agent would (see [`crate::outputs`]). The interval log is not among them: it is
/// written while the program runs.
pub fn write_saved(report: &Report, options: &Options) -> Result<Vec<std::path::PathBuf>, String> {
    if options.formats.contains(&Format::Hlog) {
        return Err("format=hlog is written while the program runs (interval=); a saved report has only the whole run".to_string());
    }
    crate::outputs::settle(options)
        .map_err(|(path, e)| format!("cannot write {}: {e}", path.display()))?;
    match write_counting_failures(report, options, "") {
        (written, 0) => Ok(written),
        (_, failed) => Err(format!("{failed} file(s) could not be written")),
    }
}

/// The written paths for people: every path, except that `.hgrm` files are summed up as one pattern.
pub(crate) fn describe_paths(paths: &[std::path::PathBuf]) -> String {
    let is_hgrm = |p: &std::path::PathBuf| p.extension().is_some_and(|e| e == "hgrm");
    let mut parts: Vec<String> = paths
        .iter()
        .filter(|p| !is_hgrm(p))
        .map(|p| p.display().to_string())
        .collect();
    let hgrm: Vec<_> = paths.iter().filter(|p| is_hgrm(p)).collect();
    if let Some(first) = hgrm.first() {
        // `<base>.native.hgrm` is always first: the pattern is `<base>.*.hgrm`.
        let shown = first.display().to_string();
        let pattern = shown
            .strip_suffix("native.hgrm")
            .map(|b| format!("{b}*.hgrm"))
            .unwrap_or(shown);
        parts.push(format!("{} .hgrm files ({pattern})", hgrm.len()));
    }
    parts.join(", ")
}

/// At start-up: decide where every output goes and check that it can be written there (see
/// [`crate::outputs::settle`]), switch on stack sampling and open the interval log as the options ask.
/// Returns the path that cannot be written, and why.
pub(crate) fn prepare_outputs(
    options: &Options,
) -> Result<(), (std::path::PathBuf, std::io::Error)> {
    crate::outputs::settle(options)?;
    crate::stacks::configure(options.stacks, options.depth);
    if options.formats.contains(&Format::Hlog) && options.interval.is_some() {
        let target = crate::outputs::target(options, Format::Hlog);
        crate::interval::start(&target, options.interval, options.top)
            .map_err(|e| (target.path.clone(), e))?;
    }
    Ok(())
}
