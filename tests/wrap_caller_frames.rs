//! `j2n=wrap` leaves the natives that inspect their caller's frames unwrapped
//! (classfile/data/caller-frame-natives.txt), so a program that uses them sees the same with and
//! without the agent: `SecurityManager.getClassContext` (which throws InternalError under a
//! wrapper), StackWalker beyond its first batch, `getCallerClass`, deserialization's
//! latest-user-loader lookup, `AccessController.getContext`. On every installed JDK.

#[path = "agent/support.rs"]
mod support;

#[path = "compat/support.rs"]
mod compat;

use nativeacct_classfile::reason;
use serde_json::Value;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Output;
use support::{java_home, repo_root, text};

fn compile() -> PathBuf {
    let dir = test_support::fixture_dir("agent-tests", "caller-frames");
    let source = repo_root().join("tests/wrap/CallerFrames.java");
    test_support::javac(&["--release", "11"], &[source], &dir);
    dir
}

fn run(home: &Path, classes: &Path, agent_options: Option<&str>) -> Output {
    let args = [
        OsStr::new("-cp"),
        classes.as_os_str(),
        OsStr::new("CallerFrames"),
    ];
    test_support::java_ok(home, agent_options, &args)
}

#[test]
fn caller_frame_natives_see_the_real_caller_under_wrap() {
    let classes = compile();
    let mut homes = vec![(17, java_home())];
    for feature in [11, 21, 25] {
        if let Some(home) = compat::jdk_or_skip(feature, "caller frames under j2n=wrap") {
            homes.push((feature, home));
        }
    }
    for (feature, home) in homes {
        let plain = text(&run(&home, &classes, None).stdout);
        assert!(
            plain.contains("getClassContext: [CallerFrames$Context, CallerFrames, ")
                && plain.contains("walk: 104 frames")
                && plain.contains("deserialize: 42"),
            "JDK {feature}: {plain}"
        );
        let report_path = classes.join(format!("report-{feature}.json"));
        let wrapped = run(
            &home,
            &classes,
            Some(&format!("quiet,j2n=wrap,file={}", report_path.display())),
        );
        assert_eq!(
            plain,
            text(&wrapped.stdout),
            "JDK {feature}: the program saw the wrappers"
        );
        let report: Value =
            serde_json::from_str(&std::fs::read_to_string(&report_path).unwrap()).unwrap();
        assert_eq!(report["j2n"], "wrap");
        // At least StackWalker's two natives and VM.latestUserDefinedLoader0 on every JDK.
        let skipped = report["natives_skipped_by_reason"][reason::CALLER_FRAMES]
            .as_u64()
            .unwrap_or(0);
        assert!(
            skipped >= 3,
            "JDK {feature}: {}",
            report["natives_skipped_by_reason"]
        );
    }
}
