//! The `nativeacct` command line (issue 17): subcommands with `--help` and an example each, shell
//! completion, and `[agent options] -- java ...` as the shortcut of `run`.

#[path = "report/support.rs"]
mod support;

use support::*;

#[test]
fn every_subcommand_has_help_with_an_example() {
    let top = nativeacct_ok(&["--help"]);
    let help = text(&top.stdout);
    for sub in ["run", "report", "diff", "completions"] {
        assert!(help.contains(&format!("  {sub} ")), "{sub} listed: {help}");
        let out = nativeacct_ok(&[sub, "--help"]);
        let sub_help = text(&out.stdout);
        assert!(
            sub_help.contains(&format!("Usage: nativeacct {sub}")),
            "{sub_help}"
        );
        assert!(
            sub_help.contains("Example") && sub_help.contains(&format!("nativeacct {sub} ")),
            "{sub} --help has an example: {sub_help}"
        );
    }
}

#[test]
fn completions_name_the_subcommands() {
    for shell in ["bash", "zsh", "fish"] {
        let out = nativeacct_ok(&["completions", shell]);
        let script = text(&out.stdout);
        for sub in ["run", "report", "diff"] {
            assert!(script.contains(sub), "{shell} completion lacks {sub}");
        }
    }
    // bash accepts the script it is given.
    let out = nativeacct_ok(&["completions", "bash"]);
    let dir = scratch("cli-completions");
    let script = dir.join("nativeacct.bash");
    std::fs::write(&script, &out.stdout).unwrap();
    let check = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!(
            "source {} && complete -p nativeacct",
            script.display()
        ))
        .output()
        .unwrap();
    assert!(check.status.success(), "{}", text(&check.stderr));
    assert!(text(&check.stdout).contains("nativeacct"));
}

#[test]
fn run_and_its_shortcut_are_the_same() {
    let dir = scratch("cli-run");
    for (args, file) in [
        (vec!["run", "quiet,format=json"], "a.json"),
        (vec!["quiet,format=json"], "b.json"),
    ] {
        let path = dir.join(file);
        let mut all = args.clone();
        let file_word = format!("file={}", path.display());
        let java = java_home().join("bin/java");
        all.extend([file_word.as_str(), "--", java.to_str().unwrap(), "-version"]);
        let out = nativeacct_ok(&all);
        assert!(
            text(&out.stderr).contains(&format!("nativeacct: report {}", path.display())),
            "{}",
            text(&out.stderr)
        );
        assert_eq!(read_json(&path)["tool"], "nativeacct");
    }
}
