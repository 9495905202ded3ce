//! Tests of the option parser: every option, defaults, and the one-line errors.

use super::*;
use crate::clock::ClockKind;

#[test]
fn empty_gives_defaults() {
    let o = parse(None).unwrap();
    assert_eq!(o.mode, Mode::Ipa);
    assert!(!o.quiet && o.file.is_none());
}

#[test]
fn parses_every_option() {
    let o = parse(Some(
        "file=/tmp/r.json,format=text,prefix=pp$,include=java/io/*:a/B.c,exclude=x/*,intrinsics=wrap,clock=thread-cputime,quiet,mode=spa",
    ))
    .unwrap();
    assert_eq!(o.file.as_deref(), Some(std::path::Path::new("/tmp/r.json")));
    assert_eq!(o.formats, [Format::Text]);
    assert_eq!(o.prefix, "pp$");
    assert_eq!(o.include, vec!["java/io/*", "a/B.c"]);
    assert_eq!(o.exclude, vec!["x/*"]);
    assert!(o.wrap_intrinsics && o.quiet);
    assert_eq!(o.clock, ClockRequest::Exactly(ClockKind::ThreadCputime));
    assert_eq!(o.mode, Mode::Spa);
}

#[test]
fn file_alone_is_json_to_exactly_that_file() {
    let o = parse(Some("file=/tmp/r")).unwrap();
    assert_eq!(o.formats, vec![Format::Json]);
    assert_eq!(o.output_path(Format::Json), std::path::Path::new("/tmp/r"));
    let o = parse(Some("file=/tmp/r.txt,format=text")).unwrap();
    assert_eq!(
        o.output_path(Format::Text),
        std::path::Path::new("/tmp/r.txt")
    );
    assert!(parse(None).unwrap().formats.is_empty());
}

#[test]
fn several_formats_share_a_base_name() {
    let o = parse(Some("file=out/run.json,format=html+json+csv+hgrm,top=5")).unwrap();
    assert_eq!(
        o.formats,
        vec![Format::Json, Format::Csv, Format::Hgrm, Format::Html]
    );
    assert_eq!(
        o.output_path(Format::Json),
        std::path::Path::new("out/run.json")
    );
    assert_eq!(
        o.output_path(Format::Csv),
        std::path::Path::new("out/run.csv")
    );
    assert_eq!(
        o.output_path(Format::Html),
        std::path::Path::new("out/run.html")
    );
    assert_eq!(
        o.hgrm_path("method.01.a/B.c(I)V"),
        std::path::Path::new("out/run.method.01.a_B.c_I_V.hgrm")
    );
    assert_eq!(o.top, 5);
    // A single hgrm still uses the base, since it makes several files.
    let o = parse(Some("file=x.hgrm,format=hgrm")).unwrap();
    assert_eq!(o.hgrm_path("native"), std::path::Path::new("x.native.hgrm"));
    // A name with a dot that is not a format extension is kept whole.
    let o = parse(Some("file=run.v2,format=json+csv")).unwrap();
    assert_eq!(
        o.output_path(Format::Csv),
        std::path::Path::new("run.v2.csv")
    );
}

#[test]
fn snapshot_takes_a_duration_and_implies_a_file() {
    let o = parse(Some("snapshot=10s")).unwrap();
    assert_eq!(o.snapshot, Some(std::time::Duration::from_secs(10)));
    assert_eq!(o.formats, vec![Format::Json]);
    let o = parse(Some("file=r,format=csv,snapshot=250ms")).unwrap();
    assert_eq!(o.snapshot, Some(std::time::Duration::from_millis(250)));
    assert_eq!(o.formats, vec![Format::Csv]);
    let e = parse(Some("snapshot=soon")).unwrap_err();
    assert!(e.starts_with("snapshot=soon: expected a duration"), "{e}");
}

#[test]
fn interval_and_stacks_bring_their_formats() {
    let o = parse(Some("file=r,interval=250ms,stacks=10,depth=4")).unwrap();
    assert_eq!(
        o.formats,
        vec![Format::Json, Format::Hlog, Format::Collapsed]
    );
    assert_eq!(o.interval, Some(std::time::Duration::from_millis(250)));
    assert_eq!(o.stacks, StackSampling::Nth(10));
    assert_eq!(o.depth, 4);
    assert_eq!(o.output_path(Format::Hlog), std::path::Path::new("r.hlog"));
    assert_eq!(
        parse(Some("stacks=every")).unwrap().stacks,
        StackSampling::Every
    );
    assert_eq!(
        parse(Some("stacks=1")).unwrap().stacks,
        StackSampling::Every
    );
    assert_eq!(
        parse(Some("interval=2")).unwrap().interval,
        Some(std::time::Duration::from_secs(2))
    );
    assert_eq!(
        parse(Some("interval=1m")).unwrap().interval,
        Some(std::time::Duration::from_secs(60))
    );
}

#[test]
fn scan_period_or_off() {
    assert_eq!(parse(None).unwrap().scan, Some(DEFAULT_SCAN_PERIOD));
    assert_eq!(
        parse(Some("scan=250ms")).unwrap().scan,
        Some(std::time::Duration::from_millis(250))
    );
    assert_eq!(parse(Some("scan=off")).unwrap().scan, None);
    assert!(parse(Some("scan=1ms")).unwrap_err().starts_with("scan=1ms"));
}

#[test]
fn exits_hook_or_scan() {
    assert!(parse(None).unwrap().exit_hook);
    assert!(parse(Some("exits=hook")).unwrap().exit_hook);
    assert!(!parse(Some("exits=scan")).unwrap().exit_hook);
    assert!(parse(Some("exits=perf"))
        .unwrap_err()
        .starts_with("exits=perf: expected hook or scan"));
}

#[test]
fn errors_are_one_line_and_name_valid_options() {
    for bad in [
        "fiel=x",
        "format=xml",
        "clock=wall",
        "mode=fast",
        "intrinsics=yes",
        "quiet=1",
        "file=",
        "prefix=a/b",
        "include=",
        ",",
        "format=json+xml",
        "format=json+",
        "top=0",
        "top=x",
        "depth=0",
        "depth=100000",
        "stacks=0",
        "stacks=some",
        "interval=1ms",
        "interval=fast",
        "scan=",
        "scan=never",
    ] {
        let err = parse(Some(bad)).unwrap_err();
        assert!(!err.contains('\n'), "{bad}: {err}");
        assert!(!err.is_empty());
    }
    assert!(parse(Some("fiel=x"))
        .unwrap_err()
        .contains("file, format, j2n, prefix"));
}

#[test]
fn two_word_options_take_either_word_and_name_both_when_wrong() {
    for (bad, message) in [
        ("intrinsics=yes", "intrinsics=yes: expected skip or wrap"),
        ("j2n=jit", "j2n=jit: expected bind or wrap"),
        ("control=maybe", "control=maybe: expected on or off"),
        ("mode=fast", "mode=fast: expected ipa or spa"),
        ("timing=fast", "timing=fast: expected exact or sampled"),
        (
            "jni_counts=some",
            "jni_counts=some: expected all or upcalls",
        ),
    ] {
        assert_eq!(parse(Some(bad)).unwrap_err(), message);
    }
    let o = parse(Some("intrinsics=skip,j2n=wrap,control=off,mode=ipa")).unwrap();
    assert!(!o.wrap_intrinsics && !o.control);
    assert_eq!((o.j2n, o.mode), (J2nMode::Wrap, Mode::Ipa));
    let o = parse(Some("intrinsics=wrap,j2n=bind,control=on,mode=spa")).unwrap();
    assert!(o.wrap_intrinsics && o.control);
    assert_eq!((o.j2n, o.mode), (J2nMode::Bind, Mode::Spa));
}

#[test]
fn timing_is_exact_by_default_and_sampled_needs_the_boundary_sampler() {
    assert!(!parse(None).unwrap().sampled_timing);
    assert!(!parse(Some("timing=exact")).unwrap().sampled_timing);
    assert!(parse(Some("timing=sampled")).unwrap().sampled_timing);
    for needs in ["timing=sampled,boundary=off", "mode=spa,timing=sampled"] {
        let error = parse(Some(needs)).unwrap_err();
        assert!(!error.contains('\n'), "{error}");
        assert!(
            error.contains("boundary=on (or timer) and mode=ipa"),
            "{error}"
        );
    }
}

#[test]
fn every_jni_function_is_counted_unless_asked_for_upcalls_only() {
    assert!(parse(None).unwrap().count_every_jni_function);
    assert!(
        parse(Some("jni_counts=all"))
            .unwrap()
            .count_every_jni_function
    );
    let o = parse(Some("timing=sampled,jni_counts=upcalls")).unwrap();
    assert!(!o.count_every_jni_function && o.sampled_timing);
}

#[test]
fn metrics_takes_a_port_or_an_address_and_a_port() {
    assert_eq!(parse(None).unwrap().metrics, None);
    let at = |v: &str| parse(Some(&format!("metrics={v}"))).map(|o| o.metrics.unwrap().to_string());
    assert_eq!(at("9404").unwrap(), "127.0.0.1:9404");
    assert_eq!(at("0.0.0.0:9404").unwrap(), "0.0.0.0:9404");
    assert_eq!(at("[::1]:80").unwrap(), "[::1]:80");
    for bad in [
        "0",
        "65536",
        "x",
        "localhost:9404",
        "1.2.3.4:",
        ":9404",
        "[::1]",
        "9404:1.2.3.4",
    ] {
        let e = at(bad).unwrap_err();
        assert!(
            e.starts_with(&format!("metrics={bad}: expected [ADDR:]PORT")),
            "{e}"
        );
        assert!(!e.contains('\n'));
    }
}

#[test]
fn boundary_after_takes_zero_or_a_duration_up_to_a_second() {
    use std::time::Duration;
    assert_eq!(
        parse(None).unwrap().boundary_after,
        Duration::from_millis(1)
    );
    for (v, want) in [
        ("0", Duration::ZERO),
        ("250us", Duration::from_micros(250)),
        ("5ms", Duration::from_millis(5)),
        ("1s", Duration::from_secs(1)),
    ] {
        let o = parse(Some(&format!("boundary_after={v}"))).unwrap();
        assert_eq!(o.boundary_after, want, "{v}");
    }
    for bad in ["2s", "-1ms", "5", "soon", ""] {
        let error = parse(Some(&format!("boundary_after={bad}"))).unwrap_err();
        assert!(error.contains("boundary_after="), "{bad}: {error}");
    }
}
