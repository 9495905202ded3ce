//! The JVMTI edge: the raw C layout ([`sys`], one named field per function of `jvmti.h`), a typed
//! environment handle ([`Jvmti`]) with one thin safe method per function the agent calls, and thin
//! JNI calls ([`Jni`]).
//!
//! Every `unsafe` block in the agent that calls the VM through JVMTI or JNI lives in this folder.

mod jni;
mod sys;

pub(crate) use self::jni::Jni;
pub(crate) use sys::{capability, event, Capabilities, EventCallbacks, FrameInfo, JThread, RawEnv};

use ::jni::sys::{jclass, jint, jlong, jmethodID, jobject, JNINativeInterface_, JavaVM};
use std::ffi::{c_char, c_uint, c_void, CStr, CString};
use sys::{
    ErrorCode, Interface, ThreadInfo, ERROR_ILLEGAL_ARGUMENT, ERROR_NONE, ERROR_NOT_AVAILABLE,
};

/// A JVMTI error code with the function that returned it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct JvmtiError {
    pub(crate) function: &'static str,
    pub(crate) code: ErrorCode,
}

impl std::fmt::Display for JvmtiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "JVMTI {} failed with error {}", self.function, self.code)
    }
}

pub(crate) type Result<T> = std::result::Result<T, JvmtiError>;

fn check(function: &'static str, code: ErrorCode) -> Result<()> {
    if code == ERROR_NONE {
        Ok(())
    } else {
        Err(JvmtiError { function, code })
    }
}

/// A JVMTI environment. Copyable handle; the VM owns the environment.
#[derive(Clone, Copy)]
pub(crate) struct Jvmti {
    env: RawEnv,
}

// SAFETY: a jvmtiEnv may be used from any thread (JVMTI spec: "JVM TI environments ... can be used by any thread").
unsafe impl Send for Jvmti {}
// SAFETY: as above; JVMTI functions are thread-safe.
unsafe impl Sync for Jvmti {}

/// The function `$name` of the table, or `Err(JvmtiError)` naming it when the VM leaves its slot empty.
macro_rules! function {
    ($self:ident . $name:ident) => {
        $self.functions().$name.ok_or(JvmtiError {
            function: stringify!($name),
            code: ERROR_NOT_AVAILABLE,
        })
    };
}

/// Call `$name`, which returns a JVMTI-allocated array through `(count, items)` out-pointers after
/// its `$arg`s, and copy the array out (empty if the VM lacks the function or it fails).
macro_rules! array_from {
    ($self:ident . $name:ident ($($arg:expr),*)) => {
        match function!($self.$name) {
            Ok(f) => $self.take_array(|count, items| {
                // SAFETY: `count` and `items` are writable; each `$arg` is valid for `$name` (the
                // caller's word at the call site).
                unsafe { f($self.env, $($arg,)* count, items) }
            }),
            Err(_) => Vec::new(),
        }
    };
}

impl Jvmti {
    /// Obtain a JVMTI 1.2 environment from the VM.
    pub(crate) fn from_vm(vm: *mut JavaVM) -> Option<Jvmti> {
        let mut env: *mut c_void = std::ptr::null_mut();
        // SAFETY: `vm` is the JavaVM pointer handed to Agent_OnLoad; GetEnv writes one pointer into `env`.
        let rc = unsafe {
            let get_env = (**vm).GetEnv?;
            get_env(vm, &mut env, sys::VERSION_1_2)
        };
        if rc != 0 || env.is_null() {
            return None;
        }
        Some(Jvmti { env: env as RawEnv })
    }

    fn functions(&self) -> &Interface {
        // SAFETY: `env` came from GetEnv and stays valid for the VM's life; it points to the VM's
        // function table, laid out as `Interface` (checked against jvmti.h by the layout test).
        unsafe { &**self.env }
    }

    pub(crate) fn version(&self) -> Result<jint> {
        let f = function!(self.GetVersionNumber)?;
        let mut version: jint = 0;
        // SAFETY: `version` is a writable jint.
        let rc = unsafe { f(self.env, &mut version) };
        check("GetVersionNumber", rc).map(|_| version)
    }

    /// Whether the VM is in its start or live phase, where methods can be named.
    pub(crate) fn can_name_methods(&self) -> bool {
        const START: c_uint = 6;
        const LIVE: c_uint = 4;
        let Ok(f) = function!(self.GetPhase) else {
            return false;
        };
        let mut phase: c_uint = 0;
        // SAFETY: `phase` is a writable jvmtiPhase (a C int).
        let rc = unsafe { f(self.env, &mut phase) };
        rc == ERROR_NONE && (phase == START || phase == LIVE)
    }

    pub(crate) fn add_capabilities(&self, caps: &Capabilities) -> Result<()> {
        let f = function!(self.AddCapabilities)?;
        // SAFETY: `caps` is a jvmtiCapabilities that outlives the call.
        check("AddCapabilities", unsafe { f(self.env, caps) })
    }

    pub(crate) fn set_event_callbacks(&self, callbacks: &EventCallbacks) -> Result<()> {
        let f = function!(self.SetEventCallbacks)?;
        let size = std::mem::size_of::<EventCallbacks>() as jint;
        // SAFETY: `callbacks` is a jvmtiEventCallbacks of `size` bytes; the VM copies it.
        check("SetEventCallbacks", unsafe { f(self.env, callbacks, size) })
    }

    pub(crate) fn enable_event(&self, event: u32) -> Result<()> {
        const JVMTI_ENABLE: c_uint = 1;
        let f = function!(self.SetEventNotificationMode)?;
        // SAFETY: a valid mode and event number; a null thread means every thread.
        let rc = unsafe { f(self.env, JVMTI_ENABLE, event, std::ptr::null_mut()) };
        check("SetEventNotificationMode", rc)
    }

    pub(crate) fn set_native_method_prefix(&self, prefix: &str) -> Result<()> {
        let c = CString::new(prefix).map_err(|_| JvmtiError {
            function: "SetNativeMethodPrefix",
            code: ERROR_ILLEGAL_ARGUMENT,
        })?;
        let f = function!(self.SetNativeMethodPrefix)?;
        // SAFETY: `c` is NUL-terminated and outlives the call; the VM copies it.
        check("SetNativeMethodPrefix", unsafe { f(self.env, c.as_ptr()) })
    }

    pub(crate) fn system_property(&self, name: &str) -> Option<String> {
        let c = CString::new(name).ok()?;
        let f = function!(self.GetSystemProperty).ok()?;
        let mut value: *mut c_char = std::ptr::null_mut();
        // SAFETY: `c` is NUL-terminated; `value` is a writable pointer.
        let rc = unsafe { f(self.env, c.as_ptr(), &mut value) };
        if rc != ERROR_NONE || value.is_null() {
            return None;
        }
        Some(self.take_string(value))
    }

    /// Copy out and free a NUL-terminated string that JVMTI allocated (empty for null).
    fn take_string(&self, p: *mut c_char) -> String {
        if p.is_null() {
            return String::new();
        }
        // SAFETY: non-null strings returned by JVMTI are NUL-terminated and JVMTI-allocated.
        let s = unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned();
        self.deallocate(p as *mut u8);
        s
    }

    /// Allocate `size` bytes with JVMTI's allocator (required for ClassFileLoadHook's new class data).
    pub(crate) fn allocate(&self, size: usize) -> Option<*mut u8> {
        let f = function!(self.Allocate).ok()?;
        let mut mem: *mut u8 = std::ptr::null_mut();
        // SAFETY: `mem` is a writable pointer.
        let rc = unsafe { f(self.env, size as jlong, &mut mem) };
        (rc == ERROR_NONE && !mem.is_null()).then_some(mem)
    }

    pub(crate) fn deallocate(&self, mem: *mut u8) {
        if let Ok(f) = function!(self.Deallocate) {
            // SAFETY: `mem` was allocated by JVMTI (Allocate, or a JVMTI function's out-parameter).
            unsafe { f(self.env, mem) };
        }
    }

    /// Copy of the VM's current JNI function table (allocated by JVMTI; the caller keeps it).
    pub(crate) fn jni_function_table(&self) -> Result<*mut JNINativeInterface_> {
        let f = function!(self.GetJNIFunctionTable)?;
        let mut table: *mut JNINativeInterface_ = std::ptr::null_mut();
        // SAFETY: `table` is a writable pointer.
        let rc = unsafe { f(self.env, &mut table) };
        check("GetJNIFunctionTable", rc).map(|_| table)
    }

    pub(crate) fn set_jni_function_table(&self, table: *const JNINativeInterface_) -> Result<()> {
        let f = function!(self.SetJNIFunctionTable)?;
        // SAFETY: `table` points to a complete JNI function table; the VM copies it.
        check("SetJNIFunctionTable", unsafe { f(self.env, table) })
    }

    /// Store a pointer in the calling thread's JVMTI thread-local storage (`thread` null = current).
    pub(crate) fn set_thread_local(&self, thread: JThread, value: *const c_void) -> Result<()> {
        let f = function!(self.SetThreadLocalStorage)?;
        // SAFETY: `thread` is null or a live thread reference; the VM only stores `value`.
        check("SetThreadLocalStorage", unsafe {
            f(self.env, thread, value)
        })
    }

    pub(crate) fn thread_local(&self, thread: JThread) -> Result<*mut c_void> {
        let f = function!(self.GetThreadLocalStorage)?;
        let mut value: *mut c_void = std::ptr::null_mut();
        // SAFETY: `thread` is null or a live thread reference; `value` is a writable pointer.
        let rc = unsafe { f(self.env, thread, &mut value) };
        check("GetThreadLocalStorage", rc).map(|_| value)
    }

    /// The Java name of `thread` (null = current). Live phase only.
    pub(crate) fn thread_name(&self, thread: JThread) -> Option<String> {
        let f = function!(self.GetThreadInfo).ok()?;
        // SAFETY: all-zero is a valid bit pattern for this plain C struct of pointers and integers.
        let mut info: ThreadInfo = unsafe { std::mem::zeroed() };
        // SAFETY: `thread` is null or a live thread reference; `info` is a writable jvmtiThreadInfo.
        let rc = unsafe { f(self.env, thread, &mut info) };
        if rc != ERROR_NONE || info.name.is_null() {
            return None;
        }
        Some(self.take_string(info.name))
    }

    /// All live Java threads (local references owned by the calling JNI frame).
    pub(crate) fn all_threads(&self) -> Vec<JThread> {
        array_from!(self.GetAllThreads())
    }

    pub(crate) fn is_method_native(&self, method: jmethodID) -> Result<bool> {
        let f = function!(self.IsMethodNative)?;
        let mut native: u8 = 0;
        // SAFETY: `method` is a method id the VM handed out; `native` is a writable jboolean.
        let rc = unsafe { f(self.env, method, &mut native) };
        check("IsMethodNative", rc).map(|_| native != 0)
    }

    /// The calling thread's Java frames from `start_depth` (0 = innermost), at most `frames.len()`;
    /// returns how many were filled in.
    pub(crate) fn own_stack_trace(
        &self,
        start_depth: jint,
        frames: &mut [FrameInfo],
    ) -> Result<usize> {
        let f = function!(self.GetStackTrace)?;
        let mut count: jint = 0;
        let max = frames.len().min(jint::MAX as usize) as jint;
        // SAFETY: a null thread is the current one; `frames` has room for `max` entries.
        let rc = unsafe {
            f(
                self.env,
                std::ptr::null_mut(),
                start_depth,
                max,
                frames.as_mut_ptr(),
                &mut count,
            )
        };
        check("GetStackTrace", rc).map(|_| (count.max(0) as usize).min(frames.len()))
    }

    /// `(class signature, method name, method descriptor)` of a method, for reports.
    pub(crate) fn method_identity(&self, method: jmethodID) -> Option<(String, String, String)> {
        let get_name = function!(self.GetMethodName).ok()?;
        let mut name: *mut c_char = std::ptr::null_mut();
        let mut sig: *mut c_char = std::ptr::null_mut();
        // SAFETY: `method` is a method id the VM handed out; `name` and `sig` are writable, and a
        // null generic pointer asks for no generic signature.
        let rc = unsafe { get_name(self.env, method, &mut name, &mut sig, std::ptr::null_mut()) };
        if rc != ERROR_NONE {
            return None;
        }
        let class_sig = self.declaring_class_signature(method);
        let class_name = self.take_string(class_sig);
        let class_name = class_name
            .strip_prefix('L')
            .and_then(|s| s.strip_suffix(';'))
            .unwrap_or(&class_name)
            .to_string();
        Some((class_name, self.take_string(name), self.take_string(sig)))
    }

    /// The JVMTI-allocated signature of `method`'s class, or null.
    fn declaring_class_signature(&self, method: jmethodID) -> *mut c_char {
        let mut class_sig: *mut c_char = std::ptr::null_mut();
        let (Ok(get_class), Ok(get_signature)) = (
            function!(self.GetMethodDeclaringClass),
            function!(self.GetClassSignature),
        ) else {
            return class_sig;
        };
        let mut class: jclass = std::ptr::null_mut();
        // SAFETY: `method` is a method id the VM handed out; `class` is writable.
        let rc = unsafe { get_class(self.env, method, &mut class) };
        if rc == ERROR_NONE {
            // SAFETY: `class` is the reference just returned; a null generic pointer asks for none.
            unsafe { get_signature(self.env, class, &mut class_sig, std::ptr::null_mut()) };
        }
        class_sig
    }

    /// Stop posting `event` (used when an attached agent detaches).
    pub(crate) fn disable_event(&self, event: u32) -> Result<()> {
        const JVMTI_DISABLE: c_uint = 0;
        let f = function!(self.SetEventNotificationMode)?;
        // SAFETY: a valid mode and event number; a null thread means every thread.
        let rc = unsafe { f(self.env, JVMTI_DISABLE, event, std::ptr::null_mut()) };
        check("SetEventNotificationMode", rc)
    }

    /// Every loaded class (local references owned by the calling JNI frame).
    pub(crate) fn loaded_classes(&self) -> Vec<jclass> {
        array_from!(self.GetLoadedClasses())
    }

    /// The methods a class declares (none if it is not prepared yet).
    pub(crate) fn class_methods(&self, class: jclass) -> Vec<jmethodID> {
        // `class` is a live class reference (the caller's contract).
        array_from!(self.GetClassMethods(class))
    }

    /// Copy out and free the array a JVMTI function returns through `(count, items)` out-pointers
    /// (empty on error).
    fn take_array<T: Copy>(
        &self,
        call: impl FnOnce(&mut jint, &mut *mut T) -> ErrorCode,
    ) -> Vec<T> {
        let mut count: jint = 0;
        let mut items: *mut T = std::ptr::null_mut();
        let rc = call(&mut count, &mut items);
        if rc != ERROR_NONE || items.is_null() {
            return Vec::new();
        }
        // SAFETY: on success `items` points to `count` values allocated by JVMTI.
        let list = unsafe { std::slice::from_raw_parts(items, count.max(0) as usize) }.to_vec();
        self.deallocate(items as *mut u8);
        list
    }

    /// The class's defining loader (null for the boot loader).
    pub(crate) fn class_loader(&self, class: jclass) -> Result<jobject> {
        let f = function!(self.GetClassLoader)?;
        let mut loader: jobject = std::ptr::null_mut();
        // SAFETY: `class` is a live class reference; `loader` is writable.
        let rc = unsafe { f(self.env, class, &mut loader) };
        check("GetClassLoader", rc).map(|_| loader)
    }
}
