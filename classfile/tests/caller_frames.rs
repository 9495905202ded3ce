//! The caller-frame data checked against the class files of the JDK under test: every java.base
//! native the data names for this JDK exists in its java.base, and the rewriter leaves it unwrapped
//! for that reason (or for an earlier hard rule, such as @CallerSensitive).

mod common;

use common::*;
use nativeacct_classfile::policy::inspects_caller_frames;
use nativeacct_classfile::{reason, rewrite, Outcome, RewriteConfig};
use std::collections::BTreeMap;

#[test]
fn caller_frame_natives_of_java_base_exist_and_stay_unwrapped() {
    let base = java_base_dir();
    let feature = jdk_feature();
    let config = RewriteConfig::for_jdk(feature);
    // class.method -> reason, for every native of java.base the data names for this JDK.
    let mut found: BTreeMap<String, String> = BTreeMap::new();
    for path in files_under(&base) {
        if path.extension().is_none_or(|e| e != "class") {
            continue;
        }
        let bytes = std::fs::read(&path).unwrap();
        let (wrapped, skipped) = match rewrite(&bytes, &config, &mut |_| 0) {
            Ok(Outcome::Unchanged { skipped }) => (Vec::new(), skipped),
            Ok(Outcome::Rewritten {
                wrapped, skipped, ..
            }) => (wrapped, skipped),
            Err(e) => panic!("{}: {e}", path.display()),
        };
        for (m, _) in wrapped {
            assert!(
                !inspects_caller_frames(feature, &m.class, &m.name),
                "{}.{} was wrapped",
                m.class,
                m.name
            );
        }
        for s in skipped {
            if inspects_caller_frames(feature, &s.method.class, &s.method.name) {
                found.insert(format!("{}.{}", s.method.class, s.method.name), s.reason);
            }
        }
    }
    let expected: Vec<String> = include_str!("../data/caller-frame-natives.txt")
        .lines()
        .filter_map(|l| {
            let mut words = l.split('#').next()?.split_whitespace();
            let name = words.next()?;
            let jdks: Vec<u32> = words.filter_map(|w| w.parse().ok()).collect();
            // java.* and jdk.internal.* are java.base; JFR, JVMCI and WhiteBox live elsewhere.
            let in_java_base = name.starts_with("java/") || name.starts_with("jdk/internal/");
            (jdks.contains(&feature) && in_java_base).then(|| name.to_string())
        })
        .collect();
    assert!(expected.len() >= 6, "{expected:?}");
    for name in &expected {
        let why = found
            .get(name)
            .unwrap_or_else(|| panic!("JDK {feature}: {name} is not a native of java.base"));
        assert!(
            [
                reason::CALLER_FRAMES,
                reason::CALLER_SENSITIVE,
                reason::FILL_IN_STACK_TRACE
            ]
            .contains(&why.as_str()),
            "{name}: {why}"
        );
    }
    assert_eq!(found.len(), expected.len(), "{found:?}");
}
