//! Issue 4, stress: the integration program (tests/compat/java/compat/Known.java with its own JNI
//! library) gives exact counts under the default JIT, -Xint, -Xcomp and -XX:TieredStopAtLevel=1, and
//! the per-JNI-function counts of all 93 wrapped functions are exact.

#[path = "compat/support.rs"]
mod support;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;
use support::*;

const KNOWN_ARGS: [&str; 3] = ["2", "4", "20"]; // rounds of the 93-function battery, threads, nest depth

fn known_counts_under(flags: &[&str]) -> Measured {
    let home = jdk_home(17).unwrap();
    measure_exact(
        &home,
        flags,
        "compat.Known",
        &KNOWN_ARGS,
        &format!("JDK 17 {flags:?}"),
    )
}

/// The counts that must not depend on the execution mode: our natives and our threads' upcalls.
fn mode_independent(measured: &Measured) -> (BTreeMap<String, i64>, BTreeMap<String, i64>) {
    let natives: BTreeMap<String, i64> = agent_native_counts(&measured.report)
        .into_iter()
        .filter(|(k, _)| k.starts_with("compat/"))
        .collect();
    let threads: BTreeMap<String, i64> = agent_threads(&measured.report)
        .into_iter()
        .filter(|(name, _)| name.starts_with("known-worker-"))
        .map(|(name, t)| (name, int_field(t, "jni_calls")))
        .collect();
    (natives, threads)
}

#[test]
fn same_exact_counts_under_jit_interpreter_xcomp_and_c1() {
    let default = known_counts_under(&[]);
    let reference = mode_independent(&default);
    assert_eq!(
        reference.1.len(),
        4,
        "four worker threads expected in per_thread: {:?}",
        reference.1
    );
    for flags in [&["-Xint"][..], &["-Xcomp"], &["-XX:TieredStopAtLevel=1"]] {
        let measured = known_counts_under(flags);
        assert_eq!(
            mode_independent(&measured),
            reference,
            "counts under {flags:?} differ from the default mode"
        );
        eprintln!(
            "{flags:?}: same counts as the default mode ({:.1} s)",
            measured.run.seconds
        );
    }
}

/// The Known program with `agent_options` on the JDK at `home`, against the program's own counts:
/// every native method, every thread's upcalls, and every one of the 93 JNI functions (minus a run
/// of the same program doing no work: the JDK's own upcalls are the same in both). Empty when exact.
fn known_mismatches(home: &Path, agent_options: &str) -> Vec<String> {
    let limit = Duration::from_secs(300);
    let run =
        |args: &[&str]| measure_with_options(home, agent_options, &[], "compat.Known", args, limit);
    let baseline = run(&["0", "4", "20"]);
    let measured = run(&KNOWN_ARGS);
    let mut problems = count_mismatches(&measured);
    let program = measured.result.get("jni_calls_by_function").unwrap();
    if program.entries().len() != 93 {
        problems.push(format!(
            "the program exercised {} JNI functions, not 93",
            program.entries().len()
        ));
    }
    let agent = measured
        .report
        .get("jni_calls_by_function")
        .expect("report has jni_calls_by_function");
    let agent_base = baseline
        .report
        .get("jni_calls_by_function")
        .expect("report has jni_calls_by_function");
    for (function, expected) in program.entries() {
        let got = agent.get(function).and_then(Json::as_i64).unwrap_or(0)
            - agent_base.get(function).and_then(Json::as_i64).unwrap_or(0);
        if got != expected.as_i64().unwrap() {
            problems.push(format!(
                "JNI {function}: agent {got} (minus baseline), program {}",
                expected.short()
            ));
        }
    }
    let total: i64 = agent
        .entries()
        .iter()
        .map(|(_, v)| v.as_i64().unwrap())
        .sum();
    if int_field(&measured.report, "jni_calls") != total {
        problems.push("jni_calls is not the sum of jni_calls_by_function".into());
    }
    problems
}

#[test]
fn every_one_of_the_93_jni_functions_is_counted_exactly() {
    let problems = known_mismatches(&jdk_home(17).unwrap(), "");
    assert!(
        problems.is_empty(),
        "JDK 17: counts differ:\n{}",
        problems.join("\n")
    );
}

/// One row of `scripts/compat-matrix`: [`known_mismatches`] on the JDK at
/// `$NATIVEACCT_MATRIX_JAVA_HOME` with the agent options `$NATIVEACCT_MATRIX_OPTIONS`. The matrix
/// runs it with `--ignored --exact matrix_row_counts`.
#[test]
#[ignore = "run by scripts/compat-matrix, once per JDK and J2N mode"]
fn matrix_row_counts() {
    let home = std::env::var_os("NATIVEACCT_MATRIX_JAVA_HOME")
        .map(std::path::PathBuf::from)
        .expect("NATIVEACCT_MATRIX_JAVA_HOME names the JDK of the row");
    let options = std::env::var("NATIVEACCT_MATRIX_OPTIONS").unwrap_or_default();
    let problems = known_mismatches(&home, &options);
    for problem in &problems {
        println!("MISMATCH {problem}");
    }
    assert!(problems.is_empty(), "{} counts differ", problems.len());
}

#[test]
fn exact_counts_on_every_installed_jdk() {
    for feature in [11, 21, 25] {
        let Some(home) = jdk_or_skip(feature, "exact counts") else {
            continue;
        };
        let measured = measure_exact(
            &home,
            &[],
            "compat.Known",
            &KNOWN_ARGS,
            &format!("JDK {feature}"),
        );
        eprintln!(
            "JDK {feature}: exact counts ({:.1} s)",
            measured.run.seconds
        );
    }
}
