//! Counting wrappers for the 93 JNI functions that run Java code: the 90 `Call<Type>Method<style>`
//! functions and `NewObject`, `NewObjectA`, `NewObjectV`.
//!
//! INTERFACE CONTRACT (used by the agent in `src/`): keep these names and signatures stable; extend freely.
//! Each wrapper calls `hooks.begin(index)`, then the original function, then `hooks.end(index)`, where
//! `index` is the function's position in [`FUNCTION_NAMES`]. Pending exceptions, null method ids and
//! every argument pass through untouched.

/// Number of wrapped JNI functions.
pub const FUNCTION_COUNT: usize = 93;

/// Callbacks into the agent. Must never unwind.
#[derive(Clone, Copy)]
pub struct Hooks {
    pub begin: extern "C" fn(function_index: u32),
    pub end: extern "C" fn(function_index: u32),
}

/// JNI function names in wrapper-index order (stub: filled in by the jni_wrappers work).
pub static FUNCTION_NAMES: [&str; FUNCTION_COUNT] = [""; FUNCTION_COUNT];

/// Save the original entries of `table` and overwrite them with the counting wrappers.
///
/// The caller fetched `table` with JVMTI `GetJNIFunctionTable` and passes it to `SetJNIFunctionTable`
/// afterwards. Can be called once per process; later calls return false and change nothing.
///
/// # Safety
/// `table` must point to a valid, writable JNI function table.
pub unsafe fn install(_table: *mut jni::sys::JNINativeInterface_, _hooks: Hooks) -> bool {
    false
}
