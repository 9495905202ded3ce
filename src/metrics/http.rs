//! The HTTP side of the endpoint: one thread, non-blocking sockets and `poll`, so that no client
//! can hold it up.
//!
//! Each connection may send one request head of at most [`MAX_HEAD`] bytes within
//! [`HEAD_DEADLINE`] and gets one answer (`Connection: close`), which must be taken within
//! [`ANSWER_DEADLINE`]. At most [`MAX_CONNECTIONS`] are open; a new one closes the oldest. Anything
//! else (garbage, an oversized head, a silent or slow client) is answered with an error or
//! dropped, counted in `nativeacct_metrics_bad_requests_total`, and written nowhere: a port
//! scanner must not fill the program's stderr.

use super::{count_bad_request, exposition, stopped};
use crate::report::openmetrics::Flavor;
use std::io::{ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::io::AsRawFd;
use std::time::{Duration, Instant};

/// Longest request head accepted (request line and headers).
pub(super) const MAX_HEAD: usize = 8 << 10;
/// How long a client has to send its whole request head.
pub(super) const HEAD_DEADLINE: Duration = Duration::from_secs(5);
/// How long a client has to take the whole answer.
pub(super) const ANSWER_DEADLINE: Duration = Duration::from_secs(10);
/// Connections open at once; the oldest goes when one more arrives.
pub(super) const MAX_CONNECTIONS: usize = 32;
/// The longest the thread sleeps before it looks whether it should stop.
const WAKE_EVERY_MS: i32 = 500;

struct Connection {
    stream: TcpStream,
    head: Vec<u8>,
    /// The answer, once the head is in.
    answer: Option<Vec<u8>>,
    sent: usize,
    deadline: Instant,
}

enum Progress {
    Open,
    Done,
    Refused,
}

pub(super) fn serve(listener: TcpListener) {
    let mut open: Vec<Connection> = Vec::new();
    while !stopped() {
        wait(&listener, &open);
        let now = Instant::now();
        accept_all(&listener, &mut open, now);
        open.retain_mut(|c| match c.advance() {
            Progress::Open if now >= c.deadline => {
                count_bad_request();
                false
            }
            Progress::Open => true,
            Progress::Done => false,
            Progress::Refused => {
                count_bad_request();
                false
            }
        });
    }
}

/// Sleep until the listener or a connection is ready, the next deadline, or [`WAKE_EVERY_MS`].
fn wait(listener: &TcpListener, open: &[Connection]) {
    let mut fds = Vec::with_capacity(open.len() + 1);
    fds.push(libc::pollfd {
        fd: listener.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    });
    for c in open {
        let events = if c.answer.is_some() {
            libc::POLLOUT
        } else {
            libc::POLLIN
        };
        fds.push(libc::pollfd {
            fd: c.stream.as_raw_fd(),
            events,
            revents: 0,
        });
    }
    let now = Instant::now();
    let timeout = open
        .iter()
        .map(|c| c.deadline.saturating_duration_since(now).as_millis() as i32 + 1)
        .fold(WAKE_EVERY_MS, i32::min);
    // SAFETY: `fds` is a valid array of `fds.len()` pollfd structs that outlives the call.
    unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, timeout) };
}

fn accept_all(listener: &TcpListener, open: &mut Vec<Connection>, now: Instant) {
    loop {
        match listener.accept() {
            Ok((stream, _)) => {
                if stream.set_nonblocking(true).is_err() {
                    continue;
                }
                let _ = stream.set_nodelay(true);
                if open.len() >= MAX_CONNECTIONS {
                    open.remove(0);
                    count_bad_request();
                }
                open.push(Connection {
                    stream,
                    head: Vec::new(),
                    answer: None,
                    sent: 0,
                    deadline: now + HEAD_DEADLINE,
                });
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) if e.kind() == ErrorKind::WouldBlock => return,
            Err(_) => {
                // Out of descriptors, or the like: let the open connections finish first.
                std::thread::sleep(Duration::from_millis(20));
                return;
            }
        }
    }
}

impl Connection {
    /// Read what arrived, answer a complete head, send what the socket takes.
    fn advance(&mut self) -> Progress {
        if self.answer.is_none() {
            let mut chunk = [0u8; 2048];
            loop {
                match self.stream.read(&mut chunk) {
                    Ok(0) => return Progress::Refused,
                    Ok(n) => self.head.extend_from_slice(&chunk[..n]),
                    Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                    Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                    Err(_) => return Progress::Refused,
                }
                if self.head.len() > MAX_HEAD || head_end(&self.head).is_some() {
                    break;
                }
            }
            let (answer, fine) = if self.head.len() > MAX_HEAD {
                (error(431, "Request Header Fields Too Large"), false)
            } else if let Some(end) = head_end(&self.head) {
                answer(&self.head[..end])
            } else {
                return Progress::Open;
            };
            if !fine {
                count_bad_request();
            }
            self.answer = Some(answer);
            self.deadline = Instant::now() + ANSWER_DEADLINE;
        }
        let Some(answer) = &self.answer else {
            return Progress::Open;
        };
        while self.sent < answer.len() {
            match self.stream.write(&answer[self.sent..]) {
                Ok(0) => return Progress::Done,
                Ok(n) => self.sent += n,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) if e.kind() == ErrorKind::WouldBlock => return Progress::Open,
                Err(_) => return Progress::Done,
            }
        }
        let _ = self.stream.shutdown(std::net::Shutdown::Write);
        Progress::Done
    }
}

/// Where the head ends (the blank line), if it is all in.
fn head_end(bytes: &[u8]) -> Option<usize> {
    let crlf = bytes
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|i| i + 4);
    let lf = bytes.windows(2).position(|w| w == b"\n\n").map(|i| i + 2);
    match (crlf, lf) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// The answer to one request head, and whether it was a good request.
fn answer(head: &[u8]) -> (Vec<u8>, bool) {
    let Ok(head) = std::str::from_utf8(head) else {
        return (error(400, "Bad Request"), false);
    };
    let mut lines = head.lines();
    let request = lines.next().unwrap_or("");
    let words: Vec<&str> = request.split(' ').collect();
    let [method, target, version] = words.as_slice() else {
        return (error(400, "Bad Request"), false);
    };
    if !version.starts_with("HTTP/1.") || !target.starts_with('/') {
        return (error(400, "Bad Request"), false);
    }
    if *method != "GET" && *method != "HEAD" {
        return (error(405, "Method Not Allowed"), false);
    }
    let path = target.split('?').next().unwrap_or("");
    if path == "/" {
        let body = "nativeacct: the metrics are at /metrics\n";
        return (
            respond(200, "OK", "text/plain; charset=utf-8", body, method),
            true,
        );
    }
    if path != "/metrics" {
        return (error(404, "Not Found"), false);
    }
    let accept = lines
        .filter_map(|l| l.split_once(':'))
        .find(|(name, _)| name.trim().eq_ignore_ascii_case("accept"))
        .map(|(_, value)| value.trim());
    let flavor = negotiate(accept);
    // A panic fails this scrape, not the endpoint.
    let rendered = std::panic::catch_unwind(|| exposition(flavor))
        .unwrap_or_else(|_| Err("internal error while rendering the metrics".to_string()));
    match rendered {
        Ok(body) => (
            respond(200, "OK", flavor.content_type(), &body, method),
            true,
        ),
        Err(e) => (
            respond(
                503,
                "Service Unavailable",
                "text/plain; charset=utf-8",
                &format!("{e}\n"),
                method,
            ),
            true,
        ),
    }
}

/// OpenMetrics 1.0 unless the `Accept` header prefers Prometheus text 0.0.4 (by its `q`), or
/// accepts no OpenMetrics version this endpoint writes.
pub(super) fn negotiate(accept: Option<&str>) -> Flavor {
    let Some(accept) = accept.filter(|a| !a.is_empty()) else {
        return Flavor::OpenMetrics;
    };
    let (mut open_q, mut text_q) = (-1.0f64, -1.0f64);
    for range in accept.split(',') {
        let mut params = range.split(';').map(str::trim);
        let media = params.next().unwrap_or("").to_ascii_lowercase();
        let (mut q, mut version) = (1.0f64, None);
        for p in params {
            if let Some((k, v)) = p.split_once('=') {
                match k.trim().to_ascii_lowercase().as_str() {
                    "q" => q = v.trim().parse().unwrap_or(0.0),
                    "version" => version = Some(v.trim().to_string()),
                    _ => {}
                }
            }
        }
        match media.as_str() {
            "application/openmetrics-text" if version.as_deref().is_none_or(|v| v == "1.0.0") => {
                open_q = open_q.max(q)
            }
            "text/plain" if version.as_deref().is_none_or(|v| v == "0.0.4") => {
                text_q = text_q.max(q)
            }
            "*/*" | "application/*" => open_q = open_q.max(q),
            _ => {}
        }
    }
    if text_q > open_q && text_q > 0.0 {
        Flavor::Prometheus
    } else {
        Flavor::OpenMetrics
    }
}

fn error(status: u16, reason: &str) -> Vec<u8> {
    respond(
        status,
        reason,
        "text/plain; charset=utf-8",
        &format!("{status} {reason}\n"),
        "GET",
    )
}

fn respond(status: u16, reason: &str, content_type: &str, body: &str, method: &str) -> Vec<u8> {
    let mut out = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    if method != "HEAD" {
        out.extend_from_slice(body.as_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prometheus_text_only_when_the_scraper_prefers_it() {
        // Prometheus 2.x's own header.
        let prometheus = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";
        assert_eq!(negotiate(Some(prometheus)), Flavor::OpenMetrics);
        assert_eq!(negotiate(None), Flavor::OpenMetrics);
        assert_eq!(negotiate(Some("*/*")), Flavor::OpenMetrics);
        assert_eq!(negotiate(Some("text/plain")), Flavor::Prometheus);
        assert_eq!(
            negotiate(Some(
                "text/plain;version=0.0.4;q=1,application/openmetrics-text;q=0.5"
            )),
            Flavor::Prometheus
        );
        assert_eq!(
            negotiate(Some(
                "application/openmetrics-text;version=0.0.1,text/plain;q=0.1"
            )),
            Flavor::Prometheus
        );
    }

    #[test]
    fn bad_heads_get_errors() {
        for (head, status) in [
            (&b"\x00\xff\r\n\r\n"[..], "400"),
            (b"GET\r\n\r\n", "400"),
            (b"GET /metrics SPDY/3\r\n\r\n", "400"),
            (b"POST /metrics HTTP/1.1\r\n\r\n", "405"),
            (b"GET /secret HTTP/1.1\r\n\r\n", "404"),
        ] {
            let (bytes, fine) = answer(head);
            assert!(!fine);
            assert!(
                String::from_utf8_lossy(&bytes).starts_with(&format!("HTTP/1.1 {status} ")),
                "{head:?}"
            );
        }
        assert_eq!(head_end(b"GET / HTTP/1.0\n\nrest"), Some(16));
        assert_eq!(head_end(b"GET / HTTP/1.1\r\nA: b\r\n"), None);
    }
}
