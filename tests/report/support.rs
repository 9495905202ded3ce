//! Helpers of the report-tools tests (`tests/report_*.rs`): the fixture (Reports.java and reports.c)
//! run with the agent, and the `nativeacct` command on what it saved.
#![allow(dead_code)]

#[path = "../agent/support.rs"]
mod agent;

pub use agent::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

/// The fixture, compiled once per test binary; returns its class (and library) directory.
pub fn fixture() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let dir = repo_root().join(format!(
            "target/agent-tests/reports-fixture-{}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let src = repo_root().join("tests/report");
        compile_jni_library(&src.join("reports.c"), &dir.join("libreports.so"));
        javac(&[src.join("Reports.java")], &dir);
        dir
    })
}

/// Run the fixture (`calls` iterations of `rounds` rounds) with the agent writing `formats` to
/// `base.*`; `slowdown` multiplies the work of `Reports.hash`.
pub fn run_fixture(base: &Path, formats: &str, calls: u32, rounds: u32, slowdown: u32) {
    run_fixture_with(
        base,
        formats,
        &[&calls.to_string(), &rounds.to_string()],
        slowdown,
    );
}

/// The thread CPU the work of `Reports.hash` and of `Reports.mix` took in one run, as the fixture's
/// own C code measured it around that work.
pub struct OwnNs {
    pub hash: u64,
    pub mix: u64,
}

/// [`run_fixture`] with the fixture's arguments as they are (`CALLS ROUNDS [extra]`).
pub fn run_fixture_with(base: &Path, formats: &str, args: &[&str], slowdown: u32) -> OwnNs {
    let options = format!(
        "quiet,stacks=every,file={},format={formats}",
        base.display()
    );
    let class_dir = fixture();
    let out = Command::new(java_home().join("bin/java"))
        .arg(format!("-agentpath:{}={options}", agent_path().display()))
        .arg("-cp")
        .arg(class_dir)
        .arg(format!("-Djava.library.path={}", class_dir.display()))
        .arg("Reports")
        .args(args)
        .env("NATIVEACCT_TEST_SLOWDOWN", slowdown.to_string())
        .output()
        .expect("run java");
    assert!(
        out.status.success() && text(&out.stdout) == "done true\n",
        "fixture failed: {}",
        described(&out)
    );
    let stderr = text(&out.stderr);
    let own = |name: &str| {
        stderr
            .lines()
            .filter_map(|l| l.strip_prefix("own "))
            .flat_map(|l| l.split(' '))
            .find_map(|word| word.strip_prefix(name)?.strip_prefix('=')?.parse().ok())
            .unwrap_or_else(|| panic!("no own {name}= in the fixture's stderr: {stderr}"))
    };
    OwnNs {
        hash: own("hash"),
        mix: own("mix"),
    }
}

/// The `nativeacct` command of this build.
pub fn nativeacct(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_nativeacct"))
        .args(args)
        .output()
        .expect("run nativeacct")
}

/// Like [`nativeacct`], failing the test with its output if it does not succeed.
pub fn nativeacct_ok(args: &[&str]) -> Output {
    let out = nativeacct(args);
    assert!(
        out.status.success(),
        "nativeacct {args:?} failed: {}",
        described(&out)
    );
    out
}

pub fn path_str(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

pub fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).expect("read JSON")).expect("valid JSON")
}
