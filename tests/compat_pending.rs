//! Issue 4, bad input: a JNI call made with an exception pending, or with a null method ID, behaves
//! exactly as it does without the agent: same stdout, same exit code and, for the null method IDs
//! that crash HotSpot, a crash in the same JVM function (not in the agent).

#[path = "compat/support.rs"]
mod support;

use std::time::Duration;
use support::*;

const CASES: &[&str] = &[
    "pending",
    "after-java-throw",
    "null-static",
    "null-static-v",
    "null-static-a",
    "null-virtual",
    "null-nonvirtual",
    "null-new-object",
];

/// The library and function of HotSpot's "Problematic frame" line, e.g. ("libjvm.so",
/// "jni_CallStaticIntMethod").
fn crash_frame(output: &str) -> Option<(String, String)> {
    let mut lines = output
        .lines()
        .skip_while(|l| !l.contains("Problematic frame:"));
    let frame = lines.nth(1)?;
    let library = frame.split('[').nth(1)?.split('+').next()?.to_string();
    let symbol = frame.split(']').nth(1)?.trim();
    Some((
        library,
        symbol.split('+').next().unwrap_or(symbol).to_string(),
    ))
}

/// The program's output without what legitimately differs under the agent:
/// - HotSpot's fatal-error banner (`#` lines: pid, pc, and "sharing", which the agent's early class
///   hook turns off); the crash site is compared apart;
/// - stack-trace lines (`\tat ...`) that -Xcheck:jni prints: under the agent they show the renamed
///   native and its wrapper;
/// - -Xcheck:jni names the previous JNI function: the agent forwards a variadic `Call...Method` to
///   the `...MethodV` entry, so `from CallStaticIntMethodV` there is `from CallStaticIntMethod` here.
fn normalized(stdout: &str) -> String {
    stdout
        .lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with("\tat "))
        .map(|l| match l.split_once("when required to from ") {
            Some((head, function)) => format!(
                "{head}when required to from {}",
                function.trim_end_matches('V')
            ),
            None => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn compare(case: &str, extra_flags: &[&str]) {
    let home = jdk_home(17).unwrap();
    let plain = run_java(
        &home,
        &program_args(&home, extra_flags, "compat.Pending", &[case]),
        Duration::from_secs(60),
    );
    let report = scratch("pending.json");
    let flag = agent_flag(&report, "");
    let mut flags = vec![flag.as_str()];
    flags.extend_from_slice(extra_flags);
    let agent = run_java(
        &home,
        &program_args(&home, &flags, "compat.Pending", &[case]),
        Duration::from_secs(60),
    );
    assert_eq!(
        normalized(&agent.stdout),
        normalized(&plain.stdout),
        "{case} {extra_flags:?}: stdout differs (left: agent)"
    );
    assert_eq!(
        agent.code,
        plain.code,
        "{case} {extra_flags:?}: exit differs; agent: {}",
        agent.describe()
    );
    let agent_crash = crash_frame(&agent.stdout);
    let plain_crash = crash_frame(&plain.stdout);
    match (&agent_crash, &plain_crash) {
        (None, None) => {}
        (Some((agent_lib, agent_fn)), Some((plain_lib, plain_fn))) => {
            assert_eq!(
                agent_lib, plain_lib,
                "{case}: crash in another library under the agent"
            );
            // The agent forwards a variadic entry to its va_list twin (see `normalized`).
            let same_entry = agent_fn == plain_fn || *agent_fn == format!("{plain_fn}V");
            assert!(
                same_entry,
                "{case}: crash in {agent_fn} under the agent, in {plain_fn} without"
            );
        }
        _ => panic!("{case}: crash site {agent_crash:?} under the agent, {plain_crash:?} without"),
    }
    eprintln!(
        "{case} {extra_flags:?}: exit {:?}, crash {plain_crash:?} (agent {agent_crash:?})",
        plain.code
    );
}

#[test]
fn pending_exception_and_null_method_id_behave_as_without_the_agent() {
    for case in CASES {
        compare(case, &[]);
    }
}

#[test]
fn pending_exception_under_xcheck_jni_behaves_as_without_the_agent() {
    for case in ["pending", "after-java-throw", "null-static"] {
        compare(case, &["-Xcheck:jni"]);
    }
}
