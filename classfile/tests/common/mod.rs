//! Shared helpers for the integration tests: finding the JDK, compiling Java and C, running tools.
//! Missing tools make the tests fail with a message, never pass silently.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The JDK under test: the workspace's test JDK (`NATIVEACCT_TEST_JAVA_HOME`, else OpenJDK 17).
pub fn jdk_home() -> PathBuf {
    test_support::java_home()
}

/// Feature version of the JDK under test, from its `release` file (`JAVA_VERSION="17.0.15"`).
pub fn jdk_feature() -> u32 {
    test_support::feature_of(&jdk_home())
}

pub fn jdk_tool(name: &str) -> PathBuf {
    jdk_home().join("bin").join(name)
}

/// `target/` of the workspace (found from the test executable, which lives in target/<profile>/deps).
pub fn target_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("CARGO_TARGET_DIR") {
        return PathBuf::from(dir);
    }
    let exe = std::env::current_exe().expect("current_exe");
    exe.ancestors()
        .find(|p| p.file_name().is_some_and(|n| n == "target"))
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target"))
}

/// A fresh scratch directory for one test.
pub fn scratch(test: &str) -> PathBuf {
    let dir = target_dir().join("nativeacct-classfile-tests").join(test);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create scratch dir");
    dir
}

pub fn run(cmd: &mut Command) -> Output {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    out
}

/// Runs and asserts success, returning stdout.
pub fn run_ok(cmd: &mut Command) -> String {
    let out = run(cmd);
    assert!(
        out.status.success(),
        "{cmd:?} failed with {}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Writes Java sources into `src` and compiles them into `classes`.
pub fn javac(dir: &Path, sources: &[(&str, &str)], extra: &[&str]) -> PathBuf {
    let src = dir.join("src");
    let classes = dir.join("classes");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::create_dir_all(&classes).unwrap();
    let mut cmd = Command::new(jdk_tool("javac"));
    cmd.args(extra).arg("-d").arg(&classes);
    for (name, text) in sources {
        let path = src.join(name);
        std::fs::write(&path, text).unwrap();
        cmd.arg(&path);
    }
    run_ok(&mut cmd);
    classes
}

/// Compiles C sources into a shared library with the JDK's JNI headers.
pub fn cc_shared(dir: &Path, lib_name: &str, c_source: &str) -> PathBuf {
    let jdk = jdk_home();
    let c_path = dir.join(format!("{lib_name}.c"));
    std::fs::write(&c_path, c_source).unwrap();
    let so = dir.join(format!("lib{lib_name}.so"));
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    run_ok(
        Command::new(cc)
            .args(["-shared", "-fPIC", "-O1", "-Wall", "-Werror"])
            .arg(format!("-I{}", jdk.join("include").display()))
            .arg(format!("-I{}", jdk.join("include/linux").display()))
            .arg("-o")
            .arg(&so)
            .arg(&c_path),
    );
    so
}

/// The tiny JVMTI agent that announces the native-method prefix (needed by every rewritten
/// class: the renamed natives keep the JNI symbol of the original name).
pub fn prefix_agent(dir: &Path) -> PathBuf {
    let source = include_str!("../support/prefix_agent.c");
    cc_shared(dir, "prefix_agent", source)
}

/// The offline rewriter built by cargo for this test run.
pub fn rewrite_tool() -> Command {
    Command::new(env!("CARGO_BIN_EXE_nativeacct-rewrite"))
}

/// java.base class files of the test JDK, extracted once with `jimage` and cached in target/.
pub fn java_base_dir() -> PathBuf {
    let jdk = jdk_home();
    let tag = jdk
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "jdk".into());
    let cache = target_dir().join("nativeacct-jimage").join(tag);
    let base = cache.join("java.base");
    if base.join("java/lang/Object.class").is_file() {
        return base;
    }
    let partial = cache.with_extension("partial");
    let _ = std::fs::remove_dir_all(&partial);
    std::fs::create_dir_all(&partial).unwrap();
    run_ok(
        Command::new(jdk_tool("jimage"))
            .arg("extract")
            .arg("--include")
            .arg("regex:/java.base/.*")
            .arg("--dir")
            .arg(&partial)
            .arg(jdk.join("lib/modules")),
    );
    let _ = std::fs::remove_dir_all(&cache);
    std::fs::rename(&partial, &cache).unwrap();
    base
}

/// Every file under `dir`, sorted.
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let entry = entry.unwrap();
            if entry.file_type().unwrap().is_dir() {
                stack.push(entry.path());
            } else {
                out.push(entry.path());
            }
        }
    }
    out.sort();
    out
}
