//! The wrapping policy: hard rules, per-JDK built-in lists, intrinsics, user patterns.

use nativeacct_classfile::policy::{builtin_excludes, glob_match, pattern_matches, BuiltinList};
use nativeacct_classfile::{reason, Decision, NativeFacts, NativeMethodRef, Policy};

fn m(class: &str, name: &str, descriptor: &str) -> NativeMethodRef {
    NativeMethodRef {
        class: class.into(),
        name: name.into(),
        descriptor: descriptor.into(),
    }
}

fn plain() -> NativeFacts {
    NativeFacts {
        access_flags: 0x0108,
        ..NativeFacts::default()
    }
}

fn decide(policy: &Policy, class: &str, name: &str) -> Decision {
    policy.decide(&m(class, name, "()V"), &plain())
}

/// `policy` decides each (class, method, decision) case as given.
fn assert_decisions(policy: &Policy, cases: &[(&str, &str, Decision)]) {
    for &(class, method, expected) in cases {
        assert_eq!(decide(policy, class, method), expected, "{class}.{method}");
    }
}

#[test]
fn hard_rules_hold_on_every_jdk() {
    for jdk in [0, 11, 17, 21, 25, 30] {
        let mut p = Policy::for_jdk(jdk);
        p.wrap_intrinsics = true;
        p.include = vec!["*".into()];
        let varargs = NativeFacts {
            access_flags: 0x0181,
            ..plain()
        };
        for class in [
            "java/lang/invoke/MethodHandle",
            "java/lang/invoke/VarHandle",
        ] {
            assert_eq!(
                p.decide(
                    &m(
                        class,
                        "invokeExact",
                        "([Ljava/lang/Object;)Ljava/lang/Object;"
                    ),
                    &varargs
                ),
                Decision::Skip(reason::SIGNATURE_POLYMORPHIC)
            );
        }
        let sensitive = NativeFacts {
            caller_sensitive: true,
            ..plain()
        };
        assert_eq!(
            p.decide(&m("com/x/Y", "z", "()V"), &sensitive),
            Decision::Skip(reason::CALLER_SENSITIVE)
        );
        for name in ["doYield", "enterSpecial"] {
            assert_eq!(
                decide(&p, "jdk/internal/vm/Continuation", name),
                Decision::Skip(reason::CONTINUATION)
            );
        }
        assert_eq!(
            decide(&p, "com/x/Any", "registerNatives"),
            Decision::Skip(reason::REGISTER_NATIVES)
        );
        for class in [
            "jdk/internal/loader/NativeLibraries",
            "jdk/internal/loader/NativeLibraries$NativeLibraryImpl",
            "jdk/internal/loader/NativeLibrary",
            "jdk/internal/loader/RawNativeLibraries",
            "java/lang/ClassLoader$NativeLibrary",
        ] {
            assert_eq!(
                decide(&p, class, "findEntry0"),
                Decision::Skip(reason::LIBRARY_LOOKUP),
                "{class}"
            );
        }
        assert_eq!(
            decide(&p, "jdk/internal/loader/NativeLibrariesX", "x"),
            Decision::Wrap,
            "only the class and its nested classes"
        );
        assert_eq!(
            decide(&p, "java/lang/Throwable", "fillInStackTrace"),
            Decision::Skip(reason::FILL_IN_STACK_TRACE)
        );
        // A non-varargs native of MethodHandle is not signature-polymorphic.
        assert_eq!(
            decide(&p, "java/lang/invoke/MethodHandle", "other"),
            Decision::Wrap
        );
    }
}

#[test]
fn builtin_lists_follow_the_jdk_version() {
    assert_eq!(BuiltinList::for_jdk(17), BuiltinList::Jdk17);
    assert_eq!(BuiltinList::for_jdk(25), BuiltinList::Jdk25);
    assert_eq!(BuiltinList::for_jdk(21), BuiltinList::Jdk17And25);
    for unknown in [0, 8, 11, 16, 26, 99] {
        assert_eq!(BuiltinList::for_jdk(unknown), BuiltinList::Conservative);
    }
    // Class.forName0 is resolved before VMInit on 17 only; System.identityHashCode on 25 only.
    let forname = ("java/lang/Class", "forName0");
    let identity = ("java/lang/System", "identityHashCode");
    assert!(builtin_excludes(BuiltinList::Jdk17, forname.0, forname.1));
    assert!(!builtin_excludes(BuiltinList::Jdk25, forname.0, forname.1));
    assert!(builtin_excludes(BuiltinList::Jdk25, identity.0, identity.1));
    assert!(!builtin_excludes(
        BuiltinList::Jdk17,
        identity.0,
        identity.1
    ));
    for list in [BuiltinList::Jdk17And25, BuiltinList::Conservative] {
        assert!(builtin_excludes(list, forname.0, forname.1));
        assert!(builtin_excludes(list, identity.0, identity.1));
    }
    assert!(builtin_excludes(
        BuiltinList::Conservative,
        "java/lang/ClassLoader$NativeLibrary",
        "load0"
    ));
    assert!(!builtin_excludes(
        BuiltinList::Jdk17,
        "java/io/FileInputStream",
        "readBytes"
    ));
    assert_eq!(
        decide(&Policy::for_jdk(17), "java/lang/Class", "forName0"),
        Decision::Skip(reason::BUILTIN_LIST)
    );
    assert_eq!(
        decide(&Policy::for_jdk(25), "java/lang/Class", "forName0"),
        Decision::Wrap
    );
}

#[test]
fn every_line_of_the_data_files_is_honoured() {
    let data = [
        (
            BuiltinList::Jdk17,
            include_str!("../data/jdk17-working-exclusions.txt"),
        ),
        (
            BuiltinList::Jdk17,
            include_str!("../data/jdk17-resolved-before-vminit.txt"),
        ),
        (
            BuiltinList::Jdk25,
            include_str!("../data/jdk25-working-exclusions.txt"),
        ),
        (
            BuiltinList::Jdk25,
            include_str!("../data/jdk25-resolved-before-vminit.txt"),
        ),
        (
            BuiltinList::Conservative,
            include_str!("../data/jdk11-extra-exclusions.txt"),
        ),
    ];
    let mut checked = 0;
    for (list, text) in data {
        for line in text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
        {
            let (class, name) = line.split_once('.').expect("class.method");
            let class = class.replace('*', "some/Class");
            let name = name.replace('*', "anyName");
            assert!(
                builtin_excludes(list, &class, &name),
                "{list:?} misses {line}"
            );
            assert!(
                builtin_excludes(BuiltinList::Conservative, &class, &name),
                "conservative misses {line}"
            );
            checked += 1;
        }
    }
    assert!(checked > 200, "{checked}");
}

#[test]
fn intrinsics_are_opt_in() {
    let intrinsic = NativeFacts {
        intrinsic_candidate: true,
        ..plain()
    };
    let method = m("java/lang/Foo", "bar", "()V");
    let mut p = Policy::for_jdk(17);
    assert_eq!(
        p.decide(&method, &intrinsic),
        Decision::Skip(reason::INTRINSIC_CANDIDATE)
    );
    p.wrap_intrinsics = true;
    assert_eq!(p.decide(&method, &intrinsic), Decision::Wrap);
    // The built-in list still wins: Float.intBitsToFloat crashes JDK 17 when wrapped.
    assert_eq!(
        p.decide(&m("java/lang/Float", "intBitsToFloat", "(I)F"), &intrinsic),
        Decision::Skip(reason::BUILTIN_LIST)
    );
}

#[test]
fn intrinsic_annotation_is_kept_only_where_jdk17_matches_the_wrapper() {
    let p17 = Policy::for_jdk(17);
    assert!(p17.keeps_intrinsic_annotation("java/lang/System", "nanoTime"));
    assert!(p17.keeps_intrinsic_annotation("java/lang/Object", "hashCode"));
    assert!(!p17.keeps_intrinsic_annotation("java/lang/Class", "isInstance"));
    for other in [0, 11, 21, 25] {
        assert!(!Policy::for_jdk(other).keeps_intrinsic_annotation("java/lang/System", "nanoTime"));
    }
}

#[test]
fn user_patterns() {
    let mut p = Policy::for_jdk(17);
    p.exclude = vec![
        "java/io/*".into(),
        "com/foo/Bar.baz".into(),
        "*.secret".into(),
    ];
    let excluded = Decision::Skip(reason::USER_EXCLUDE);
    assert_decisions(
        &p,
        &[
            ("java/io/FileInputStream", "readBytes", excluded),
            ("java/io/sub/Deep", "x", excluded),
            ("java/iox/Other", "x", Decision::Wrap),
            ("com/foo/Bar", "baz", excluded),
            ("com/foo/Bar", "bazz", Decision::Wrap),
            ("com/foo/Barr", "baz", Decision::Wrap),
            ("any/Where", "secret", excluded),
        ],
    );

    let mut only = Policy::for_jdk(17);
    only.include = vec!["com/app/*".into(), "java/util/zip/Inflater.inflate*".into()];
    let not_included = Decision::Skip(reason::NOT_INCLUDED);
    assert_decisions(
        &only,
        &[
            ("com/app/Native", "run", Decision::Wrap),
            (
                "java/util/zip/Inflater",
                "inflateBytesBytes",
                Decision::Wrap,
            ),
            ("java/util/zip/Inflater", "end", not_included),
            ("java/lang/Thread", "yield0", not_included),
        ],
    );
    // Includes cannot re-enable what protects the VM; excludes beat includes.
    only.include.push("java/lang/Class.forName0".into());
    assert_eq!(
        decide(&only, "java/lang/Class", "forName0"),
        Decision::Skip(reason::BUILTIN_LIST)
    );
    only.exclude.push("com/app/Native.run".into());
    assert_eq!(
        decide(&only, "com/app/Native", "run"),
        Decision::Skip(reason::USER_EXCLUDE)
    );

    // Name plus descriptor.
    let read_int = m("com/x/Io", "read", "(I)I");
    let read_arr = m("com/x/Io", "read", "([B)I");
    assert!(pattern_matches("com/x/Io.read(I)I", &read_int));
    assert!(!pattern_matches("com/x/Io.read(I)I", &read_arr));
    assert!(pattern_matches("com/x/Io.read(*", &read_arr));
}

#[test]
fn globs() {
    assert!(glob_match(b"*", b""));
    assert!(glob_match(b"*", b"anything/at/all"));
    assert!(glob_match(b"a*c", b"abbbc"));
    assert!(glob_match(b"a*b*c", b"aXbYbZc"));
    assert!(!glob_match(b"a*c", b"abcd"));
    assert!(glob_match(b"**x", b"x"));
    assert!(!glob_match(b"", b"x"));
    assert!(glob_match(b"java/io/*", b"java/io/"));
    assert!(!glob_match(b"java/io/*", b"java/io"));
}

#[test]
fn caller_frame_natives_follow_the_jdk_version() {
    use nativeacct_classfile::policy::inspects_caller_frames;
    let class_context = ("java/lang/SecurityManager", "getClassContext");
    let scoped = ("java/lang/Thread", "findScopedValueBindings");
    for jdk in [11, 17, 21] {
        assert_eq!(
            decide(&Policy::for_jdk(jdk), class_context.0, class_context.1),
            Decision::Skip(reason::CALLER_FRAMES),
            "JDK {jdk}"
        );
    }
    // JDK 25's getClassContext is plain Java (a StackWalker); the name alone no longer matches.
    assert!(!inspects_caller_frames(
        25,
        class_context.0,
        class_context.1
    ));
    assert!(!inspects_caller_frames(17, scoped.0, scoped.1));
    assert!(inspects_caller_frames(25, scoped.0, scoped.1));
    // Versions the data does not cover get every line.
    for unknown in [0, 18, 22, 26] {
        assert!(inspects_caller_frames(
            unknown,
            class_context.0,
            class_context.1
        ));
        assert!(inspects_caller_frames(unknown, scoped.0, scoped.1));
    }
    // User includes cannot re-enable them; the earlier hard rules keep their own reasons.
    let mut p = Policy::for_jdk(17);
    p.include = vec!["*".into()];
    p.wrap_intrinsics = true;
    assert_decisions(
        &p,
        &[
            (
                "jdk/internal/misc/VM",
                "latestUserDefinedLoader0",
                Decision::Skip(reason::CALLER_FRAMES),
            ),
            (
                "java/lang/Throwable",
                "fillInStackTrace",
                Decision::Skip(reason::FILL_IN_STACK_TRACE),
            ),
            ("java/lang/Thread", "start1", Decision::Wrap),
        ],
    );
}

#[test]
fn every_line_of_the_caller_frame_data_is_honoured() {
    use nativeacct_classfile::policy::inspects_caller_frames;
    let mut checked = 0;
    for line in include_str!("../data/caller-frame-natives.txt").lines() {
        let line = line.split('#').next().unwrap().trim();
        if line.is_empty() {
            continue;
        }
        let mut words = line.split_whitespace();
        let (class, name) = words.next().unwrap().split_once('.').expect("class.method");
        let jdks: Vec<u32> = words.map(|w| w.parse().expect("a JDK feature")).collect();
        assert!(!jdks.is_empty(), "{line}: no JDK version");
        for jdk in [11, 17, 21, 25] {
            assert_eq!(
                inspects_caller_frames(jdk, class, name),
                jdks.contains(&jdk),
                "{line} on {jdk}"
            );
        }
        assert!(inspects_caller_frames(0, class, name), "{line}");
        checked += 1;
    }
    assert!(checked >= 20, "{checked}");
}

#[test]
fn jna_direct_mapping_classes_keep_their_natives() {
    let jna = NativeFacts {
        jna_direct_mapping: true,
        ..plain()
    };
    let mut p = Policy::for_jdk(17);
    p.include = vec!["*".into()];
    assert_eq!(
        p.decide(&m("com/app/Direct", "labs", "(J)J"), &jna),
        Decision::Skip(reason::JNA_DIRECT_MAPPING)
    );
    assert_eq!(decide(&p, "com/app/Direct", "labs"), Decision::Wrap);
}
