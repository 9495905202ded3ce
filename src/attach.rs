//! Loaded into a running JVM (`nativeacct attach PID`, HotSpot's dynamic attach): what changes
//! when the agent arrives late.
//!
//! - JNI upcalls: the wrapped JNI function table is installed at once (SetJNIFunctionTable works in
//!   the live phase), so every upcall from then on is counted.
//! - Natives bound after the attach: NativeMethodBind redirects them to trampolines, as at start-up.
//! - Natives bound before it: the VM posts nothing for them. Their current C function is read from
//!   the word just past their `Method` (the layout HotSpot publishes in its vmStructs tables), and:
//!   - in application classes, JNI RegisterNatives binds the method again to that same function,
//!     which posts NativeMethodBind (so the trampoline goes in the usual way) and makes a compiled
//!     native wrapper not entrant;
//!   - in boot and platform classes, RegisterNatives would make HotSpot print a warning on the
//!     program's output, so the trampoline is written into that word directly, but only when the
//!     method has no compiled wrapper (a compiled wrapper has the old address built in);
//!   - the rest are reported as not covered, each with its reason ([`Coverage`]).
//!
//! The process CPU section is measured from the attach too (a baseline taken then is subtracted).

use crate::jvmti::Jvmti;
use crate::report::Coverage;
use jni::sys::{jclass, jmethodID, jobject, JNIEnv, JNINativeMethod};
use std::collections::HashMap;
use std::ffi::CString;
use std::sync::Mutex;

/// Uncovered methods listed by name in the report (the counts by reason are always complete).
const LISTED: usize = 500;

static COVERAGE: Mutex<Option<Coverage>> = Mutex::new(None);
/// The process section at the attach, subtracted from later ones.
static PROCESS_AT_ATTACH: Mutex<Option<crate::process::ProcessCpu>> = Mutex::new(None);
/// The JavaVM, for attaching the control thread at detach.
static JAVA_VM: std::sync::atomic::AtomicPtr<jni::sys::JavaVM> =
    std::sync::atomic::AtomicPtr::new(std::ptr::null_mut());

/// Remember the JavaVM (at the attach).
pub(crate) fn keep_vm(vm: *mut jni::sys::JavaVM) {
    JAVA_VM.store(vm, std::sync::atomic::Ordering::Relaxed);
}

/// Run `f` with the calling (agent) thread attached to the VM as a daemon, as the JVMTI functions
/// that change the VM's state require; detached again afterwards if it was not attached before.
pub(crate) fn as_vm_thread<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    crate::context::uncounted(|| with_thread_attached(f))
}

fn with_thread_attached<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    let vm = JAVA_VM.load(std::sync::atomic::Ordering::Relaxed);
    if vm.is_null() {
        return Err("no JavaVM".into());
    }
    let mut env: *mut std::ffi::c_void = std::ptr::null_mut();
    // SAFETY: `vm` is the JavaVM the VM passed to Agent_OnAttach; valid for the VM's life.
    let already = unsafe {
        (**vm)
            .GetEnv
            .map(|get_env| get_env(vm, &mut env, jni::sys::JNI_VERSION_1_6))
    } == Some(jni::sys::JNI_OK);
    if !already {
        let mut args = jni::sys::JavaVMAttachArgs {
            version: jni::sys::JNI_VERSION_1_6,
            name: c"nativeacct-detach".as_ptr() as *mut _,
            group: std::ptr::null_mut(),
        };
        // SAFETY: as above; `env` and `args` are valid for the call.
        let rc = unsafe {
            (**vm)
                .AttachCurrentThreadAsDaemon
                .map(|attach| attach(vm, &mut env, &mut args as *mut _ as *mut std::ffi::c_void))
        };
        if rc != Some(jni::sys::JNI_OK) {
            return Err("the agent thread could not attach to the VM".into());
        }
    }
    let result = f();
    if !already {
        // SAFETY: this thread attached itself above and holds no JNI frames of the VM.
        unsafe {
            if let Some(detach) = (**vm).DetachCurrentThread {
                detach(vm);
            }
        }
    }
    Ok(result)
}

/// The VM's JNI function table before the wrappers went in (restored at detach).
static ORIGINAL_JNI_TABLE: Mutex<usize> = Mutex::new(0);

/// The coverage of natives bound before the attach, if the agent was attached.
pub(crate) fn coverage() -> Option<Coverage> {
    crate::sync::lock(&COVERAGE).clone()
}

static ATTACHED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether the agent was loaded into a running VM.
pub(crate) fn is_attached() -> bool {
    ATTACHED.load(std::sync::atomic::Ordering::Relaxed)
}

/// Take the process baseline (at the attach, before anything else runs).
pub(crate) fn mark_process_start() {
    ATTACHED.store(true, std::sync::atomic::Ordering::Relaxed);
    let now = crate::process::section_so_far(&[]);
    *crate::sync::lock(&PROCESS_AT_ATTACH) = Some(now);
}

/// `process` measured from the attach (unchanged when the agent was loaded at start-up).
pub(crate) fn process_since_attach(
    process: crate::process::ProcessCpu,
) -> crate::process::ProcessCpu {
    match crate::sync::lock(&PROCESS_AT_ATTACH).as_ref() {
        Some(base) => crate::process::since(&process, base),
        None => process,
    }
}

/// Keep the VM's JNI function table (a JVMTI copy) for [`restore_jni_table`].
pub(crate) fn keep_original_jni_table(jvmti: &Jvmti) {
    if let Ok(table) = jvmti.jni_function_table() {
        *crate::sync::lock(&ORIGINAL_JNI_TABLE) = table as usize;
    }
}

/// Put the VM's own JNI function table back: upcalls are no longer intercepted.
pub(crate) fn restore_jni_table(jvmti: &Jvmti) -> Result<(), String> {
    let table = *crate::sync::lock(&ORIGINAL_JNI_TABLE);
    if table == 0 {
        return Err("the original JNI function table was not kept".into());
    }
    jvmti
        .set_jni_function_table(table as *const jni::sys::JNINativeInterface_)
        .map_err(|e| e.to_string())
}

/// Thin calls on the attaching thread's JNIEnv.
struct Env(*mut JNIEnv);

macro_rules! jni {
    ($env:expr, $name:ident $(, $arg:expr)*) => {{
        // SAFETY: `$env.0` is the JNIEnv of the attaching thread (Agent_OnAttach runs on it), and
        // `$name` is a JNI 1.2+ function present in every table.
        unsafe { ((**$env.0).$name.expect(stringify!($name)))($env.0 $(, $arg)*) }
    }};
}

impl Env {
    fn clear_exception(&self) -> bool {
        let pending = jni!(self, ExceptionCheck) != 0;
        if pending {
            jni!(self, ExceptionClear);
        }
        pending
    }

    /// `found`, or None with the exception cleared when a JNI lookup found nothing (null).
    fn non_null<T>(&self, found: *mut T) -> Option<*mut T> {
        if found.is_null() {
            self.clear_exception();
            return None;
        }
        Some(found)
    }

    /// `ClassLoader.getPlatformClassLoader()` (null if it cannot be had).
    fn platform_loader(&self) -> jobject {
        let lookup = || {
            let class = self.non_null(jni!(self, FindClass, c"java/lang/ClassLoader".as_ptr()))?;
            let method = self.non_null(jni!(
                self,
                GetStaticMethodID,
                class,
                c"getPlatformClassLoader".as_ptr(),
                c"()Ljava/lang/ClassLoader;".as_ptr()
            ))?;
            let loader = jni!(
                self,
                CallStaticObjectMethodA,
                class,
                method,
                std::ptr::null()
            );
            self.clear_exception();
            Some(loader)
        };
        lookup().unwrap_or(std::ptr::null_mut())
    }
}

/// Whether `address` lies in a loaded shared object (the executable, libjvm, a JNI library).
fn in_loaded_library(address: usize) -> bool {
    let mut info = libc::Dl_info {
        dli_fname: std::ptr::null(),
        dli_fbase: std::ptr::null_mut(),
        dli_sname: std::ptr::null(),
        dli_saddr: std::ptr::null_mut(),
    };
    // SAFETY: dladdr only looks the address up in the loader's tables; `info` is a valid out-pointer.
    unsafe { libc::dladdr(address as *const std::ffi::c_void, &mut info) != 0 }
}

/// Natives that must keep their binding: VM-internal entries and signature-polymorphic methods.
fn never_touched(class: &str) -> bool {
    matches!(
        class,
        "java/lang/invoke/MethodHandle"
            | "java/lang/invoke/VarHandle"
            | "jdk/internal/vm/Continuation"
            | "java/lang/invoke/MethodHandleNatives"
    )
}

/// Why the binding word of a boot or platform class's native cannot be replaced, if it cannot.
///
/// # Safety
/// `method` is a native method of a loaded class.
unsafe fn in_place_refusal(method: jmethodID) -> Option<&'static str> {
    // SAFETY: the caller's contract.
    match unsafe { crate::vm_structs::has_compiled_code(method) } {
        Some(false) => None,
        Some(true) => Some("JDK class with a compiled native wrapper (it holds the old address; binding it again would make the VM print a warning)"),
        None => Some("this VM does not publish Method::_code"),
    }
}

/// Find the natives bound before the attach and redirect those that can be (see the module doc).
/// Runs on the attaching thread, after NativeMethodBind was enabled.
///
/// # Safety
/// `jni_env` is the JNIEnv of the calling thread.
pub(crate) unsafe fn cover_bound_natives(
    jvmti: &Jvmti,
    jni_env: *mut JNIEnv,
    policy: &crate::bind::BindPolicy,
) {
    let env = Env(jni_env);
    let platform = env.platform_loader();
    let mut natives: Vec<(jclass, jmethodID, usize)> = Vec::new();
    let mut coverage = Coverage::default();
    let classes = jvmti.loaded_classes();
    for &class in &classes {
        for method in jvmti.class_methods(class) {
            if !jvmti.is_method_native(method).unwrap_or(false) {
                continue;
            }
            coverage.natives_at_attach += 1;
            // SAFETY: a native method of a loaded class, held by a local reference meanwhile.
            let address = unsafe { crate::vm_structs::native_function_slot(method) }
                // SAFETY: the slot of a live native method; an aligned word the VM writes whole.
                .map(|slot| unsafe { std::ptr::read_volatile(slot) })
                .unwrap_or(usize::MAX);
            natives.push((class, method, address));
        }
    }
    // Unbound natives all hold one address: the VM's "unsatisfied link" entry. It is the only one
    // shared by many methods.
    let mut by_address: HashMap<usize, u64> = HashMap::new();
    for &(_, _, address) in &natives {
        *by_address.entry(address).or_default() += 1;
    }
    let unbound = by_address
        .iter()
        .filter(|(&address, &n)| n >= 8 && address != usize::MAX)
        .max_by_key(|(_, &n)| n)
        .map(|(&address, _)| address);
    // Bound addresses lie in loaded libraries (a few may be generated code, e.g. JNA's): if most
    // do not, the layout read from vmStructs is not what this VM uses, and nothing is written.
    let bound: Vec<usize> = natives
        .iter()
        .map(|&(_, _, a)| a)
        .filter(|&a| a != 0 && a != usize::MAX && Some(a) != unbound)
        .collect();
    let in_libraries = bound.iter().filter(|&&a| in_loaded_library(a)).count();
    let trusted = in_libraries * 10 >= bound.len() * 9;
    let refuse = |coverage: &mut Coverage, name: String, reason: &str| {
        coverage.not_covered += 1;
        *coverage
            .not_covered_by_reason
            .entry(reason.to_string())
            .or_default() += 1;
        if coverage.not_covered_methods.len() < LISTED {
            coverage
                .not_covered_methods
                .push(format!("{name}: {reason}"));
        }
    };
    for (class, method, address) in natives {
        if address == 0 || Some(address) == unbound {
            coverage.not_bound_yet += 1;
            continue;
        }
        if crate::bind::is_redirected(method) {
            coverage.covered_by_rebind += 1;
            continue;
        }
        let Some((class_name, name, descriptor)) = jvmti.method_identity(method) else {
            refuse(&mut coverage, format!("{method:p}"), "could not be named");
            continue;
        };
        let full = format!("{}.{name}{descriptor}", class_name.replace('/', "."));
        if address == usize::MAX || !trusted {
            refuse(
                &mut coverage,
                full,
                "the binding could not be read: Method's layout (vmStructs) is not published or not as expected",
            );
            continue;
        }
        if never_touched(&class_name) {
            refuse(&mut coverage, full, "VM-internal native, left alone");
            continue;
        }
        let loader = jvmti.class_loader(class).unwrap_or(std::ptr::null_mut());
        let is_platform = loader.is_null()
            || (!platform.is_null() && jni!(env, IsSameObject, loader, platform) != 0);
        if !loader.is_null() {
            jni!(env, DeleteLocalRef, loader);
        }
        if is_platform {
            // SAFETY: as above.
            if let Some(reason) = unsafe { in_place_refusal(method) } {
                refuse(&mut coverage, full, reason);
                continue;
            }
        }
        // Boot and platform classes: the trampoline goes into the binding word. The others: the
        // trampoline first, then RegisterNatives to it (a bind to the address the method already
        // has would be ignored by the VM, without an event).
        let Some(stub) = crate::bind::on_bind(jvmti, policy, method, address) else {
            refuse(
                &mut coverage,
                full,
                "left alone by the bind policy (include=/exclude=)",
            );
            continue;
        };
        if is_platform {
            // SAFETY: as above; an aligned word that the interpreter reads at each call.
            if let Some(slot) = unsafe { crate::vm_structs::native_function_slot(method) } {
                // SAFETY: the slot is the method's binding word; a whole-word store.
                unsafe { std::ptr::write_volatile(slot, stub) };
                coverage.covered_in_place += 1;
            }
            continue;
        }
        let (Ok(c_name), Ok(c_sig)) = (CString::new(name), CString::new(descriptor)) else {
            refuse(&mut coverage, full, "could not be named");
            continue;
        };
        let entry = JNINativeMethod {
            name: c_name.as_ptr() as *mut _,
            signature: c_sig.as_ptr() as *mut _,
            fnPtr: stub as *mut std::ffi::c_void,
        };
        let rc = jni!(env, RegisterNatives, class, &entry, 1);
        if env.clear_exception() || rc != 0 {
            refuse(&mut coverage, full, "RegisterNatives refused the binding");
        } else {
            coverage.covered_by_rebind += 1;
        }
    }
    for class in classes {
        jni!(env, DeleteLocalRef, class);
    }
    if !platform.is_null() {
        jni!(env, DeleteLocalRef, platform);
    }
    *crate::sync::lock(&COVERAGE) = Some(coverage);
}
