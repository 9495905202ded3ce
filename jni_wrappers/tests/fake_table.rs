//! Installs the wrappers over a fake JNI function table whose originals are C functions
//! (`tests/support/fake_jni.c`) that record what they receive, then calls every one of the 93 entries
//! through the table in its own style and checks arguments, return values, hook indices and order.
//!
//! The expected indices, argument values and return values all come from this file.

#[macro_use]
mod support;

use std::ffi::{c_char, c_void, CStr};
use std::sync::OnceLock;

use jni::sys::{
    jboolean, jbyte, jchar, jdouble, jfloat, jint, jlong, jmethodID, jobject, jshort, jvalue,
    va_list, JNIEnv, JNINativeInterface_,
};
use support::events::{log, take_events, Event, LOGGING_HOOKS};
use support::{invoke, java_args, Arg};

use jni_wrappers::{
    index_of, install, is_installed, original_entry, restore_originals, table_entry, ArgStyle,
    CallKind, FunctionIndex, FUNCTION_COUNT, FUNCTION_NAMES,
};

// ---------------------------------------------------------------------------------------------
// The C fakes.

const FAKE_MAX_ARGS: usize = 64;

/// Mirror of `struct fake_call_record` in fake_jni.c.
#[repr(C)]
struct FakeCallRecord {
    original: *const c_char,
    env: *mut c_void,
    first_receiver: *mut c_void,
    second_receiver: *mut c_void,
    method: *mut c_void,
    array_args: *const c_void,
    arg_count: i32,
    arg_types: [c_char; FAKE_MAX_ARGS],
    args: [jvalue; FAKE_MAX_ARGS],
}

extern "C" {
    fn fake_set_observer(callback: extern "C" fn(*const c_char));
    fn fake_set_next_return(value: *const jvalue);
    fn fake_last_call() -> *const FakeCallRecord;
    fn fake_clear_last_call();
}

// ---------------------------------------------------------------------------------------------
// Event log (support/events.rs): the hooks log Begin/End, the fakes their own name.

extern "C" fn on_original(name: *const c_char) {
    // SAFETY: the fakes pass a string literal (`#name`).
    let name = unsafe { CStr::from_ptr(name) }
        .to_string_lossy()
        .into_owned();
    log(Event::Original(name));
}

// ---------------------------------------------------------------------------------------------
// The Java arguments (see support/mod.rs), with made-up object pointers, one of them null.

const FAKE_OBJECTS: [jobject; 3] = [
    0x3333_0008 as jobject,
    std::ptr::null_mut(),
    0x4444_0010 as jobject,
];

fn fake_java_args() -> [Arg; 25] {
    java_args(FAKE_OBJECTS)
}

/// The fakes read the method ID as the string of argument type letters.
fn java_args_method_id() -> jmethodID {
    static SIGNATURE: OnceLock<Vec<u8>> = OnceLock::new();
    let signature = SIGNATURE.get_or_init(|| {
        let mut letters: Vec<u8> = fake_java_args()
            .iter()
            .map(|a| a.type_and_bits().0)
            .collect();
        letters.push(0);
        letters
    });
    signature.as_ptr() as jmethodID
}

// ---------------------------------------------------------------------------------------------
// Return values: distinct per wrapper index, for each of the 10 return types.

trait JniReturn: Copy + std::fmt::Debug {
    fn expected(index: u32) -> Self;
    fn to_jvalue(self) -> jvalue;
    fn bits(self) -> u64;
}

macro_rules! jni_return {
    ($type:ty, $field:ident, |$index:ident| $value:expr, |$v:ident| $bits:expr) => {
        impl JniReturn for $type {
            fn expected($index: u32) -> Self {
                $value
            }
            fn to_jvalue(self) -> jvalue {
                jvalue { $field: self }
            }
            fn bits(self) -> u64 {
                let $v = self;
                $bits
            }
        }
    };
}

jni_return!(
    jobject,
    l,
    |i| (0xDEAD_0000 + 16 * i as usize) as jobject,
    |v| v as u64
);
jni_return!(jboolean, z, |i| 0x80 | i as u8, |v| v.into());
jni_return!(jbyte, b, |i| -(20 + i as i8), |v| v as u8 as u64);
jni_return!(jchar, c, |i| 0xC000 + i as u16, |v| v.into());
jni_return!(jshort, s, |i| -1000 - i as i16, |v| v as u16 as u64);
jni_return!(jint, i, |i| -0x5EED_0000 - i as i32, |v| v as u32 as u64);
jni_return!(jlong, j, |i| 0x0123_4567_89AB_0000 + i as i64, |v| v as u64);
jni_return!(jfloat, f, |i| -1.5 - 0.25 * i as f32, |v| v
    .to_bits()
    .into());
jni_return!(jdouble, d, |i| 1.0e-200 * (i + 1) as f64, |v| v.to_bits());

impl JniReturn for () {
    fn expected(_index: u32) -> Self {}
    fn to_jvalue(self) -> jvalue {
        jvalue { j: 0 }
    }
    fn bits(self) -> u64 {
        0
    }
}

// ---------------------------------------------------------------------------------------------
// Per JNI function family (the table is support's `every_family!`, with the index of its variadic
// member as this suite expects it: virtual, nonvirtual, static, then NewObject; Object..Void;
// variadic, V, A).

const ENV_OBJECT: usize = 0x1111_0000;
const ENV_CLASS: usize = 0x2222_0000;

fn receiver_value(name: &str) -> jobject {
    match name {
        "obj" => ENV_OBJECT as jobject,
        "clazz" => ENV_CLASS as jobject,
        other => panic!("unknown receiver {other}"),
    }
}

macro_rules! families {
    ($( $base:tt $kind:literal $type_name:literal ($($receiver:ident),*)
        $variadic:ident $with_va_list:ident $with_array:ident -> $ret:ty; )*) => {
        $(
            #[allow(non_snake_case)]
            mod $variadic {
                use super::*;
                extern "C" {
                    #[link_name = concat!("fake_", stringify!($variadic))]
                    pub fn original_variadic(
                        env: *mut JNIEnv, $($receiver: jobject,)* method: jmethodID, ...
                    ) -> $ret;
                }
                extern "system" {
                    #[link_name = concat!("fake_", stringify!($with_va_list))]
                    pub fn original_va_list(
                        env: *mut JNIEnv, $($receiver: jobject,)* method: jmethodID, args: va_list,
                    ) -> $ret;
                    #[link_name = concat!("fake_", stringify!($with_array))]
                    pub fn original_array(
                        env: *mut JNIEnv, $($receiver: jobject,)* method: jmethodID,
                        args: *const jvalue,
                    ) -> $ret;
                }
            }
        )*

        /// A table whose 93 entries are the fakes; every other entry is null.
        fn fake_table() -> Box<JNINativeInterface_> {
            // SAFETY: every field of the table is a raw pointer or an `Option` of a function
            // pointer, for which all-zero bytes mean null / `None`.
            let mut table: Box<JNINativeInterface_> = Box::new(unsafe { std::mem::zeroed() });
            $(
                table.$variadic = Some($variadic::original_variadic);
                table.$with_va_list = Some($variadic::original_va_list);
                table.$with_array = Some($variadic::original_array);
            )*
            table
        }

        /// (index expected by this test, name) of every wrapped function.
        const EXPECTED_ORDER: &[(u32, &str)] = &[
            $( ($base, stringify!($variadic)), ($base + 1, stringify!($with_va_list)),
               ($base + 2, stringify!($with_array)), )*
        ];

        /// Calls every entry of `table` in its own style and checks each call.
        fn exercise_every_entry(table: &JNINativeInterface_, env: *mut JNIEnv) {
            let method = java_args_method_id();
            let args = fake_java_args();
            $({
                let receivers: &[jobject] = &[$(receiver_value(stringify!($receiver))),*];
                let expect = |index, name, original, array| Expectation {
                    index, name, original, env, receivers, method, array, args: &args,
                };

                let entry = table.$variadic.expect("variadic entry");
                let name = stringify!($variadic);
                check_entry::<$ret>(expect($base, name, stringify!($with_va_list), None), || {
                    // SAFETY: a variadic entry with the promoted Java arguments the method id
                    // describes.
                    unsafe {
                        call_with_java_args!(entry, FAKE_OBJECTS, env,
                                             $(receiver_value(stringify!($receiver)),)* method)
                    }
                });

                let entry = table.$with_va_list.expect("V entry");
                let name = stringify!($with_va_list);
                check_entry::<$ret>(expect($base + 1, name, name, None), || {
                    // SAFETY: the C helper builds a real va_list from the promoted Java arguments.
                    unsafe {
                        call_with_java_args!(invoke::$with_va_list, FAKE_OBJECTS, entry, env,
                                             $(receiver_value(stringify!($receiver)),)* method)
                    }
                });

                let entry = table.$with_array.expect("A entry");
                let array: Vec<jvalue> = args.iter().map(|a| a.to_jvalue()).collect();
                let name = stringify!($with_array);
                check_entry::<$ret>(expect($base + 2, name, name, Some(array.as_ptr())), || {
                    // SAFETY: the array holds one jvalue per type letter of the method id.
                    unsafe {
                        entry(env, $(receiver_value(stringify!($receiver)),)* method, array.as_ptr())
                    }
                });
            })*
        }
    };
}

every_family!(families);

// ---------------------------------------------------------------------------------------------
// Checking one call.

struct Expectation<'a> {
    index: u32,
    /// The JNI function the program called.
    name: &'a str,
    /// The fake original that must have run (the V one for variadic entries).
    original: &'a str,
    env: *mut JNIEnv,
    receivers: &'a [jobject],
    method: jmethodID,
    array: Option<*const jvalue>,
    args: &'a [Arg],
}

fn prepare_call<R: JniReturn>(index: u32) {
    let value = R::expected(index).to_jvalue();
    // SAFETY: plain setters of the fakes' thread-local state; `value` outlives the call.
    unsafe {
        fake_set_next_return(&value);
        fake_clear_last_call();
    }
    take_events();
}

/// Sets up the fakes for `expected.index`, makes the call, checks it.
fn check_entry<R: JniReturn>(expected: Expectation<'_>, call: impl FnOnce() -> R) {
    prepare_call::<R>(expected.index);
    let result = call();
    check_call(expected, result);
}

fn check_call<R: JniReturn>(expected: Expectation<'_>, result: R) {
    let index = expected.index;
    let name = expected.name;
    assert_eq!(
        FUNCTION_NAMES[index as usize], name,
        "name at index {index}"
    );
    assert_eq!(
        take_events(),
        vec![
            Event::Begin(index),
            Event::Original(expected.original.to_string()),
            Event::End(index)
        ],
        "hook/original order for {name}"
    );
    assert_eq!(
        result.bits(),
        R::expected(index).bits(),
        "return value of {name}: got {result:?}"
    );

    // SAFETY: the record is this thread's, and no fake runs while we read it.
    let record = unsafe { &*fake_last_call() };
    assert_eq!(record.env, expected.env.cast::<c_void>(), "env of {name}");
    assert_eq!(
        record.first_receiver,
        expected.receivers[0].cast::<c_void>(),
        "first receiver of {name}"
    );
    let second = expected
        .receivers
        .get(1)
        .map_or(std::ptr::null_mut(), |r| r.cast::<c_void>());
    assert_eq!(record.second_receiver, second, "second receiver of {name}");
    assert_eq!(
        record.method,
        expected.method.cast::<c_void>(),
        "method of {name}"
    );
    let array = expected
        .array
        .map_or(std::ptr::null(), |a| a.cast::<c_void>());
    assert_eq!(record.array_args, array, "jvalue pointer of {name}");
    check_recorded_args(record, expected.args, name);
}

fn check_recorded_args(record: &FakeCallRecord, expected: &[Arg], name: &str) {
    assert_eq!(
        record.arg_count as usize,
        expected.len(),
        "argument count of {name}"
    );
    for (position, &arg) in expected.iter().enumerate() {
        let (letter, bits) = arg.type_and_bits();
        assert_eq!(
            record.arg_types[position] as u8, letter,
            "type of argument {position} of {name}"
        );
        let got = arg.read_as_same_type(record.args[position]);
        assert_eq!(
            got.type_and_bits().1,
            bits,
            "argument {position} of {name}: got {got:?}, expected {arg:?}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// The installed table: once per process, shared by the tests.

struct Installed {
    table: &'static JNINativeInterface_,
    env: *mut JNIEnv,
    fakes: Box<JNINativeInterface_>,
}

// SAFETY: the table and env are leaked and never written after installation.
unsafe impl Sync for Installed {}
// SAFETY: as above.
unsafe impl Send for Installed {}

fn installed() -> &'static Installed {
    static INSTALLED: OnceLock<Installed> = OnceLock::new();
    INSTALLED.get_or_init(|| {
        // SAFETY: sets the fakes' global observer before any fake can run.
        unsafe { fake_set_observer(on_original) };
        let table: &'static mut JNINativeInterface_ = Box::leak(fake_table());
        assert!(!is_installed());
        // SAFETY: `table` is a valid, writable, leaked table.
        let first = unsafe { install(table, LOGGING_HOOKS) };
        assert!(first, "first install must succeed");
        let table: &'static JNINativeInterface_ = table;
        // A JNIEnv is a pointer to the function table pointer.
        let env_slot: &'static mut *const JNINativeInterface_ =
            Box::leak(Box::new(table as *const _));
        let env = (env_slot as *mut *const JNINativeInterface_).cast::<JNIEnv>();
        Installed {
            table,
            env,
            fakes: fake_table(),
        }
    })
}

// ---------------------------------------------------------------------------------------------
// Tests.

#[test]
fn every_entry_forwards_arguments_and_result_between_begin_and_end() {
    let installed = installed();
    exercise_every_entry(installed.table, installed.env);
}

#[test]
fn every_entry_is_replaced_and_its_original_saved() {
    let installed = installed();
    for function in FunctionIndex::ALL {
        let fake = table_entry(&installed.fakes, function);
        assert!(!fake.is_null());
        assert_ne!(
            table_entry(installed.table, function),
            fake,
            "{function:?} not replaced"
        );
        assert_eq!(
            original_entry(function),
            Some(fake),
            "{function:?} original"
        );
    }
    let mut restored = *installed.table;
    // SAFETY: `restored` is a valid, writable copy.
    assert!(unsafe { restore_originals(&mut restored) });
    for function in FunctionIndex::ALL {
        assert_eq!(
            table_entry(&restored, function),
            table_entry(&installed.fakes, function),
            "{function:?} restored"
        );
    }
}

#[test]
fn second_install_returns_false_and_changes_nothing() {
    let installed = installed();
    let mut table = fake_table();
    let before = *table;
    // SAFETY: `table` is a valid, writable table.
    assert!(!unsafe { install(&mut *table, LOGGING_HOOKS) });
    for function in FunctionIndex::ALL {
        assert_eq!(
            table_entry(&table, function),
            table_entry(&before, function),
            "{function:?} changed by a second install"
        );
    }
    // The first installation still forwards to the first table's originals.
    assert_eq!(
        original_entry(FunctionIndex::CallIntMethodV),
        Some(table_entry(&installed.fakes, FunctionIndex::CallIntMethodV))
    );
}

#[test]
fn null_method_id_and_null_arguments_pass_through() {
    let installed = installed();
    let env = installed.env;
    let clazz = ENV_CLASS as jobject;
    let obj = ENV_OBJECT as jobject;

    let index = 77; // CallStaticIntMethodA
    prepare_call::<jint>(index);
    let entry = installed.table.CallStaticIntMethodA.expect("entry");
    // SAFETY: the fake treats a null method id as "no arguments" and never reads `args`.
    let result = unsafe { entry(env, clazz, std::ptr::null_mut(), std::ptr::null()) };
    check_call::<jint>(
        Expectation {
            index,
            name: "CallStaticIntMethodA",
            original: "CallStaticIntMethodA",
            env,
            receivers: &[clazz],
            method: std::ptr::null_mut(),
            array: None,
            args: &[],
        },
        result,
    );

    let index = 27; // CallVoidMethod, no Java arguments
    prepare_call::<()>(index);
    let entry = installed.table.CallVoidMethod.expect("entry");
    // SAFETY: as above; no variadic arguments are read.
    unsafe { entry(env, obj, std::ptr::null_mut()) };
    check_call::<()>(
        Expectation {
            index,
            name: "CallVoidMethod",
            original: "CallVoidMethodV",
            env,
            receivers: &[obj],
            method: std::ptr::null_mut(),
            array: None,
            args: &[],
        },
        (),
    );
}

#[test]
fn calls_from_many_threads_each_see_their_own_hooks() {
    let installed = installed();
    let threads: Vec<_> = (0..4)
        .map(|_| {
            std::thread::spawn(move || {
                for _ in 0..50 {
                    exercise_every_entry(installed.table, installed.env);
                }
            })
        })
        .collect();
    for thread in threads {
        thread.join().expect("thread panicked");
    }
}

#[test]
fn index_order_and_metadata_match_the_documented_layout() {
    assert_eq!(EXPECTED_ORDER.len(), FUNCTION_COUNT);
    for &(index, name) in EXPECTED_ORDER {
        assert_eq!(FUNCTION_NAMES[index as usize], name);
        assert_eq!(index_of(name), Some(index));
        let function = FunctionIndex::from_index(index).expect("valid index");
        assert_eq!(function.index(), index);
        assert_eq!(function.name(), name);
        let expected_style = match name.chars().last() {
            Some('V') => ArgStyle::VaList,
            Some('A') => ArgStyle::Array,
            _ => ArgStyle::Variadic,
        };
        assert_eq!(function.style(), expected_style, "{name}");
        let expected_kind = if name.starts_with("CallNonvirtual") {
            CallKind::Nonvirtual
        } else if name.starts_with("CallStatic") {
            CallKind::Static
        } else if name.starts_with("NewObject") {
            CallKind::Constructor
        } else {
            CallKind::Virtual
        };
        assert_eq!(function.kind(), expected_kind, "{name}");
    }
    assert_eq!(FunctionIndex::from_index(FUNCTION_COUNT as u32), None);
    assert_eq!(index_of("GetVersion"), None);
}
