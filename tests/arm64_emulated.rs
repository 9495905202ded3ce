//! The arm64 build of the agent on an arm64 JDK 17 under qemu-user: exact native-method and JNI
//! upcall counts (every JNI call style, `va_list` forms included), the CPU split against the
//! workload's own CLOCK_THREAD_CPUTIME_ID measurement, the clock's fallback when perf_event_open
//! is missing, and transparency (stack traces, reflection, a 20-argument mixed native, 255-slot
//! natives, a frame-pointer walk through the trampoline's frame record).
//!
//! These tests need what `scripts/build-arm64` installs and builds (the cross compiler, qemu, the
//! agent for arm64 and the JDK root), so they are `#[ignore]`d in the ordinary suite and run by
//! `scripts/test-arm64` (`cargo test --release --test arm64_emulated -- --ignored`). Fixtures are
//! compiled with aarch64-linux-gnu-gcc and the host's javac (class files are portable).
//!
//! Environment: `NATIVEACCT_ARM64_ROOT` (default `target/arm64-root`), `NATIVEACCT_ARM64_AGENT`
//! (default `target/aarch64-unknown-linux-gnu/release/libnativeacct.so`).

#[path = "agent/support.rs"]
mod support;

#[path = "bind/wide.rs"]
mod wide;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use support::{described, native_calls, repo_root, text, WorkerTruth};

/// Split workers of the workload: two, as the machine has two cores and emulation is slow.
const WORKERS: usize = 2;

/// What runs arm64 code here.
struct Arm64 {
    root: PathBuf,
    java_home: PathBuf,
    agent: PathBuf,
}

fn arm64() -> &'static Arm64 {
    static FOUND: OnceLock<Arm64> = OnceLock::new();
    FOUND.get_or_init(|| {
        let root = std::env::var_os("NATIVEACCT_ARM64_ROOT")
            .map(PathBuf::from)
            .unwrap_or_else(|| repo_root().join("target/arm64-root"));
        let agent = std::env::var_os("NATIVEACCT_ARM64_AGENT")
            .map(PathBuf::from)
            .unwrap_or_else(|| {
                repo_root().join("target/aarch64-unknown-linux-gnu/release/libnativeacct.so")
            });
        let java_home = root.join("usr/lib/jvm/java-17-openjdk-arm64");
        for (path, what) in [
            (&java_home.join("bin/java"), "the arm64 JDK 17"),
            (&agent, "the arm64 agent"),
        ] {
            assert!(
                path.exists(),
                "{what} is missing at {} (run scripts/build-arm64)",
                path.display()
            );
        }
        Arm64 {
            root,
            java_home,
            agent,
        }
    })
}

/// aarch64-linux-gnu-gcc `flags` + `sources` into the arm64 shared library `out`, against the
/// arm64 JDK's JNI headers.
fn gcc_arm64(sources: &[PathBuf], out: &Path, flags: &[&str]) {
    let include = arm64().java_home.join("include");
    let status = Command::new("aarch64-linux-gnu-gcc")
        .args(flags)
        .args(["-shared", "-fPIC", "-Wall", "-Werror", "-o"])
        .arg(out)
        .arg(format!("-I{}", include.display()))
        .arg(format!("-I{}", include.join("linux").display()))
        .args(sources)
        .args(["-lpthread", "-ldl"])
        .status()
        .expect("cannot run aarch64-linux-gnu-gcc (scripts/build-arm64 installs it)");
    assert!(
        status.success(),
        "aarch64-linux-gnu-gcc failed for {sources:?}"
    );
}

/// The arm64 `java` under qemu, C1 only (the fastest setting under emulation), with the agent
/// when `agent_options` is given, the classpath and library path at `class_dir`.
fn java(agent_options: Option<&str>, jvm_args: &[&str], class_dir: &Path, main: &[&str]) -> Output {
    let a = arm64();
    let mut cmd = Command::new("qemu-aarch64-static");
    cmd.arg("-L")
        .arg(&a.root)
        .arg(a.java_home.join("bin/java"))
        .arg("-XX:TieredStopAtLevel=1");
    if let Some(options) = agent_options {
        let mut arg = format!("-agentpath:{}", a.agent.display());
        if !options.is_empty() {
            arg.push('=');
            arg.push_str(options);
        }
        cmd.arg(arg);
    }
    cmd.args(jvm_args)
        .arg("-cp")
        .arg(class_dir)
        .arg(format!("-Djava.library.path={}", class_dir.display()))
        .args(main);
    let out = cmd.output().expect("cannot run qemu-aarch64-static");
    assert!(
        out.status.success(),
        "arm64 java with {agent_options:?} {main:?} failed: {}",
        described(&out)
    );
    out
}

/// Runs with the agent writing its JSON report to `dir/report.json`; returns stdout and the report.
fn java_with_report(
    options: &str,
    jvm_args: &[&str],
    class_dir: &Path,
    main: &[&str],
    dir: &Path,
) -> (String, Value) {
    let report = dir.join("report.json");
    let _ = std::fs::remove_file(&report);
    let options = format!("quiet,file={},{options}", report.display());
    let out = java(
        Some(options.trim_end_matches(',')),
        jvm_args,
        class_dir,
        main,
    );
    let json = std::fs::read_to_string(&report).expect("the agent wrote no report");
    (
        text(&out.stdout),
        serde_json::from_str(&json).expect("the report is JSON"),
    )
}

/// `tests/agent/Workload.java` with its C side built for arm64.
fn workload() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let dir = test_support::fixture_dir("arm64-tests", "workload");
        let src = repo_root().join("tests/agent");
        gcc_arm64(
            &[src.join("workload.c")],
            &dir.join("libworkload.so"),
            &["-O2"],
        );
        support::javac(&[src.join("Workload.java")], &dir);
        dir
    })
}

/// `tests/bind/Transparency.java` and the generated `Wide` natives, built for arm64.
fn transparency() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let dir = test_support::fixture_dir("arm64-tests", "transparency");
        let (c, java) = wide::transparency_sources(&repo_root(), &dir);
        gcc_arm64(
            &c,
            &dir.join("libtransparency.so"),
            &wide::TRANSPARENCY_CFLAGS,
        );
        support::javac_with(&["--release", "11"], &java, &dir);
        dir
    })
}

fn run_workload(name: &str, rounds: u32, reps: u32) -> (String, Value, Vec<WorkerTruth>) {
    let dir = support::scratch(&format!("arm64-{name}"));
    let truth = dir.join("truth.txt");
    let (stdout, report) = java_with_report(
        "",
        &[
            &format!("-Dtruth={}", truth.display()),
            &format!("-Dworkers={WORKERS}"),
        ],
        workload(),
        &["Workload", &rounds.to_string(), &reps.to_string()],
        &dir,
    );
    (stdout, report, support::read_truth(&truth))
}

/// Each worker's native time within 3 points of what it measured itself, and all of them together;
/// each one's total between its window's CPU and its life's (see `assert_workers_split_within`).
fn assert_split_within_3_points(report: &Value, truth: &[WorkerTruth], label: &str) {
    assert_eq!(truth.len(), WORKERS);
    let true_pct = support::assert_workers_split_within(report, truth, label, 3.0, 3.0);
    assert!(
        (35.0..85.0).contains(&true_pct),
        "the workload should be mostly native, is {true_pct:.2} %"
    );
}

#[test]
#[ignore = "needs scripts/build-arm64; run by scripts/test-arm64"]
fn counts_are_exact_and_the_split_matches_under_qemu() {
    let rounds = 10;
    let (one_out, one, one_truth) = run_workload("reps1", rounds, 1);
    let (three_out, three, three_truth) = run_workload("reps3", rounds, 3);

    for (label, stdout, report) in [("REPS=1", &one_out, &one), ("REPS=3", &three_out, &three)] {
        // Every one of the 93 Call*/NewObject* styles passed its 12 mixed arguments through the
        // wrappers, the `...` and `va_list` forms included.
        assert!(
            stdout.contains("styles ok 93 constructed 3"),
            "{label}: {stdout}"
        );
        assert_eq!(report["j2n"], "bind", "{label}");
        assert_eq!(report["unmatched_transitions"], 0, "{label}");
        // qemu-user has no perf_event_open (ENOSYS): auto picks tsc-gated, which needs no perf
        // event, on CNTVCT_EL0, and says why.
        assert_eq!(report["clock"], "tsc-gated", "{label}");
        let reason = report["clock_reason"].as_str().unwrap();
        assert!(
            reason.contains("ENOSYS") && reason.contains("CNTVCT_EL0"),
            "{label}: {reason}"
        );
        assert_eq!(
            native_calls(report, "Workload", "spin"),
            WORKERS as u64 * u64::from(rounds),
            "{label}"
        );
        assert_eq!(
            native_calls(report, "Workload", "callJavaThatThrows") % 4,
            0
        );
        let jni = support::jni_counts(report);
        assert_eq!(jni.len(), 93);
        for (name, calls) in &jni {
            assert!(*calls >= 1, "{label}: {name} was not counted");
        }
        assert_eq!(
            support::thread(report, "daemon-spinner")["alive_at_exit"],
            true
        );
    }
    for (calls_one, name) in [
        (60, "nest"),
        (7, "throwFromNative"),
        (4, "callJavaThatThrows"),
        (1, "callEveryStyle"),
        (1, "runAttachedThread"),
    ] {
        assert_eq!(native_calls(&one, "Workload", name), calls_one, "{name}");
        assert_eq!(
            native_calls(&three, "Workload", name),
            3 * calls_one,
            "{name}"
        );
    }
    // Upcalls, per JNI function, exactly: the two runs differ by two repetitions.
    let per_rep = |name: &str| -> u64 {
        match name {
            "CallStaticIntMethod" => 50 + 25 + 1,
            "CallStaticVoidMethod" => 4 + 1,
            _ => 1,
        }
    };
    for ((name, a), (name3, c)) in support::jni_counts(&one)
        .iter()
        .zip(support::jni_counts(&three).iter())
    {
        assert_eq!(name, name3);
        assert_eq!(
            c - a,
            2 * per_rep(name),
            "{name}: {a} with REPS=1, {c} with REPS=3"
        );
    }
    assert_eq!(support::thread(&one, "attached-native")["jni_calls"], 25);

    assert_split_within_3_points(&one, &one_truth, "REPS=1");
    assert_split_within_3_points(&three, &three_truth, "REPS=3");
}

#[test]
#[ignore = "needs scripts/build-arm64; run by scripts/test-arm64"]
fn the_program_sees_the_same_with_and_without_the_agent_under_qemu() {
    let dir = transparency();
    let plain = text(&java(None, &[], dir, &["Transparency"]).stdout);
    assert!(
        plain.contains("agree true") && plain.contains("at Transparency.callBack(Native Method)"),
        "{plain}"
    );
    for shape in ["ints", "longs", "doubles"] {
        assert!(
            plain
                .lines()
                .any(|l| l.contains(shape) && l.contains("true")),
            "{shape} did not pass its 255 slots intact: {plain}"
        );
    }
    let bound = text(&java(Some("quiet"), &[], dir, &["Transparency"]).stdout);
    assert_eq!(plain, bound, "the program saw the agent");

    // A frame-pointer walk from inside a native passes the trampoline's frame record (x29/x30).
    let depth_of = |stdout: &str| -> usize {
        stdout
            .lines()
            .find_map(|l| l.strip_prefix("frames to Java: "))
            .and_then(|d| d.parse::<usize>().ok())
            .unwrap_or_else(|| panic!("the walk did not reach the code cache: {stdout}"))
    };
    let plain_walk = text(&java(None, &[], dir, &["Transparency", "framewalk"]).stdout);
    let bound_walk = text(&java(Some("quiet"), &[], dir, &["Transparency", "framewalk"]).stdout);
    let plain_depth = depth_of(&plain_walk);
    assert_eq!(depth_of(&bound_walk), plain_depth + 1, "{bound_walk}");
    assert!(
        bound_walk.contains(&format!("frame {plain_depth}: libnativeacct.so")),
        "{bound_walk}"
    );
}

#[test]
#[ignore = "needs scripts/build-arm64; run by scripts/test-arm64"]
fn calls_are_counted_exactly_in_both_modes_under_qemu() {
    let dir = transparency();
    let n: u64 = 20_000;
    for jvm_args in [&["-Xint"][..], &[][..]] {
        let scratch = support::scratch(&format!("arm64-count-{}", jvm_args.len()));
        let (stdout, report) = java_with_report(
            "",
            jvm_args,
            dir,
            &["Transparency", "count", &n.to_string()],
            &scratch,
        );
        assert!(stdout.starts_with(&format!("count {n} ")), "{stdout}");
        assert_eq!(
            native_calls(&report, "Transparency", "add"),
            n,
            "{jvm_args:?}"
        );
        assert_eq!(
            native_calls(&report, "Transparency", "not"),
            n,
            "{jvm_args:?}"
        );
        assert_eq!(report["unmatched_transitions"], 0);
    }
    // j2n=wrap: the rewritten classes' helper natives count the same calls.
    let scratch = support::scratch("arm64-count-wrap");
    let (stdout, report) = java_with_report(
        "j2n=wrap",
        &[],
        dir,
        &["Transparency", "count", &n.to_string()],
        &scratch,
    );
    assert!(stdout.starts_with(&format!("count {n} ")), "{stdout}");
    assert_eq!(report["j2n"], "wrap");
    assert_eq!(native_calls(&report, "Transparency", "add"), n);
    assert_eq!(native_calls(&report, "Transparency", "not"), n);
    // RegisterNatives, a shared C function and a re-bind.
    let n: u64 = 5_000;
    let scratch = support::scratch("arm64-registered");
    let (stdout, report) = java_with_report(
        "",
        &[],
        dir,
        &["Transparency", "registered", &n.to_string()],
        &scratch,
    );
    assert_eq!(
        stdout,
        format!(
            "registered {n} sharedA {} sharedB {} rebound before {n} after {}\n",
            10 * n,
            20 * n,
            2 * n
        )
    );
    assert_eq!(native_calls(&report, "Transparency", "sharedA"), n);
    assert_eq!(native_calls(&report, "Transparency", "sharedB"), n);
    assert_eq!(native_calls(&report, "Transparency", "rebound"), 2 * n);
}

#[test]
#[ignore = "needs scripts/build-arm64; run by scripts/test-arm64"]
fn the_counter_clocks_name_cntvct_and_note_its_resolution_under_qemu() {
    let dir = transparency();
    let n: u64 = 20_000;
    // clock=tsc reads CNTVCT_EL0 at the rate CNTFRQ_EL0 states (62.5 MHz under qemu).
    let scratch = support::scratch("arm64-clock-tsc");
    let (_, report) = java_with_report(
        "clock=tsc",
        &[],
        dir,
        &["Transparency", "count", &n.to_string()],
        &scratch,
    );
    assert_eq!(report["clock"], "tsc");
    assert_eq!(report["tsc_hz"], 62_500_000);
    let reason = report["clock_reason"].as_str().unwrap();
    assert!(
        reason.contains("CNTVCT_EL0 62.500 MHz from CNTFRQ_EL0")
            && reason.contains("constant rate by the architecture")
            && !reason.contains("TSC"),
        "{reason}"
    );
    assert_eq!(native_calls(&report, "Transparency", "add"), n);
    let notes: Vec<&str> = report["notes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let note = notes
        .iter()
        .find(|note| note.contains("CNTVCT_EL0 counter ticks at 62.500 MHz (16.0 ns per tick)"))
        .unwrap_or_else(|| panic!("no coarse-counter note: {notes:?}"));
    eprintln!("note: {note}");
    // clock=cycles is not offered on arm64, and says why before it falls back.
    let scratch = support::scratch("arm64-clock-cycles");
    let (_, report) = java_with_report(
        "clock=cycles",
        &[],
        dir,
        &["Transparency", "count", "10"],
        &scratch,
    );
    assert_eq!(report["clock"], "tsc-gated");
    let reason = report["clock_reason"].as_str().unwrap();
    assert!(
        reason.contains("CNTVCT_EL0 does not tick at the core clock on aarch64"),
        "{reason}"
    );
}

/// Native calls of `Transparency.add` in a dump written by `launcher` (the command, then its
/// arguments) for `pid`; None while the JVM's control socket is not up yet.
fn dumped_add_calls(launcher: &[PathBuf], pid: u32, file: &Path) -> Option<u64> {
    let _ = std::fs::remove_file(file);
    let out = Command::new(&launcher[0])
        .args(&launcher[1..])
        .arg("dump")
        .arg(pid.to_string())
        .arg(format!("file={}", file.display()))
        .arg("format=json")
        .output()
        .expect("run the launcher");
    if !out.status.success() {
        return None;
    }
    let report: Value = serde_json::from_str(&std::fs::read_to_string(file).ok()?).ok()?;
    assert_eq!(report["partial"], true);
    Some(native_calls(&report, "Transparency", "add"))
}

/// The emulated JVM counting `Transparency.add` calls until killed, with the agent (and these
/// options) loaded at start-up or not.
fn counting_jvm(a: &Arm64, dir: &Path, agent_options: Option<&str>) -> std::process::Child {
    let mut command = Command::new("qemu-aarch64-static");
    command
        .arg("-L")
        .arg(&a.root)
        .arg(a.java_home.join("bin/java"))
        .arg("-XX:TieredStopAtLevel=1");
    if let Some(options) = agent_options {
        command.arg(format!("-agentpath:{}={options}", a.agent.display()));
    }
    command
        .arg("-cp")
        .arg(dir)
        .arg(format!("-Djava.library.path={}", dir.display()))
        .args(["Transparency", "count", "1000000000"])
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("start the arm64 JVM")
}

#[test]
#[ignore = "needs scripts/build-arm64; run by scripts/test-arm64"]
fn the_launcher_dumps_an_emulated_jvm() {
    let a = arm64();
    let dir = transparency();
    let mut jvm = counting_jvm(a, dir, Some("quiet"));
    let scratch = support::scratch("arm64-dump");
    // The x86-64 launcher of this build, and the arm64 one under qemu: the protocol is the same.
    let launchers = [
        vec![PathBuf::from(env!("CARGO_BIN_EXE_nativeacct"))],
        vec![
            PathBuf::from("qemu-aarch64-static"),
            PathBuf::from("-L"),
            a.root.clone(),
            a.agent.with_file_name("nativeacct"),
        ],
    ];
    let mut seen = Vec::new();
    for (index, launcher) in launchers.iter().enumerate() {
        let file = scratch.join(format!("dump-{index}.json"));
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        let calls = loop {
            // The socket is up from VMInit on, before main makes its first call.
            match dumped_add_calls(launcher, jvm.id(), &file) {
                Some(calls) if calls > seen.last().copied().unwrap_or(0) => break calls,
                _ => {}
            }
            assert!(
                std::time::Instant::now() < deadline,
                "{launcher:?} could not dump the emulated JVM, with more calls than {seen:?}, within 60 s"
            );
            std::thread::sleep(std::time::Duration::from_millis(500));
        };
        seen.push(calls);
    }
    let _ = jvm.kill();
    let _ = jvm.wait();
    assert!(
        seen[0] > 0 && seen[1] > seen[0],
        "add calls in the two dumps: {seen:?}"
    );
}

#[test]
#[ignore = "needs scripts/build-arm64; run by scripts/test-arm64"]
fn the_arm64_launcher_attaches_to_an_emulated_jvm() {
    let a = arm64();
    let dir = transparency();
    let mut jvm = counting_jvm(a, dir, None);
    let scratch = support::scratch("arm64-attach");
    // The attach starts with a SIGQUIT, which kills a VM that has not installed its handler yet:
    // wait for the thread that serves it ("Signal Dispatcher", 15 characters in comm).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let has_dispatcher = |pid: u32| {
        std::fs::read_dir(format!("/proc/{pid}/task"))
            .into_iter()
            .flatten()
            .flatten()
            .any(|task| {
                std::fs::read_to_string(task.path().join("comm"))
                    .is_ok_and(|comm| comm.trim() == "Signal Dispatch")
            })
    };
    while !has_dispatcher(jvm.id()) {
        assert!(
            std::time::Instant::now() < deadline,
            "the emulated JVM started no Signal Dispatcher within 60 s"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    // Retry the attach until HotSpot's attach listener answers.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let out = Command::new("qemu-aarch64-static")
            .arg("-L")
            .arg(&a.root)
            .arg(a.agent.with_file_name("nativeacct"))
            .args(["attach", &jvm.id().to_string()])
            .current_dir(&scratch)
            .output()
            .expect("run the arm64 launcher");
        if out.status.success() {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "attach did not succeed within 60 s: {}",
            described(&out)
        );
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
    let host_launcher = [PathBuf::from(env!("CARGO_BIN_EXE_nativeacct"))];
    let file = scratch.join("dump.json");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let calls = loop {
        match dumped_add_calls(&host_launcher, jvm.id(), &file) {
            Some(calls) if calls > 0 => break calls,
            _ => {}
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no dump with counted calls within 60 s of the attach"
        );
        std::thread::sleep(std::time::Duration::from_millis(500));
    };
    let _ = jvm.kill();
    let _ = jvm.wait();
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    // The natives bound before the attach were covered: `add` was among them.
    assert!(
        report["attach"]["natives_at_attach"].as_u64().unwrap_or(0) > 0,
        "{}",
        report["attach"]
    );
    assert!(calls > 0);
}
