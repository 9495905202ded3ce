//! Exports on a real JVM (issue 3): the workload of `tests/agent/` run with every format at once, and
//! each file checked against the workload's known counts and against the JSON report.
//!
//! Ground truth is the workload's own code: with ROUNDS rounds and REPS = 1 it calls `spin` 8 x ROUNDS
//! times (8 workers), `nest` 60 times (10 x nest(5)), `throwFromNative` 7, `callJavaThatThrows` 4,
//! `callEveryStyle` 1 and `runAttachedThread` 1 time.

#[path = "agent/support.rs"]
mod support;

use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
use hdrhistogram::serialization::Deserializer;
use hdrhistogram::Histogram;
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use support::*;

const ROUNDS: u64 = 4;
const WORKERS: u64 = 8;

fn known_counts() -> Vec<(&'static str, u64)> {
    vec![
        ("spin", WORKERS * ROUNDS),
        ("nest", 60),
        ("throwFromNative", 7),
        ("callJavaThatThrows", 4),
        ("callEveryStyle", 1),
        ("runAttachedThread", 1),
    ]
}

/// Run the workload with `options` added; the reports share the base `dir/report`.
fn run(dir_name: &str, options: &str) -> (PathBuf, Value) {
    let classes = workload();
    let dir = scratch(dir_name);
    let (out, report) = run_with_report(
        options,
        &[],
        classes,
        &["Workload", &ROUNDS.to_string(), "1"],
        &dir,
    );
    assert!(text(&out.stdout).contains("done"), "{}", text(&out.stdout));
    (dir, report)
}

/// Run the workload once with a single output `format` written to `file`; it must succeed.
fn run_to(file: &Path, format: &str) {
    let out = run_java(
        Some(&format!("quiet,file={},format={format}", file.display())),
        &[],
        workload(),
        &["Workload", "1", "1"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
}

/// No temporary report files left behind in `dir`.
fn assert_no_leftovers(dir: &Path) {
    let leftovers: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".tmp-") || n.contains(".partial-"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// `field` summed over the report's `native_methods` rows.
fn sum_over_methods(report: &Value, field: &str) -> u64 {
    report["native_methods"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m[field].as_u64().unwrap())
        .sum()
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn method<'a>(report: &'a Value, class: &str, name: &str) -> &'a Value {
    report["native_methods"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["class"] == class && m["name"] == name)
        .unwrap_or_else(|| panic!("{class}.{name} missing from native_methods"))
}

// ---- a reader of the .hgrm text format, written from its description ------------------------------

struct Hgrm {
    /// (value, percentile, total count) per line.
    rows: Vec<(f64, f64, u64)>,
    footer_total: u64,
    footer_max: f64,
}

fn parse_hgrm(text: &str) -> Hgrm {
    let mut rows = Vec::new();
    let (mut footer_total, mut footer_max) = (None, None);
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with("Value") {
            continue;
        }
        if let Some(footer) = line.strip_prefix("#[Max") {
            // "#[Max     =     6225.919, Total count    =           40]"
            let numbers: Vec<f64> = footer
                .split(['=', ',', ']'])
                .filter_map(|p| p.trim().parse().ok())
                .collect();
            footer_max = Some(numbers[0]);
            footer_total = Some(numbers[1] as u64);
            continue;
        }
        if line.starts_with('#') {
            continue;
        }
        let cols: Vec<&str> = line.split_whitespace().collect();
        assert!(cols.len() == 3 || cols.len() == 4, "bad .hgrm line: {line}");
        rows.push((
            cols[0].parse().unwrap(),
            cols[1].parse().unwrap(),
            cols[2].parse().unwrap(),
        ));
    }
    let hgrm = Hgrm {
        rows,
        footer_total: footer_total.expect("no '#[Max ..., Total count ...]' footer"),
        footer_max: footer_max.unwrap(),
    };
    // Shape: values and percentiles never decrease, the last line is the 100th percentile with the total.
    for pair in hgrm.rows.windows(2) {
        assert!(
            pair[1].0 >= pair[0].0 && pair[1].1 >= pair[0].1 && pair[1].2 >= pair[0].2,
            "not monotonic: {text}"
        );
    }
    if let Some(last) = hgrm.rows.last() {
        assert_eq!(last.1, 1.0, "last percentile is not 1.0");
        assert_eq!(
            last.2, hgrm.footer_total,
            "last TotalCount differs from the footer"
        );
        assert!((last.0 - hgrm.footer_max).abs() <= hgrm.footer_max * 0.01 + 0.001);
    }
    hgrm
}

// ---- base64 (standard alphabet, padded) for the .hlog payloads -----------------------------------

fn base64_decode(s: &str) -> Vec<u8> {
    let value = |c: u8| -> u32 {
        match c {
            b'A'..=b'Z' => (c - b'A') as u32,
            b'a'..=b'z' => (c - b'a') as u32 + 26,
            b'0'..=b'9' => (c - b'0') as u32 + 52,
            b'+' => 62,
            b'/' => 63,
            _ => panic!("not base64: {c}"),
        }
    };
    let bytes: Vec<u8> = s.bytes().filter(|&c| c != b'=').collect();
    let mut out = Vec::new();
    for chunk in bytes.chunks(4) {
        let mut acc = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            acc |= value(c) << (18 - 6 * i);
        }
        let n = chunk.len() * 6 / 8;
        out.extend_from_slice(&acc.to_be_bytes()[1..1 + n]);
    }
    out
}

/// Sum of the interval histograms per tag, and the number of intervals.
fn read_hlog(path: &Path) -> (HashMap<String, Histogram<u64>>, usize) {
    let bytes = std::fs::read(path).unwrap();
    let mut per_tag: HashMap<String, Histogram<u64>> = HashMap::new();
    let mut intervals = std::collections::BTreeSet::new();
    let mut deserializer = Deserializer::new();
    for entry in IntervalLogIterator::new(&bytes) {
        let entry = entry.expect("the .hlog parses");
        if let LogEntry::Interval(interval) = entry {
            let raw = base64_decode(interval.encoded_histogram());
            let h: Histogram<u64> = deserializer
                .deserialize(&mut raw.as_slice())
                .expect("a V2-compressed histogram that the crate deserializes");
            let tag = interval
                .tag()
                .map(|t| t.as_str().to_string())
                .unwrap_or_default();
            intervals.insert(interval.start_timestamp());
            per_tag
                .entry(tag)
                .or_insert_with(|| Histogram::new(2).unwrap())
                .add(&h)
                .unwrap();
        }
    }
    (per_tag, intervals.len())
}

/// The values of the single-value `cpu.*` tags, per tag, in interval order.
fn hlog_cpu_values(path: &Path) -> HashMap<String, Vec<u64>> {
    let bytes = std::fs::read(path).unwrap();
    let mut values: HashMap<String, Vec<u64>> = HashMap::new();
    let mut deserializer = Deserializer::new();
    for entry in IntervalLogIterator::new(&bytes) {
        if let Ok(LogEntry::Interval(interval)) = entry {
            let tag = interval.tag().map(|t| t.as_str().to_string());
            let Some(tag) = tag.filter(|t| t.starts_with("cpu.")) else {
                continue;
            };
            let raw = base64_decode(interval.encoded_histogram());
            let h: Histogram<u64> = deserializer.deserialize(&mut raw.as_slice()).unwrap();
            assert_eq!(h.len(), 1, "{tag}: one value per interval");
            values.entry(tag).or_default().push(h.max());
        }
    }
    values
}

fn csv_fields(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                chars.next();
                fields.last_mut().unwrap().push('"');
            }
            ('"', _) => quoted = !quoted,
            (',', false) => fields.push(String::new()),
            (c, _) => fields.last_mut().unwrap().push(c),
        }
    }
    fields
}

#[test]
fn every_format_agrees_with_the_known_counts() {
    let (dir, report) = run(
        "exports-all",
        "format=json+csv+hgrm+hlog+collapsed+html+text,stacks=every,interval=50ms,top=1000",
    );
    let base = dir.join("report");
    let path = |ext: &str| PathBuf::from(format!("{}.{ext}", base.display()));

    // JSON: known per-method counts, and the new latency fields.
    for (name, calls) in known_counts() {
        let m = method(&report, "Workload", name);
        assert_eq!(m["calls"], calls, "JSON calls of {name}");
        assert!(m["p50_ns"].as_u64().unwrap() <= m["p99_ns"].as_u64().unwrap());
        assert!(m["p99_ns"].as_u64().unwrap() <= m["max_ns"].as_u64().unwrap());
    }
    // spin burns 6 ms of CPU per call (3 slices of 2 ms): its median self time says so.
    let spin_p50 = method(&report, "Workload", "spin")["p50_ns"]
        .as_u64()
        .unwrap();
    assert!(
        (5_000_000..20_000_000).contains(&spin_p50),
        "spin p50 {spin_p50} ns"
    );

    // CSV: one row per method and per JNI function, equal to the JSON.
    let csv = read(&path("csv"));
    let mut lines = csv.lines();
    assert_eq!(
        lines.next().unwrap(),
        "kind,class,name,descriptor,calls,total_ns,self_ns,java_ns,p50_ns,p99_ns,max_ns"
    );
    let rows: Vec<Vec<String>> = lines.map(csv_fields).collect();
    assert!(
        rows.iter().all(|r| r.len() == 11),
        "every CSV row has 11 fields"
    );
    let methods: Vec<&Vec<String>> = rows.iter().filter(|r| r[0] == "native_method").collect();
    let functions: Vec<&Vec<String>> = rows.iter().filter(|r| r[0] == "jni_function").collect();
    assert_eq!(
        methods.len(),
        report["native_methods"].as_array().unwrap().len()
    );
    // Every JNI function: the 93 upcalls and the 137 counted ones.
    assert_eq!(functions.len(), 230);
    for (name, calls) in known_counts() {
        let row = methods
            .iter()
            .find(|r| r[1] == "Workload" && r[2] == name)
            .unwrap();
        assert_eq!(row[4], calls.to_string(), "CSV calls of {name}");
    }
    for m in report["native_methods"].as_array().unwrap() {
        let row = methods
            .iter()
            .find(|r| {
                r[1] == m["class"].as_str().unwrap()
                    && r[2] == m["name"].as_str().unwrap()
                    && r[3] == m["descriptor"].as_str().unwrap()
            })
            .unwrap_or_else(|| panic!("no CSV row for {m}"));
        assert_eq!(row[4], m["calls"].to_string());
        assert_eq!(row[5], m["total_ns"].to_string());
        assert_eq!(row[6], m["self_ns"].to_string());
    }
    for (f, row) in report["jni_functions"]
        .as_array()
        .unwrap()
        .iter()
        .zip(&functions)
    {
        assert_eq!(row[2], f["name"].as_str().unwrap());
        assert_eq!(row[4], f["calls"].to_string());
        assert_eq!(row[7], f["java_ns"].to_string());
    }

    // .hgrm: each known method's file holds exactly its calls; overall and per JNI function are
    // consistent with the JSON (upcalls still running at exit are counted but have no duration yet).
    let hgrm_files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "hgrm"))
        .collect();
    for (name, calls) in known_counts() {
        let suffix = format!(".Workload.{name}.hgrm");
        let file = hgrm_files
            .iter()
            .find(|p| {
                p.to_string_lossy().ends_with(&suffix)
                    && p.to_string_lossy().contains("report.method.")
            })
            .unwrap_or_else(|| panic!("no .hgrm for {name}"));
        assert_eq!(
            parse_hgrm(&read(file)).footer_total,
            calls,
            "{}",
            file.display()
        );
    }
    let native = parse_hgrm(&read(&path("native.hgrm")));
    assert_eq!(
        native.footer_total,
        report["native_self_latency"]["count"].as_u64().unwrap()
    );
    let completed: u64 = sum_over_methods(&report, "calls");
    assert_eq!(
        native.footer_total, completed,
        "every completed native call is in native.hgrm"
    );
    let live_threads = report["per_thread"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["alive_at_exit"] == true)
        .count() as u64;
    let mut in_flight = 0;
    // The upcalls have durations; the other JNI functions are counted only.
    for f in report["jni_functions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kind"] == "upcall")
    {
        let calls = f["calls"].as_u64().unwrap();
        let file = path(&format!("jni.{}.hgrm", f["name"].as_str().unwrap()));
        let recorded = if file.exists() {
            parse_hgrm(&read(&file)).footer_total
        } else {
            0
        };
        assert!(
            recorded <= calls,
            "{}: {recorded} durations for {calls} calls",
            file.display()
        );
        in_flight += calls - recorded;
    }
    assert!(
        in_flight <= live_threads,
        "{in_flight} upcalls without a duration, {live_threads} threads alive at exit"
    );
    let jni = parse_hgrm(&read(&path("jni.hgrm")));
    assert_eq!(
        jni.footer_total + in_flight,
        report["jni_calls"].as_u64().unwrap()
    );
    // Every JNI call style ran (callEveryStyle), so all 93 functions have a file.
    let per_function = hgrm_files
        .iter()
        .filter(|p| {
            p.file_name().is_some_and(|n| {
                n.to_string_lossy().starts_with("report.jni.") && n != "report.jni.hgrm"
            })
        })
        .count();
    assert_eq!(per_function, 93);

    // .hlog: V2-compressed histograms the crate deserializes; the intervals add up to the totals.
    let (tags, intervals) = read_hlog(&path("hlog"));
    assert!(
        intervals >= 2,
        "interval=50ms gave only {intervals} interval(s)"
    );
    assert_eq!(tags["native"].len(), native.footer_total);
    assert_eq!(tags["jni"].len(), jni.footer_total);
    assert_eq!(tags["method.Workload.spin(J)V"].len(), WORKERS * ROUNDS);
    assert_eq!(tags["method.Workload.nest(I)I"].len(), 60);
    assert_eq!(tags["jni.CallNonvirtualBooleanMethodA"].len(), 1);
    // The process's CPU time per part, one value per interval: every interval has all nine tags,
    // and they add up to the JSON's figures (3 significant digits each; a part that shrank between
    // two snapshots, e.g. a thread renamed into the VM's, counts 0 there).
    let process = &report["process"];
    let cpu_ns = process["cpu_ns"].as_u64().unwrap();
    let cpu_values = hlog_cpu_values(&path("hlog"));
    assert_eq!(cpu_values.len(), 9, "{:?}", cpu_values.keys());
    assert!(cpu_values.values().all(|v| v.len() == intervals));
    let logged: u64 = cpu_values["cpu.process"].iter().sum();
    assert!(
        (logged as f64 - cpu_ns as f64).abs() <= cpu_ns as f64 * 0.002,
        "cpu.process adds up to {logged}, JSON cpu_ns {cpu_ns}"
    );
    for (part, ns) in process["parts"].as_object().unwrap() {
        let logged: u64 = cpu_values[&format!("cpu.{part}")].iter().sum();
        let ns = ns.as_u64().unwrap();
        assert!(
            (logged as f64 - ns as f64).abs() <= cpu_ns as f64 * 0.01,
            "cpu.{part} adds up to {logged}, JSON {ns}"
        );
    }

    // Collapsed stacks: the total is the JSON's native self time (within 1 %; by construction exact).
    let collapsed = read(&path("collapsed"));
    let mut total = 0u64;
    let mut by_stack = HashMap::new();
    for line in collapsed.lines() {
        let (stack, value) = line.rsplit_once(' ').expect("frame;frame value");
        assert!(!stack.contains(' '));
        let value: u64 = value.parse().unwrap();
        total += value;
        by_stack.insert(stack.to_string(), value);
    }
    let self_ns: u64 = sum_over_methods(&report, "self_ns");
    let diff = (total as f64 - self_ns as f64).abs() / self_ns as f64;
    eprintln!(
        "collapsed total {total} ns, JSON self time {self_ns} ns ({:.4} % apart)",
        diff * 100.0
    );
    assert!(diff <= 0.01);
    // The callers are the workload's: the worker lambda under Thread.run for spin, and the
    // nest -> nestJava -> nest recursion (the agent's helper and renamed frames are hidden).
    let spin_self = method(&report, "Workload", "spin")["self_ns"]
        .as_u64()
        .unwrap();
    // (The lambda's hidden class, e.g. Workload$$Lambda$1.0x0000000800000a60.run, sits in between.)
    let spin_from_workers: u64 = by_stack
        .iter()
        .filter(|(k, _)| {
            k.starts_with("java.lang.Thread.run;")
                && k.ends_with(";Workload.lambda$main$0;Workload.spin(long)")
        })
        .map(|(_, v)| v)
        .sum();
    assert_eq!(
        spin_from_workers, spin_self,
        "all of spin's self time is under the worker lambda"
    );
    for depth in 0..=5 {
        let chain = "Workload.nest;Workload.nestJava;".repeat(depth);
        let key = format!("Workload.main;{chain}Workload.nest(int)");
        assert!(by_stack.contains_key(&key), "no stack {key}");
    }
    let stacks = &report["stacks"];
    assert_eq!(stacks["sampling"], "every");
    // Every call is captured, but for the JDK's calls before the live phase (bind mode counts them).
    assert_eq!(
        stacks["captured_calls"].as_u64().unwrap()
            + stacks["calls_before_live_phase"].as_u64().unwrap(),
        completed
    );
    assert_eq!(stacks["failed_captures"], 0);
    eprintln!(
        "stack capture: {} ns per call",
        stacks["capture_ns_per_call"]
    );

    // CSV: the process rows are the JSON's.
    let process_rows: Vec<&Vec<String>> = rows.iter().filter(|r| r[0] == "process").collect();
    assert_eq!(process_rows.len(), 9);
    assert_eq!(process_rows[0][2], "cpu_ns");
    assert_eq!(process_rows[0][5], process["cpu_ns"].to_string());
    for row in &process_rows[1..] {
        assert_eq!(row[5], process["parts"][&row[2]].to_string(), "{row:?}");
    }
    let thread_rows: Vec<&Vec<String>> = rows.iter().filter(|r| r[0] == "process_thread").collect();
    let json_threads = process["threads"].as_array().unwrap();
    assert_eq!(thread_rows.len(), json_threads.len());
    for (row, t) in thread_rows.iter().zip(json_threads) {
        assert_eq!(row[1], t["part"].as_str().unwrap());
        assert_eq!(row[2], t["name"].as_str().unwrap());
        assert_eq!(row[3], t["tid"].to_string());
        assert_eq!(row[5], t["cpu_ns"].to_string());
    }

    // Text: the process's parts, and the ranked table.
    let text_report = read(&path("txt"));
    for label in [
        "Java bytecode",
        "Java native (JNI)",
        "JIT compiler",
        "GC",
        "VM other",
        "native threads",
        "agent",
        "unattributed",
    ] {
        assert!(
            text_report
                .lines()
                .any(|l| l.starts_with(&format!("    {label} "))),
            "text summary lacks the {label} line"
        );
    }
    assert!(text_report.contains(&format!(
        "  process      {:.3} s of CPU time",
        cpu_ns as f64 / 1e9
    )));
    assert!(text_report.contains(
        "rank    self   accum      calls    total_ms     self_ms       p50       p99  method"
    ));
    assert!(text_report.contains("Workload.spin(J)V"));

    // HTML: self-contained, with the four SVG parts and inferno's flame graph.
    let html = read(&path("html"));
    for id in [
        "id=\"process\"",
        "id=\"split\"",
        "id=\"top-natives\"",
        "class=\"latency\"",
        "id=\"flame\"",
    ] {
        assert!(html.contains(id), "HTML lacks {id}");
    }
    // What would load something (a link in the flame graph script's comments loads nothing).
    for external in [
        "<link",
        " src=",
        "href=\"http",
        "href=&quot;http",
        "url(http",
        "url(//",
        "@import",
    ] {
        assert!(
            !html.contains(external),
            "HTML refers to an external resource ({external})"
        );
    }
    assert!(
        html.contains("worker-3"),
        "per-thread split lists the workers"
    );
}

#[test]
fn sampled_stacks_keep_exact_totals_and_the_depth() {
    let (dir, report) = run("exports-sampled", "format=json+collapsed,stacks=5,depth=2");
    let collapsed = read(&dir.join("report.collapsed"));
    let mut total = 0u64;
    let mut spin_total = 0u64;
    for line in collapsed.lines() {
        let (stack, value) = line.rsplit_once(' ').unwrap();
        let value: u64 = value.parse().unwrap();
        assert!(
            stack.split(';').count() <= 3,
            "more than depth=2 callers: {stack}"
        );
        total += value;
        if stack.ends_with(";Workload.spin(long)") {
            spin_total += value;
        }
    }
    let self_ns: u64 = sum_over_methods(&report, "self_ns");
    assert!(
        (total as f64 - self_ns as f64).abs() <= self_ns as f64 * 0.01,
        "{total} vs {self_ns}"
    );
    // A method's lines add up to its exact self time even though only some calls were sampled.
    assert_eq!(
        spin_total,
        method(&report, "Workload", "spin")["self_ns"]
            .as_u64()
            .unwrap()
    );
    let completed: u64 = sum_over_methods(&report, "calls");
    let captured = report["stacks"]["captured_calls"].as_u64().unwrap();
    assert_eq!(report["stacks"]["sampling"], "every 5th");
    assert!(
        captured < completed,
        "stacks=5 captured {captured} of {completed} calls"
    );
    assert!(captured > 0);
}

#[test]
fn single_format_goes_exactly_to_file_and_hlog_works_without_interval() {
    let dir = scratch("exports-single");
    let csv = dir.join("only.csv");
    run_to(&csv, "csv");
    assert!(read(&csv).starts_with("kind,class,name"));
    assert_eq!(
        std::fs::read_dir(&dir).unwrap().count(),
        1,
        "only the CSV was written"
    );

    let hlog = dir.join("whole.hlog");
    run_to(&hlog, "hlog");
    let (tags, intervals) = read_hlog(&hlog);
    assert_eq!(intervals, 1, "without interval= the run is one interval");
    assert_eq!(tags["method.Workload.nest(I)I"].len(), 60);
    assert_no_leftovers(&dir);
}

/// A path that is not a regular file must keep its kind: writing the report by rename would replace a
/// FIFO, a symlink (or `/dev/null`) with a plain file.
#[test]
fn special_output_paths_are_written_in_place() {
    let dir = scratch("exports-in-place");

    // A symlink to an existing, longer file: the link stays, the target holds exactly the report.
    let target = dir.join("target.json");
    std::fs::write(&target, "x".repeat(1 << 20)).unwrap();
    let link = dir.join("link.json");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    run_to(&link, "json");
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    let report: serde_json::Value = serde_json::from_str(&read(&target)).expect("valid JSON");
    assert_eq!(method(&report, "Workload", "nest")["calls"], 60);

    // A FIFO: a reader collects what is written to it; the start-up check must not block on it.
    let fifo = dir.join("report.fifo");
    let c_path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: `c_path` is a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
    let reader_path = fifo.clone();
    let reader = std::thread::spawn(move || {
        // The agent may open and close the FIFO once before the report (its start-up check).
        for _ in 0..5 {
            let body = std::fs::read_to_string(&reader_path).unwrap();
            if !body.is_empty() {
                return body;
            }
        }
        String::new()
    });
    run_to(&fifo, "json");
    let report: serde_json::Value =
        serde_json::from_str(&reader.join().unwrap()).expect("valid JSON through the FIFO");
    assert_eq!(method(&report, "Workload", "nest")["calls"], 60);
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::symlink_metadata(&fifo)
        .unwrap()
        .file_type()
        .is_fifo());
    assert_no_leftovers(&dir);
}
