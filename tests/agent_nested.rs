//! Java that the VM runs inside a native without a JNI call, here a `<clinit>` under
//! `Class.forName0`, and a native that this Java calls. A native's self time is its own native time
//! only: the nested native and the bytecode around it are not counted in it, so the natives' self
//! times add up to no more than the thread's native time.
//!
//! The fixture measures its native spin and its bytecode loop with the thread's CPU clock; the runs
//! use `clock=thread-cputime`, the same clock, so the comparisons are exact inequalities.

#[path = "agent/support.rs"]
mod support;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use support::{agent_fixture, run_with_report, scratch, text, thread};

/// `tests/agent/Nested.java` and `nested.c`, built once.
fn nested() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    agent_fixture(&BUILT, "Nested")
}

/// What the fixture measured itself: (CPU ns in the native spin, CPU ns in the bytecode loop).
fn measured(stdout: &str) -> (u64, u64) {
    let field = |key: &str| -> u64 {
        stdout
            .split_whitespace()
            .find_map(|w| w.strip_prefix(key))
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no {key} in the fixture's output {stdout:?}"))
    };
    (field("spin_ns="), field("java_ns="))
}

fn run(j2n: &str) -> (u64, u64, Value) {
    let (out, report) = run_with_report(
        &format!("j2n={j2n},clock=thread-cputime"),
        &[],
        nested(),
        &["Nested"],
        &scratch(&format!("nested-{j2n}")),
    );
    let (spin_ns, java_ns) = measured(&text(&out.stdout));
    (spin_ns, java_ns, report)
}

fn method<'a>(report: &'a Value, class: &str, name: &str) -> Option<&'a Value> {
    report["native_methods"]
        .as_array()
        .expect("native_methods")
        .iter()
        .find(|m| m["class"] == class && m["name"] == name)
}

fn u(v: &Value, key: &str) -> u64 {
    v[key]
        .as_u64()
        .unwrap_or_else(|| panic!("{key} missing in {v}"))
}

/// Checks shared by both J2N modes.
fn check_common(spin_ns: u64, java_ns: u64, report: &Value) {
    let spin = method(report, "Nested", "spin").expect("Nested.spin row");
    assert_eq!(u(spin, "calls"), 1);
    // The agent's reads bracket the fixture's: at least what the fixture measured, and its own
    // cost on top is a few microseconds.
    assert!(
        u(spin, "total_ns") >= spin_ns && u(spin, "total_ns") - spin_ns < 1_000_000,
        "spin: agent {} ns, fixture {spin_ns} ns",
        u(spin, "total_ns")
    );
    assert_eq!(
        u(spin, "self_ns"),
        u(spin, "total_ns"),
        "spin calls nothing"
    );

    let self_sum: u64 = report["native_methods"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| u(m, "self_ns"))
        .sum();
    assert!(
        self_sum <= u(report, "native_ns"),
        "natives' self time {self_sum} ns exceeds the run's native time {} ns",
        u(report, "native_ns")
    );

    let main = thread(report, "main");
    assert!(
        u(main, "bytecode_ns") >= java_ns,
        "the <clinit> loop ({java_ns} ns) is bytecode; main has {} ns",
        u(main, "bytecode_ns")
    );
    assert!(u(main, "native_ns") >= spin_ns);
}

#[test]
fn bind_native_under_forname0_is_not_counted_in_forname0_self_time() {
    let (spin_ns, java_ns, report) = run("bind");
    check_common(spin_ns, java_ns, &report);
    let for_name = method(&report, "java/lang/Class", "forName0").expect("Class.forName0 row");
    let total = u(for_name, "total_ns");
    let own = u(for_name, "self_ns");
    assert!(
        total >= spin_ns + java_ns,
        "forName0 ran the whole <clinit>: {total} ns < {spin_ns} + {java_ns}"
    );
    assert!(
        own <= total - spin_ns - java_ns,
        "forName0 self {own} ns counts the <clinit>'s native ({spin_ns} ns) or bytecode \
         ({java_ns} ns); total {total} ns"
    );
}

#[test]
fn wrap_natives_self_time_stays_within_native_time() {
    let (spin_ns, java_ns, report) = run("wrap");
    check_common(spin_ns, java_ns, &report);
}
