//! Rewriter speed over all of java.base: the pre-scan on classes without natives (every loaded
//! class pays it under the agent) and a full rewrite of each class with natives.
//!
//! Usage: bench_rewrite JAVA_BASE_DIR [ROUNDS]   (scripts/bench-rewrite extracts the directory)

use nativeacct_classfile::corpus::class_files_under;
use nativeacct_classfile::{has_native_methods, rewrite, Outcome, RewriteConfig};
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Instant;

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let index = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[index]
}

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(dir) = args.next() else {
        eprintln!("usage: bench_rewrite JAVA_BASE_DIR [ROUNDS]");
        std::process::exit(2);
    };
    let rounds: usize = args.next().and_then(|r| r.parse().ok()).unwrap_or(20);
    let paths = class_files_under(Path::new(&dir));
    let classes: Vec<(PathBuf, Vec<u8>)> = paths
        .into_iter()
        .map(|p| {
            let bytes = std::fs::read(&p).expect("read class");
            (p, bytes)
        })
        .collect();
    if classes.is_empty() {
        eprintln!("bench_rewrite: no .class files under {dir}");
        std::process::exit(1);
    }
    let config = RewriteConfig::for_jdk(17);
    let (plain, native): (Vec<_>, Vec<_>) = classes
        .iter()
        .partition(|(_, b)| !has_native_methods(b).unwrap_or(false));
    let plain_bytes: usize = plain.iter().map(|(_, b)| b.len()).sum();
    println!(
        "java.base: {} classes ({} without natives, {:.1} KiB mean; {} with natives), {rounds} rounds",
        classes.len(),
        plain.len(),
        plain_bytes as f64 / plain.len().max(1) as f64 / 1024.0,
        native.len()
    );

    // Pre-scan over the classes without natives, whole set per round.
    let mut per_class_us = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let start = Instant::now();
        for (_, bytes) in &plain {
            black_box(has_native_methods(black_box(bytes)).ok());
        }
        per_class_us.push(start.elapsed().as_secs_f64() * 1e6 / plain.len() as f64);
    }
    per_class_us.sort_by(f64::total_cmp);
    // Without the pre-scan the agent would run the full rewrite on every class.
    let mut full_path_us = Vec::with_capacity(rounds);
    for _ in 0..rounds.min(5) {
        let start = Instant::now();
        for (_, bytes) in &plain {
            black_box(rewrite(black_box(bytes), &config, &mut |_| 0).ok());
        }
        full_path_us.push(start.elapsed().as_secs_f64() * 1e6 / plain.len() as f64);
    }
    full_path_us.sort_by(f64::total_cmp);
    println!(
        "prescan, class without natives:   median {:7.3} µs/class  (min {:.3})   target <= 2 µs",
        percentile(&per_class_us, 0.5),
        per_class_us[0]
    );
    println!(
        "  vs full rewrite() on the same:  median {:7.3} µs/class",
        percentile(&full_path_us, 0.5)
    );

    // Full rewrite of each class with natives: per class, the median over the rounds.
    let mut medians = Vec::with_capacity(native.len());
    let mut worst = (0.0f64, String::new());
    let mut added_bytes = 0usize;
    let mut wrapped_total = 0usize;
    for (path, bytes) in &native {
        let mut times = Vec::with_capacity(rounds);
        for _ in 0..rounds {
            let start = Instant::now();
            let outcome = rewrite(black_box(bytes), &config, &mut |_| 1000);
            times.push(start.elapsed().as_secs_f64() * 1e6);
            black_box(&outcome);
        }
        if let Ok(Outcome::Rewritten {
            bytes: out,
            wrapped,
            ..
        }) = rewrite(bytes, &config, &mut |_| 1000)
        {
            added_bytes += out.len() - bytes.len();
            wrapped_total += wrapped.len();
        }
        times.sort_by(f64::total_cmp);
        let median = percentile(&times, 0.5);
        if median > worst.0 {
            worst = (median, path.display().to_string());
        }
        medians.push(median);
    }
    medians.sort_by(f64::total_cmp);
    println!(
        "rewrite, class with natives:      median {:7.3} µs/class  (p90 {:.1}, max {:.1} in {})   target <= 100 µs",
        percentile(&medians, 0.5),
        percentile(&medians, 0.9),
        worst.0,
        worst.1
    );
    println!(
        "  {} natives wrapped, {:.0} bytes added per wrapped native",
        wrapped_total,
        added_bytes as f64 / wrapped_total.max(1) as f64
    );
}
