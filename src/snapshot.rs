//! Reports written outside VMDeath: periodic partial snapshots (`snapshot=DURATION`), and the
//! report at process exit when the VM never posted VMDeath.
//!
//! How a HotSpot VM ends decides what the agent can still do (HotSpot 17–25 sources):
//! - the end of `main`, `System.exit` from any thread, an uncaught exception, `Runtime.halt`, and
//!   SIGTERM/SIGINT/SIGHUP (the VM's handlers run the shutdown sequence) all pass through
//!   `before_exit`, which posts VMDeath: the final report is written there;
//! - C `exit()` called by native code skips VMDeath but runs `atexit` handlers: the handler
//!   registered here writes the report then (`written_at: process_exit`);
//! - `-XX:+ExitOnOutOfMemoryError` ends with `os::_exit(3)` inside `report_java_out_of_memory`,
//!   before the JVMTI ResourceExhausted event would be posted and without any exit handler; a
//!   crash, `-XX:+CrashOnOutOfMemoryError`, SIGKILL, and SIGTERM under `-Xrs` give the agent no
//!   chance either. What remains is the last snapshot, if `snapshot=` asked for them.
//!
//! A snapshot is the full report so far, written atomically to the same paths as the final one
//! (except the `.hlog` log, which keeps its own partial file, and paths written in place, such as
//! `/dev/stderr`), with `partial: true` and `snapshot_at_ns`. The final report replaces it. One
//! lock orders the writes, so a snapshot never lands after the final report.

use crate::options::{Format, Options};
use crate::report::{self, Report};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Mutex;

/// Builds the report from the run's numbers (the entry module's, which knows the run).
pub(crate) type Assemble = fn(
    &crate::merge::Totals,
    crate::histograms::Histograms,
    fn() -> Option<crate::stacks::StackData>,
    crate::process::ProcessCpu,
) -> Report;

/// What `start` was given: the options and the report builder.
static RUN: once_cell::sync::OnceCell<(&'static Options, Assemble)> =
    once_cell::sync::OnceCell::new();

/// Held while any report is written.
static WRITING: Mutex<()> = Mutex::new(());
/// Set once the final report (VMDeath or process exit) has been taken.
static FINAL_TAKEN: AtomicBool = AtomicBool::new(false);

fn writing() -> std::sync::MutexGuard<'static, ()> {
    crate::sync::lock(&WRITING)
}

/// Run `write` (build and publish the final report) unless a final report was already taken.
pub(crate) fn write_final(write: impl FnOnce()) {
    let _writing = writing();
    if FINAL_TAKEN.swap(true, Relaxed) {
        return;
    }
    write();
}

/// The summary on stderr (unless `quiet`) and every output file of the final report.
pub(crate) fn publish_final(report: &Report, options: &Options) {
    if !options.quiet {
        let text = report::text::render(report);
        let mut err = std::io::stderr().lock();
        let _ = std::io::Write::write_all(&mut err, text.as_bytes());
    }
    let written = crate::publish::write_outputs(report, options);
    if !options.quiet && !written.is_empty() {
        crate::diag::line(&format!(
            "wrote {}",
            crate::publish::describe_paths(&written)
        ));
    }
}

/// At start-up: register the exit-time writer and, with `snapshot=`, start the snapshot thread.
pub(crate) fn start(options: &'static Options, assemble: Assemble) {
    if RUN.set((options, assemble)).is_err() {
        return;
    }
    // SAFETY: atexit only stores the function pointer; the handler is an `extern "C"` fn of this
    // library, which the VM never unloads, and it catches every panic.
    unsafe { libc::atexit(at_process_exit) };
    if let Some(every) = options.snapshot {
        let spawned = std::thread::Builder::new()
            .name("nativeacct-snapshot".into())
            .spawn(move || {
                crate::process::register_agent_thread();
                loop {
                    std::thread::sleep(every);
                    match std::panic::catch_unwind(take_snapshot) {
                        Ok(true) => {}
                        Ok(false) => return,
                        Err(_) => {
                            crate::diag::line(
                                "internal error in the snapshot writer; no more snapshots",
                            );
                            return;
                        }
                    }
                }
            });
        if let Err(e) = spawned {
            crate::diag::line(&format!("error: no snapshots: {e}"));
        }
    } else if !options.quiet {
        if let Some(flag) = exit_without_vm_death_flag() {
            crate::diag::line(&format!(
                "{flag} ends the VM without VMDeath: no report is written then; snapshot=DURATION keeps the last snapshot"
            ));
        }
    }
}

/// Write one snapshot. False once the final report was taken (the thread then stops).
fn take_snapshot() -> bool {
    let _writing = writing();
    if FINAL_TAKEN.load(Relaxed) {
        return false;
    }
    let Some(&(options, assemble)) = RUN.get() else {
        return true;
    };
    let Some(totals) = crate::merge::snapshot() else {
        return false;
    };
    let histograms = crate::merge::histograms_so_far();
    let process = crate::attach::process_since_attach(crate::process::section_so_far(
        &crate::merge::live_java(),
    ));
    let mut report = assemble(&totals, histograms, || None, process);
    report.partial = true;
    report.snapshot_at_ns = Some(report.run.wall_ns);
    report.written_at = "snapshot".to_string();
    write_snapshot(&report, options);
    true
}

/// Failures of snapshot writes are reported once per run, not once per period.
static SNAPSHOT_ERROR_SHOWN: AtomicBool = AtomicBool::new(false);

fn write_snapshot(report: &Report, options: &Options) {
    use crate::outputs::OutputName;
    let mut files: Vec<(OutputName, Vec<u8>)> = Vec::new();
    for &format in &options.formats {
        match format {
            Format::Hlog => {}
            Format::Hgrm => {
                for (what, body) in report::hgrm::render_all(report) {
                    files.push((OutputName::Hgrm(what), body.into_bytes()));
                }
            }
            single => {
                if let Some(body) = report::render_single(report, single) {
                    files.push((OutputName::Format(single), body));
                }
            }
        }
    }
    let names: Vec<OutputName> = files.iter().map(|(name, _)| name.clone()).collect();
    let targets = crate::outputs::targets_at_exit(options, &names);
    for ((_, body), target) in files.into_iter().zip(targets) {
        // A device or FIFO (`/dev/stderr`, a pipe) gets the final report only.
        if target.written_in_place() {
            continue;
        }
        if let Err(e) = crate::outputs::write(&target, &body) {
            if !SNAPSHOT_ERROR_SHOWN.swap(true, Relaxed) {
                crate::diag::line(&format!(
                    "error: could not write snapshot {}: {e}",
                    target.path.display()
                ));
            }
        }
    }
}

/// The process is exiting (C `exit()` or the end of the launcher). After VMDeath this does
/// nothing; without VMDeath (native code called `exit()`) it writes the final report. The calling
/// thread's context was already merged by its thread-local destructor, which glibc runs first.
extern "C" fn at_process_exit() {
    crate::diag::no_unwind(&crate::diag::PROCESS_EXIT, (), || {
        let Some(&(options, assemble)) = RUN.get() else {
            return;
        };
        write_final(|| {
            crate::context::settle_current();
            let (totals, histograms) = crate::merge::close(|_| None);
            let process = crate::attach::process_since_attach(crate::process::close(
                &crate::merge::live_java(),
            ));
            let mut report = assemble(&totals, histograms, crate::stacks::close, process);
            report.written_at = "process_exit".to_string();
            report.notes.push(
                "written at process exit: the VM posted no VMDeath (C exit() called by native code?); threads still running are charged up to the exit"
                    .into(),
            );
            publish_final(&report, options);
        });
    });
}

/// The VM flag on this command line (or in the JVM option variables) that ends the VM without
/// VMDeath, if any.
fn exit_without_vm_death_flag() -> Option<&'static str> {
    const FLAGS: [&str; 2] = [
        "-XX:+ExitOnOutOfMemoryError",
        "-XX:+CrashOnOutOfMemoryError",
    ];
    let mut words: Vec<String> = std::fs::read("/proc/self/cmdline")
        .unwrap_or_default()
        .split(|&b| b == 0)
        .map(|w| String::from_utf8_lossy(w).into_owned())
        .collect();
    for var in ["JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS", "_JAVA_OPTIONS"] {
        if let Ok(value) = std::env::var(var) {
            words.extend(value.split_whitespace().map(str::to_string));
        }
    }
    // The last mention wins, as on the VM's own command line.
    let mut found = None;
    for word in &words {
        for flag in FLAGS {
            if word == flag {
                found = Some(flag);
            } else if word.strip_prefix("-XX:-") == flag.strip_prefix("-XX:+") {
                found = found.filter(|f| *f != flag);
            }
        }
    }
    found
}
