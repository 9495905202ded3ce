//! Shared by the integration tests: the 25 mixed Java arguments every call passes, the macro that
//! passes them to a variadic function, the table of the 31 function families, the per-thread log of
//! hook events, and the C helpers (`fake_jni.c`) that call a `V` entry with a real `va_list`.
#![allow(dead_code)]

pub mod events;
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

/// The 22 arguments that are not objects, in order.
const PRIMITIVE_ARGS: [Arg; 22] = [
    Arg::I(A0),
    Arg::J(A1),
    Arg::D(A2),
    Arg::F(A3),
    Arg::Z(A5),
    Arg::B(A6),
    Arg::C(A7),
    Arg::S(A8),
    Arg::I(A9),
    Arg::J(A10),
    Arg::D(A11),
    Arg::F(A12),
    Arg::D(A14),
    Arg::D(A15),
    Arg::D(A16),
    Arg::D(A17),
    Arg::F(A18),
    Arg::D(A19),
    Arg::I(A20),
    Arg::J(A21),
    Arg::Z(A23),
    Arg::C(A24),
];

/// The 25 Java arguments, with `objects` at [`OBJECT_POSITIONS`].
pub fn java_args(objects: [jobject; 3]) -> [Arg; 25] {
    let mut primitives = PRIMITIVE_ARGS.into_iter();
    let mut objects = objects.into_iter();
    let args: Vec<Arg> = (0..25)
        .map(|position| {
            let next = if OBJECT_POSITIONS.contains(&position) {
                objects.next().map(Arg::L)
            } else {
                primitives.next()
            };
            next.expect("22 primitives and 3 objects fill the 25 positions")
        })
        .collect();
    args.try_into().expect("25 arguments")
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
    ($( $base:tt $kind:literal $type_name:literal ($($receiver:ident),*)
        $variadic:ident $with_va_list:ident $with_array:ident -> $ret:ty; )*) => {
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

/// Calls `$callback!` with one row per JNI function family, in index order:
/// `base kind type (receivers) variadic V A -> return type;`, where `base` is the index this test
/// suite expects for the variadic member (the crate docs' layout: kind * 30 + type * 3 + style),
/// `kind` is "virtual", "nonvirtual", "static" or "constructor" and `type` is the `<Type>` of
/// `Call<Type>Method`. The table below has one row per return type; the second rule regroups it.
macro_rules! every_family {
    ($callback:ident) => {
        every_family! { @regroup $callback
            0 "Object" jobject: [CallObjectMethod CallObjectMethodV CallObjectMethodA] [CallNonvirtualObjectMethod CallNonvirtualObjectMethodV CallNonvirtualObjectMethodA] [CallStaticObjectMethod CallStaticObjectMethodV CallStaticObjectMethodA];
            1 "Boolean" jboolean: [CallBooleanMethod CallBooleanMethodV CallBooleanMethodA] [CallNonvirtualBooleanMethod CallNonvirtualBooleanMethodV CallNonvirtualBooleanMethodA] [CallStaticBooleanMethod CallStaticBooleanMethodV CallStaticBooleanMethodA];
            2 "Byte" jbyte: [CallByteMethod CallByteMethodV CallByteMethodA] [CallNonvirtualByteMethod CallNonvirtualByteMethodV CallNonvirtualByteMethodA] [CallStaticByteMethod CallStaticByteMethodV CallStaticByteMethodA];
            3 "Char" jchar: [CallCharMethod CallCharMethodV CallCharMethodA] [CallNonvirtualCharMethod CallNonvirtualCharMethodV CallNonvirtualCharMethodA] [CallStaticCharMethod CallStaticCharMethodV CallStaticCharMethodA];
            4 "Short" jshort: [CallShortMethod CallShortMethodV CallShortMethodA] [CallNonvirtualShortMethod CallNonvirtualShortMethodV CallNonvirtualShortMethodA] [CallStaticShortMethod CallStaticShortMethodV CallStaticShortMethodA];
            5 "Int" jint: [CallIntMethod CallIntMethodV CallIntMethodA] [CallNonvirtualIntMethod CallNonvirtualIntMethodV CallNonvirtualIntMethodA] [CallStaticIntMethod CallStaticIntMethodV CallStaticIntMethodA];
            6 "Long" jlong: [CallLongMethod CallLongMethodV CallLongMethodA] [CallNonvirtualLongMethod CallNonvirtualLongMethodV CallNonvirtualLongMethodA] [CallStaticLongMethod CallStaticLongMethodV CallStaticLongMethodA];
            7 "Float" jfloat: [CallFloatMethod CallFloatMethodV CallFloatMethodA] [CallNonvirtualFloatMethod CallNonvirtualFloatMethodV CallNonvirtualFloatMethodA] [CallStaticFloatMethod CallStaticFloatMethodV CallStaticFloatMethodA];
            8 "Double" jdouble: [CallDoubleMethod CallDoubleMethodV CallDoubleMethodA] [CallNonvirtualDoubleMethod CallNonvirtualDoubleMethodV CallNonvirtualDoubleMethodA] [CallStaticDoubleMethod CallStaticDoubleMethodV CallStaticDoubleMethodA];
            9 "Void" (): [CallVoidMethod CallVoidMethodV CallVoidMethodA] [CallNonvirtualVoidMethod CallNonvirtualVoidMethodV CallNonvirtualVoidMethodA] [CallStaticVoidMethod CallStaticVoidMethodV CallStaticVoidMethodA];
        }
    };
    (@regroup $callback:ident $( $type_index:literal $type_name:literal $ret:ty:
        [$virtual_variadic:ident $virtual_v:ident $virtual_a:ident]
        [$nonvirtual_variadic:ident $nonvirtual_v:ident $nonvirtual_a:ident]
        [$static_variadic:ident $static_v:ident $static_a:ident]; )*) => {
        $callback! {
            $( ($crate::support::family_base(0, $type_index)) "virtual" $type_name (obj)
               $virtual_variadic $virtual_v $virtual_a -> $ret; )*
            $( ($crate::support::family_base(1, $type_index)) "nonvirtual" $type_name (obj, clazz)
               $nonvirtual_variadic $nonvirtual_v $nonvirtual_a -> $ret; )*
            $( ($crate::support::family_base(2, $type_index)) "static" $type_name (clazz)
               $static_variadic $static_v $static_a -> $ret; )*
            ($crate::support::family_base(3, 0)) "constructor" "Object" (clazz)
               NewObject NewObjectV NewObjectA -> jobject;
        }
    };
}

/// The index this suite expects for the variadic member of a family: kinds (virtual, nonvirtual,
/// static, constructor) in steps of 30, return types in steps of 3.
pub const fn family_base(kind: u32, type_index: u32) -> u32 {
    kind * 30 + type_index * 3
}

every_family!(invoke_helpers);
