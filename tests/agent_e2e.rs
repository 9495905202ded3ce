//! End-to-end tests of the agent on a real JVM (JDK 17): exact crossing counts, the CPU split against
//! ground truth measured in the workload's own C code, identical program output, JDK natives, options.

#[path = "agent/support.rs"]
mod support;

use serde_json::Value;
use support::*;

const WORKERS: usize = 8;

/// Native time of the workers, agent vs ground truth, per worker and in aggregate, within 2 points
/// of their CPU time.
fn assert_split_matches(report: &Value, truth: &[WorkerTruth], label: &str) {
    assert_split_within(report, truth, label, 2.0);
}

/// Share of all CPU time the hypervisor stole from this VM while `f` ran (from /proc/stat), in %.
fn with_steal_pct<T>(f: impl FnOnce() -> T) -> (T, f64) {
    fn counters() -> (u64, u64) {
        let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
        let cpu: Vec<u64> = stat
            .lines()
            .next()
            .unwrap_or("")
            .split_whitespace()
            .skip(1)
            .filter_map(|v| v.parse().ok())
            .collect();
        (cpu.iter().sum(), cpu.get(7).copied().unwrap_or(0))
    }
    let (total0, steal0) = counters();
    let result = f();
    let (total1, steal1) = counters();
    let pct = 100.0 * (steal1 - steal0) as f64 / (total1 - total0).max(1) as f64;
    (result, pct)
}

fn assert_split_within(report: &Value, truth: &[WorkerTruth], label: &str, points: f64) {
    assert_eq!(truth.len(), WORKERS);
    assert_split_within_each(report, truth, label, points, points);
}

/// [`support::assert_workers_split_within`] for this workload, about 60 % native.
fn assert_split_within_each(
    report: &Value,
    truth: &[WorkerTruth],
    label: &str,
    per_thread: f64,
    total: f64,
) {
    let true_pct = assert_workers_split_within(report, truth, label, per_thread, total);
    assert!(
        (50.0..70.0).contains(&true_pct),
        "workload should be about 60 % native, is {true_pct:.2} %"
    );
}

/// The split is compared per thread on a 2-core machine: one timed workload at a time, so that the
/// tests of this binary do not preempt each other's workers (they run in parallel otherwise).
static TIMED: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn run_workload(
    dir_name: &str,
    options: &str,
    rounds: u32,
    reps: u32,
) -> (String, Value, Vec<WorkerTruth>) {
    let _one_at_a_time = TIMED.lock().unwrap_or_else(|e| e.into_inner());
    run_workers(dir_name, options, WORKERS, rounds, reps)
}

/// The workload with `workers` split workers; the caller holds `TIMED`.
fn run_workers(
    dir_name: &str,
    options: &str,
    workers: usize,
    rounds: u32,
    reps: u32,
) -> (String, Value, Vec<WorkerTruth>) {
    run_workers_under(None, &[], dir_name, options, workers, rounds, reps)
}

/// [`run_workers`] with perf_event_open denied (`perf_denied`: the errno, see
/// `test_support::deny_perf`) and extra JVM arguments.
fn run_workers_under(
    perf_denied: Option<&str>,
    jvm_args: &[&str],
    dir_name: &str,
    options: &str,
    workers: usize,
    rounds: u32,
    reps: u32,
) -> (String, Value, Vec<WorkerTruth>) {
    let classes = workload();
    let dir = scratch(dir_name);
    let truth = dir.join("truth.txt");
    let truth_arg = format!("-Dtruth={}", truth.display());
    let workers_arg = format!("-Dworkers={workers}");
    let mut all_jvm_args = vec![truth_arg.as_str(), workers_arg.as_str()];
    all_jvm_args.extend_from_slice(jvm_args);
    let (out, report) = run_with_report_under(
        perf_denied,
        options,
        &all_jvm_args,
        classes,
        &["Workload", &rounds.to_string(), &reps.to_string()],
        &dir,
    );
    (text(&out.stdout), report, read_truth(&truth))
}

#[test]
fn workload_counts_are_exact_and_split_matches_ground_truth() {
    check_exact_counts_and_split("bind");
}

#[test]
fn workload_counts_are_exact_and_split_matches_ground_truth_in_wrap_mode() {
    check_exact_counts_and_split("wrap");
}

fn check_exact_counts_and_split(j2n: &str) {
    let rounds = 20;
    let (stdout, report, truth) =
        run_workload(&format!("exact-{j2n}"), &format!("j2n={j2n}"), rounds, 1);
    assert_eq!(report["j2n"], j2n);
    assert!(
        stdout.contains("styles ok 93 constructed 3"),
        "every JNI style passed its arguments: {stdout}"
    );

    // Native-method calls, per method, exactly.
    assert_eq!(
        native_calls(&report, "Workload", "spin"),
        WORKERS as u64 * rounds as u64
    );
    assert_eq!(native_calls(&report, "Workload", "nest"), 10 * 6);
    assert_eq!(native_calls(&report, "Workload", "throwFromNative"), 7);
    assert_eq!(native_calls(&report, "Workload", "callJavaThatThrows"), 4);
    assert_eq!(native_calls(&report, "Workload", "callEveryStyle"), 1);
    assert_eq!(native_calls(&report, "Workload", "runAttachedThread"), 1);

    // Each of the 93 JNI functions was called at least once (exact differences: next test).
    let jni = jni_counts(&report);
    assert_eq!(jni.len(), 93);
    for (name, calls) in &jni {
        assert!(*calls >= 1, "{name} was not counted");
    }

    // Threads: the attached native thread, the daemon still in native at exit, nothing lost.
    // The attached thread burns 50 ms in C right after AttachCurrentThread, before its first upcall.
    let attached = thread(&report, "attached-native");
    assert_eq!(attached["jni_calls"], 25);
    let attached_native = attached["native_ns"].as_u64().unwrap();
    assert!(
        attached_native >= 48_000_000,
        "attached thread's native time: {attached_native} ns"
    );
    // The daemon is still inside one long native call at exit, with at least 100 ms of CPU in it
    // (the workload waits for that): its open interval is charged at VMDeath, not lost.
    let daemon = thread(&report, "daemon-spinner");
    assert_eq!(daemon["alive_at_exit"], true);
    // Its one call of the workload's native is still open, so no method row has it yet. Wrap mode
    // counts nothing else on that thread; bind mode also counts the JDK natives the thread ran first.
    assert_eq!(native_calls(&report, "Workload", "daemonSpin"), 0);
    let daemon_calls = daemon["native_calls"].as_u64().unwrap();
    if j2n == "wrap" {
        assert_eq!(daemon_calls, 1);
    } else {
        assert!(daemon_calls >= 1, "{daemon_calls}");
    }
    let daemon_native = daemon["native_ns"].as_u64().unwrap();
    assert!(
        daemon_native >= 100_000_000,
        "daemon native time lost: {daemon_native} ns"
    );
    assert_eq!(report["threads"], report["threads_merged"]);
    for w in 0..WORKERS {
        let t = thread(&report, &format!("worker-{w}"));
        assert_eq!(t["alive_at_exit"], false);
    }

    assert_split_matches(&report, &truth, &format!("clock=auto, j2n={j2n}"));
}

#[test]
fn jni_counts_are_exact_by_difference() {
    // Two runs that differ only in how often the JNI part repeats: every JNI function must differ by
    // exactly (REPS difference) x (calls per repetition); the JVM's own upcalls cancel out.
    let (_, one, _) = run_workload("reps1", "", 0, 1);
    let (_, three, _) = run_workload("reps3", "", 0, 3);
    let per_rep = |name: &str| -> u64 {
        match name {
            // nest(5) ten times (50 upcalls), the attached thread (25), and the style test (1).
            "CallStaticIntMethod" => 50 + 25 + 1,
            // callJavaThatThrows four times, and the style test.
            "CallStaticVoidMethod" => 4 + 1,
            _ => 1,
        }
    };
    for ((name, a), (name3, c)) in jni_counts(&one).iter().zip(jni_counts(&three).iter()) {
        assert_eq!(name, name3);
        assert_eq!(
            c - a,
            2 * per_rep(name),
            "{name}: {a} calls with REPS=1, {c} with REPS=3"
        );
    }
    assert_eq!(native_calls(&three, "Workload", "nest"), 3 * 60);
    assert_eq!(native_calls(&three, "Workload", "throwFromNative"), 3 * 7);
}

/// `timing=sampled`: no clock read at crossings, every crossing still counted exactly, and each
/// thread's exact CPU time split in proportion to its boundary samples on each side, with an
/// error bar. How close that comes to the ground truth is the sampler's accuracy, which this test
/// prints but does not hold to a bound: on this workload (native spins that read their thread's
/// CPU clock, a syscall, in a loop) the tick-driven samples read 37–66 % native for 60 % of exact
/// time, in exact timing too (see the README's caveat).
#[test]
fn timing_sampled_counts_exactly_and_splits_each_thread_by_its_samples() {
    const SAMPLED_WORKERS: usize = 2;
    let rounds = 60;
    let _one_at_a_time = TIMED.lock().unwrap_or_else(|e| e.into_inner());
    let (_, report, truth) = run_workers(
        "timing-sampled",
        "timing=sampled",
        SAMPLED_WORKERS,
        rounds,
        1,
    );
    assert_eq!(report["timing"], "sampled");
    assert_eq!(
        native_calls(&report, "Workload", "spin"),
        SAMPLED_WORKERS as u64 * rounds as u64
    );
    assert_eq!(native_calls(&report, "Workload", "nest"), 10 * 6);
    assert_eq!(native_calls(&report, "Workload", "throwFromNative"), 7);
    assert_eq!(thread(&report, "attached-native")["jni_calls"], 25);
    let cpu = report["bytecode_ns"].as_u64().unwrap() + report["native_ns"].as_u64().unwrap();
    let error = report["split_error95_ns"].as_u64().expect("an error bar");
    let error_pt = 100.0 * error as f64 / cpu as f64;
    eprintln!(
        "timing=sampled: {} samples, native share ±{error_pt:.2} pt (95 %)",
        report["boundary"]["samples"]
    );
    assert!(
        error_pt > 0.0 && error_pt < 25.0,
        "error bar {error_pt:.2} pt"
    );
    for WorkerTruth {
        name,
        cpu_ns: true_cpu,
        native_ns: true_native,
        ..
    } in &truth
    {
        let t = thread(&report, name);
        let (native, bytecode) = (
            t["native_ns"].as_u64().unwrap(),
            t["bytecode_ns"].as_u64().unwrap(),
        );
        let samples = &t["boundary_samples"];
        let count = |k: &str| samples[k].as_u64().unwrap();
        let native_samples =
            count("native_code") + count("jvm_in_native") + count("agent_in_native");
        let all =
            native_samples + count("java_code") + count("jvm_in_java") + count("agent_in_java");
        assert!(all > 20, "{name}: {all} samples");
        // The split is the samples' proportion, to the nanosecond.
        let expected = ((native + bytecode) as u128 * native_samples as u128 / all as u128) as u64;
        assert!(
            native.abs_diff(expected) <= 1,
            "{name}: native {native} ns, samples say {expected}"
        );
        // The thread's total is exact: its own CPU time, about what the workload measured.
        let pct = |a: u64, b: u64| 100.0 * a as f64 / b as f64;
        eprintln!(
            "timing=sampled: {name}: {:.1} % native from {all} samples, ground truth {:.1} %; total {} ms, workload's own {} ms",
            pct(native, native + bytecode),
            pct(*true_native, *true_cpu),
            (native + bytecode) / 1_000_000,
            true_cpu / 1_000_000
        );
        // (0.1 % for the last clock step: tsc-hybrid pays back steal at an exact read.)
        assert!(
            native + bytecode + true_cpu / 1000 >= *true_cpu,
            "{name}: the total lost time"
        );
    }
}

#[test]
fn split_matches_ground_truth_with_every_clock_but_tsc() {
    for clock in ["thread-cputime", "task-clock", "tsc-hybrid", "cycles"] {
        let ((_, report, truth), steal_pct) = with_steal_pct(|| {
            run_workload(&format!("clock-{clock}"), &format!("clock={clock}"), 10, 1)
        });
        eprintln!(
            "clock={clock}: {steal_pct:.2} % of CPU time stolen by the hypervisor during the run"
        );
        // `cycles` falls back where there is no PMU; the report says which clock ran.
        eprintln!("clock={clock} ran as {}", report["clock"]);
        assert_eq!(
            native_calls(&report, "Workload", "spin"),
            WORKERS as u64 * 10
        );
        assert_split_matches(&report, &truth, &format!("clock={clock}"));
    }
}

/// Oversubscribed: 4 workers and 2 CPU-bound processes outside the JVM on this (2-core) machine,
/// once per clock but `tsc`. Every worker's native share within 1 point of its ground truth, all
/// four together within 0.5.
#[test]
fn split_matches_ground_truth_per_thread_beside_cpu_hogs() {
    const HOG_WORKERS: usize = 4;
    const ROUNDS: u32 = 20;
    let _one_at_a_time = TIMED.lock().unwrap_or_else(|e| e.into_inner());
    workload();
    let _hogs = CpuHogs::start(2);
    for clock in ["thread-cputime", "task-clock", "tsc-hybrid", "cycles"] {
        let ((_, report, truth), steal_pct) = with_steal_pct(|| {
            run_workers(
                &format!("hogs-{clock}"),
                &format!("clock={clock}"),
                HOG_WORKERS,
                ROUNDS,
                1,
            )
        });
        let label = format!(
            "beside 2 CPU hogs, clock={clock} (ran as {})",
            report["clock"]
        );
        eprintln!("{label}: {steal_pct:.2} % of CPU time stolen by the hypervisor");
        assert_eq!(truth.len(), HOG_WORKERS);
        assert_eq!(
            native_calls(&report, "Workload", "spin"),
            (HOG_WORKERS as u32 * ROUNDS) as u64
        );
        assert_split_within_each(&report, &truth, &label, 1.0, 0.5);
    }
}

/// The report of a run with perf events denied: `clock=auto` picked tsc-gated and says why.
fn assert_gated_for(report: &Value, errno: &str, label: &str) {
    let reason = report["clock_reason"].as_str().unwrap_or_default();
    eprintln!("{label}: clock {} ({reason})", report["clock"]);
    assert_eq!(report["clock"], "tsc-gated", "{label}: {reason}");
    assert!(
        reason.contains(errno) && reason.contains("No perf events") && reason.contains("cost"),
        "{label}: the reason does not say why perf events were not used and what it costs: {reason}"
    );
}

/// Perf events denied by a seccomp filter (EPERM, as Docker's default profile does) and absent
/// (ENOSYS, as under gVisor): `clock=auto` runs tsc-gated, and every worker's native share is
/// within 1 point of its ground truth, quiet, beside 2 CPU hogs, and with natives that sleep 6 ×
/// as long as they spin.
#[test]
fn perf_denied_split_matches_ground_truth_quiet_beside_hogs_and_with_sleeping_natives() {
    const ROUNDS: u32 = 10;
    let _one_at_a_time = TIMED.lock().unwrap_or_else(|e| e.into_inner());
    workload();
    for errno in ["EPERM", "ENOSYS"] {
        let label = format!("perf denied ({errno}), quiet");
        let (_, report, truth) = run_workers_under(
            Some(errno),
            &[],
            &format!("denied-{errno}"),
            "",
            WORKERS,
            ROUNDS,
            1,
        );
        assert_gated_for(&report, errno, &label);
        assert_eq!(
            native_calls(&report, "Workload", "spin"),
            WORKERS as u64 * ROUNDS as u64
        );
        assert_split_within(&report, &truth, &label, 1.0);
    }
    // Natives that sleep 36 ms and then spin 6 ms: wall time 7 × their CPU.
    let label = "perf denied (EPERM), sleeping natives".to_string();
    let started = std::time::Instant::now();
    let (_, report, truth) = run_workers_under(
        Some("EPERM"),
        &["-Dsleepy=true"],
        "denied-sleepy",
        "",
        WORKERS,
        ROUNDS,
        1,
    );
    assert_gated_for(&report, "EPERM", &label);
    assert_eq!(
        native_calls(&report, "Workload", "sleepThenSpin"),
        WORKERS as u64 * ROUNDS as u64
    );
    assert!(
        started.elapsed() >= std::time::Duration::from_millis(7 * 6 * ROUNDS as u64),
        "the natives slept"
    );
    assert_split_within(&report, &truth, &label, 1.0);
    // Oversubscribed: 4 workers beside 2 CPU-bound processes on the 2 cores.
    const HOG_WORKERS: usize = 4;
    let _hogs = CpuHogs::start(2);
    for (errno, sleepy) in [("EPERM", false), ("EPERM", true), ("ENOSYS", false)] {
        let jvm_args: &[&str] = if sleepy { &["-Dsleepy=true"] } else { &[] };
        let label = format!("perf denied ({errno}), beside 2 CPU hogs, sleepy natives {sleepy}");
        let ((_, report, truth), steal_pct) = with_steal_pct(|| {
            run_workers_under(
                Some(errno),
                jvm_args,
                &format!("denied-hogs-{errno}-{sleepy}"),
                "",
                HOG_WORKERS,
                2 * ROUNDS,
                1,
            )
        });
        eprintln!("{label}: {steal_pct:.2} % of CPU time stolen by the hypervisor");
        assert_gated_for(&report, errno, &label);
        assert_eq!(truth.len(), HOG_WORKERS);
        assert_split_within_each(&report, &truth, &label, 1.0, 0.5);
    }
}

/// Natives that sleep 6 × as long as they spin count their CPU time, not their wall time, with
/// every clock `auto` can pick (cycles falls back where there is no PMU; tsc-gated is what auto
/// picks without perf events): every worker within 1 point of its ground truth.
#[test]
fn sleeping_natives_count_their_cpu_with_every_clock_auto_can_pick() {
    const ROUNDS: u32 = 5;
    let _one_at_a_time = TIMED.lock().unwrap_or_else(|e| e.into_inner());
    for clock in [
        "auto",
        "cycles",
        "tsc-hybrid",
        "tsc-gated",
        "thread-cputime",
    ] {
        let (_, report, truth) = run_workers_under(
            None,
            &["-Dsleepy=true"],
            &format!("sleepy-{clock}"),
            &format!("clock={clock}"),
            WORKERS,
            ROUNDS,
            1,
        );
        let label = format!(
            "sleeping natives, clock={clock} (ran as {})",
            report["clock"]
        );
        assert_eq!(
            native_calls(&report, "Workload", "sleepThenSpin"),
            WORKERS as u64 * ROUNDS as u64
        );
        assert_split_within(&report, &truth, &label, 1.0);
    }
}

#[test]
fn program_output_is_identical_with_and_without_the_agent() {
    let classes = workload();
    let plain = run_java(None, &["-Xverify:all"], classes, &["Workload", "1", "2"]);
    assert!(plain.status.success(), "{}", text(&plain.stderr));
    for j2n in ["bind", "wrap"] {
        let dir = scratch(&format!("identical-{j2n}"));
        let (with_agent, report) = run_with_report(
            &format!("j2n={j2n}"),
            &["-Xverify:all"],
            classes,
            &["Workload", "1", "2"],
            &dir,
        );
        assert_eq!(text(&plain.stdout), text(&with_agent.stdout), "j2n={j2n}");
        assert_eq!(report["j2n"], j2n);
        if j2n == "bind" {
            assert!(report["bind"]["methods_bound"].as_u64().unwrap() > 0);
            assert_eq!(report["classes_seen"], 0, "bind mode sees no class file");
        } else {
            assert!(report["classes_rewritten"].as_u64().unwrap() > 0);
        }
        // Nothing but the agent's own lines on stderr: the VM printed no warnings about our methods.
        assert_eq!(text(&plain.stderr), text(&with_agent.stderr), "j2n={j2n}");
    }
}

#[test]
fn jdk_file_and_zip_natives_and_app_natives_are_counted() {
    let dir = scratch("jdk-natives");
    javac_source(
        &dir,
        "JdkNatives",
        r#"
import java.io.*;
import java.util.zip.*;
public class JdkNatives {
    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[0]);
        File f = new File(args[1]);
        try (FileOutputStream out = new FileOutputStream(f)) {
            for (int i = 0; i < n; i++) out.write(new byte[100]);          // writeBytes x n
        }
        try (FileInputStream in = new FileInputStream(f)) {
            byte[] buf = new byte[100];
            for (int i = 0; i < n; i++) in.read(buf);                       // readBytes x n
        }
        byte[] data = new byte[4096];
        byte[] packed = new byte[8192];
        byte[] unpacked = new byte[4096];
        for (int i = 0; i < n; i++) {
            Deflater d = new Deflater();
            d.setInput(data); d.finish();
            int len = d.deflate(packed);                                   // one deflateBytesBytes
            d.end();
            Inflater inf = new Inflater();
            inf.setInput(packed, 0, len);
            inf.inflate(unpacked);                                         // one inflateBytesBytes
            inf.end();
        }
    }
}
"#,
    );
    let data = dir.join("data.bin");
    let data = data.to_str().unwrap();
    let (_, base) = run_with_report("", &[], &dir, &["JdkNatives", "0", data], &dir);
    let (_, run) = run_with_report("", &[], &dir, &["JdkNatives", "37", data], &dir);
    for (class, name) in [
        ("java/io/FileOutputStream", "writeBytes"),
        ("java/io/FileInputStream", "readBytes"),
        ("java/util/zip/Deflater", "deflateBytesBytes"),
        ("java/util/zip/Inflater", "inflateBytesBytes"),
    ] {
        let diff = native_calls(&run, class, name) - native_calls(&base, class, name);
        assert_eq!(diff, 37, "{class}.{name}");
    }
    // Deflater/Inflater init and end run once per iteration too.
    for (class, name) in [
        ("java/util/zip/Deflater", "init"),
        ("java/util/zip/Inflater", "init"),
    ] {
        let diff = native_calls(&run, class, name) - native_calls(&base, class, name);
        assert_eq!(diff, 37, "{class}.{name}");
    }
}

#[test]
fn javac_compiles_fifty_files_under_verify_all() {
    let dir = scratch("javac50");
    let src = dir.join("src/p");
    std::fs::create_dir_all(&src).unwrap();
    let mut files = Vec::new();
    for i in 0..50 {
        let next = (i + 1) % 50;
        let body = format!(
            "package p;\nimport java.util.*;\npublic class C{i} {{\n    public List<Integer> values() {{\n        List<Integer> l = new ArrayList<>();\n        for (int k = 0; k < {i}; k++) l.add(k * {next});\n        return l;\n    }}\n    public int link(C{next} other) {{ return other.values().size() + values().size(); }}\n}}\n"
        );
        let path = src.join(format!("C{i}.java"));
        std::fs::write(&path, body).unwrap();
        files.push(path.to_string_lossy().into_owned());
    }
    let out_dir = dir.join("out");
    let out_arg = out_dir.to_string_lossy().into_owned();
    let mut main = vec![
        "-m",
        "jdk.compiler/com.sun.tools.javac.Main",
        "-d",
        &out_arg,
    ];
    main.extend(files.iter().map(String::as_str));
    let (out, report) = run_with_report("", &["-Xverify:all"], &dir, &main, &dir);
    assert!(
        out.stderr.is_empty() || !text(&out.stderr).contains("error"),
        "{}",
        text(&out.stderr)
    );
    for i in 0..50 {
        assert!(
            out_dir.join(format!("p/C{i}.class")).exists(),
            "C{i}.class missing"
        );
    }
    let calls_in = |prefixes: &[&str]| -> u64 {
        report["native_methods"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| {
                prefixes
                    .iter()
                    .any(|p| m["class"].as_str().unwrap().starts_with(p))
            })
            .map(|m| m["calls"].as_u64().unwrap())
            .sum()
    };
    let zip = calls_in(&["java/util/zip/", "jdk/internal/jimage/"]);
    let file = calls_in(&[
        "java/io/File",
        "java/io/UnixFileSystem",
        "sun/nio/fs/",
        "sun/nio/ch/",
    ]);
    eprintln!("javac: {zip} zip/jimage native calls, {file} file native calls");
    assert!(zip > 0, "no zip natives counted");
    assert!(file > 0, "no file natives counted");
    assert_eq!(report["classes_failed"], 0);
}

#[test]
fn bad_options_stop_the_vm_before_main_with_one_line() {
    let classes = workload();
    for bad in [
        "bogus",
        "clock=wall",
        "format=xml",
        "mode=fast",
        "intrinsics=maybe",
        "quiet=yes",
        "file=",
    ] {
        let out = run_java(Some(bad), &[], classes, &["Workload", "0", "0"]);
        assert!(!out.status.success(), "{bad}: the VM started");
        // The JVM itself prints "Error occurred during initialization of VM" on stdout; main must not run.
        assert!(
            !text(&out.stdout).contains("done"),
            "{bad}: main ran: {}",
            text(&out.stdout)
        );
        let err = text(&out.stderr);
        let ours: Vec<&str> = err
            .lines()
            .filter(|l| l.starts_with("nativeacct:"))
            .collect();
        assert_eq!(ours.len(), 1, "{bad}: {err}");
    }
    let err = text(&run_java(Some("bogus"), &[], classes, &["Workload", "0", "0"]).stderr);
    assert!(err.contains("valid options: help, file, format"), "{err}");

    let help = run_java(Some("help"), &[], classes, &["Workload", "0", "0"]);
    assert!(help.status.success());
    assert!(text(&help.stderr).contains("clock=auto|cycles"));
    assert!(
        !text(&help.stdout).contains("clock=auto|cycles"),
        "help must not go to stdout"
    );

    let unwritable = run_java(
        Some("file=/proc/nonexistent/dir/r.json"),
        &[],
        classes,
        &["Workload", "0", "0"],
    );
    assert!(!unwritable.status.success());
    assert!(text(&unwritable.stderr).contains("cannot write file=/proc/nonexistent/dir/r.json"));
}

/// 10,000 short threads: every one merged, the Deflater calls exact, and past 8,192 threads the
/// least busy rows folded into `other_threads` with nothing lost.
#[test]
fn ten_thousand_short_threads_merge_exactly_and_fold_their_rows() {
    const THREADS: u64 = 10_000;
    let dir = scratch("churn-10k");
    javac_source(
        &dir,
        "ShortThreads",
        r#"
import java.util.zip.Deflater;
public class ShortThreads {
    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[0]);
        Thread[] running = new Thread[8];
        for (int t = 0; t < n; t++) {
            if (running[t % 8] != null) running[t % 8].join();
            Thread th = new Thread(() -> {
                Deflater d = new Deflater();
                d.setInput(new byte[64]);
                d.finish();
                d.deflate(new byte[256]);
                d.end();
            }, "short-" + t);
            running[t % 8] = th;
            th.start();
        }
        for (Thread th : running) if (th != null) th.join();
    }
}
"#,
    );
    let (_, report) = run_with_report("", &[], &dir, &["ShortThreads", &THREADS.to_string()], &dir);
    assert_eq!(report["threads"], report["threads_merged"]);
    let merged = report["threads_merged"].as_u64().unwrap();
    assert!(merged > THREADS, "{merged} threads merged");
    for name in ["init", "end"] {
        assert_eq!(
            native_calls(&report, "java/util/zip/Deflater", name),
            THREADS,
            "Deflater.{name}"
        );
    }
    let rows = report["per_thread"].as_array().unwrap();
    let other = &report["other_threads"];
    assert!(rows.len() < 8192, "{} rows kept", rows.len());
    let sum = |field: &str| -> u64 {
        rows.iter().map(|t| t[field].as_u64().unwrap()).sum::<u64>()
            + other[field].as_u64().unwrap()
    };
    assert_eq!(
        rows.len() as u64 + other["threads"].as_u64().unwrap(),
        merged
    );
    for field in ["native_calls", "jni_calls", "bytecode_ns", "native_ns"] {
        assert_eq!(sum(field), report[field].as_u64().unwrap(), "{field}");
    }
    assert!(
        rows.iter().any(|t| t["name"] == "main"),
        "the busiest thread keeps its row"
    );
}
