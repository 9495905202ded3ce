//! Shared helpers of the control-channel tests: build tests/control (Service.java, service.c),
//! run a Service JVM and drive it through its READY/go handshake, and run the launcher's
//! `dump`/`attach`/`detach` commands against it.
#![allow(dead_code)]

#[path = "../compat/support.rs"]
pub mod compat;

#[allow(unused_imports)]
pub use compat::{agent_path, feature_of, jdk_or_skip, repo_root};
use serde_json::Value as Json;
use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Output, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::sync::OnceLock;
use std::time::Duration;
pub use test_support::java_home;

/// The JDK features the tests run on, each when installed.
pub const FEATURES: [u32; 4] = [11, 17, 21, 25];

/// Service arguments of a short run: one phase of 100 ms of CPU, half of it in spin().
pub const ONE_SHORT_PHASE: [&str; 3] = ["1", "100", "50"];

/// `-agentpath:<agent>=file=<report><extra>`: the agent, writing its final report to `report`.
pub fn agent_to(report: &Path, extra: &str) -> String {
    format!(
        "-agentpath:{}=file={}{extra}",
        agent_path().display(),
        report.display()
    )
}

/// Compiled fixture: classes and libservice.so, in one directory every user can read.
pub fn fixture() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let dir = test_support::scratch_dir("control-tests", env!("CARGO_CRATE_NAME"));
        let java = repo_root().join("tests/control/Service.java");
        test_support::javac(&["--release", "11"], &[java], &dir);
        let c = repo_root().join("tests/control/service.c");
        test_support::gcc_jni(&[c], &dir.join("libservice.so"), &["-O2"]);
        dir
    })
}

/// A scratch directory for one run.
pub fn scratch(name: &str) -> PathBuf {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let dir = fixture()
        .join("runs")
        .join(format!("{}-{name}", NEXT.fetch_add(1, Ordering::Relaxed)));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

/// The launcher built with this test.
pub fn launcher() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_nativeacct"))
}

/// The worker's ground truth at a stop: its CPU, the part inside spin(), spin calls, upcalls.
#[derive(Clone, Copy, Debug, Default)]
pub struct Truth {
    pub cpu_ns: i64,
    pub native_ns: i64,
    pub calls: i64,
    pub upcalls: i64,
}

impl Truth {
    pub fn since(&self, earlier: &Truth) -> Truth {
        Truth {
            cpu_ns: self.cpu_ns - earlier.cpu_ns,
            native_ns: self.native_ns - earlier.native_ns,
            calls: self.calls - earlier.calls,
            upcalls: self.upcalls - earlier.upcalls,
        }
    }

    pub fn native_pct(&self) -> f64 {
        100.0 * self.native_ns as f64 / self.cpu_ns as f64
    }
}

/// A running Service JVM.
pub struct Service {
    pub child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    pub stdout_seen: Vec<String>,
    pub stderr_path: PathBuf,
    /// The last `STALL` values (ns), when started with "stall": the longest gap, and the longest
    /// time the staller was stopped (neither running nor waiting for a CPU).
    pub last_stall_ns: Option<(u64, u64)>,
}

impl Service {
    /// `java [prefix args] -cp fixture Service args...` with stdin/stdout piped.
    pub fn start(home: &Path, jvm_args: &[String], args: &[&str], dir: &Path) -> Service {
        Service::start_with_env(home, jvm_args, args, dir, &[])
    }

    /// As [`Service::start`], through `nativeacct [agent options] -- java ...`: [`Service::pid`] is
    /// then the launcher's.
    pub fn start_via_launcher(
        home: &Path,
        agent_options: &str,
        args: &[&str],
        dir: &Path,
    ) -> Service {
        let mut launcher = Command::new(launcher());
        launcher
            .env("NATIVEACCT_AGENT", agent_path())
            .current_dir(dir)
            .arg(agent_options)
            .arg("--")
            .arg(home.join("bin/java"));
        Service::spawn(launcher, home, &[], args, dir)
    }

    /// As [`Service::start`], with extra environment variables.
    pub fn start_with_env(
        home: &Path,
        jvm_args: &[String],
        args: &[&str],
        dir: &Path,
        env: &[(&str, &Path)],
    ) -> Service {
        let mut command = Command::new(home.join("bin/java"));
        for (key, value) in env {
            command.env(key, value);
        }
        Service::spawn(command, home, jvm_args, args, dir)
    }

    /// Start `command` (java, or the launcher with java) with the JVM arguments and the fixture.
    fn spawn(
        mut command: Command,
        home: &Path,
        jvm_args: &[String],
        args: &[&str],
        dir: &Path,
    ) -> Service {
        let stderr_path = dir.join("stderr.txt");
        command.args(jvm_args);
        if feature_of(home) >= 22 {
            command.arg("--enable-native-access=ALL-UNNAMED");
        }
        let mut child = command
            .arg(format!("-Djava.library.path={}", fixture().display()))
            .arg("-cp")
            .arg(fixture())
            .arg("Service")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(fs::File::create(&stderr_path).unwrap())
            .spawn()
            .expect("start java");
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        let stdin = child.stdin.take();
        Service {
            child,
            stdin,
            lines,
            stdout_seen: Vec::new(),
            stderr_path,
            last_stall_ns: None,
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn stderr(&self) -> String {
        fs::read_to_string(&self.stderr_path).unwrap_or_default()
    }

    /// Wait for the next `READY` line and return its truth.
    pub fn ready(&mut self) -> Truth {
        loop {
            let line = match self.lines.recv_timeout(Duration::from_secs(120)) {
                Ok(line) => line,
                Err(e) => panic!(
                    "no READY from the service ({e}); stdout so far {:?}; stderr:\n{}",
                    self.stdout_seen,
                    self.stderr()
                ),
            };
            self.stdout_seen.push(line.clone());
            if let Some(stall) = line.strip_prefix("STALL ") {
                let v: Vec<u64> = stall.split(' ').filter_map(|w| w.parse().ok()).collect();
                self.last_stall_ns = (v.len() == 2).then(|| (v[0], v[1]));
            }
            if let Some(rest) = line.strip_prefix("READY ") {
                let v: Vec<i64> = rest
                    .split(' ')
                    .map(|w| w.parse().expect("READY numbers"))
                    .collect();
                return Truth {
                    cpu_ns: v[1],
                    native_ns: v[2],
                    calls: v[3],
                    upcalls: v[4],
                };
            }
        }
    }

    /// Let the worker run its next phase.
    pub fn go(&mut self) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "go").unwrap();
        stdin.flush().unwrap();
    }

    /// Let the service finish and wait for it; its whole stdout.
    pub fn finish(mut self) -> (i32, Vec<String>, String) {
        self.go();
        drop(self.stdin.take());
        let status = self.child.wait().unwrap();
        while let Ok(line) = self.lines.recv_timeout(Duration::from_secs(5)) {
            self.stdout_seen.push(line);
        }
        let stderr = self.stderr();
        (
            status.code().unwrap_or(-1),
            std::mem::take(&mut self.stdout_seen),
            stderr,
        )
    }
}

impl Service {
    /// [`Service::finish`], asserting that the service exited 0; its stdout and stderr.
    pub fn finish_ok(self) -> (Vec<String>, String) {
        let (code, stdout, stderr) = self.finish();
        assert_eq!(code, 0, "stderr:\n{stderr}");
        (stdout, stderr)
    }

    /// Run one more phase, then [`Service::finish_ok`]: that phase's truth, stdout and stderr.
    pub fn finish_after_phase(mut self) -> (Truth, Vec<String>, String) {
        self.go();
        let truth = self.ready();
        let (stdout, stderr) = self.finish_ok();
        (truth, stdout, stderr)
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `nativeacct ARGS...`, in `dir`.
pub fn nativeacct(dir: &Path, args: &[&str]) -> Output {
    Command::new(launcher())
        .args(args)
        .env("NATIVEACCT_AGENT", agent_path())
        .current_dir(dir)
        .output()
        .expect("run nativeacct")
}

/// Run `nativeacct ARGS` and insist that it succeeded.
pub fn nativeacct_ok(dir: &Path, args: &[&str]) -> Output {
    let out = nativeacct(dir, args);
    assert!(
        out.status.success(),
        "nativeacct {args:?} failed: {}",
        stderr_of(&out)
    );
    out
}

/// What a finished command wrote to stderr.
pub fn stderr_of(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Run `nativeacct ARGS`, insist that it failed, and return what it said on stderr.
pub fn nativeacct_fails(dir: &Path, args: &[&str]) -> String {
    let out = nativeacct(dir, args);
    assert!(!out.status.success(), "nativeacct {args:?} succeeded");
    stderr_of(&out)
}

pub fn read_json(path: &Path) -> Json {
    let text =
        fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The report's row of thread `name`.
pub fn thread<'a>(report: &'a Json, name: &str) -> &'a Json {
    report["per_thread"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("no thread {name} in the report"))
}

pub fn u(v: &Json) -> i64 {
    v.as_i64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// Calls of native method `Service.NAME` in the report.
pub fn service_calls(report: &Json, name: &str) -> i64 {
    report["native_methods"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["class"] == "Service" && m["name"] == name)
        .map(|m| u(&m["calls"]))
        .sum()
}

/// The counts of a report that covers a window of the run (`what` names it): the worker's upcalls,
/// which are all the process's, and its spin() calls are the truth's.
pub fn assert_window_counts(report: &Json, truth: &Truth, what: &str) {
    let worker = thread(report, "worker");
    assert_eq!(u(&worker["jni_calls"]), truth.upcalls, "upcalls {what}");
    assert_eq!(
        u(&report["jni_calls"]),
        truth.upcalls,
        "only the worker calls up"
    );
    assert_eq!(
        service_calls(report, "spin"),
        truth.calls,
        "spin calls {what}"
    );
}

/// The thread's native share in percent.
pub fn native_pct(row: &Json) -> f64 {
    let native = u(&row["native_ns"]) as f64;
    100.0 * native / (native + u(&row["bytecode_ns"]) as f64)
}
