//! `nativeacct diff A.json B.json`: compare two saved JSON reports.

use std::path::PathBuf;
use std::process::ExitCode;

/// Compare two saved JSON reports: per-method and per-JNI-function changes, the split side by side
#[derive(clap::Args, Debug)]
#[command(after_help = "Output options:
  format=F[+F...]  text (default: on stdout), html (with a differential flame graph), csv
  file=PATH        one format: that file; several: PATH.<ext> (default for html/csv: AFTER-diff)

Examples:
  nativeacct diff before.json after.json                 prints the table of changes
  nativeacct diff before.json after.json format=html     writes after-diff.html")]
pub(crate) struct DiffArgs {
    /// The earlier run's JSON report
    before: PathBuf,
    /// The later run's JSON report
    after: PathBuf,
}

pub(crate) fn main(_args: DiffArgs) -> ExitCode {
    crate::fail("diff is not there yet")
}
