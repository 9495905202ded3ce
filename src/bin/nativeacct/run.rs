//! `nativeacct run [agent options] -- java [java arguments]` (or, as a shortcut, the same without
//! `run`): run a Java program with the agent.
//!
//! Finds `libnativeacct.so` next to this executable, inserts `-agentpath:<lib>=<options>` right after
//! the Java launcher, runs the program with the same stdin/stdout/stderr, and exits with its exit code
//! (128 + signal number if it was killed by a signal). At exit it prints the paths of the reports on
//! stderr. Agent options may be given as separate words or comma-joined (`top=5 format=json+html` or
//! `top=5,format=json+html`). Without `file=`, the reports go to `nativeacct-<pid>.*` in the working
//! directory, as JSON and HTML unless `format=` says otherwise.

use crate::fail;
use nativeacct::launcher::options::{self, Format};
use nativeacct::launcher::outputs;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

/// Run a Java program with the agent (`nativeacct [agent options] -- java ...` is the same).
#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:
  nativeacct run format=json+html top=10 file=out/run -- java -jar app.jar
  nativeacct stacks=every -- java -cp app.jar Main      (the same without 'run')
  nativeacct run help -- java                           (lists every agent option)")]
pub(crate) struct RunArgs {
    /// Agent options (key=value words, or comma-joined), e.g. format=json+html top=10 stacks=every
    #[arg(allow_hyphen_values = true, value_name = "AGENT OPTION")]
    options: Vec<String>,
    /// The Java command after `--`: java (or a JDK's bin/java) and its arguments
    #[arg(last = true, value_name = "JAVA COMMAND")]
    command: Vec<String>,
}

const USAGE: &str = "usage: nativeacct [run] [agent options] -- java [java arguments]\n\
  e.g. nativeacct format=json+html top=10 file=out/run -- java -jar app.jar\n\
  agent options: nativeacct run help -- java lists them; nativeacct --help lists the subcommands";

pub(crate) fn main(args: RunArgs) -> ExitCode {
    let RunArgs {
        options: mut agent_words,
        mut command,
    } = args;
    // Agent options may start with '-' (none does today), so clap may leave `--` among them.
    if let Some(split) = agent_words.iter().position(|w| w == "--") {
        command = agent_words.split_off(split).split_off(1);
    }
    if command.is_empty() {
        return fail(&format!("missing '--' before the java command\n{USAGE}"));
    }
    let (program, program_args) = command.split_first().expect("not empty");
    let java = match java_launcher(program) {
        Ok(path) => path,
        Err(message) => return fail(&message),
    };
    let mut agent_options = option_words(&agent_words);
    let asks_help = sets(&agent_options, "help");
    if !asks_help && !sets(&agent_options, "file") {
        if let Err(message) = add_default_outputs(&mut agent_options, default_file) {
            return fail(&message);
        }
    }
    let joined = agent_options.join(",");
    let parsed = match options::parse(Some(&joined)) {
        Ok(o) => o,
        Err(e) => return fail(&format!("error: {e}")),
    };
    let library = match agent_library() {
        Ok(path) => path,
        Err(message) => return fail(&message),
    };
    let mut agent_arg = format!("-agentpath:{}", library.display());
    if !joined.is_empty() {
        agent_arg.push('=');
        agent_arg.push_str(&joined);
    }
    let mut child = match Command::new(&java)
        .arg(agent_arg)
        .args(program_args)
        .spawn()
    {
        Ok(child) => child,
        Err(e) => return fail(&format!("cannot run {}: {e}", java.display())),
    };
    // Ctrl-C goes to the whole process group: let the JVM handle it and exit, and stay to report.
    // (Set after spawning, so that the JVM does not inherit the ignored disposition.)
    // SAFETY: installing SIG_IGN for SIGINT/SIGQUIT has no preconditions.
    unsafe {
        libc::signal(libc::SIGINT, libc::SIG_IGN);
        libc::signal(libc::SIGQUIT, libc::SIG_IGN);
    }
    let status = match child.wait() {
        Ok(status) => status,
        Err(e) => return fail(&format!("waiting for java failed: {e}")),
    };
    if !asks_help {
        report_paths(&parsed);
    }
    let code = match (status.code(), status.signal()) {
        (Some(code), _) => code,
        (None, Some(signal)) => 128 + signal,
        _ => 1,
    };
    ExitCode::from(code.clamp(0, 255) as u8)
}

/// `file=` for the default reports: `nativeacct-<pid>` in the working directory, or the next free
/// `nativeacct-<pid>-N` if one of its names is taken (a default name replaces nothing, see
/// `nativeacct::outputs`); with one format that makes one file, that file's full name.
/// Agent options given as separate words or comma-joined, one option a word.
pub(crate) fn option_words(words: &[String]) -> Vec<String> {
    words
        .iter()
        .flat_map(|w| w.split(','))
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect()
}

/// Whether the agent options set `key` (bare, or as `key=...`).
pub(crate) fn sets(options: &[String], key: &str) -> bool {
    options
        .iter()
        .any(|o| o == key || o.starts_with(&format!("{key}=")))
}

/// The outputs when no `file=` is given: JSON and HTML unless a `format=` says otherwise, at the
/// file `default_file` picks for the options (format included).
pub(crate) fn add_default_outputs(
    options: &mut Vec<String>,
    default_file: impl FnOnce(&[String]) -> Result<PathBuf, String>,
) -> Result<(), String> {
    if !sets(options, "format") {
        options.push("format=json+html".to_string());
    }
    let file = default_file(options)?;
    options.push(format!("file={}", file.display()));
    Ok(())
}

fn default_file(agent_options: &[String]) -> Result<PathBuf, String> {
    // A bad option is reported by the parse in `main`, with no file= involved.
    let formats = options::parse(Some(&agent_options.join(",")))
        .map(|o| o.formats)
        .unwrap_or_default();
    let wanted = PathBuf::from(format!("nativeacct-{}", std::process::id()));
    let base = outputs::free_default_base(&wanted, &formats)
        .map_err(|e| format!("error: cannot write {}.*: {e}", wanted.display()))?;
    if base != wanted {
        eprintln!(
            "nativeacct: {}.* is taken (not created by this run); writing {}.* instead",
            wanted.display(),
            base.display()
        );
    }
    Ok(crate::file_for(base, &formats))
}

/// The Java launcher to run: the command must be `java` (by name, or a path whose file name is
/// `java`, e.g. a JDK's `bin/java`), found on PATH if it has no slash.
fn java_launcher(program: &str) -> Result<PathBuf, String> {
    let named_java = Path::new(program).file_name().is_some_and(|n| n == "java");
    if !named_java {
        return Err(format!(
            "'{program}' is not a Java launcher: nativeacct runs 'java ...' (or a JDK's bin/java) with the agent; \
             for other tools pass the agent yourself (-J-agentpath:...)"
        ));
    }
    let path = if program.contains('/') {
        PathBuf::from(program)
    } else {
        find_on_path(program).ok_or_else(|| format!("'{program}' was not found on PATH"))?
    };
    if !path.is_file() {
        return Err(format!("{} does not exist", path.display()));
    }
    Ok(path)
}

fn find_on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file())
}

/// `libnativeacct.so` in the directory of this executable (symlinks resolved), or
/// `$NATIVEACCT_AGENT` when set (an absolute path; for tests and development builds).
pub(crate) fn agent_library() -> Result<PathBuf, String> {
    if let Some(path) = std::env::var_os("NATIVEACCT_AGENT").map(PathBuf::from) {
        if path.is_absolute() && path.is_file() {
            return Ok(path);
        }
        return Err(format!(
            "NATIVEACCT_AGENT={} is not an absolute path to the agent library",
            path.display()
        ));
    }
    let exe = std::env::current_exe()
        .and_then(|p| p.canonicalize())
        .map_err(|e| format!("cannot locate the nativeacct executable: {e}"))?;
    let dir = exe.parent().unwrap_or(Path::new("."));
    let library = dir.join("libnativeacct.so");
    if library.is_file() {
        Ok(library)
    } else {
        Err(format!(
            "the agent library {} is missing (it is installed next to the nativeacct executable)",
            library.display()
        ))
    }
}

/// Print, on stderr, where the reports are (only those that exist).
fn report_paths(options: &options::Options) {
    let mut found = Vec::new();
    for &format in &options.formats {
        if format == Format::Hgrm {
            let count = hgrm_files(options).len();
            if count > 0 {
                found.push(format!(
                    "{count} .hgrm files ({}*.hgrm)",
                    options
                        .hgrm_path("")
                        .display()
                        .to_string()
                        .trim_end_matches(".hgrm")
                ));
            }
            continue;
        }
        let path = options.output_path(format);
        if is_report_file(&path) {
            found.push(path.display().to_string());
        }
    }
    if found.is_empty() {
        // The agent's own lines above say why, or where the reports went if a name was taken.
        eprintln!(
            "nativeacct: no report at {}.*",
            options.output_base().display()
        );
    } else {
        for entry in found {
            eprintln!("nativeacct: report {entry}");
        }
    }
}

/// A regular file, not a symlink: what the agent writes (a link is never its own report).
fn is_report_file(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file())
}

fn hgrm_files(options: &options::Options) -> Vec<PathBuf> {
    let probe = options.hgrm_path("x");
    let dir = probe
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let prefix = options
        .output_base()
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| {
            let name = p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            name.starts_with(&format!("{prefix}.")) && name.ends_with(".hgrm") && is_report_file(p)
        })
        .collect()
}
