//! JNA, the most used native bridge on the JVM, under the agent: interface mapping (strlen, getpid,
//! qsort with a Java comparator called back from C) and direct mapping (`Native.register`). In the
//! default bind mode the program prints the same as without the agent, the direct-mapped calls are
//! counted exactly, and every comparator call is at least one counted JNI upcall.

#[path = "agent/support.rs"]
mod support;

#[path = "compat/support.rs"]
mod compat;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use support::{agent_path, java_home, native_calls, repo_root, scratch, text};

const JNA_JAR: &str = "/usr/share/java/jna.jar";
const DIRECT_CALLS: u64 = 60_000;

fn classes() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        assert!(
            Path::new(JNA_JAR).exists(),
            "JNA is required: apt-get install libjna-java libjna-jni (scripts/install-test-deps)"
        );
        let dir = repo_root().join(format!("target/agent-tests/jna-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        support::javac_with(
            &["--release", "11", "-cp", JNA_JAR],
            &[repo_root().join("tests/bind/JnaCheck.java")],
            &dir,
        );
        dir
    })
}

fn run(home: &Path, agent_options: Option<&str>) -> Output {
    let mut cmd = Command::new(home.join("bin/java"));
    if let Some(options) = agent_options {
        cmd.arg(format!("-agentpath:{}={options}", agent_path().display()));
    }
    let out = cmd
        .arg("-cp")
        .arg(format!("{JNA_JAR}:{}", classes().display()))
        .arg("JnaCheck")
        .arg(DIRECT_CALLS.to_string())
        .output()
        .expect("run java");
    assert!(
        out.status.success(),
        "JnaCheck failed with {agent_options:?} on {}:\n{}\n{}",
        home.display(),
        text(&out.stdout),
        text(&out.stderr)
    );
    out
}

#[test]
fn both_mappings_run_unchanged_and_are_counted_exactly_in_bind_mode() {
    let mut homes = vec![(17, java_home())];
    match compat::jdk_home(25) {
        Some(home) => homes.push((25, home)),
        None if std::env::var_os("NATIVEACCT_REQUIRE_JDKS").is_some() => {
            panic!("JDK 25 is required (scripts/install-jdks)")
        }
        None => eprintln!("JDK 25 not installed: skipped"),
    }
    for (feature, home) in homes {
        let plain = text(&run(&home, None).stdout);
        assert!(
            plain.contains("getpid matches true, sorted true"),
            "JDK {feature}: {plain}"
        );
        let dir = scratch(&format!("jna-{feature}"));
        let report_path = dir.join("report.json");
        let out = run(
            &home,
            Some(&format!("quiet,file={}", report_path.display())),
        );
        assert_eq!(
            plain,
            text(&out.stdout),
            "JDK {feature}: the program saw the agent"
        );
        let report: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&report_path).unwrap()).unwrap();
        assert_eq!(report["j2n"], "bind");
        // Direct mapping binds through RegisterNatives: every call is counted.
        assert_eq!(
            native_calls(&report, "JnaCheck$Direct", "abs"),
            DIRECT_CALLS,
            "JDK {feature}"
        );
        assert_eq!(
            native_calls(&report, "JnaCheck$Direct", "labs"),
            DIRECT_CALLS,
            "JDK {feature}"
        );
        // Interface mapping goes through JNA's own natives (Native.invoke*).
        let invokes: u64 = report["native_methods"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["class"] == "com/sun/jna/Native")
            .filter(|m| m["name"].as_str().unwrap().starts_with("invoke"))
            .map(|m| m["calls"].as_u64().unwrap())
            .sum();
        assert!(
            invokes >= 102,
            "JDK {feature}: Native.invoke* calls {invokes}"
        );
        // Each comparator call from C into Java is at least one JNI upcall.
        let comparisons: u64 = plain
            .lines()
            .find_map(|l| l.strip_prefix("comparisons "))
            .and_then(|n| n.trim().parse().ok())
            .expect("comparisons line");
        let upcalls = report["jni_calls"].as_u64().unwrap();
        assert!(
            upcalls >= comparisons,
            "JDK {feature}: {upcalls} JNI upcalls for {comparisons} comparator calls"
        );
    }
}
