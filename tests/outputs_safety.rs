//! Another user must not be able to turn the agent's file writing against the host (issue 18). The
//! tests run as root, and the other user is `nobody`: it plants symlinks, with `runuser`, at every
//! name the agent creates or once created (temporary, partial, default and derived names), in a
//! world-writable sticky directory like /tmp, pointing at victim files owned by root and by nobody.
//! Every run must leave the victims byte for byte as they were, and either write its report (checked
//! against the workload's known counts) or stop at start-up with one clear line.
//!
//! Names with the JVM's pid are planted in two ways: for names the agent decides at start-up, before
//! the JVM starts, for a range of pids not yet used (the test then checks that the JVM got one of
//! them); for names used at exit, by the Java program itself (`tests/outputs/Planter.java`) as soon as
//! it runs, with its own pid.
//!
//! The machine should not protect symlinks itself (`fs.protected_symlinks=0`, as in many containers and
//! on the project's machines); where it does, the kernel guards the victims too, and the tests still
//! check the agent's own decisions (its lines and the names it writes).

#[path = "agent/support.rs"]
mod support;

use serde_json::Value;
use std::collections::BTreeSet;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use support::*;

const NOBODY: u32 = 65534;
/// Pids planted ahead of a JVM: more than the test itself and anything else on the machine start
/// between the planting and the JVM.
const PID_RANGE: u64 = 1500;

/// The Planter class and the pid-range planter, built once.
fn tools() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    fixture(&BUILT, "planter", |dir| {
        let src = repo_root().join("tests/outputs");
        javac(&[src.join("Planter.java")], dir);
        let status = Command::new("gcc")
            .args(["-O2", "-Wall", "-Werror", "-o"])
            .arg(dir.join("plant"))
            .arg(src.join("plant.c"))
            .status()
            .expect("run gcc");
        assert!(status.success(), "gcc failed for plant.c");
    })
}

fn check_machine() {
    // SAFETY: geteuid has no preconditions.
    assert_eq!(unsafe { libc::geteuid() }, 0, "these tests run as root");
    let value = std::fs::read_to_string("/proc/sys/fs/protected_symlinks").unwrap_or_default();
    if value.trim() != "0" {
        // The agent's own lines and names are still checked; the victims would be kept by the kernel too.
        eprintln!(
            "note: fs.protected_symlinks={}: the kernel guards the victims as well",
            value.trim()
        );
    }
}

/// A file another user's link points at, and what it held.
struct Victim {
    path: PathBuf,
    bytes: Vec<u8>,
    inode: u64,
}

impl Victim {
    fn new(path: PathBuf, owner: u32, text: &str) -> Victim {
        let bytes = text.repeat(200).into_bytes();
        std::fs::write(&path, &bytes).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        std::os::unix::fs::chown(&path, Some(owner), Some(owner)).unwrap();
        let inode = std::fs::metadata(&path).unwrap().ino();
        Victim { path, bytes, inode }
    }

    fn assert_unchanged(&self) {
        let meta = std::fs::symlink_metadata(&self.path).unwrap();
        assert!(
            meta.is_file(),
            "{} is no longer a file",
            self.path.display()
        );
        assert_eq!(
            meta.ino(),
            self.inode,
            "{} was replaced",
            self.path.display()
        );
        assert!(
            std::fs::read(&self.path).unwrap() == self.bytes,
            "{} was changed",
            self.path.display()
        );
    }
}

/// A world-writable sticky directory (like /tmp) for one test, and the two victims: one owned by root
/// in a private directory, one owned by nobody in the shared directory.
struct Scene {
    shared: PathBuf,
    root_victim: Victim,
    nobody_victim: Victim,
}

impl Scene {
    fn new(name: &str) -> Scene {
        check_machine();
        let top = PathBuf::from(format!(
            "/tmp/nativeacct-tests/{name}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&top);
        let shared = top.join("shared");
        let private = top.join("private");
        std::fs::create_dir_all(&shared).unwrap();
        std::fs::create_dir_all(&private).unwrap();
        std::fs::set_permissions(
            top.parent().unwrap(),
            std::fs::Permissions::from_mode(0o755),
        )
        .unwrap();
        std::fs::set_permissions(&top, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777)).unwrap();
        std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o700)).unwrap();
        Scene {
            root_victim: Victim::new(private.join("root-victim"), 0, "root's data, keep out\n"),
            nobody_victim: Victim::new(shared.join("nobody-victim"), NOBODY, "nobody's own data\n"),
            shared,
        }
    }

    /// The victims in turn: the i-th planted link points at this one.
    fn victim(&self, i: usize) -> &Path {
        if i.is_multiple_of(2) {
            &self.root_victim.path
        } else {
            &self.nobody_victim.path
        }
    }

    fn assert_victims_unchanged(&self) {
        self.root_victim.assert_unchanged();
        self.nobody_victim.assert_unchanged();
    }

    fn plant(&self, name: &str, target: &Path) {
        let status = Command::new("runuser")
            .args(["-u", "nobody", "--", "ln", "-s"])
            .arg(target)
            .arg(self.shared.join(name))
            .status()
            .expect("run runuser");
        assert!(status.success(), "planting {name} as nobody failed");
    }

    /// A plan for the Planter: a link at each name (`{pid}` is the JVM's), at the victims in turn.
    fn plan(&self, names: &[String]) -> PathBuf {
        let text: String = names
            .iter()
            .enumerate()
            .map(|(i, name)| {
                format!(
                    "link\t{}\t{}\n",
                    self.shared.join(name).display(),
                    self.victim(i).display()
                )
            })
            .collect();
        let path = self.shared.parent().unwrap().join("plan.txt");
        std::fs::write(&path, text).unwrap();
        path
    }

    fn listing_path(&self) -> PathBuf {
        self.shared.parent().unwrap().join("listing.txt")
    }

    /// (name, permissions, owner) of what was in the shared directory, links aside, when the program
    /// started: what the agent had created by then.
    fn listing(&self) -> Vec<(String, String, String)> {
        std::fs::read_to_string(self.listing_path())
            .unwrap()
            .lines()
            .map(|l| {
                let f: Vec<&str> = l.split('\t').collect();
                (f[0].to_string(), f[1].to_string(), f[2].to_string())
            })
            .collect()
    }

    fn assert_link_kept(&self, name: &str) {
        let meta = std::fs::symlink_metadata(self.shared.join(name)).unwrap();
        assert!(
            meta.file_type().is_symlink() && meta.uid() == NOBODY,
            "{name} is no longer nobody's link"
        );
    }

    /// A JVM with the agent (`options`), in the shared directory, running the Planter around the
    /// workload (`Workload 1 1`). `plan`: links to plant at start; `umask`: the JVM's umask.
    fn java(&self, options: &str, plan: Option<&Path>, umask: &str) -> Command {
        let classpath = format!("{}:{}", workload().display(), tools().display());
        let mut cmd = Command::new("sh");
        cmd.args(["-c", &format!("umask {umask} && exec \"$@\""), "sh"])
            .arg(java_home().join("bin/java"))
            .arg(format!("-agentpath:{}={options}", agent_path().display()))
            .arg(format!("-Djava.library.path={}", workload().display()))
            .arg(format!("-Dlisting={}", self.listing_path().display()))
            .arg(format!("-Ddir={}", self.shared.display()));
        if let Some(plan) = plan {
            cmd.arg(format!("-Dplant={}", plan.display()));
        }
        cmd.args(["-cp", &classpath, "Planter", "Workload", "1", "1"])
            .current_dir(&self.shared);
        cmd
    }

    /// [`Scene::java`] run to its end, nothing planted, under umask 022.
    fn run(&self, options: &str) -> Output {
        self.java(options, None, "022").output().unwrap()
    }

    fn cleanup(&self) {
        let _ = std::fs::remove_dir_all(self.shared.parent().unwrap());
    }
}

/// `quiet,file=<file>`.
fn quiet_file(file: &Path) -> String {
    format!("quiet,file={}", file.display())
}

fn ran(out: &Output) -> String {
    test_support::described(out)
}

/// The JVM's pid, as the Planter printed it.
fn pid_of(out: &Output) -> u64 {
    text(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("pid "))
        .and_then(|p| p.trim().parse().ok())
        .unwrap_or_else(|| panic!("no pid printed\n{}", ran(out)))
}

fn assert_ran_fully(out: &Output) {
    assert!(out.status.success(), "{}", ran(out));
    assert!(text(&out.stdout).contains("done"), "{}", ran(out));
}

/// Asserts that the run said, in one line, that `<stem>.txt` was taken and that it wrote
/// `<stem>-1.*` instead; returns its stderr.
fn assert_moved_to_next_base(out: &Output, stem: &str) -> String {
    let stderr = text(&out.stderr);
    let moved: Vec<&str> = stderr.lines().filter(|l| l.contains("is taken")).collect();
    assert_eq!(
        moved,
        [format!(
            "nativeacct: {stem}.txt is taken (a symlink owned by uid {NOBODY}, not created by this run); writing {stem}-1.* instead"
        )],
        "{stderr}"
    );
    stderr
}

/// The JSON report at `path` holds the workload's known count.
fn assert_report(path: &Path) {
    let json = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("no report at {}: {e}", path.display()));
    let report: Value = serde_json::from_str(&json).expect("valid JSON");
    assert_eq!(native_calls(&report, "Workload", "nest"), 60);
    assert_eq!(native_calls(&report, "Workload", "throwFromNative"), 7);
}

fn read_pid(name: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/sys/kernel/{name}"))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

/// Plant, as nobody and before the JVM starts, links at `templates` (`{pid}` in each) for the next
/// `PID_RANGE` pids, then run `cmd`. Retries until the JVM's pid was one of them; returns its output
/// and pid.
/// `also` is called with the planted pids before the JVM starts.
fn run_with_pids_planted(
    scene: &Scene,
    templates: &[&str],
    mut cmd: Command,
    also: &dyn Fn(&[u64]),
) -> (Output, u64) {
    for attempt in 0..4 {
        if attempt > 0 {
            // A fresh start: the last attempt's reports and links would otherwise show up in the
            // listing the program takes at its start, and move this run's names.
            for entry in std::fs::read_dir(&scene.shared).unwrap() {
                let entry = entry.unwrap();
                if entry.file_name() != "nobody-victim" {
                    std::fs::remove_file(entry.path()).unwrap();
                }
            }
        }
        let pid_max = read_pid("pid_max");
        let from = read_pid("ns_last_pid") + 1;
        let planted: Vec<u64> = (0..PID_RANGE)
            .map(|i| from + i)
            .map(|p| if p >= pid_max { p - pid_max + 300 } else { p })
            .collect();
        also(&planted);
        let mut plant = Command::new("runuser");
        plant
            .args(["-u", "nobody", "--"])
            .arg(tools().join("plant"))
            .args([from, PID_RANGE, pid_max].map(|n| n.to_string()));
        for (i, template) in templates.iter().enumerate() {
            plant.arg(scene.shared.join(template)).arg(scene.victim(i));
        }
        assert!(plant.status().unwrap().success(), "plant failed");
        // Other processes take pids while the planting runs (builds, parallel tests): wind the
        // pid counter back to where the range starts, so the JVM's fork lands in it. Fork skips
        // the pids still in use. Root only; without it, the retries below remain.
        let _ = std::fs::write("/proc/sys/kernel/ns_last_pid", (from - 1).to_string());
        let child = cmd.stdout(std::process::Stdio::piped());
        let child = child.stderr(std::process::Stdio::piped()).spawn().unwrap();
        let pid = child.id() as u64;
        let out = child.wait_with_output().unwrap();
        if planted.contains(&pid) {
            assert_eq!(pid_of(&out), pid, "the JVM's pid is the child's");
            return (out, pid);
        }
        eprintln!("the JVM got pid {pid}, outside the planted range; again");
    }
    panic!("the JVM never got a planted pid");
}

/// The names every format makes from a base (one `.hgrm` file stands for all).
const SUFFIXES: [&str; 8] = [
    "txt",
    "json",
    "csv",
    "native.hgrm",
    "jni.hgrm",
    "hlog",
    "collapsed",
    "html",
];
const ALL_FORMATS: &str = "format=text+json+csv+hgrm+hlog+collapsed+html";

/// The first case: `file=` with links planted before start-up at the old temporary name
/// `<file>.tmp-<pid>`. The start-up check creates nothing at a guessable name, so the victim stays
/// and the report is written; while the program runs, nothing the agent made is in the directory.
#[test]
fn old_temporary_names_planted_before_start_up_are_ignored() {
    let scene = Scene::new("startup-check");
    let file = scene.shared.join("report.json");
    let cmd = scene.java(&quiet_file(&file), None, "022");
    let (out, pid) = run_with_pids_planted(&scene, &["report.json.tmp-{pid}"], cmd, &|_| {});
    assert_ran_fully(&out);
    assert_report(&file);
    scene.assert_victims_unchanged();
    scene.assert_link_kept(&format!("report.json.tmp-{pid}"));
    // Links aside, only nobody's victim was there while the program ran.
    assert_eq!(
        scene.listing(),
        [(
            "nobody-victim".to_string(),
            "rw-------".to_string(),
            "nobody".to_string()
        )]
    );
    scene.cleanup();
}

/// Every format at once, from a base `file=` gives, with interval snapshots: links at every old
/// temporary and partial name (`<name>.tmp-<pid>`, `BASE.hlog.partial-<pid>`) before start-up are
/// ignored; the partial log in use has an unpredictable name and mode 0600.
#[test]
fn multi_format_run_ignores_old_temporary_and_partial_names() {
    let scene = Scene::new("multi-temp");
    let base = scene.shared.join("run");
    let mut templates: Vec<String> = SUFFIXES
        .iter()
        .map(|s| format!("run.{s}.tmp-{{pid}}"))
        .collect();
    templates.push("run.hlog.partial-{pid}".to_string());
    let templates: Vec<&str> = templates.iter().map(String::as_str).collect();
    let cmd = scene.java(
        &format!("quiet,file={},{ALL_FORMATS},interval=50ms", base.display()),
        None,
        "022",
    );
    let (out, pid) = run_with_pids_planted(&scene, &templates, cmd, &|_| {});
    assert_ran_fully(&out);
    assert_report(&scene.shared.join("run.json"));
    for suffix in SUFFIXES {
        let path = scene.shared.join(format!("run.{suffix}"));
        let meta = std::fs::symlink_metadata(&path).unwrap();
        assert!(meta.is_file() && meta.len() > 0, "{}", path.display());
    }
    scene.assert_victims_unchanged();
    scene.assert_link_kept(&format!("run.hlog.partial-{pid}"));
    scene.assert_link_kept(&format!("run.json.tmp-{pid}"));
    // While the program ran: the partial log (random name, 0600, root's) besides nobody's victim.
    let listing = scene.listing();
    assert_eq!(listing.len(), 2, "{listing:?}");
    let (partial, mode, owner) = &listing[1];
    assert_eq!(listing[0].0, "nobody-victim");
    let random = partial
        .strip_prefix("run.hlog.partial-")
        .unwrap_or_else(|| panic!("{partial}"));
    assert!(
        random.len() == 10 && random.chars().all(|c| c.is_ascii_alphanumeric()),
        "{partial}"
    );
    assert_ne!(random, pid.to_string());
    assert_eq!((mode.as_str(), owner.as_str()), ("rw-------", "root"));
    // The finished log replaced nothing and left no partial file behind.
    assert!(!scene.shared.join(partial).exists());
    scene.cleanup();
}

/// The second case: links at the default names `nativeacct-<pid>.*` before start-up, and an
/// older report (root's own regular file) at one of them. The run moves to `nativeacct-<pid>-1.*`,
/// says so in one line and in its `wrote` line, and changes none of them.
#[test]
fn taken_default_names_move_the_run_to_the_next_free_base() {
    let scene = Scene::new("default-names");
    let mut templates: Vec<String> = SUFFIXES
        .iter()
        .filter(|s| **s != "html")
        .map(|s| format!("nativeacct-{{pid}}.{s}"))
        .collect();
    templates.push("nativeacct-{pid}.hlog.partial-{pid}".to_string());
    let templates: Vec<&str> = templates.iter().map(String::as_str).collect();
    // The older report, for every pid the planting covers (written by root: a file of your own).
    let older = |pid: u64| scene.shared.join(format!("nativeacct-{pid}.html"));
    let write_older = |pids: &[u64]| {
        for &p in pids {
            std::fs::write(older(p), format!("an older report {p}\n")).unwrap();
        }
    };
    let cmd = scene.java(&format!("{ALL_FORMATS},interval=50ms"), None, "022");
    let (out, pid) = run_with_pids_planted(&scene, &templates, cmd, &write_older);
    assert_ran_fully(&out);
    let stderr = assert_moved_to_next_base(&out, &format!("nativeacct-{pid}"));
    let wrote = stderr
        .lines()
        .find(|l| l.starts_with("nativeacct: wrote "))
        .unwrap_or_else(|| panic!("{stderr}"));
    assert!(
        wrote.contains(&format!("nativeacct-{pid}-1.json"))
            && wrote.contains(&format!("nativeacct-{pid}-1.html"))
            && wrote.contains(&format!("nativeacct-{pid}-1.*.hgrm"))
            && !wrote.contains(&format!("nativeacct-{pid}.")),
        "{wrote}"
    );
    assert_report(&scene.shared.join(format!("nativeacct-{pid}-1.json")));
    assert_eq!(
        std::fs::read_to_string(older(pid)).unwrap(),
        format!("an older report {pid}\n")
    );
    for template in &templates {
        scene.assert_link_kept(&template.replace("{pid}", &pid.to_string()));
    }
    scene.assert_victims_unchanged();
    scene.cleanup();
}

/// Links planted while the program runs, at every name the agent is about to write at exit (and at
/// the old guessable temporary names), for a base from `file=` and for the default base: at exit
/// the whole run moves to the next free base, says so, and every victim stays as it was.
#[test]
fn names_taken_during_the_run_move_every_format_at_exit() {
    for default_base in [false, true] {
        let scene = Scene::new(if default_base {
            "during-default"
        } else {
            "during-given"
        });
        let stem = if default_base {
            "nativeacct-{pid}".to_string()
        } else {
            "run".to_string()
        };
        let mut names: Vec<String> = SUFFIXES.iter().map(|s| format!("{stem}.{s}")).collect();
        names.extend(SUFFIXES.iter().map(|s| format!("{stem}.{s}.tmp-{{pid}}")));
        names.push(format!("{stem}.hlog.partial-{{pid}}"));
        let plan = scene.plan(&names);
        let options = if default_base {
            format!("{ALL_FORMATS},interval=50ms")
        } else {
            format!(
                "file={},{ALL_FORMATS},interval=50ms",
                scene.shared.join("run").display()
            )
        };
        let out = scene.java(&options, Some(&plan), "022").output().unwrap();
        assert_ran_fully(&out);
        let pid = pid_of(&out).to_string();
        let stem = if default_base {
            format!("nativeacct-{pid}")
        } else {
            scene.shared.join("run").display().to_string()
        };
        assert_moved_to_next_base(&out, &stem);
        let moved_base = if default_base {
            scene.shared.join(format!("{stem}-1"))
        } else {
            PathBuf::from(format!("{stem}-1"))
        };
        assert_report(&PathBuf::from(format!("{}.json", moved_base.display())));
        let hgrm: BTreeSet<String> = std::fs::read_dir(&scene.shared)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".hgrm") && !n.contains(".tmp-"))
            .filter(|n| {
                std::fs::symlink_metadata(scene.shared.join(n))
                    .unwrap()
                    .is_file()
            })
            .collect();
        let moved_name = moved_base
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        assert!(hgrm.len() > 2, "{hgrm:?}");
        assert!(
            hgrm.iter()
                .all(|n| n.starts_with(&format!("{moved_name}."))),
            "every .hgrm file moved with the base: {hgrm:?}"
        );
        for suffix in SUFFIXES {
            let path = PathBuf::from(format!("{}.{suffix}", moved_base.display()));
            assert!(std::fs::symlink_metadata(&path).unwrap().is_file());
        }
        for name in &names {
            scene.assert_link_kept(&name.replace("{pid}", &pid));
        }
        scene.assert_victims_unchanged();
        scene.cleanup();
    }
}

/// `file=` that is a symlink: followed only if it is safe. nobody's link in the sticky directory is
/// refused at start-up with one line saying why (for a victim of root's and of nobody's), as is
/// nobody's FIFO there; root's own link in the same directory is followed.
#[test]
fn named_file_links_are_followed_only_when_safe() {
    let scene = Scene::new("named-links");
    for (i, name) in ["to-root.json", "to-nobody.json"].iter().enumerate() {
        scene.plant(name, scene.victim(i));
        let file = scene.shared.join(name);
        let out = scene.run(&quiet_file(&file));
        assert!(!out.status.success(), "{}", ran(&out));
        let stderr = text(&out.stderr);
        let errors: Vec<&str> = stderr
            .lines()
            .filter(|l| l.starts_with("nativeacct:"))
            .collect();
        assert_eq!(
            errors,
            [format!(
                "nativeacct: error: cannot write file={f}: {f} is a symlink owned by uid {NOBODY} in a world-writable, sticky directory; there, it is followed only if it belongs to you (uid 0) or to the directory's owner (uid 0)",
                f = file.display()
            )],
            "{stderr}"
        );
        // (HotSpot itself reports the failed start on stdout; the agent writes nothing there.)
        assert!(!text(&out.stdout).contains("nativeacct:"), "{}", ran(&out));
        scene.assert_victims_unchanged();
    }

    // nobody's FIFO: writing into it would hand the report to nobody (and wait for its reader).
    let fifo = scene.shared.join("trap.json");
    let status = Command::new("runuser")
        .args(["-u", "nobody", "--", "mkfifo"])
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(status.success());
    let out = scene.run(&quiet_file(&fifo));
    assert!(!out.status.success(), "{}", ran(&out));
    assert!(
        text(&out.stderr).contains(&format!(
            "nativeacct: error: cannot write file={f}: {f} is a FIFO owned by uid {NOBODY} in a world-writable, sticky directory; there, it is written into only if it belongs to you",
            f = fifo.display()
        )),
        "{}",
        ran(&out)
    );

    // root's own link in the same directory: followed, the file it names holds the report.
    let own_target = scene
        .shared
        .parent()
        .unwrap()
        .join("private/own-report.json");
    let own_link = scene.shared.join("mine.json");
    std::os::unix::fs::symlink(&own_target, &own_link).unwrap();
    let out = scene.run(&quiet_file(&own_link));
    assert_ran_fully(&out);
    assert_report(&own_target);
    assert!(std::fs::symlink_metadata(&own_link)
        .unwrap()
        .file_type()
        .is_symlink());
    scene.assert_victims_unchanged();
    scene.cleanup();
}

/// `file=` that was free at start-up and became nobody's link during the run: the link is left alone
/// and the report goes to the next free name, said in one line. The report gets the JVM's umask.
#[test]
fn named_file_taken_during_the_run_goes_to_the_next_free_name() {
    let scene = Scene::new("named-late");
    let file = scene.shared.join("late.json");
    let plan = scene.plan(&["late.json".to_string()]);
    let out = scene
        .java(&quiet_file(&file), Some(&plan), "027")
        .output()
        .unwrap();
    assert_ran_fully(&out);
    let instead = scene.shared.join("late-1.json");
    assert!(
        text(&out.stderr).contains(&format!(
            "nativeacct: {} was taken during the run (a symlink owned by uid {NOBODY}); left it alone and wrote {} instead",
            file.display(),
            instead.display()
        )),
        "{}",
        ran(&out)
    );
    assert_report(&instead);
    scene.assert_link_kept("late.json");
    scene.assert_victims_unchanged();
    let mode = std::fs::metadata(&instead).unwrap().mode() & 0o777;
    assert_eq!(mode, 0o640, "report mode {mode:o} under umask 027");
    scene.cleanup();
}

/// A rerun with the same `file=` base replaces its own earlier reports (regular files of yours), and
/// what `file=` names as devices is still written in place.
#[test]
fn own_reports_are_replaced_and_devices_written_in_place() {
    let scene = Scene::new("rerun");
    let base = scene.shared.join("again");
    let options = format!("quiet,file={},format=json+csv", base.display());
    let json = scene.shared.join("again.json");
    std::fs::write(&json, "an older report\n").unwrap();
    let out = scene.run(&options);
    assert_ran_fully(&out);
    assert!(!text(&out.stderr).contains("is taken"), "{}", ran(&out));
    assert_report(&json);
    assert_eq!(std::fs::metadata(&json).unwrap().mode() & 0o777, 0o644);
    assert!(!scene.shared.join("again-1.json").exists());

    let out = scene.run("file=/dev/stderr,format=json");
    assert_ran_fully(&out);
    assert!(
        text(&out.stderr).contains("\"tool\": \"nativeacct\""),
        "{}",
        ran(&out)
    );
    let out = scene.run("quiet,file=/dev/null");
    assert_ran_fully(&out);
    assert!(text(&out.stderr).is_empty(), "{}", ran(&out));
    scene.cleanup();
}
