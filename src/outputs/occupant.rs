//! What is at a name, and the rules for following a symlink or writing into a file there.

use super::*;

pub(super) enum Occupant {
    /// A regular file that may be replaced.
    Replaceable,
    /// Anything else; the text says what it is.
    Taken(String),
}

impl Occupant {
    pub(super) fn taken(self) -> Option<String> {
        match self {
            Occupant::Replaceable => None,
            Occupant::Taken(why) => Some(why),
        }
    }
}

/// Which regular files at a target's name may be replaced.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Replaces {
    /// `file=` named it: any regular file (not a symlink).
    AnyRegular,
    /// A name from a base `file=` gave: a regular file of your own (a previous run's report).
    OwnRegular,
    /// A name from the default base: nothing.
    Nothing,
}

impl Replaces {
    pub(super) fn for_base(given: bool) -> Replaces {
        if given {
            Replaces::OwnRegular
        } else {
            Replaces::Nothing
        }
    }
}

/// (device, inode) of every file this run put in place: a snapshot's file is replaced by the next
/// snapshot and by the final report, whatever name rule applies.
pub(super) static CREATED: Mutex<Vec<(u64, u64)>> = Mutex::new(Vec::new());

pub(super) fn created_by_this_run() -> std::sync::MutexGuard<'static, Vec<(u64, u64)>> {
    crate::sync::lock(&CREATED)
}

/// What is at `path`, without following a symlink there (None: nothing).
pub(super) fn occupant(path: &Path, replaces: Replaces) -> Option<Occupant> {
    let ours = |m: &Metadata| m.is_file() && created_by_this_run().contains(&(m.dev(), m.ino()));
    let replaceable = |m: &Metadata| {
        ours(m)
            || match replaces {
                Replaces::AnyRegular => m.is_file(),
                Replaces::OwnRegular => m.is_file() && m.uid() == euid(),
                Replaces::Nothing => false,
            }
    };
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => Some(Occupant::Taken(format!("unreadable: {e}"))),
        Ok(m) if replaceable(&m) => Some(Occupant::Replaceable),
        Ok(m) => Some(Occupant::Taken(describe(&m))),
    }
}

/// `a symlink owned by uid 65534`, `a directory`, ...
pub(super) fn describe(m: &Metadata) -> String {
    let t = m.file_type();
    let kind = if t.is_symlink() {
        "a symlink"
    } else if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_char_device() || t.is_block_device() {
        "a device"
    } else {
        "a file"
    };
    format!("{kind} owned by uid {}", m.uid())
}

pub(super) fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// The process's umask, read without changing it (umask(2) would, for every thread at once).
/// If /proc is not there, 077: reports readable by their owner only.
pub(super) fn umask() -> u32 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|l| l.strip_prefix("Umask:"))
                .and_then(|v| u32::from_str_radix(v.trim(), 8).ok())
        })
        .unwrap_or(0o077)
}

/// A directory others can add names to: world-writable or sticky.
pub(super) fn shared(dir: &Metadata) -> Option<&'static str> {
    let mode = dir.mode();
    match (mode & 0o002 != 0, mode & 0o1000 != 0) {
        (true, true) => Some("world-writable, sticky"),
        (true, false) => Some("world-writable"),
        (false, true) => Some("sticky"),
        (false, false) => None,
    }
}

/// Whether the agent may follow the symlink `link` (metadata `meta`) found in a directory with
/// metadata `dir`: the kernel's `protected_symlinks` rule, made stricter (any world-writable or sticky
/// directory counts as shared). In a shared directory only a link owned by this process's user or by
/// the directory's owner is followed.
pub(super) fn may_follow(link: &Path, meta: &Metadata, dir: &Metadata) -> io::Result<()> {
    may_use(link, meta, dir, "followed")
}

/// The same rule for writing into an existing file, FIFO or device in place (the kernel's
/// `protected_fifos` and `protected_regular`): someone else's file in a shared directory may be a
/// trap that reads the report or blocks the exit.
pub(super) fn may_write_in_place(path: &Path, meta: &Metadata, dir: &Metadata) -> io::Result<()> {
    may_use(path, meta, dir, "written into")
}

pub(super) fn may_use(path: &Path, meta: &Metadata, dir: &Metadata, verb: &str) -> io::Result<()> {
    let Some(how) = shared(dir) else {
        return Ok(());
    };
    let me = euid();
    if meta.uid() == me || meta.uid() == dir.uid() {
        return Ok(());
    }
    Err(io::Error::new(
        io::ErrorKind::PermissionDenied,
        format!(
            "{} is {} in a {how} directory; there, it is {verb} only if it belongs to you (uid {me}) or to the directory's owner (uid {})",
            path.display(),
            describe(meta),
            dir.uid()
        ),
    ))
}
