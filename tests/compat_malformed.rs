//! Issue 4, bad input: malformed class files coming through the ClassFileLoadHook are left unchanged
//! (the JVM reports exactly the same errors as without the agent) and counted.

#[path = "compat/support.rs"]
mod support;

use std::time::Duration;
use support::*;

#[test]
fn malformed_classes_are_left_unchanged_and_counted() {
    let home = jdk_home(17).unwrap();
    let plain = run_java(
        &home,
        &program_args(&home, &[], "compat.Malformed", &[]),
        Duration::from_secs(60),
    );
    assert_eq!(
        plain.code,
        Some(0),
        "without the agent: {}",
        plain.describe()
    );
    // The class-file hook is wrap mode's (bind mode reads no class file).
    let measured = measure_with_options(
        &home,
        "j2n=wrap",
        &[],
        "compat.Malformed",
        &[],
        Duration::from_secs(60),
    );
    assert_eq!(
        measured.run.stdout, plain.stdout,
        "the JVM's verdicts on the class files differ (left: agent)"
    );
    let defined = int_field(&measured.result, "malformed_classes_defined");
    let failed = int_field(&measured.report, "classes_failed");
    assert_eq!(
        failed, defined,
        "classes_failed vs malformed class files defined by the program"
    );
    eprintln!("{}", plain.stdout.trim());
}
