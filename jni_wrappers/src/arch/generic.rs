//! Every other architecture: the calling thread's block read by the C reader (a direct call), and
//! counted wrappers in Rust that call the original and restore the outer mark as they return.

use std::ffi::{c_char, c_void};
use std::sync::atomic::Ordering::Relaxed;

use jni::sys::{
    jarray, jboolean, jbooleanArray, jbyte, jbyteArray, jchar, jcharArray, jclass, jdouble,
    jdoubleArray, jfieldID, jfloat, jfloatArray, jint, jintArray, jlong, jlongArray, jmethodID,
    jobject, jobjectArray, jobjectRefType, jshort, jshortArray, jsize, jstring, jthrowable, jweak,
    JNIEnv, JNINativeMethod, JavaVM,
};

use crate::counted::{originals, CountedIndex, ThreadBlock, COUNTED_COUNT, WITHOUT_BLOCK};
use crate::FUNCTION_COUNT;

extern "C" {
    /// Defined in `csrc/thread_block.c`.
    fn nativeacct_thread_block() -> *const ThreadBlock;
}

/// The calling thread's block, or null (see [`crate::thread_block`]).
#[inline(always)]
pub(crate) fn thread_block() -> *const ThreadBlock {
    // SAFETY: reads the calling thread's own initial-exec TLS word.
    unsafe { nativeacct_thread_block() }
}

/// Count one call of counted function `counted`, mark the thread inside it, run `call`, restore.
#[inline(always)]
fn counted<R>(counted: usize, call: impl FnOnce() -> R) -> R {
    let block = thread_block();
    if block.is_null() {
        WITHOUT_BLOCK[counted].fetch_add(1, Relaxed);
        return call();
    }
    // SAFETY: a published block stays valid until its thread replaces it (see set_thread_block).
    let block = unsafe { &*block };
    let calls = &block.calls[counted];
    calls.store(calls.load(Relaxed).wrapping_add(1), Relaxed);
    let outer = block.inside.load(Relaxed);
    block
        .inside
        .store((FUNCTION_COUNT + counted + 1) as u32, Relaxed);
    let result = call();
    block.inside.store(outer, Relaxed);
    result
}

/// Defines one wrapper per counted function, and [`counted_wrappers`].
macro_rules! rust_wrappers {
    ($( $name:ident($($arg:ident: $ty:ty),*) -> $ret:ty; )*) => {
        #[allow(non_snake_case)]
        mod wrappers {
            use super::*;
            $(
                pub(super) unsafe extern "system" fn $name(env: *mut JNIEnv, $($arg: $ty),*) -> $ret {
                    counted(CountedIndex::$name as usize, || {
                        // SAFETY: `install_counted` saved this entry and wrote the wrapper only if
                        // it was non-null; the arguments are the caller's, forwarded unchanged.
                        unsafe { (originals().$name.unwrap_unchecked())(env, $($arg),*) }
                    })
                }
            )*
        }

        /// The wrapper of each counted function but `FatalError`, by [`CountedIndex`].
        pub(crate) fn counted_wrappers() -> [usize; COUNTED_COUNT - 1] {
            [ $( wrappers::$name as *const () as usize, )* ]
        }
    };
}

crate::for_each_counted_function!(rust_wrappers);
