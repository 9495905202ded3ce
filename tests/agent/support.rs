//! Helpers of the end-to-end agent tests (`tests/agent_*.rs`): find the JDK and the agent, compile
//! Java programs and their JNI library, run `java` with the agent, and read its JSON report.
#![allow(dead_code)]

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

pub fn java_home() -> PathBuf {
    let home = std::env::var("NATIVEACCT_TEST_JAVA_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|_| PathBuf::from("/usr/lib/jvm/java-17-openjdk-amd64"));
    assert!(
        home.join("bin/javac").exists(),
        "JDK 17 with javac is required at {} (apt-get install openjdk-17-jdk-headless)",
        home.display()
    );
    home
}

pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The agent of this test run's profile (target/<profile>/libnativeacct.so). Cargo does not build a
/// cdylib for integration tests, so it is built here, once per test binary, to make sure the tests
/// run the current code.
pub fn agent_path() -> PathBuf {
    if let Ok(path) = std::env::var("NATIVEACCT_AGENT") {
        return PathBuf::from(path);
    }
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let exe = std::env::current_exe().expect("current_exe");
            let profile_dir = exe
                .parent()
                .and_then(Path::parent)
                .expect("target/<profile>/deps");
            let release = profile_dir.file_name().is_some_and(|n| n == "release");
            let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
            let mut build = Command::new(cargo);
            build
                .args(["build", "-q", "-p", "nativeacct", "--lib"])
                .current_dir(repo_root());
            if release {
                build.arg("--release");
            }
            if let Some(target_dir) = profile_dir.parent() {
                build.env("CARGO_TARGET_DIR", target_dir);
            }
            let status = build.status().expect("run cargo build for the agent");
            assert!(status.success(), "building the agent failed");
            let agent = profile_dir.join("libnativeacct.so");
            assert!(agent.exists(), "agent not built at {}", agent.display());
            agent
        })
        .clone()
}

/// A scratch directory under target/ for one test.
pub fn scratch(name: &str) -> PathBuf {
    let dir = repo_root().join("target/agent-tests").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create scratch dir");
    dir
}

/// Compile `tests/agent/Workload.java` and `workload.c` once per test binary; returns the class dir.
pub fn workload() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let dir = repo_root().join(format!(
            "target/agent-tests/workload-{}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let src = repo_root().join("tests/agent");
        compile_jni_library(&src.join("workload.c"), &dir.join("libworkload.so"));
        javac(&[src.join("Workload.java")], &dir);
        dir
    })
}

pub fn compile_jni_library(source: &Path, out: &Path) {
    compile_jni_sources(&[source.to_path_buf()], out, &["-O2"]);
}

/// gcc `flags` + `sources` into the shared library `out`, against the JDK's JNI headers.
pub fn compile_jni_sources(sources: &[PathBuf], out: &Path, flags: &[&str]) {
    let home = java_home();
    let status = Command::new("gcc")
        .args(flags)
        .args(["-shared", "-fPIC", "-Wall", "-Werror", "-o"])
        .arg(out)
        .arg(format!("-I{}", home.join("include").display()))
        .arg(format!("-I{}", home.join("include/linux").display()))
        .args(sources)
        .args(["-lpthread", "-ldl"])
        .status()
        .expect("run gcc");
    assert!(status.success(), "gcc failed for {sources:?}");
}

pub fn javac(sources: &[PathBuf], out_dir: &Path) {
    javac_with(&[], sources, out_dir);
}

/// javac with extra arguments (`--release 11`, `-cp ...`).
pub fn javac_with(args: &[&str], sources: &[PathBuf], out_dir: &Path) {
    let status = Command::new(java_home().join("bin/javac"))
        .args(args)
        .arg("-d")
        .arg(out_dir)
        .args(sources)
        .status()
        .expect("run javac");
    assert!(status.success(), "javac failed for {sources:?}");
}

/// `java [agent] [jvm_args] main args` with the classpath and library path set to `class_dir`.
pub fn run_java(
    agent_options: Option<&str>,
    jvm_args: &[&str],
    class_dir: &Path,
    main: &[&str],
) -> Output {
    let mut cmd = Command::new(java_home().join("bin/java"));
    if let Some(opts) = agent_options {
        let mut arg = format!("-agentpath:{}", agent_path().display());
        if !opts.is_empty() {
            arg.push('=');
            arg.push_str(opts);
        }
        cmd.arg(arg);
    }
    cmd.args(jvm_args)
        .arg("-cp")
        .arg(class_dir)
        .arg(format!("-Djava.library.path={}", class_dir.display()))
        .args(main);
    cmd.output().expect("run java")
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Run with the agent writing JSON to `dir/report.json`; panics with the program's output on failure.
pub fn run_with_report(
    extra_options: &str,
    jvm_args: &[&str],
    class_dir: &Path,
    main: &[&str],
    dir: &Path,
) -> (Output, Value) {
    let report = dir.join("report.json");
    let _ = std::fs::remove_file(&report);
    let mut options = format!("quiet,file={}", report.display());
    if !extra_options.is_empty() {
        options.push(',');
        options.push_str(extra_options);
    }
    let out = run_java(Some(&options), jvm_args, class_dir, main);
    assert!(
        out.status.success(),
        "java failed ({:?})\nstdout:\n{}\nstderr:\n{}",
        out.status,
        text(&out.stdout),
        text(&out.stderr)
    );
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

/// Per-function JNI call counts, all 93 functions (0 for unused ones).
pub fn jni_counts(report: &Value) -> Vec<(String, u64)> {
    report["jni_functions"]
        .as_array()
        .expect("jni_functions")
        .iter()
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
