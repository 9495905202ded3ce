//! Issue 4, robustness: the agent keeps exact counts and does not crash next to what real
//! deployments add: a second JVMTI agent with its own native-method prefix (in either order), JFR
//! sampling (which suspends threads with signals), a storm of SIGQUIT thread dumps while 1000
//! threads churn, and -Xcheck:jni.

#[path = "compat/support.rs"]
mod support;

use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::{Duration, Instant};
use support::*;

const KNOWN_ARGS: [&str; 3] = ["2", "4", "20"];

/// tests/compat/c/jvmti_probe.c: a JVMTI agent that sets the native-method prefix "$$probe$$" and
/// turns on the early and all-class hooks.
fn probe_agent() -> &'static PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let out = programs().work.join("libjvmti_probe.so");
        let source = repo_root().join("tests/compat/c/jvmti_probe.c");
        test_support::gcc_jni(&[source], &out, &["-O2"]);
        out
    })
}

#[test]
fn a_second_jvmti_agent_with_its_own_prefix_before_or_after() {
    let home = jdk_home(17).unwrap();
    let probe = format!("-agentpath:{}", probe_agent().display());
    let limit = Duration::from_secs(120);
    let nativeacct_first = measure_with_options(
        &home,
        "",
        &[probe.as_str()],
        "compat.Known",
        &KNOWN_ARGS,
        limit,
    );
    let probe_first = measure_after(&home, &[probe.as_str()], "compat.Known", &KNOWN_ARGS);
    for (measured, order) in [
        (nativeacct_first, "nativeacct first"),
        (probe_first, "probe agent first"),
    ] {
        assert!(
            measured.run.stderr.contains("jvmti-probe: ok"),
            "{order}: probe agent did not run"
        );
        assert_exact(&measured, order);
    }
}

/// Like `measure_with_options`, but with `before` on the command line ahead of nativeacct.
fn measure_after(home: &std::path::Path, before: &[&str], main: &str, args: &[&str]) -> Measured {
    let report_path = scratch("report.json");
    let flag = agent_flag(&report_path, "");
    let mut flags: Vec<&str> = before.to_vec();
    flags.push(&flag);
    let run = run_java(
        home,
        &program_args(home, &flags, main, args),
        Duration::from_secs(120),
    );
    assert_eq!(run.code, Some(0), "{main}: {}", run.describe());
    let text = std::fs::read_to_string(&report_path).expect("agent report");
    let report = parse_json(&text).expect("report JSON");
    let result = program_result(&run.stdout);
    Measured {
        run,
        report,
        result,
    }
}

#[test]
fn jfr_profiling_alongside() {
    let home = jdk_home(17).unwrap();
    let recording = scratch("recording.jfr");
    let jfr = format!(
        "-XX:StartFlightRecording=settings=profile,filename={}",
        recording.display()
    );
    let measured = measure_with_options(
        &home,
        "",
        &[&jfr],
        "compat.Known",
        &KNOWN_ARGS,
        Duration::from_secs(180),
    );
    assert_exact(&measured, "JFR profile recording");
    assert!(recording.exists(), "JFR wrote no recording");
}

#[test]
fn xcheck_jni() {
    let home = jdk_home(17).unwrap();
    let measured = measure_with_options(
        &home,
        "",
        &["-Xcheck:jni"],
        "compat.Known",
        &KNOWN_ARGS,
        Duration::from_secs(180),
    );
    assert_exact(&measured, "-Xcheck:jni");
}

#[test]
fn sigquit_thread_dumps_during_thread_churn() {
    let home = jdk_home(17).unwrap();
    let report_path = scratch("report.json");
    let flag = agent_flag(&report_path, "");
    // Enough threads that the run outlasts the half second before the first SIGQUIT by far (1,000
    // took 0.7 s in all with CDS on).
    // Thread dumps go to stderr: on stdout the VM prints them beside the program's own lines, and a
    // late one landed inside its RESULT line.
    let args = program_args(
        &home,
        &[&flag, "-XX:+DisplayVMOutputToStderr"],
        "compat.Churn",
        &["6000", "50", "20", "5"],
    );
    let mut dumps = 0;
    let mut last = Instant::now();
    let started = Instant::now();
    let run = run_java_with(&home, &args, Duration::from_secs(300), &mut |pid| {
        // Leave the JVM half a second to install its handlers: SIGQUIT before that kills it.
        if started.elapsed() > Duration::from_millis(500)
            && last.elapsed() > Duration::from_millis(100)
        {
            // SAFETY: kill(2) with a pid we spawned and a plain signal number; no memory is shared.
            unsafe { libc::kill(pid as libc::pid_t, libc::SIGQUIT) };
            dumps += 1;
            last = Instant::now();
        }
    });
    assert_eq!(run.code, Some(0), "churn under SIGQUIT: {}", run.describe());
    let printed = run.stderr.matches("Full thread dump").count();
    eprintln!(
        "{dumps} SIGQUITs sent, {printed} thread dumps printed, {:.1} s",
        run.seconds
    );
    assert!(
        printed >= 3,
        "only {printed} thread dumps happened: the storm did not overlap the run"
    );
    let report = parse_json(&std::fs::read_to_string(&report_path).expect("report")).expect("JSON");
    let measured = Measured {
        result: program_result(&run.stdout),
        report,
        run,
    };
    assert_exact(&measured, "SIGQUIT storm");
}
