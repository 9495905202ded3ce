//! The benchmarks are the binaries in `src/bin/`; this default target does nothing.

fn main() {}
