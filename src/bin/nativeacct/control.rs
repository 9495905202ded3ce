//! `nativeacct dump|metrics|attach|detach PID ...`: the launcher's commands for a running JVM. They speak
//! to the agent's control socket (see `nativeacct::control`), or load the agent through HotSpot's
//! dynamic attach (`attach`).

use nativeacct::launcher::control::protocol::{self, Request};
use nativeacct::launcher::options::{self, Format};
use std::io::{BufReader, Write};
use std::os::unix::fs::MetadataExt;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

/// Write the report so far of a running JVM that has the agent
#[derive(clap::Args, Debug)]
#[command(
    after_help = "The agent renders the report on a thread of its own and sends it over its control socket
(0600, in a 0700 directory of the JVM's user; only that user's processes may connect; the agent
option control=off closes it). Nothing is written to the program's output.

Examples:
  nativeacct dump 4242                                  nativeacct-4242-dump.* in the agent's formats
  nativeacct dump 4242 file=now format=json+html
  nativeacct dump 4242 --reset; sleep 60; nativeacct dump 4242 file=last-minute format=json"
)]
pub(crate) struct DumpArgs {
    /// Process id of the JVM
    pid: String,
    /// Start a new accounting window after this dump: the next dump covers only the time since
    #[arg(long)]
    reset: bool,
    /// file=PATH (a base, or the file for one format) and format=F[+F...], as words or comma-joined
    #[arg(value_name = "OPTION")]
    options: Vec<String>,
}

/// Write the final report of an attached agent and stop counting
#[derive(clap::Args, Debug)]
#[command(after_help = "Example:
  nativeacct detach 4242 file=final format=json+html")]
pub(crate) struct DetachArgs {
    /// Process id of the JVM
    pid: String,
    /// file=PATH and format=F[+F...], as words or comma-joined
    #[arg(value_name = "OPTION")]
    options: Vec<String>,
}

/// Print the live metrics of a running JVM that has the agent (Prometheus text, on stdout)
#[derive(clap::Args, Debug)]
#[command(
    after_help = "The same exposition the agent option metrics=[ADDR:]PORT serves at /metrics, read through the
control socket (no port needed). Prometheus text 0.0.4 by default, which node_exporter's textfile
collector reads; --openmetrics for OpenMetrics 1.0 text.

Examples:
  nativeacct metrics 4242
  nativeacct metrics 4242 > /var/lib/node_exporter/textfile/jvm-4242.prom.$$ &&
    mv /var/lib/node_exporter/textfile/jvm-4242.prom.$$ /var/lib/node_exporter/textfile/jvm-4242.prom"
)]
pub(crate) struct MetricsArgs {
    /// Process id of the JVM
    pid: String,
    /// OpenMetrics 1.0 text instead of Prometheus text 0.0.4
    #[arg(long)]
    openmetrics: bool,
}

pub(crate) fn metrics_main(args: MetricsArgs) -> ExitCode {
    finish("metrics", metrics(&args.pid, args.openmetrics))
}

fn metrics(pid: &str, openmetrics: bool) -> Result<(), String> {
    let pid = jvm_behind_launcher(target_pid(pid)?);
    let files = ask(pid, &Request::Metrics { openmetrics })?;
    let [(_, body)] = files.as_slice() else {
        return Err(format!("the agent sent {} files, not one", files.len()));
    };
    let mut out = std::io::stdout().lock();
    out.write_all(body)
        .and_then(|()| out.flush())
        .map_err(|e| format!("cannot write to stdout: {e}"))
}

pub(crate) fn dump_main(args: DumpArgs) -> ExitCode {
    finish("dump", dump(&args.pid, &args.options, args.reset, false))
}

pub(crate) fn detach_main(args: DetachArgs) -> ExitCode {
    finish("detach", dump(&args.pid, &args.options, false, true))
}

/// Exit code and message of a command's result.
pub(crate) fn finish(command: &str, result: Result<(), String>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("nativeacct {command}: {message}");
            ExitCode::from(2)
        }
    }
}

/// The process id argument: a live process.
pub(crate) fn target_pid(word: &str) -> Result<u32, String> {
    let pid: u32 = word
        .parse()
        .ok()
        .filter(|&p| p > 0)
        .ok_or_else(|| format!("'{word}' is not a process id"))?;
    if !Path::new(&format!("/proc/{pid}")).exists() {
        return Err(format!("no process {pid}"));
    }
    Ok(pid)
}

/// `dump PID [--reset] [file=,format=]` (and `detach PID [file=,format=]`).
fn dump(pid: &str, args: &[String], reset: bool, detach: bool) -> Result<(), String> {
    let pid = jvm_behind_launcher(target_pid(pid)?);
    let words: Vec<String> = args
        .iter()
        .flat_map(|a| a.split(','))
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect();
    for word in &words {
        let key = word.split('=').next().unwrap_or("");
        if key != "file" && key != "format" {
            return Err(format!(
                "unexpected '{word}': expected --reset, file=PATH or format=..."
            ));
        }
    }
    let asked = options::parse(Some(&words.join(","))).map_err(|e| format!("error: {e}"))?;
    let formats: Vec<String> = if words.iter().any(|w| w.starts_with("format=")) {
        asked.formats.iter().map(|f| f.name().to_string()).collect()
    } else {
        Vec::new()
    };
    let request = if detach {
        Request::Detach { formats }
    } else {
        Request::Dump { reset, formats }
    };
    let files = ask(pid, &request)?;
    if files.is_empty() {
        if detach {
            eprintln!("nativeacct: detached from {pid}");
        }
        return Ok(());
    }
    let written = save(pid, &files, asked.file.as_deref())?;
    for path in written {
        eprintln!("nativeacct: report {}", path.display());
    }
    if reset {
        eprintln!("nativeacct: new accounting window started in {pid}");
    }
    Ok(())
}

/// `pid` itself, or, when it has no control socket but is `nativeacct run` (whose JVM is its child),
/// that child: the pid a user sees first is often the launcher's.
fn jvm_behind_launcher(pid: u32) -> u32 {
    if socket_of(pid).is_ok() {
        return pid;
    }
    let children =
        std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).unwrap_or_default();
    let with_agent: Vec<u32> = children
        .split_whitespace()
        .filter_map(|c| c.parse().ok())
        .filter(|&child| socket_of(child).is_ok())
        .collect();
    match with_agent.as_slice() {
        [jvm] => {
            eprintln!("nativeacct: process {pid} is the launcher; its JVM is {jvm}");
            *jvm
        }
        _ => pid,
    }
}

/// The control socket of `pid`: in the directories its agent may have used.
fn socket_of(pid: u32) -> Result<PathBuf, String> {
    let uid = std::fs::metadata(format!("/proc/{pid}"))
        .map(|m| m.uid())
        .map_err(|e| format!("cannot look at process {pid}: {e}"))?;
    let xdg = std::fs::read(format!("/proc/{pid}/environ"))
        .ok()
        .and_then(|env| {
            env.split(|&b| b == 0)
                .find_map(|var| var.strip_prefix(b"XDG_RUNTIME_DIR=").map(|v| v.to_vec()))
        })
        .map(|v| PathBuf::from(String::from_utf8_lossy(&v).into_owned()));
    let dirs = protocol::socket_dirs(xdg.as_deref(), uid);
    dirs.iter()
        .map(|dir| dir.join(protocol::socket_name(pid)))
        .find(|path| path.exists())
        .ok_or_else(|| {
            format!(
                "no nativeacct control socket for process {pid} (looked in {}): is it a JVM running with the agent (and not control=off)? A JVM started without it: nativeacct attach {pid}",
                dirs.iter().map(|d| d.display().to_string()).collect::<Vec<_>>().join(", ")
            )
        })
}

/// Send `request` to the agent in `pid` and return the files it answered with.
pub(crate) fn ask(pid: u32, request: &Request) -> Result<Vec<(String, Vec<u8>)>, String> {
    let path = socket_of(pid)?;
    let mut stream = UnixStream::connect(&path)
        .map_err(|e| format!("cannot connect to {}: {e}", path.display()))?;
    let _ = stream.set_write_timeout(Some(Duration::from_secs(10)));
    let _ = stream.set_read_timeout(Some(Duration::from_secs(120)));
    // The agent may answer (a refusal) and close before the request is written: read anyway.
    let sent = stream.write_all(request.line().as_bytes());
    let answer = protocol::read_answer(&mut BufReader::new(stream));
    match (answer, sent) {
        (Ok(answer), _) => answer.map_err(|e| format!("the agent said: {e}")),
        (Err(_), Err(e)) => Err(format!("cannot send the request: {e}")),
        (Err(e), Ok(())) => Err(format!("bad answer from the agent: {e}")),
    }
}

/// Write the answered files: at `file=` (a base, or the file itself for one format), else at the
/// first free `nativeacct-PID-dump[-N].*` in the working directory.
fn save(
    pid: u32,
    files: &[(String, Vec<u8>)],
    file: Option<&Path>,
) -> Result<Vec<PathBuf>, String> {
    let mut formats: Vec<Format> = Vec::new();
    for (name, _) in files {
        let format = if name.starts_with("hgrm:") {
            Some(Format::Hgrm)
        } else {
            Format::ALL.into_iter().find(|f| f.extension() == name)
        };
        match format {
            Some(f) if !formats.contains(&f) => formats.push(f),
            Some(_) => {}
            None => {
                return Err(format!(
                    "the agent sent an unknown file '{}'",
                    protocol::printable(name)
                ))
            }
        }
    }
    let names: Vec<&str> = formats.iter().map(|f| f.name()).collect();
    let base = match file {
        Some(file) => file.to_path_buf(),
        None => {
            let wanted = PathBuf::from(format!("nativeacct-{pid}-dump"));
            let base = nativeacct::launcher::outputs::free_default_base(&wanted, &formats)
                .map_err(|e| format!("cannot write {}.*: {e}", wanted.display()))?;
            match formats.as_slice() {
                [only] if *only != Format::Hgrm => {
                    PathBuf::from(format!("{}.{}", base.display(), only.extension()))
                }
                _ => base,
            }
        }
    };
    let opts = options::parse(Some(&format!(
        "file={},format={}",
        base.display(),
        names.join("+")
    )))
    .map_err(|e| format!("error: {e}"))?;
    let mut written = Vec::new();
    for (name, body) in files {
        let path = match name.strip_prefix("hgrm:") {
            Some(what) => opts.hgrm_path(what),
            None => {
                let format = formats
                    .iter()
                    .copied()
                    .find(|f| f.extension() == name)
                    .unwrap_or(Format::Json);
                opts.output_path(format)
            }
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        }
        std::fs::write(&path, body).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        if !name.starts_with("hgrm:") || written.is_empty() {
            written.push(path);
        }
    }
    Ok(written)
}
