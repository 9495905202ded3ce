//! Cost of the process CPU accounting's background scan (`scan=`, issue 14), two ways:
//! 1. In process: CPU time of one scan of /proc/self/task and every thread's CPU clock, with 10, 100
//!    and 1000 idle threads, scanned back to back (hot caches: a lower bound).
//! 2. On a real 2-core run: `bench/process_scan/Busy.java` (a fixed amount of work on 2 threads)
//!    under the agent with `scan=100ms` (the default) and with `scan=off`, alternating, ROUNDS times.
//!    Per configuration: the median of the JVM's CPU time (user + system, from the kernel's
//!    accounting of the waited-for child), and the scan thread's own CPU time as the report's
//!    `process.threads` row `nativeacct-proc` gives it: that is exactly what the scan costs, cold
//!    caches and wake-ups included. The A/B difference of whole-run CPU is shown too, with its
//!    run-to-run spread, which on a shared machine is far larger than the scan's cost.
//!
//! Usage: bench_process_scan [--rounds N] [--iterations N] [--agent PATH] [--java-home PATH]
//! (scripts/bench-process-scan builds the agent first).

use nativeacct_bench::median;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// User + system CPU time of all waited-for children so far, in ns.
fn children_cpu_ns() -> u64 {
    // SAFETY: an all-zero rusage is a valid value; getrusage writes only into it.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `usage` is a valid out-pointer.
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) };
    let tv = |t: libc::timeval| t.tv_sec as u64 * 1_000_000_000 + t.tv_usec as u64 * 1000;
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

fn in_process_scan_cost() {
    println!("scan of this process, back to back (hot caches):");
    let mut stop = Vec::new();
    let mut total = 1; // this thread
    for target in [10usize, 100, 1000] {
        while total < target {
            let (tx, rx) = std::sync::mpsc::channel::<()>();
            std::thread::spawn(move || {
                let _ = rx.recv();
            });
            stop.push(tx);
            total += 1;
        }
        std::thread::sleep(Duration::from_millis(50));
        nativeacct::testing::bench_scan_ns(3); // name every thread once
        let scans = (20_000 / target).max(20) as u32;
        let ns = median(
            (0..5)
                .map(|_| nativeacct::testing::bench_scan_ns(scans))
                .collect(),
        );
        // The scan waits max(100 ms, 1000 x its own cost) between looks (process::SCAN_COST_RATIO).
        let period_ns = (ns * 1000.0).max(1e8);
        println!(
            "  {target:>5} threads: {:>8.1} us per scan; one scan per {:.0} ms = {:.3} % of one core",
            ns / 1e3,
            period_ns / 1e6,
            ns / period_ns * 100.0
        );
    }
    drop(stop);
}

struct RunResult {
    process_ns: f64,
    report_cpu_ns: f64,
    scan_ns: f64,
    scans: f64,
}

fn run_once(
    java: &Path,
    agent: &Path,
    classes: &Path,
    options: &str,
    iterations: u64,
) -> RunResult {
    let report = classes.join("report.json");
    let _ = std::fs::remove_file(&report);
    let before = children_cpu_ns();
    let status = Command::new(java)
        .arg(format!(
            "-agentpath:{}=quiet,file={},{options}",
            agent.display(),
            report.display()
        ))
        .arg("-cp")
        .arg(classes)
        .arg("Busy")
        .arg(iterations.to_string())
        .status()
        .expect("run java");
    assert!(status.success(), "java failed: {status}");
    let process_ns = (children_cpu_ns() - before) as f64;
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).expect("report")).expect("JSON");
    let p = &json["process"];
    let scan_ns = p["threads"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["name"] == "nativeacct-proc")
        .map(|t| t["cpu_ns"].as_f64().unwrap())
        .fold(0.0, |a, b| a + b);
    RunResult {
        process_ns,
        report_cpu_ns: p["cpu_ns"].as_f64().unwrap(),
        scan_ns,
        scans: p["scans"].as_f64().unwrap(),
    }
}

fn main() {
    let mut rounds = 5;
    let mut iterations: u64 = 1_500_000_000;
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut agent = root.join("target/release/libnativeacct.so");
    let mut java_home = PathBuf::from(
        std::env::var("JAVA_HOME").unwrap_or_else(|_| "/usr/lib/jvm/java-17-openjdk-amd64".into()),
    );
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().expect("option value");
        match arg.as_str() {
            "--rounds" => rounds = value().parse().expect("--rounds N"),
            "--iterations" => iterations = value().parse().expect("--iterations N"),
            "--agent" => agent = PathBuf::from(value()),
            "--java-home" => java_home = PathBuf::from(value()),
            other => panic!("unknown option {other}; see the doc comment of bench_process_scan.rs"),
        }
    }
    in_process_scan_cost();

    let classes = root.join("target/bench-process-scan");
    std::fs::create_dir_all(&classes).unwrap();
    let status = Command::new(java_home.join("bin/javac"))
        .arg("-d")
        .arg(&classes)
        .arg(root.join("bench/process_scan/Busy.java"))
        .status()
        .expect("run javac");
    assert!(status.success());
    let java = java_home.join("bin/java");
    let configs = [("scan=100ms", "scan=100ms"), ("scan=off", "scan=off")];
    let mut results: Vec<Vec<RunResult>> = vec![Vec::new(), Vec::new()];
    println!("\n2 threads of fixed work, {rounds} rounds, configurations alternating:");
    for round in 0..rounds {
        for (i, (_, options)) in configs.iter().enumerate() {
            let r = run_once(&java, &agent, &classes, options, iterations);
            eprintln!(
                "  round {round} {options}: process {:.3} s, scan thread {:.3} ms in {} scans",
                r.process_ns / 1e9,
                r.scan_ns / 1e6,
                r.scans
            );
            results[i].push(r);
        }
    }
    println!(
        "  {:<11} {:>16} {:>16} {:>18} {:>8} {:>16}",
        "config", "process CPU (s)", "min..max (s)", "scan thread (ms)", "scans", "scan / process"
    );
    let mut medians = Vec::new();
    for ((name, _), runs) in configs.iter().zip(&results) {
        let cpu: Vec<f64> = runs.iter().map(|r| r.process_ns).collect();
        let lo = cpu.iter().copied().fold(f64::MAX, f64::min);
        let hi = cpu.iter().copied().fold(0.0, f64::max);
        let scan = median(runs.iter().map(|r| r.scan_ns).collect());
        let share = median(
            runs.iter()
                .map(|r| r.scan_ns / r.report_cpu_ns * 100.0)
                .collect(),
        );
        let process = median(cpu);
        medians.push(process);
        println!(
            "  {name:<11} {:>16.3} {:>16} {:>18.3} {:>8.0} {:>15.3}%",
            process / 1e9,
            format!("{:.3}..{:.3}", lo / 1e9, hi / 1e9),
            scan / 1e6,
            median(runs.iter().map(|r| r.scans).collect()),
            share
        );
    }
    println!(
        "  difference  {:>+16.3} s ({:+.2} %) whole-run CPU, with/without (run-to-run noise included)",
        (medians[0] - medians[1]) / 1e9,
        (medians[0] - medians[1]) / medians[1] * 100.0
    );
}
