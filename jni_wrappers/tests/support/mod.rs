//! Shared by the integration tests: the 25 mixed Java arguments every call passes, the macro that
//! passes them to a variadic function, and the C helpers (`fake_jni.c`) that call a `V` entry with a
//! real `va_list`.
#![allow(dead_code)]

pub mod jvm;

use jni::sys::{
    jboolean, jbyte, jchar, jdouble, jfloat, jint, jlong, jmethodID, jobject, jshort, jvalue,
    va_list, JNIEnv,
};

// 25 mixed values: enough to spill both the 6 integer and the 8 floating-point argument registers
// of x86_64 to the stack. The three object arguments (positions 4, 13, 22) are chosen by each test.
pub const A0: jint = -123_456_789;
pub const A1: jlong = 0x7FED_CBA9_8765_4321;
pub const A2: jdouble = -2.5e-300;
pub const A3: jfloat = 1_234.567_9;
pub const A5: jboolean = 1;
pub const A6: jbyte = -100;
pub const A7: jchar = 0xBEEF;
pub const A8: jshort = -31_000;
pub const A9: jint = jint::MAX;
pub const A10: jlong = jlong::MIN;
pub const A11: jdouble = 1.0e300;
pub const A12: jfloat = jfloat::MIN_POSITIVE;
pub const A14: jdouble = 0.1;
pub const A15: jdouble = -7.25;
pub const A16: jdouble = 1e-10;
pub const A17: jdouble = 6.022_140_76e23;
pub const A18: jfloat = -0.0;
pub const A19: jdouble = jdouble::MAX;
pub const A20: jint = -1;
pub const A21: jlong = 0x1_0000_0000;
pub const A23: jboolean = 0;
pub const A24: jchar = 0x0041;

/// Positions of the object arguments.
pub const OBJECT_POSITIONS: [usize; 3] = [4, 13, 22];

/// JNI type letters of the 25 arguments, in order.
pub const JAVA_ARG_TYPES: &str = "IJDFLZBCSIJDFLDDDDFDIJLZC";

#[derive(Clone, Copy, Debug)]
pub enum Arg {
    Z(jboolean),
    B(jbyte),
    C(jchar),
    S(jshort),
    I(jint),
    J(jlong),
    F(jfloat),
    D(jdouble),
    L(jobject),
}

/// The 25 Java arguments, with `objects` at [`OBJECT_POSITIONS`].
pub fn java_args(objects: [jobject; 3]) -> [Arg; 25] {
    [
        Arg::I(A0),
        Arg::J(A1),
        Arg::D(A2),
        Arg::F(A3),
        Arg::L(objects[0]),
        Arg::Z(A5),
        Arg::B(A6),
        Arg::C(A7),
        Arg::S(A8),
        Arg::I(A9),
        Arg::J(A10),
        Arg::D(A11),
        Arg::F(A12),
        Arg::L(objects[1]),
        Arg::D(A14),
        Arg::D(A15),
        Arg::D(A16),
        Arg::D(A17),
        Arg::F(A18),
        Arg::D(A19),
        Arg::I(A20),
        Arg::J(A21),
        Arg::L(objects[2]),
        Arg::Z(A23),
        Arg::C(A24),
    ]
}

/// Calls `$function(leading..., A0, ..., A24)` with C's default argument promotions, as a C caller
/// of a variadic JNI function would; `$objects` (`[jobject; 3]`) fills the object positions.
#[allow(unused_macros)]
macro_rules! call_with_java_args {
    ($function:expr, $objects:expr, $($leading:expr),*) => {{
        use std::ffi::c_int;
        use $crate::support as s;
        let objects: [jni::sys::jobject; 3] = $objects;
        $function(
            $($leading,)*
            s::A0, s::A1, s::A2, s::A3 as f64, objects[0], s::A5 as c_int, s::A6 as c_int,
            s::A7 as c_int, s::A8 as c_int, s::A9, s::A10, s::A11, s::A12 as f64, objects[1],
            s::A14, s::A15, s::A16, s::A17, s::A18 as f64, s::A19, s::A20, s::A21, objects[2],
            s::A23 as c_int, s::A24 as c_int,
        )
    }};
}

impl Arg {
    /// Type letter and exact bits, so floats compare bit for bit (-0.0 included).
    pub fn type_and_bits(self) -> (u8, u64) {
        match self {
            Arg::Z(v) => (b'Z', v.into()),
            Arg::B(v) => (b'B', v as u8 as u64),
            Arg::C(v) => (b'C', v.into()),
            Arg::S(v) => (b'S', v as u16 as u64),
            Arg::I(v) => (b'I', v as u32 as u64),
            Arg::J(v) => (b'J', v as u64),
            Arg::F(v) => (b'F', v.to_bits().into()),
            Arg::D(v) => (b'D', v.to_bits()),
            Arg::L(v) => (b'L', v as usize as u64),
        }
    }

    pub fn to_jvalue(self) -> jvalue {
        match self {
            Arg::Z(z) => jvalue { z },
            Arg::B(b) => jvalue { b },
            Arg::C(c) => jvalue { c },
            Arg::S(s) => jvalue { s },
            Arg::I(i) => jvalue { i },
            Arg::J(j) => jvalue { j },
            Arg::F(f) => jvalue { f },
            Arg::D(d) => jvalue { d },
            Arg::L(l) => jvalue { l },
        }
    }

    /// Reads a value of this argument's type out of a `jvalue`.
    pub fn read_as_same_type(self, value: jvalue) -> Arg {
        // SAFETY: callers pass a jvalue whose field of this argument's type was written.
        unsafe {
            match self {
                Arg::Z(_) => Arg::Z(value.z),
                Arg::B(_) => Arg::B(value.b),
                Arg::C(_) => Arg::C(value.c),
                Arg::S(_) => Arg::S(value.s),
                Arg::I(_) => Arg::I(value.i),
                Arg::J(_) => Arg::J(value.j),
                Arg::F(_) => Arg::F(value.f),
                Arg::D(_) => Arg::D(value.d),
                Arg::L(_) => Arg::L(value.l),
            }
        }
    }
}

macro_rules! receiver_type {
    ($receiver:ident) => {
        jobject
    };
}

/// `invoke::<Name>V(entry, env, receivers..., method, ...)`: calls the `V` entry `entry` with a
/// `va_list` made from the variadic arguments (C helpers in fake_jni.c).
macro_rules! invoke_helpers {
    ($( ($($receiver:ident),*) $with_va_list:ident -> $ret:ty; )*) => {
        pub mod invoke {
            use super::*;
            extern "C" {
                $(
                    #[link_name = concat!("fake_invoke_", stringify!($with_va_list))]
                    pub fn $with_va_list(
                        entry: unsafe extern "system" fn(
                            *mut JNIEnv, $(receiver_type!($receiver),)* jmethodID, va_list
                        ) -> $ret,
                        env: *mut JNIEnv, $($receiver: jobject,)* method: jmethodID, ...
                    ) -> $ret;
                )*
            }
        }
    };
}

invoke_helpers! {
    (obj) CallObjectMethodV -> jobject;
    (obj) CallBooleanMethodV -> jboolean;
    (obj) CallByteMethodV -> jbyte;
    (obj) CallCharMethodV -> jchar;
    (obj) CallShortMethodV -> jshort;
    (obj) CallIntMethodV -> jint;
    (obj) CallLongMethodV -> jlong;
    (obj) CallFloatMethodV -> jfloat;
    (obj) CallDoubleMethodV -> jdouble;
    (obj) CallVoidMethodV -> ();
    (obj, clazz) CallNonvirtualObjectMethodV -> jobject;
    (obj, clazz) CallNonvirtualBooleanMethodV -> jboolean;
    (obj, clazz) CallNonvirtualByteMethodV -> jbyte;
    (obj, clazz) CallNonvirtualCharMethodV -> jchar;
    (obj, clazz) CallNonvirtualShortMethodV -> jshort;
    (obj, clazz) CallNonvirtualIntMethodV -> jint;
    (obj, clazz) CallNonvirtualLongMethodV -> jlong;
    (obj, clazz) CallNonvirtualFloatMethodV -> jfloat;
    (obj, clazz) CallNonvirtualDoubleMethodV -> jdouble;
    (obj, clazz) CallNonvirtualVoidMethodV -> ();
    (clazz) CallStaticObjectMethodV -> jobject;
    (clazz) CallStaticBooleanMethodV -> jboolean;
    (clazz) CallStaticByteMethodV -> jbyte;
    (clazz) CallStaticCharMethodV -> jchar;
    (clazz) CallStaticShortMethodV -> jshort;
    (clazz) CallStaticIntMethodV -> jint;
    (clazz) CallStaticLongMethodV -> jlong;
    (clazz) CallStaticFloatMethodV -> jfloat;
    (clazz) CallStaticDoubleMethodV -> jdouble;
    (clazz) CallStaticVoidMethodV -> ();
    (clazz) NewObjectV -> jobject;
}
