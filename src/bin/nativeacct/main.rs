//! The `nativeacct` command: one subcommand per file in this directory.
//!
//! - `run` (run.rs): run `java ...` with the agent; `nativeacct [agent options] -- java ...` is the
//!   same, without the word `run`;
//! - `report` (report.rs): render a saved JSON report into any format, as the agent would have;
//! - `diff` (diff.rs): compare two saved JSON reports;
//! - `dump`, `metrics` and `detach` (control.rs): the report so far, its live metrics, or the final
//!   report, of a running JVM, through the agent's control socket;
//! - `attach` (attach.rs): load the agent into a running JVM (HotSpot dynamic attach);
//! - `completions`: a shell completion script.
//!
//! A new subcommand is a file with its `clap::Args` struct and a `main`, and one line in [`Command`].

mod attach;
mod control;
mod diff;
mod report;
mod run;

use clap::{CommandFactory, Parser, Subcommand};
use nativeacct::launcher::options::Format;
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser, Debug)]
#[command(
    name = "nativeacct",
    version,
    about = "Exact bytecode-vs-native CPU split and JNI crossing counts of a Java program",
    arg_required_else_help = true,
    disable_help_subcommand = true,
    after_help = "Examples:
  nativeacct format=json+html -- java -jar app.jar     run with the agent (same as 'nativeacct run ...')
  nativeacct report run.json format=html+csv           render a saved JSON report again
  nativeacct diff before.json after.json format=html   compare two runs
  nativeacct dump 4242 --reset                         the report so far of a running JVM, new window
  nativeacct metrics 4242                              its live metrics, Prometheus text on stdout
  nativeacct attach 4242                               load the agent into a running JVM
  nativeacct detach 4242 file=final                    its final report; counting stops
  nativeacct completions bash > /etc/bash_completion.d/nativeacct"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    Run(run::RunArgs),
    Report(report::ReportArgs),
    Diff(diff::DiffArgs),
    Dump(control::DumpArgs),
    Metrics(control::MetricsArgs),
    Attach(attach::AttachArgs),
    Detach(control::DetachArgs),
    Completions(CompletionsArgs),
}

/// Print a shell completion script on stdout
#[derive(clap::Args, Debug)]
#[command(after_help = "Example:
  nativeacct completions bash > ~/.local/share/bash-completion/completions/nativeacct")]
struct CompletionsArgs {
    /// The shell: bash, zsh, fish, elvish or powershell
    shell: clap_complete::Shell,
}

/// One line on stderr, exit code 2 (what a usage error gives).
/// `file=` for reports at `base`: with one format that makes one file, that file's full name;
/// otherwise the base itself.
pub(crate) fn file_for(base: PathBuf, formats: &[Format]) -> PathBuf {
    match formats {
        [only] if *only != Format::Hgrm => {
            let mut name = base.into_os_string();
            name.push(".");
            name.push(only.extension());
            PathBuf::from(name)
        }
        _ => base,
    }
}

pub(crate) fn fail(message: &str) -> ExitCode {
    eprintln!("nativeacct: {message}");
    ExitCode::from(2)
}

/// `nativeacct [agent options] -- java ...` is `nativeacct run ...`: `run` is put in front of
/// anything that is not a subcommand or a flag of the command itself.
fn with_run_shortcut(mut args: Vec<OsString>) -> Vec<OsString> {
    let subcommands: Vec<String> = Cli::command()
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .collect();
    let Some(first) = args.get(1).map(|a| a.to_string_lossy().into_owned()) else {
        return args;
    };
    let own_flag = matches!(first.as_str(), "-h" | "--help" | "-V" | "--version");
    if !subcommands.contains(&first) && !own_flag {
        args.insert(1, OsString::from("run"));
    }
    args
}

fn main() -> ExitCode {
    let cli = Cli::parse_from(with_run_shortcut(std::env::args_os().collect()));
    match cli.command {
        Command::Run(args) => run::main(args),
        Command::Report(args) => report::main(args),
        Command::Diff(args) => diff::main(args),
        Command::Dump(args) => control::dump_main(args),
        Command::Metrics(args) => control::metrics_main(args),
        Command::Attach(args) => attach::main(args),
        Command::Detach(args) => control::detach_main(args),
        Command::Completions(args) => {
            let mut command = Cli::command();
            clap_complete::generate(
                args.shell,
                &mut command,
                "nativeacct",
                &mut std::io::stdout(),
            );
            ExitCode::SUCCESS
        }
    }
}
