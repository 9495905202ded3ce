//! Every way a JVM ends short of SIGKILL leaves a parseable report with every thread that ran
//! merged: the end of main, System.exit from another thread, an uncaught exception, Runtime.halt,
//! SIGTERM, SIGINT, -XX:+ExitOnOutOfMemoryError, a StackOverflowError thrown inside a JNI upcall
//! (caught or not), and C exit() called inside a native method; a daemon thread is inside a
//! native call every time (tests/agent/ExitPaths.java).

#[path = "agent/support.rs"]
mod support;

use serde_json::Value;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use support::*;

const WORKERS: usize = 3;
const CALLS_PER_WORKER: u64 = 1000;

fn exit_paths() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    agent_fixture(&BUILT, "ExitPaths")
}

/// How the test ends the program once it printed "ready".
#[derive(Clone, Copy)]
enum Then {
    Wait,
    Signal(i32),
}

struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    report: Value,
}

/// Run `ExitPaths mode` with the agent writing `dir/r.json`, snapshots every 100 ms.
fn run_mode(mode: &str, jvm_args: &[&str], then: Then) -> Run {
    let dir = scratch(&format!("exit-{mode}"));
    let report = dir.join("r.json");
    let (code, stdout, stderr) =
        run_exit_paths(mode, &report, "snapshot=100ms", jvm_args, then, || {});
    let json = std::fs::read_to_string(&report)
        .unwrap_or_else(|e| panic!("{mode}: no report ({e}); stderr:\n{stderr}"));
    Run {
        code,
        stdout,
        stderr,
        report: serde_json::from_str(&json)
            .unwrap_or_else(|e| panic!("{mode}: report is not JSON ({e}): {json}")),
    }
}

/// Run `ExitPaths mode` with the agent writing `report`; `on_ready` runs when the program printed
/// "ready", before `then`. Returns the exit code, stdout and stderr.
fn run_exit_paths(
    mode: &str,
    report: &Path,
    options: &str,
    jvm_args: &[&str],
    then: Then,
    on_ready: impl FnOnce(),
) -> (Option<i32>, String, String) {
    let classes = exit_paths();
    let mut command = Command::new(java_home().join("bin/java"));
    // A shell without job control starts background jobs with SIGINT and SIGQUIT ignored, and a
    // JVM that inherits SIG_IGN keeps it: SIGINT would never end the program, and the test would
    // wait forever. The child gets the defaults back.
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut command, || {
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            libc::signal(libc::SIGQUIT, libc::SIG_DFL);
            Ok(())
        });
    }
    let mut child = command
        .arg(format!(
            // Only the fixture's natives: the threads' per-thread counts are then exact in bind
            // mode too, where the JDK's own natives (Thread.start0, ...) are counted as well.
            "-agentpath:{}=quiet,include=ExitPaths.*,file={},{options}",
            agent_path().display(),
            report.display()
        ))
        .args(jvm_args)
        .arg("-cp")
        .arg(classes)
        .arg(format!("-Djava.library.path={}", classes.display()))
        .args(["ExitPaths", mode])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run java");
    // Drained while the program runs: a report on stderr (when its file cannot be written) is
    // larger than a pipe holds, and the JVM would block writing it.
    let stderr = {
        let mut pipe = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = std::io::Read::read_to_end(&mut pipe, &mut bytes);
            bytes
        })
    };
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut seen = String::new();
    let mut on_ready = Some(on_ready);
    loop {
        let mut line = String::new();
        if stdout.read_line(&mut line).unwrap_or(0) == 0 {
            break;
        }
        seen.push_str(&line);
        if line.trim() == "ready" {
            if let Some(f) = on_ready.take() {
                f();
            }
            if let Then::Signal(signal) = then {
                // SAFETY: kill has no memory preconditions; the pid is our own child's.
                unsafe { libc::kill(child.id() as i32, signal) };
            }
            break;
        }
    }
    let rest = {
        let mut rest = String::new();
        let _ = std::io::Read::read_to_string(&mut stdout, &mut rest);
        rest
    };
    let status = child.wait().expect("wait for java");
    let stderr = stderr.join().expect("stderr reader");
    (status.code(), seen + &rest, text(&stderr))
}

/// The agent's stderr when it could not write `report`: one error line naming the path, then the
/// report as JSON.
fn report_from_stderr(what: &str, stderr: &str, report: &Path) -> Value {
    let errors: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("nativeacct: error:"))
        .collect();
    assert_eq!(errors.len(), 1, "{what}: {stderr}");
    assert!(
        errors[0].contains(&format!("could not write {}", report.display()))
            && errors[0].ends_with("the report follows on stderr as JSON"),
        "{what}: {}",
        errors[0]
    );
    let after = &stderr[stderr.find(errors[0]).unwrap() + errors[0].len()..];
    let json = &after[after.find('{').expect("JSON on stderr")..];
    serde_json::Deserializer::from_str(json)
        .into_iter::<Value>()
        .next()
        .expect("a JSON value")
        .unwrap_or_else(|e| panic!("{what}: the report on stderr is not JSON ({e})"))
}

/// Every thread merged; the workers' calls exact; the daemon charged while still in its native.
fn assert_every_thread_merged(mode: &str, report: &Value) {
    assert_eq!(report["threads"], report["threads_merged"], "{mode}");
    for w in 0..WORKERS {
        let t = thread(report, &format!("worker-{w}"));
        assert_eq!(t["native_calls"], CALLS_PER_WORKER, "{mode}: worker-{w}");
        assert_eq!(t["alive_at_exit"], false, "{mode}: worker-{w}");
    }
    let daemon = thread(report, "in-native");
    assert_eq!(daemon["alive_at_exit"], true, "{mode}");
    assert_eq!(daemon["native_calls"], 1, "{mode}");
    assert!(
        daemon["native_ns"].as_u64().unwrap() > 0,
        "{mode}: the daemon's open native call was not charged"
    );
    assert_eq!(
        native_calls(report, "ExitPaths", "tick"),
        WORKERS as u64 * CALLS_PER_WORKER,
        "{mode}"
    );
}

/// A final report written at VMDeath.
fn assert_final_at_vm_death(mode: &str, run: &Run) {
    assert_eq!(run.report["partial"], false, "{mode}: {}", run.stderr);
    assert_eq!(run.report["written_at"], "vm_death", "{mode}");
    assert!(run.report["snapshot_at_ns"].is_null(), "{mode}");
    assert_every_thread_merged(mode, &run.report);
}

#[test]
fn normal_exit_system_exit_uncaught_and_halt_reach_vm_death() {
    for (mode, code) in [
        ("normal", 0),
        ("exit-other-thread", 7),
        ("uncaught", 1),
        ("halt", 5),
    ] {
        let run = run_mode(mode, &[], Then::Wait);
        assert_eq!(run.code, Some(code), "{mode}: {}", run.stderr);
        assert_final_at_vm_death(mode, &run);
    }
}

#[test]
fn sigterm_sigint_and_sighup_reach_vm_death() {
    for (signal, code) in [
        (libc::SIGTERM, 143),
        (libc::SIGINT, 130),
        (libc::SIGHUP, 129),
    ] {
        let mode = format!("signal {signal}");
        let run = run_mode("signal", &[], Then::Signal(signal));
        assert_eq!(run.code, Some(code), "{mode}: {}", run.stderr);
        assert_final_at_vm_death(&mode, &run);
    }
}

#[test]
fn stack_overflow_inside_a_jni_upcall() {
    let run = run_mode("stack-overflow", &[], Then::Wait);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_final_at_vm_death("stack-overflow", &run);
    let entries: u64 = run
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("overflowed, descend entered "))
        .and_then(|l| l.strip_suffix(" times"))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no overflow: {}", run.stdout));
    assert!(entries > 100, "the recursion overflowed after {entries}");
    // The wrapper counts a call at its begin; the overflow may strike between that and the native
    // itself (once), so the count is the entries or one more.
    let counted = native_calls(&run.report, "ExitPaths", "descend");
    assert!(
        (entries..=entries + 1).contains(&counted),
        "descend entered {entries} times, counted {counted}"
    );

    let run = run_mode("stack-overflow-uncaught", &[], Then::Wait);
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert!(run.stderr.contains("StackOverflowError"), "{}", run.stderr);
    assert_final_at_vm_death("stack-overflow-uncaught", &run);
}

#[test]
fn exit_called_inside_a_native_method_writes_the_report_at_process_exit() {
    let run = run_mode("native-exit", &[], Then::Wait);
    assert_eq!(run.code, Some(9), "{}", run.stderr);
    assert_eq!(run.report["partial"], false);
    assert_eq!(run.report["written_at"], "process_exit");
    assert_every_thread_merged("native-exit", &run.report);
}

#[test]
fn exit_on_out_of_memory_error_leaves_a_report() {
    // The program waits 600 ms (six snapshot periods) after its workers ended, then fills the heap.
    let run = run_mode(
        "oom",
        &["-XX:+ExitOnOutOfMemoryError", "-Xmx64m", "-Dsettle=600"],
        Then::Wait,
    );
    assert_eq!(run.code, Some(3), "{}", run.stderr);
    assert!(
        run.stdout
            .contains("Terminating due to java.lang.OutOfMemoryError"),
        "{}",
        run.stdout
    );
    // JDK 17 ends this way through exit(), which runs the agent's exit handler; JDK 21 and later
    // through _exit(), which runs nothing: the last snapshot is the report.
    match run.report["written_at"].as_str() {
        Some("process_exit") => assert_eq!(run.report["partial"], false),
        Some("snapshot") => {
            assert_eq!(run.report["partial"], true);
            let at = run.report["snapshot_at_ns"].as_u64().unwrap();
            assert!(at > 0 && at <= run.report["wall_ns"].as_u64().unwrap());
        }
        other => panic!("written at {other:?}"),
    }
    assert_every_thread_merged("oom", &run.report);
}

/// Kills the child if the test fails before it ended, so that no JVM outlives the test.
struct KillOnDrop(Option<std::process::Child>);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if let Some(child) = &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

#[test]
fn a_snapshot_is_written_during_the_run_and_replaced_by_the_final_report() {
    let classes = exit_paths();
    let dir = scratch("exit-snapshot-during");
    let report = dir.join("r.json");
    let mut child = Command::new(java_home().join("bin/java"))
        .arg(format!(
            "-agentpath:{}=quiet,include=ExitPaths.*,file={},snapshot=50ms",
            agent_path().display(),
            report.display()
        ))
        .arg("-cp")
        .arg(classes)
        .arg(format!("-Djava.library.path={}", classes.display()))
        .args(["ExitPaths", "signal"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run java");
    // Drained while the program runs: a report on stderr (when its file cannot be written) is
    // larger than a pipe holds, and the JVM would block writing it.
    let stderr = {
        let mut pipe = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = std::io::Read::read_to_end(&mut pipe, &mut bytes);
            bytes
        })
    };
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut guard = KillOnDrop(Some(child));
    let mut line = String::new();
    while line.trim() != "ready" {
        line.clear();
        assert!(stdout.read_line(&mut line).unwrap() > 0, "no ready line");
    }
    // The workers have ended and the daemon is in its native: a snapshot taken from now on has
    // them all (an earlier one may lack the daemon).
    let snapshot = (0..200)
        .find_map(|_| {
            std::thread::sleep(std::time::Duration::from_millis(25));
            let json = std::fs::read_to_string(&report).ok()?;
            let value: Value = serde_json::from_str(&json).expect("a snapshot is whole JSON");
            let complete = value["per_thread"]
                .as_array()?
                .iter()
                .filter(|t| {
                    t["name"]
                        .as_str()
                        .is_some_and(|n| n.starts_with("worker-") || n == "in-native")
                })
                .count()
                == WORKERS + 1;
            complete.then_some(value)
        })
        .expect("no snapshot with every thread within 5 s");
    assert_eq!(snapshot["partial"], true);
    assert_eq!(snapshot["written_at"], "snapshot");
    assert!(snapshot["snapshot_at_ns"].as_u64().unwrap() > 0);
    assert_every_thread_merged("snapshot", &snapshot);
    let mut child = guard.0.take().unwrap();
    // SAFETY: kill has no memory preconditions; the pid is our own child's.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let status = child.wait().unwrap();
    let stderr = text(&stderr.join().expect("stderr reader"));
    assert_eq!(status.code(), Some(143));
    let last: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(
        last["partial"], false,
        "written at {} ({} ns, wall {} ns): {}",
        last["written_at"], last["snapshot_at_ns"], last["wall_ns"], stderr
    );
    assert_eq!(last["written_at"], "vm_death");
}

/// Unmounts a tmpfs when the test ends, however it ends.
struct Mounted(PathBuf);

impl Drop for Mounted {
    fn drop(&mut self) {
        // Lazily: a file still open there (the JVM's report writer, a child not yet reaped) would
        // make a plain umount fail and leave the mount behind the test.
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

#[test]
fn a_full_disk_gives_one_error_line_and_the_report_on_stderr() {
    let dir = scratch("exit-full-disk");
    let tiny = dir.join("tiny");
    std::fs::create_dir_all(&tiny).unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=64k", "tmpfs"])
        .arg(&tiny)
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        eprintln!("SKIPPED: mounting a 64 KiB tmpfs needs root");
        return;
    }
    let _unmount = Mounted(tiny.clone());
    // Fill it: the report's temporary file can be created (an empty file needs no block), but
    // not written.
    let mut filler = std::fs::File::create(tiny.join("filler")).unwrap();
    while std::io::Write::write_all(&mut filler, &[0u8; 4096]).is_ok() {}
    drop(filler);
    let report = tiny.join("r.json");
    let (code, _, stderr) =
        run_exit_paths("normal", &report, "format=json", &[], Then::Wait, || {});
    assert_eq!(code, Some(0), "the exit code changed: {stderr}");
    assert!(stderr.contains("No space left on device"), "{stderr}");
    assert!(!report.exists());
    let from_stderr = report_from_stderr("full disk", &stderr, &report);
    assert_final_at_vm_death(
        "full disk",
        &Run {
            code,
            stdout: String::new(),
            stderr,
            report: from_stderr,
        },
    );
}

#[test]
fn a_report_directory_removed_during_the_run_gives_the_report_on_stderr() {
    let dir = scratch("exit-removed-dir");
    let sub = dir.join("reports");
    std::fs::create_dir_all(&sub).unwrap();
    let report = sub.join("r.json");
    let (code, _, stderr) = run_exit_paths(
        "signal",
        &report,
        "format=json",
        &[],
        Then::Signal(libc::SIGTERM),
        || std::fs::remove_dir_all(&sub).unwrap(),
    );
    assert_eq!(code, Some(143), "the exit code changed: {stderr}");
    let from_stderr = report_from_stderr("removed directory", &stderr, &report);
    assert_eq!(from_stderr["written_at"], "vm_death");
    assert_every_thread_merged("removed directory", &from_stderr);
}
