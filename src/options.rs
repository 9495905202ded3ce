//! Agent options: `-agentpath:libnativeacct.so=opt,opt=value,...` (hprof style).

use crate::clock::ClockRequest;
use std::path::PathBuf;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Instrument only at the bytecode/native boundary (the paper's IPA).
    Ipa,
    /// MethodEntry/MethodExit baseline (the paper's SPA): disables the JIT, slow, for comparison only.
    Spa,
}

/// An output format. Several may be selected at once (`format=json+csv+html`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Format {
    /// The summary and an hprof-style table.
    Text,
    /// Everything, as one JSON document.
    Json,
    /// One row per native method, JNI function and process part.
    Csv,
    /// HdrHistogram percentile distributions: several files (overall, per JNI function, per top method).
    Hgrm,
    /// HdrHistogram interval log (base64, V2-compressed histograms).
    Hlog,
    /// Collapsed stacks (`frame;frame value`) of native self time.
    Collapsed,
    /// One self-contained HTML page.
    Html,
    /// The flame graph of native self time alone (inferno's interactive SVG).
    Svg,
    /// pprof's profile.proto, gzipped.
    Pprof,
}

impl Format {
    pub(crate) const ALL: [Format; 9] = [
        Format::Text,
        Format::Json,
        Format::Csv,
        Format::Hgrm,
        Format::Hlog,
        Format::Collapsed,
        Format::Html,
        Format::Svg,
        Format::Pprof,
    ];

    /// The `format=` value.
    pub fn name(self) -> &'static str {
        match self {
            Format::Text => "text",
            Format::Json => "json",
            Format::Csv => "csv",
            Format::Hgrm => "hgrm",
            Format::Hlog => "hlog",
            Format::Collapsed => "collapsed",
            Format::Html => "html",
            Format::Svg => "svg",
            Format::Pprof => "pprof",
        }
    }

    /// File name extension, without the dot.
    pub fn extension(self) -> &'static str {
        match self {
            Format::Text => "txt",
            Format::Json => "json",
            Format::Csv => "csv",
            Format::Hgrm => "hgrm",
            Format::Hlog => "hlog",
            Format::Collapsed => "collapsed",
            Format::Html => "html",
            Format::Svg => "svg",
            Format::Pprof => "pb.gz",
        }
    }

    fn from_name(name: &str) -> Option<Format> {
        Format::ALL.into_iter().find(|f| f.name() == name)
    }
}

/// Which native calls get their Java caller chain captured (`stacks=`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum StackSampling {
    Off,
    /// Every call.
    Every,
    /// The first call of each method on each thread, then every Nth.
    Nth(u32),
}

/// Default rows of ranked tables, `.hgrm` files per method and per-method `.hlog` tags (`top=`).
pub const DEFAULT_TOP: usize = 20;
/// Default Java caller frames kept per collapsed stack (`depth=`).
pub(crate) const DEFAULT_DEPTH: u32 = 16;
/// Default period of the process CPU scan (`scan=`).
pub(crate) const DEFAULT_SCAN_PERIOD: std::time::Duration = std::time::Duration::from_millis(100);
/// Upper bound of `depth=`: GetStackTrace cost grows with the depth.
pub(crate) const MAX_DEPTH: u32 = 1024;

/// How J2N crossings (Java calling a native method) are caught.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum J2nMode {
    /// NativeMethodBind trampolines: no class is changed (the default).
    Bind,
    /// Class-file rewriting into Java wrappers (the paper's design).
    Wrap,
}

impl J2nMode {
    pub(crate) fn name(self) -> &'static str {
        match self {
            J2nMode::Bind => "bind",
            J2nMode::Wrap => "wrap",
        }
    }
}

/// The parsed agent options.
#[derive(Clone, Debug)]
pub struct Options {
    pub(crate) help: bool,
    /// `file=`: the report's path, or the base of several outputs.
    pub file: Option<PathBuf>,
    /// Every selected format, in a fixed order, without duplicates. Empty: no file is written.
    pub formats: Vec<Format>,
    /// Rows of ranked tables and number of per-method `.hgrm` files.
    pub top: usize,
    /// Period of the `.hlog` snapshots (`interval=`); None: one interval covering the whole run.
    pub(crate) interval: Option<std::time::Duration>,
    /// Period of the process CPU scan (`scan=`); None: no periodic scan (`scan=off`).
    pub(crate) scan: Option<std::time::Duration>,
    /// Period of the partial reports written during the run (`snapshot=`); None: only at exit.
    pub(crate) snapshot: Option<std::time::Duration>,
    pub(crate) stacks: StackSampling,
    /// Java caller frames kept per collapsed stack.
    pub(crate) depth: u32,
    pub(crate) prefix: String,
    pub(crate) include: Vec<String>,
    pub(crate) exclude: Vec<String>,
    pub(crate) wrap_intrinsics: bool,
    pub(crate) clock: ClockRequest,
    pub(crate) quiet: bool,
    pub(crate) mode: Mode,
    pub(crate) j2n: J2nMode,
    /// Also write diagnostics (skipped classes, failures) to stderr.
    pub(crate) verbose: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            help: false,
            file: None,
            formats: Vec::new(),
            top: DEFAULT_TOP,
            interval: None,
            scan: Some(DEFAULT_SCAN_PERIOD),
            snapshot: None,
            stacks: StackSampling::Off,
            depth: DEFAULT_DEPTH,
            prefix: nativeacct_classfile::DEFAULT_PREFIX.to_string(),
            include: Vec::new(),
            exclude: Vec::new(),
            wrap_intrinsics: false,
            clock: ClockRequest::Auto,
            quiet: false,
            mode: Mode::Ipa,
            j2n: J2nMode::Bind,
            verbose: false,
        }
    }
}

/// The option reference printed by `help` (and the source of the names in error messages).
pub(crate) const REFERENCE: &[(&str, &str)] = &[
    ("help", "print this reference and exit"),
    (
        "file=PATH",
        "write the report to PATH (atomically, at VM death); with several formats, or hgrm, PATH less a format extension is the base of BASE.json, BASE.csv, BASE.<what>.hgrm, ...",
    ),
    (
        "format=json|text|csv|hgrm|hlog|collapsed|html|svg|pprof[+...]",
        "one or more formats joined by + (default json); e.g. format=json+csv+html",
    ),
    (
        "j2n=bind|wrap",
        "bind (default): count native calls through trampolines set at bind time, classes unchanged; wrap: rewrite classes into Java wrappers",
    ),
    (
        "prefix=STR",
        "j2n=wrap: prefix for renamed native methods (default $nativeacct$)",
    ),
    (
        "include=PAT[:PAT...]",
        "count only natives matching a pattern, e.g. java/io/*:com/foo/Bar.baz",
    ),
    (
        "exclude=PAT[:PAT...]",
        "never count natives matching a pattern",
    ),
    (
        "intrinsics=skip|wrap",
        "j2n=wrap: wrap @IntrinsicCandidate natives (default skip: wrapping loses the JIT intrinsic)",
    ),
    (
        "clock=auto|cycles|task-clock|thread-cputime|tsc|tsc-hybrid",
        "per-thread clock (default auto)",
    ),
    (
        "mode=ipa|spa",
        "ipa (default) or the slow MethodEntry/MethodExit baseline",
    ),
    ("quiet", "no summary on stderr"),
    ("verbose", "log every class that could not be rewritten"),
    ("top=N", "rows of ranked tables and per-method .hgrm files (default 20)"),
    (
        "interval=DURATION",
        "write .hlog interval histograms every DURATION (e.g. 1s, 500ms; adds hlog)",
    ),
    (
        "snapshot=DURATION",
        "also write the report so far every DURATION, marked partial (a VM that ends without VMDeath leaves the last one)",
    ),
    (
        "stacks=every|N",
        "capture the Java caller chain of every / every Nth native call per method (adds collapsed)",
    ),
    ("depth=N", "Java caller frames per collapsed stack (default 16)"),
    (
        "scan=DURATION|off",
        "how often the process CPU accounting looks at every thread (default 100ms; off: only at exit)",
    ),
];

fn valid_names() -> String {
    REFERENCE
        .iter()
        .map(|(name, _)| name.split(['=', '|']).next().unwrap_or(name))
        .collect::<Vec<_>>()
        .join(", ")
}

pub(crate) fn reference_text() -> String {
    let mut s = String::from(
        "nativeacct: exact bytecode vs native CPU time for Java programs\n\
         usage: java -agentpath:/path/libnativeacct.so[=option,option=value,...] ...\n\noptions:\n",
    );
    for (name, what) in REFERENCE {
        s.push_str(&format!("  {name:<62} {what}\n"));
    }
    s
}

/// Parse the option string. The error is a single line that names the valid options.
pub fn parse(raw: Option<&str>) -> Result<Options, String> {
    let mut opts = Options::default();
    let mut format_given = false;
    let raw = raw.unwrap_or("").trim();
    if raw.is_empty() {
        return Ok(opts);
    }
    for item in raw.split(',') {
        let (key, value) = match item.split_once('=') {
            Some((k, v)) => (k.trim(), Some(v)),
            None => (item.trim(), None),
        };
        let need = |v: Option<&str>| -> Result<String, String> {
            match v {
                Some(v) if !v.is_empty() => Ok(v.to_string()),
                _ => Err(format!("option '{key}' needs a value ({key}=...)")),
            }
        };
        let flag = |v: Option<&str>| -> Result<(), String> {
            match v {
                None => Ok(()),
                Some(_) => Err(format!("option '{key}' takes no value")),
            }
        };
        match key {
            "help" => {
                flag(value)?;
                opts.help = true;
            }
            "quiet" => {
                flag(value)?;
                opts.quiet = true;
            }
            "verbose" => {
                flag(value)?;
                opts.verbose = true;
            }
            "file" => opts.file = Some(PathBuf::from(need(value)?)),
            "format" => {
                for name in need(value)?.split('+') {
                    let Some(format) = Format::from_name(name.trim()) else {
                        return Err(format!(
                            "format={name}: expected json, text, csv, hgrm, hlog, collapsed, html, svg or pprof (several joined by +)"
                        ));
                    };
                    opts.formats.push(format);
                }
                format_given = true;
            }
            "top" => {
                let v = need(value)?;
                opts.top = match v.parse::<usize>() {
                    Ok(n) if n >= 1 => n,
                    _ => return Err(format!("top={v}: expected a positive number")),
                }
            }
            "depth" => {
                let v = need(value)?;
                opts.depth = match v.parse::<u32>() {
                    Ok(n) if (1..=MAX_DEPTH).contains(&n) => n,
                    _ => {
                        return Err(format!(
                            "depth={v}: expected a number from 1 to {MAX_DEPTH}"
                        ))
                    }
                }
            }
            "stacks" => {
                let v = need(value)?;
                opts.stacks = match v.as_str() {
                    "every" => StackSampling::Every,
                    n => match n.parse::<u32>() {
                        Ok(1) => StackSampling::Every,
                        Ok(n) if n >= 2 => StackSampling::Nth(n),
                        _ => {
                            return Err(format!(
                                "stacks={v}: expected every or a positive number N (every Nth call)"
                            ))
                        }
                    },
                }
            }
            "interval" => {
                let v = need(value)?;
                opts.interval = Some(parse_duration(key, &v)?);
            }
            "snapshot" => {
                let v = need(value)?;
                opts.snapshot = Some(parse_duration(key, &v)?);
            }
            "scan" => {
                let v = need(value)?;
                opts.scan = match v.as_str() {
                    "off" => None,
                    _ => Some(parse_duration(key, &v).map_err(|_| {
                        format!(
                            "scan={v}: expected off or a duration from 10ms to 24h, e.g. 100ms, 1s"
                        )
                    })?),
                };
            }
            "prefix" => {
                let p = need(value)?;
                if p.contains(['.', ';', '[', '/', '<', '>']) {
                    return Err(format!(
                        "prefix={p}: must not contain any of . ; [ / < > (it becomes part of method names)"
                    ));
                }
                opts.prefix = p;
            }
            "include" => opts.include.extend(patterns(key, &need(value)?)?),
            "exclude" => opts.exclude.extend(patterns(key, &need(value)?)?),
            "intrinsics" => {
                opts.wrap_intrinsics = match need(value)?.as_str() {
                    "skip" => false,
                    "wrap" => true,
                    other => return Err(format!("intrinsics={other}: expected skip or wrap")),
                }
            }
            "clock" => {
                let v = need(value)?;
                opts.clock = ClockRequest::from_name(&v).ok_or_else(|| {
                    format!("clock={v}: expected auto, cycles, task-clock, thread-cputime, tsc or tsc-hybrid")
                })?;
            }
            "j2n" => {
                opts.j2n = match need(value)?.as_str() {
                    "bind" => J2nMode::Bind,
                    "wrap" => J2nMode::Wrap,
                    other => return Err(format!("j2n={other}: expected bind or wrap")),
                }
            }
            "mode" => {
                opts.mode = match need(value)?.as_str() {
                    "ipa" => Mode::Ipa,
                    "spa" => Mode::Spa,
                    other => return Err(format!("mode={other}: expected ipa or spa")),
                }
            }
            "" => {
                return Err(format!(
                    "empty option in '{raw}'; valid options: {}",
                    valid_names()
                ))
            }
            other => {
                return Err(format!(
                    "unknown option '{other}'; valid options: {}",
                    valid_names()
                ))
            }
        }
    }
    // A file with no format means JSON, and so does snapshot= (it needs a file); interval= and
    // stacks= bring their own formats along.
    if !format_given
        && (opts.file.is_some()
            || opts.interval.is_some()
            || opts.snapshot.is_some()
            || opts.stacks != StackSampling::Off)
    {
        opts.formats.push(Format::Json);
    }
    if opts.interval.is_some() {
        opts.formats.push(Format::Hlog);
    }
    if opts.stacks != StackSampling::Off {
        opts.formats.push(Format::Collapsed);
    }
    opts.formats.sort();
    opts.formats.dedup();
    Ok(opts)
}

/// `interval=`, `snapshot=` and `scan=`: a number with an optional unit (ms, s, m); no unit means seconds.
/// At least 10 ms.
fn parse_duration(key: &str, v: &str) -> Result<std::time::Duration, String> {
    let (number, scale_ms) = if let Some(n) = v.strip_suffix("ms") {
        (n, 1.0)
    } else if let Some(n) = v.strip_suffix('s') {
        (n, 1000.0)
    } else if let Some(n) = v.strip_suffix('m') {
        (n, 60_000.0)
    } else {
        (v, 1000.0)
    };
    match number.parse::<f64>() {
        Ok(n) if n.is_finite() && n * scale_ms >= 10.0 && n * scale_ms <= 86_400_000.0 => Ok(
            std::time::Duration::from_micros((n * scale_ms * 1000.0) as u64),
        ),
        _ => Err(format!(
            "{key}={v}: expected a duration from 10ms to 24h, e.g. 500ms, 1s, 2m"
        )),
    }
}

impl Options {
    /// The prefix that multi-file output names start with: `file=` without a known format extension,
    /// or `nativeacct-<pid>` in the working directory when formats were asked for without `file=`.
    pub fn output_base(&self) -> PathBuf {
        let Some(file) = &self.file else {
            return PathBuf::from(format!("nativeacct-{}", std::process::id()));
        };
        // Extensions may have two parts (`pb.gz`).
        let name = file.as_os_str().to_string_lossy();
        Format::ALL
            .iter()
            .find_map(|f| name.strip_suffix(&format!(".{}", f.extension())))
            .filter(|base| !base.is_empty() && !base.ends_with('/'))
            .map_or_else(|| file.clone(), PathBuf::from)
    }

    /// Where `format` is written: exactly `file=` when it is the only format and makes a single file,
    /// otherwise `<base>.<extension>`. For `hgrm` this is the prefix of its files (see `hgrm_path`).
    pub fn output_path(&self, format: Format) -> PathBuf {
        if let (Some(file), [only]) = (&self.file, self.formats.as_slice()) {
            if *only == format && format != Format::Hgrm {
                return file.clone();
            }
        }
        let mut name = self.output_base().into_os_string();
        name.push(".");
        name.push(format.extension());
        PathBuf::from(name)
    }

    /// Path of one `.hgrm` file: `<base>.<what>.hgrm`, `what` made file-name safe.
    pub fn hgrm_path(&self, what: &str) -> PathBuf {
        let mut name = self.output_base().into_os_string();
        name.push(".");
        name.push(file_name_safe(what));
        name.push(".hgrm");
        PathBuf::from(name)
    }
}

/// `s` with every character outside `[A-Za-z0-9._$-]` replaced by `_`, at most 120 bytes.
pub(crate) fn file_name_safe(s: &str) -> String {
    let mut out: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '$' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    out.truncate(120);
    out
}

fn patterns(key: &str, value: &str) -> Result<Vec<String>, String> {
    let list: Vec<String> = value.split(':').map(str::to_string).collect();
    if list
        .iter()
        .any(|p| p.is_empty() || p.contains(char::is_whitespace))
    {
        return Err(format!(
            "{key}={value}: patterns are separated by ':' and may not be empty or contain spaces"
        ));
    }
    Ok(list)
}

#[cfg(test)]
mod tests {
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
}
