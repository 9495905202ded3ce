//! `nativeacct report` (issue 17): a JSON report saved by the agent renders into every format, byte
//! for byte what the agent itself wrote at VM death for the same run.

#[path = "report/support.rs"]
mod support;

use support::*;

#[test]
fn saved_json_re_renders_every_format_byte_for_byte() {
    let dir = scratch("report-rerender");
    let agent_base = dir.join("agent/run");
    std::fs::create_dir_all(dir.join("agent")).unwrap();
    let formats = "json+text+csv+hgrm+collapsed+html+svg+pprof";
    run_fixture(&agent_base, formats, 40, 20, 1);
    let json = dir.join("agent/run.json");
    let saved = read_json(&json);
    assert!(
        saved["collapsed_stacks"].as_array().unwrap().len() >= 3,
        "three call chains reach natives: {}",
        saved["collapsed_stacks"]
    );
    assert!(saved["histograms"]["native_self_by_method"]
        .as_object()
        .is_some_and(|m| m.len() >= 3));

    std::fs::create_dir_all(dir.join("again")).unwrap();
    let again_base = dir.join("again/run");
    let out = nativeacct_ok(&[
        "report",
        path_str(&json),
        &format!("format={formats}"),
        &format!("file={}", again_base.display()),
    ]);
    let err = text(&out.stderr);
    let mut compared = Vec::new();
    for entry in std::fs::read_dir(dir.join("agent")).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        let written = std::fs::read(dir.join("agent").join(&name)).unwrap();
        let again = std::fs::read(dir.join("again").join(&name))
            .unwrap_or_else(|e| panic!("report did not write {name}: {e}\n{err}"));
        assert!(
            written == again,
            "{name} differs from the agent's ({} vs {} bytes)",
            written.len(),
            again.len()
        );
        compared.push(name);
    }
    compared.sort();
    for ext in [
        "json",
        "txt",
        "csv",
        "collapsed",
        "html",
        "svg",
        "native.hgrm",
    ] {
        assert!(
            compared.iter().any(|n| n.ends_with(&format!(".{ext}"))),
            "no .{ext} compared: {compared:?}"
        );
    }
    assert!(
        compared.iter().filter(|n| n.ends_with(".hgrm")).count() >= 4,
        "{compared:?}"
    );
    assert_eq!(
        std::fs::read_dir(dir.join("again")).unwrap().count(),
        compared.len(),
        "report wrote exactly the agent's files"
    );

    // One format to stdout; the default (HTML next to the input).
    let out = nativeacct_ok(&["report", path_str(&json), "format=csv", "file=-"]);
    assert_eq!(
        out.stdout,
        std::fs::read(dir.join("agent/run.csv")).unwrap()
    );
    std::fs::remove_file(dir.join("agent/run.html")).unwrap();
    nativeacct_ok(&["report", path_str(&json)]);
    assert_eq!(
        std::fs::read(dir.join("agent/run.html")).unwrap(),
        std::fs::read(dir.join("again/run.html")).unwrap()
    );
}

/// A JSON written before the JNI boundary existed (no `boundary`, no `jni_function_calls`, no
/// per-thread or per-method split, JNI function rows without `kind` and samples) still renders:
/// every format, with the boundary empty and its method saying why.
#[test]
fn a_json_without_the_boundary_still_renders_every_format() {
    let dir = scratch("report-rerender-old");
    let base = dir.join("run");
    run_fixture(&base, "json", 10, 5, 1);
    let mut old = read_json(&dir.join("run.json"));
    assert!(old["boundary"]["samples"].as_u64().is_some());
    let report = old.as_object_mut().unwrap();
    report.remove("boundary");
    report.remove("jni_function_calls");
    for t in report["per_thread"].as_array_mut().unwrap() {
        let t = t.as_object_mut().unwrap();
        t.remove("boundary");
        t.remove("boundary_samples");
    }
    for m in report["native_methods"].as_array_mut().unwrap() {
        for key in [
            "own_code_ns",
            "jni_functions_ns",
            "agent_ns",
            "boundary_samples",
        ] {
            m.as_object_mut().unwrap().remove(key);
        }
    }
    let upcalls: Vec<serde_json::Value> = report["jni_functions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kind"] == "upcall")
        .map(|f| {
            let mut f = f.clone();
            for key in ["kind", "samples", "sampled_ns", "sampled_error95_ns"] {
                f.as_object_mut().unwrap().remove(key);
            }
            f
        })
        .collect();
    assert_eq!(upcalls.len(), 93);
    report.insert("jni_functions".into(), serde_json::Value::Array(upcalls));
    let old_json = dir.join("old.json");
    std::fs::write(&old_json, serde_json::to_vec_pretty(&old).unwrap()).unwrap();
    let again = dir.join("again");
    nativeacct_ok(&[
        "report",
        path_str(&old_json),
        "format=text+csv+html+pprof",
        &format!("file={}", again.display()),
    ]);
    let csv = std::fs::read_to_string(dir.join("again.csv")).unwrap();
    let all = csv
        .lines()
        .find(|l| l.starts_with("boundary,"))
        .unwrap_or_else(|| panic!("{csv}"));
    assert!(all.ends_with(",0,0,0,0,0,0,0,0,0,0,0"), "{all}");
    assert_eq!(
        csv.lines()
            .filter(|l| l.starts_with("jni_function,upcall,"))
            .count(),
        93
    );
    let html = std::fs::read_to_string(dir.join("again.html")).unwrap();
    assert!(html.contains("not stated (a report written before the boundary existed)"));
    assert!(std::fs::metadata(dir.join("again.pb.gz")).unwrap().len() > 0);
    // And diffed against a new one.
    let out = nativeacct_ok(&["diff", path_str(&old_json), path_str(&dir.join("run.json"))]);
    assert!(text(&out.stdout).contains("JVM for native"));
}

#[test]
fn what_cannot_be_rendered_is_refused_in_one_line() {
    let dir = scratch("report-refuse");
    let not_json = dir.join("x.json");
    std::fs::write(&not_json, "{\"tool\": 3}").unwrap();
    for (args, says) in [
        (
            vec!["report", path_str(&not_json)],
            "not a nativeacct JSON report",
        ),
        (
            vec!["report", path_str(&dir.join("missing.json"))],
            "cannot read",
        ),
    ] {
        let out = nativeacct(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = text(&out.stderr);
        assert!(err.contains(says), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    let base = dir.join("r");
    run_fixture(&base, "json", 2, 1, 1);
    let json = dir.join("r.json");
    for (word, says) in [
        ("format=hlog", "written while the program runs"),
        ("clock=cpu", "valid options: format=, file=, top="),
        ("format=json", "is the input"),
    ] {
        let out = nativeacct(&["report", path_str(&json), word]);
        assert_eq!(out.status.code(), Some(2), "{word}");
        assert!(
            text(&out.stderr).contains(says),
            "{word}: {}",
            text(&out.stderr)
        );
    }
}
