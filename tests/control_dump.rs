//! `nativeacct dump PID [--reset]` against real JVMs (JDK 11/17/21/25 where installed): a dump
//! with --reset after the first phase of a ground-truth workload, a dump after the second covers
//! only the second (exact JNI upcall and native call counts, split within 1 point of the truth
//! measured in the workload's own native code), and the VM-death report still covers everything.

#[path = "control/support.rs"]
mod support;

use support::*;

/// CPU ms of each phase of the worker, and its native share per phase (%).
const PHASE_MS: &str = "2000";
const SHARES: &str = "20,60,30";

fn check_window(feature: u32) {
    let Some(home) = jdk_or_skip(feature, "dump --reset") else {
        return;
    };
    let dir = scratch(&format!("window-{feature}"));
    let final_json = dir.join("final.json");
    let agent = agent_to(&final_json, ",quiet");
    let mut service = Service::start(&home, &[agent], &["3", PHASE_MS, SHARES], &dir);
    let pid = service.pid().to_string();
    let t0 = service.ready();
    service.go();
    let t1 = service.ready();
    nativeacct_ok(
        &dir,
        &["dump", &pid, "--reset", "file=first", "format=json"],
    );
    service.go();
    let t2 = service.ready();
    nativeacct_ok(
        &dir,
        &[
            "dump",
            &pid,
            "file=second",
            "format=json+text+csv+html+hgrm",
        ],
    );
    service.go();
    let t3 = service.ready();
    let (stdout, stderr) = service.finish_ok();
    assert!(
        stdout.last().is_some_and(|l| l.starts_with("DONE")),
        "{stdout:?}"
    );
    // The dumps wrote nothing to the program's stderr (quiet: the agent says nothing else either).
    assert!(stderr.trim().is_empty(), "stderr: {stderr}");

    // First dump: the whole run so far.
    let first = read_json(&dir.join("first"));
    assert_eq!(first["written_at"], "dump");
    assert_eq!(first["partial"], true);
    assert!(first["window_start_ns"].is_null());
    let worker = thread(&first, "worker");
    assert_eq!(worker["alive_at_exit"], true, "a live thread is marked");
    assert_eq!(u(&worker["jni_calls"]), t1.upcalls - t0.upcalls);
    assert_eq!(service_calls(&first, "spin"), t1.calls);

    // Second dump: the window since the reset only.
    let second = read_json(&dir.join("second.json"));
    for ext in ["txt", "csv", "html", "native.hgrm"] {
        assert!(dir.join(format!("second.{ext}")).is_file(), "second.{ext}");
    }
    assert_eq!(second["written_at"], "dump");
    assert_eq!(
        u(&second["window_start_ns"]),
        u(&first["snapshot_at_ns"]),
        "the window starts at the reset"
    );
    let window_wall = u(&second["wall_ns"]);
    assert_eq!(
        window_wall,
        u(&second["snapshot_at_ns"]) - u(&first["snapshot_at_ns"])
    );
    let truth = t2.since(&t1);
    assert_window_counts(&second, &truth, "in the window");
    let worker = thread(&second, "worker");
    let cpu = u(&worker["bytecode_ns"]) + u(&worker["native_ns"]);
    let cpu_error = (cpu - truth.cpu_ns).abs() as f64 / truth.cpu_ns as f64;
    let (measured, expected) = (native_pct(worker), truth.native_pct());
    println!(
        "JDK {feature}: window cpu {cpu} ns (truth {}), native {measured:.2} % (truth {expected:.2} %), whole-run truth {:.2} %",
        truth.cpu_ns,
        t3.native_pct()
    );
    assert!(
        cpu_error < 0.05,
        "the window's worker CPU {cpu} ns is not the phase's {} ns",
        truth.cpu_ns
    );
    assert!(
        (measured - expected).abs() <= 1.0,
        "window split {measured:.2} % vs truth {expected:.2} %"
    );
    let overall = u(&second["native_ns"]) as f64
        / (u(&second["native_ns"]) + u(&second["bytecode_ns"])) as f64
        * 100.0;
    assert!(
        (overall - expected).abs() <= 1.0,
        "window split of all threads {overall:.2} % vs truth {expected:.2} %"
    );
    // The window's JNI boundary: the worker's parts add up to its window CPU, come from samples
    // taken in the window, and the dump's CSV carries the dump's JSON numbers exactly.
    let parts = [
        "java_code",
        "jvm_in_java",
        "native_code",
        "jvm_in_native",
        "agent_in_thread",
    ];
    let b = &worker["boundary"];
    let sum: i64 = parts.iter().map(|p| u(&b[format!("{p}_ns")])).sum();
    assert_eq!(sum, cpu, "the worker's parts add up to its window CPU: {b}");
    assert!(u(&b["samples"]) > 0, "samples in the window: {b}");
    let csv = std::fs::read_to_string(dir.join("second.csv")).unwrap();
    let row: Vec<&str> = csv
        .lines()
        .find(|l| l.starts_with("thread,,worker,"))
        .unwrap_or_else(|| panic!("no worker row in\n{csv}"))
        .split(',')
        .collect();
    assert_eq!(row[11], b["samples"].to_string());
    for (i, p) in parts.iter().enumerate() {
        assert_eq!(row[12 + i], b[format!("{p}_ns")].to_string(), "{p}");
        assert_eq!(
            row[17 + i],
            b["error95_ns"][format!("{p}_ns")].to_string(),
            "{p}"
        );
    }
    let text = std::fs::read_to_string(dir.join("second.txt")).unwrap();
    assert!(text.contains("a sampling profiler would call"), "{text}");
    let process_cpu = u(&second["process"]["cpu_ns"]);
    assert!(
        process_cpu < truth.cpu_ns * 13 / 10,
        "the window's process CPU {process_cpu} ns covers more than the window"
    );

    // The final report: the whole run.
    let last = read_json(&final_json);
    assert_eq!(last["written_at"], "vm_death");
    assert!(last["window_start_ns"].is_null());
    let worker = thread(&last, "worker");
    assert_eq!(u(&worker["jni_calls"]), t3.upcalls);
    assert_eq!(service_calls(&last, "spin"), t3.calls);
    let (measured, expected) = (native_pct(worker), t3.native_pct());
    assert!(
        (measured - expected).abs() <= 1.0,
        "whole-run split {measured:.2} % vs truth {expected:.2} %"
    );
    assert!(u(&last["wall_ns"]) > window_wall);
}

#[test]
fn dump_reset_window_jdk17() {
    check_window(17);
}

#[test]
fn dump_reset_window_other_jdks() {
    for feature in FEATURES.into_iter().filter(|&f| f != 17) {
        check_window(feature);
    }
}

/// With `stacks=`, a dump's collapsed stacks carry the Java callers sampled so far.
#[test]
fn dump_has_the_sampled_stacks_so_far() {
    let home = java_home();
    let dir = scratch("stacks");
    let agent = agent_to(&dir.join("final"), ",stacks=every,quiet");
    let mut service = Service::start(&home, &[agent], &["1", "200", "50"], &dir);
    let pid = service.pid().to_string();
    service.ready();
    service.go();
    let t1 = service.ready();
    nativeacct_ok(&dir, &["dump", &pid, "file=now", "format=collapsed"]);
    let collapsed = std::fs::read_to_string(dir.join("now")).unwrap();
    let spin: Vec<&str> = collapsed
        .lines()
        .filter(|l| l.contains("Service.spin"))
        .collect();
    assert!(
        spin.iter()
            .any(|l| l.contains("Service.lambda$main") && l.contains(';')),
        "spin with its Java callers: {spin:?}"
    );
    service.finish_ok();
    // The dump did not take the samples away from the final report.
    let last = read_json(&dir.join("final.json"));
    assert_eq!(service_calls(&last, "spin"), t1.calls);
    let final_collapsed = std::fs::read_to_string(dir.join("final.collapsed")).unwrap();
    assert!(final_collapsed.contains("Service.lambda$main"));
}
