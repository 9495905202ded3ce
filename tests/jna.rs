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
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::OnceLock;
use support::{java_home, native_calls, repo_root, text};

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
