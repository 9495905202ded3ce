//! `nativeacct attach PID [options]`: load the agent into a running HotSpot JVM through its
//! dynamic attach mechanism, as `jcmd PID JVMTI.agent_load` does.
//!
//! The mechanism (HotSpot on Linux): the JVM listens on `/tmp/.java_pid<PID>` (in its own mount
//! namespace) once its attach listener runs. It starts the listener when it receives SIGQUIT while
//! a file `.attach_pid<PID>` exists in its working directory or in /tmp. A client then connects,
//! sends protocol version `1`, the command `load` and three arguments (library, `true` for an
//! absolute path, options), each NUL-terminated, and reads a status line, then the agent's
//! `return code: N` line. The JVM accepts only clients with its own effective uid (or root).

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Load the agent into a running JVM that was started without it
#[derive(clap::Args, Debug)]
#[command(
    after_help = "HotSpot's dynamic attach, as jcmd PID JVMTI.agent_load does. By default the agent is quiet
(nothing on the program's stderr) and writes json+html at nativeacct-PID.* in this directory if
the JVM ends before a detach. JDK 21+ print a warning on the program's stderr unless the JVM was
started with -XX:+EnableDynamicAgentLoading.

Examples:
  nativeacct attach 4242
  nativeacct attach 4242 format=json include=com/example/*"
)]
pub(crate) struct AttachArgs {
    /// Process id of the JVM
    pid: String,
    /// Agent options (key=value words, or comma-joined); j2n=bind and mode=ipa only
    #[arg(allow_hyphen_values = true, value_name = "AGENT OPTION")]
    options: Vec<String>,
}

pub(crate) fn main(args: AttachArgs) -> std::process::ExitCode {
    crate::control::finish("attach", attach(&args.pid, &args.options))
}

fn attach(pid: &str, args: &[String]) -> Result<(), String> {
    let pid = crate::control::target_pid(pid)?;
    let mut options = crate::run::option_words(args);
    let sets = crate::run::sets;
    // The agent writes its final report itself when the JVM ends before a detach: by default,
    // where `run` would put it, as an absolute path (the JVM's working directory is another).
    let cwd = || std::env::current_dir().map_err(|e| format!("no working directory: {e}"));
    if !sets(&options, "file") {
        crate::run::add_default_outputs(&mut options, |_| {
            Ok(cwd()?.join(format!("nativeacct-{pid}")))
        })?;
    } else if let Some(file) = options.iter_mut().find(|o| o.starts_with("file=")) {
        let path = PathBuf::from(&file["file=".len()..]);
        if path.is_relative() {
            *file = format!("file={}", cwd()?.join(path).display());
        }
    }
    // The program's stderr is not ours to write to: no summary there unless asked for.
    if !sets(&options, "quiet") && !sets(&options, "verbose") {
        options.push("quiet".into());
    }
    let joined = options.join(",");
    nativeacct::launcher::options::parse(Some(&joined)).map_err(|e| format!("error: {e}"))?;
    let library = crate::run::agent_library()?;
    if let Some(feature) = java_feature(pid) {
        if feature >= 21 && !flag_given(pid, "-XX:+EnableDynamicAgentLoading") {
            eprintln!(
                "nativeacct attach: note: JDK {feature} prints a warning on the program's stderr when an agent is loaded into a running JVM, unless it was started with -XX:+EnableDynamicAgentLoading (a future JDK may refuse without it)"
            );
        }
    }
    // SIGQUIT ends most programs: make sure this is a HotSpot JVM before sending it.
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps"))
        .map_err(|e| format!("cannot look at process {pid}: {e}"))?;
    if !maps.lines().any(|l| l.ends_with("/libjvm.so")) {
        return Err(format!(
            "process {pid} is not a HotSpot JVM (no libjvm.so mapped)"
        ));
    }
    let socket = attach_socket(pid)?;
    let answer = load(&socket, &library, &joined)?;
    eprintln!("nativeacct: attached to {pid}; `nativeacct dump {pid}` writes the report so far, `nativeacct detach {pid}` the final one");
    if !answer.is_empty() {
        eprintln!("nativeacct: the JVM said: {answer}");
    }
    Ok(())
}

/// The JVM's attach socket, starting its attach listener if needed.
fn attach_socket(pid: u32) -> Result<PathBuf, String> {
    // Seen through the JVM's own root: the right /tmp in a container too.
    let tmp = [
        PathBuf::from(format!("/proc/{pid}/root/tmp")),
        PathBuf::from("/tmp"),
    ]
    .into_iter()
    .find(|d| d.is_dir())
    .unwrap_or_else(|| PathBuf::from("/tmp"));
    let socket = tmp.join(format!(".java_pid{pid}"));
    let live = || listened_on(&socket);
    if live() {
        return Ok(socket);
    }
    // SIGQUIT kills a JVM that has no handler for it (still starting, or run with -Xrs).
    wait_for_sigquit_handler(pid)?;
    // Ask the JVM to start its listener: the trigger file, then SIGQUIT.
    let trigger_places = [
        PathBuf::from(format!("/proc/{pid}/cwd/.attach_pid{pid}")),
        tmp.join(format!(".attach_pid{pid}")),
    ];
    let trigger = trigger_places
        .iter()
        .find(|p| std::fs::File::create(p).is_ok())
        .ok_or_else(|| {
            format!("cannot create .attach_pid{pid} in the JVM's working directory or /tmp")
        })?
        .clone();
    // SAFETY: kill() with a valid signal number has no memory-safety preconditions.
    let sent = unsafe { libc::kill(pid as libc::pid_t, libc::SIGQUIT) } == 0;
    let began = Instant::now();
    let result = if !sent {
        Err(format!(
            "cannot signal process {pid}: {}",
            std::io::Error::last_os_error()
        ))
    } else {
        loop {
            if live() {
                break Ok(socket.clone());
            }
            if began.elapsed() > Duration::from_secs(10) {
                break Err(format!(
                    "process {pid} did not open {} within 10 s: is it a HotSpot JVM (started without -XX:+DisableAttachMechanism)?",
                    socket.display()
                ));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    let _ = std::fs::remove_file(&trigger);
    result
}

/// Whether the JVM listens at `socket`. A file left there by an earlier process with the same pid
/// has no listener (connecting is refused): the JVM then needs the trigger, and replaces the file
/// when it starts its listener. The probe's connection carries no request, which the JVM's attach
/// listener drops.
fn listened_on(socket: &Path) -> bool {
    socket.exists() && UnixStream::connect(socket).is_ok()
}

/// Wait (up to 3 s, for a JVM still starting) until process `pid` catches SIGQUIT.
fn wait_for_sigquit_handler(pid: u32) -> Result<(), String> {
    let began = Instant::now();
    loop {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
            .map_err(|e| format!("cannot look at process {pid}: {e}"))?;
        if catches_sigquit(&status) {
            return Ok(());
        }
        if began.elapsed() > Duration::from_secs(3) {
            return Err(format!(
                "process {pid} does not handle SIGQUIT, which would end it: it is still starting, or runs with -Xrs or -XX:+ReduceSignalUsage (then start it with -XX:+StartAttachListener, or with the agent)"
            ));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Whether a `/proc/PID/status` text shows SIGQUIT in the caught-signals mask.
fn catches_sigquit(status: &str) -> bool {
    status
        .lines()
        .find_map(|l| l.strip_prefix("SigCgt:"))
        .and_then(|mask| u64::from_str_radix(mask.trim(), 16).ok())
        .is_some_and(|mask| mask & 1 << (libc::SIGQUIT - 1) != 0)
}

/// Send `load` and read the answer; Ok with any extra text the JVM sent.
fn load(socket: &Path, library: &Path, options: &str) -> Result<String, String> {
    let mut stream = UnixStream::connect(socket)
        .map_err(|e| format!("cannot connect to {}: {e}", socket.display()))?;
    let _ = stream.set_read_timeout(Some(Duration::from_secs(60)));
    let mut request = Vec::new();
    for part in ["1", "load", &library.display().to_string(), "true", options] {
        request.extend_from_slice(part.as_bytes());
        request.push(0);
    }
    stream
        .write_all(&request)
        .map_err(|e| format!("cannot send the load command: {e}"))?;
    let mut answer = String::new();
    stream
        .read_to_string(&mut answer)
        .map_err(|e| format!("no answer from the JVM: {e}"))?;
    let mut lines = answer.lines();
    let status = lines.next().unwrap_or("").trim();
    let rest: Vec<&str> = lines.collect();
    if status != "0" {
        return Err(format!(
            "the JVM refused the load (status {status:?}): {}",
            rest.join(" ")
        ));
    }
    let code = rest
        .iter()
        .find_map(|l| l.trim().strip_prefix("return code: "))
        .map(str::trim);
    match code {
        Some("0") | None => Ok(rest
            .iter()
            .filter(|l| !l.starts_with("return code: "))
            .copied()
            .collect::<Vec<_>>()
            .join(" ")),
        Some(code) => Err(format!(
            "the agent did not start (Agent_OnAttach returned {code}); its reason is on the JVM's stderr"
        )),
    }
}

/// The JVM's feature version, from the `release` file of its Java home.
fn java_feature(pid: u32) -> Option<u32> {
    let exe = std::fs::read_link(format!("/proc/{pid}/exe")).ok()?;
    let home = exe.parent()?.parent()?;
    let release = std::fs::read_to_string(home.join("release")).ok()?;
    release
        .lines()
        .find_map(|l| l.strip_prefix("JAVA_VERSION=\""))
        .and_then(|v| v.split(['.', '"']).next())
        .and_then(|v| v.parse().ok())
}

/// Whether the JVM's command line has `flag`.
fn flag_given(pid: u32, flag: &str) -> bool {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .unwrap_or_default()
        .split(|&b| b == 0)
        .any(|w| w == flag.as_bytes())
}

#[cfg(test)]
mod tests {
    #[test]
    fn sigquit_is_read_from_the_caught_mask() {
        assert!(super::catches_sigquit(
            "Name:\tjava\nSigCgt:\t0000000000000004\n"
        ));
        assert!(!super::catches_sigquit(
            "SigIgn:\t0000000000000004\nSigCgt:\t0000000180000002\n"
        ));
        assert!(!super::catches_sigquit("Name:\tjava\n"));
    }
}
