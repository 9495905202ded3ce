//! Helpers of the `tests/compat_*.rs` integration tests (issue 4) over the workspace's test support
//! (JDKs, agent, compilers, timed runs): build the Java programs and their JNI library, and read the
//! agent's JSON report and the programs' own `RESULT {...}` line.
//!
//! Ground truth always comes from the programs (tests/compat/java, tests/compat/c), never from the agent.
#![allow(dead_code, unused_imports)] // each test binary uses a part

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

pub use test_support::{agent_path, feature_of, jdk_home, jdk_or_skip, repo_root, Run};

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
        let work = test_support::scratch_dir("compat-tests", env!("CARGO_CRATE_NAME"));
        let classes = work.join("classes");
        let lib = work.join("lib");
        fs::create_dir_all(&lib).unwrap();
        let java_dir = repo_root().join("tests/compat/java/compat");
        let mut sources: Vec<PathBuf> = fs::read_dir(&java_dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "java"))
            .collect();
        sources.sort();
        test_support::javac(&["--release", "11"], &sources, &classes);
        test_support::gcc_jni(
            &[repo_root().join("tests/compat/c/compat_natives.c")],
            &lib.join("libcompat.so"),
            &["-O2"],
        );
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
    test_support::run_java_timed(home, args, &programs().work.join("runs"), limit, tick)
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
    let file = format!("file={},format=json,quiet", report.display());
    test_support::agent_arg(&test_support::join_options(&[&file, extra]))
}

/// A program run with the agent: the run, the agent's report, and the program's own counts.
pub struct Measured {
    pub run: Run,
    pub report: Json,
    pub result: Json,
}

/// Runs a compat program under the agent with extra `agent_options` (e.g. `j2n=wrap`; "" for
/// none) and asserts that it exited 0 and that both the agent's report and the program's RESULT
/// line exist.
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

/// [`measure_with_options`] with no extra options and a 300 s limit, asserting that the agent's
/// counts are the program's (`what` names the run in the failure and in the line that says so).
pub fn measure_exact(
    home: &Path,
    jvm_flags: &[&str],
    main_class: &str,
    args: &[&str],
    what: &str,
) -> Measured {
    let limit = Duration::from_secs(300);
    let measured = measure_with_options(home, "", jvm_flags, main_class, args, limit);
    assert_exact(&measured, what);
    measured
}

/// The program's own result from a run with `jvm_flags` and without the agent, which must exit 0.
pub fn result_without_agent(
    home: &Path,
    jvm_flags: &[&str],
    main_class: &str,
    args: &[&str],
) -> Json {
    let run = run_java(
        home,
        &program_args(home, jvm_flags, main_class, args),
        Duration::from_secs(300),
    );
    assert_eq!(
        run.code,
        Some(0),
        "{main_class} without the agent: {}",
        run.describe()
    );
    program_result(&run.stdout)
}

/// Asserts that [`count_mismatches`] finds nothing, and says so on stderr.
pub fn assert_exact(measured: &Measured, what: &str) {
    let problems = count_mismatches(measured);
    assert!(
        problems.is_empty(),
        "{what}: counts differ:\n{}",
        problems.join("\n")
    );
    eprintln!("{what}: exact counts ({:.1} s)", measured.run.seconds);
}

/// The program's `RESULT {...}` line.
pub fn program_result(stdout: &str) -> Json {
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix("RESULT "))
        .unwrap_or_else(|| panic!("program printed no RESULT line; stdout:\n{stdout}"));
    parse_json(line).unwrap_or_else(|e| panic!("RESULT is not JSON ({e}): {line}"))
}

/// The agent report's list `key`; panics, naming the keys it has, when there is none.
fn agent_list<'a>(report: &'a Json, key: &str) -> &'a Vec<Json> {
    report.get(key).and_then(Json::as_array).unwrap_or_else(|| {
        panic!(
            "agent report has no '{key}' list (keys: {:?})",
            report.keys()
        )
    })
}

/// The agent's per-method native-call counts keyed "pkg/Class.name(descriptor)".
pub fn agent_native_counts(report: &Json) -> BTreeMap<String, i64> {
    let mut counts = BTreeMap::new();
    for entry in agent_list(report, "native_methods") {
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
    agent_list(report, "per_thread")
        .iter()
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

/// The agent's count of calls of JNI function `function` (0 when it saw none).
pub fn agent_jni_calls(report: &Json, function: &str) -> i64 {
    report
        .get("jni_calls_by_function")
        .expect("report has jni_calls_by_function")
        .get(function)
        .and_then(Json::as_i64)
        .unwrap_or(0)
}

/// The program's own count of calls of JNI function `function`.
pub fn program_jni_calls(result: &Json, function: &str) -> i64 {
    int_field(result.get("jni_calls_by_function").unwrap(), function)
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
