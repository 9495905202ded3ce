//! Issue 4, virtual threads (JDK 21+): 10,000 virtual threads that call natives (with a JNI upcall
//! each) and block get exact counts, and no carrier thread loses time. JDKs that are not installed
//! are skipped with a printed reason (NATIVEACCT_REQUIRE_JDKS=1 makes that a failure).

#[path = "compat/support.rs"]
mod support;

use support::*;

const VTHREAD_ARGS: [&str; 4] = ["10000", "3", "100", "20"]; // threads, calls each, block µs, native spin µs

fn virtual_threads_on(feature: u32) -> bool {
    let Some(home) = jdk_or_skip(feature, "virtual threads") else {
        return false;
    };
    let measured = measure_exact(
        &home,
        &[],
        "compat.VThreads",
        &VTHREAD_ARGS,
        &format!("JDK {feature}"),
    );

    let program_upcalls = program_jni_calls(&measured.result, "CallStaticShortMethodV");
    assert_eq!(program_upcalls, 30_000);
    let agent_upcalls = agent_jni_calls(&measured.report, "CallStaticShortMethodV");
    assert_eq!(
        agent_upcalls, program_upcalls,
        "JDK {feature}: CallStaticShortMethodV upcalls from virtual threads"
    );

    // Every thread's share must add up to the totals: time and calls made on carriers are not lost.
    let report = &measured.report;
    let threads = agent_threads(report);
    let sum = |key: &str| threads.values().map(|t| int_field(t, key)).sum::<i64>();
    for (name, t) in &threads {
        for key in ["bytecode_ns", "native_ns", "jni_calls", "native_calls"] {
            assert!(
                int_field(t, key) >= 0,
                "JDK {feature}: thread {name} has negative {key}"
            );
        }
    }
    assert_eq!(
        sum("jni_calls"),
        int_field(report, "jni_calls"),
        "JDK {feature}: per-thread jni_calls vs total"
    );
    assert_eq!(
        sum("native_calls"),
        int_field(report, "native_calls"),
        "JDK {feature}: per-thread native_calls vs total"
    );
    let thread_ns = sum("bytecode_ns") + sum("native_ns");
    let total_ns = int_field(report, "bytecode_ns") + int_field(report, "native_ns");
    assert_eq!(
        thread_ns, total_ns,
        "JDK {feature}: per-thread time vs total"
    );
    // The natives spin for a known amount of CPU inside native code (200 ms in all).
    let spin_ns = int_field(&measured.result, "native_spin_ns");
    let native_ns = int_field(report, "native_ns");
    eprintln!(
        "JDK {feature}: native_ns {native_ns} (known native spin {spin_ns}), {} per_thread entries, {:.1} s",
        threads.len(),
        measured.run.seconds
    );
    assert!(
        native_ns as f64 >= 0.9 * spin_ns as f64,
        "JDK {feature}: native time {native_ns} ns is below the {spin_ns} ns the natives spun"
    );
    true
}

#[test]
fn ten_thousand_virtual_threads_exact_counts() {
    let ran: Vec<u32> = [21, 25]
        .into_iter()
        .filter(|&f| virtual_threads_on(f))
        .collect();
    if ran.is_empty() {
        eprintln!(
            "SKIPPED: neither JDK 21 nor JDK 25 is installed: virtual threads were not tested"
        );
    }
}
