//! Agent options: `-agentpath:libnativeacct.so=opt,opt=value,...` (hprof style).
//!
//! The model ([`Options`], [`Format`]) and the output names derived from it are here; the parser
//! of the option string is `parser`.

use crate::clock::ClockRequest;
use std::path::PathBuf;

mod parser;
pub use parser::parse;

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
    /// Every format, in `format=` documentation order.
    pub const ALL: [Format; 9] = [
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
            Format::Pprof => "pb.gz",
            other => other.name(),
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
    /// `exits=hook` (default): read every thread started after the agent loaded as it ends;
    /// `exits=scan`: only the scan sees threads end.
    pub(crate) exit_hook: bool,
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
    /// Open the control socket for `nativeacct dump` (`control=off`: no socket).
    pub(crate) control: bool,
    /// Serve `/metrics` over HTTP on this address (`metrics=[ADDR:]PORT`); None: no endpoint.
    pub(crate) metrics: Option<std::net::SocketAddr>,
    /// Run the boundary sampler (`boundary=on`, the default; `off`: no timers, no parts).
    pub(crate) boundary: bool,
    /// Sample with CPU-time timers only, never perf (`boundary=timer`).
    pub(crate) boundary_timer_only: bool,
    /// Period asked of each thread's CPU-time timer (`boundary_period=`).
    pub(crate) boundary_period: std::time::Duration,
    /// CPU time a thread runs before its sampler is armed (`boundary_after=`; 0: at its start).
    pub(crate) boundary_after: std::time::Duration,
    /// `timing=sampled`: no clock read at crossings; the split is estimated from the boundary
    /// sampler (`timing=exact`, the default: a clock read at every crossing).
    pub(crate) sampled_timing: bool,
    /// `jni_counts=upcalls`: only the 93 JNI functions that run Java are wrapped; the other 137
    /// keep the VM's own entries, uncounted (`all`, the default: every JNI function is counted).
    pub(crate) count_every_jni_function: bool,
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
            exit_hook: true,
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
            control: true,
            metrics: None,
            boundary: true,
            boundary_timer_only: false,
            boundary_period: crate::sampler::DEFAULT_PERIOD,
            boundary_after: crate::sampler::DEFAULT_ARM_AFTER,
            sampled_timing: false,
            count_every_jni_function: true,
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
        "clock=auto|cycles|task-clock|thread-cputime|tsc|tsc-hybrid|tsc-gated",
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
    (
        "exits=hook|scan",
        "hook (default): every thread started after the agent loaded is read as it ends (pthread_create replaced in the libraries' GOT); scan: only the scan sees threads end",
    ),
    (
        "boundary=on|timer|off",
        "on (default): a per-thread CPU-time sampler (perf task-clock, else timer_create) splits each side of the exact split into Java code, JVM for Java, native code, JVM for native code and the agent; timer: timer_create only (one sample per scheduler tick at most); off: no sampler",
    ),
    (
        "boundary_period=DURATION",
        "CPU time between the sampler's samples per thread, 100us to 1s (default 10ms; smaller: more samples, more cost; timers take at most one per scheduler tick)",
    ),
    (
        "boundary_after=DURATION",
        "CPU time a thread runs before its sampler is armed, 0 to 1s (default 1ms; 0: at the thread's start); shorter threads are not sampled, their time is unsampled_ns",
    ),
    (
        "timing=exact|sampled",
        "exact (default): a clock read at every crossing; sampled: crossings are still counted exactly, but the split and the per-method times are estimated from the boundary sampler (error bar in the report; no latency histograms)",
    ),
    (
        "jni_counts=all|upcalls",
        "all (default): every JNI function is counted, calls and time inside; upcalls: only the 93 that run Java (Call*Method, NewObject*), the other 137 keep the VM's own entries, uncounted (about 1.5 ns less per call of one; for timing=sampled on programs that call them tens of millions of times)",
    ),
    (
        "control=on|off",
        "on (default): a private Unix socket (0600, owner only) lets `nativeacct dump PID` ask for the report so far; off: none",
    ),
    (
        "metrics=[ADDR:]PORT",
        "serve live OpenMetrics / Prometheus text at http://ADDR:PORT/metrics (ADDR default 127.0.0.1; [::1]:PORT for IPv6; off by default)",
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
mod tests;
