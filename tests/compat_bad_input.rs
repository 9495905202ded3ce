//! Issue 4, bad input: every option with a malformed value, and unknown options, stop the JVM with
//! a non-zero exit and a one-line error before `main` runs; an unwritable `file=` is reported on
//! stderr at start-up, not lost at exit.

#[path = "compat/support.rs"]
mod support;

use std::fs;
use std::process::{Command, Stdio};
use std::time::Duration;
use support::*;

/// (options, text that the error line must contain)
const MALFORMED: &[(&str, &str)] = &[
    ("help=yes", "help"),
    ("quiet=yes", "quiet"),
    ("file=", "file"),
    ("format=xml", "xml"),
    ("format=", "format"),
    ("prefix=bad/prefix", "bad/prefix"),
    ("prefix=", "prefix"),
    ("include=", "include"),
    ("include=java/io/*::java/util/*", "include"),
    ("exclude=", "exclude"),
    ("intrinsics=maybe", "maybe"),
    ("intrinsics=", "intrinsics"),
    ("clock=sundial", "sundial"),
    ("clock=", "clock"),
    ("mode=xyz", "xyz"),
    ("mode=", "mode"),
];

/// Options that are not options: the error must name the valid ones.
const UNKNOWN: &[&str] = &["bogus=1", "fiel=/tmp/x.json", "quiet,,format=json", "Quiet"];
const VALID_NAMES: &[&str] = &[
    "file",
    "format",
    "prefix",
    "include",
    "exclude",
    "intrinsics",
    "clock",
    "quiet",
    "mode",
];

fn run_with_options(options: &str) -> Run {
    let home = jdk_home(17).unwrap();
    let flag = format!("-agentpath:{}={options}", agent_path().display());
    run_java(
        &home,
        &program_args(&home, &[&flag], "compat.Known", &["0", "1", "0"]),
        Duration::from_secs(60),
    )
}

fn assert_rejected_before_main(options: &str, must_contain: &[&str]) {
    let run = run_with_options(options);
    assert!(
        run.code.is_some_and(|c| c != 0),
        "'{options}' must give a non-zero exit: {}",
        run.describe()
    );
    assert!(
        !run.stdout.contains("RESULT"),
        "'{options}': main ran: {}",
        run.stdout
    );
    let lines: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.to_lowercase().contains("nativeacct"))
        .collect();
    let error_lines: Vec<&&str> = lines
        .iter()
        .filter(|l| must_contain.iter().all(|t| l.contains(t)))
        .collect();
    assert_eq!(
        error_lines.len(),
        1,
        "'{options}': want exactly one nativeacct stderr line containing {must_contain:?}; stderr:\n{}",
        run.stderr
    );
}

#[test]
fn malformed_option_values_stop_the_jvm_before_main() {
    for (options, token) in MALFORMED {
        assert_rejected_before_main(options, &[token]);
    }
}

#[test]
fn unknown_options_are_one_line_naming_the_valid_ones() {
    for options in UNKNOWN {
        assert_rejected_before_main(options, VALID_NAMES);
    }
}

#[test]
fn the_same_options_well_formed_are_accepted() {
    let report = scratch("ok.json");
    let options = format!(
        "file={},format=json,prefix=$wellformed$,include=compat/*:java/io/*,exclude=java/util/zip/*,\
         intrinsics=skip,clock=thread-cputime,mode=ipa,quiet",
        report.display()
    );
    let run = run_with_options(&options);
    assert_eq!(run.code, Some(0), "well-formed options: {}", run.describe());
    assert!(
        run.stdout.contains("RESULT"),
        "main must run: {}",
        run.describe()
    );
    assert!(report.exists(), "report not written");
}

/// Runs with stdout and stderr into one file so that the order of the agent's error and main's
/// output can be checked.
fn run_merged(options: &str) -> (Option<i32>, String) {
    let home = jdk_home(17).unwrap();
    let flag = format!("-agentpath:{}={options}", agent_path().display());
    let merged = scratch("merged.txt");
    let file = fs::File::create(&merged).unwrap();
    let status = Command::new(home.join("bin/java"))
        .args(program_args(
            &home,
            &[&flag],
            "compat.Known",
            &["0", "1", "0"],
        ))
        .stdin(Stdio::null())
        .stdout(file.try_clone().unwrap())
        .stderr(file)
        .status()
        .unwrap();
    (status.code(), fs::read_to_string(&merged).unwrap())
}

#[test]
fn unwritable_report_file_is_reported_at_start_up() {
    let directory = scratch("a-directory");
    fs::create_dir_all(&directory).unwrap();
    let cases = [
        "/nonexistent-nativeacct-dir/sub/report.json".to_string(),
        directory.display().to_string(), // a directory is not a writable file
    ];
    for path in cases {
        let (code, output) = run_merged(&format!("file={path},format=json,quiet"));
        let error_at = output
            .lines()
            .position(|l| l.contains(&path) && l.to_lowercase().contains("nativeacct"));
        let Some(error_at) = error_at else {
            panic!("file={path}: no nativeacct line naming the path at start-up (exit {code:?}):\n{output}")
        };
        match output.lines().position(|l| l.starts_with("RESULT")) {
            Some(main_at) => assert!(
                error_at < main_at,
                "file={path}: reported only after main ran:\n{output}"
            ),
            None => assert!(
                code.is_some_and(|c| c != 0),
                "file={path}: main did not run but exit was 0:\n{output}"
            ),
        }
    }
}
