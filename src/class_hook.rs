//! ClassFileLoadHook: every class goes through the rewriter; classes with wrappable natives come back
//! with each native `foo` renamed to `<prefix>foo` and wrapped by a Java method that signals J2N.

use crate::methods;
use nativeacct_classfile::{Outcome, RewriteConfig};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;

/// What happened to the classes the VM loaded.
#[derive(Default)]
pub(crate) struct ClassStats {
    pub(crate) classes_seen: AtomicU64,
    pub(crate) classes_with_natives: AtomicU64,
    pub(crate) classes_rewritten: AtomicU64,
    pub(crate) classes_failed: AtomicU64,
    pub(crate) natives_wrapped: AtomicU64,
    pub(crate) natives_skipped: AtomicU64,
    /// Skip reason → count.
    pub(crate) skip_reasons: Mutex<BTreeMap<String, u64>>,
    /// First few failures, for the report.
    pub(crate) failures: Mutex<Vec<String>>,
}

const MAX_FAILURES_KEPT: usize = 20;

pub(crate) static STATS: once_cell::sync::Lazy<ClassStats> =
    once_cell::sync::Lazy::new(ClassStats::default);

/// Rewrite one class. Returns new bytes, or None to keep the original. Never panics.
pub(crate) fn transform(
    name: &str,
    class_bytes: &[u8],
    config: &RewriteConfig,
    verbose: bool,
) -> Option<Vec<u8>> {
    let stats = &*STATS;
    stats.classes_seen.fetch_add(1, Relaxed);
    if name == JNA_NATIVE {
        note_jna_once();
    }
    // The fast pre-scan: most classes have no natives (the helper owner is rewritten regardless).
    match nativeacct_classfile::needs_rewrite(name, class_bytes, config) {
        Ok(false) => return None,
        Ok(true) => {}
        Err(_) => {} // let the full parse produce the typed error
    }
    stats.classes_with_natives.fetch_add(1, Relaxed);
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        nativeacct_classfile::rewrite(class_bytes, config, &mut |m| methods::id_for(m))
    }));
    let (bytes, skipped) = match result {
        Ok(Ok(Outcome::Unchanged { skipped })) => (None, skipped),
        Ok(Ok(Outcome::Rewritten {
            bytes,
            wrapped,
            skipped,
        })) => {
            stats.classes_rewritten.fetch_add(1, Relaxed);
            stats
                .natives_wrapped
                .fetch_add(wrapped.len() as u64, Relaxed);
            (Some(bytes), skipped)
        }
        Ok(Err(error)) => {
            record_failure(stats, name, &error.to_string(), verbose);
            return None;
        }
        Err(_) => {
            record_failure(stats, name, "rewriter panicked", verbose);
            return None;
        }
    };
    if !skipped.is_empty() {
        stats
            .natives_skipped
            .fetch_add(skipped.len() as u64, Relaxed);
        if let Ok(mut reasons) = stats.skip_reasons.lock() {
            for s in &skipped {
                *reasons.entry(s.reason.clone()).or_default() += 1;
            }
        }
    }
    bytes
}

const JNA_NATIVE: &str = "com/sun/jna/Native";

/// JNA's direct mapping looks natives up by the names reflection reports, and wrapping renames
/// them. A class that calls `Native.register` itself is left unwrapped by the policy; one
/// registered from elsewhere cannot be told apart when its class is loaded.
fn note_jna_once() {
    static NOTED: AtomicBool = AtomicBool::new(false);
    if !NOTED.swap(true, Relaxed) {
        crate::diag::line(
            "JNA under j2n=wrap: interface mappings are counted; classes that call Native.register themselves keep their natives unwrapped and uncounted; direct mapping registered from another class (Native.register(Other.class, ...)) fails with UnsatisfiedLinkError on the renamed natives. j2n=bind (the default) counts all JNA calls",
        );
    }
}

fn record_failure(stats: &ClassStats, name: &str, why: &str, verbose: bool) {
    stats.classes_failed.fetch_add(1, Relaxed);
    let line = format!("class {name} left unchanged: {why}");
    if verbose {
        crate::diag::line(&line);
    }
    if let Ok(mut failures) = stats.failures.lock() {
        if failures.len() < MAX_FAILURES_KEPT {
            failures.push(line);
        }
    }
}
