//! The control channel: a Unix socket through which `nativeacct dump|detach|metrics PID` reach the agent
//! of a running JVM (`control=off` turns it off).
//!
//! Security model: the socket lives in a directory only the JVM's user can enter
//! (`$XDG_RUNTIME_DIR/nativeacct` or `/tmp/nativeacct-UID`, mode 0700, checked to be the user's
//! own and not a symlink), the socket itself is 0600, and every connection's peer credentials
//! (`SO_PEERCRED`) must carry the JVM's effective uid, or it is refused before a byte is read.
//! Requests are one short line (see [`protocol`]); garbage, oversized and half-sent requests (a
//! deadline of [`protocol::REQUEST_TIMEOUT`]) get an error answer and one stderr line (at most one
//! every 10 s), never a crash. The socket is removed at VMDeath and at process exit.
//!
//! The server is one agent thread serving one connection at a time; a dump reads the numbers so
//! far without stopping the program (see [`window`] for `--reset`). The directory, the socket and
//! the removal of stale sockets are `socket`.

pub mod protocol;
pub(crate) mod window;

use crate::options::{Format, Options};
use crate::report::openmetrics::Flavor;
use crate::snapshot::Assemble;
use protocol::Request;
use std::io::Read;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::io::AsRawFd;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Mutex;
use std::time::{Duration, Instant};

mod socket;
use socket::*;

/// Stops counting and returns the final report.
pub(crate) type Detach = fn() -> Result<crate::report::Report, String>;

/// What `start` was given.
static RUN: once_cell::sync::OnceCell<Run> = once_cell::sync::OnceCell::new();

struct Run {
    options: &'static Options,
    assemble: Assemble,
    /// Stops counting and returns the final report (`nativeacct detach`); None: not supported.
    detach: Option<Detach>,
}

/// The socket in place: its path and identity (removed only if it is still ours).
static SOCKET: Mutex<Option<(PathBuf, u64, u64)>> = Mutex::new(None);
static STOPPED: AtomicBool = AtomicBool::new(false);
/// The start of the current accounting window (`dump --reset`); None: the whole run.
static WINDOW: Mutex<Option<window::Baseline>> = Mutex::new(None);

/// Open the socket and start serving it. Failures are one stderr line: the run goes on without.
pub(crate) fn start(options: &'static Options, assemble: Assemble, detach: Option<Detach>) {
    if RUN
        .set(Run {
            options,
            assemble,
            detach,
        })
        .is_err()
    {
        return;
    }
    let listener = match open_socket() {
        Ok(listener) => listener,
        Err(e) => {
            crate::diag::line(&format!(
                "control channel off (nativeacct dump will not reach this JVM): {e}"
            ));
            return;
        }
    };
    // SAFETY: atexit only stores the function pointer; `remove_at_exit` catches every panic.
    unsafe { libc::atexit(remove_at_exit) };
    let spawned = std::thread::Builder::new()
        .name("nativeacct-control".into())
        .spawn(move || {
            crate::process::register_agent_thread();
            serve(listener);
        });
    if let Err(e) = spawned {
        stop();
        crate::diag::line(&format!("control channel off: {e}"));
    }
}

/// Remove the socket (VMDeath, process exit, detach). Connections in progress finish.
pub(crate) fn stop() {
    STOPPED.store(true, Relaxed);
    let taken = crate::sync::lock(&SOCKET).take();
    if let Some((path, dev, ino)) = taken {
        let ours = std::fs::symlink_metadata(&path).is_ok_and(|m| m.dev() == dev && m.ino() == ino);
        if ours {
            let _ = std::fs::remove_file(&path);
        }
    }
}

extern "C" fn remove_at_exit() {
    crate::diag::no_unwind(&crate::diag::PROCESS_EXIT, (), stop);
}

fn serve(listener: UnixListener) {
    let dir = crate::sync::lock(&SOCKET)
        .as_ref()
        .and_then(|(path, _, _)| path.parent().map(Path::to_path_buf));
    if let Some(dir) = dir {
        remove_dead_sockets(&dir);
    }
    for connection in listener.incoming() {
        if STOPPED.load(Relaxed) {
            return;
        }
        match connection {
            Ok(stream) => {
                let handled =
                    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| handle(stream)));
                if handled.is_err() {
                    complain("internal error while answering a request; the channel stays open");
                }
            }
            Err(e) => {
                complain(&format!("accept failed: {e}"));
                // E.g. out of file descriptors: do not spin.
                std::thread::sleep(Duration::from_millis(50));
            }
        }
    }
}

/// The peer's (pid, uid), from the kernel.
fn peer_credentials(stream: &UnixStream) -> Option<(i32, u32)> {
    let mut cred = libc::ucred {
        pid: 0,
        uid: 0,
        gid: 0,
    };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: `cred` and `len` are valid out-pointers of the sizes given; the fd is open.
    let rc = unsafe {
        libc::getsockopt(
            stream.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            &mut cred as *mut libc::ucred as *mut libc::c_void,
            &mut len,
        )
    };
    (rc == 0).then_some((cred.pid, cred.uid))
}

fn handle(mut stream: UnixStream) {
    let Some((pid, uid)) = peer_credentials(&stream) else {
        complain("refused a connection whose credentials could not be read");
        return;
    };
    if uid != own_uid() {
        complain(&format!(
            "refused a control connection from uid {uid} (pid {pid}): only this JVM's user (uid {}) may connect",
            own_uid()
        ));
        let _ = protocol::write_error(&mut stream, "refused: not this JVM's user");
        return;
    }
    let _ = stream.set_write_timeout(Some(Duration::from_secs(30)));
    let request = match read_request(&mut stream) {
        Ok(line) => Request::parse(&line),
        Err(e) => Err(e),
    };
    let request = match request {
        Ok(request) => request,
        Err(e) => {
            complain(&format!("bad control request from pid {pid}: {e}"));
            let _ = protocol::write_error(&mut stream, &e);
            return;
        }
    };
    let answer = match request {
        Request::Ping => Ok(vec![(
            "version".to_string(),
            format!(
                "nativeacct {} pid {}\n",
                env!("CARGO_PKG_VERSION"),
                own_pid()
            )
            .into_bytes(),
        )]),
        Request::Dump { reset, formats } => dump(reset, &formats),
        Request::Detach { formats } => detach(&formats),
        Request::Metrics { openmetrics } => {
            let (flavor, name) = if openmetrics {
                (Flavor::OpenMetrics, "openmetrics")
            } else {
                (Flavor::Prometheus, "prom")
            };
            crate::metrics::exposition(flavor)
                .map(|text| vec![(name.to_string(), text.into_bytes())])
        }
    };
    let _ = match answer {
        Ok(files) => protocol::write_files(&mut stream, &files),
        Err(e) => protocol::write_error(&mut stream, &e),
    };
}

/// One request line, within the size limit and the deadline.
fn read_request(stream: &mut UnixStream) -> Result<String, String> {
    let deadline = Instant::now() + protocol::REQUEST_TIMEOUT;
    let mut line = Vec::with_capacity(128);
    let mut chunk = [0u8; 256];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err("half-sent request (no end of line within 2 s)".into());
        }
        let _ = stream.set_read_timeout(Some(left));
        let n = match stream.read(&mut chunk) {
            Ok(0) => return Err("request ended without an end of line".into()),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return Err("half-sent request (no end of line within 2 s)".into())
            }
            Err(e) => return Err(format!("read failed: {e}")),
        };
        line.extend_from_slice(&chunk[..n]);
        if let Some(end) = line.iter().position(|&b| b == b'\n') {
            if end + 1 > protocol::MAX_REQUEST {
                return Err(format!(
                    "oversized request (over {} bytes)",
                    protocol::MAX_REQUEST
                ));
            }
            line.truncate(end);
            return String::from_utf8(line).map_err(|_| "request is not UTF-8 text".into());
        }
        if line.len() >= protocol::MAX_REQUEST {
            return Err(format!(
                "oversized request (over {} bytes)",
                protocol::MAX_REQUEST
            ));
        }
    }
}

/// The formats to render: those asked for, else the agent's own, else JSON. The interval log
/// (`hlog`) belongs to the whole run and is left out.
fn formats_for(asked: &[String], options: &Options) -> Result<Vec<Format>, String> {
    let mut formats: Vec<Format> = if asked.is_empty() {
        options.formats.clone()
    } else {
        let mut out = Vec::new();
        for name in asked {
            let format = Format::ALL
                .into_iter()
                .find(|f| f.name() == name)
                .ok_or_else(|| {
                    let names: Vec<&str> = Format::ALL
                        .iter()
                        .filter(|f| **f != Format::Hlog)
                        .map(|f| f.name())
                        .collect();
                    format!("format={name}: expected {}", names.join(", "))
                })?;
            out.push(format);
        }
        out
    };
    formats.retain(|f| *f != Format::Hlog);
    formats.sort();
    formats.dedup();
    if formats.is_empty() {
        formats.push(Format::Json);
    }
    Ok(formats)
}

/// The report so far (or since the last reset), rendered in `formats`; `reset` starts a new
/// window at the moment these numbers were read.
fn dump(reset: bool, asked: &[String]) -> Result<Vec<(String, Vec<u8>)>, String> {
    let run = RUN.get().ok_or("the agent is not running")?;
    let formats = formats_for(asked, run.options)?;
    let read_at = Instant::now();
    let mut totals = crate::merge::snapshot().ok_or("the VM is shutting down: no more dumps")?;
    window::name_rows_from_os(&mut totals);
    let histograms = crate::merge::histograms_so_far();
    let process = crate::attach::process_since_attach(crate::process::section_so_far(
        &crate::merge::live_java(),
    ));
    let mut window = crate::sync::lock(&WINDOW);
    let mut report = match window.as_ref() {
        Some(base) => (run.assemble)(
            &window::totals_since(&totals, &base.totals),
            window::histograms_since(&histograms, &base.histograms),
            crate::stacks::so_far,
            crate::process::since(&process, &base.process),
        ),
        None => (run.assemble)(
            &totals,
            histograms.clone(),
            crate::stacks::so_far,
            process.clone(),
        ),
    };
    // `wall_ns` (ns since the agent started) at the moment the numbers were read.
    let now_ns = report
        .run
        .wall_ns
        .saturating_sub(read_at.elapsed().as_nanos() as u64);
    if let Some(base) = window.as_ref() {
        report.run.wall_ns = now_ns.saturating_sub(base.at_ns);
        report.window_start_ns = Some(base.at_ns);
    } else {
        report.run.wall_ns = now_ns;
    }
    report.partial = true;
    report.written_at = "dump".to_string();
    report.snapshot_at_ns = Some(now_ns);
    if reset {
        *window = Some(window::Baseline {
            totals,
            histograms,
            process,
            at_ns: now_ns,
        });
    }
    drop(window);
    Ok(render(&report, &formats))
}

fn render(report: &crate::report::Report, formats: &[Format]) -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    for &format in formats {
        if format == Format::Hgrm {
            for (what, body) in crate::report::hgrm::render_all(report) {
                files.push((format!("hgrm:{what}"), body.into_bytes()));
            }
        } else if let Some(body) = crate::report::render_single(report, format) {
            files.push((format.extension().to_string(), body));
        }
    }
    files
}

fn detach(asked: &[String]) -> Result<Vec<(String, Vec<u8>)>, String> {
    let run = RUN.get().ok_or("the agent is not running")?;
    let detach = run
        .detach
        .ok_or("this agent was loaded at start-up: it reports when the JVM ends (use dump)")?;
    let formats = formats_for(asked, run.options)?;
    let report = detach()?;
    // No more requests: the socket goes now, this answer is the last.
    stop();
    Ok(render(&report, &formats))
}

/// One stderr line per problem, at most one every 10 s (a flood of bad requests must not flood
/// the program's stderr); the next line says how many were left out.
fn complain(message: &str) {
    static LAST: Mutex<(Option<Instant>, u64)> = Mutex::new((None, 0));
    let mut last = crate::sync::lock(&LAST);
    let now = Instant::now();
    if last
        .0
        .is_some_and(|at| now.duration_since(at) < Duration::from_secs(10))
    {
        last.1 += 1;
        return;
    }
    let left_out = std::mem::take(&mut last.1);
    last.0 = Some(now);
    drop(last);
    if left_out == 0 {
        crate::diag::line(&format!("control: {message}"));
    } else {
        crate::diag::line(&format!(
            "control: {message} ({left_out} more control problems in the last 10 s not shown)"
        ));
    }
}
