//! Counting-only wrappers for every JNI function that does not run Java code (137 of them, from
//! `GetVersion` to `GetModule`): each counts the call in the calling thread's [`ThreadBlock`] and
//! marks the thread as inside that function, so that a sampler interrupting the thread knows which
//! JNI function it is in. No clock is read and no hook is called.
//!
//! How a wrapper leaves the mark depends on the architecture (`arch`). On x86-64 it is a stub that
//! counts, marks, notes where the caller's return address lies on the stack and *jumps* to the
//! original, so the original returns straight to the program: the mark stays behind, and
//! [`ThreadBlock::mark`] reads it as live only while that return address is still in its slot
//! with the stack at or below it. Elsewhere the wrapper calls the original and restores the outer
//! mark as it returns.
//!
//! The thread's block is reached through one initial-exec TLS word (`csrc/thread_block.c`): a
//! direct call and one `%fs`-relative load, which is also safe in a signal handler. A thread with no
//! block (the agent has no context for it) is counted in process-wide atomics instead
//! ([`calls_without_block`]), so every call is counted.
//!
//! Arguments, results and any pending exception pass through untouched: a wrapper forwards every
//! argument register to the original saved at install time. None of these functions is variadic.

use std::ffi::{c_char, c_void};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::OnceLock;

use jni::sys::{
    jarray, jboolean, jbooleanArray, jbyte, jbyteArray, jchar, jcharArray, jclass, jdouble,
    jdoubleArray, jfieldID, jfloat, jfloatArray, jint, jintArray, jlong, jlongArray, jmethodID,
    jobject, jobjectArray, jobjectRefType, jshort, jshortArray, jsize, jstring, jthrowable, jweak,
    JNIEnv, JNINativeInterface_, JNINativeMethod, JavaVM,
};

use crate::FUNCTION_COUNT;

/// One thread's counters, owned by the agent's per-thread context and published to the wrappers
/// with [`set_thread_block`]. Only the owning thread writes it (plain load-and-store increments);
/// other threads may read it at any time.
#[repr(C)]
pub struct ThreadBlock {
    /// 0, or 1 + the index (in [`ALL_FUNCTION_NAMES`]) of the counted JNI function the thread is
    /// in now. Nested calls restore the outer value when they return.
    pub inside: AtomicU32,
    /// Free for the owner: the agent keeps its context's address here for its signal handler.
    pub owner: AtomicUsize,
    /// Where a wrapper that leaves its mark behind found the caller's return address (the stack
    /// pointer at its entry); 0 where wrappers restore the outer mark as they return.
    pub return_slot: AtomicUsize,
    /// The return address that was in [`ThreadBlock::return_slot`] then.
    pub return_to: AtomicUsize,
    /// Address of a counter the owner bumps each time its thread enters a native method (the
    /// agent's count of native calls), so that a mark left in one native call never reads as live
    /// in a later one. Points at a zero of its own until [`ThreadBlock::set_entries`].
    pub(crate) entries: AtomicUsize,
    /// That counter's value when the mark was left.
    pub entries_at_mark: AtomicU64,
    /// Calls per counted function, by [`CountedIndex`] (index − [`FUNCTION_COUNT`]).
    pub calls: [AtomicU64; COUNTED_COUNT],
    /// The calls were zeroed as they were taken ([`ThreadBlock::take_calls`]): a reset need not
    /// write all of them again.
    calls_taken: AtomicBool,
}

impl ThreadBlock {
    /// A zeroed block.
    pub fn new() -> ThreadBlock {
        ThreadBlock {
            inside: AtomicU32::new(0),
            owner: AtomicUsize::new(0),
            return_slot: AtomicUsize::new(0),
            return_to: AtomicUsize::new(0),
            entries: AtomicUsize::new(&NO_ENTRIES as *const AtomicU64 as usize),
            entries_at_mark: AtomicU64::new(0),
            calls: std::array::from_fn(|_| AtomicU64::new(0)),
            calls_taken: AtomicBool::new(false),
        }
    }

    /// Zero every counter (for a block reused by another thread).
    pub fn reset(&mut self) {
        *self.inside.get_mut() = 0;
        *self.return_slot.get_mut() = 0;
        *self.return_to.get_mut() = 0;
        *self.entries_at_mark.get_mut() = 0;
        if !std::mem::take(self.calls_taken.get_mut()) {
            for calls in self.calls.iter_mut() {
                *calls.get_mut() = 0;
            }
        }
    }

    /// Hand each counted function's calls to `f` (by counted index) and zero them, once the
    /// owning thread has stopped counting into the block: the read and the zeroing touch the same
    /// cache lines once, where a later [`ThreadBlock::reset`] would write them all again.
    /// Another thread's increment meanwhile would be lost: only for a block no thread counts into.
    pub fn take_calls(&self, mut f: impl FnMut(usize, u64)) {
        for (index, counter) in self.calls.iter().enumerate() {
            let calls = counter.load(Relaxed);
            if calls != 0 {
                counter.store(0, Relaxed);
            }
            f(index, calls);
        }
        self.calls_taken.store(true, Relaxed);
    }
}

/// Deepest stack a JNI function may use below its caller for its mark to be read (bytes): a
/// slot farther above the interrupted stack pointer is taken as another stack's.
const MARK_STACK_REACH: usize = 1 << 20;

/// What [`ThreadBlock::entries`] points at until its owner sets it: never bumped.
static NO_ENTRIES: AtomicU64 = AtomicU64::new(0);

impl ThreadBlock {
    /// Point the block at its owner's count of native-method entries (see `entries`).
    ///
    /// # Safety
    /// `counter` stays valid for as long as this block does (or until the next call).
    pub unsafe fn set_entries(&self, counter: *const AtomicU64) {
        self.entries.store(counter as usize, Relaxed);
    }

    /// On the owning thread (its signal handler): which counted JNI function it is in now, given
    /// its stack pointer `sp`. `read` reads one word of the thread's stack (called at most once,
    /// on an address within a MiB above `sp`).
    pub fn mark(&self, sp: usize, read: impl FnOnce(usize) -> StackWord) -> Mark {
        let inside = self.inside.load(Relaxed);
        let slot = self.return_slot.load(Relaxed);
        if inside == 0 {
            return Mark::Outside;
        }
        if slot == 0 {
            return Mark::Inside(inside);
        }
        // SAFETY: `entries` points at NO_ENTRIES or at a counter that outlives the block (the
        // contract of `set_entries`).
        let entries = unsafe { &*(self.entries.load(Relaxed) as *const AtomicU64) };
        // Left in an earlier native call, or returned (the stack rose past the slot), or on
        // another stack.
        if entries.load(Relaxed) != self.entries_at_mark.load(Relaxed)
            || sp > slot
            || slot - sp > MARK_STACK_REACH
        {
            return Mark::Outside;
        }
        // As deep again: still inside only if the caller's return address is still there.
        match read(slot) {
            StackWord::Holds(word) if word == self.return_to.load(Relaxed) => Mark::Inside(inside),
            StackWord::Holds(_) | StackWord::Unmapped => Mark::Outside,
            StackWord::Unreadable => Mark::Unverified(inside),
        }
    }
}

/// What a read of one stack word found (see [`ThreadBlock::mark`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StackWord {
    /// The word there.
    Holds(usize),
    /// Nothing is mapped there: not a live stack slot.
    Unmapped,
    /// The read was refused (e.g. by a seccomp profile).
    Unreadable,
}

/// Which counted JNI function a thread is in: 1 + its index among every JNI function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mark {
    /// In none.
    Outside,
    /// In this one.
    Inside(u32),
    /// The last one it entered, still open as far as could be checked without reading the stack.
    Unverified(u32),
}

impl Default for ThreadBlock {
    fn default() -> Self {
        ThreadBlock::new()
    }
}

extern "C" {
    fn nativeacct_set_thread_block(block: *const ThreadBlock);
}

/// Publish `block` as the calling thread's (null: none).
///
/// # Safety
/// A non-null `block` must stay valid until it is replaced or the thread ends: the wrappers and
/// signal handlers on this thread dereference it.
pub unsafe fn set_thread_block(block: *const ThreadBlock) {
    // SAFETY: writes the calling thread's own TLS word; the caller keeps the block valid.
    unsafe { nativeacct_set_thread_block(block) }
}

/// The calling thread's block, or null. Async-signal-safe (one TLS load, no allocation). Read
/// inline where the architecture allows it (`arch`), since every counted wrapper reads it.
#[inline(always)]
pub fn thread_block() -> *const ThreadBlock {
    crate::arch::thread_block()
}

pub(crate) static WITHOUT_BLOCK: [AtomicU64; COUNTED_COUNT] =
    [const { AtomicU64::new(0) }; COUNTED_COUNT];

/// Calls per counted function made by threads that had no block (process-wide).
pub fn calls_without_block(counted: usize) -> u64 {
    WITHOUT_BLOCK.get(counted).map_or(0, |c| c.load(Relaxed))
}

/// A copy of the JVM's table taken at install time: the originals of the counted functions.
struct Originals(JNINativeInterface_);
// SAFETY: written once before being shared, then only read; the function pointers are code
// addresses and the reserved pointers are never dereferenced.
unsafe impl Sync for Originals {}
// SAFETY: as above.
unsafe impl Send for Originals {}

static ORIGINALS: OnceLock<Originals> = OnceLock::new();

/// The originals' code addresses by [`CountedIndex`], for the wrappers that jump to them (0 until
/// installed; a wrapper is written into the table only over a non-null original).
pub(crate) static ORIGINAL_ENTRIES: [AtomicUsize; COUNTED_COUNT] =
    [const { AtomicUsize::new(0) }; COUNTED_COUNT];

#[inline(always)]
pub(crate) fn originals() -> &'static JNINativeInterface_ {
    match ORIGINALS.get() {
        Some(saved) => &saved.0,
        None => crate::wrapper_called_before_install(),
    }
}

/// Defines the counted functions from one table of `name(args) -> ret;` rows in JNI table order.
macro_rules! counted_functions {
    ($( $name:ident($($arg:ident: $ty:ty),*) -> $ret:ty; )*) => {
        /// The counted JNI functions; the discriminant is the position in [`COUNTED_NAMES`].
        #[repr(u32)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[allow(missing_docs, non_camel_case_types)] // each variant is the JNI function of that name
        pub enum CountedIndex { $( $name, )* FatalError }

        /// Names of the counted JNI functions, by [`CountedIndex`].
        pub static COUNTED_NAMES: [&str; COUNTED_COUNT] = [ $( stringify!($name), )* "FatalError" ];

        fn write_counted(table: &mut JNINativeInterface_) {
            let wrappers = crate::arch::counted_wrappers();
            $( if table.$name.is_some() {
                // SAFETY: the architecture's wrapper for this function: it takes the function's
                // arguments in the same registers and returns what the original does.
                table.$name = Some(unsafe {
                    std::mem::transmute::<usize, unsafe extern "system" fn(*mut JNIEnv, $($ty),*) -> $ret>(
                        wrappers[CountedIndex::$name as usize],
                    )
                });
            } )*
            if table.FatalError.is_some() { table.FatalError = Some(fatal_error); }
        }

        fn restore_counted(table: &mut JNINativeInterface_, saved: &JNINativeInterface_) {
            $( if saved.$name.is_some() { table.$name = saved.$name; } )*
            if saved.FatalError.is_some() { table.FatalError = saved.FatalError; }
        }

        /// The code address stored in `table` for counted function `counted` (null if empty).
        pub fn counted_entry(table: &JNINativeInterface_, counted: CountedIndex) -> *const c_void {
            match counted {
                $( CountedIndex::$name => table.$name.map_or(std::ptr::null(), |f| f as *const c_void), )*
                CountedIndex::FatalError => table.FatalError.map_or(std::ptr::null(), |f| f as *const c_void),
            }
        }
    };
}

/// `FatalError` does not return, so it is written out: counted and marked, never restored.
unsafe extern "system" fn fatal_error(env: *mut JNIEnv, msg: *const c_char) -> ! {
    let index = CountedIndex::FatalError as usize;
    let block = thread_block();
    if block.is_null() {
        WITHOUT_BLOCK[index].fetch_add(1, Relaxed);
    } else {
        // SAFETY: as in `counted`.
        let block = unsafe { &*block };
        block.calls[index].fetch_add(1, Relaxed);
        block
            .inside
            .store((FUNCTION_COUNT + index + 1) as u32, Relaxed);
    }
    // SAFETY: installed only over a non-null original; the arguments are the caller's.
    unsafe { (originals().FatalError.unwrap_unchecked())(env, msg) }
}

/// Calls `$callback!` with the table of the counted JNI functions but `FatalError` (which does not
/// return): one `Name(arg: Type, ...) -> Return;` row each, in JNI table order, `env` left out.
/// Exported for the crate's tests, which define fakes with the same signatures from it.
#[doc(hidden)]
#[macro_export]
macro_rules! for_each_counted_function {
    ($callback:ident) => {
        $callback! {
            GetVersion() -> jint;
            DefineClass(name: *const c_char, loader: jobject, buf: *const jbyte, len: jsize) -> jclass;
            FindClass(name: *const c_char) -> jclass;
            FromReflectedMethod(method: jobject) -> jmethodID;
            FromReflectedField(field: jobject) -> jfieldID;
            ToReflectedMethod(cls: jclass, methodID: jmethodID, isStatic: jboolean) -> jobject;
            GetSuperclass(sub: jclass) -> jclass;
            IsAssignableFrom(sub: jclass, sup: jclass) -> jboolean;
            ToReflectedField(cls: jclass, fieldID: jfieldID, isStatic: jboolean) -> jobject;
            Throw(obj: jthrowable) -> jint;
            ThrowNew(clazz: jclass, msg: *const c_char) -> jint;
            ExceptionOccurred() -> jthrowable;
            ExceptionDescribe() -> ();
            ExceptionClear() -> ();
            PushLocalFrame(capacity: jint) -> jint;
            PopLocalFrame(result: jobject) -> jobject;
            NewGlobalRef(lobj: jobject) -> jobject;
            DeleteGlobalRef(gref: jobject) -> ();
            DeleteLocalRef(obj: jobject) -> ();
            IsSameObject(obj1: jobject, obj2: jobject) -> jboolean;
            NewLocalRef(ref_: jobject) -> jobject;
            EnsureLocalCapacity(capacity: jint) -> jint;
            AllocObject(clazz: jclass) -> jobject;
            GetObjectClass(obj: jobject) -> jclass;
            IsInstanceOf(obj: jobject, clazz: jclass) -> jboolean;
            GetMethodID(clazz: jclass, name: *const c_char, sig: *const c_char) -> jmethodID;
            GetFieldID(clazz: jclass, name: *const c_char, sig: *const c_char) -> jfieldID;
            GetObjectField(obj: jobject, fieldID: jfieldID) -> jobject;
            GetBooleanField(obj: jobject, fieldID: jfieldID) -> jboolean;
            GetByteField(obj: jobject, fieldID: jfieldID) -> jbyte;
            GetCharField(obj: jobject, fieldID: jfieldID) -> jchar;
            GetShortField(obj: jobject, fieldID: jfieldID) -> jshort;
            GetIntField(obj: jobject, fieldID: jfieldID) -> jint;
            GetLongField(obj: jobject, fieldID: jfieldID) -> jlong;
            GetFloatField(obj: jobject, fieldID: jfieldID) -> jfloat;
            GetDoubleField(obj: jobject, fieldID: jfieldID) -> jdouble;
            SetObjectField(obj: jobject, fieldID: jfieldID, val: jobject) -> ();
            SetBooleanField(obj: jobject, fieldID: jfieldID, val: jboolean) -> ();
            SetByteField(obj: jobject, fieldID: jfieldID, val: jbyte) -> ();
            SetCharField(obj: jobject, fieldID: jfieldID, val: jchar) -> ();
            SetShortField(obj: jobject, fieldID: jfieldID, val: jshort) -> ();
            SetIntField(obj: jobject, fieldID: jfieldID, val: jint) -> ();
            SetLongField(obj: jobject, fieldID: jfieldID, val: jlong) -> ();
            SetFloatField(obj: jobject, fieldID: jfieldID, val: jfloat) -> ();
            SetDoubleField(obj: jobject, fieldID: jfieldID, val: jdouble) -> ();
            GetStaticMethodID(clazz: jclass, name: *const c_char, sig: *const c_char) -> jmethodID;
            GetStaticFieldID(clazz: jclass, name: *const c_char, sig: *const c_char) -> jfieldID;
            GetStaticObjectField(clazz: jclass, fieldID: jfieldID) -> jobject;
            GetStaticBooleanField(clazz: jclass, fieldID: jfieldID) -> jboolean;
            GetStaticByteField(clazz: jclass, fieldID: jfieldID) -> jbyte;
            GetStaticCharField(clazz: jclass, fieldID: jfieldID) -> jchar;
            GetStaticShortField(clazz: jclass, fieldID: jfieldID) -> jshort;
            GetStaticIntField(clazz: jclass, fieldID: jfieldID) -> jint;
            GetStaticLongField(clazz: jclass, fieldID: jfieldID) -> jlong;
            GetStaticFloatField(clazz: jclass, fieldID: jfieldID) -> jfloat;
            GetStaticDoubleField(clazz: jclass, fieldID: jfieldID) -> jdouble;
            SetStaticObjectField(clazz: jclass, fieldID: jfieldID, value: jobject) -> ();
            SetStaticBooleanField(clazz: jclass, fieldID: jfieldID, value: jboolean) -> ();
            SetStaticByteField(clazz: jclass, fieldID: jfieldID, value: jbyte) -> ();
            SetStaticCharField(clazz: jclass, fieldID: jfieldID, value: jchar) -> ();
            SetStaticShortField(clazz: jclass, fieldID: jfieldID, value: jshort) -> ();
            SetStaticIntField(clazz: jclass, fieldID: jfieldID, value: jint) -> ();
            SetStaticLongField(clazz: jclass, fieldID: jfieldID, value: jlong) -> ();
            SetStaticFloatField(clazz: jclass, fieldID: jfieldID, value: jfloat) -> ();
            SetStaticDoubleField(clazz: jclass, fieldID: jfieldID, value: jdouble) -> ();
            NewString(unicode: *const jchar, len: jsize) -> jstring;
            GetStringLength(str: jstring) -> jsize;
            GetStringChars(str: jstring, isCopy: *mut jboolean) -> *const jchar;
            ReleaseStringChars(str: jstring, chars: *const jchar) -> ();
            NewStringUTF(utf: *const c_char) -> jstring;
            GetStringUTFLength(str: jstring) -> jsize;
            GetStringUTFChars(str: jstring, isCopy: *mut jboolean) -> *const c_char;
            ReleaseStringUTFChars(str: jstring, chars: *const c_char) -> ();
            GetArrayLength(array: jarray) -> jsize;
            NewObjectArray(len: jsize, clazz: jclass, init: jobject) -> jobjectArray;
            GetObjectArrayElement(array: jobjectArray, index: jsize) -> jobject;
            SetObjectArrayElement(array: jobjectArray, index: jsize, val: jobject) -> ();
            NewBooleanArray(len: jsize) -> jbooleanArray;
            NewByteArray(len: jsize) -> jbyteArray;
            NewCharArray(len: jsize) -> jcharArray;
            NewShortArray(len: jsize) -> jshortArray;
            NewIntArray(len: jsize) -> jintArray;
            NewLongArray(len: jsize) -> jlongArray;
            NewFloatArray(len: jsize) -> jfloatArray;
            NewDoubleArray(len: jsize) -> jdoubleArray;
            GetBooleanArrayElements(array: jbooleanArray, isCopy: *mut jboolean) -> *mut jboolean;
            GetByteArrayElements(array: jbyteArray, isCopy: *mut jboolean) -> *mut jbyte;
            GetCharArrayElements(array: jcharArray, isCopy: *mut jboolean) -> *mut jchar;
            GetShortArrayElements(array: jshortArray, isCopy: *mut jboolean) -> *mut jshort;
            GetIntArrayElements(array: jintArray, isCopy: *mut jboolean) -> *mut jint;
            GetLongArrayElements(array: jlongArray, isCopy: *mut jboolean) -> *mut jlong;
            GetFloatArrayElements(array: jfloatArray, isCopy: *mut jboolean) -> *mut jfloat;
            GetDoubleArrayElements(array: jdoubleArray, isCopy: *mut jboolean) -> *mut jdouble;
            ReleaseBooleanArrayElements(array: jbooleanArray, elems: *mut jboolean, mode: jint) -> ();
            ReleaseByteArrayElements(array: jbyteArray, elems: *mut jbyte, mode: jint) -> ();
            ReleaseCharArrayElements(array: jcharArray, elems: *mut jchar, mode: jint) -> ();
            ReleaseShortArrayElements(array: jshortArray, elems: *mut jshort, mode: jint) -> ();
            ReleaseIntArrayElements(array: jintArray, elems: *mut jint, mode: jint) -> ();
            ReleaseLongArrayElements(array: jlongArray, elems: *mut jlong, mode: jint) -> ();
            ReleaseFloatArrayElements(array: jfloatArray, elems: *mut jfloat, mode: jint) -> ();
            ReleaseDoubleArrayElements(array: jdoubleArray, elems: *mut jdouble, mode: jint) -> ();
            GetBooleanArrayRegion(array: jbooleanArray, start: jsize, l: jsize, buf: *mut jboolean) -> ();
            GetByteArrayRegion(array: jbyteArray, start: jsize, len: jsize, buf: *mut jbyte) -> ();
            GetCharArrayRegion(array: jcharArray, start: jsize, len: jsize, buf: *mut jchar) -> ();
            GetShortArrayRegion(array: jshortArray, start: jsize, len: jsize, buf: *mut jshort) -> ();
            GetIntArrayRegion(array: jintArray, start: jsize, len: jsize, buf: *mut jint) -> ();
            GetLongArrayRegion(array: jlongArray, start: jsize, len: jsize, buf: *mut jlong) -> ();
            GetFloatArrayRegion(array: jfloatArray, start: jsize, len: jsize, buf: *mut jfloat) -> ();
            GetDoubleArrayRegion(array: jdoubleArray, start: jsize, len: jsize, buf: *mut jdouble) -> ();
            SetBooleanArrayRegion(array: jbooleanArray, start: jsize, l: jsize, buf: *const jboolean) -> ();
            SetByteArrayRegion(array: jbyteArray, start: jsize, len: jsize, buf: *const jbyte) -> ();
            SetCharArrayRegion(array: jcharArray, start: jsize, len: jsize, buf: *const jchar) -> ();
            SetShortArrayRegion(array: jshortArray, start: jsize, len: jsize, buf: *const jshort) -> ();
            SetIntArrayRegion(array: jintArray, start: jsize, len: jsize, buf: *const jint) -> ();
            SetLongArrayRegion(array: jlongArray, start: jsize, len: jsize, buf: *const jlong) -> ();
            SetFloatArrayRegion(array: jfloatArray, start: jsize, len: jsize, buf: *const jfloat) -> ();
            SetDoubleArrayRegion(array: jdoubleArray, start: jsize, len: jsize, buf: *const jdouble) -> ();
            RegisterNatives(clazz: jclass, methods: *const JNINativeMethod, nMethods: jint) -> jint;
            UnregisterNatives(clazz: jclass) -> jint;
            MonitorEnter(obj: jobject) -> jint;
            MonitorExit(obj: jobject) -> jint;
            GetJavaVM(vm: *mut *mut JavaVM) -> jint;
            GetStringRegion(str: jstring, start: jsize, len: jsize, buf: *mut jchar) -> ();
            GetStringUTFRegion(str: jstring, start: jsize, len: jsize, buf: *mut c_char) -> ();
            GetPrimitiveArrayCritical(array: jarray, isCopy: *mut jboolean) -> *mut c_void;
            ReleasePrimitiveArrayCritical(array: jarray, carray: *mut c_void, mode: jint) -> ();
            GetStringCritical(string: jstring, isCopy: *mut jboolean) -> *const jchar;
            ReleaseStringCritical(string: jstring, cstring: *const jchar) -> ();
            NewWeakGlobalRef(obj: jobject) -> jweak;
            DeleteWeakGlobalRef(ref_: jweak) -> ();
            ExceptionCheck() -> jboolean;
            NewDirectByteBuffer(address: *mut c_void, capacity: jlong) -> jobject;
            GetDirectBufferAddress(buf: jobject) -> *mut c_void;
            GetDirectBufferCapacity(buf: jobject) -> jlong;
            GetObjectRefType(obj: jobject) -> jobjectRefType;
            GetModule(clazz: jclass) -> jobject;
        }
    };
}

/// Number of counted (non-upcall) JNI functions.
pub const COUNTED_COUNT: usize = 137;

for_each_counted_function!(counted_functions);

/// Save the originals of the counted functions and, if `write`, put the counting wrappers in `table`.
/// Once per process (later calls change nothing and return false). Empty entries stay empty.
pub(crate) fn install_counted(table: &mut JNINativeInterface_, write: bool) -> bool {
    if ORIGINALS.set(Originals(*table)).is_err() {
        return false;
    }
    for counted in CountedIndex::all() {
        let entry = counted_entry(table, counted) as usize;
        ORIGINAL_ENTRIES[counted as usize].store(entry, Relaxed);
    }
    if write {
        write_counted(table);
    }
    true
}

/// Write the saved originals of the counted functions back into `table`.
pub(crate) fn restore_counted_originals(table: &mut JNINativeInterface_) -> bool {
    let Some(saved) = ORIGINALS.get() else {
        return false;
    };
    restore_counted(table, &saved.0);
    true
}

/// The JVM's original entry of counted function `counted`, once installed.
pub fn original_counted_entry(counted: CountedIndex) -> Option<*const c_void> {
    ORIGINALS
        .get()
        .map(|saved| counted_entry(&saved.0, counted))
}

impl CountedIndex {
    /// Every counted function, in table order.
    pub fn all() -> impl Iterator<Item = CountedIndex> {
        (0..COUNTED_COUNT as u32).map(|i| {
            // SAFETY: `CountedIndex` is `repr(u32)` with the discriminants 0..COUNTED_COUNT.
            unsafe { std::mem::transmute::<u32, CountedIndex>(i) }
        })
    }

    /// The JNI function's name.
    pub fn name(self) -> &'static str {
        COUNTED_NAMES[self as usize]
    }

    /// Its index among every JNI function ([`ALL_FUNCTION_NAMES`]).
    pub const fn function_index(self) -> usize {
        FUNCTION_COUNT + self as usize
    }
}
