//! The control socket's safety: its place and modes, refusal of other users, 1,000 malformed
//! requests, `control=off`, removal at exit, and how long a dump stalls a Java thread.

#[path = "control/support.rs"]
mod support;

use std::io::{Read, Write};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use support::*;

/// The socket of `pid` as the agent makes it (this test runs without XDG_RUNTIME_DIR).
fn socket_of(pid: u32, uid: u32) -> PathBuf {
    PathBuf::from(format!("/tmp/nativeacct-{uid}/{pid}.sock"))
}

fn own_uid() -> u32 {
    std::fs::metadata("/proc/self").unwrap().uid()
}

/// A one-phase Service with the agent (quiet, its report in `dir/final.json`, `env` added) at its
/// first READY, and its pid.
fn quiet_service(dir: &Path, env: &[(&str, &Path)]) -> (Service, u32) {
    let agent = agent_to(&dir.join("final.json"), ",quiet");
    let mut service = Service::start_with_env(&java_home(), &[agent], &ONE_SHORT_PHASE, dir, env);
    service.ready();
    let pid = service.pid();
    (service, pid)
}

/// Send raw bytes, then read whatever the agent answers (until it closes).
fn send_raw(path: &Path, bytes: &[u8], close_write: bool) -> String {
    let mut stream = UnixStream::connect(path).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    // The agent may stop reading (oversized): a failed write is part of the test.
    let _ = stream.write_all(bytes);
    if close_write {
        let _ = stream.shutdown(std::net::Shutdown::Write);
    }
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    String::from_utf8_lossy(&answer).into_owned()
}

#[test]
fn socket_is_private_and_malformed_requests_change_nothing() {
    let home = java_home();
    let dir = scratch("malformed");
    let report = dir.join("final.json");
    let mut service = Service::start(&home, &[agent_to(&report, "")], &["1", "300", "50"], &dir);
    let pid = service.pid();
    service.ready();
    service.go();
    let t1 = service.ready();
    let socket = socket_of(pid, own_uid());
    let meta = std::fs::symlink_metadata(&socket).expect("the socket exists");
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    let parent = std::fs::symlink_metadata(socket.parent().unwrap()).unwrap();
    assert_eq!(parent.permissions().mode() & 0o777, 0o700);
    assert_eq!(parent.uid(), own_uid());

    let started = Instant::now();
    let mut kinds = [0u32; 6];
    for i in 0..1000u32 {
        let (kind, bytes, close): (usize, Vec<u8>, bool) = match i % 6 {
            0 => (0, format!("garbage {i}\n").into_bytes(), false),
            1 => (1, vec![b'x'; 5000 + i as usize], false),
            2 => (2, vec![0, 159, 146, 150, 255, b'\n'], false),
            3 => (3, b"nativeacct/1 dump format=../../etc\n".to_vec(), false),
            4 => (4, b"nativeacct/1 du".to_vec(), true),
            _ => (5, b"nativeacct/1 frobnicate\n".to_vec(), false),
        };
        kinds[kind] += 1;
        let answer = send_raw(&socket, &bytes, close);
        assert!(
            answer.starts_with("error "),
            "request kind {kind} got {answer:?}"
        );
    }
    // Two half-sent requests that stay open: each gets the deadline, the channel goes on.
    for _ in 0..2 {
        let began = Instant::now();
        let answer = send_raw(&socket, b"nativeacct/1 dump", false);
        assert!(answer.starts_with("error half-sent"), "{answer:?}");
        assert!(began.elapsed() >= Duration::from_millis(1900));
    }
    println!(
        "1,000 malformed requests {kinds:?} + 2 half-sent answered in {:.2} s",
        started.elapsed().as_secs_f64()
    );
    // A proper dump still works, and the run ends with its report intact.
    nativeacct_ok(
        &dir,
        &["dump", &pid.to_string(), "file=after", "format=json"],
    );
    let after = read_json(&dir.join("after"));
    assert_eq!(u(&thread(&after, "worker")["jni_calls"]), t1.upcalls);
    let (stdout, stderr) = service.finish_ok();
    assert_eq!(
        stdout.last().unwrap(),
        &format!("DONE ticks={}", t1.upcalls)
    );
    let control_lines = stderr.lines().filter(|l| l.contains("control:")).count();
    assert!(
        (1..=3).contains(&control_lines),
        "the complaints are rate-limited to one line per 10 s: {control_lines} lines\n{stderr}"
    );
    let last = read_json(&report);
    assert_eq!(u(&thread(&last, "worker")["jni_calls"]), t1.upcalls);
    assert_eq!(service_calls(&last, "spin"), t1.calls);
    assert!(!socket.exists(), "the socket is removed at exit");
}

#[test]
fn control_off_opens_nothing() {
    let dir = scratch("off");
    let report = dir.join("final.json");
    let agent = agent_to(&report, ",control=off,quiet");
    let mut service = Service::start(&java_home(), &[agent], &ONE_SHORT_PHASE, &dir);
    let pid = service.pid();
    service.ready();
    assert!(!socket_of(pid, own_uid()).exists());
    let message = nativeacct_fails(&dir, &["dump", &pid.to_string()]);
    assert!(
        message.contains("no nativeacct control socket"),
        "{message}"
    );
    service.finish_after_phase();
}

/// Run `args` as user nobody (setpriv), or None with a printed reason when that is not possible.
fn as_nobody(program: &Path, args: &[String]) -> Option<std::process::Command> {
    if own_uid() != 0 {
        println!(
            "SKIPPED the other-user checks: they need root to switch to nobody (uid {})",
            own_uid()
        );
        return None;
    }
    let ok = std::process::Command::new("setpriv")
        .args([
            "--reuid=nobody",
            "--regid=nogroup",
            "--clear-groups",
            "true",
        ])
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        println!("SKIPPED the other-user checks: setpriv --reuid=nobody does not work here");
        return None;
    }
    let mut command = std::process::Command::new("setpriv");
    command
        .args(["--reuid=nobody", "--regid=nogroup", "--clear-groups"])
        .arg(program)
        .args(args);
    Some(command)
}

fn nobody_uid() -> u32 {
    let out = std::process::Command::new("id")
        .args(["-u", "nobody"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
}

#[test]
fn another_user_is_refused() {
    let dir = scratch("other-user");
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    // 1. nobody asks this user's JVM: the private directory keeps it out.
    let (service, pid) = quiet_service(&dir, &[]);
    let Some(mut command) = as_nobody(
        &launcher(),
        &[
            "dump".into(),
            pid.to_string(),
            format!("file={}/stolen", dir.display()),
            "format=json".into(),
        ],
    ) else {
        return;
    };
    let out = command.current_dir(&dir).output().unwrap();
    let message = String::from_utf8_lossy(&out.stderr);
    println!("nobody -> root's JVM: {}", message.trim());
    assert!(!out.status.success());
    assert!(!dir.join("stolen").exists());
    service.finish_after_phase();

    // 2. This user (root, who can enter any directory) asks nobody's JVM: SO_PEERCRED refuses.
    let java = java_home().join("bin/java");
    let nobody_report = dir.join("nobody.json");
    let mut args = vec![
        agent_to(&nobody_report, ""),
        format!("-Djava.library.path={}", fixture().display()),
        "-cp".into(),
        fixture().display().to_string(),
        "Service".into(),
        "1".into(),
        "100".into(),
        "50".into(),
    ];
    args.insert(0, "-Xshare:auto".into());
    let mut command = as_nobody(&java, &args).unwrap();
    let stderr_path = dir.join("nobody-stderr.txt");
    let mut child = command
        .current_dir(&dir)
        .env("HOME", &dir)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::fs::File::create(&stderr_path).unwrap())
        .spawn()
        .unwrap();
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    std::io::BufRead::read_line(&mut stdout, &mut line).unwrap();
    assert!(
        line.starts_with("READY 0"),
        "{line:?}: {}",
        std::fs::read_to_string(&stderr_path).unwrap_or_default()
    );
    // The JVM is a child of setpriv's exec: the same pid.
    let jvm = child.id();
    let socket = socket_of(jvm, nobody_uid());
    assert!(socket.exists(), "nobody's JVM opened {}", socket.display());
    let out = nativeacct(
        &dir,
        &["dump", &jvm.to_string(), "file=root-asks", "format=json"],
    );
    let message = String::from_utf8_lossy(&out.stderr);
    println!("root -> nobody's JVM: {}", message.trim());
    assert!(!out.status.success());
    assert!(message.contains("refused"), "{message}");
    assert!(!dir.join("root-asks").exists());
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "go").unwrap();
    writeln!(stdin, "go").unwrap();
    drop(stdin);
    let status = child.wait().unwrap();
    let stderr = std::fs::read_to_string(&stderr_path).unwrap_or_default();
    assert!(status.success(), "{stderr}");
    assert!(
        stderr.contains("refused a control connection from uid 0"),
        "{stderr}"
    );
    assert!(
        nobody_report.exists(),
        "nobody's JVM still wrote its report: {stderr}"
    );
}

#[test]
fn socket_goes_to_xdg_runtime_dir_when_the_jvm_has_one() {
    let dir = scratch("xdg");
    let runtime = dir.join("runtime");
    std::fs::create_dir(&runtime).unwrap();
    std::fs::set_permissions(&runtime, std::fs::Permissions::from_mode(0o700)).unwrap();
    let (mut service, pid) = quiet_service(&dir, &[("XDG_RUNTIME_DIR", &runtime)]);
    service.go();
    // After a phase: the worker has run (at READY 0 it may not have started yet).
    let t1 = service.ready();
    let socket = runtime.join(format!("nativeacct/{pid}.sock"));
    assert!(socket.exists(), "{}", socket.display());
    assert!(!socket_of(pid, own_uid()).exists());
    let mode = std::fs::metadata(runtime.join("nativeacct"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o700);
    // The launcher finds it through the JVM's environment.
    nativeacct_ok(&dir, &["dump", &pid.to_string(), "file=x", "format=json"]);
    let dump = read_json(&dir.join("x"));
    assert_eq!(u(&thread(&dump, "worker")["jni_calls"]), t1.upcalls);
    service.finish_ok();
    assert!(!socket.exists(), "removed at exit");
}

#[test]
fn a_directory_that_is_not_private_is_not_used() {
    let dir = scratch("open-dir");
    let runtime = dir.join("runtime");
    std::fs::create_dir_all(runtime.join("nativeacct")).unwrap();
    std::fs::set_permissions(
        runtime.join("nativeacct"),
        std::fs::Permissions::from_mode(0o777),
    )
    .unwrap();
    let (service, pid) = quiet_service(&dir, &[("XDG_RUNTIME_DIR", &runtime)]);
    // Not in the world-writable directory: in the fallback under /tmp.
    assert!(!runtime.join(format!("nativeacct/{pid}.sock")).exists());
    assert!(socket_of(pid, own_uid()).exists());
    service.finish_after_phase();
}

/// A socket left by a killed JVM (its pid gone) is removed when the next JVM's channel starts; one
/// whose pid is alive is left alone.
#[test]
fn sockets_of_killed_jvms_are_swept() {
    let dir = scratch("sweep");
    let sockets = socket_of(std::process::id(), own_uid())
        .parent()
        .unwrap()
        .to_path_buf();
    std::fs::create_dir_all(&sockets).unwrap();
    std::fs::set_permissions(&sockets, std::fs::Permissions::from_mode(0o700)).unwrap();
    let pid_max: u32 = std::fs::read_to_string("/proc/sys/kernel/pid_max")
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // Above pid_max: no process can have it.
    let dead = sockets.join(format!("{}.sock", pid_max + 1));
    let alive = sockets.join(format!("{}.sock", std::process::id()));
    let _dead_listener = std::os::unix::net::UnixListener::bind(&dead).unwrap();
    let _alive_listener = std::os::unix::net::UnixListener::bind(&alive).unwrap();
    let (service, pid) = quiet_service(&dir, &[]);
    // The sweep runs on the channel's thread before it answers: one answered request orders it.
    let answer = send_raw(&socket_of(pid, own_uid()), b"\n", true);
    assert!(!answer.is_empty());
    assert!(!dead.exists(), "the dead JVM's socket is still there");
    assert!(alive.exists(), "a live process's socket was removed");
    std::fs::remove_file(&alive).unwrap();
    service.finish_after_phase();
}

/// `nativeacct dump` given the launcher's pid (what `nativeacct run` shows) dumps its JVM.
#[test]
fn dump_of_the_launchers_pid_reaches_its_jvm() {
    let dir = scratch("launcher-pid");
    let mut service =
        Service::start_via_launcher(&java_home(), "quiet,format=json", &ONE_SHORT_PHASE, &dir);
    let launcher_pid = service.pid();
    service.ready();
    let out = nativeacct_ok(&dir, &["dump", &launcher_pid.to_string()]);
    let said = String::from_utf8_lossy(&out.stderr);
    let jvm_pid: u32 = said
        .split("its JVM is ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no launcher line: {said}"));
    assert_ne!(jvm_pid, launcher_pid);
    let dump = dir.join(format!("nativeacct-{jvm_pid}-dump.json"));
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&dump).expect("the dump")).unwrap();
    assert_eq!(report["written_at"], "dump");
    service.finish_after_phase();
}
