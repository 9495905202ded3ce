//! The control channel's wire format, shared by the agent and the `nativeacct` launcher.
//!
//! A request is one line of at most [`MAX_REQUEST`] bytes: `nativeacct/1 COMMAND [ARG ...]\n`.
//! The answer is `ok N\n` followed by N files, each `NAME LENGTH\n` and LENGTH bytes, or
//! `error MESSAGE\n`. Files are named by their format's extension (`json`, `txt`, ...) or, for
//! latency distributions, `hgrm:WHAT`.

use std::io::{self, BufRead, Read, Write};
use std::path::{Path, PathBuf};

/// First word of every request: the protocol and its version.
pub const MAGIC: &str = "nativeacct/1";
/// Longest request line accepted, newline included.
pub const MAX_REQUEST: usize = 1024;
/// Largest file in an answer the launcher accepts (a report of a huge run stays far below).
pub const MAX_FILE: u64 = 1 << 30;
/// How long the agent waits for a whole request line once a peer connected.
pub const REQUEST_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(2);

/// What a client may ask.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Request {
    /// Is an agent there? Answers `ok 1` with a `version` file (`nativeacct VERSION pid PID`).
    Ping,
    /// The report so far; `reset` starts a new window after it. `formats` empty: the agent's own.
    Dump {
        /// Start a new window after this dump.
        reset: bool,
        /// The formats asked for (empty: the agent's own).
        formats: Vec<String>,
    },
    /// The live metrics exposition (`metrics=`'s `/metrics`): one file, `openmetrics` (OpenMetrics
    /// 1.0 text) or `prom` (Prometheus text 0.0.4).
    Metrics {
        /// OpenMetrics rather than Prometheus text.
        openmetrics: bool,
    },
    /// The final report, then stop counting as far as JVMTI allows.
    Detach {
        /// The formats asked for (empty: the agent's own).
        formats: Vec<String>,
    },
}

impl Request {
    /// The request line, newline included.
    pub fn line(&self) -> String {
        let formats = |f: &[String]| {
            if f.is_empty() {
                String::new()
            } else {
                format!(" format={}", f.join("+"))
            }
        };
        match self {
            Request::Ping => format!("{MAGIC} ping\n"),
            Request::Dump { reset, formats: f } => format!(
                "{MAGIC} dump{}{}\n",
                if *reset { " reset" } else { "" },
                formats(f)
            ),
            Request::Detach { formats: f } => format!("{MAGIC} detach{}\n", formats(f)),
            Request::Metrics { openmetrics } => format!(
                "{MAGIC} metrics{}\n",
                if *openmetrics { " openmetrics" } else { "" }
            ),
        }
    }

    /// Parse one request line (without its newline). The error says what was wrong, briefly.
    pub fn parse(line: &str) -> Result<Request, String> {
        let mut words = line.split(' ');
        if words.next() != Some(MAGIC) {
            return Err(format!("not a {MAGIC} request"));
        }
        let command = words.next().unwrap_or("");
        let (mut reset, mut formats, mut openmetrics) = (false, Vec::new(), false);
        for word in words {
            match word.split_once('=') {
                None if word == "reset" && command == "dump" => reset = true,
                None if word == "openmetrics" && command == "metrics" => openmetrics = true,
                Some(("format", list)) if command == "dump" || command == "detach" => {
                    for name in list.split('+') {
                        if name.is_empty()
                            || name.len() > 16
                            || !name.bytes().all(|b| b.is_ascii_lowercase())
                        {
                            return Err("bad format name".into());
                        }
                        formats.push(name.to_string());
                    }
                }
                _ => return Err(format!("unexpected argument for '{}'", printable(command))),
            }
        }
        match command {
            "ping" => Ok(Request::Ping),
            "dump" => Ok(Request::Dump { reset, formats }),
            "detach" => Ok(Request::Detach { formats }),
            "metrics" => Ok(Request::Metrics { openmetrics }),
            other => Err(format!("unknown command '{}'", printable(other))),
        }
    }
}

/// At most 40 characters of `s`, with anything but printable ASCII shown as `?`.
pub fn printable(s: &str) -> String {
    s.chars()
        .take(40)
        .map(|c| if c.is_ascii_graphic() { c } else { '?' })
        .collect()
}

/// Files of an answer: (name, contents).
pub type Files = Vec<(String, Vec<u8>)>;

/// Write a successful answer.
pub fn write_files(out: &mut impl Write, files: &[(String, Vec<u8>)]) -> io::Result<()> {
    writeln!(out, "ok {}", files.len())?;
    for (name, body) in files {
        writeln!(out, "{name} {}", body.len())?;
        out.write_all(body)?;
    }
    out.flush()
}

/// Write a refusal or failure (one line).
pub fn write_error(out: &mut impl Write, message: &str) -> io::Result<()> {
    let line: String = message.chars().filter(|c| *c != '\n').take(400).collect();
    writeln!(out, "error {line}")?;
    out.flush()
}

/// Read an answer: the files, or the agent's error message.
pub fn read_answer(input: &mut impl BufRead) -> io::Result<Result<Files, String>> {
    let header = read_line(input, 4096)?;
    if let Some(message) = header.strip_prefix("error ") {
        return Ok(Err(message.to_string()));
    }
    let count: usize = header
        .strip_prefix("ok ")
        .and_then(|n| n.parse().ok())
        .filter(|&n| n <= 10_000)
        .ok_or_else(|| bad_data(format!("unexpected answer '{}'", printable(&header))))?;
    let mut files = Vec::with_capacity(count);
    for _ in 0..count {
        let line = read_line(input, 4096)?;
        let (name, len) = line
            .rsplit_once(' ')
            .and_then(|(n, l)| Some((n.to_string(), l.parse::<u64>().ok()?)))
            .filter(|(_, l)| *l <= MAX_FILE)
            .ok_or_else(|| bad_data(format!("bad file header '{}'", printable(&line))))?;
        let mut body = Vec::with_capacity(len as usize);
        input.take(len).read_to_end(&mut body)?;
        if body.len() as u64 != len {
            return Err(bad_data("the answer ended early".into()));
        }
        files.push((name, body));
    }
    Ok(Ok(files))
}

fn bad_data(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message)
}

/// One line without its newline, at most `limit` bytes.
fn read_line(input: &mut impl BufRead, limit: u64) -> io::Result<String> {
    let mut bytes = Vec::new();
    input.take(limit).read_until(b'\n', &mut bytes)?;
    if bytes.pop() != Some(b'\n') {
        return Err(bad_data("the answer ended early".into()));
    }
    String::from_utf8(bytes).map_err(|_| bad_data("the answer is not text".into()))
}

/// The private directories where an agent of user `uid` may have put its socket, most preferred
/// first: `$XDG_RUNTIME_DIR/nativeacct` (with the JVM's own `XDG_RUNTIME_DIR`), then
/// `/tmp/nativeacct-UID`.
pub fn socket_dirs(xdg_runtime_dir: Option<&Path>, uid: u32) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Some(xdg) = xdg_runtime_dir.filter(|d| d.is_absolute()) {
        dirs.push(xdg.join("nativeacct"));
    }
    dirs.push(PathBuf::from(format!("/tmp/nativeacct-{uid}")));
    dirs
}

/// The socket's file name for the JVM with process id `pid`.
pub fn socket_name(pid: u32) -> String {
    format!("{pid}.sock")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_round_trip_and_garbage_is_refused() {
        for request in [
            Request::Ping,
            Request::Dump {
                reset: true,
                formats: vec!["json".into(), "html".into()],
            },
            Request::Dump {
                reset: false,
                formats: vec![],
            },
            Request::Detach { formats: vec![] },
            Request::Metrics { openmetrics: true },
            Request::Metrics { openmetrics: false },
        ] {
            let line = request.line();
            assert_eq!(Request::parse(line.trim_end_matches('\n')), Ok(request));
        }
        for bad in [
            "",
            "nativeacct/1",
            "nativeacct/2 dump",
            "nativeacct/1 dump now",
            "nativeacct/1 ping reset",
            "nativeacct/1 metrics format=json",
            "nativeacct/1 dump openmetrics",
            "nativeacct/1 dump format=",
            "\u{0}\u{1}",
        ] {
            assert!(Request::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn answers_round_trip() {
        let files = vec![
            ("json".to_string(), b"{}".to_vec()),
            ("hgrm:native".to_string(), vec![1, 2, 3, b'\n']),
        ];
        let mut wire = Vec::new();
        write_files(&mut wire, &files).unwrap();
        let got = read_answer(&mut &wire[..]).unwrap().unwrap();
        assert_eq!(got, files);
        let mut wire = Vec::new();
        write_error(&mut wire, "no\nway").unwrap();
        assert_eq!(
            read_answer(&mut &wire[..]).unwrap(),
            Err("noway".to_string())
        );
        assert!(read_answer(&mut &b"ok 1\njson 10\n{}"[..]).is_err());
    }
}
