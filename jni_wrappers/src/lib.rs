//! Counting wrappers for every JNI function. The 93 that run Java code (the 90
//! `Call<Type>Method<style>` functions and `NewObject`, `NewObjectA`, `NewObjectV`) call the
//! agent's hooks around the original; the other 137 (`counted`) only count the call and mark the
//! thread as inside the function, through a per-thread block, with no hook and no clock.
//!
//! INTERFACE CONTRACT (used by the agent in `src/`): keep these names and signatures stable; extend freely.
//! Each wrapper calls `hooks.begin(index)`, then the original function, then `hooks.end(index)`, where
//! `index` is the function's position in [`FUNCTION_NAMES`]. Pending exceptions, null method ids and
//! every argument pass through untouched.
//!
//! # Index order
//! Index = `kind * 30 + return_type * 3 + style` for the 90 `Call*` functions, then `NewObject` = 90,
//! `NewObjectV` = 91, `NewObjectA` = 92, where
//! - kind: 0 = virtual `Call<Type>Method*`, 1 = `CallNonvirtual<Type>Method*`, 2 = `CallStatic<Type>Method*`;
//! - return type, in JNI table order: Object, Boolean, Byte, Char, Short, Int, Long, Float, Double, Void;
//! - style: 0 = variadic (`...`), 1 = `V` (`va_list`), 2 = `A` (`jvalue *`).
//!
//! [`FunctionIndex`], [`CallKind`] and [`ArgStyle`] name these positions.
//!
//! # How the variadic entries work
//! Stable Rust cannot define C-variadic functions, so the 31 variadic entries live in
//! `csrc/variadic_shim.c`. Each one packs its arguments into a `va_list` and calls a Rust function
//! from this crate that fires the hooks with the *variadic* function's index and calls the JVM's
//! original `V` entry. So a program's `CallIntMethod` is counted as `CallIntMethod`, but the JVM
//! itself (and its `hotspot_jni` USDT probes) sees a `CallIntMethodV`: per-family totals match
//! such probes, per-function counts of the variadic and `V` styles do not.
//!
//! # Cost
//! A wrapper is one acquire load of the installed state, the begin hook, the original, the end hook;
//! no locks, no allocation. `cargo bench -p jni_wrappers --bench wrapper_overhead` compares calls
//! through the VM's own entries and through the wrappers on a real HotSpot (about 5 ns for `A`
//! calls and 5-9 ns for variadic/`V` calls on the 2-core dev VM, hooks excluded).
//!
//! # Tests
//! `tests/fake_table.rs` calls all 93 entries of a fake table whose originals (C, `tests/support`)
//! record what they receive; `tests/real_jvm.rs` does the same on HotSpot created in-process,
//! installed through JVMTI like the agent does, under `-Xcheck:jni`.

use std::ffi::c_void;
use std::io::Write;
use std::sync::OnceLock;

use jni::sys::{
    jboolean, jbyte, jchar, jclass, jdouble, jfloat, jint, jlong, jmethodID, jobject, jshort,
    jvalue, va_list, JNIEnv, JNINativeInterface_,
};

mod arch;
mod counted;
pub use counted::{
    calls_without_block, counted_entry, original_counted_entry, set_thread_block, thread_block,
    CountedIndex, Mark, StackWord, ThreadBlock, COUNTED_COUNT, COUNTED_NAMES,
};

/// Number of wrapped JNI functions that run Java code (the hooked ones).
pub const FUNCTION_COUNT: usize = 93;

/// Number of JNI functions wrapped in all: the hooked ones, then the counted ones.
pub const ALL_FUNCTION_COUNT: usize = FUNCTION_COUNT + COUNTED_COUNT;

/// The name of JNI function `index` among all of them: `0..FUNCTION_COUNT` as in
/// [`FUNCTION_NAMES`], then the counted ones as in [`COUNTED_NAMES`].
pub fn any_function_name(index: usize) -> Option<&'static str> {
    FUNCTION_NAMES
        .get(index)
        .or_else(|| COUNTED_NAMES.get(index.wrapping_sub(FUNCTION_COUNT)))
        .copied()
}

/// Callbacks into the agent. Must never unwind.
#[derive(Clone, Copy)]
pub struct Hooks {
    /// Called before the wrapped function runs Java code.
    pub begin: extern "C" fn(function_index: u32),
    /// Called after it returns.
    pub end: extern "C" fn(function_index: u32),
}

/// Which object or class the JNI function runs the Java code on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CallKind {
    /// `Call<Type>Method*`: virtual dispatch on an object.
    Virtual,
    /// `CallNonvirtual<Type>Method*`: a given class's implementation, on an object.
    Nonvirtual,
    /// `CallStatic<Type>Method*`.
    Static,
    /// `NewObject*`: allocation plus a constructor call.
    Constructor,
}

/// How the Java arguments are passed to the JNI function.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ArgStyle {
    /// C `...` (e.g. `CallIntMethod`).
    Variadic,
    /// A `va_list` (e.g. `CallIntMethodV`).
    VaList,
    /// A `const jvalue *` array (e.g. `CallIntMethodA`).
    Array,
}

/// Defines, from one table, everything that depends on the list of wrapped functions: the index
/// enum, the names, the kinds, the wrappers and the code that installs or restores them.
///
/// The table has one row per return type, naming its virtual, nonvirtual and static family
/// (`[variadic V A]` each), then the `NewObject` family. The first rule regroups the rows by kind,
/// which is the index order; the second defines everything from the regrouped families.
macro_rules! wrapped_functions {
    ($first_kind:ident $first_receivers:tt, $second_kind:ident $second_receivers:tt,
     $third_kind:ident $third_receivers:tt {
        $( $ret:ty: [$first:ident $first_v:ident $first_a:ident]
                    [$second:ident $second_v:ident $second_a:ident]
                    [$third:ident $third_v:ident $third_a:ident]; )*
    }
    $($rest:tt)*) => {
        wrapped_functions! {
            $first_kind $first_receivers { $( $first, $first_v, $first_a -> $ret; )* }
            $second_kind $second_receivers { $( $second, $second_v, $second_a -> $ret; )* }
            $third_kind $third_receivers { $( $third, $third_v, $third_a -> $ret; )* }
            $($rest)*
        }
    };
    ($( $kind:ident $receivers:tt {
        $( $variadic:ident, $with_va_list:ident, $with_array:ident -> $ret:ty; )*
    } )*) => {
        /// The wrapped JNI functions; the discriminant is the wrapper index used by [`Hooks`].
        #[repr(u32)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[allow(missing_docs)] // each variant is the JNI function of that name
        pub enum FunctionIndex {
            $( $( $variadic, $with_va_list, $with_array, )* )*
        }

        impl FunctionIndex {
            /// Every function, in index order.
            pub const ALL: [FunctionIndex; FUNCTION_COUNT] = [
                $( $( FunctionIndex::$variadic, FunctionIndex::$with_va_list,
                      FunctionIndex::$with_array, )* )*
            ];
        }

        /// JNI function names in wrapper-index order (see the crate docs for the order).
        pub static FUNCTION_NAMES: [&str; FUNCTION_COUNT] = [
            $( $( stringify!($variadic), stringify!($with_va_list), stringify!($with_array), )* )*
        ];

        /// Kind of each family (three consecutive indices).
        static FAMILY_KINDS: [CallKind; FUNCTION_COUNT / 3] = [
            $( $( family_kind!($kind, $variadic), )* )*
        ];

        $( $( wrapper_family!($receivers, $variadic, $with_va_list, $with_array, $ret); )* )*

        fn all_entries_present(table: &JNINativeInterface_) -> bool {
            true $( $( && table.$variadic.is_some() && table.$with_va_list.is_some()
                       && table.$with_array.is_some() )* )*
        }

        fn write_wrappers(table: &mut JNINativeInterface_) {
            $( $(
                table.$variadic = Some($variadic::variadic_entry);
                table.$with_va_list = Some($variadic::va_list_entry);
                table.$with_array = Some($variadic::array_entry);
            )* )*
        }

        /// The code address stored in `table` for `function` (null if the entry is empty).
        pub fn table_entry(table: &JNINativeInterface_, function: FunctionIndex) -> *const c_void {
            match function {
                $( $(
                    FunctionIndex::$variadic => table.$variadic.map_or(std::ptr::null(), |f| f as *const c_void),
                    FunctionIndex::$with_va_list => table.$with_va_list.map_or(std::ptr::null(), |f| f as *const c_void),
                    FunctionIndex::$with_array => table.$with_array.map_or(std::ptr::null(), |f| f as *const c_void),
                )* )*
            }
        }

        fn write_originals(table: &mut JNINativeInterface_, originals: &JNINativeInterface_) {
            $( $(
                table.$variadic = originals.$variadic;
                table.$with_va_list = originals.$with_va_list;
                table.$with_array = originals.$with_array;
            )* )*
        }
    };
}

/// `CallKind::$kind`; the family name only sets the repetition depth in [`wrapped_functions`].
macro_rules! family_kind {
    ($kind:ident, $family:ident) => {
        CallKind::$kind
    };
}

/// The three wrappers of one family, in a module named after its variadic function.
macro_rules! wrapper_family {
    (($($receiver:ident: $receiver_type:ty),*), $variadic:ident, $with_va_list:ident,
     $with_array:ident, $ret:ty) => {
        #[allow(non_snake_case)]
        mod $variadic {
            use super::*;

            extern "C" {
                /// Defined in `csrc/variadic_shim.c`; forwards to [`variadic_with_va_list`].
                #[link_name = concat!("nativeacct_jni_", stringify!($variadic))]
                pub fn variadic_entry(
                    env: *mut JNIEnv, $($receiver: $receiver_type,)* method_id: jmethodID, ...
                ) -> $ret;
            }

            /// The variadic entry after the shim packed its arguments: counted as the variadic
            /// function, forwarded to the original `V` function.
            #[export_name = concat!("nativeacct_jni_", stringify!($variadic), "_va")]
            pub unsafe extern "C" fn variadic_with_va_list(
                env: *mut JNIEnv, $($receiver: $receiver_type,)* method_id: jmethodID, args: va_list,
            ) -> $ret {
                counted_call!(FunctionIndex::$variadic, $with_va_list,
                              (env, $($receiver,)* method_id, args))
            }

            pub unsafe extern "system" fn va_list_entry(
                env: *mut JNIEnv, $($receiver: $receiver_type,)* method_id: jmethodID, args: va_list,
            ) -> $ret {
                counted_call!(FunctionIndex::$with_va_list, $with_va_list,
                              (env, $($receiver,)* method_id, args))
            }

            pub unsafe extern "system" fn array_entry(
                env: *mut JNIEnv, $($receiver: $receiver_type,)* method_id: jmethodID,
                args: *const jvalue,
            ) -> $ret {
                counted_call!(FunctionIndex::$with_array, $with_array,
                              (env, $($receiver,)* method_id, args))
            }
        }
    };
}

/// begin hook, original entry `$original` with `$args`, end hook; yields the original's result.
macro_rules! counted_call {
    ($index:expr, $original:ident, ($($arg:expr),*)) => {{
        let state = installed_state();
        let index = $index as u32;
        (state.hooks.begin)(index);
        // SAFETY: `install` stored the state only after checking that this entry is non-null, and
        // the saved table is never modified. The arguments are the caller's, forwarded unchanged
        // to the JVM's own implementation of the same (or, for variadic entries, the `V`) function.
        #[allow(clippy::let_unit_value)]
        let result = unsafe { (state.originals.0.$original.unwrap_unchecked())($($arg),*) };
        (state.hooks.end)(index);
        result
    }};
}

wrapped_functions! {
    Virtual (obj: jobject), Nonvirtual (obj: jobject, clazz: jclass), Static (clazz: jclass) {
        jobject: [CallObjectMethod CallObjectMethodV CallObjectMethodA] [CallNonvirtualObjectMethod CallNonvirtualObjectMethodV CallNonvirtualObjectMethodA] [CallStaticObjectMethod CallStaticObjectMethodV CallStaticObjectMethodA];
        jboolean: [CallBooleanMethod CallBooleanMethodV CallBooleanMethodA] [CallNonvirtualBooleanMethod CallNonvirtualBooleanMethodV CallNonvirtualBooleanMethodA] [CallStaticBooleanMethod CallStaticBooleanMethodV CallStaticBooleanMethodA];
        jbyte: [CallByteMethod CallByteMethodV CallByteMethodA] [CallNonvirtualByteMethod CallNonvirtualByteMethodV CallNonvirtualByteMethodA] [CallStaticByteMethod CallStaticByteMethodV CallStaticByteMethodA];
        jchar: [CallCharMethod CallCharMethodV CallCharMethodA] [CallNonvirtualCharMethod CallNonvirtualCharMethodV CallNonvirtualCharMethodA] [CallStaticCharMethod CallStaticCharMethodV CallStaticCharMethodA];
        jshort: [CallShortMethod CallShortMethodV CallShortMethodA] [CallNonvirtualShortMethod CallNonvirtualShortMethodV CallNonvirtualShortMethodA] [CallStaticShortMethod CallStaticShortMethodV CallStaticShortMethodA];
        jint: [CallIntMethod CallIntMethodV CallIntMethodA] [CallNonvirtualIntMethod CallNonvirtualIntMethodV CallNonvirtualIntMethodA] [CallStaticIntMethod CallStaticIntMethodV CallStaticIntMethodA];
        jlong: [CallLongMethod CallLongMethodV CallLongMethodA] [CallNonvirtualLongMethod CallNonvirtualLongMethodV CallNonvirtualLongMethodA] [CallStaticLongMethod CallStaticLongMethodV CallStaticLongMethodA];
        jfloat: [CallFloatMethod CallFloatMethodV CallFloatMethodA] [CallNonvirtualFloatMethod CallNonvirtualFloatMethodV CallNonvirtualFloatMethodA] [CallStaticFloatMethod CallStaticFloatMethodV CallStaticFloatMethodA];
        jdouble: [CallDoubleMethod CallDoubleMethodV CallDoubleMethodA] [CallNonvirtualDoubleMethod CallNonvirtualDoubleMethodV CallNonvirtualDoubleMethodA] [CallStaticDoubleMethod CallStaticDoubleMethodV CallStaticDoubleMethodA];
        (): [CallVoidMethod CallVoidMethodV CallVoidMethodA] [CallNonvirtualVoidMethod CallNonvirtualVoidMethodV CallNonvirtualVoidMethodA] [CallStaticVoidMethod CallStaticVoidMethodV CallStaticVoidMethodA];
    }
    Constructor (clazz: jclass) {
        NewObject, NewObjectV, NewObjectA -> jobject;
    }
}

impl FunctionIndex {
    /// The wrapper index passed to [`Hooks`].
    pub const fn index(self) -> u32 {
        self as u32
    }

    /// The function for a wrapper index, if it is one.
    pub fn from_index(index: u32) -> Option<FunctionIndex> {
        Self::ALL.get(usize::try_from(index).ok()?).copied()
    }

    /// The JNI function name, e.g. `"CallIntMethodV"`.
    pub fn name(self) -> &'static str {
        FUNCTION_NAMES[self as usize]
    }

    /// Which object or class the function runs Java code on.
    pub fn kind(self) -> CallKind {
        FAMILY_KINDS[self as usize / 3]
    }

    /// How the function takes the Java method's arguments.
    pub const fn style(self) -> ArgStyle {
        // Each family is defined as variadic, V, A in that order, from index 0.
        match self as u32 % 3 {
            0 => ArgStyle::Variadic,
            1 => ArgStyle::VaList,
            _ => ArgStyle::Array,
        }
    }
}

/// The wrapper index of a JNI function name, e.g. `index_of("CallIntMethodV") == Some(16)`.
pub fn index_of(name: &str) -> Option<u32> {
    let position = FUNCTION_NAMES.iter().position(|&known| known == name)?;
    u32::try_from(position).ok()
}

/// A copy of the JVM's function table taken at install time; its 93 entries are the originals.
struct SavedTable(JNINativeInterface_);

// SAFETY: the copy is written once before being shared and only read afterwards; its raw
// `reserved*` pointers are never dereferenced, and the function pointers are plain code addresses.
unsafe impl Sync for SavedTable {}
// SAFETY: as above; nothing in the copy is tied to the thread that made it.
unsafe impl Send for SavedTable {}

struct State {
    hooks: Hooks,
    originals: SavedTable,
}

static STATE: OnceLock<State> = OnceLock::new();

#[inline(always)]
fn installed_state() -> &'static State {
    match STATE.get() {
        Some(state) => state,
        None => wrapper_called_before_install(),
    }
}

#[cold]
pub(crate) fn wrapper_called_before_install() -> ! {
    // Only reachable if a wrapper is called without `install`, which the table-based design rules
    // out. There is no original to forward to, so stop instead of returning a made-up value.
    let _ = writeln!(
        std::io::stderr(),
        "nativeacct: JNI wrapper called before install; aborting"
    );
    std::process::abort()
}

/// Save the original entries of `table` and overwrite them with the counting wrappers.
///
/// The caller fetched `table` with JVMTI `GetJNIFunctionTable` and passes it to `SetJNIFunctionTable`
/// afterwards. Can be called once per process; later calls return false and change nothing.
/// Also returns false, changing nothing and leaving a later call free to succeed, if any of the 93
/// entries of `table` is null.
///
/// # Safety
/// `table` must point to a valid, writable JNI function table.
pub unsafe fn install(table: *mut JNINativeInterface_, hooks: Hooks) -> bool {
    // SAFETY: the caller's guarantee, passed on.
    unsafe { install_with(table, hooks, Counting::Every) }
}

/// Which JNI functions [`install_with`] wraps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Counting {
    /// All of them: the 93 that run Java with the hooks, the other 137 counted.
    Every,
    /// Only the 93 that run Java; the other 137 keep their original entries, uncounted, at no
    /// cost to their callers. Their originals are saved all the same.
    UpcallsOnly,
}

/// [`install`], wrapping the functions `counting` names.
///
/// # Safety
/// As for [`install`].
pub unsafe fn install_with(
    table: *mut JNINativeInterface_,
    hooks: Hooks,
    counting: Counting,
) -> bool {
    // SAFETY: the caller guarantees `table` is valid and writable, and nothing else touches it
    // during this call (the agent owns its copy until SetJNIFunctionTable).
    let Some(table) = (unsafe { table.as_mut() }) else {
        return false;
    };
    if !all_entries_present(table) {
        return false;
    }
    let state = State {
        hooks,
        originals: SavedTable(*table),
    };
    if STATE.set(state).is_err() {
        return false;
    }
    write_wrappers(table);
    counted::install_counted(table, counting == Counting::Every);
    true
}

/// Whether [`install`] has succeeded in this process.
pub fn is_installed() -> bool {
    STATE.get().is_some()
}

/// Write the saved original entries back into `table` (e.g. a fresh `GetJNIFunctionTable` copy
/// before `SetJNIFunctionTable` at unload). Returns false, changing nothing, before [`install`].
/// The wrappers stay valid: a thread still inside one keeps working.
///
/// # Safety
/// `table` must point to a valid, writable JNI function table.
pub unsafe fn restore_originals(table: *mut JNINativeInterface_) -> bool {
    let Some(state) = STATE.get() else {
        return false;
    };
    // SAFETY: the caller guarantees `table` is valid and writable.
    let Some(table) = (unsafe { table.as_mut() }) else {
        return false;
    };
    write_originals(table, &state.originals.0);
    counted::restore_counted_originals(table);
    true
}

/// The JVM's original entry for `function`, as a code address, once [`install`] has succeeded.
/// For a variadic function this is the original variadic entry, which the wrappers never call
/// (they forward to the original `V` entry).
pub fn original_entry(function: FunctionIndex) -> Option<*const c_void> {
    STATE
        .get()
        .map(|state| table_entry(&state.originals.0, function))
}
