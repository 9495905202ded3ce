//! Diagnostics: one line at a time to stderr, never to the program's stdout, never panicking.

use std::io::Write;

pub(crate) fn line(message: &str) {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "nativeacct: {message}");
}
