//! The `nativeacct-rewrite` tool: flag errors, and the `.jar` and single `.class` modes end to end.

mod common;

use common::*;
use std::io::Read;
use std::process::Command;

const HELLO: &str = "public class Hello {\n\
    static { System.loadLibrary(\"hello\"); }\n\
    static native int twice(int x);\n\
    public static void main(String[] a) {\n\
        int r = twice(21) + twice(1);\n\
        System.out.println(r + \" \" + Count.begins + \" \" + Count.ends);\n\
    }\n\
}\n";

const COUNT: &str = "public class Count {\n\
    public static int begins, ends;\n\
    public static void begin(int id) { begins++; }\n\
    public static void end(int id) { ends++; }\n\
}\n";

const HELLO_C: &str = "#include <jni.h>\n\
JNIEXPORT jint JNICALL Java_Hello_twice(JNIEnv *env, jclass cls, jint x) {\n\
    (void)env; (void)cls;\n\
    return 2 * x;\n\
}\n";

const HELPER_FLAGS: [&str; 6] = [
    "--helper-owner",
    "Count",
    "--helper-begin",
    "begin",
    "--helper-end",
    "end",
];

#[test]
fn bad_flags_exit_2_with_one_line_naming_the_valid_flags() {
    for args in [
        vec!["in", "out", "--bogus"],
        vec!["only-one"],
        vec!["in", "out", "--jdk", "seventeen"],
        vec!["in", "out", "--prefix"],
    ] {
        let out = run(rewrite_tool().args(&args));
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
    let out = run(rewrite_tool().args(["in", "out", "--bogus"]));
    let stderr = String::from_utf8_lossy(&out.stderr);
    for flag in [
        "--prefix",
        "--helper-owner",
        "--jdk",
        "--include",
        "--exclude",
        "--wrap-intrinsics",
    ] {
        assert!(stderr.contains(flag), "{stderr}");
    }
}

#[test]
fn jar_and_single_class_modes() {
    let dir = scratch("cli_jar");
    let classes = javac(&dir, &[("Hello.java", HELLO), ("Count.java", COUNT)], &[]);
    std::fs::write(classes.join("data.txt"), "resource payload\n").unwrap();
    cc_shared(&dir, "hello", HELLO_C);
    let agent = prefix_agent(&dir);
    let jar = dir.join("in.jar");
    run_ok(
        Command::new(jdk_tool("jar"))
            .arg("cfe")
            .arg(&jar)
            .arg("Hello")
            .arg("-C")
            .arg(&classes)
            .arg("."),
    );
    let out_jar = dir.join("out/rewritten.jar");
    let summary = run_ok(rewrite_tool().arg(&jar).arg(&out_jar).args(HELPER_FLAGS));
    assert!(
        summary.contains("classes: 2 scanned, 1 with natives, 1 rewritten, 0 failed"),
        "{summary}"
    );
    assert!(
        summary.contains("natives: 1 wrapped, 0 skipped"),
        "{summary}"
    );

    // Resources and the manifest are copied unchanged; the class is replaced.
    let mut original = zip::ZipArchive::new(std::fs::File::open(&jar).unwrap()).unwrap();
    let mut rewritten = zip::ZipArchive::new(std::fs::File::open(&out_jar).unwrap()).unwrap();
    assert_eq!(original.len(), rewritten.len());
    for index in 0..original.len() {
        let mut a = original.by_index(index).unwrap();
        let name = a.name().unwrap().to_string();
        let mut b = rewritten.by_name(&name).unwrap();
        let (mut x, mut y) = (Vec::new(), Vec::new());
        a.read_to_end(&mut x).unwrap();
        b.read_to_end(&mut y).unwrap();
        assert_eq!(x == y, name != "Hello.class", "{name}");
    }

    let java = |classpath: &std::path::Path, with_agent: bool| {
        let mut cmd = Command::new(jdk_tool("java"));
        if with_agent {
            cmd.arg(format!("-agentpath:{}", agent.display()));
        }
        run_ok(
            cmd.arg("-Xverify:all")
                .arg(format!("-Djava.library.path={}", dir.display()))
                .arg("-cp")
                .arg(classpath)
                .arg("Hello"),
        )
    };
    assert_eq!(java(&jar, false).trim(), "44 0 0");
    assert_eq!(java(&out_jar, true).trim(), "44 2 2");

    // Single class in, single class out.
    let single = dir.join("single");
    std::fs::create_dir_all(&single).unwrap();
    std::fs::copy(classes.join("Count.class"), single.join("Count.class")).unwrap();
    run_ok(
        rewrite_tool()
            .arg(classes.join("Hello.class"))
            .arg(single.join("Hello.class"))
            .args(HELPER_FLAGS),
    );
    assert_eq!(java(&single, true).trim(), "44 2 2");
    // Without the prefix agent the renamed native cannot be linked: proof the class was rewritten.
    let mut cmd = Command::new(jdk_tool("java"));
    let out = run(cmd
        .arg(format!("-Djava.library.path={}", dir.display()))
        .arg("-cp")
        .arg(&single)
        .arg("Hello"));
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("UnsatisfiedLinkError"));
}
