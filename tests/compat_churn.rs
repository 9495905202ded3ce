//! Issue 4, churn: 1000 platform threads start, make native calls and JNI upcalls, and end, in waves
//! of 50. The merged counts are exact, no file descriptor leaks, and memory stays flat after the
//! threads end (compared with the same run without the agent).

#[path = "compat/support.rs"]
mod support;

use std::time::Duration;
use support::*;

const THREADS: i64 = 1000;
const CHURN_ARGS: [&str; 4] = ["1000", "50", "20", "5"]; // threads, wave, pings, upcalls per thread

#[test]
fn thousand_threads_in_waves_of_fifty_exact_counts_no_fd_leak_flat_memory() {
    let home = jdk_home(17).unwrap();
    let measured = measure_exact(&home, &[], "compat.Churn", &CHURN_ARGS, "churn");

    let threads = agent_threads(&measured.report);
    let churn: Vec<_> = threads
        .iter()
        .filter(|(name, _)| name.starts_with("churn-"))
        .collect();
    assert_eq!(
        churn.len() as i64,
        THREADS,
        "per_thread must list every churn thread once"
    );
    let merged_jni: i64 = churn.iter().map(|(_, t)| int_field(t, "jni_calls")).sum();
    let program_jni = program_jni_calls(&measured.result, "CallStaticIntMethodA");
    assert_eq!(
        merged_jni, program_jni,
        "JNI upcalls merged over the churn threads"
    );
    let agent_static_int_a = agent_jni_calls(&measured.report, "CallStaticIntMethodA");
    assert!(
        agent_static_int_a >= program_jni,
        "CallStaticIntMethodA: agent {agent_static_int_a} < program {program_jni}"
    );

    let plain = result_without_agent(&home, &[], "compat.Churn", &CHURN_ARGS);
    let growth = |r: &Json, first: &str, last: &str| int_field(r, last) - int_field(r, first);
    let fd_growth = growth(
        &measured.result,
        "fd_after_first_wave",
        "fd_after_last_wave",
    );
    let plain_fd_growth = growth(&plain, "fd_after_first_wave", "fd_after_last_wave");
    let rss_growth = growth(
        &measured.result,
        "rss_kib_after_first_wave",
        "rss_kib_after_last_wave",
    );
    let plain_rss_growth = growth(
        &plain,
        "rss_kib_after_first_wave",
        "rss_kib_after_last_wave",
    );
    eprintln!(
        "after the first wave -> after the last: open fds +{fd_growth} (no agent +{plain_fd_growth}), \
         RSS {rss_growth:+} KiB (no agent {plain_rss_growth:+} KiB)"
    );
    assert!(
        fd_growth <= plain_fd_growth + 2,
        "file descriptors leak: +{fd_growth} vs +{plain_fd_growth} without the agent"
    );
    // 950 threads ended after the first measurement: 16 MiB is over 17 KiB per thread.
    assert!(
        rss_growth <= plain_rss_growth + 16 * 1024,
        "memory grows with ended threads: {rss_growth:+} KiB vs {plain_rss_growth:+} KiB without the agent"
    );
}

#[test]
fn class_churn_rewritten_classes_unload_and_memory_stays_flat() {
    let home = jdk_home(17).unwrap();
    let args = ["4", "1500"]; // rounds, classes per round
                              // Class rewriting is wrap mode's (bind mode reads no class file).
                              // A fixed heap: otherwise its growth, which follows GC timing, moves the baseline by 7-25 MiB.
    let heap = ["-Xms256m", "-Xmx256m"];
    let measured = measure_with_options(
        &home,
        "j2n=wrap",
        &heap,
        "compat.ClassChurn",
        &args,
        Duration::from_secs(300),
    );
    let defined = int_field(&measured.result, "classes_defined");
    let rewritten = int_field(&measured.report, "classes_rewritten");
    assert!(
        rewritten >= defined,
        "classes_rewritten {rewritten} < the {defined} classes with natives defined"
    );
    let plain = result_without_agent(&home, &heap, "compat.ClassChurn", &args);
    let growth = |r: &Json| {
        int_field(r, "rss_kib_after_last_round") - int_field(r, "rss_kib_after_first_round")
    };
    let (with_agent, without) = (growth(&measured.result), growth(&plain));
    eprintln!(
        "class churn: {defined} classes defined, RSS {with_agent:+} KiB (no agent {without:+} KiB)"
    );
    // 4,500 rewritten classes unloaded after the first measurement: 16 MiB is 3.6 KiB per class.
    assert!(
        with_agent <= without + 16 * 1024,
        "memory grows with unloaded rewritten classes: {with_agent:+} KiB vs {without:+} KiB without the agent"
    );
}
