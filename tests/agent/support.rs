//! Helpers of the end-to-end agent tests (`tests/agent_*.rs`) over the workspace's test support
//! (JDK, agent, compilers): the workload fixture, `java` runs with the agent, and its JSON report.
#![allow(dead_code, unused_imports)] // each test binary uses a part

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

pub use test_support::{agent_path, described, java_home, repo_root, text, CpuHogs};

/// A scratch directory under target/ for one test.
pub fn scratch(name: &str) -> PathBuf {
    test_support::scratch_dir("agent-tests", name)
}

/// Compile `tests/agent/Workload.java` and `workload.c` once per test binary; returns the class dir.
pub fn workload() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    agent_fixture(&BUILT, "Workload")
}

/// The fixture directory `name` of this test binary, filled by `build` the first time.
pub fn fixture(
    built: &'static OnceLock<PathBuf>,
    name: &str,
    build: impl FnOnce(&Path),
) -> &'static Path {
    built.get_or_init(|| {
        let dir = test_support::fixture_dir("agent-tests", name);
        build(&dir);
        dir
    })
}

/// `tests/agent/<Class>.java` and its JNI library `lib<class>.so` from `tests/agent/<class>.c`
/// (the name in lower case), compiled once per test binary; returns the class dir.
pub fn agent_fixture(built: &'static OnceLock<PathBuf>, class: &str) -> &'static Path {
    let lower = class.to_lowercase();
    fixture(built, &lower, |dir| {
        let src = repo_root().join("tests/agent");
        compile_jni_library(
            &src.join(format!("{lower}.c")),
            &dir.join(format!("lib{lower}.so")),
        );
        javac(&[src.join(format!("{class}.java"))], dir);
    })
}

pub fn compile_jni_library(source: &Path, out: &Path) {
    compile_jni_sources(&[source.to_path_buf()], out, &["-O2"]);
}

/// gcc `flags` + `sources` into the shared library `out`, against the JDK's JNI headers.
pub fn compile_jni_sources(sources: &[PathBuf], out: &Path, flags: &[&str]) {
    test_support::gcc_jni(sources, out, flags);
}

pub fn javac(sources: &[PathBuf], out_dir: &Path) {
    test_support::javac(&[], sources, out_dir);
}

/// Writes `source` to `dir/<class>.java` and compiles it into `dir`.
pub fn javac_source(dir: &Path, class: &str, source: &str) {
    let path = dir.join(format!("{class}.java"));
    std::fs::write(&path, source).unwrap();
    javac(&[path], dir);
}

/// javac with extra arguments (`--release 11`, `-cp ...`).
pub fn javac_with(args: &[&str], sources: &[PathBuf], out_dir: &Path) {
    test_support::javac(args, sources, out_dir);
}

/// `java [agent] [jvm_args] main args` with the classpath and library path set to `class_dir`.
pub fn run_java(
    agent_options: Option<&str>,
    jvm_args: &[&str],
    class_dir: &Path,
    main: &[&str],
) -> Output {
    run_java_under(None, agent_options, jvm_args, class_dir, main)
}

/// [`run_java`], started through `deny-perf <errno>` when `perf_denied` names one: the JVM then runs
/// with perf_event_open failing with that errno, as in a container (see `test_support::deny_perf`).
pub fn run_java_under(
    perf_denied: Option<&str>,
    agent_options: Option<&str>,
    jvm_args: &[&str],
    class_dir: &Path,
    main: &[&str],
) -> Output {
    let java = java_home().join("bin/java");
    let mut cmd = match perf_denied {
        Some(errno) => {
            let mut cmd = Command::new(test_support::deny_perf());
            cmd.arg(errno).arg(&java);
            cmd
        }
        None => Command::new(&java),
    };
    if let Some(opts) = agent_options {
        cmd.arg(test_support::agent_arg(opts));
    }
    cmd.args(jvm_args)
        .arg("-cp")
        .arg(class_dir)
        .arg(format!("-Djava.library.path={}", class_dir.display()))
        .args(main);
    cmd.output().expect("run java")
}

/// Run with the agent writing JSON to `dir/report.json`; panics with the program's output on failure.
pub fn run_with_report(
    extra_options: &str,
    jvm_args: &[&str],
    class_dir: &Path,
    main: &[&str],
    dir: &Path,
) -> (Output, Value) {
    run_with_report_under(None, extra_options, jvm_args, class_dir, main, dir)
}

/// [`run_with_report`], with perf_event_open denied (`perf_denied`: the errno) as [`run_java_under`].
pub fn run_with_report_under(
    perf_denied: Option<&str>,
    extra_options: &str,
    jvm_args: &[&str],
    class_dir: &Path,
    main: &[&str],
    dir: &Path,
) -> (Output, Value) {
    let report = dir.join("report.json");
    let _ = std::fs::remove_file(&report);
    let options =
        test_support::join_options(&[&format!("quiet,file={}", report.display()), extra_options]);
    let out = run_java_under(perf_denied, Some(&options), jvm_args, class_dir, main);
    assert!(out.status.success(), "java failed: {}", described(&out));
    let json = std::fs::read_to_string(&report).expect("agent wrote no report");
    (
        out,
        serde_json::from_str(&json).expect("report is valid JSON"),
    )
}

/// Calls of native method `class.name` in the report (0 if absent).
pub fn native_calls(report: &Value, class: &str, name: &str) -> u64 {
    report["native_methods"]
        .as_array()
        .expect("native_methods")
        .iter()
        .filter(|m| m["class"] == class && m["name"] == name)
        .map(|m| m["calls"].as_u64().unwrap())
        .sum()
}

/// Per-function JNI call counts of the 93 upcall functions (0 for unused ones).
pub fn jni_counts(report: &Value) -> Vec<(String, u64)> {
    report["jni_functions"]
        .as_array()
        .expect("jni_functions")
        .iter()
        .filter(|f| f["kind"] == "upcall")
        .map(|f| {
            (
                f["name"].as_str().unwrap().to_string(),
                f["calls"].as_u64().unwrap(),
            )
        })
        .collect()
}

pub fn thread<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["per_thread"]
        .as_array()
        .expect("per_thread")
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("thread {name} missing from per_thread"))
}

/// Ground truth of one worker, written by the workload (tests/agent/workload.c).
pub struct WorkerTruth {
    pub name: String,
    /// The thread's CPU ns from its first statement to its last.
    pub cpu_ns: u64,
    /// CPU ns inside its natives, measured there.
    pub native_ns: u64,
    /// The thread's CPU ns over its whole life, read by a key destructor as it ended.
    pub life_cpu_ns: u64,
}

pub fn read_truth(path: &Path) -> Vec<WorkerTruth> {
    std::fs::read_to_string(path)
        .expect("the workload wrote no ground truth")
        .lines()
        .map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let ns = |i: usize| fields[i].parse().unwrap();
            WorkerTruth {
                name: fields[0].to_string(),
                cpu_ns: ns(1),
                native_ns: ns(2),
                life_cpu_ns: ns(3),
            }
        })
        .collect()
}

/// Each worker's native time within `per_thread` points (of its CPU time) of its ground truth, and
/// of all workers together within `total` points. The agent's figures for a thread span JVMTI
/// ThreadStart to ThreadEnd, which holds the workload's window and lies within the thread's life:
/// so its total must lie between the two (within `per_thread` points), and the native share is
/// compared in native time, not in shares of two different spans (under qemu, a thread's start
/// and end outside the window can take milliseconds). Returns the workers' true native share, in %.
pub fn assert_workers_split_within(
    report: &Value,
    truth: &[WorkerTruth],
    label: &str,
    per_thread: f64,
    total: f64,
) -> f64 {
    let pct = |part: u64, of: u64| 100.0 * part as f64 / of as f64;
    let (mut agent_native, mut agent_total, mut true_native, mut true_total) =
        (0u64, 0u64, 0u64, 0u64);
    for w in truth {
        let t = thread(report, &w.name);
        let a_native = t["native_ns"].as_u64().unwrap();
        let a_total = a_native + t["bytecode_ns"].as_u64().unwrap();
        let ms = |ns: u64| ns as f64 / 1e6;
        let figures = format!(
            "{:.2} % native (agent: {:.3} of {:.3} ms) vs {:.2} % (ground truth: {:.3} of {:.3} ms, thread's life {:.3} ms)",
            pct(a_native, a_total),
            ms(a_native),
            ms(a_total),
            pct(w.native_ns, w.cpu_ns),
            ms(w.native_ns),
            ms(w.cpu_ns),
            ms(w.life_cpu_ns)
        );
        eprintln!("{label}: {}: {figures}", w.name);
        let native_error = pct(a_native.abs_diff(w.native_ns), a_total);
        assert!(
            native_error <= per_thread,
            "{label}: {}: native time off by {native_error:.2} points: {figures} (allowed {per_thread:.1})",
            w.name
        );
        let slack = (a_total as f64 * per_thread / 100.0) as u64;
        assert!(
            a_total + slack >= w.cpu_ns && a_total <= w.life_cpu_ns + slack,
            "{label}: {}: the agent's total is not between the window and the thread's life: {figures}",
            w.name
        );
        agent_native += a_native;
        agent_total += a_total;
        true_native += w.native_ns;
        true_total += w.cpu_ns;
    }
    eprintln!(
        "{label}: workers native {:.2} % (agent) vs {:.2} % (ground truth)",
        pct(agent_native, agent_total),
        pct(true_native, true_total)
    );
    let native_error = pct(agent_native.abs_diff(true_native), agent_total);
    assert!(
        native_error <= total,
        "{label}: all workers' native time off by {native_error:.2} points (allowed {total:.1})"
    );
    pct(true_native, true_total)
}

/// `perf record -q -e cpu-clock <record_args> -o <data> -- java <java_args>` with the JDK of
/// [`java_home`], which writes HotSpot's perf map at exit so that perf names the code cache; then
/// `perf script -F <fields>` of it. Returns the program's output and the script's text.
pub fn perf_record_java(
    record_args: &[&str],
    data: &Path,
    java_args: &[&std::ffi::OsStr],
    fields: &str,
) -> (Output, String) {
    let out = Command::new("perf")
        .args(["record", "-q", "-e", "cpu-clock"])
        .args(record_args)
        .arg("-o")
        .arg(data)
        .arg("--")
        .arg(java_home().join("bin/java"))
        .args(["-XX:+UnlockDiagnosticVMOptions", "-XX:+DumpPerfMapAtExit"])
        .args(java_args)
        .output()
        .expect("run perf: apt-get install linux-perf (scripts/install-test-deps)");
    assert!(out.status.success(), "perf record: {}", described(&out));
    let script = Command::new("perf")
        .args(["script", "--ns", "-F", fields, "-i"])
        .arg(data)
        .output()
        .expect("perf script");
    assert!(
        script.status.success(),
        "perf script: {}",
        described(&script)
    );
    (out, text(&script.stdout))
}

/// One frame of `perf script`, "<ip> <symbol> (<dso>)": the symbol and the dso. Symbols hold spaces
/// and parentheses; the dso is the last group.
pub fn perf_frame(line: &str) -> Option<(&str, &str)> {
    let (_ip, rest) = line.trim().split_once(' ')?;
    rest.trim_end().strip_suffix(')')?.rsplit_once(" (")
}

/// Where a sample's innermost frame lies, as the agent's sampler tells the code apart.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum PerfPlace {
    /// A Java method (compiled, or a native's compiled wrapper) or the interpreter.
    JavaCode,
    /// The rest of the code cache: the VM's stubs, adapters and blobs.
    VmStub,
    Libjvm,
    Elsewhere,
}

pub fn perf_place(symbol: &str, dso: &str) -> PerfPlace {
    if dso.ends_with(".map") || dso.starts_with("[JIT]") {
        let java_method = symbol
            .split_once('(')
            .is_some_and(|(name, _)| name.contains(' ') && name.contains('.'));
        if java_method || symbol == "Interpreter" {
            PerfPlace::JavaCode
        } else {
            PerfPlace::VmStub
        }
    } else if dso.ends_with("/libjvm.so") {
        PerfPlace::Libjvm
    } else {
        PerfPlace::Elsewhere
    }
}
