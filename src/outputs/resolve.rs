//! Resolving `file=` as open(2) would, checking every symlink met on the way.

use super::*;

/// `path` as open(2) would resolve it, with every symlink met on the way checked by [`may_follow`].
pub(super) struct Resolved {
    /// The path to open: free of symlinks, unless the walk stopped at a link inside /proc.
    pub(super) path: PathBuf,
    /// A symlink was followed on the way.
    pub(super) through_link: bool,
    /// The walk stopped at a link inside /proc (`/dev/stderr` → `/proc/self/fd/2`, which may lead
    /// to a pipe): `path` is opened as it is, by the kernel.
    pub(super) kernel_link: bool,
}

pub(super) enum Part {
    Root,
    Parent,
    Name(OsString),
}

pub(super) fn parts_of(path: &Path) -> VecDeque<Part> {
    path.components()
        .filter_map(|c| match c {
            Component::RootDir => Some(Part::Root),
            Component::ParentDir => Some(Part::Parent),
            Component::Normal(name) => Some(Part::Name(name.to_owned())),
            Component::CurDir | Component::Prefix(_) => None,
        })
        .collect()
}

pub(super) fn join_rest(mut path: PathBuf, rest: VecDeque<Part>) -> PathBuf {
    for part in rest {
        match part {
            Part::Root => path = PathBuf::from("/"),
            Part::Parent => path.push(".."),
            Part::Name(name) => path.push(name),
        }
    }
    path
}

pub(super) fn resolve(path: &Path) -> io::Result<Resolved> {
    let mut resolved = if path.is_absolute() {
        PathBuf::from("/")
    } else {
        std::env::current_dir()?
    };
    let mut parts = parts_of(path);
    let mut through_link = false;
    let mut links = 0;
    while let Some(part) = parts.pop_front() {
        let name = match part {
            Part::Root => {
                resolved = PathBuf::from("/");
                continue;
            }
            Part::Parent => {
                resolved.pop();
                continue;
            }
            Part::Name(name) => name,
        };
        let next = resolved.join(&name);
        let meta = match std::fs::symlink_metadata(&next) {
            Ok(meta) => meta,
            // Nothing more to follow: what is missing will be created, or fail to be.
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Ok(Resolved {
                    path: join_rest(next, parts),
                    through_link,
                    kernel_link: false,
                })
            }
            Err(e) => return Err(e),
        };
        if !meta.file_type().is_symlink() {
            resolved = next;
            continue;
        }
        if resolved.starts_with("/proc") {
            return Ok(Resolved {
                path: join_rest(next, parts),
                through_link: true,
                kernel_link: true,
            });
        }
        may_follow(&next, &meta, &std::fs::metadata(&resolved)?)?;
        links += 1;
        if links > MAX_LINKS {
            return Err(io::Error::from_raw_os_error(libc::ELOOP));
        }
        let target = std::fs::read_link(&next)?;
        for part in parts_of(&target).into_iter().rev() {
            parts.push_front(part);
        }
        through_link = true;
    }
    Ok(Resolved {
        path: resolved,
        through_link,
        kernel_link: false,
    })
}

/// How `file=` is written.
pub(super) enum Placement {
    /// By a temporary file renamed to `real` (absent, or a regular file that is no symlink).
    Replace { real: PathBuf },
    /// Into what is at `real`.
    InPlace { real: PathBuf, how: InPlace },
}

#[derive(Clone, Copy, PartialEq)]
pub(super) enum InPlace {
    /// A regular file behind a symlink: emptied first, like a report file.
    Truncate,
    /// A device, a FIFO, or anything in /dev or /proc (`/dev/stdout` may be the program's log):
    /// appended to, so nothing there is lost.
    Append,
    /// A symlink to nothing: the file it names is created (exclusively).
    Create,
}

pub(super) fn is_directory_error() -> io::Error {
    io::Error::new(io::ErrorKind::IsADirectory, "it is a directory")
}

/// Decide how `file=` `path` is written, or why it must not be.
pub(super) fn place_named(path: &Path) -> io::Result<Placement> {
    let resolved = resolve(path)?;
    let real = resolved.path;
    if resolved.kernel_link {
        return Ok(Placement::InPlace {
            real,
            how: InPlace::Append,
        });
    }
    let meta = match std::fs::symlink_metadata(&real) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Ok(if resolved.through_link {
                Placement::InPlace {
                    real,
                    how: InPlace::Create,
                }
            } else {
                Placement::Replace { real }
            });
        }
        Err(e) => return Err(e),
        Ok(meta) => meta,
    };
    if meta.is_dir() {
        return Err(is_directory_error());
    }
    let dir = std::fs::metadata(parent_of(&real))?;
    if meta.is_file() && !resolved.through_link {
        // A rename in a sticky directory needs the file or the directory to be yours (or root).
        let me = euid();
        if dir.mode() & 0o1000 != 0 && me != 0 && meta.uid() != me && dir.uid() != me {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!(
                    "it belongs to uid {} in a sticky directory, so it cannot be replaced",
                    meta.uid()
                ),
            ));
        }
        return Ok(Placement::Replace { real });
    }
    may_write_in_place(&real, &meta, &dir)?;
    let system = real.starts_with("/dev") || real.starts_with("/proc");
    let how = if meta.is_file() && !system {
        InPlace::Truncate
    } else {
        InPlace::Append
    };
    Ok(Placement::InPlace { real, how })
}

/// Open `real` for writing in place. With `check_only`, nothing is created or emptied and a FIFO is
/// opened without waiting for a reader.
pub(super) fn open_in_place(real: &Path, how: InPlace, check_only: bool) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.write(true);
    let mut flags = 0;
    if how != InPlace::Append || !real.starts_with("/proc") {
        // `real` has no symlinks left: one appearing now is not followed.
        flags |= libc::O_NOFOLLOW;
    }
    if check_only {
        flags |= libc::O_NONBLOCK;
    }
    match how {
        InPlace::Create => {
            options.create_new(true).mode(0o666);
        }
        InPlace::Truncate => {
            options.truncate(true);
        }
        InPlace::Append => {
            options.append(true);
        }
    }
    options.custom_flags(flags).open(real)
}

/// At start-up: can `file=` `path` be written, and may it be? Creates nothing at a guessable name.
pub(super) fn check_named(path: &Path) -> io::Result<()> {
    match place_named(path)? {
        Placement::Replace { real } => probe_directory(&real),
        Placement::InPlace {
            real,
            how: InPlace::Create,
        } => probe_directory(&real),
        Placement::InPlace { real, .. } => {
            // No truncation, no creation; a FIFO without a reader yet is fine (ENXIO).
            match open_in_place(&real, InPlace::Append, true) {
                Err(e) if e.raw_os_error() == Some(libc::ENXIO) => Ok(()),
                other => other.map(drop),
            }
        }
    }
}
