//! `nativeacct diff A.json B.json [format=…] [file=…] [top=N]`: compare two saved JSON reports.

use crate::fail;
use crate::report::load;
use nativeacct::launcher::report::diff::{self, Diff};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Compare two saved JSON reports: per-method and per-JNI-function changes, the split side by side
#[derive(clap::Args, Debug)]
#[command(after_help = "Output options:
  format=F[+F...]  text (default), html (with a differential flame graph), csv
  file=PATH        one format: that file; several: PATH.<ext>. Without it, text goes to stdout
                   and html/csv to B-diff.<ext> next to B
  top=N            rows per table (default 20)

Examples:
  nativeacct diff before.json after.json                 prints the table of changes
  nativeacct diff before.json after.json format=html     writes after-diff.html")]
pub(crate) struct DiffArgs {
    /// The earlier run's JSON report (A)
    before: PathBuf,
    /// The later run's JSON report (B)
    after: PathBuf,
    /// Output options: format=, file=, top=
    #[arg(value_name = "OPTION")]
    options: Vec<String>,
}

#[derive(Clone, Copy, PartialEq)]
enum DiffFormat {
    Text,
    Csv,
    Html,
}

impl DiffFormat {
    fn extension(self) -> &'static str {
        match self {
            DiffFormat::Text => "txt",
            DiffFormat::Csv => "csv",
            DiffFormat::Html => "html",
        }
    }
}

struct Wanted {
    formats: Vec<DiffFormat>,
    file: Option<PathBuf>,
    top: usize,
}

fn parse(words: &[String]) -> Result<Wanted, String> {
    let mut wanted = Wanted {
        formats: Vec::new(),
        file: None,
        top: nativeacct::launcher::options::DEFAULT_TOP,
    };
    for word in words
        .iter()
        .flat_map(|w| w.split(','))
        .filter(|w| !w.is_empty())
    {
        match word.split_once('=') {
            Some(("format", list)) => {
                for name in list.split('+') {
                    let format = match name {
                        "text" => DiffFormat::Text,
                        "csv" => DiffFormat::Csv,
                        "html" => DiffFormat::Html,
                        _ => {
                            return Err(format!(
                                "format={name}: expected text, csv or html (several joined by +)"
                            ))
                        }
                    };
                    if !wanted.formats.contains(&format) {
                        wanted.formats.push(format);
                    }
                }
            }
            Some(("file", path)) if !path.is_empty() => wanted.file = Some(PathBuf::from(path)),
            Some(("top", n)) => {
                wanted.top = n
                    .parse()
                    .ok()
                    .filter(|&n| n > 0)
                    .ok_or_else(|| format!("top={n}: expected a positive number"))?
            }
            _ => {
                return Err(format!(
                    "unknown option '{word}'; valid options: format=, file=, top="
                ))
            }
        }
    }
    if wanted.formats.is_empty() {
        wanted.formats.push(DiffFormat::Text);
    }
    Ok(wanted)
}

/// Where one format goes: None for stdout.
fn destination(wanted: &Wanted, format: DiffFormat, after: &Path) -> Option<PathBuf> {
    let with_ext = |base: &Path| {
        let mut name = base.as_os_str().to_owned();
        name.push(format!(".{}", format.extension()));
        PathBuf::from(name)
    };
    match (&wanted.file, wanted.formats.len()) {
        (Some(file), 1) if file.as_os_str() == "-" => None,
        (Some(file), 1) => Some(file.clone()),
        (Some(base), _) => Some(with_ext(base)),
        (None, _) if format == DiffFormat::Text => None,
        (None, _) => {
            let stem = after.with_extension("");
            let mut base = stem.into_os_string();
            base.push("-diff");
            Some(with_ext(Path::new(&base)))
        }
    }
}

pub(crate) fn main(args: DiffArgs) -> ExitCode {
    let wanted = match parse(&args.options) {
        Ok(w) => w,
        Err(message) => return fail(&message),
    };
    let (before, after) = match (load(&args.before), load(&args.after)) {
        (Ok(b), Ok(a)) => (b, a),
        (Err(message), _) | (_, Err(message)) => return fail(&message),
    };
    let names = (
        args.before.display().to_string(),
        args.after.display().to_string(),
    );
    let d = Diff::new(&before, &after, names, wanted.top);
    let mut status = ExitCode::SUCCESS;
    for &format in &wanted.formats {
        let body = match format {
            DiffFormat::Text => diff::text(&d),
            DiffFormat::Csv => diff::csv(&d),
            DiffFormat::Html => nativeacct::launcher::report::diff_html::render(&d),
        };
        match destination(&wanted, format, &args.after) {
            None => {
                if let Err(e) = std::io::stdout().lock().write_all(body.as_bytes()) {
                    return fail(&format!("cannot write to stdout: {e}"));
                }
            }
            Some(path) => {
                match nativeacct::launcher::outputs::write_named(&path, body.as_bytes()) {
                    Ok(written) => eprintln!("nativeacct: wrote {}", written.display()),
                    Err(e) => {
                        eprintln!("nativeacct: cannot write {}: {e}", path.display());
                        status = ExitCode::FAILURE;
                    }
                }
            }
        }
    }
    status
}
