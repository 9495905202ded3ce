//! SPA, the paper's Simple Profiling Agent: MethodEntry/MethodExit events on every method, a reified
//! per-thread stack of is-native flags, and the same transitions, thread contexts and report as IPA.
//! The events force the interpreter (no JIT): SPA is a slow baseline for comparison, not a profiler.

use crate::context::{self, State};
use crate::jvmti::{self, capability, event, EventCallbacks, JThread, Jvmti, RawEnv};
use jni::sys::{jmethodID, jvalue, JNIEnv};
use nativeacct_classfile::NativeMethodRef;
use std::cell::RefCell;
use std::collections::HashMap;

/// JNI function index used for upcalls seen by SPA, which cannot tell which JNI function made them.
const UNKNOWN_JNI_FUNCTION: u32 = u32::MAX;

thread_local! {
    /// Is-native flag of every method entered on this thread and not yet exited.
    static STACK: RefCell<Vec<Option<i32>>> = const { RefCell::new(Vec::new()) };
    /// jmethodID → Some(native method id) or None (bytecode method).
    static KINDS: RefCell<HashMap<usize, Option<i32>>> = RefCell::new(HashMap::new());
}

/// The environment the callbacks name methods with (set by [`events`]).
static JVMTI: std::sync::OnceLock<Jvmti> = std::sync::OnceLock::new();

/// What SPA needs wired: its capabilities, its callbacks and its events (the agent's entry adds the
/// shared ones). `jvmti` is kept for the callbacks.
pub(crate) fn events(
    jvmti: &Jvmti,
) -> (jvmti::Capabilities, fn(&mut EventCallbacks), &'static [u32]) {
    let _ = JVMTI.set(*jvmti);
    (
        jvmti::Capabilities::default()
            .with(capability::CAN_GENERATE_METHOD_ENTRY_EVENTS)
            .with(capability::CAN_GENERATE_METHOD_EXIT_EVENTS),
        |callbacks| {
            callbacks.method_entry(on_method_entry);
            callbacks.method_exit(on_method_exit);
        },
        &[event::METHOD_ENTRY, event::METHOD_EXIT],
    )
}

fn kind_of(jvmti: &Jvmti, method: jmethodID) -> Option<i32> {
    let key = method as usize;
    if let Ok(Some(kind)) = KINDS.try_with(|k| k.borrow().get(&key).copied()) {
        return kind;
    }
    let kind = if jvmti.is_method_native(method).unwrap_or(false) {
        let (class, name, descriptor) = jvmti.method_identity(method).unwrap_or_default();
        Some(crate::methods::id_for(&NativeMethodRef {
            class,
            name,
            descriptor,
        }))
    } else {
        None
    };
    let _ = KINDS.try_with(|k| k.borrow_mut().insert(key, kind));
    kind
}

unsafe extern "system" fn on_method_entry(
    _env: RawEnv,
    _jni: *mut JNIEnv,
    _thread: JThread,
    method: jmethodID,
) {
    crate::diag::no_unwind(&crate::diag::JVMTI_CALLBACK, (), || {
        let Some(jvmti) = JVMTI.get() else {
            return;
        };
        let kind = kind_of(jvmti, method);
        let _ = STACK.try_with(|stack| {
            let mut stack = stack.borrow_mut();
            let caller_native = match stack.last() {
                Some(top) => top.is_some(),
                None => context::current_state() == Some(State::Native),
            };
            match kind {
                Some(id) => context::j2n_begin(id),
                None if caller_native => {
                    context::n2j_begin(UNKNOWN_JNI_FUNCTION, context::Timing::OfContext)
                }
                None => {}
            }
            stack.push(kind);
        });
    });
}

unsafe extern "system" fn on_method_exit(
    _env: RawEnv,
    _jni: *mut JNIEnv,
    _thread: JThread,
    _method: jmethodID,
    _by_exception: u8,
    _value: jvalue,
) {
    crate::diag::no_unwind(&crate::diag::JVMTI_CALLBACK, (), || {
        let _ = STACK.try_with(|stack| {
            let mut stack = stack.borrow_mut();
            let Some(kind) = stack.pop() else { return };
            match kind {
                Some(id) => context::j2n_end(id),
                None => {
                    let caller_native = match stack.last() {
                        Some(top) => top.is_some(),
                        // At the bottom the caller is the VM: native only for threads whose context
                        // started native (main, attached threads), as IPA sees them.
                        None => {
                            context::current_state() == Some(State::Bytecode)
                                && context::started_native()
                        }
                    };
                    if caller_native {
                        context::n2j_end(UNKNOWN_JNI_FUNCTION, context::Timing::OfContext);
                    }
                }
            }
        });
    });
}
