//! The registry of counted native methods: a dense id per (class, name, descriptor), assigned by the
//! class-file hook (wrap mode, passed by each wrapper to the J2N helpers) or at bind time (bind mode,
//! kept in the method's trampoline record).

use nativeacct_classfile::NativeMethodRef;
use std::collections::HashMap;
use std::sync::Mutex;

/// Largest number of distinct native methods that get their own row; the rest share one overflow row.
/// Bounds per-thread memory (see `context::MethodTable`).
pub(crate) const MAX_METHODS: usize = 1 << 18;

/// Id passed by the VMInit link probe: the helper returns without touching any state.
pub(crate) const LINK_PROBE_ID: i32 = -1;

#[derive(Default)]
struct Registry {
    by_ref: HashMap<NativeMethodRef, i32>,
    refs: Vec<NativeMethodRef>,
}

static REGISTRY: Mutex<Option<Registry>> = Mutex::new(None);

/// Id of a native method, allocating a new one on first sight. The same method loaded by two class
/// loaders shares one id (reports identify methods by name).
pub fn id_for(method: &NativeMethodRef) -> i32 {
    let mut guard = crate::sync::lock(&REGISTRY);
    let registry = guard.get_or_insert_with(Registry::default);
    if let Some(&id) = registry.by_ref.get(method) {
        return id;
    }
    let id = registry.refs.len() as i32;
    registry.refs.push(method.clone());
    registry.by_ref.insert(method.clone(), id);
    id
}

/// A new id for a method that cannot be named yet (bound before the VM's start phase); name it
/// later with [`name`].
pub(crate) fn reserve_unnamed() -> i32 {
    let mut guard = crate::sync::lock(&REGISTRY);
    let registry = guard.get_or_insert_with(Registry::default);
    let id = registry.refs.len() as i32;
    registry.refs.push(NativeMethodRef {
        class: String::new(),
        name: String::new(),
        descriptor: String::new(),
    });
    id
}

/// Name a method reserved with [`reserve_unnamed`].
pub(crate) fn name(id: i32, method: &NativeMethodRef) {
    let mut guard = crate::sync::lock(&REGISTRY);
    let registry = guard.get_or_insert_with(Registry::default);
    if let Some(slot) = registry.refs.get_mut(id as usize) {
        *slot = method.clone();
        registry.by_ref.entry(method.clone()).or_insert(id);
    }
}

/// The registered methods of `ids` (None for an id never registered).
pub(crate) fn some(ids: &[u32]) -> Vec<Option<NativeMethodRef>> {
    let guard = crate::sync::lock(&REGISTRY);
    ids.iter()
        .map(|&id| guard.as_ref()?.refs.get(id as usize).cloned())
        .collect()
}

/// All registered methods, indexed by id.
pub(crate) fn snapshot() -> Vec<NativeMethodRef> {
    let guard = crate::sync::lock(&REGISTRY);
    guard.as_ref().map(|r| r.refs.clone()).unwrap_or_default()
}
