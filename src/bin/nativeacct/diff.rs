//! `nativeacct diff A.json B.json`: compare two saved JSON reports.

use std::path::PathBuf;
use std::process::ExitCode;

/// Compare two saved JSON reports
#[derive(clap::Args, Debug)]
pub(crate) struct DiffArgs {
    /// The earlier run's JSON report
    before: PathBuf,
    /// The later run's JSON report
    after: PathBuf,
}

pub(crate) fn main(_args: DiffArgs) -> ExitCode {
    crate::fail("diff is not there yet")
}
