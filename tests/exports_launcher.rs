//! The `nativeacct` launcher (issue 3): runs `java` with the agent found next to itself, passes the
//! exit code through, prints the report paths, and refuses commands that are not a Java launcher.

#[path = "agent/support.rs"]
mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use support::*;

fn launcher() -> PathBuf {
    let exe = PathBuf::from(env!("CARGO_BIN_EXE_nativeacct"));
    // The launcher looks for the agent in its own directory; cargo builds both into target/<profile>/.
    assert!(
        exe.with_file_name("libnativeacct.so").exists(),
        "libnativeacct.so is not next to {}",
        exe.display()
    );
    exe
}

fn run_launcher(dir: &Path, args: &[&str]) -> Output {
    let java_bin = java_home().join("bin");
    let path = format!(
        "{}:{}",
        java_bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    Command::new(launcher())
        .args(args)
        .current_dir(dir)
        .env("PATH", path)
        .output()
        .expect("run the launcher")
}

#[test]
fn java_version_runs_with_the_agent_and_reports_its_paths() {
    let dir = scratch("launcher-version");
    let out = run_launcher(
        &dir,
        &[
            "quiet",
            "file=v",
            "format=json+csv",
            "--",
            "java",
            "-version",
        ],
    );
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("openjdk version") || err.contains("java version"),
        "{err}"
    );
    assert!(err.contains("nativeacct: report v.json"), "{err}");
    assert!(err.contains("nativeacct: report v.csv"), "{err}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("v.json")).unwrap()).unwrap();
    assert_eq!(report["tool"], "nativeacct");
    assert!(
        report["bind"]["methods_bound"].as_u64().unwrap() > 0,
        "the agent was loaded and bound natives"
    );

    // Defaults: no file= gives nativeacct-<pid>.json and .html in the working directory.
    let out = run_launcher(&dir, &["quiet", "--", "java", "-version"]);
    assert!(out.status.success());
    let err = text(&out.stderr);
    let html = err
        .lines()
        .find_map(|l| {
            l.strip_prefix("nativeacct: report ")
                .filter(|p| p.ends_with(".html"))
        })
        .unwrap_or_else(|| panic!("no HTML path printed: {err}"));
    assert!(
        html.starts_with("nativeacct-") && dir.join(html).exists(),
        "{html}"
    );

    // A JDK's bin/java by absolute path works too.
    let java = java_home().join("bin/java");
    let out = run_launcher(
        &dir,
        &["quiet,file=abs", "--", java.to_str().unwrap(), "-version"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        dir.join("abs").exists(),
        "file= alone writes JSON to exactly that path"
    );
}

#[test]
fn commands_that_are_not_java_are_refused() {
    let dir = scratch("launcher-refuse");
    for command in [
        &["ls"][..],
        &["/bin/ls", "-l"],
        &["javac", "-version"],
        &["sh", "-c", "java -version"],
    ] {
        let mut args = vec!["--"];
        args.extend_from_slice(command);
        let out = run_launcher(&dir, &args);
        assert_eq!(out.status.code(), Some(2), "{command:?} was not refused");
        assert!(
            out.stdout.is_empty(),
            "{command:?} ran: {}",
            text(&out.stdout)
        );
        let err = text(&out.stderr);
        assert!(err.contains("is not a Java launcher"), "{err}");
        assert_eq!(err.lines().count(), 1, "one clear line: {err}");
    }
    let out = run_launcher(&dir, &["java", "-version"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("missing '--'"));
    let out = run_launcher(&dir, &["format=xml", "--", "java", "-version"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("format=xml"),
        "bad options are refused before java starts"
    );
}

#[test]
fn exit_code_and_output_pass_through() {
    let dir = scratch("launcher-exit");
    javac_source(
        &dir,
        "Exit",
        "public class Exit { public static void main(String[] a) { System.out.println(\"out \" + a[0]); System.exit(Integer.parseInt(a[0])); } }\n",
    );
    for code in [0, 3, 42] {
        let code_arg = code.to_string();
        let out = run_launcher(
            &dir,
            &["quiet,file=e", "--", "java", "-cp", ".", "Exit", &code_arg],
        );
        assert_eq!(out.status.code(), Some(code), "{}", text(&out.stderr));
        assert_eq!(
            text(&out.stdout),
            format!("out {code}\n"),
            "the program's stdout is untouched"
        );
    }
    // A JVM that fails to start (unknown main class) gives java's own exit code, 1.
    let out = run_launcher(
        &dir,
        &["quiet,file=f", "--", "java", "-cp", ".", "NoSuchClass"],
    );
    assert_eq!(out.status.code(), Some(1));
}
