//! Where the reports go, and how they get there without being turned against the host.
//!
//! The agent runs inside other people's JVMs, often as root or a service account, and often writes
//! into shared directories such as `/tmp` at names another user can guess (`nativeacct-<pid>.json`).
//! So every file is written in one of two ways, decided here and nowhere else:
//!
//! - **Replaced**: the body goes to a temporary file created exclusively (`O_CREAT|O_EXCL`, so never
//!   through a symlink) under an unpredictable name in the target's directory, mode 0600; it gets the
//!   user's umask and is renamed over the target. A rename never follows a symlink at the target.
//! - **In place**, only for what `file=` names exactly: a device, a FIFO (`/dev/null`, a pipe), or the
//!   file a symlink points to, when that link may be followed (see [`may_follow`]).
//!
//! Names the agent makes up (every name derived from a base: `nativeacct-<pid>.json`, `BASE.csv`,
//! `BASE.*.hgrm`, `BASE.hlog`) are never followed and never written into: when one is taken by
//! anything this run did not create, the whole run moves to the next free base (`BASE-1`), decided at
//! start-up and kept for every format. With a base given by `file=`, a regular file of your own (a
//! previous run's report) is replaced, as a rerun expects; the default `nativeacct-<pid>` base
//! replaces nothing.
//!
//! ```text
//! start-up:  settle(options)      decide every name, refuse unsafe ones, check the directory
//! exit:      targets_at_exit()    re-check the names, then Pending::begin → write → finish
//! ```

use crate::options::{file_name_safe, Format, Options};
use std::collections::VecDeque;
use std::ffi::OsString;
use std::fs::{File, Metadata, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};
use std::sync::Mutex;

/// Highest `-N` tried when looking for a free name.
const MAX_ALTERNATIVES: u32 = 999;
/// Symlinks followed while resolving one path (the kernel's limit).
const MAX_LINKS: u32 = 40;

/// What names the run's files, decided once at start-up (see [`settle`]).
#[derive(Clone, Debug)]
struct Plan {
    /// `file=` when it names the one file the run writes (one format that makes one file).
    named: Option<PathBuf>,
    /// The base of every other name, as the options give it.
    base: PathBuf,
    /// 0: `base` itself; N: `base-N`, because a name of a lower one was taken.
    moved: u32,
    /// `file=` gave the base: your own regular files at derived names are replaced.
    base_given: bool,
    /// What follows `base.` in the names the run creates.
    suffixes: Vec<Suffix>,
}

#[derive(Clone, Debug)]
enum Suffix {
    Exact(String),
    /// Any `<what>.hgrm` (the set is known only at exit).
    AnyHgrm,
}

/// Where one output goes.
#[derive(Clone, Debug)]
pub(crate) struct Target {
    /// The path as shown to people (relative if the options gave it so).
    pub(crate) path: PathBuf,
    rule: Rule,
}

#[derive(Clone, Debug)]
enum Rule {
    /// Exactly `file=`.
    Named,
    /// `base.suffix`.
    FromBase {
        base: PathBuf,
        suffix: String,
        replaces: Replaces,
    },
}

static PLAN: Mutex<Option<Plan>> = Mutex::new(None);

fn stored_plan() -> std::sync::MutexGuard<'static, Option<Plan>> {
    crate::sync::lock(&PLAN)
}

impl Plan {
    fn of(options: &Options) -> Plan {
        let named = match (&options.file, options.formats.as_slice()) {
            (Some(file), [only]) if *only != Format::Hgrm => Some(file.clone()),
            _ => None,
        };
        let suffixes = options
            .formats
            .iter()
            .map(|&f| match f {
                Format::Hgrm => Suffix::AnyHgrm,
                f => Suffix::Exact(f.extension().to_string()),
            })
            .collect();
        Plan {
            named,
            base: options.output_base(),
            moved: 0,
            base_given: options.file.is_some(),
            suffixes,
        }
    }

    fn base(&self) -> PathBuf {
        numbered(&self.base, self.moved)
    }

    fn target(&self, suffix: &str) -> Target {
        let base = self.base();
        Target {
            path: with_suffix(&base, suffix),
            rule: Rule::FromBase {
                base,
                suffix: suffix.to_string(),
                replaces: Replaces::for_base(self.base_given),
            },
        }
    }

    fn named_target(&self) -> Option<Target> {
        self.named.as_ref().map(|path| Target {
            path: path.clone(),
            rule: Rule::Named,
        })
    }

    /// The output of `format` (for `hgrm`, of its `native` file).
    fn format_target(&self, format: Format) -> Target {
        match (self.named_target(), format) {
            (Some(target), _) => target,
            (None, Format::Hgrm) => self.target(&hgrm_suffix("native")),
            (None, format) => self.target(format.extension()),
        }
    }

    /// The first name of the current base that is taken, and by what (in `dir`, the base's resolved
    /// directory). `exact` lists the suffixes to check; `None` checks the planned ones.
    fn first_taken(
        &self,
        dir: &Path,
        exact: Option<&[String]>,
    ) -> io::Result<Option<(PathBuf, String)>> {
        let base = self.base();
        let base_name = base.file_name().unwrap_or_default().to_string_lossy();
        let check = |suffix: &str| -> Option<(PathBuf, String)> {
            let name = format!("{base_name}.{suffix}");
            occupant(&dir.join(&name), Replaces::for_base(self.base_given))
                .and_then(|o| o.taken())
                .map(|why| (with_suffix(&base, suffix), why))
        };
        if let Some(exact) = exact {
            return Ok(exact.iter().find_map(|s| check(s)));
        }
        for suffix in &self.suffixes {
            let found = match suffix {
                Suffix::Exact(s) => check(s),
                Suffix::AnyHgrm => {
                    let prefix = format!("{base_name}.");
                    let mut found = None;
                    for entry in std::fs::read_dir(dir)? {
                        let name = entry?.file_name().to_string_lossy().into_owned();
                        if let Some(s) = name.strip_prefix(&prefix).filter(|s| s.ends_with(".hgrm"))
                        {
                            found = check(s);
                            if found.is_some() {
                                break;
                            }
                        }
                    }
                    found
                }
            };
            if found.is_some() {
                return Ok(found);
            }
        }
        Ok(None)
    }

    /// Move to the first base, from the current one on, whose names are all free. Returns the name
    /// that was taken, and by what, if the base moved.
    fn move_off_taken(
        &mut self,
        dir: &Path,
        exact: Option<&[String]>,
    ) -> io::Result<Option<(PathBuf, String)>> {
        let mut first = None;
        while self.moved <= MAX_ALTERNATIVES {
            match self.first_taken(dir, exact)? {
                None => return Ok(first),
                Some(taken) => {
                    first.get_or_insert(taken);
                    self.moved += 1;
                }
            }
        }
        Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!(
                "every name from {} to {}-{MAX_ALTERNATIVES} is taken",
                self.base.display(),
                self.base.display()
            ),
        ))
    }

    /// The files of the current base for people: the one path, or `base.*`.
    fn describe(&self) -> String {
        match self.suffixes.as_slice() {
            [Suffix::Exact(s)] => with_suffix(&self.base(), s).display().to_string(),
            _ => format!("{}.*", self.base().display()),
        }
    }
}

/// `base-N` (`base` itself for 0).
fn numbered(base: &Path, n: u32) -> PathBuf {
    if n == 0 {
        return base.to_path_buf();
    }
    let mut name = base.as_os_str().to_owned();
    name.push(format!("-{n}"));
    PathBuf::from(name)
}

fn with_suffix(base: &Path, suffix: &str) -> PathBuf {
    let mut name = base.as_os_str().to_owned();
    name.push(".");
    name.push(suffix);
    PathBuf::from(name)
}

fn hgrm_suffix(what: &str) -> String {
    format!("{}.hgrm", file_name_safe(what))
}

/// The directory a path's file lives in (`.` for a bare name).
fn parent_of(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

// ---------------------------------------------------------------------------------------------------
// Start-up and exit.

/// At start-up: decide where every output of `options` goes and check that it can be written there,
/// creating nothing at a guessable name and changing nothing. A taken derived name moves the run to
/// the next free base (one line on stderr). Returns the output that cannot be written, and why.
pub(crate) fn settle(options: &Options) -> Result<(), (PathBuf, io::Error)> {
    let mut plan = Plan::of(options);
    if plan.suffixes.is_empty() {
        return Ok(());
    }
    if let Some(named) = plan.named.clone() {
        check_named(&named).map_err(|e| (named, e))?;
    } else {
        let shown = plan.format_target(options.formats[0]).path;
        let dir = resolve(parent_of(&plan.base))
            .map_err(|e| (shown.clone(), e))?
            .path;
        if let Some((taken, why)) = plan
            .move_off_taken(&dir, None)
            .map_err(|e| (shown.clone(), e))?
        {
            announce_move(&taken, &why, &plan);
        }
        let probe = dir.join(plan.base().file_name().unwrap_or_default());
        probe_directory(&probe).map_err(|e| (plan.format_target(options.formats[0]).path, e))?;
    }
    *stored_plan() = Some(plan);
    Ok(())
}

fn announce_move(taken: &Path, why: &str, plan: &Plan) {
    crate::diag::line(&format!(
        "{} is taken ({why}, not created by this run); writing {} instead",
        taken.display(),
        plan.describe()
    ));
}

/// The plan settled at start-up (or, if there was none, the names as the options give them).
fn plan_for(options: &Options) -> Plan {
    stored_plan().clone().unwrap_or_else(|| Plan::of(options))
}

/// The output of `format` as planned at start-up (for `hgrm`, its `native` file).
pub(crate) fn target(options: &Options, format: Format) -> Target {
    plan_for(options).format_target(format)
}

/// One output the report writes at exit: a format's file, or one `.hgrm` file.
#[derive(Clone)]
pub(crate) enum OutputName {
    Format(Format),
    Hgrm(String),
}

/// At exit: where each of `names` goes. The planned base is checked again first; if one of its
/// names was taken during the run, every output moves to the next free base (one line on stderr).
pub(crate) fn targets_at_exit(options: &Options, names: &[OutputName]) -> Vec<Target> {
    let mut plan = plan_for(options);
    if plan.named.is_none() {
        let suffixes: Vec<String> = names
            .iter()
            .map(|n| match n {
                OutputName::Format(f) => f.extension().to_string(),
                OutputName::Hgrm(what) => hgrm_suffix(what),
            })
            .collect();
        // If this fails, the planned names stay, and writing them says what is wrong.
        let mut moved = plan.clone();
        if let Ok(dir) = resolve(parent_of(&plan.base)) {
            if let Ok(Some((taken, why))) = moved.move_off_taken(&dir.path, Some(&suffixes)) {
                announce_move(&taken, &why, &moved);
                *stored_plan() = Some(moved.clone());
                plan = moved;
            }
        }
    }
    names
        .iter()
        .map(|n| match (plan.named_target(), n) {
            (Some(target), _) => target,
            (None, OutputName::Format(f)) => plan.target(f.extension()),
            (None, OutputName::Hgrm(what)) => plan.target(&hgrm_suffix(what)),
        })
        .collect()
}

/// Write `contents` to `target` (see the module doc). Returns the path written, which differs from
/// the target's only if its name was taken meanwhile (said on stderr).
pub(crate) fn write(target: &Target, contents: &[u8]) -> io::Result<PathBuf> {
    let mut pending = Pending::begin(target, TempKind::Report)?;
    pending.file().write_all(contents)?;
    pending.finish(target)
}

// ---------------------------------------------------------------------------------------------------
// Writing.

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
    sink: Sink,
}

enum Sink {
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
fn place_elsewhere(
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
    fn alternative(&self, n: u32) -> PathBuf {
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
fn temp_next_to(real: &Path, kind: TempKind) -> io::Result<tempfile::NamedTempFile> {
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
fn probe_directory(real: &Path) -> io::Result<()> {
    temp_next_to(real, TempKind::Report)?.close()
}

// ---------------------------------------------------------------------------------------------------
// What is at a name.

enum Occupant {
    /// A regular file that may be replaced.
    Replaceable,
    /// Anything else; the text says what it is.
    Taken(String),
}

impl Occupant {
    fn taken(self) -> Option<String> {
        match self {
            Occupant::Replaceable => None,
            Occupant::Taken(why) => Some(why),
        }
    }
}

/// Which regular files at a target's name may be replaced.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Replaces {
    /// `file=` named it: any regular file (not a symlink).
    AnyRegular,
    /// A name from a base `file=` gave: a regular file of your own (a previous run's report).
    OwnRegular,
    /// A name from the default base: nothing.
    Nothing,
}

impl Replaces {
    fn for_base(given: bool) -> Replaces {
        if given {
            Replaces::OwnRegular
        } else {
            Replaces::Nothing
        }
    }
}

/// (device, inode) of every file this run put in place: a snapshot's file is replaced by the next
/// snapshot and by the final report, whatever name rule applies.
static CREATED: Mutex<Vec<(u64, u64)>> = Mutex::new(Vec::new());

fn created_by_this_run() -> std::sync::MutexGuard<'static, Vec<(u64, u64)>> {
    crate::sync::lock(&CREATED)
}

/// What is at `path`, without following a symlink there (None: nothing).
fn occupant(path: &Path, replaces: Replaces) -> Option<Occupant> {
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
fn describe(m: &Metadata) -> String {
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

fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// The process's umask, read without changing it (umask(2) would, for every thread at once).
/// If /proc is not there, 077: reports readable by their owner only.
fn umask() -> u32 {
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
fn shared(dir: &Metadata) -> Option<&'static str> {
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
fn may_follow(link: &Path, meta: &Metadata, dir: &Metadata) -> io::Result<()> {
    may_use(link, meta, dir, "followed")
}

/// The same rule for writing into an existing file, FIFO or device in place (the kernel's
/// `protected_fifos` and `protected_regular`): someone else's file in a shared directory may be a
/// trap that reads the report or blocks the exit.
fn may_write_in_place(path: &Path, meta: &Metadata, dir: &Metadata) -> io::Result<()> {
    may_use(path, meta, dir, "written into")
}

fn may_use(path: &Path, meta: &Metadata, dir: &Metadata, verb: &str) -> io::Result<()> {
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

// ---------------------------------------------------------------------------------------------------
// Resolving `file=`.

/// `path` as open(2) would resolve it, with every symlink met on the way checked by [`may_follow`].
struct Resolved {
    /// The path to open: free of symlinks, unless the walk stopped at a link inside /proc.
    path: PathBuf,
    /// A symlink was followed on the way.
    through_link: bool,
    /// The walk stopped at a link inside /proc (`/dev/stderr` → `/proc/self/fd/2`, which may lead
    /// to a pipe): `path` is opened as it is, by the kernel.
    kernel_link: bool,
}

enum Part {
    Root,
    Parent,
    Name(OsString),
}

fn parts_of(path: &Path) -> VecDeque<Part> {
    path.components()
        .filter_map(|c| match c {
            Component::RootDir => Some(Part::Root),
            Component::ParentDir => Some(Part::Parent),
            Component::Normal(name) => Some(Part::Name(name.to_owned())),
            Component::CurDir | Component::Prefix(_) => None,
        })
        .collect()
}

fn join_rest(mut path: PathBuf, rest: VecDeque<Part>) -> PathBuf {
    for part in rest {
        match part {
            Part::Root => path = PathBuf::from("/"),
            Part::Parent => path.push(".."),
            Part::Name(name) => path.push(name),
        }
    }
    path
}

fn resolve(path: &Path) -> io::Result<Resolved> {
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
enum Placement {
    /// By a temporary file renamed to `real` (absent, or a regular file that is no symlink).
    Replace { real: PathBuf },
    /// Into what is at `real`.
    InPlace { real: PathBuf, how: InPlace },
}

#[derive(Clone, Copy, PartialEq)]
enum InPlace {
    /// A regular file behind a symlink: emptied first, like a report file.
    Truncate,
    /// A device, a FIFO, or anything in /dev or /proc (`/dev/stdout` may be the program's log):
    /// appended to, so nothing there is lost.
    Append,
    /// A symlink to nothing: the file it names is created (exclusively).
    Create,
}

fn is_directory_error() -> io::Error {
    io::Error::new(io::ErrorKind::IsADirectory, "it is a directory")
}

/// Decide how `file=` `path` is written, or why it must not be.
fn place_named(path: &Path) -> io::Result<Placement> {
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
fn open_in_place(real: &Path, how: InPlace, check_only: bool) -> io::Result<File> {
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
fn check_named(path: &Path) -> io::Result<()> {
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

// ---------------------------------------------------------------------------------------------------
// For the launcher.

/// For the command line (`nativeacct diff`): write `contents` to exactly `path`, as a `file=` of the
/// agent is written (see the module doc). Returns the path written.
pub fn write_named(path: &Path, contents: &[u8]) -> io::Result<PathBuf> {
    check_named(path)?;
    let target = Target {
        path: path.to_path_buf(),
        rule: Rule::Named,
    };
    write(&target, contents)
}

/// The first of `base`, `base-1`, `base-2`, ... in whose place none of the names `formats` make
/// exists yet (for a default name, which must not replace anything).
pub fn free_default_base(base: &Path, formats: &[Format]) -> io::Result<PathBuf> {
    let options = Options {
        formats: formats.to_vec(),
        ..Options::default()
    };
    let mut plan = Plan::of(&options);
    plan.base = base.to_path_buf();
    plan.base_given = false;
    let dir = resolve(parent_of(base))?.path;
    plan.move_off_taken(&dir, None)?;
    Ok(plan.base())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alternatives_keep_the_base_pattern() {
        let derived = Target {
            path: PathBuf::from("out/run.native.hgrm"),
            rule: Rule::FromBase {
                base: PathBuf::from("out/run"),
                suffix: "native.hgrm".into(),
                replaces: Replaces::OwnRegular,
            },
        };
        assert_eq!(
            derived.alternative(2),
            PathBuf::from("out/run-2.native.hgrm")
        );
        let named = Target {
            path: PathBuf::from("/tmp/r.json"),
            rule: Rule::Named,
        };
        assert_eq!(named.alternative(1), PathBuf::from("/tmp/r-1.json"));
        let bare = Target {
            path: PathBuf::from("report"),
            rule: Rule::Named,
        };
        assert_eq!(bare.alternative(3), PathBuf::from("report-3"));
    }

    #[test]
    fn resolve_follows_own_links_and_stops_at_proc() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("t");
        std::os::unix::fs::symlink(&target, dir.path().join("l")).unwrap();
        let r = resolve(&dir.path().join("l")).unwrap();
        assert!(r.through_link && !r.kernel_link);
        assert_eq!(r.path, std::fs::canonicalize(dir.path()).unwrap().join("t"));
        let r = resolve(Path::new("/dev/stderr")).unwrap();
        assert!(r.kernel_link, "{}", r.path.display());
        assert!(r.path.starts_with("/proc"));
    }

    #[test]
    fn unmoved_names_are_the_options_names() {
        for raw in [
            "file=out/run.json,format=json+csv+hgrm+html",
            "format=text+hlog",
            "file=r.csv,format=csv",
            "file=x.hgrm,format=hgrm",
        ] {
            let options = crate::options::parse(Some(raw)).unwrap();
            let plan = Plan::of(&options);
            for &format in &options.formats {
                let expected = match format {
                    Format::Hgrm => options.hgrm_path("native"),
                    f => options.output_path(f),
                };
                assert_eq!(plan.format_target(format).path, expected, "{raw}");
            }
        }
        let plan = Plan::of(&crate::options::parse(Some("file=out/run,format=json+csv")).unwrap());
        let moved = Plan { moved: 2, ..plan };
        assert_eq!(
            moved.format_target(Format::Csv).path,
            PathBuf::from("out/run-2.csv")
        );
        assert_eq!(moved.describe(), "out/run-2.*");
    }

    /// Another user's link is followed only outside shared directories, or if that user owns the
    /// directory. (Needs root, to hand files to uid 65534.)
    #[test]
    fn others_links_are_followed_only_where_the_kernel_rule_allows() {
        assert_eq!(euid(), 0, "this test runs as root");
        let other = 65534;
        let top = tempfile::tempdir().unwrap();
        std::fs::write(top.path().join("victim"), "x").unwrap();
        for (mode, dir_owner, followed) in [
            (0o755, 0, true),
            (0o1777, other, true),
            (0o1777, 0, false),
            (0o777, 0, false),
            (0o1770, 0, false),
        ] {
            let dir = top.path().join(format!("d{mode:o}-{dir_owner}"));
            std::fs::create_dir(&dir).unwrap();
            std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(mode)).unwrap();
            std::os::unix::fs::chown(&dir, Some(dir_owner), None).unwrap();
            let link = dir.join("link");
            std::os::unix::fs::symlink(top.path().join("victim"), &link).unwrap();
            std::os::unix::fs::lchown(&link, Some(other), None).unwrap();
            let result = resolve(&link);
            assert_eq!(result.is_ok(), followed, "dir {mode:o} of uid {dir_owner}");
            if let Err(e) = result {
                assert_eq!(e.kind(), io::ErrorKind::PermissionDenied);
                assert!(e.to_string().contains("owned by uid 65534"), "{e}");
            }
            // The same link as one of our own: always followed.
            std::os::unix::fs::lchown(&link, Some(0), None).unwrap();
            assert!(resolve(&link).is_ok());
        }
    }

    #[test]
    fn umask_is_read_from_proc() {
        assert!(umask() <= 0o777);
    }
}
