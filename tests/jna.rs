//! JNA, the most used native binding on the JVM, under both J2N modes (tests/bind/JnaCheck.java:
//! interface mapping of strlen/getpid, qsort calling back a Java comparator, and direct mapping of
//! abs/labs through `Native.register`).
//!
//! - `j2n=wrap` runs it to the same stdout as without the agent: `SecurityManager.getClassContext`
//!   (JNA's caller lookup) stays unwrapped as a native that inspects its caller's frames, the
//!   directly mapped class keeps its natives, and one line on stderr says what wrap mode cannot do
//!   with JNA.
//! - `j2n=bind` (the default) counts the directly mapped calls exactly, as the program counts them,
//!   and at least one JNI upcall per comparator call.
//!
//! Needs Debian's libjna-java and libjna-jni (scripts/install-test-deps).

#[path = "agent/support.rs"]
mod support;

#[path = "compat/support.rs"]
mod compat;

use serde_json::Value;
use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::OnceLock;
use support::{java_home, native_calls, repo_root, text, PerfPlace};

const JNA_JAR: &str = "/usr/share/java/jna.jar";
/// Direct-mapped calls of each of abs and labs: enough for the JIT to compile the loop.
const DIRECT_CALLS: &str = "20000";
const JNA_NOTE: &str = "nativeacct: JNA under j2n=wrap:";

/// JnaCheck compiled once per test binary, for Java 11 so that every JDK runs it.
fn fixture() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        assert!(
            Path::new(JNA_JAR).is_file(),
            "{JNA_JAR} is missing: apt-get install libjna-java libjna-jni (scripts/install-test-deps)"
        );
        let dir = test_support::fixture_dir("agent-tests", "jna");
        let source = repo_root().join("tests/bind/JnaCheck.java");
        test_support::javac(&["--release", "11", "-cp", JNA_JAR], &[source], &dir);
        dir
    })
}

/// `java [-agentpath...] -cp fixture:jna.jar JnaCheck DIRECT_CALLS` on the JDK at `home`.
fn run(home: &Path, agent_options: Option<&str>) -> Output {
    let classpath = format!("{}:{JNA_JAR}", fixture().display());
    let args = ["-cp", &classpath, "JnaCheck", DIRECT_CALLS].map(OsStr::new);
    test_support::java_ok(home, agent_options, &args)
}

/// Runs with the agent writing its JSON report into `dir`.
fn run_with_report(home: &Path, options: &str, dir: &Path) -> (Output, Value) {
    std::fs::create_dir_all(dir).unwrap();
    let report = dir.join("report.json");
    let _ = std::fs::remove_file(&report);
    let all = test_support::join_options(&[&format!("quiet,file={}", report.display()), options]);
    let out = run(home, Some(&all));
    let json = std::fs::read_to_string(&report).expect("agent wrote no report");
    (out, serde_json::from_str(&json).expect("report is JSON"))
}

/// On every JDK of [`jdks`]: JnaCheck without the agent, then with it (`options`, its report in
/// `target/agent-tests/jna-<j2n>[-<options>]-<feature>`). Asserts that the program's stdout and its own stderr
/// are the same in both and that the report names the `j2n` mode, then runs `check` with the
/// feature, a label for messages, the program's stdout, the run with the agent and its report.
fn on_every_jdk(options: &str, j2n: &str, check: impl Fn(u32, &str, &str, &Output, &Value)) {
    for (feature, home) in jdks() {
        let mode = if options.is_empty() {
            "default mode"
        } else {
            options
        };
        let what = format!("JDK {feature}, {mode}");
        let plain = run(&home, None);
        let stdout = text(&plain.stdout);
        let slug: String = options
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        let dir = repo_root().join(if slug.is_empty() {
            format!("target/agent-tests/jna-{j2n}-{feature}")
        } else {
            format!("target/agent-tests/jna-{j2n}-{slug}-{feature}")
        });
        let (out, report) = run_with_report(&home, options, &dir);
        assert_eq!(
            stdout,
            text(&out.stdout),
            "{what}: the program saw the agent"
        );
        assert_eq!(program_stderr(&plain), program_stderr(&out), "{what}");
        assert_eq!(report["j2n"], j2n, "{what}");
        check(feature, &what, &stdout, &out, &report);
    }
}

/// JDK 17 (the machine's) and every other JDK of the matrix that is installed; 25 is required
/// with NATIVEACCT_REQUIRE_JDKS=1.
fn jdks() -> Vec<(u32, PathBuf)> {
    let mut homes = vec![(17, java_home())];
    for feature in [11, 21, 25] {
        if let Some(home) = compat::jdk_or_skip(feature, "JNA") {
            homes.push((feature, home));
        }
    }
    homes
}

/// The number after `prefix` on the program's stdout line that starts with it.
fn program_number(stdout: &str, prefix: &str) -> u64 {
    stdout
        .lines()
        .find_map(|l| l.strip_prefix(prefix))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no '{prefix}N' line in:\n{stdout}"))
}

/// stderr without the agent's own lines (the JDK's warnings stay and must not change).
fn program_stderr(out: &Output) -> String {
    text(&out.stderr)
        .lines()
        .filter(|l| !l.starts_with("nativeacct: "))
        .map(|l| format!("{l}\n"))
        .collect()
}

fn skipped_for(report: &Value, reason: &str) -> u64 {
    report["natives_skipped_by_reason"][reason]
        .as_u64()
        .unwrap_or(0)
}

/// JNA's interface mapping goes through its own natives, which both modes count exactly: strlen
/// (a NativeLong) 100 times through invokeLong, getpid once through invokeInt, qsort once through
/// invokeVoid.
fn assert_interface_mapping_counted(report: &Value, what: &str) {
    for (name, calls) in [("invokeLong", 100), ("invokeInt", 1), ("invokeVoid", 1)] {
        assert_eq!(
            native_calls(report, "com/sun/jna/Native", name),
            calls,
            "{what}: com/sun/jna/Native.{name}"
        );
    }
}

#[test]
fn wrap_mode_runs_jna_unchanged() {
    on_every_jdk("j2n=wrap", "wrap", |feature, what, stdout, out, report| {
        assert!(
            stdout.contains("getpid matches true, sorted true"),
            "{what}: {stdout}"
        );
        let notes = text(&out.stderr)
            .lines()
            .filter(|l| l.starts_with(JNA_NOTE))
            .count();
        assert_eq!(
            notes,
            1,
            "{what}: one line about JNA:\n{}",
            text(&out.stderr)
        );
        // JnaCheck$Direct calls Native.register itself: its two natives stay as they are.
        assert_eq!(
            skipped_for(report, nativeacct_classfile::reason::JNA_DIRECT_MAPPING),
            2,
            "{what}: {}",
            report["natives_skipped_by_reason"]
        );
        assert_eq!(native_calls(report, "JnaCheck$Direct", "abs"), 0, "{what}");
        if feature <= 21 {
            // SecurityManager.getClassContext is native up to 21; JNA calls it at every load.
            assert!(
                skipped_for(report, nativeacct_classfile::reason::CALLER_FRAMES) >= 1,
                "{what}: {}",
                report["natives_skipped_by_reason"]
            );
        }
        assert_interface_mapping_counted(report, what);
    });
}

#[test]
fn bind_mode_counts_jna_exactly() {
    on_every_jdk("", "bind", bind_counts_are_exact);
}

/// `timing=sampled` counts through its own bind routine and JNI hooks, as exactly.
#[test]
fn sampled_timing_counts_jna_exactly() {
    on_every_jdk(
        "timing=sampled",
        "bind",
        |feature, what, stdout, out, report| {
            assert_eq!(report["timing"], "sampled", "{what}");
            bind_counts_are_exact(feature, what, stdout, out, report);
        },
    );
}

fn bind_counts_are_exact(_: u32, what: &str, stdout: &str, out: &Output, report: &Value) {
    assert!(
        !text(&out.stderr).contains(JNA_NOTE),
        "{what}: the wrap-mode note"
    );
    let direct = program_number(stdout, "direct calls ");
    assert_eq!(direct, DIRECT_CALLS.parse::<u64>().unwrap());
    for name in ["abs", "labs"] {
        assert_eq!(
            native_calls(report, "JnaCheck$Direct", name),
            direct,
            "{what}: JnaCheck$Direct.{name}"
        );
    }
    // Each comparison is one callback from qsort into Java: JNA's dispatcher makes it with
    // CallObjectMethod.
    let comparisons = program_number(stdout, "comparisons ");
    assert!(comparisons > 200, "{what}: {comparisons}");
    let upcalls = report["jni_calls_by_function"]["CallObjectMethod"]
        .as_u64()
        .unwrap_or(0);
    assert!(
        upcalls >= comparisons,
        "{what}: {upcalls} CallObjectMethod upcalls for {comparisons} comparisons"
    );
    assert_interface_mapping_counted(report, what);
}

/// Where a thread's CPU time goes by a sampling profiler's categories, in % of the samples.
#[derive(Debug)]
struct Shares {
    java_code: f64,
    jvm: f64,
    native_code: f64,
}

/// Runs of each side, pooled by their samples: separate JVMs of one program place their samples a
/// point or two apart (JVM 61.6 to 63.5 % in three perf runs), and two of each halve the variance.
const RUNS_EACH: usize = 2;

/// The shares of `runs` taken together, each weighted by its samples.
fn pooled(runs: &[(Shares, u64)]) -> (Shares, u64) {
    let n: u64 = runs.iter().map(|(_, k)| k).sum();
    let mean = |share: fn(&Shares) -> f64| {
        runs.iter().map(|(s, k)| share(s) * *k as f64).sum::<f64>() / n.max(1) as f64
    };
    let shares = Shares {
        java_code: mean(|s| s.java_code),
        jvm: mean(|s| s.jvm),
        native_code: mean(|s| s.native_code),
    };
    (shares, n)
}

/// Rounds of bench/jna/JnaBench: about 2 s of the main thread's CPU, 3 to 5 M crossings a second.
const BENCH_ROUNDS: &str = "1500";
/// The heap is touched at start-up, so that no page fault lands in the measured part of either run
/// (the kernel's time has no user-space frame for perf, while the agent places it by the
/// interrupted user PC).
const PRETOUCHED_HEAP: [&str; 3] = ["-Xms512m", "-Xmx512m", "-XX:+AlwaysPreTouch"];

/// JnaBench compiled once per test binary.
fn bench_fixture() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let dir = test_support::fixture_dir("agent-tests", "jna-bench");
        let source = repo_root().join("bench/jna/JnaBench.java");
        test_support::javac(&["-cp", JNA_JAR], &[source], &dir);
        dir
    })
}

/// `perf record -e cpu-clock` of JnaBench on the JDK of `java_home` without the agent: the main thread's samples after
/// `main` began (perf's clock is CLOCK_MONOTONIC, as `System.nanoTime()`), by the frame they hit.
fn perf_shares(dir: &Path) -> (Shares, u64) {
    let classpath = format!("{}:{JNA_JAR}", bench_fixture().display());
    let mut args: Vec<&OsStr> = PRETOUCHED_HEAP.iter().map(OsStr::new).collect();
    args.extend(["-cp", &classpath, "JnaBench", BENCH_ROUNDS].map(OsStr::new));
    let (out, script) = support::perf_record_java(
        &["-k", "CLOCK_MONOTONIC"],
        &dir.join("perf.data"),
        &args,
        "pid,tid,time,ip,sym,dso",
    );
    let main_ns = program_number(&text(&out.stdout), "main_ns ");
    // (pid, tid) -> [java code, jvm, native code] samples.
    let mut threads: BTreeMap<(u32, u32), [u64; 3]> = BTreeMap::new();
    for line in script.lines() {
        let Some((ids, rest)) = line.trim_start().split_once(char::is_whitespace) else {
            continue;
        };
        let Some((pid, tid)) = ids.split_once('/') else {
            continue;
        };
        let rest = rest.trim_start();
        let Some((time, rest)) = rest.split_once(": ") else {
            continue;
        };
        let Some((secs, nanos)) = time.split_once('.') else {
            continue;
        };
        let at: u64 = secs.parse::<u64>().unwrap() * 1_000_000_000 + nanos.parse::<u64>().unwrap();
        if at < main_ns {
            continue;
        }
        let Some((symbol, dso)) = support::perf_frame(rest) else {
            continue;
        };
        let part = match support::perf_place(symbol, dso) {
            PerfPlace::JavaCode => 0,
            PerfPlace::VmStub | PerfPlace::Libjvm => 1,
            PerfPlace::Elsewhere => 2,
        };
        threads
            .entry((pid.parse().unwrap(), tid.parse().unwrap()))
            .or_default()[part] += 1;
    }
    let (&(pid, _), counts) = threads
        .iter()
        .max_by_key(|(_, c)| c.iter().sum::<u64>())
        .expect("perf recorded no sample after main began");
    let _ = std::fs::remove_file(format!("/tmp/perf-{pid}.map"));
    let n = counts.iter().sum::<u64>();
    let pct = |k: u64| 100.0 * k as f64 / n as f64;
    let shares = Shares {
        java_code: pct(counts[0]),
        jvm: pct(counts[1]),
        native_code: pct(counts[2]),
    };
    (shares, n)
}

/// The agent's boundary parts of JnaBench's main thread, less the agent's own part.
fn agent_shares(home: &Path, dir: &Path) -> (Shares, u64) {
    let report = dir.join("report.json");
    let classpath = format!("{}:{JNA_JAR}", bench_fixture().display());
    let options = format!("quiet,boundary_period=1ms,file={}", report.display());
    let mut args: Vec<&OsStr> = PRETOUCHED_HEAP.iter().map(OsStr::new).collect();
    args.extend(["-cp", &classpath, "JnaBench", BENCH_ROUNDS].map(OsStr::new));
    test_support::java_ok(home, Some(&options), &args);
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(&report).expect("agent wrote no report"))
            .expect("report is JSON");
    let parts = &support::thread(&report, "main")["boundary"];
    let ns = |key: &str| {
        parts[key]
            .as_u64()
            .unwrap_or_else(|| panic!("{key}: {parts}")) as f64
    };
    let program =
        ns("java_code_ns") + ns("jvm_in_java_ns") + ns("native_code_ns") + ns("jvm_in_native_ns");
    let shares = Shares {
        java_code: 100.0 * ns("java_code_ns") / program,
        jvm: 100.0 * (ns("jvm_in_java_ns") + ns("jvm_in_native_ns")) / program,
        native_code: 100.0 * ns("native_code_ns") / program,
    };
    (shares, parts["samples"].as_u64().unwrap_or(0))
}

/// Issue 23: on a JNA program, the agent's parts of the main thread (without its own) agree within
/// ±5 points with an independent sampler's classification of the same program without the agent:
/// `perf record -e cpu-clock`, Java code = a Java method or the interpreter innermost, JVM =
/// libjvm or a VM stub innermost, native code = the rest. Two runs of each, interleaved, pooled.
#[test]
fn boundary_parts_agree_with_perf_samples_of_the_program_without_the_agent() {
    let home = java_home();
    let dir = repo_root().join("target/agent-tests/jna-boundary-vs-perf");
    std::fs::create_dir_all(&dir).unwrap();
    let (mut perf_runs, mut agent_runs) = (Vec::new(), Vec::new());
    for _ in 0..RUNS_EACH {
        perf_runs.push(perf_shares(&dir));
        agent_runs.push(agent_shares(&home, &dir));
    }
    let (perf, perf_samples) = pooled(&perf_runs);
    let (agent, agent_samples) = pooled(&agent_runs);
    let what = format!(
        "perf (no agent, {perf_samples} samples of main in {RUNS_EACH} runs): {perf:?}\nagent ({agent_samples} samples): {agent:?}\nruns: perf {perf_runs:?}, agent {agent_runs:?}"
    );
    eprintln!("{what}");
    assert!(perf_samples > 2_000 && agent_samples > 1_000, "{what}");
    for (name, p, a) in [
        ("Java code", perf.java_code, agent.java_code),
        ("JVM", perf.jvm, agent.jvm),
        ("native code", perf.native_code, agent.native_code),
    ] {
        assert!((p - a).abs() <= 5.0, "{name}: {what}");
    }
}
