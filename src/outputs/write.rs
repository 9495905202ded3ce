//! Writing a target: replaced through an exclusive temporary file and a rename, or written in place.

use super::*;

/// What a temporary file is for; it names it `<file>.tmp-XXXXXXXXXX` or `<file>.partial-XXXXXXXXXX`.
#[derive(Clone, Copy)]
pub(crate) enum TempKind {
    /// A report written at exit.
    Report,
    /// The interval log, written as the run goes (kept after a crash).
    Partial,
}

/// An output being written.
pub(crate) struct Pending {
    pub(super) sink: Sink,
}

pub(super) enum Sink {
    InPlace(File),
    Temp {
        file: tempfile::NamedTempFile,
        /// The target's directory, resolved.
        dir: PathBuf,
    },
}

impl Pending {
    /// Open `target` for writing: in place, or a new temporary file next to it.
    pub(crate) fn begin(target: &Target, kind: TempKind) -> io::Result<Pending> {
        let real = match target.rule {
            Rule::Named => match place_named(&target.path) {
                Ok(Placement::Replace { real }) => real,
                Ok(Placement::InPlace { real, how }) => {
                    return Ok(Pending {
                        sink: Sink::InPlace(open_in_place(&real, how, false)?),
                    })
                }
                // Checked at start-up, refused now: something was put at the name during the run.
                // Write next to it; `finish` leaves it alone and picks another name.
                Err(e)
                    if e.kind() == io::ErrorKind::PermissionDenied
                        && occupant(&target.path, Replaces::AnyRegular)
                            .is_some_and(|o| o.taken().is_some()) =>
                {
                    resolve(parent_of(&target.path))?
                        .path
                        .join(target.path.file_name().unwrap_or_default())
                }
                Err(e) => return Err(e),
            },
            Rule::FromBase { .. } => resolve(parent_of(&target.path))?
                .path
                .join(target.path.file_name().unwrap_or_default()),
        };
        let file = temp_next_to(&real, kind)?;
        Ok(Pending {
            sink: Sink::Temp {
                file,
                dir: parent_of(&real).to_path_buf(),
            },
        })
    }

    pub(crate) fn file(&mut self) -> &mut File {
        match &mut self.sink {
            Sink::InPlace(file) => file,
            Sink::Temp { file, .. } => file.as_file_mut(),
        }
    }

    /// Put the output in place as `target` (the one it began as, or the same name under a base that
    /// moved meanwhile). Returns the path written.
    pub(crate) fn finish(self, target: &Target) -> io::Result<PathBuf> {
        let identity = match &self.sink {
            Sink::Temp { file, .. } => file.as_file().metadata().ok().map(|m| (m.dev(), m.ino())),
            Sink::InPlace(_) => None,
        };
        let written = self.put_in_place(target)?;
        if let Some(identity) = identity {
            created_by_this_run().push(identity);
        }
        Ok(written)
    }

    fn put_in_place(self, target: &Target) -> io::Result<PathBuf> {
        let (file, dir) = match self.sink {
            Sink::InPlace(mut file) => {
                file.flush()?;
                return Ok(target.path.clone());
            }
            Sink::Temp { file, dir } => (file, dir),
        };
        file.as_file().sync_all()?;
        file.as_file()
            .set_permissions(std::fs::Permissions::from_mode(0o666 & !umask()))?;
        let real = dir.join(target.path.file_name().unwrap_or_default());
        let replaces = target.replaces();
        match occupant(&real, replaces) {
            None => match file.persist_noclobber(&real) {
                Ok(_) => Ok(target.path.clone()),
                Err(e) if e.error.kind() == io::ErrorKind::AlreadyExists => {
                    let why = occupant(&real, replaces)
                        .and_then(|o| o.taken())
                        .unwrap_or_else(|| "another file".to_string());
                    place_elsewhere(e.file, target, &dir, &why)
                }
                // A file system with neither RENAME_NOREPLACE nor hard links (FAT, some FUSE): a plain
                // rename, which still never writes through what may have appeared meanwhile.
                Err(e) if occupant(&real, replaces).is_none() => e
                    .file
                    .persist(&real)
                    .map(|_| target.path.clone())
                    .map_err(|e| e.error),
                Err(e) => Err(e.error),
            },
            // The rename replaces what is there and never follows a symlink.
            Some(Occupant::Replaceable) => file
                .persist(&real)
                .map(|_| target.path.clone())
                .map_err(|e| e.error),
            Some(Occupant::Taken(why)) => place_elsewhere(file, target, &dir, &why),
        }
    }
}

/// The target's name was taken during the run: write to the next free alternative instead, and say so.
pub(super) fn place_elsewhere(
    mut file: tempfile::NamedTempFile,
    target: &Target,
    dir: &Path,
    why: &str,
) -> io::Result<PathBuf> {
    for n in 1..=MAX_ALTERNATIVES {
        let shown = target.alternative(n);
        let real = dir.join(shown.file_name().unwrap_or_default());
        match file.persist_noclobber(&real) {
            Ok(_) => {
                crate::diag::line(&format!(
                    "{} was taken during the run ({why}); left it alone and wrote {} instead",
                    target.path.display(),
                    shown.display()
                ));
                return Ok(shown);
            }
            Err(e) if e.error.kind() == io::ErrorKind::AlreadyExists => file = e.file,
            Err(e) => return Err(e.error),
        }
    }
    Err(io::Error::new(
        io::ErrorKind::AlreadyExists,
        format!("it is {why}, and so is every alternative name"),
    ))
}

impl Target {
    /// Whether the output goes into what is already there (a device, a FIFO, a linked file) rather
    /// than by a rename: such a target gets the final report only, never a snapshot.
    pub(crate) fn written_in_place(&self) -> bool {
        matches!(self.rule, Rule::Named)
            && matches!(place_named(&self.path), Ok(Placement::InPlace { .. }))
    }

    /// Which regular files already at the target's name may be replaced.
    fn replaces(&self) -> Replaces {
        match self.rule {
            Rule::Named => Replaces::AnyRegular,
            Rule::FromBase { replaces, .. } => replaces,
        }
    }

    /// The N-th other name for this output: `base-N.suffix`, or for `file=` `stem-N.ext`.
    pub(super) fn alternative(&self, n: u32) -> PathBuf {
        match &self.rule {
            Rule::FromBase { base, suffix, .. } => with_suffix(&numbered(base, n), suffix),
            Rule::Named => {
                let stem = self.path.file_stem().unwrap_or_default();
                let mut name = stem.to_owned();
                name.push(format!("-{n}"));
                if let Some(ext) = self.path.extension() {
                    name.push(".");
                    name.push(ext);
                }
                self.path.with_file_name(name)
            }
        }
    }
}

/// A temporary file for `real`, in its directory: created exclusively, unpredictable name, mode 0600.
pub(super) fn temp_next_to(real: &Path, kind: TempKind) -> io::Result<tempfile::NamedTempFile> {
    let name = real.file_name().unwrap_or_default().to_string_lossy();
    let tag = match kind {
        TempKind::Report => "tmp",
        TempKind::Partial => "partial",
    };
    tempfile::Builder::new()
        .prefix(&format!("{name}.{tag}-"))
        .rand_bytes(10)
        .tempfile_in(parent_of(real))
}

/// Check that a file can be created next to `real`: a temporary file is made there and removed.
pub(super) fn probe_directory(real: &Path) -> io::Result<()> {
    temp_next_to(real, TempKind::Report)?.close()
}
