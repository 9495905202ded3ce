//! Issue 4, stress: the integration program (tests/compat/java/compat/Known.java with its own JNI
//! library) gives exact counts under the default JIT, -Xint, -Xcomp and -XX:TieredStopAtLevel=1, and
//! the per-JNI-function counts of all 93 wrapped functions are exact.

#[path = "compat/support.rs"]
mod support;

use std::collections::BTreeMap;
use std::time::Duration;
use support::*;

const KNOWN_ARGS: [&str; 3] = ["2", "4", "20"]; // rounds of the 93-function battery, threads, nest depth

fn known_counts_under(flags: &[&str]) -> Measured {
    let home = jdk_home(17).unwrap();
    let measured = measure(
        &home,
        flags,
        "compat.Known",
        &KNOWN_ARGS,
        Duration::from_secs(300),
    );
    let problems = count_mismatches(&measured);
    assert!(
        problems.is_empty(),
        "JDK 17 {flags:?}: counts differ:\n{}",
        problems.join("\n")
    );
    measured
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

#[test]
fn every_one_of_the_93_jni_functions_is_counted_exactly() {
    let home = jdk_home(17).unwrap();
    // The same program doing no work: the JDK's own upcalls (launcher, class loading) are the same in
    // both runs, so the difference must be exactly what libcompat counted.
    let baseline = measure(
        &home,
        &[],
        "compat.Known",
        &["0", "4", "20"],
        Duration::from_secs(120),
    );
    let measured = known_counts_under(&[]);
    let program = measured.result.get("jni_calls_by_function").unwrap();
    assert_eq!(
        program.entries().len(),
        93,
        "the program must exercise all 93 functions"
    );
    let agent = measured
        .report
        .get("jni_calls_by_function")
        .expect("report has jni_calls_by_function");
    let agent_base = baseline
        .report
        .get("jni_calls_by_function")
        .expect("report has jni_calls_by_function");
    let mut problems = Vec::new();
    for (function, expected) in program.entries() {
        let got = agent.get(function).and_then(Json::as_i64).unwrap_or(0)
            - agent_base.get(function).and_then(Json::as_i64).unwrap_or(0);
        if got != expected.as_i64().unwrap() {
            problems.push(format!(
                "{function}: agent {got} (minus baseline), program {}",
                expected.short()
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "per-function JNI counts differ:\n{}",
        problems.join("\n")
    );
    let total: i64 = agent
        .entries()
        .iter()
        .map(|(_, v)| v.as_i64().unwrap())
        .sum();
    assert_eq!(
        int_field(&measured.report, "jni_calls"),
        total,
        "jni_calls must be the sum of jni_calls_by_function"
    );
}

#[test]
fn exact_counts_on_every_installed_jdk() {
    for feature in [11, 21, 25] {
        let Some(home) = jdk_or_skip(feature, "exact counts") else {
            continue;
        };
        let measured = measure(
            &home,
            &[],
            "compat.Known",
            &KNOWN_ARGS,
            Duration::from_secs(300),
        );
        let problems = count_mismatches(&measured);
        assert!(
            problems.is_empty(),
            "JDK {feature}: counts differ:\n{}",
            problems.join("\n")
        );
        eprintln!(
            "JDK {feature}: exact counts ({:.1} s)",
            measured.run.seconds
        );
    }
}
