//! The raw C layout of JVMTI, as `jvmti.h` of JDK 11 to 25 defines it: the function table with one
//! named field per function, the structs the agent passes, and the event and capability numbers.
//!
//! Nothing here calls the VM; [`super::Jvmti`] does, through these types.

use jni::sys::{
    jboolean, jclass, jdouble, jfieldID, jfloat, jint, jlong, jmethodID, jobject, jvalue, JNIEnv,
    JNINativeInterface_,
};
use std::ffi::{c_char, c_uchar, c_uint, c_void};

/// A `jthread`: a local or global reference to a `java.lang.Thread`.
pub(crate) type JThread = jobject;

/// A `jvmtiEnv*`: a pointer to the VM's pointer to its function table.
pub(crate) type RawEnv = *mut *const Interface;

/// A `jvmtiError` code.
pub(crate) type ErrorCode = c_uint;

pub(crate) const VERSION_1_2: jint = 0x3001_0200;
pub(crate) const ERROR_NONE: ErrorCode = 0;
pub(crate) const ERROR_ILLEGAL_ARGUMENT: ErrorCode = 103;
/// Returned by the wrappers when the VM's table has no function in that slot (an older JDK).
pub(crate) const ERROR_NOT_AVAILABLE: ErrorCode = 98;

/// Declares [`Interface`] from rows `SLOT Name(params);` (the env argument is implied, every function
/// returns a `jvmtiError`) and `SLOT reservedSLOT;`, and, for the layout test, each field's slot and
/// offset. The one C-variadic function, SetEventNotificationMode, is written with its `...`.
macro_rules! function_table {
    ($(
        $slot:literal $name:ident $(( $($param:ident: $ty:ty),* $(, ...)? ))?;
    )*) => {
        /// `jvmtiInterface_1_`: the VM's JVMTI function table, one field per slot of `jvmti.h`.
        /// A reserved slot, or one that only a newer JDK fills, holds null.
        #[repr(C)]
        #[allow(non_snake_case)]
        pub(crate) struct Interface {
            $(
                pub(crate) $name: function_table!(@type $name $(( $($param: $ty),* ))?),
            )*
        }

        /// `(slot, field name, byte offset)` of every field, in slot order.
        #[cfg(test)]
        pub(crate) const LAYOUT: &[(usize, &str, usize)] = &[
            $(($slot, stringify!($name), std::mem::offset_of!(Interface, $name)),)*
        ];
    };
    (@type $name:ident) => { *const c_void };
    (@type SetEventNotificationMode ( $($param:ident: $ty:ty),* )) => {
        Option<unsafe extern "C" fn(env: RawEnv, $($param: $ty),* , ...) -> ErrorCode>
    };
    (@type $name:ident ( $($param:ident: $ty:ty),* )) => {
        Option<unsafe extern "system" fn(env: RawEnv, $($param: $ty),*) -> ErrorCode>
    };
}

// Enums (jvmtiEvent, jvmtiPhase, ...) are C ints: `c_uint`. Function pointer parameters (heap and
// agent-thread callbacks) and structs the agent never builds are `c_void`.
function_table! {
    1 reserved1;
    2 SetEventNotificationMode(mode: c_uint, event_type: c_uint, event_thread: JThread, ...);
    3 GetAllModules(module_count_ptr: *mut jint, modules_ptr: *mut *mut jobject);
    4 GetAllThreads(threads_count_ptr: *mut jint, threads_ptr: *mut *mut JThread);
    5 SuspendThread(thread: JThread);
    6 ResumeThread(thread: JThread);
    7 StopThread(thread: JThread, exception: jobject);
    8 InterruptThread(thread: JThread);
    9 GetThreadInfo(thread: JThread, info_ptr: *mut ThreadInfo);
    10 GetOwnedMonitorInfo(thread: JThread, owned_monitor_count_ptr: *mut jint, owned_monitors_ptr: *mut *mut jobject);
    11 GetCurrentContendedMonitor(thread: JThread, monitor_ptr: *mut jobject);
    12 RunAgentThread(thread: JThread, proc: *const c_void, arg: *const c_void, priority: jint);
    13 GetTopThreadGroups(group_count_ptr: *mut jint, groups_ptr: *mut *mut jobject);
    14 GetThreadGroupInfo(group: jobject, info_ptr: *mut c_void);
    15 GetThreadGroupChildren(group: jobject, thread_count_ptr: *mut jint, threads_ptr: *mut *mut JThread, group_count_ptr: *mut jint, groups_ptr: *mut *mut jobject);
    16 GetFrameCount(thread: JThread, count_ptr: *mut jint);
    17 GetThreadState(thread: JThread, thread_state_ptr: *mut jint);
    18 GetCurrentThread(thread_ptr: *mut JThread);
    19 GetFrameLocation(thread: JThread, depth: jint, method_ptr: *mut jmethodID, location_ptr: *mut jlong);
    20 NotifyFramePop(thread: JThread, depth: jint);
    21 GetLocalObject(thread: JThread, depth: jint, slot: jint, value_ptr: *mut jobject);
    22 GetLocalInt(thread: JThread, depth: jint, slot: jint, value_ptr: *mut jint);
    23 GetLocalLong(thread: JThread, depth: jint, slot: jint, value_ptr: *mut jlong);
    24 GetLocalFloat(thread: JThread, depth: jint, slot: jint, value_ptr: *mut jfloat);
    25 GetLocalDouble(thread: JThread, depth: jint, slot: jint, value_ptr: *mut jdouble);
    26 SetLocalObject(thread: JThread, depth: jint, slot: jint, value: jobject);
    27 SetLocalInt(thread: JThread, depth: jint, slot: jint, value: jint);
    28 SetLocalLong(thread: JThread, depth: jint, slot: jint, value: jlong);
    29 SetLocalFloat(thread: JThread, depth: jint, slot: jint, value: jfloat);
    30 SetLocalDouble(thread: JThread, depth: jint, slot: jint, value: jdouble);
    31 CreateRawMonitor(name: *const c_char, monitor_ptr: *mut *mut c_void);
    32 DestroyRawMonitor(monitor: *mut c_void);
    33 RawMonitorEnter(monitor: *mut c_void);
    34 RawMonitorExit(monitor: *mut c_void);
    35 RawMonitorWait(monitor: *mut c_void, millis: jlong);
    36 RawMonitorNotify(monitor: *mut c_void);
    37 RawMonitorNotifyAll(monitor: *mut c_void);
    38 SetBreakpoint(method: jmethodID, location: jlong);
    39 ClearBreakpoint(method: jmethodID, location: jlong);
    40 GetNamedModule(class_loader: jobject, package_name: *const c_char, module_ptr: *mut jobject);
    41 SetFieldAccessWatch(klass: jclass, field: jfieldID);
    42 ClearFieldAccessWatch(klass: jclass, field: jfieldID);
    43 SetFieldModificationWatch(klass: jclass, field: jfieldID);
    44 ClearFieldModificationWatch(klass: jclass, field: jfieldID);
    45 IsModifiableClass(klass: jclass, is_modifiable_class_ptr: *mut jboolean);
    46 Allocate(size: jlong, mem_ptr: *mut *mut c_uchar);
    47 Deallocate(mem: *mut c_uchar);
    48 GetClassSignature(klass: jclass, signature_ptr: *mut *mut c_char, generic_ptr: *mut *mut c_char);
    49 GetClassStatus(klass: jclass, status_ptr: *mut jint);
    50 GetSourceFileName(klass: jclass, source_name_ptr: *mut *mut c_char);
    51 GetClassModifiers(klass: jclass, modifiers_ptr: *mut jint);
    52 GetClassMethods(klass: jclass, method_count_ptr: *mut jint, methods_ptr: *mut *mut jmethodID);
    53 GetClassFields(klass: jclass, field_count_ptr: *mut jint, fields_ptr: *mut *mut jfieldID);
    54 GetImplementedInterfaces(klass: jclass, interface_count_ptr: *mut jint, interfaces_ptr: *mut *mut jclass);
    55 IsInterface(klass: jclass, is_interface_ptr: *mut jboolean);
    56 IsArrayClass(klass: jclass, is_array_class_ptr: *mut jboolean);
    57 GetClassLoader(klass: jclass, classloader_ptr: *mut jobject);
    58 GetObjectHashCode(object: jobject, hash_code_ptr: *mut jint);
    59 GetObjectMonitorUsage(object: jobject, info_ptr: *mut c_void);
    60 GetFieldName(klass: jclass, field: jfieldID, name_ptr: *mut *mut c_char, signature_ptr: *mut *mut c_char, generic_ptr: *mut *mut c_char);
    61 GetFieldDeclaringClass(klass: jclass, field: jfieldID, declaring_class_ptr: *mut jclass);
    62 GetFieldModifiers(klass: jclass, field: jfieldID, modifiers_ptr: *mut jint);
    63 IsFieldSynthetic(klass: jclass, field: jfieldID, is_synthetic_ptr: *mut jboolean);
    64 GetMethodName(method: jmethodID, name_ptr: *mut *mut c_char, signature_ptr: *mut *mut c_char, generic_ptr: *mut *mut c_char);
    65 GetMethodDeclaringClass(method: jmethodID, declaring_class_ptr: *mut jclass);
    66 GetMethodModifiers(method: jmethodID, modifiers_ptr: *mut jint);
    67 ClearAllFramePops(thread: JThread);
    68 GetMaxLocals(method: jmethodID, max_ptr: *mut jint);
    69 GetArgumentsSize(method: jmethodID, size_ptr: *mut jint);
    70 GetLineNumberTable(method: jmethodID, entry_count_ptr: *mut jint, table_ptr: *mut *mut c_void);
    71 GetMethodLocation(method: jmethodID, start_location_ptr: *mut jlong, end_location_ptr: *mut jlong);
    72 GetLocalVariableTable(method: jmethodID, entry_count_ptr: *mut jint, table_ptr: *mut *mut c_void);
    73 SetNativeMethodPrefix(prefix: *const c_char);
    74 SetNativeMethodPrefixes(prefix_count: jint, prefixes: *mut *mut c_char);
    75 GetBytecodes(method: jmethodID, bytecode_count_ptr: *mut jint, bytecodes_ptr: *mut *mut c_uchar);
    76 IsMethodNative(method: jmethodID, is_native_ptr: *mut jboolean);
    77 IsMethodSynthetic(method: jmethodID, is_synthetic_ptr: *mut jboolean);
    78 GetLoadedClasses(class_count_ptr: *mut jint, classes_ptr: *mut *mut jclass);
    79 GetClassLoaderClasses(initiating_loader: jobject, class_count_ptr: *mut jint, classes_ptr: *mut *mut jclass);
    80 PopFrame(thread: JThread);
    81 ForceEarlyReturnObject(thread: JThread, value: jobject);
    82 ForceEarlyReturnInt(thread: JThread, value: jint);
    83 ForceEarlyReturnLong(thread: JThread, value: jlong);
    84 ForceEarlyReturnFloat(thread: JThread, value: jfloat);
    85 ForceEarlyReturnDouble(thread: JThread, value: jdouble);
    86 ForceEarlyReturnVoid(thread: JThread);
    87 RedefineClasses(class_count: jint, class_definitions: *const c_void);
    88 GetVersionNumber(version_ptr: *mut jint);
    89 GetCapabilities(capabilities_ptr: *mut Capabilities);
    90 GetSourceDebugExtension(klass: jclass, source_debug_extension_ptr: *mut *mut c_char);
    91 IsMethodObsolete(method: jmethodID, is_obsolete_ptr: *mut jboolean);
    92 SuspendThreadList(request_count: jint, request_list: *const JThread, results: *mut ErrorCode);
    93 ResumeThreadList(request_count: jint, request_list: *const JThread, results: *mut ErrorCode);
    94 AddModuleReads(module: jobject, to_module: jobject);
    95 AddModuleExports(module: jobject, pkg_name: *const c_char, to_module: jobject);
    96 AddModuleOpens(module: jobject, pkg_name: *const c_char, to_module: jobject);
    97 AddModuleUses(module: jobject, service: jclass);
    98 AddModuleProvides(module: jobject, service: jclass, impl_class: jclass);
    99 IsModifiableModule(module: jobject, is_modifiable_module_ptr: *mut jboolean);
    100 GetAllStackTraces(max_frame_count: jint, stack_info_ptr: *mut *mut c_void, thread_count_ptr: *mut jint);
    101 GetThreadListStackTraces(thread_count: jint, thread_list: *const JThread, max_frame_count: jint, stack_info_ptr: *mut *mut c_void);
    102 GetThreadLocalStorage(thread: JThread, data_ptr: *mut *mut c_void);
    103 SetThreadLocalStorage(thread: JThread, data: *const c_void);
    104 GetStackTrace(thread: JThread, start_depth: jint, max_frame_count: jint, frame_buffer: *mut FrameInfo, count_ptr: *mut jint);
    105 reserved105;
    106 GetTag(object: jobject, tag_ptr: *mut jlong);
    107 SetTag(object: jobject, tag: jlong);
    108 ForceGarbageCollection();
    109 IterateOverObjectsReachableFromObject(object: jobject, object_reference_callback: *const c_void, user_data: *const c_void);
    110 IterateOverReachableObjects(heap_root_callback: *const c_void, stack_ref_callback: *const c_void, object_ref_callback: *const c_void, user_data: *const c_void);
    111 IterateOverHeap(object_filter: c_uint, heap_object_callback: *const c_void, user_data: *const c_void);
    112 IterateOverInstancesOfClass(klass: jclass, object_filter: c_uint, heap_object_callback: *const c_void, user_data: *const c_void);
    113 reserved113;
    114 GetObjectsWithTags(tag_count: jint, tags: *const jlong, count_ptr: *mut jint, object_result_ptr: *mut *mut jobject, tag_result_ptr: *mut *mut jlong);
    115 FollowReferences(heap_filter: jint, klass: jclass, initial_object: jobject, callbacks: *const c_void, user_data: *const c_void);
    116 IterateThroughHeap(heap_filter: jint, klass: jclass, callbacks: *const c_void, user_data: *const c_void);
    117 reserved117;
    118 SuspendAllVirtualThreads(except_count: jint, except_list: *const JThread);
    119 ResumeAllVirtualThreads(except_count: jint, except_list: *const JThread);
    120 SetJNIFunctionTable(function_table: *const JNINativeInterface_);
    121 GetJNIFunctionTable(function_table: *mut *mut JNINativeInterface_);
    122 SetEventCallbacks(callbacks: *const EventCallbacks, size_of_callbacks: jint);
    123 GenerateEvents(event_type: c_uint);
    124 GetExtensionFunctions(extension_count_ptr: *mut jint, extensions: *mut *mut c_void);
    125 GetExtensionEvents(extension_count_ptr: *mut jint, extensions: *mut *mut c_void);
    126 SetExtensionEventCallback(extension_event_index: jint, callback: *const c_void);
    127 DisposeEnvironment();
    128 GetErrorName(error: ErrorCode, name_ptr: *mut *mut c_char);
    129 GetJLocationFormat(format_ptr: *mut c_uint);
    130 GetSystemProperties(count_ptr: *mut jint, property_ptr: *mut *mut *mut c_char);
    131 GetSystemProperty(property: *const c_char, value_ptr: *mut *mut c_char);
    132 SetSystemProperty(property: *const c_char, value_ptr: *const c_char);
    133 GetPhase(phase_ptr: *mut c_uint);
    134 GetCurrentThreadCpuTimerInfo(info_ptr: *mut c_void);
    135 GetCurrentThreadCpuTime(nanos_ptr: *mut jlong);
    136 GetThreadCpuTimerInfo(info_ptr: *mut c_void);
    137 GetThreadCpuTime(thread: JThread, nanos_ptr: *mut jlong);
    138 GetTimerInfo(info_ptr: *mut c_void);
    139 GetTime(nanos_ptr: *mut jlong);
    140 GetPotentialCapabilities(capabilities_ptr: *mut Capabilities);
    141 reserved141;
    142 AddCapabilities(capabilities_ptr: *const Capabilities);
    143 RelinquishCapabilities(capabilities_ptr: *const Capabilities);
    144 GetAvailableProcessors(processor_count_ptr: *mut jint);
    145 GetClassVersionNumbers(klass: jclass, minor_version_ptr: *mut jint, major_version_ptr: *mut jint);
    146 GetConstantPool(klass: jclass, constant_pool_count_ptr: *mut jint, constant_pool_byte_count_ptr: *mut jint, constant_pool_bytes_ptr: *mut *mut c_uchar);
    147 GetEnvironmentLocalStorage(data_ptr: *mut *mut c_void);
    148 SetEnvironmentLocalStorage(data: *const c_void);
    149 AddToBootstrapClassLoaderSearch(segment: *const c_char);
    150 SetVerboseFlag(flag: c_uint, value: jboolean);
    151 AddToSystemClassLoaderSearch(segment: *const c_char);
    152 RetransformClasses(class_count: jint, classes: *const jclass);
    153 GetOwnedMonitorStackDepthInfo(thread: JThread, monitor_info_count_ptr: *mut jint, monitor_info_ptr: *mut *mut c_void);
    154 GetObjectSize(object: jobject, size_ptr: *mut jlong);
    155 GetLocalInstance(thread: JThread, depth: jint, value_ptr: *mut jobject);
    156 SetHeapSamplingInterval(sampling_interval: jint);
}

/// Event numbers (`jvmtiEvent`).
pub(crate) mod event {
    pub(crate) const VM_INIT: u32 = 50;
    pub(crate) const VM_DEATH: u32 = 51;
    pub(crate) const THREAD_START: u32 = 52;
    pub(crate) const THREAD_END: u32 = 53;
    pub(crate) const CLASS_FILE_LOAD_HOOK: u32 = 54;
    pub(crate) const VM_START: u32 = 57;
    pub(crate) const METHOD_ENTRY: u32 = 65;
    pub(crate) const METHOD_EXIT: u32 = 66;
    pub(crate) const NATIVE_METHOD_BIND: u32 = 67;
    pub(crate) const GARBAGE_COLLECTION_START: u32 = 81;
    pub(crate) const GARBAGE_COLLECTION_FINISH: u32 = 82;
    pub(crate) const FIRST: u32 = VM_INIT;
    pub(crate) const LAST: u32 = 84;
}

/// Capability bit positions in `jvmtiCapabilities` (a 128-bit little-endian bit field on Linux).
pub(crate) mod capability {
    pub(crate) const CAN_GENERATE_METHOD_ENTRY_EVENTS: u32 = 24;
    pub(crate) const CAN_GENERATE_METHOD_EXIT_EVENTS: u32 = 25;
    pub(crate) const CAN_GENERATE_ALL_CLASS_HOOK_EVENTS: u32 = 26;
    pub(crate) const CAN_GENERATE_NATIVE_METHOD_BIND_EVENTS: u32 = 30;
    pub(crate) const CAN_GENERATE_GARBAGE_COLLECTION_EVENTS: u32 = 31;
    pub(crate) const CAN_SET_NATIVE_METHOD_PREFIX: u32 = 36;
    pub(crate) const CAN_GENERATE_EARLY_CLASS_HOOK_EVENTS: u32 = 42;
}

/// `jvmtiCapabilities`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub(crate) struct Capabilities {
    words: [u32; 4],
}

impl Capabilities {
    pub(crate) fn with(mut self, bit: u32) -> Self {
        self.words[(bit / 32) as usize] |= 1 << (bit % 32);
        self
    }
}

/// `jvmtiEventCallbacks`: one slot per event number from [`event::FIRST`] to [`event::LAST`].
#[repr(C)]
pub(crate) struct EventCallbacks {
    slots: [*const c_void; (event::LAST - event::FIRST + 1) as usize],
}

impl Default for EventCallbacks {
    fn default() -> Self {
        EventCallbacks {
            slots: [std::ptr::null(); (event::LAST - event::FIRST + 1) as usize],
        }
    }
}

pub(crate) type VmInitFn = unsafe extern "system" fn(RawEnv, *mut JNIEnv, JThread);
pub(crate) type VmDeathFn = unsafe extern "system" fn(RawEnv, *mut JNIEnv);
pub(crate) type VmStartFn = unsafe extern "system" fn(RawEnv, *mut JNIEnv);
pub(crate) type ThreadFn = unsafe extern "system" fn(RawEnv, *mut JNIEnv, JThread);
pub(crate) type ClassFileLoadHookFn = unsafe extern "system" fn(
    RawEnv,
    *mut JNIEnv,
    jclass,
    jobject,
    *const c_char,
    jobject,
    jint,
    *const c_uchar,
    *mut jint,
    *mut *mut c_uchar,
);
pub(crate) type NativeMethodBindFn = unsafe extern "system" fn(
    RawEnv,
    *mut JNIEnv,
    JThread,
    jmethodID,
    *mut c_void,
    *mut *mut c_void,
);
/// GarbageCollectionStart / GarbageCollectionFinish: the env only.
pub(crate) type GcFn = unsafe extern "system" fn(RawEnv);
pub(crate) type MethodEntryFn = unsafe extern "system" fn(RawEnv, *mut JNIEnv, JThread, jmethodID);
pub(crate) type MethodExitFn =
    unsafe extern "system" fn(RawEnv, *mut JNIEnv, JThread, jmethodID, u8, jvalue);

/// One typed setter per event the agent handles: `name(Type) = EVENT`.
macro_rules! event_setters {
    ($($name:ident($ty:ty) = $event:ident;)*) => {
        impl EventCallbacks {
            $(
                pub(crate) fn $name(&mut self, f: $ty) {
                    self.slots[(event::$event - event::FIRST) as usize] = f as *const c_void;
                }
            )*
        }
    };
}

event_setters! {
    vm_init(VmInitFn) = VM_INIT;
    vm_death(VmDeathFn) = VM_DEATH;
    vm_start(VmStartFn) = VM_START;
    thread_start(ThreadFn) = THREAD_START;
    thread_end(ThreadFn) = THREAD_END;
    class_file_load_hook(ClassFileLoadHookFn) = CLASS_FILE_LOAD_HOOK;
    method_entry(MethodEntryFn) = METHOD_ENTRY;
    native_method_bind(NativeMethodBindFn) = NATIVE_METHOD_BIND;
    method_exit(MethodExitFn) = METHOD_EXIT;
    garbage_collection_start(GcFn) = GARBAGE_COLLECTION_START;
    garbage_collection_finish(GcFn) = GARBAGE_COLLECTION_FINISH;
}

/// `jvmtiThreadInfo`.
#[repr(C)]
pub(crate) struct ThreadInfo {
    pub(crate) name: *mut c_char,
    pub(crate) priority: jint,
    pub(crate) is_daemon: jboolean,
    pub(crate) thread_group: jobject,
    pub(crate) context_class_loader: jobject,
}

/// One frame of a JVMTI stack trace (`jvmtiFrameInfo`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub(crate) struct FrameInfo {
    pub(crate) method: jmethodID,
    pub(crate) location: jlong,
}

impl Default for FrameInfo {
    fn default() -> Self {
        FrameInfo {
            method: std::ptr::null_mut(),
            location: 0,
        }
    }
}

#[cfg(test)]
mod tests;
