//! `nativeacct diff` (issue 17): two runs of one fixture, the second with `Reports.hash` doing a
//! known factor more work per call (set in the fixture's C code, `NATIVEACCT_TEST_SLOWDOWN`).
//! The diff must show that method's self time grown as the CPU its work took grew (the fixture
//! measures that itself: on a shared host the same work takes more CPU in one run than another), the
//! unchanged natives unchanged, and a native only the second run called as new.

#[path = "report/support.rs"]
mod support;

use std::collections::HashMap;
use support::*;

const FACTOR: u32 = 3;

/// `name → (time_ns_a, time_ns_b, status)` from the diff's CSV.
fn rows(csv: &str, kind: &str) -> HashMap<String, (Option<u64>, Option<u64>, String)> {
    let mut lines = csv.lines();
    assert_eq!(
        lines.next(),
        Some("kind,name,status,calls_a,calls_b,time_ns_a,time_ns_b,time_change_pct,p50_ns_a,p50_ns_b,p99_ns_a,p99_ns_b")
    );
    lines
        .filter(|l| l.starts_with(&format!("{kind},")))
        .map(|l| {
            // Method names with commas are quoted; the fixture's are not, and only theirs are read.
            let cells: Vec<&str> = l.split(',').collect();
            let n = cells.len();
            let num = |s: &str| s.parse::<u64>().ok();
            (
                cells[1..n - 10].join(","),
                (
                    num(cells[n - 7]),
                    num(cells[n - 6]),
                    cells[n - 10].to_string(),
                ),
            )
        })
        .collect()
}

/// `nativeacct diff A B` as CSV.
fn diff_csv(a: &std::path::Path, b: &std::path::Path) -> String {
    let out = nativeacct_ok(&["diff", path_str(a), path_str(b), "format=csv", "file=-"]);
    text(&out.stdout)
}

#[test]
fn a_native_made_slower_by_a_known_factor_shows_that_factor() {
    let dir = scratch("report-diff");
    let (a, b) = (dir.join("a"), dir.join("b"));
    let own_a = run_fixture_with(&a, "json", &["60", "40"], 1);
    let own_b = run_fixture_with(&b, "json", &["60", "40", "extra"], FACTOR);
    let (a_json, b_json) = (dir.join("a.json"), dir.join("b.json"));

    let csv = diff_csv(&a_json, &b_json);
    let methods = rows(&csv, "native_method");
    let ratio = |name: &str| {
        let (before, after, status) = methods
            .get(name)
            .unwrap_or_else(|| panic!("{name} missing from the diff:\n{csv}"));
        assert_eq!(status, "", "{name} is in both runs");
        after.unwrap() as f64 / before.unwrap() as f64
    };
    let hash = ratio("Reports.hash(I)J");
    let own_hash = own_b.hash as f64 / own_a.hash as f64;
    println!("Reports.hash self time B/A = {hash:.4}; its work: {FACTOR}x the steps, {own_hash:.4}x the CPU");
    assert!(
        (hash / own_hash - 1.0).abs() <= 0.05,
        "Reports.hash grew {hash:.3}x, the CPU its work took {own_hash:.3}x"
    );
    // The work's own CPU follows the steps, give or take the host: the fixture does what it says.
    assert!(
        (own_hash / FACTOR as f64 - 1.0).abs() <= 0.25,
        "{own_hash:.3}x"
    );
    let mix = ratio("Reports.mix(I)J");
    let own_mix = own_b.mix as f64 / own_a.mix as f64;
    println!(
        "Reports.mix self time B/A = {mix:.4}; the CPU its (unchanged) work took {own_mix:.4}x"
    );
    assert!(
        (mix / own_mix - 1.0).abs() <= 0.05,
        "Reports.mix changed {mix:.3}x, the CPU its work took {own_mix:.3}x"
    );
    let extra = &methods["Reports.extra(I)J"];
    assert_eq!((extra.0, extra.2.as_str()), (None, "new"), "{extra:?}");
    let functions = rows(&csv, "jni_function");
    assert!(functions.contains_key("CallStaticIntMethod"), "{csv}");
    // The JNI boundary side by side: each part and its 95 % half-width are the two JSONs', exactly.
    let (a_report, b_report) = (read_json(&a_json), read_json(&b_json));
    let parts = rows(&csv, "boundary");
    let errors = rows(&csv, "boundary_error95");
    for part in [
        "java_code",
        "jvm_in_java",
        "native_code",
        "jvm_in_native",
        "agent_in_thread",
    ] {
        let key = format!("{part}_ns");
        let of = |r: &serde_json::Value| r["boundary"][&key].as_u64();
        let err = |r: &serde_json::Value| r["boundary"]["error95_ns"][&key].as_u64();
        let (a, b, _) = &parts[part];
        assert_eq!((*a, *b), (of(&a_report), of(&b_report)), "boundary {part}");
        let (a, b, _) = &errors[part];
        assert_eq!(
            (*a, *b),
            (err(&a_report), err(&b_report)),
            "error of {part}"
        );
    }
    // Reports.hash's extra work is its own code: native code grew, in B, by about hash's growth.
    let native_code = |r: &serde_json::Value| r["boundary"]["native_code_ns"].as_u64().unwrap();
    assert!(
        native_code(&b_report) > native_code(&a_report),
        "native code grew: {} -> {}",
        native_code(&a_report),
        native_code(&b_report)
    );

    // The text table, on stdout by default: the factor as a percentage, and the marker.
    let out = nativeacct_ok(&["diff", path_str(&a_json), path_str(&b_json)]);
    let table = text(&out.stdout);
    let hash_line = table
        .lines()
        .find(|l| l.ends_with("Reports.hash(I)J"))
        .unwrap_or_else(|| panic!("{table}"));
    let pct: f64 = hash_line
        .split_whitespace()
        .nth(5)
        .and_then(|c| c.strip_suffix('%'))
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("no self-time change in {hash_line:?}"));
    assert!((pct / 100.0 + 1.0 - hash).abs() < 0.001, "{hash_line}");
    assert!(table.contains("[new] Reports.extra(I)J"), "{table}");
    assert!(table.contains("native %"), "{table}");
    assert!(
        table.contains("Java native (JNI)"),
        "process split side by side: {table}"
    );
    // The boundary's parts, with both runs' shares and intervals and the change in points.
    for (label, part) in [
        ("Java code", "java_code"),
        ("JVM for Java", "jvm_in_java"),
        ("native code", "native_code"),
        ("JVM for native", "jvm_in_native"),
        ("agent", "agent_in_thread"),
    ] {
        let line = table
            .lines()
            .find(|l| l.trim_start().starts_with(label) && l.contains(" %) ") && l.contains(" ±"))
            .unwrap_or_else(|| panic!("no boundary line {label}:\n{table}"));
        let secs = |r: &serde_json::Value| {
            format!(
                "{:.3} s",
                r["boundary"][format!("{part}_ns")].as_u64().unwrap() as f64 / 1e9
            )
        };
        assert!(
            line.contains(&secs(&a_report))
                && line.contains(&secs(&b_report))
                && line.ends_with(" pt"),
            "{line}"
        );
    }
    assert!(table.contains("sampler's \"native\""), "{table}");

    // HTML: the tables and inferno's differential flame graph.
    nativeacct_ok(&["diff", path_str(&a_json), path_str(&b_json), "format=html"]);
    let html = std::fs::read_to_string(dir.join("b-diff.html")).unwrap();
    assert!(html.contains("id=\"methods\"") && html.contains("id=\"summary\""));
    assert!(
        html.contains("JVM for native"),
        "the boundary in the summary"
    );
    assert!(
        html.contains("<iframe id=\"flame\""),
        "differential flame graph"
    );
    assert!(
        html.contains("Reports.hash(int) ("),
        "the graph names the native"
    );
}

#[test]
fn bad_diff_options_are_refused_in_one_line() {
    let dir = scratch("report-diff-refuse");
    run_fixture(&dir.join("r"), "json", 2, 1, 1);
    let json = dir.join("r.json");
    for (word, says) in [
        ("format=pdf", "expected text, csv or html"),
        ("clock=cpu", "valid options: format=, file=, top="),
        ("top=0", "positive number"),
    ] {
        let out = nativeacct(&["diff", path_str(&json), path_str(&json), word]);
        assert_eq!(out.status.code(), Some(2), "{word}");
        let err = text(&out.stderr);
        assert!(
            err.contains(says) && err.lines().count() == 1,
            "{word}: {err}"
        );
    }
}

#[test]
fn a_run_that_counted_only_the_upcalls_is_compared_on_the_upcalls_alone() {
    let dir = scratch("report-diff-upcalls");
    let (a, b) = (dir.join("a"), dir.join("b"));
    run_fixture_with(&a, "json", &["20", "10"], 1);
    // The formats word ends the option list the fixture runner builds: one more option after it.
    run_fixture_with(&b, "json,jni_counts=upcalls", &["20", "10"], 1);
    let (a_json, b_json) = (dir.join("a.json"), dir.join("b.json"));
    let (a_report, b_report) = (read_json(&a_json), read_json(&b_json));
    assert_eq!(a_report["jni_counts"], "all");
    assert_eq!(b_report["jni_counts"], "upcalls");
    let counted_calls = |r: &serde_json::Value| {
        r["jni_functions"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["kind"] == "counted")
            .map(|f| f["calls"].as_u64().unwrap())
            .sum::<u64>()
    };
    assert!(counted_calls(&a_report) > 0, "the launcher's own calls");
    assert_eq!(counted_calls(&b_report), 0);

    let csv = diff_csv(&a_json, &b_json);
    assert!(rows(&csv, "jni_function_counted").is_empty(), "{csv}");
    let upcalls = rows(&csv, "jni_function");
    assert_eq!(
        upcalls.get("CallStaticIntMethod").map(|r| r.2.as_str()),
        Some(""),
        "in both runs: {csv}"
    );
    let out = nativeacct_ok(&["diff", path_str(&a_json), path_str(&b_json)]);
    let table = text(&out.stdout);
    assert!(
        table.contains("Other JNI functions: not compared (a run with jni_counts=upcalls"),
        "{table}"
    );
}
