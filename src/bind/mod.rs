//! J2N by binding (`j2n=bind`, the default): the program's classes stay exactly as they are.
//!
//! Whenever the VM binds a native method to its C function (lazy lookup by name, `RegisterNatives`,
//! the VM's own early binds), JVMTI's NativeMethodBind event lets the agent hand back another
//! address. The agent hands back a trampoline of that method's own ([`trampoline`]), which signals
//! J2N begin and end around a call of the real function. A re-bind of the same method only changes
//! the trampoline's target.
//!
//! A method bound before the VM's start phase cannot be named yet; it gets an id at once and its
//! name and descriptor at VMStart ([`name_pending`]).

mod trampoline;

use crate::jvmti::Jvmti;
use crate::methods;
use jni::sys::jmethodID;
use nativeacct_classfile::policy::pattern_matches;
use nativeacct_classfile::NativeMethodRef;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Mutex;
pub use trampoline::bench_trampoline;
use trampoline::{Record, Trampolines};

/// Which natives the user wants counted (`include=` / `exclude=`).
#[derive(Clone, Debug, Default)]
pub(crate) struct BindPolicy {
    pub(crate) include: Vec<String>,
    pub(crate) exclude: Vec<String>,
}

impl BindPolicy {
    /// Why `method` is left alone, or None to count it.
    fn refuses(&self, method: &NativeMethodRef) -> Option<&'static str> {
        use nativeacct_classfile::policy::reason;
        if self.exclude.iter().any(|p| pattern_matches(p, method)) {
            return Some(reason::USER_EXCLUDE);
        }
        if !self.include.is_empty() && !self.include.iter().any(|p| pattern_matches(p, method)) {
            return Some(reason::NOT_INCLUDED);
        }
        None
    }
}

/// What the bind hook did, for the report (`bind` in the JSON).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(crate) struct BindStats {
    /// Distinct native methods redirected to a trampoline.
    pub(crate) methods_bound: u64,
    /// Binds of a method that already had a trampoline (its target was updated).
    pub(crate) rebinds: u64,
    /// Methods bound before the start phase, named at VMStart.
    pub(crate) named_late: u64,
    /// Binds left alone, by reason.
    pub(crate) not_redirected: BTreeMap<String, u64>,
    /// Whether the VM told which bound methods are JIT intrinsics (see `intrinsic` per method).
    pub(crate) intrinsics_known: bool,
}

struct Bound {
    stub: usize,
    record: &'static Record,
}

#[derive(Default)]
struct Registry {
    trampolines: Trampolines,
    /// jmethodID → its trampoline.
    by_method: HashMap<usize, Bound>,
    /// Methods bound before they could be named, with their ids.
    unnamed: Vec<(usize, u32)>,
    /// Method ids whose method is a JIT intrinsic (the JIT may run it without entering native code).
    intrinsics: BTreeSet<u32>,
    stats: BindStats,
}

static REGISTRY: Mutex<Option<Registry>> = Mutex::new(None);

fn with_registry<T>(f: impl FnOnce(&mut Registry) -> T) -> T {
    let mut guard = crate::sync::lock(&REGISTRY);
    f(guard.get_or_insert_with(Registry::default))
}

fn refuse(registry: &mut Registry, reason: &str) -> Option<usize> {
    *registry
        .stats
        .not_redirected
        .entry(reason.to_string())
        .or_default() += 1;
    None
}

/// The name of `method` if the VM's phase allows it.
fn identity(jvmti: &Jvmti, method: jmethodID) -> Option<NativeMethodRef> {
    if !jvmti.can_name_methods() {
        return None;
    }
    let (class, name, descriptor) = jvmti.method_identity(method)?;
    Some(NativeMethodRef {
        class,
        name,
        descriptor,
    })
}

/// NativeMethodBind: the address the VM should bind `method` to instead of `address`, or None to
/// leave the bind alone.
pub(crate) fn on_bind(
    jvmti: &Jvmti,
    policy: &BindPolicy,
    method: jmethodID,
    address: usize,
) -> Option<usize> {
    if method.is_null() || address == 0 {
        return None;
    }
    // Named outside the lock: JVMTI calls may block on the VM.
    let named = identity(jvmti, method);
    // SAFETY: inside the method's bind callback its class is loaded and cannot be unloaded.
    let intrinsic = unsafe { crate::vm_structs::is_intrinsic(method) };
    with_registry(|registry| {
        if registry.trampolines.owns(address) {
            return refuse(registry, "already a trampoline");
        }
        if let Some(bound) = registry.by_method.get(&(method as usize)) {
            bound.record.set_target(address);
            let stub = bound.stub;
            registry.stats.rebinds += 1;
            return Some(stub);
        }
        let (id, stack_bytes) = match &named {
            Some(method_ref) => {
                if let Some(reason) = policy.refuses(method_ref) {
                    return refuse(registry, reason);
                }
                let Some(bytes) = trampoline::stack_bytes_for(&method_ref.descriptor) else {
                    return refuse(registry, "malformed descriptor");
                };
                (methods::id_for(method_ref) as u32, bytes)
            }
            None => (
                methods::reserve_unnamed() as u32,
                trampoline::UNKNOWN_STACK_BYTES,
            ),
        };
        let Some((stub, record)) = registry.trampolines.make(id, address, stack_bytes) else {
            return refuse(registry, "no executable memory");
        };
        registry
            .by_method
            .insert(method as usize, Bound { stub, record });
        if named.is_none() {
            registry.unnamed.push((method as usize, id));
        }
        registry.stats.methods_bound += 1;
        if let Some(is) = intrinsic {
            registry.stats.intrinsics_known = true;
            if is {
                registry.intrinsics.insert(id);
            }
        }
        Some(stub)
    })
}

/// Name the methods bound before the start phase and give their trampolines the exact size of
/// their stack arguments. Called at VMStart (and again at VMInit for any stragglers).
pub(crate) fn name_pending(jvmti: &Jvmti, policy: &BindPolicy) {
    let pending = with_registry(|registry| std::mem::take(&mut registry.unnamed));
    let mut named = 0;
    let mut still_unnamed = Vec::new();
    for (method, id) in pending {
        let Some(method_ref) = identity(jvmti, method as jmethodID) else {
            still_unnamed.push((method, id));
            continue;
        };
        methods::name(id as i32, &method_ref);
        let record = with_registry(|r| r.by_method.get(&method).map(|b| b.record));
        if let (Some(record), Some(reason)) = (record, policy.refuses(&method_ref)) {
            // Bound before it had a name: its stub stays, but jumps straight to the function.
            record.pass_through();
            with_registry(|registry| {
                registry.stats.methods_bound = registry.stats.methods_bound.saturating_sub(1);
                refuse(registry, reason);
            });
            continue;
        }
        if let (Some(record), Some(bytes)) =
            (record, trampoline::stack_bytes_for(&method_ref.descriptor))
        {
            record.set_stack_bytes(bytes);
        }
        named += 1;
    }
    with_registry(|registry| {
        registry.stats.named_late += named;
        registry.unnamed.extend(still_unnamed);
    });
}

/// Ids of the bound methods that are JIT intrinsics.
pub(crate) fn intrinsic_ids() -> BTreeSet<u32> {
    with_registry(|registry| registry.intrinsics.clone())
}

/// A copy of the bind statistics.
pub(crate) fn stats() -> BindStats {
    with_registry(|registry| registry.stats.clone())
}

/// Whether `method` runs through a trampoline already.
pub(crate) fn is_redirected(method: jmethodID) -> bool {
    with_registry(|registry| registry.by_method.contains_key(&(method as usize)))
}

/// From now on every trampoline jumps straight to its function, counting nothing (an attached
/// agent detaches). Returns how many there are.
pub(crate) fn pass_through_all() -> usize {
    with_registry(|registry| {
        for bound in registry.by_method.values() {
            bound.record.pass_through();
        }
        registry.by_method.len()
    })
}
