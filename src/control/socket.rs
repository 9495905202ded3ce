//! The socket itself: a private directory of the owner, a socket named after the pid, and the removal of sockets whose JVM is gone.

use super::*;

pub(super) fn own_uid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

pub(super) fn own_pid() -> u32 {
    // SAFETY: getpid has no preconditions and cannot fail.
    unsafe { libc::getpid() as u32 }
}

pub(super) fn open_socket() -> Result<UnixListener, String> {
    let xdg = std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from);
    let mut problems = Vec::new();
    for dir in protocol::socket_dirs(xdg.as_deref(), own_uid()) {
        match private_dir(&dir).and_then(|()| bind_in(&dir)) {
            Ok(listener) => return Ok(listener),
            Err(e) => problems.push(format!("{}: {e}", dir.display())),
        }
    }
    Err(problems.join("; "))
}

/// Create `dir` with mode 0700, or check that the existing one is a real directory of this user
/// that nobody else can enter.
pub(super) fn private_dir(dir: &Path) -> Result<(), String> {
    use std::os::unix::fs::DirBuilderExt;
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e.to_string()),
    }
    let meta = std::fs::symlink_metadata(dir).map_err(|e| e.to_string())?;
    if !meta.file_type().is_dir() {
        return Err("not a directory".into());
    }
    if meta.uid() != own_uid() {
        return Err(format!("owned by uid {}, not this user", meta.uid()));
    }
    if meta.mode() & 0o077 != 0 {
        return Err(format!(
            "mode {:o} lets other users in",
            meta.mode() & 0o777
        ));
    }
    Ok(())
}

pub(super) fn bind_in(dir: &Path) -> Result<UnixListener, String> {
    let path = dir.join(protocol::socket_name(own_pid()));
    // A file of this name is left by an earlier process with the same pid (killed before it
    // could remove it): this process is the only live one with this pid.
    if let Ok(meta) = std::fs::symlink_metadata(&path) {
        use std::os::unix::fs::FileTypeExt;
        if meta.file_type().is_socket() && meta.uid() == own_uid() {
            let _ = std::fs::remove_file(&path);
        }
    }
    let listener = UnixListener::bind(&path).map_err(|e| e.to_string())?;
    // The directory already keeps others out; the socket's own mode says the same.
    let _ = std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600));
    let meta = std::fs::symlink_metadata(&path).map_err(|e| e.to_string())?;
    *crate::sync::lock(&SOCKET) = Some((path, meta.dev(), meta.ino()));
    Ok(listener)
}

/// Sockets left in `dir` by JVMs of this user that were killed before they could remove them (a
/// SIGKILL): removed when no process has their pid any more. A live process with that pid keeps
/// its name, whatever it is.
pub(super) fn remove_dead_sockets(dir: &Path) {
    use std::os::unix::fs::FileTypeExt;
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_suffix(".sock"))
            .and_then(|n| n.parse::<libc::pid_t>().ok())
        else {
            continue;
        };
        // SAFETY: kill with signal 0 sends nothing; it only checks that the pid exists.
        let gone = unsafe { libc::kill(pid, 0) } != 0
            && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
        let ours = entry
            .metadata()
            .is_ok_and(|m| m.file_type().is_socket() && m.uid() == own_uid());
        if gone && ours {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}
