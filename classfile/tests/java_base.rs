//! Every class of the JDK's java.base goes through the rewriter: no failures, no panics, untouched
//! classes byte-identical, rewriting is idempotent, and the rewritten module boots a JVM
//! (`--patch-module`, `-Xverify:all`) whose output equals the unpatched run.

mod common;

use common::*;
use nativeacct_classfile::{has_native_methods, reason, rewrite, Outcome, RewriteConfig};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

const PREFIX: &[u8] = b"$nativeacct$";

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

#[test]
fn java_base_rewrites_cleanly_and_boots() {
    let base = java_base_dir();
    let jdk_feature = jdk_feature();
    let config = RewriteConfig::for_jdk(jdk_feature);
    let mut classes = 0usize;
    let mut with_natives = 0usize;
    let mut failures = Vec::new();
    let mut rewritten: BTreeSet<String> = BTreeSet::new();
    let mut wrapped = 0usize;
    let mut skipped: BTreeMap<String, usize> = BTreeMap::new();
    let mut next_id = 0;
    for path in files_under(&base) {
        if path.extension().is_none_or(|e| e != "class") {
            continue;
        }
        let relative = path
            .strip_prefix(&base)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let bytes = std::fs::read(&path).unwrap();
        classes += 1;
        let native = has_native_methods(&bytes).expect("prescan of a JDK class");
        with_natives += usize::from(native);
        let result = std::panic::catch_unwind(|| {
            let mut id = next_id;
            let outcome = rewrite(&bytes, &config, &mut |_| {
                id += 1;
                id - 1
            });
            (outcome, id)
        });
        let (outcome, id) =
            result.unwrap_or_else(|_| panic!("panic escaped rewrite() on {relative}"));
        next_id = id;
        match outcome {
            Err(e) => failures.push(format!("{relative}: {e}")),
            Ok(Outcome::Unchanged { skipped: s }) => {
                assert!(native || s.is_empty(), "{relative}: skips without natives");
                for s in s {
                    *skipped.entry(s.reason).or_default() += 1;
                }
            }
            Ok(Outcome::Rewritten {
                bytes: out,
                wrapped: w,
                skipped: s,
            }) => {
                assert!(native || relative == "java/lang/Object.class", "{relative}");
                assert!(contains(&out, PREFIX) || w.is_empty(), "{relative}");
                wrapped += w.len();
                for s in s {
                    *skipped.entry(s.reason).or_default() += 1;
                }
                // Idempotent: a rewritten class has nothing left to wrap.
                match rewrite(&out, &config, &mut |_| {
                    panic!("second rewrite wrapped {relative}")
                }) {
                    Ok(Outcome::Unchanged { skipped: again }) => assert!(
                        again.iter().all(|s| s.reason != reason::USER_EXCLUDE),
                        "{relative}"
                    ),
                    other => panic!("{relative}: second rewrite gave {other:?}"),
                }
                assert!(has_native_methods(&out).unwrap());
                rewritten.insert(relative);
            }
        }
    }
    eprintln!(
        "java.base: {classes} classes, {with_natives} with natives, {} rewritten, {wrapped} wrapped, \
         skipped {skipped:?}",
        rewritten.len()
    );
    assert!(failures.is_empty(), "rewrite failures: {failures:#?}");
    assert!(
        classes > 5000,
        "expected all of java.base, found {classes} classes"
    );
    assert!(
        with_natives > 50 && wrapped > 300,
        "too few natives found: {with_natives} / {wrapped}"
    );
    assert!(rewritten.contains("java/lang/Object.class"));
    let skip_total: usize = skipped.values().sum();
    assert!(skipped.contains_key(reason::INTRINSIC_CANDIDATE));
    assert!(skipped.contains_key(reason::SIGNATURE_POLYMORPHIC));
    assert!(skipped.contains_key(reason::REGISTER_NATIVES));
    assert!(skip_total > 100);

    // The tool over the whole tree: every class it did not rewrite is copied byte for byte.
    let dir = scratch("java_base");
    let full = dir.join("full");
    let summary = run_ok(
        rewrite_tool()
            .arg(&base)
            .arg(&full)
            .args(["--jdk", &jdk_feature.to_string()]),
    );
    assert!(
        summary.contains(&format!(
            "{classes} scanned, {with_natives} with natives, {} rewritten, 0 failed",
            rewritten.len()
        )),
        "{summary}"
    );
    assert!(
        summary.contains(&format!("natives: {wrapped} wrapped, {skip_total} skipped")),
        "{summary}"
    );
    let mut differing = BTreeSet::new();
    for path in files_under(&base) {
        let relative = path.strip_prefix(&base).unwrap();
        let original = std::fs::read(&path).unwrap();
        let copied = std::fs::read(full.join(relative)).unwrap();
        if original != copied {
            differing.insert(relative.to_string_lossy().into_owned());
        }
    }
    assert_eq!(differing, rewritten, "exactly the rewritten classes differ");

    // Boot the patched module (changed classes only) and compare with the plain JVM.
    let patch = dir.join("patch");
    run_ok(rewrite_tool().arg(&base).arg(&patch).args([
        "--jdk",
        &jdk_feature.to_string(),
        "--changed-only",
    ]));
    assert_eq!(files_under(&patch).len(), rewritten.len());
    let program = javac(
        &dir,
        &[
            ("Workload.java", &read_java("Workload.java")),
            ("Probe.java", &read_java("Probe.java")),
        ],
        &[],
    );
    let agent = prefix_agent(&dir);
    let java = |patched: bool, main: &str| {
        let mut cmd = Command::new(jdk_tool("java"));
        if patched {
            cmd.arg(format!("-agentpath:{}", agent.display()))
                .arg(format!("--patch-module=java.base={}", patch.display()));
        }
        cmd.arg("-Xverify:all").arg("-cp").arg(&program).arg(main);
        let out = run(&mut cmd);
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(
            out.status.success(),
            "{cmd:?}: {}\n{stdout}\n{stderr}",
            out.status
        );
        (stdout, stderr)
    };
    let (plain, _) = java(false, "Workload");
    let (patched, patched_err) = java(true, "Workload");
    assert!(plain.ends_with("done\n"), "{plain}");
    assert_eq!(
        patched, plain,
        "patched run must print exactly what the plain run prints"
    );
    assert_eq!(patched_err, "", "patched run printed diagnostics");
    // Opt-in intrinsic wrapping: still the same output and no CheckIntrinsics noise (JDK 17 keeps
    // the annotation on the wrappers it would otherwise complain about; 25 strips it silently).
    let intrinsics = dir.join("patch-intrinsics");
    let summary = run_ok(rewrite_tool().arg(&base).arg(&intrinsics).args([
        "--jdk",
        &jdk_feature.to_string(),
        "--changed-only",
        "--wrap-intrinsics",
    ]));
    assert!(summary.contains("0 failed"), "{summary}");
    let mut cmd = Command::new(jdk_tool("java"));
    cmd.arg(format!("-agentpath:{}", agent.display()))
        .arg(format!("--patch-module=java.base={}", intrinsics.display()))
        .arg("-Xverify:all")
        .arg("-cp")
        .arg(&program)
        .arg("Workload");
    let out = run(&mut cmd);
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        plain,
        "--wrap-intrinsics run"
    );
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let (probe_plain, _) = java(false, "Probe");
    let (probe_patched, _) = java(true, "Probe");
    assert_eq!(
        probe_plain.trim(),
        "helpers false renamed false inherited-public false"
    );
    assert_eq!(
        probe_patched.trim(),
        "helpers true renamed true inherited-public false"
    );
}

fn read_java(name: &str) -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/java")
            .join(name),
    )
    .unwrap()
}
