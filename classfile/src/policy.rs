//! Which native methods get wrapped, and why the others do not.
//!
//! Order of the checks (the first that applies gives the reason):
//! 1. hard rules that hold on every JDK: signature-polymorphic natives, `@CallerSensitive`,
//!    continuation specials, `registerNatives`, the native-library lookup path,
//!    `Throwable.fillInStackTrace`, classes that bind their natives with JNA's `Native.register`;
//! 2. natives whose VM implementation inspects its caller's frames
//!    (`data/caller-frame-natives.txt`, derived from the OpenJDK sources of each tested JDK:
//!    `data/README.md`): a wrapper would be the frame they find;
//! 3. the built-in per-JDK list of natives that are resolved before VMInit or known to break when
//!    wrapped (`classfile/data/`, chosen by [`Policy::jdk_feature`], see [`BuiltinList`]);
//! 4. `@IntrinsicCandidate` natives unless [`Policy::wrap_intrinsics`];
//! 5. the user's `exclude` patterns, then `include` patterns (an empty include list includes all).
//!
//! User patterns cannot re-enable what 1–4 exclude: those rules protect the VM and the program.
//!
//! Pattern syntax (internal names, `*` matches any run of characters, `/` included):
//! `java/io/*` (every method of every class under java/io), `com/foo/Bar.baz` (one method name),
//! `com/foo/Bar.baz(I)V` (name and descriptor), `*.read*` (a method name in any class).

use crate::NativeMethodRef;
use std::collections::HashMap;
use std::sync::OnceLock;

const ACC_VARARGS: u16 = 0x0080;

/// Skip reasons (the `reason` of a [`crate::SkippedNative`]).
#[allow(missing_docs)] // each constant's text is its description
pub mod reason {
    pub const SIGNATURE_POLYMORPHIC: &str = "signature-polymorphic (MethodHandle/VarHandle)";
    pub const CALLER_SENSITIVE: &str = "@CallerSensitive";
    pub const CONTINUATION: &str = "continuation special native";
    pub const REGISTER_NATIVES: &str = "registerNatives";
    pub const LIBRARY_LOOKUP: &str = "native-library lookup path";
    pub const FILL_IN_STACK_TRACE: &str = "Throwable.fillInStackTrace (skips frames by name)";
    pub const CALLER_FRAMES: &str = "inspects its caller's frames";
    pub const JNA_DIRECT_MAPPING: &str =
        "JNA direct mapping (Native.register binds the natives by their reflected names)";
    pub const BUILTIN_LIST: &str = "built-in JDK list (resolved before VMInit or unsafe to wrap)";
    pub const INTRINSIC_CANDIDATE: &str = "@IntrinsicCandidate (opt in with wrap_intrinsics)";
    pub const USER_EXCLUDE: &str = "user exclude pattern";
    pub const NOT_INCLUDED: &str = "not matched by user include patterns";
    pub const INTERFACE: &str = "declared in an interface";
    pub const INITIALIZER: &str = "initializer method";
    pub const ALREADY_PREFIXED: &str = "name already carries the native prefix";
    pub const NAME_TAKEN: &str = "prefixed name already declared in the class";
    pub const HELPER_NATIVE: &str = "J2N helper native itself";
    pub const NAME_TOO_LONG: &str = "prefixed name longer than 65535 bytes";
}

/// Facts about one native method that the policy needs besides its name.
#[derive(Clone, Copy, Debug, Default)]
pub struct NativeFacts {
    /// The method's access flags.
    pub access_flags: u16,
    /// Annotated `@IntrinsicCandidate` (`@HotSpotIntrinsicCandidate` on JDK 11).
    pub intrinsic_candidate: bool,
    /// Annotated `@CallerSensitive`.
    pub caller_sensitive: bool,
    /// The declaring class calls `com/sun/jna/Native.register` itself (JNA direct mapping, which
    /// looks up each native of the class by the name `getDeclaredMethods()` reports).
    pub jna_direct_mapping: bool,
}

/// The policy's verdict on one native.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Wrap it.
    Wrap,
    /// Leave it alone, for this [`reason`].
    Skip(&'static str),
}

/// What to wrap. See the module documentation for the order of the rules.
#[derive(Clone, Debug, Default)]
pub struct Policy {
    /// JDK feature version (11, 17, 21, 25, ...): selects the built-in exclusion list. 0 (the
    /// default) or an unknown version selects the most conservative list.
    pub jdk_feature: u32,
    /// Wrap `@IntrinsicCandidate` natives too (default false): the wrapper then carries no
    /// annotation and the JIT loses the intrinsic for that method.
    pub wrap_intrinsics: bool,
    /// User patterns such as `java/io/*` or `com/foo/Bar.baz`: only natives that match are wrapped.
    pub include: Vec<String>,
    /// User patterns of natives never wrapped.
    pub exclude: Vec<String>,
}

/// Which built-in list a JDK feature version gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BuiltinList {
    /// Measured on 17.0.15.
    Jdk17,
    /// Measured on 25.0.3.
    Jdk25,
    /// 18–24 (21 included): not measured; union of the 17 and 25 lists. 21 already has the
    /// NativeLibrary/RawNativeLibraries split and continuations of 25, and may keep some early
    /// natives of 17, so the union is the safe side.
    Jdk17And25,
    /// 11 and older, 0, or newer than 25: union of every list plus JDK 11's lookup path
    /// (`ClassLoader$NativeLibrary`) and early VM natives (`data/jdk11-extra-exclusions.txt`).
    Conservative,
}

impl BuiltinList {
    /// The list for a JDK feature version.
    pub fn for_jdk(feature: u32) -> Self {
        match feature {
            17 => BuiltinList::Jdk17,
            25 => BuiltinList::Jdk25,
            18..=24 => BuiltinList::Jdk17And25,
            _ => BuiltinList::Conservative,
        }
    }
}

impl Policy {
    /// The default policy for a JDK feature version.
    pub fn for_jdk(feature: u32) -> Self {
        Policy {
            jdk_feature: feature,
            ..Policy::default()
        }
    }

    /// The built-in list this policy's JDK version selects.
    pub fn builtin_list(&self) -> BuiltinList {
        BuiltinList::for_jdk(self.jdk_feature)
    }

    /// Decides one native method. `method.class` is the internal name of the declaring class.
    pub fn decide(&self, method: &NativeMethodRef, facts: &NativeFacts) -> Decision {
        if let Some(why) = hard_rule(method, facts) {
            return Decision::Skip(why);
        }
        if inspects_caller_frames(self.jdk_feature, &method.class, &method.name) {
            return Decision::Skip(reason::CALLER_FRAMES);
        }
        if builtin(self.builtin_list()).contains(&method.class, &method.name) {
            return Decision::Skip(reason::BUILTIN_LIST);
        }
        if facts.intrinsic_candidate && !self.wrap_intrinsics {
            return Decision::Skip(reason::INTRINSIC_CANDIDATE);
        }
        if self.exclude.iter().any(|p| pattern_matches(p, method)) {
            return Decision::Skip(reason::USER_EXCLUDE);
        }
        if !self.include.is_empty() && !self.include.iter().any(|p| pattern_matches(p, method)) {
            return Decision::Skip(reason::NOT_INCLUDED);
        }
        Decision::Wrap
    }
}

fn is_class_or_nested(class: &str, outer: &str) -> bool {
    class == outer
        || (class.len() > outer.len()
            && class.starts_with(outer)
            && class.as_bytes()[outer.len()] == b'$')
}

fn hard_rule(method: &NativeMethodRef, facts: &NativeFacts) -> Option<&'static str> {
    let class = method.class.as_str();
    let name = method.name.as_str();
    if (class == "java/lang/invoke/MethodHandle" || class == "java/lang/invoke/VarHandle")
        && facts.access_flags & ACC_VARARGS != 0
    {
        return Some(reason::SIGNATURE_POLYMORPHIC);
    }
    if facts.caller_sensitive {
        return Some(reason::CALLER_SENSITIVE);
    }
    if class == "jdk/internal/vm/Continuation" && (name == "doYield" || name == "enterSpecial") {
        return Some(reason::CONTINUATION);
    }
    if name == "registerNatives" {
        return Some(reason::REGISTER_NATIVES);
    }
    const LOOKUP_CLASSES: [&str; 4] = [
        "jdk/internal/loader/NativeLibraries",
        "jdk/internal/loader/NativeLibrary",
        "jdk/internal/loader/RawNativeLibraries",
        "java/lang/ClassLoader$NativeLibrary",
    ];
    if LOOKUP_CLASSES.iter().any(|c| is_class_or_nested(class, c)) {
        return Some(reason::LIBRARY_LOOKUP);
    }
    if class == "java/lang/Throwable" && name == "fillInStackTrace" {
        return Some(reason::FILL_IN_STACK_TRACE);
    }
    if facts.jna_direct_mapping {
        return Some(reason::JNA_DIRECT_MAPPING);
    }
    None
}

/// One line of `data/caller-frame-natives.txt`.
struct CallerFrameNative {
    class: String,
    name: String,
    /// JDK feature versions whose sources have the walk.
    jdks: Vec<u32>,
}

const CALLER_FRAME_NATIVES: &str = include_str!("../data/caller-frame-natives.txt");

fn caller_frame_natives() -> &'static [CallerFrameNative] {
    static LIST: OnceLock<Vec<CallerFrameNative>> = OnceLock::new();
    LIST.get_or_init(|| {
        CALLER_FRAME_NATIVES
            .lines()
            .filter_map(|line| {
                let mut words = line.split('#').next()?.split_whitespace();
                let (class, name) = words.next()?.split_once('.')?;
                Some(CallerFrameNative {
                    class: class.to_string(),
                    name: name.to_string(),
                    jdks: words.filter_map(|w| w.parse().ok()).collect(),
                })
            })
            .collect()
    })
}

/// Does the VM implementation of `class.name` inspect its caller's frames on this JDK feature
/// version? A version the data does not cover (0 included) gets the union of every version.
pub fn inspects_caller_frames(jdk_feature: u32, class: &str, name: &str) -> bool {
    let list = caller_frame_natives();
    let covered = list.iter().any(|n| n.jdks.contains(&jdk_feature));
    list.iter()
        .any(|n| n.class == class && n.name == name && (!covered || n.jdks.contains(&jdk_feature)))
}

/// A parsed built-in list: exact `class.method` entries and glob entries.
struct ExclusionList {
    exact: HashMap<String, Vec<String>>,
    globs: Vec<String>,
}

impl ExclusionList {
    fn from_texts(texts: &[&str]) -> Self {
        let mut list = ExclusionList {
            exact: HashMap::new(),
            globs: Vec::new(),
        };
        for line in texts.iter().flat_map(|t| t.lines()) {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            if line.contains('*') {
                list.globs.push(line.to_string());
                continue;
            }
            if let Some((class, method)) = line.split_once('.') {
                let methods = list.exact.entry(class.to_string()).or_default();
                if !methods.iter().any(|m| m == method) {
                    methods.push(method.to_string());
                }
            }
        }
        list
    }

    fn contains(&self, class: &str, name: &str) -> bool {
        if let Some(methods) = self.exact.get(class) {
            if methods.iter().any(|m| m == name) {
                return true;
            }
        }
        self.globs.iter().any(|g| match g.split_once('.') {
            Some((c, m)) => {
                glob_match(c.as_bytes(), class.as_bytes())
                    && glob_match(m.as_bytes(), name.as_bytes())
            }
            None => glob_match(g.as_bytes(), class.as_bytes()),
        })
    }
}

const JDK17_WORKING: &str = include_str!("../data/jdk17-working-exclusions.txt");
const JDK17_EARLY: &str = include_str!("../data/jdk17-resolved-before-vminit.txt");
const JDK25_WORKING: &str = include_str!("../data/jdk25-working-exclusions.txt");
const JDK25_EARLY: &str = include_str!("../data/jdk25-resolved-before-vminit.txt");
const JDK11_EXTRA: &str = include_str!("../data/jdk11-extra-exclusions.txt");
const JDK17_KEEP_ANNOTATION: &str = include_str!("../data/jdk17-intrinsics-keep-annotation.txt");

fn builtin(which: BuiltinList) -> &'static ExclusionList {
    static LISTS: [OnceLock<ExclusionList>; 4] = [
        OnceLock::new(),
        OnceLock::new(),
        OnceLock::new(),
        OnceLock::new(),
    ];
    let (slot, texts): (usize, &[&str]) = match which {
        BuiltinList::Jdk17 => (0, &[JDK17_WORKING, JDK17_EARLY]),
        BuiltinList::Jdk25 => (1, &[JDK25_WORKING, JDK25_EARLY]),
        BuiltinList::Jdk17And25 => (2, &[JDK17_WORKING, JDK17_EARLY, JDK25_WORKING, JDK25_EARLY]),
        BuiltinList::Conservative => (
            3,
            &[
                JDK17_WORKING,
                JDK17_EARLY,
                JDK25_WORKING,
                JDK25_EARLY,
                JDK11_EXTRA,
            ],
        ),
    };
    LISTS[slot].get_or_init(|| ExclusionList::from_texts(texts))
}

impl Policy {
    /// With `wrap_intrinsics`, should the wrapper keep `@IntrinsicCandidate`? Only where the VM
    /// matches its intrinsic on a non-native method too (measured for JDK 17, see
    /// `data/jdk17-intrinsics-keep-annotation.txt`); everywhere else the annotation is stripped,
    /// which JDK 25 accepts silently. A kept annotation lets the JIT intrinsify the wrapper, as it
    /// would the original native: such compiled calls never cross JNI and are not counted.
    pub fn keeps_intrinsic_annotation(&self, class: &str, name: &str) -> bool {
        static KEEP17: OnceLock<ExclusionList> = OnceLock::new();
        self.builtin_list() == BuiltinList::Jdk17
            && KEEP17
                .get_or_init(|| ExclusionList::from_texts(&[JDK17_KEEP_ANNOTATION]))
                .contains(class, name)
    }
}

/// True when a built-in list excludes `class.name` (exposed for reports and tests).
pub fn builtin_excludes(which: BuiltinList, class: &str, name: &str) -> bool {
    builtin(which).contains(class, name)
}

/// Does a user pattern match this method? See the module documentation for the syntax.
pub fn pattern_matches(pattern: &str, method: &NativeMethodRef) -> bool {
    match pattern.split_once('.') {
        None => glob_match(pattern.as_bytes(), method.class.as_bytes()),
        Some((class_pat, member_pat)) => {
            if !glob_match(class_pat.as_bytes(), method.class.as_bytes()) {
                return false;
            }
            if member_pat.contains('(') {
                let full = format!("{}{}", method.name, method.descriptor);
                glob_match(member_pat.as_bytes(), full.as_bytes())
            } else {
                glob_match(member_pat.as_bytes(), method.name.as_bytes())
            }
        }
    }
}

/// Whole-string glob match where `*` matches any run of bytes.
pub fn glob_match(pattern: &[u8], text: &[u8]) -> bool {
    let (mut p, mut t) = (0usize, 0usize);
    let mut last_star: Option<usize> = None;
    let mut resume_at = 0usize;
    while t < text.len() {
        if p < pattern.len() && pattern[p] == b'*' {
            last_star = Some(p);
            resume_at = t;
            p += 1;
        } else if p < pattern.len() && pattern[p] == text[t] {
            p += 1;
            t += 1;
        } else if let Some(star) = last_star {
            p = star + 1;
            resume_at += 1;
            t = resume_at;
        } else {
            return false;
        }
    }
    pattern[p..].iter().all(|&b| b == b'*')
}
