//! `format=pprof` (issue 17): `go tool pprof` (Debian's golang-go, installed by
//! scripts/install-test-deps) reads the profile, and its totals are the JSON's: native self time (the
//! sum of the methods' self time), calls, and each thread's bytecode and native CPU time, with the
//! Java call chains of `stacks=` as locations.

#[path = "report/support.rs"]
mod support;

use std::path::Path;
use std::process::Command;
use support::*;

fn pprof(args: &[&str], profile: &Path) -> String {
    let out = Command::new("go")
        .args(["tool", "pprof"])
        .args(args)
        .arg(profile)
        .output()
        .expect("run go tool pprof");
    assert!(
        out.status.success(),
        "go tool pprof {args:?} failed: {}",
        text(&out.stderr)
    );
    text(&out.stdout)
}

/// The ns after `prefix` in pprof's output (`-unit=ns`).
fn ns_after(output: &str, prefix: &str) -> u64 {
    let at = output
        .find(prefix)
        .unwrap_or_else(|| panic!("no '{prefix}' in:\n{output}"));
    let digits: String = output[at + prefix.len()..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits
        .parse()
        .unwrap_or_else(|_| panic!("no number after '{prefix}'"))
}

#[test]
fn go_tool_pprof_reads_the_profile_and_its_totals_are_the_jsons() {
    if Command::new("go").arg("version").output().is_err() {
        eprintln!("SKIPPED: no 'go' on PATH (scripts/install-test-deps installs golang-go)");
        return;
    }
    let dir = scratch("report-pprof");
    run_fixture(&dir.join("run"), "json+pprof", 30, 20, 1);
    let profile = dir.join("run.pb.gz");
    let json = read_json(&dir.join("run.json"));
    let methods = json["native_methods"].as_array().unwrap();
    let self_total: u64 = methods.iter().map(|m| m["self_ns"].as_u64().unwrap()).sum();
    let calls_total: u64 = methods.iter().map(|m| m["calls"].as_u64().unwrap()).sum();
    let native_ns = json["native_ns"].as_u64().unwrap();
    let bytecode_ns = json["bytecode_ns"].as_u64().unwrap();

    let top = pprof(&["-top", "-unit=ns"], &profile);
    assert!(top.contains("Type: native_self"), "{top}");
    assert_eq!(ns_after(&top, "Total samples = "), self_total, "{top}");
    assert!(top.contains("Reports.hash(int)") && top.contains("Reports.mix(int)"));

    let calls = pprof(&["-top", "-sample_index=calls"], &profile);
    assert_eq!(ns_after(&calls, "Total samples = "), calls_total, "{calls}");

    let cpu = pprof(&["-top", "-unit=ns", "-sample_index=cpu"], &profile);
    assert_eq!(ns_after(&cpu, "Total samples = "), bytecode_ns + native_ns);
    let native_side = pprof(
        &[
            "-top",
            "-unit=ns",
            "-sample_index=cpu",
            "-tagfocus=side=native",
            "-nodefraction=0",
        ],
        &profile,
    );
    assert_eq!(
        ns_after(&native_side, "Showing nodes accounting for "),
        native_ns,
        "{native_side}"
    );
    let mixer = pprof(
        &[
            "-top",
            "-sample_index=cpu",
            "-tagfocus=thread=mixer",
            "-nodefraction=0",
        ],
        &profile,
    );
    assert!(mixer.contains("[thread mixer]"), "{mixer}");

    // The JNI boundary: each part's flat time under -sample_index=boundary is the JSON's, exactly;
    // a sampler's "native" is the parts labelled so; the intervals are in the comments.
    let boundary = &json["boundary"];
    let parts = pprof(
        &[
            "-top",
            "-unit=ns",
            "-sample_index=boundary",
            "-nodefraction=0",
        ],
        &profile,
    );
    assert!(parts.contains("Type: boundary"), "{parts}");
    assert_eq!(
        ns_after(&parts, "Total samples = "),
        bytecode_ns + native_ns
    );
    let comments = pprof(&["-comments"], &profile);
    let mut sampler_native = 0;
    for (key, label) in [
        ("java_code", "[Java code]"),
        ("jvm_in_java", "[JVM for Java]"),
        ("native_code", "[native code]"),
        ("jvm_in_native", "[JVM for native]"),
        ("agent_in_thread", "[agent]"),
    ] {
        let ns = boundary[format!("{key}_ns")].as_u64().unwrap();
        let flat: u64 = parts
            .lines()
            .find(|l| l.trim_end().ends_with(label))
            .map(|l| {
                let cell = l.split_whitespace().next().unwrap();
                cell.trim_end_matches("ns").parse().unwrap()
            })
            .unwrap_or(0);
        assert_eq!(flat, ns, "{label} in pprof vs boundary.{key}_ns:\n{parts}");
        if key != "java_code" {
            sampler_native += ns;
        }
        let err = boundary["error95_ns"][format!("{key}_ns")]
            .as_u64()
            .unwrap();
        assert!(
            comments.contains(&format!("boundary {key}_ns {ns} ±{err} (95 %)")),
            "{comments}"
        );
    }
    let native = pprof(
        &[
            "-top",
            "-unit=ns",
            "-sample_index=boundary",
            "-tagfocus=sampler=native",
            "-nodefraction=0",
        ],
        &profile,
    );
    if sampler_native > 0 {
        assert_eq!(
            ns_after(&native, "Showing nodes accounting for "),
            sampler_native,
            "{native}"
        );
    }

    // The chains: hash under viaA, and under viaC under viaB, with the side label.
    let traces = pprof(&["-traces"], &profile);
    let chains: Vec<&str> = traces.split("-----------+").collect();
    for callers in [
        &["Reports.viaA", "Reports.main"][..],
        &["Reports.viaC", "Reports.viaB", "Reports.main"],
    ] {
        assert!(
            chains.iter().any(|c| {
                let frames: Vec<&str> = c
                    .lines()
                    .map(|l| l.split_whitespace().last().unwrap_or(""))
                    .collect();
                let at = frames.iter().position(|f| *f == "Reports.hash(int)");
                at.is_some_and(|i| frames[i + 1..].starts_with(callers)) && c.contains("side:")
            }),
            "no trace of Reports.hash(int) under {callers:?}:\n{traces}"
        );
    }
}
