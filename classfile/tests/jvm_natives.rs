//! End to end on a real JVM: javac-compiled natives of every shape, rewritten by the tool, run
//! under `-Xverify:all` with a JNI library built here. The Java program checks every result against
//! its own computation and counts its own native calls; the test compares those counts with what
//! the helpers saw (per method id, begin and end).

mod common;

use common::*;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

const WIDE_LONGS: usize = 100;
const WIDE_INTS: usize = 50;
const WIDE_INSTANCE_LONGS: usize = 127;

/// Natives declared by the test sources (ground truth for "what must be wrapped").
const DECLARED: &[&str] = &[
    "Natives.add",
    "Natives.scale",
    "Natives.mix",
    "Natives.packSmall",
    "Natives.join",
    "Natives.reversed",
    "Natives.sum",
    "Natives.lockedIncrement",
    "Natives.fail",
    "Natives.callback",
    "Natives.nothing",
    "Natives.identity",
    "Natives.half",
    "Natives.upper",
    "Natives.neg",
    "Natives.inc",
    "Natives.flip",
    "Natives.grid",
    "Natives.wide",
    "Natives.wideInstance",
    "OldNatives.twice",
    "OldNatives.plus",
    "GateProbe.begins",
    "GateProbe.ends",
];

fn list(items: impl Iterator<Item = String>) -> String {
    items.collect::<Vec<_>>().join(", ")
}

fn sources() -> Vec<(&'static str, String)> {
    let java = |name: &str| {
        std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/java")
                .join(name),
        )
        .unwrap()
    };
    let wide_decl = format!(
        "static native long wide({}, {});\n    native long wideInstance({});",
        list((0..WIDE_LONGS).map(|k| format!("long l{k}"))),
        list((0..WIDE_INTS).map(|k| format!("int i{k}"))),
        list((0..WIDE_INSTANCE_LONGS).map(|k| format!("long l{k}"))),
    );
    let natives = java("Natives.java").replace("/*WIDE*/", &wide_decl);
    let wide_args = format!(
        "{}, {}",
        list((0..WIDE_LONGS).map(|k| format!("{}L", k + 1))),
        list((0..WIDE_INTS).map(|k| format!("{}", k + 1)))
    );
    let wide_instance_args = list((0..WIDE_INSTANCE_LONGS).map(|k| format!("{}L", 2 * k)));
    let main = java("Main.java")
        .replace("WIDE_ARGS", &wide_args)
        .replace("WIDE_INSTANCE_ARGS", &wide_instance_args)
        + &format!(
            "    static long wideExpected() {{\n        long e = 0;\n        \
             for (int k = 0; k < {WIDE_LONGS}; k++) e += (long) (k + 1) * (k + 1);\n        \
             for (int k = 0; k < {WIDE_INTS}; k++) e += (k + 1) * 3L;\n        return e;\n    }}\n\
             \n    static long wideInstanceExpected(int base) {{\n        long e = base;\n        \
             for (int k = 0; k < {WIDE_INSTANCE_LONGS}; k++) e += 2L * k;\n        return e;\n    }}\n}}\n"
        );
    vec![
        ("Counter.java", java("Counter.java")),
        ("Gate.java", java("Gate.java")),
        ("GateProbe.java", java("GateProbe.java")),
        ("Natives.java", natives),
        ("Main.java", main),
    ]
}

fn c_source() -> String {
    let wide = format!(
        "JNIEXPORT jlong JNICALL Java_Natives_wide(JNIEnv *env, jclass cls, {}, {}) {{\n    \
         (void)env; (void)cls;\n    return 0{}{};\n}}\n\
         JNIEXPORT jlong JNICALL Java_Natives_wideInstance(JNIEnv *env, jobject self, {}) {{\n    \
         return base_of(env, self){};\n}}\n",
        list((0..WIDE_LONGS).map(|k| format!("jlong l{k}"))),
        list((0..WIDE_INTS).map(|k| format!("jint i{k}"))),
        (0..WIDE_LONGS)
            .map(|k| format!(" + l{k} * {}", k + 1))
            .collect::<String>(),
        (0..WIDE_INTS)
            .map(|k| format!(" + i{k} * 3"))
            .collect::<String>(),
        list((0..WIDE_INSTANCE_LONGS).map(|k| format!("jlong l{k}"))),
        (0..WIDE_INSTANCE_LONGS)
            .map(|k| format!(" + l{k}"))
            .collect::<String>(),
    );
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/java/natives.c"))
        .unwrap()
        .replace("/*WIDE*/", &wide)
}

/// Compiles everything; OldNatives is built for Java 8 and patched down to version 49.
fn build(dir: &Path) -> std::path::PathBuf {
    let old_src = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/java/OldNatives.java"),
    )
    .unwrap();
    let old_classes = javac(
        &dir.join("old"),
        &[("OldNatives.java", &old_src)],
        &["--release", "8"],
    );
    let owned = sources();
    let refs: Vec<(&str, &str)> = owned.iter().map(|(n, t)| (*n, t.as_str())).collect();
    let old_cp = old_classes.to_string_lossy().into_owned();
    let classes = javac(dir, &refs, &["-cp", &old_cp]);
    let mut old = std::fs::read(old_classes.join("OldNatives.class")).unwrap();
    assert_eq!(u16::from_be_bytes([old[6], old[7]]), 52);
    old[6..8].copy_from_slice(&49u16.to_be_bytes());
    std::fs::write(classes.join("OldNatives.class"), old).unwrap();
    classes
}

struct Run {
    results: Vec<String>,
    expected: BTreeMap<String, u64>,
    calls: u64,
    lines: Vec<String>,
}

fn java_run(dir: &Path, classpath: &Path, mode: &str, agent: Option<&Path>) -> Run {
    let mut cmd = Command::new(jdk_tool("java"));
    if let Some(agent) = agent {
        cmd.arg(format!("-agentpath:{}", agent.display()));
    }
    cmd.arg("-Xverify:all")
        .arg(format!("-Djava.library.path={}", dir.display()))
        .arg("-cp")
        .arg(classpath)
        .arg("Main")
        .arg(mode);
    let stdout = run_ok(&mut cmd);
    let lines: Vec<String> = stdout.lines().map(str::to_string).collect();
    let mut expected = BTreeMap::new();
    let mut calls = 0;
    for line in &lines {
        let parts: Vec<&str> = line.split_whitespace().collect();
        match parts.as_slice() {
            ["expect", name, n] => {
                expected.insert(name.to_string(), n.parse().unwrap());
            }
            ["calls", n] => calls = n.parse().unwrap(),
            _ => {}
        }
    }
    Run {
        results: lines
            .iter()
            .filter(|l| l.starts_with("result "))
            .cloned()
            .collect(),
        expected,
        calls,
        lines,
    }
}

/// Runs the tool with `--verbose`; returns id → `Class.method` and the summary text.
fn rewrite(input: &Path, output: &Path, extra: &[&str]) -> (BTreeMap<i64, String>, String) {
    let stdout = run_ok(
        rewrite_tool()
            .arg(input)
            .arg(output)
            .arg("--verbose")
            .args(extra),
    );
    let mut ids = BTreeMap::new();
    for line in stdout.lines() {
        // "wrap Natives.add(II)I id 0"
        if let Some(rest) = line.strip_prefix("wrap ") {
            let mut parts = rest.split(" id ");
            let method = parts.next().unwrap();
            let id: i64 = parts.next().unwrap().parse().unwrap();
            let name = method.split('(').next().unwrap().to_string();
            ids.insert(id, name);
        }
    }
    (ids, stdout)
}

/// The first two numbers of a helpers' totals line count the calls of `begin` and of `end`: each
/// must equal the native calls the workload made.
fn assert_begins_and_ends(totals: &[&str], calls: u64, begin: &str, end: &str) {
    assert_eq!(
        totals[0].parse::<u64>().unwrap(),
        calls,
        "{begin} calls == native calls"
    );
    assert_eq!(
        totals[1].parse::<u64>().unwrap(),
        calls,
        "{end} calls == native calls"
    );
}

fn line_with<'a>(run: &'a Run, prefix: &str) -> Vec<&'a str> {
    let line = run
        .lines
        .iter()
        .find(|l| l.starts_with(prefix))
        .unwrap_or_else(|| panic!("no {prefix:?} line in {:#?}", run.lines));
    line.split_whitespace().skip(1).collect()
}

#[test]
fn wrapped_natives_run_balance_and_propagate_exceptions() {
    let dir = scratch("jvm_natives");
    let classes = build(&dir);
    cc_shared(&dir, "testnatives", &c_source());
    let agent = prefix_agent(&dir);

    let plain = java_run(&dir, &classes, "plain", None);
    assert_eq!(plain.results, vec!["result all checks passed".to_string()]);
    // 10,000 threaded adds plus the single calls: the program's own count.
    assert!(plain.calls > 10_000, "{:?}", plain.lines);

    // Helper owner with its own counting begin/end (no injection: it already declares begin).
    let counter_out = dir.join("counter");
    let (ids, summary) = rewrite(
        &classes,
        &counter_out,
        &[
            "--helper-owner",
            "Counter",
            "--helper-begin",
            "begin",
            "--helper-end",
            "end",
        ],
    );
    let mut wrapped: Vec<&str> = ids.values().map(String::as_str).collect();
    wrapped.sort();
    let mut declared = DECLARED.to_vec();
    declared.sort();
    assert_eq!(wrapped, declared, "tool summary:\n{summary}");
    assert!(
        summary.contains("classes: 6 scanned, 3 with natives, 3 rewritten, 0 failed"),
        "{summary}"
    );

    let counted = java_run(&dir, &counter_out, "counter", Some(&agent));
    assert_eq!(counted.results, plain.results);
    assert_eq!(counted.expected, plain.expected);
    let totals = line_with(&counted, "counter ");
    assert_begins_and_ends(&totals, counted.calls, "begin", "end");
    assert_eq!(totals[2], "0", "depth back to 0 (also after exceptions)");
    assert_eq!(
        totals[3], "2",
        "callback nests exactly one native inside another"
    );
    let mut per_method: BTreeMap<String, u64> = BTreeMap::new();
    for line in counted.lines.iter().filter(|l| l.starts_with("seen ")) {
        let parts: Vec<u64> = line
            .split_whitespace()
            .skip(1)
            .map(|p| p.parse().unwrap())
            .collect();
        assert_eq!(parts[1], parts[2], "begin/end balance for id {}", parts[0]);
        let name = ids
            .get(&(parts[0] as i64))
            .expect("id handed out by the tool");
        *per_method.entry(name.clone()).or_default() += parts[1];
    }
    assert_eq!(
        per_method, counted.expected,
        "per-method counts seen by the helpers"
    );

    // Helpers injected into an empty owner; the C side of beginN/endN counts while the gate is on.
    let gate_out = dir.join("gate");
    let (gate_ids, gate_summary) = rewrite(
        &classes,
        &gate_out,
        &["--helper-owner", "Gate", "--exclude", "GateProbe"],
    );
    assert_eq!(gate_ids.len(), DECLARED.len() - 2, "{gate_summary}");
    assert!(
        gate_summary.contains("2  user exclude pattern"),
        "{gate_summary}"
    );
    // Gate, Natives and OldNatives; Gate only gets the injected helpers.
    assert!(
        gate_summary.contains("3 with natives, 3 rewritten"),
        "{gate_summary}"
    );
    let gate_class = std::fs::read(gate_out.join("Gate.class")).unwrap();
    assert!(
        gate_class
            .windows(b"j2n$beginN".len())
            .any(|w| w == b"j2n$beginN"),
        "Gate.class got the injected natives"
    );
    let gated = java_run(&dir, &gate_out, "gate", Some(&agent));
    assert_eq!(gated.results, plain.results);
    let gate = line_with(&gated, "gate ");
    assert_begins_and_ends(&gate, gated.calls, "beginN", "endN");
}
