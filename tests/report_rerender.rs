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
