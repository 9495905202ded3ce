//! `nativeacct report FILE.json [format=…] [file=…] [top=N]`: render a JSON report the agent saved
//! into any format it writes at VM death, byte for byte what the agent would have written.

use crate::fail;
use nativeacct::launcher::options::{self, Format, Options};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Render a saved JSON report into other formats (default: HTML next to it)
#[derive(clap::Args, Debug)]
#[command(after_help = "Output options (as the agent's):
  format=F[+F...]  text, json, csv, hgrm, collapsed, html (default html)
  file=PATH        one format: that file; several: PATH.<ext> (default: the input without .json);
                   file=- writes one format to stdout
  top=N            rows of the ranked tables and .hgrm files per method (default: as in the run)

Examples:
  nativeacct report run.json                         writes run.html
  nativeacct report run.json format=csv+collapsed    writes run.csv and run.collapsed
  nativeacct report run.json format=text file=-      prints the summary")]
pub(crate) struct ReportArgs {
    /// A JSON report written by the agent (format=json)
    input: PathBuf,
    /// Output options: format=, file=, top=
    #[arg(value_name = "OPTION")]
    options: Vec<String>,
}

pub(crate) fn main(args: ReportArgs) -> ExitCode {
    let mut report = match load(&args.input) {
        Ok(r) => r,
        Err(message) => return fail(&message),
    };
    let wanted = match OutputWords::parse(&args.options, "html") {
        Ok(w) => w,
        Err(message) => return fail(&message),
    };
    if let Some(top) = wanted.top {
        report.top = top;
    }
    if wanted.to_stdout() {
        let [format] = wanted.options.formats.as_slice() else {
            return fail("file=- writes one format: give exactly one format=");
        };
        let Some(body) = nativeacct::launcher::report::render_single(&report, *format) else {
            return fail(&format!(
                "format={} makes several files; give file=BASE",
                format.name()
            ));
        };
        return match std::io::stdout().lock().write_all(&body) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => fail(&format!("cannot write to stdout: {e}")),
        };
    }
    let options = wanted.with_default_base(&args.input);
    let input_real = std::fs::canonicalize(&args.input).ok();
    for &format in &options.formats {
        let out = options.output_path(format);
        let same = std::fs::canonicalize(&out).ok();
        if same.is_some() && same == input_real {
            return fail(&format!(
                "{} is the input; give file= to write elsewhere",
                out.display()
            ));
        }
    }
    match nativeacct::launcher::report::write_saved(&report, &options) {
        Ok(written) => {
            for path in written {
                eprintln!("nativeacct: wrote {}", path.display());
            }
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("nativeacct: {message}");
            ExitCode::FAILURE
        }
    }
}

/// A saved JSON report, read.
pub(crate) fn load(path: &Path) -> Result<nativeacct::launcher::report::Report, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    nativeacct::launcher::report::json::read(&bytes).map_err(|e| format!("{}: {e}", path.display()))
}

/// The output words of `report` and `diff`: `format=`, `file=`, `top=`.
pub(crate) struct OutputWords {
    pub(crate) options: Options,
    pub(crate) top: Option<usize>,
}

impl OutputWords {
    pub(crate) fn parse(words: &[String], default_format: &str) -> Result<OutputWords, String> {
        let words: Vec<&str> = words
            .iter()
            .flat_map(|w| w.split(','))
            .filter(|w| !w.is_empty())
            .collect();
        for word in &words {
            let key = word.split('=').next().unwrap_or("");
            if !matches!(key, "format" | "file" | "top") || !word.contains('=') {
                return Err(format!(
                    "unknown option '{word}'; valid options: format=, file=, top="
                ));
            }
        }
        let mut joined = words.join(",");
        if !words.iter().any(|w| w.starts_with("format=")) {
            joined.push_str(&format!(",format={default_format}"));
        }
        let options = options::parse(Some(joined.trim_start_matches(',')))?;
        if options.formats.contains(&Format::Hlog) {
            return Err("format=hlog is written while the program runs (interval=); a saved report holds the whole run only".to_string());
        }
        let top = words
            .iter()
            .any(|w| w.starts_with("top="))
            .then_some(options.top);
        Ok(OutputWords { options, top })
    }

    pub(crate) fn to_stdout(&self) -> bool {
        self.options.file.as_deref() == Some(Path::new("-"))
    }

    /// The options, with `file=` set from `input` (its path without `.json`) if none was given.
    pub(crate) fn with_default_base(self, input: &Path) -> Options {
        let mut options = self.options;
        if options.file.is_none() {
            let base = if input.extension().is_some_and(|e| e == "json") {
                input.with_extension("")
            } else {
                input.to_path_buf()
            };
            options.file = Some(crate::file_for(base, &options.formats));
        }
        options
    }
}
