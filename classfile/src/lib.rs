//! Pure class-file rewriting for nativeacct (no JVM in here).
//!
//! Each wrappable native method `foo` becomes a `private synthetic native` method `<prefix>foo`
//! (same descriptor, `static` kept, no attributes) plus a Java method `foo` with the original flags
//! minus `native` and the original attributes (minus `@IntrinsicCandidate` when intrinsics are
//! opted in, except on the JDK 17 wrappers HotSpot still matches as intrinsics, see
//! [`Policy::keeps_intrinsic_annotation`]). Its body:
//!
//! ```text
//!   push id; invokestatic helper.begin(I)V
//!   load this and every argument; invokestatic|invokespecial <prefix>foo     (try)
//!   push id; invokestatic helper.end(I)V; <x>return
//! catch any: push id; invokestatic helper.end(I)V; athrow     (StackMapTable frame for v50+)
//! ```
//!
//! The VM finds the JNI code of `<prefix>foo` only when an agent announces the prefix with JVMTI
//! `SetNativeMethodPrefix`. When the class is `helper.owner` and `inject_into_owner` is set (the
//! default owner is `java/lang/Object`), the helpers are added too: a `private static volatile
//! synthetic boolean <gate_field>`, `protected static synthetic <begin>/<end>(I)V` that call the
//! `private static native synthetic <begin>N/<end>N(I)V` only while the gate is true. Injection is
//! skipped if the owner already declares `<begin>(I)V`.
//!
//! Untouched bytes of the class are copied verbatim; new constants are appended (reusing equal
//! existing ones). Rewriting an already rewritten class changes nothing.
//!
//! INTERFACE CONTRACT (used by the agent in `src/`): keep these names and signatures stable; extend freely.
//!
//! Layout: [`scan`] is the allocation-free "any natives?" pre-check, [`policy`] decides what is
//! wrapped, `wrap` emits the wrapper bytecode, `splice` writes the class back (copying every
//! untouched byte) and `constpool` appends constants, reusing existing equal ones.
//!
//! ```
//! use nativeacct_classfile::{rewrite, RewriteConfig, RewriteError};
//! let config = RewriteConfig::for_jdk(17);
//! let not_a_class = [0xCA, 0xFE, 0xBA, 0xBE, 0, 0, 0, 99];
//! assert!(matches!(
//!     rewrite(&not_a_class, &config, &mut |_| 0),
//!     Err(RewriteError::UnsupportedVersion(99))
//! ));
//! ```

mod annotations;
mod constpool;
#[cfg(feature = "tool")]
pub mod corpus;
pub mod descriptor;
mod mutf8;
mod parse;
pub mod policy;
mod reader;
pub mod scan;
mod splice;
mod wrap;

pub use policy::{reason, Decision, NativeFacts, Policy};

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
    /// What renamed natives start with (announced to the VM with `SetNativeMethodPrefix`).
    pub prefix: String,
    /// The J2N helper methods the wrappers call.
    pub helper: HelperSpec,
    /// Which natives to wrap.
    pub policy: Policy,
}

impl Default for RewriteConfig {
    /// Default prefix and helpers, most conservative policy (unknown JDK).
    fn default() -> Self {
        RewriteConfig {
            prefix: DEFAULT_PREFIX.into(),
            helper: HelperSpec::default(),
            policy: Policy::default(),
        }
    }
}

impl RewriteConfig {
    /// Defaults with the built-in exclusion list of one JDK feature version.
    pub fn for_jdk(feature: u32) -> Self {
        RewriteConfig {
            policy: Policy::for_jdk(feature),
            ..RewriteConfig::default()
        }
    }
}

/// A native method as seen by the id allocator and in reports.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct NativeMethodRef {
    /// Internal class name (`java/util/zip/Deflater`).
    pub class: String,
    /// Method name.
    pub name: String,
    /// Method descriptor (`(J[BII)J`).
    pub descriptor: String,
}

/// Why a native was not wrapped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkippedNative {
    /// The native left alone.
    pub method: NativeMethodRef,
    /// Why (one of [`policy::reason`]).
    pub reason: String,
}

/// What [`rewrite`] made of one class.
#[derive(Debug)]
pub enum Outcome {
    /// No natives, or nothing to wrap: keep the original bytes.
    Unchanged {
        /// Natives left alone, with the reason.
        skipped: Vec<SkippedNative>,
    },
    /// At least one native was wrapped.
    Rewritten {
        /// The new class file.
        bytes: Vec<u8>,
        /// Each wrapped native with the id its wrapper passes to the helpers.
        wrapped: Vec<(NativeMethodRef, i32)>,
        /// Natives left alone, with the reason.
        skipped: Vec<SkippedNative>,
    },
}

/// Why a class could not be rewritten (it is then loaded unchanged).
#[derive(Debug)]
pub enum RewriteError {
    /// The bytes are not a well-formed class file.
    Malformed(String),
    /// A class-file major version outside the supported range.
    UnsupportedVersion(u16),
    /// The constant pool would need more than 65,535 entries.
    ConstantPoolOverflow,
    /// Another class-file limit would be exceeded (methods or fields count).
    LimitExceeded(&'static str),
    /// The configuration would produce an invalid class (e.g. a prefix containing `/` or `;`).
    InvalidConfig(String),
}

impl std::fmt::Display for RewriteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RewriteError::Malformed(why) => write!(f, "malformed class file: {why}"),
            RewriteError::UnsupportedVersion(v) => write!(f, "unsupported class file version {v}"),
            RewriteError::ConstantPoolOverflow => {
                write!(f, "constant pool would exceed 65535 entries")
            }
            RewriteError::LimitExceeded(what) => write!(f, "class-file limit exceeded: {what}"),
            RewriteError::InvalidConfig(why) => write!(f, "invalid rewrite configuration: {why}"),
        }
    }
}

impl std::error::Error for RewriteError {}

/// Fast pre-scan: does this class declare any native method? Does not allocate unless it returns an
/// error. A class whose natives are all skipped still answers `true`.
pub fn has_native_methods(class_bytes: &[u8]) -> Result<bool, RewriteError> {
    scan::has_native_methods(class_bytes)
}

/// Should the agent call [`rewrite`] for this class? True when it has natives, or when it is the
/// helper owner and the helpers must be injected (the owner may have no natives of its own).
pub fn needs_rewrite(
    class_name: &str,
    class_bytes: &[u8],
    config: &RewriteConfig,
) -> Result<bool, RewriteError> {
    if config.helper.inject_into_owner && class_name == config.helper.owner {
        return Ok(true);
    }
    has_native_methods(class_bytes)
}

/// Rewrite one class. `assign_id` is called once per wrapped native, in method order, and returns
/// the id passed to the helpers. Ids handed out are not returned if a later limit check fails.
/// Never panics: a panic inside is caught and reported as [`RewriteError::Malformed`].
pub fn rewrite(
    class_bytes: &[u8],
    config: &RewriteConfig,
    assign_id: &mut dyn FnMut(&NativeMethodRef) -> i32,
) -> Result<Outcome, RewriteError> {
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        splice::rewrite_class(class_bytes, config, assign_id)
    }));
    match result {
        Ok(outcome) => outcome,
        Err(_) => Err(RewriteError::Malformed(
            "internal error: the rewriter panicked".into(),
        )),
    }
}
