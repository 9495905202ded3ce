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
//!
//! Files: the plan of names here; `write` (temporary files, renames, in place), `occupant` (what is
//! at a name, and the symlink rules), `resolve` (`file=` resolved as open(2) would).

use crate::options::{file_name_safe, Format, Options};
use std::collections::VecDeque;
use std::ffi::OsString;
use std::fs::{File, Metadata, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};
use std::sync::Mutex;

mod occupant;
mod resolve;
mod write;
use occupant::*;
use resolve::*;
pub(crate) use write::*;

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
mod tests;
