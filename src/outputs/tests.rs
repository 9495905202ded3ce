//! Tests of the output names, the moves to a free base, and the symlink rules.

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
