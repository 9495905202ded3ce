//! Class files on disk, for the programs that run the rewriter over a directory tree (an extracted
//! `java.base`, say): the rewrite benchmark and the mutation fuzzer. The rewriting itself never
//! touches the file system; this module exists only with the `tool` feature.

use std::path::{Path, PathBuf};

/// Every `*.class` file under `dir`, at any depth, sorted by path. Directories that cannot be read
/// are skipped.
pub fn class_files_under(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    collect_class_files(dir, &mut files);
    files.sort();
    files
}

fn collect_class_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect_class_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "class") {
            out.push(path);
        }
    }
}
