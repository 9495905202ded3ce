//! Pure class-file rewriting for nativeacct (no JVM in here).
//!
//! Each wrappable native method `foo` becomes a `private synthetic native` method `<prefix>foo` plus a
//! Java method `foo` that calls `helper.begin(id)`, the renamed native, and `helper.end(id)` (also on
//! the exception path). Untouched bytes of the class are copied verbatim.
//!
//! INTERFACE CONTRACT (used by the agent in `src/`): keep these names and signatures stable; extend freely.

/// Where the J2N begin/end helpers live and what they are called.
#[derive(Clone, Debug)]
pub struct HelperSpec {
    /// Internal name of the class that declares the helpers, e.g. `java/lang/Object`.
    pub owner: String,
    /// Static helper called before the renamed native, descriptor `(I)V` (the argument is the method id).
    pub begin: String,
    /// Static helper called after the renamed native (normal and exceptional exit), descriptor `(I)V`.
    pub end: String,
    /// When rewriting `owner` itself, also add the helper declarations (gate field, begin/end, and the
    /// `private static native` `<begin>N` / `<end>N` that the agent library implements).
    pub inject_into_owner: bool,
    /// Name of the `private static volatile synthetic boolean` gate field (only with `inject_into_owner`).
    pub gate_field: String,
}

impl Default for HelperSpec {
    fn default() -> Self {
        HelperSpec {
            owner: "java/lang/Object".into(),
            begin: "j2n$begin".into(),
            end: "j2n$end".into(),
            inject_into_owner: true,
            gate_field: "j2n$on".into(),
        }
    }
}

/// Default prefix for renamed natives (announced with JVMTI SetNativeMethodPrefix).
pub const DEFAULT_PREFIX: &str = "$nativeacct$";

/// Everything the rewriter needs besides the bytes.
#[derive(Clone, Debug)]
pub struct RewriteConfig {
    pub prefix: String,
    pub helper: HelperSpec,
    pub policy: Policy,
}

/// What to wrap. (Stub: the classfile work fills this in.)
#[derive(Clone, Debug, Default)]
pub struct Policy {
    /// JDK feature version (11, 17, 21, 25, ...): selects the built-in exclusion list.
    pub jdk_feature: u32,
    /// Wrap `@IntrinsicCandidate` natives too (default false).
    pub wrap_intrinsics: bool,
    /// User patterns such as `java/io/*` or `com/foo/Bar.baz`.
    pub include: Vec<String>,
    pub exclude: Vec<String>,
}

/// A native method as seen by the id allocator and in reports.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct NativeMethodRef {
    pub class: String,
    pub name: String,
    pub descriptor: String,
}

/// Why a native was not wrapped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkippedNative {
    pub method: NativeMethodRef,
    pub reason: String,
}

#[derive(Debug)]
pub enum Outcome {
    /// No natives, or nothing to wrap: keep the original bytes.
    Unchanged { skipped: Vec<SkippedNative> },
    Rewritten {
        bytes: Vec<u8>,
        wrapped: Vec<(NativeMethodRef, i32)>,
        skipped: Vec<SkippedNative>,
    },
}

#[derive(Debug)]
pub enum RewriteError {
    Malformed(String),
    UnsupportedVersion(u16),
    ConstantPoolOverflow,
}

impl std::fmt::Display for RewriteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RewriteError::Malformed(why) => write!(f, "malformed class file: {why}"),
            RewriteError::UnsupportedVersion(v) => write!(f, "unsupported class file version {v}"),
            RewriteError::ConstantPoolOverflow => write!(f, "constant pool would exceed 65535 entries"),
        }
    }
}

impl std::error::Error for RewriteError {}

/// Fast pre-scan: does this class declare any native method? Must not allocate for the common "no" case.
pub fn has_native_methods(_class_bytes: &[u8]) -> Result<bool, RewriteError> {
    Ok(false)
}

/// Rewrite one class. `assign_id` is called once per wrapped native and returns the id passed to the
/// helpers. Never panics.
pub fn rewrite(
    class_bytes: &[u8],
    _config: &RewriteConfig,
    _assign_id: &mut dyn FnMut(&NativeMethodRef) -> i32,
) -> Result<Outcome, RewriteError> {
    let _ = class_bytes;
    Ok(Outcome::Unchanged { skipped: Vec::new() })
}
