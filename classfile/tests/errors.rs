//! Malformed, truncated, future-version and overflowing input: typed errors, never a panic.

mod common;

use common::*;
use nativeacct_classfile::{has_native_methods, rewrite, Outcome, RewriteConfig, RewriteError};

const SOURCE: &str = "public class Small {\n\
    static native int a(int x);\n\
    native long b(long y, String s) throws java.io.IOException;\n\
    @Deprecated static native void c();\n\
    static int d(int x) { return x > 0 ? x : -x; }\n\
}\n";

fn small_class(test: &str) -> Vec<u8> {
    let dir = scratch(test);
    let classes = javac(&dir, &[("Small.java", SOURCE)], &[]);
    std::fs::read(classes.join("Small.class")).unwrap()
}

fn config() -> RewriteConfig {
    RewriteConfig::for_jdk(17)
}

/// End offset of the constant pool, by a walk written for this test.
fn constant_pool_end(class: &[u8]) -> usize {
    let count = u16::from_be_bytes([class[8], class[9]]);
    let mut pos = 10;
    let mut index = 1;
    while index < count {
        let tag = class[pos];
        let size = match tag {
            1 => 3 + u16::from_be_bytes([class[pos + 1], class[pos + 2]]) as usize,
            7 | 8 | 16 | 19 | 20 => 3,
            15 => 4,
            3 | 4 | 9 | 10 | 11 | 12 | 17 | 18 => 5,
            5 | 6 => 9,
            _ => panic!("tag {tag}"),
        };
        index += if tag == 5 || tag == 6 { 2 } else { 1 };
        pos += size;
    }
    pos
}

/// Appends `extra` distinct Utf8 constants to the pool.
fn pad_pool(class: &[u8], extra: usize) -> Vec<u8> {
    let end = constant_pool_end(class);
    let count = u16::from_be_bytes([class[8], class[9]]) as usize + extra;
    let mut out = class[..8].to_vec();
    out.extend_from_slice(&(count as u16).to_be_bytes());
    out.extend_from_slice(&class[10..end]);
    for k in 0..extra {
        let text = format!("pad{k}");
        out.push(1);
        out.extend_from_slice(&(text.len() as u16).to_be_bytes());
        out.extend_from_slice(text.as_bytes());
    }
    out.extend_from_slice(&class[end..]);
    out
}

fn wrapped_count(outcome: Outcome) -> usize {
    match outcome {
        Outcome::Rewritten { wrapped, .. } => wrapped.len(),
        Outcome::Unchanged { .. } => 0,
    }
}

/// Rewriting `class` must fail with `Malformed`; `what` names the damage in the failure message.
fn assert_malformed(class: &[u8], what: &str) {
    let result = rewrite(class, &config(), &mut |_| 0);
    assert!(
        matches!(result, Err(RewriteError::Malformed(_))),
        "{what}: {result:?}"
    );
}

/// With byte `at` set to `value`, `class` is malformed for the rewrite and an error for the pre-scan.
fn assert_byte_refused(class: &[u8], at: usize, value: u8, what: &str) {
    let mut changed = class.to_vec();
    changed[at] = value;
    assert_malformed(&changed, what);
    assert!(has_native_methods(&changed).is_err(), "{what}: pre-scan");
}

#[test]
fn every_truncation_is_a_typed_error() {
    let class = small_class("errors_truncation");
    assert_eq!(
        wrapped_count(rewrite(&class, &config(), &mut |_| 0).unwrap()),
        3
    );
    for len in 0..class.len() {
        let cut = &class[..len];
        assert_malformed(cut, &format!("truncated to {len}"));
        // The pre-scan may answer before the cut; it must not panic or claim a class it cannot read.
        if let Ok(answer) = has_native_methods(cut) {
            assert!(answer, "a prefix can only be certain that natives exist");
        }
    }
    let mut longer = class.clone();
    longer.push(0);
    assert_malformed(&longer, "one byte too long");
}

#[test]
fn versions_and_magic() {
    let class = small_class("errors_versions");
    for (major, ok) in [
        (44u16, false),
        (45, true),
        (61, true),
        (69, true),
        (70, false),
        (0xffff, false),
    ] {
        let mut c = class.clone();
        c[6..8].copy_from_slice(&major.to_be_bytes());
        let result = rewrite(&c, &config(), &mut |_| 0);
        if ok {
            assert!(result.is_ok(), "version {major}: {result:?}");
        } else {
            assert!(
                matches!(result, Err(RewriteError::UnsupportedVersion(v)) if v == major),
                "{major}"
            );
            assert!(matches!(
                has_native_methods(&c),
                Err(RewriteError::UnsupportedVersion(_))
            ));
        }
    }
    assert_byte_refused(&class, 0, 0xCB, "bad magic");
}

#[test]
fn constant_pool_overflow_is_detected_exactly() {
    let class = small_class("errors_overflow");
    // How many constants does the rewrite append? Measure it on the unpadded class.
    let Outcome::Rewritten { bytes, .. } = rewrite(&class, &config(), &mut |_| 0).unwrap() else {
        panic!("Small must be rewritten")
    };
    let before = u16::from_be_bytes([class[8], class[9]]) as usize;
    let added = u16::from_be_bytes([bytes[8], bytes[9]]) as usize - before;
    assert!(added > 5, "{added}");
    // Pad so the rewrite exactly fits (count 65535), then one more so it cannot.
    let fits = pad_pool(&class, 65535 - added - before);
    let out = rewrite(&fits, &config(), &mut |_| 0).unwrap();
    let Outcome::Rewritten { bytes, .. } = out else {
        panic!()
    };
    assert_eq!(u16::from_be_bytes([bytes[8], bytes[9]]), 65535);
    // A second rewrite of the full pool finds nothing left to wrap.
    match rewrite(&bytes, &config(), &mut |_| 0) {
        Ok(Outcome::Unchanged { .. }) => {}
        other => panic!("second rewrite: {other:?}"),
    }
    check_overflow(&class, added, before);
}

fn check_overflow(class: &[u8], added: usize, before: usize) {
    let too_big = pad_pool(class, 65535 - added - before + 1);
    let result = rewrite(&too_big, &config(), &mut |_| 0);
    assert!(
        matches!(result, Err(RewriteError::ConstantPoolOverflow)),
        "{result:?}"
    );
    // Ids above 32767 need an Integer constant: the same class overflows earlier with such ids.
    let fits = pad_pool(class, 65535 - added - before);
    let result = rewrite(&fits, &config(), &mut |_| 1_000_000);
    assert!(
        matches!(result, Err(RewriteError::ConstantPoolOverflow)),
        "{result:?}"
    );
}

#[test]
fn wrong_constant_kinds_are_malformed() {
    let class = small_class("errors_kinds");
    // this_class pointing at index 1 (a Methodref in javac output) instead of a Class.
    let end = constant_pool_end(&class);
    let mut c = class.clone();
    c[end + 2..end + 4].copy_from_slice(&1u16.to_be_bytes());
    assert_malformed(&c, "this_class is a Methodref");
    // this_class out of range.
    c[end + 2..end + 4].copy_from_slice(&0xfff0u16.to_be_bytes());
    assert_malformed(&c, "this_class out of range");
    // An unknown constant tag.
    assert_byte_refused(&class, 10, 2, "unknown constant tag");
}

#[test]
fn single_byte_corruptions_never_panic() {
    let class = small_class("errors_bytes");
    for at in 0..class.len() {
        for value in [0u8, 1, 0x7f, 0x80, 0xff] {
            let mut c = class.clone();
            c[at] = value;
            let _ = has_native_methods(&c);
            if let Ok(Outcome::Rewritten { bytes, .. }) = rewrite(&c, &config(), &mut |_| 7) {
                // Whatever the rewriter emits, it can read back.
                assert!(has_native_methods(&bytes).is_ok());
                assert!(rewrite(&bytes, &config(), &mut |_| 7).is_ok());
            }
        }
    }
}

#[test]
fn invalid_configuration_is_refused() {
    let class = small_class("errors_config");
    let mut bad_prefix = config();
    bad_prefix.prefix = "a/b".into();
    let mut bad_owner = config();
    bad_owner.helper.owner = "java.lang.Object".into();
    let mut bad_begin = config();
    bad_begin.helper.begin = "".into();
    for c in [bad_prefix, bad_owner, bad_begin] {
        let result = rewrite(&class, &c, &mut |_| 0);
        assert!(
            matches!(result, Err(RewriteError::InvalidConfig(_))),
            "{result:?}"
        );
    }
}
