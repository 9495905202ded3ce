//! Offline rewriter: wraps the native methods of a directory tree, a `.class` file or a `.jar`
//! for static instrumentation (e.g. `java --patch-module java.base=OUT`). The rewritten natives
//! carry a prefix, so the VM needs an agent that announces it (JVMTI SetNativeMethodPrefix).

use nativeacct_classfile::{rewrite, HelperSpec, NativeMethodRef, Outcome, Policy, RewriteConfig};
use std::collections::BTreeMap;
use std::fs;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Like `println!`, but a closed stdout (e.g. `| head`) is not an error worth a panic.
macro_rules! say {
    ($($arg:tt)*) => {{
        let _ = writeln!(std::io::stdout().lock(), $($arg)*);
    }};
}

const USAGE: &str =
    "usage: nativeacct-rewrite IN OUT [--prefix P] [--helper-owner CLASS] [--helper-begin NAME] \
[--helper-end NAME] [--no-inject] \
[--jdk N] [--include PAT]... [--exclude PAT]... [--wrap-intrinsics] [--changed-only] [--verbose]";

const VALID_FLAGS: &str = "--prefix, --helper-owner, --helper-begin, --helper-end, --no-inject, --jdk, --include, --exclude, \
--wrap-intrinsics, --changed-only, --verbose, --help";

struct Args {
    input: PathBuf,
    output: PathBuf,
    config: RewriteConfig,
    changed_only: bool,
    verbose: bool,
}

fn parse_args(argv: Vec<String>) -> Result<Args, String> {
    let mut positional = Vec::new();
    let mut config = RewriteConfig::default();
    let mut helper = HelperSpec::default();
    let mut policy = Policy::default();
    let mut changed_only = false;
    let mut verbose = false;
    let mut it = argv.into_iter();
    while let Some(arg) = it.next() {
        let mut value = |flag: &str| {
            it.next()
                .ok_or_else(|| format!("{flag} needs a value (valid flags: {VALID_FLAGS})"))
        };
        match arg.as_str() {
            "--prefix" => config.prefix = value("--prefix")?,
            "--helper-owner" => helper.owner = value("--helper-owner")?.replace('.', "/"),
            "--helper-begin" => helper.begin = value("--helper-begin")?,
            "--helper-end" => helper.end = value("--helper-end")?,
            "--no-inject" => helper.inject_into_owner = false,
            "--jdk" => {
                let v = value("--jdk")?;
                policy.jdk_feature = v.parse().map_err(|_| {
                    format!("--jdk expects a feature version such as 17, got {v:?}")
                })?;
            }
            "--include" => policy.include.push(value("--include")?),
            "--exclude" => policy.exclude.push(value("--exclude")?),
            "--wrap-intrinsics" => policy.wrap_intrinsics = true,
            "--changed-only" => changed_only = true,
            "--verbose" => verbose = true,
            "--help" | "-h" => return Err(USAGE.to_string()),
            flag if flag.starts_with('-') && flag.len() > 1 => {
                return Err(format!("unknown flag {flag} (valid flags: {VALID_FLAGS})"));
            }
            _ => positional.push(arg),
        }
    }
    if positional.len() != 2 {
        return Err(format!(
            "expected IN and OUT, got {} argument(s) (valid flags: {VALID_FLAGS})",
            positional.len()
        ));
    }
    if config.prefix.is_empty() {
        return Err("--prefix must not be empty".into());
    }
    config.helper = helper;
    config.policy = policy;
    let output = PathBuf::from(positional.pop().unwrap_or_default());
    let input = PathBuf::from(positional.pop().unwrap_or_default());
    Ok(Args {
        input,
        output,
        config,
        changed_only,
        verbose,
    })
}

#[derive(Default)]
struct Stats {
    classes: usize,
    classes_with_natives: usize,
    classes_rewritten: usize,
    natives_wrapped: usize,
    skipped_by_reason: BTreeMap<String, usize>,
    failures: Vec<String>,
    other_files: usize,
    next_id: i32,
}

impl Stats {
    /// Rewrites one class; returns the bytes to write (None: unchanged).
    fn class(
        &mut self,
        name: &str,
        bytes: &[u8],
        config: &RewriteConfig,
        verbose: bool,
    ) -> Option<Vec<u8>> {
        self.classes += 1;
        match nativeacct_classfile::has_native_methods(bytes) {
            Ok(false) => {
                let owner_file = format!("{}.class", config.helper.owner);
                if !(config.helper.inject_into_owner && name.ends_with(&owner_file)) {
                    return None;
                }
            }
            Ok(true) => self.classes_with_natives += 1,
            Err(error) => {
                self.failures.push(format!("{name}: {error}"));
                return None;
            }
        }
        let mut next_id = self.next_id;
        let mut assign = |m: &NativeMethodRef| {
            let id = next_id;
            next_id += 1;
            if verbose {
                say!("wrap {}.{}{} id {id}", m.class, m.name, m.descriptor);
            }
            id
        };
        let result = rewrite(bytes, config, &mut assign);
        self.next_id = next_id;
        let (out, skipped) = match result {
            Ok(Outcome::Unchanged { skipped }) => (None, skipped),
            Ok(Outcome::Rewritten {
                bytes,
                wrapped,
                skipped,
            }) => {
                self.classes_rewritten += 1;
                self.natives_wrapped += wrapped.len();
                (Some(bytes), skipped)
            }
            Err(error) => {
                self.failures.push(format!("{name}: {error}"));
                return None;
            }
        };
        for s in skipped {
            if verbose {
                let m = &s.method;
                say!("skip {}.{}{}: {}", m.class, m.name, m.descriptor, s.reason);
            }
            *self.skipped_by_reason.entry(s.reason).or_default() += 1;
        }
        out
    }

    fn print(&self) {
        let skipped: usize = self.skipped_by_reason.values().sum();
        say!(
            "classes: {} scanned, {} with natives, {} rewritten, {} failed",
            self.classes,
            self.classes_with_natives,
            self.classes_rewritten,
            self.failures.len()
        );
        say!(
            "natives: {} wrapped, {} skipped",
            self.natives_wrapped,
            skipped
        );
        for (why, count) in &self.skipped_by_reason {
            say!("  skipped {count:6}  {why}");
        }
        if self.other_files > 0 {
            say!("other files copied: {}", self.other_files);
        }
        for failure in &self.failures {
            say!("failed (left unchanged): {failure}");
        }
    }
}

fn io_error(path: &Path, error: impl std::fmt::Display) -> String {
    format!("{}: {error}", path.display())
}

fn write_file(path: &Path, bytes: &[u8]) -> Result<(), String> {
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).map_err(|e| io_error(parent, e))?;
    }
    fs::write(path, bytes).map_err(|e| io_error(path, e))
}

fn collect_files(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), String> {
    let mut entries: Vec<_> = fs::read_dir(dir)
        .map_err(|e| io_error(dir, e))?
        .collect::<Result<_, _>>()
        .map_err(|e| io_error(dir, e))?;
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let path = entry.path();
        let kind = entry.file_type().map_err(|e| io_error(&path, e))?;
        if kind.is_dir() {
            collect_files(&path, out)?;
        } else {
            out.push(path);
        }
    }
    Ok(())
}

fn run_dir(args: &Args, stats: &mut Stats) -> Result<(), String> {
    let mut files = Vec::new();
    collect_files(&args.input, &mut files)?;
    for path in files {
        let relative = path
            .strip_prefix(&args.input)
            .map_err(|e| io_error(&path, e))?;
        let target = args.output.join(relative);
        let bytes = fs::read(&path).map_err(|e| io_error(&path, e))?;
        if path.extension().is_some_and(|e| e == "class") {
            let name = relative.to_string_lossy();
            match stats.class(&name, &bytes, &args.config, args.verbose) {
                Some(new_bytes) => write_file(&target, &new_bytes)?,
                None if !args.changed_only => write_file(&target, &bytes)?,
                None => {}
            }
        } else if !args.changed_only {
            stats.other_files += 1;
            write_file(&target, &bytes)?;
        }
    }
    Ok(())
}

fn run_class(args: &Args, stats: &mut Stats) -> Result<(), String> {
    let bytes = fs::read(&args.input).map_err(|e| io_error(&args.input, e))?;
    let name = args.input.to_string_lossy();
    match stats.class(&name, &bytes, &args.config, args.verbose) {
        Some(new_bytes) => write_file(&args.output, &new_bytes),
        None if !args.changed_only => write_file(&args.output, &bytes),
        None => Ok(()),
    }
}

/// Copy entry `index` of the input jar to the output as it is (still compressed).
fn copy_unchanged(
    args: &Args,
    archive: &mut zip::ZipArchive<fs::File>,
    writer: &mut zip::ZipWriter<fs::File>,
    index: usize,
) -> Result<(), String> {
    let raw = archive
        .by_index_raw(index)
        .map_err(|e| io_error(&args.input, e))?;
    writer
        .raw_copy_file(raw)
        .map_err(|e| io_error(&args.output, e))
}

fn run_jar(args: &Args, stats: &mut Stats) -> Result<(), String> {
    let input = fs::File::open(&args.input).map_err(|e| io_error(&args.input, e))?;
    let mut archive = zip::ZipArchive::new(input).map_err(|e| io_error(&args.input, e))?;
    if let Some(parent) = args.output.parent() {
        fs::create_dir_all(parent).map_err(|e| io_error(parent, e))?;
    }
    let output = fs::File::create(&args.output).map_err(|e| io_error(&args.output, e))?;
    let mut writer = zip::ZipWriter::new(output);
    let mut signed = false;
    for index in 0..archive.len() {
        let mut entry = archive
            .by_index(index)
            .map_err(|e| io_error(&args.input, e))?;
        let name = entry
            .name()
            .map_err(|e| io_error(&args.input, e))?
            .to_string();
        signed |= name.starts_with("META-INF/") && name.ends_with(".SF");
        if !entry.is_file() || !name.ends_with(".class") {
            if !args.changed_only {
                stats.other_files += usize::from(entry.is_file());
                drop(entry);
                copy_unchanged(args, &mut archive, &mut writer, index)?;
            }
            continue;
        }
        let mut bytes = Vec::with_capacity(entry.size() as usize);
        entry
            .read_to_end(&mut bytes)
            .map_err(|e| io_error(Path::new(&name), e))?;
        let modified = entry.last_modified();
        drop(entry);
        match stats.class(&name, &bytes, &args.config, args.verbose) {
            Some(new_bytes) => {
                let mut options = zip::write::SimpleFileOptions::default()
                    .compression_method(zip::CompressionMethod::Deflated);
                if let Some(time) = modified {
                    options = options.last_modified_time(time);
                }
                writer
                    .start_file(name.as_str(), options)
                    .map_err(|e| io_error(&args.output, e))?;
                writer
                    .write_all(&new_bytes)
                    .map_err(|e| io_error(&args.output, e))?;
            }
            None if !args.changed_only => copy_unchanged(args, &mut archive, &mut writer, index)?,
            None => {}
        }
    }
    writer.finish().map_err(|e| io_error(&args.output, e))?;
    if signed && stats.classes_rewritten > 0 {
        eprintln!(
            "nativeacct-rewrite: warning: {} is signed; rewritten classes break its signature",
            args.input.display()
        );
    }
    Ok(())
}

fn main() -> ExitCode {
    let args = match parse_args(std::env::args().skip(1).collect()) {
        Ok(args) => args,
        Err(message) => {
            eprintln!("nativeacct-rewrite: {message}");
            return ExitCode::from(2);
        }
    };
    let mut stats = Stats::default();
    let input_name = args.input.to_string_lossy().to_ascii_lowercase();
    let result = if args.input.is_dir() {
        run_dir(&args, &mut stats)
    } else if input_name.ends_with(".jar") || input_name.ends_with(".zip") {
        run_jar(&args, &mut stats)
    } else if input_name.ends_with(".class") {
        run_class(&args, &mut stats)
    } else {
        Err(format!(
            "{}: not a directory, .class or .jar",
            args.input.display()
        ))
    };
    stats.print();
    match result {
        Err(message) => {
            eprintln!("nativeacct-rewrite: {message}");
            ExitCode::from(1)
        }
        Ok(()) if !stats.failures.is_empty() => ExitCode::from(1),
        Ok(()) => ExitCode::SUCCESS,
    }
}
