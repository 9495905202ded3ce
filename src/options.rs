//! Agent options: `-agentpath:libnativeacct.so=opt,opt=value,...` (hprof style).

use crate::clock::{ClockKind, ClockRequest};
use std::path::PathBuf;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Instrument only at the bytecode/native boundary (the paper's IPA).
    Ipa,
    /// MethodEntry/MethodExit baseline (the paper's SPA): disables the JIT, slow, for comparison only.
    Spa,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Text,
    Json,
}

#[derive(Clone, Debug)]
pub struct Options {
    pub help: bool,
    pub file: Option<PathBuf>,
    pub format: Format,
    pub prefix: String,
    pub include: Vec<String>,
    pub exclude: Vec<String>,
    pub wrap_intrinsics: bool,
    pub clock: ClockRequest,
    pub quiet: bool,
    pub mode: Mode,
    /// Also write diagnostics (skipped classes, failures) to stderr.
    pub verbose: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            help: false,
            file: None,
            format: Format::Json,
            prefix: nativeacct_classfile::DEFAULT_PREFIX.to_string(),
            include: Vec::new(),
            exclude: Vec::new(),
            wrap_intrinsics: false,
            clock: ClockRequest::Auto,
            quiet: false,
            mode: Mode::Ipa,
            verbose: false,
        }
    }
}

/// The option reference printed by `help` (and the source of the names in error messages).
pub const REFERENCE: &[(&str, &str)] = &[
    ("help", "print this reference and exit"),
    (
        "file=PATH",
        "write the report to PATH (atomically, at VM death)",
    ),
    ("format=json|text", "format of file= (default json)"),
    (
        "prefix=STR",
        "prefix for renamed native methods (default $nativeacct$)",
    ),
    (
        "include=PAT[:PAT...]",
        "wrap only natives matching a pattern, e.g. java/io/*:com/foo/Bar.baz",
    ),
    (
        "exclude=PAT[:PAT...]",
        "never wrap natives matching a pattern",
    ),
    (
        "intrinsics=skip|wrap",
        "wrap @IntrinsicCandidate natives (default skip: wrapping loses the JIT intrinsic)",
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
];

fn valid_names() -> String {
    REFERENCE
        .iter()
        .map(|(name, _)| name.split(['=', '|']).next().unwrap_or(name))
        .collect::<Vec<_>>()
        .join(", ")
}

pub fn reference_text() -> String {
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
                opts.format = match need(value)?.as_str() {
                    "json" => Format::Json,
                    "text" => Format::Text,
                    other => return Err(format!("format={other}: expected json or text")),
                };
                format_given = true;
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
                opts.clock = if v == "auto" {
                    ClockRequest::Auto
                } else {
                    match ClockKind::from_name(&v) {
                        Some(kind) => ClockRequest::Exactly(kind),
                        None => {
                            return Err(format!(
                                "clock={v}: expected auto, cycles, task-clock, thread-cputime, tsc or tsc-hybrid"
                            ))
                        }
                    }
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
    if !format_given {
        opts.format = Format::Json;
    }
    Ok(opts)
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
        assert_eq!(o.format, Format::Text);
        assert_eq!(o.prefix, "pp$");
        assert_eq!(o.include, vec!["java/io/*", "a/B.c"]);
        assert_eq!(o.exclude, vec!["x/*"]);
        assert!(o.wrap_intrinsics && o.quiet);
        assert_eq!(o.clock, ClockRequest::Exactly(ClockKind::ThreadCputime));
        assert_eq!(o.mode, Mode::Spa);
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
        ] {
            let err = parse(Some(bad)).unwrap_err();
            assert!(!err.contains('\n'), "{bad}: {err}");
            assert!(!err.is_empty());
        }
        assert!(parse(Some("fiel=x"))
            .unwrap_err()
            .contains("file, format, prefix"));
    }
}
