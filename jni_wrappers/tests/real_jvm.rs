//! The wrappers on a real HotSpot: creates a JVM from the JDK's libjvm (JNI_CreateJavaVM), installs
//! the wrappers through JVMTI Get/SetJNIFunctionTable exactly as the agent does, then calls Java
//! methods with 25 mixed arguments through every one of the 93 wrapped functions.
//!
//! Java computes a hash of the arguments it received; this test computes the same hash from the
//! values it passed. Needs a JDK: `NATIVEACCT_TEST_JAVA_HOME`, else /usr/lib/jvm/java-17-openjdk-amd64.

#[macro_use]
mod support;

use std::ffi::{c_void, CString};

use jni::sys::{
    jboolean, jbyte, jchar, jclass, jdouble, jfieldID, jfloat, jint, jlong, jmethodID, jobject,
    jshort, jvalue, JNIEnv, JNINativeInterface_, JNINativeMethod, JNI_OK,
};
use jni_wrappers::{original_entry, table_entry, FunctionIndex};
use support::events::{log, take_events, Event, LOGGING_HOOKS};
use support::jvm::{compile_java, create_jvm, install_through_jvmti, java_home, run_on_vm_thread};
use support::{invoke, java_args, Arg, JAVA_ARG_TYPES};

// ---------------------------------------------------------------------------------------------
// Events (support/events.rs), in call order, on the calling thread: hooks, and Java telling us it
// ran (Target.mark).

/// `static native void mark(int site)` of the Java class.
extern "system" fn java_mark(_env: *mut JNIEnv, _class: jclass, site: jint) {
    log(Event::Java(site));
}

// ---------------------------------------------------------------------------------------------
// The Java side, generated from the test's own argument list and return values.

/// Where the Java code ran; Java passes it to `record`, which hashes it with the arguments.
const SITE_TARGET_INSTANCE: i32 = 1;
const SITE_SUB_INSTANCE: i32 = 2;
const SITE_STATIC: i32 = 3;
const SITE_CONSTRUCTOR: i32 = 4;
const SITE_THROWER: i32 = 5;

/// Java return type names, as in `Call<Type>Method`, with the Java type and returned expression.
const RETURN_TYPES: [(&str, &str, &str); 10] = [
    ("Object", "Object", "RESULT"),
    ("Boolean", "boolean", "true"),
    ("Byte", "byte", "(byte) -77"),
    ("Char", "char", "(char) 0xCAFE"),
    ("Short", "short", "(short) -12345"),
    ("Int", "int", "0xDEADBEEF"),
    ("Long", "long", "0x0123456789ABCDEFL"),
    ("Float", "float", "Float.intBitsToFloat(0xC0490FDB)"),
    (
        "Double",
        "double",
        "Double.longBitsToDouble(0xC00921FB54442D18L)",
    ),
    ("Void", "void", ""),
];

const RETURNED_BOOLEAN: jboolean = 1;
const RETURNED_BYTE: jbyte = -77;
const RETURNED_CHAR: jchar = 0xCAFE;
const RETURNED_SHORT: jshort = -12345;
const RETURNED_INT: jint = 0xDEAD_BEEF_u32 as jint;
const RETURNED_LONG: jlong = 0x0123_4567_89AB_CDEF;
const RETURNED_FLOAT_BITS: u32 = 0xC049_0FDB;
const RETURNED_DOUBLE_BITS: u64 = 0xC009_21FB_5444_2D18;

fn java_type_of(letter: char) -> &'static str {
    match letter {
        'Z' => "boolean",
        'B' => "byte",
        'C' => "char",
        'S' => "short",
        'I' => "int",
        'J' => "long",
        'F' => "float",
        'D' => "double",
        'L' => "Object",
        other => panic!("no Java type for {other}"),
    }
}

fn hash_term(letter: char, name: &str) -> String {
    match letter {
        'Z' => format!("({name} ? 1 : 0)"),
        'F' => format!("Float.floatToRawIntBits({name})"),
        'D' => format!("Double.doubleToRawLongBits({name})"),
        'L' => format!("({name} == null ? 0 : {name}.hashCode())"),
        _ => name.to_string(),
    }
}

fn java_sources() -> (String, String) {
    let letters: Vec<char> = JAVA_ARG_TYPES.chars().collect();
    let params = letters
        .iter()
        .enumerate()
        .map(|(i, &l)| format!("{} a{i}", java_type_of(l)))
        .collect::<Vec<_>>()
        .join(", ");
    let args = (0..letters.len())
        .map(|i| format!("a{i}"))
        .collect::<Vec<_>>()
        .join(", ");
    let hash = letters
        .iter()
        .enumerate()
        .map(|(i, &l)| format!("        h = h * 31 + {};\n", hash_term(l, &format!("a{i}"))))
        .collect::<String>();

    let mut target = format!(
        "public class Target {{
    public static final Object RESULT = new Object();
    public static long lastHash;
    public static int lastSite;
    public static Object lastConstructed;
    static native void mark(int site);
    public Target() {{}}
    public Target({params}) {{ record({SITE_CONSTRUCTOR}, {args}); lastConstructed = this; }}
    static void record(int site, {params}) {{
        long h = site;
{hash}        lastHash = h;
        lastSite = site;
        mark(site);
    }}
    public static int thrower({params}) {{
        record({SITE_THROWER}, {args});
        throw new IllegalStateException(\"thrown by Java\");
    }}
"
    );
    let mut sub = "public class Sub extends Target {\n    public Sub() {}\n".to_string();
    for (name, java_type, value) in RETURN_TYPES {
        let ret = if java_type == "void" {
            String::new()
        } else {
            format!(" return {value};")
        };
        target += &format!(
            "    public {java_type} virtual{name}({params}) {{ \
             record({SITE_TARGET_INSTANCE}, {args});{ret} }}\n"
        );
        target += &format!(
            "    public static {java_type} static{name}({params}) {{ \
             record({SITE_STATIC}, {args});{ret} }}\n"
        );
        sub += &format!(
            "    @Override public {java_type} virtual{name}({params}) {{ \
             record({SITE_SUB_INSTANCE}, {args});{ret} }}\n"
        );
    }
    target += "}\n";
    sub += "}\n";
    (target, sub)
}

/// JVM descriptor of the 25 parameters.
fn params_descriptor() -> String {
    JAVA_ARG_TYPES
        .chars()
        .map(|l| {
            if l == 'L' {
                "Ljava/lang/Object;".to_string()
            } else {
                l.to_string()
            }
        })
        .collect()
}

fn return_descriptor(java_type: &str) -> &'static str {
    match java_type {
        "Object" => "Ljava/lang/Object;",
        "boolean" => "Z",
        "byte" => "B",
        "char" => "C",
        "short" => "S",
        "int" => "I",
        "long" => "J",
        "float" => "F",
        "double" => "D",
        "void" => "V",
        other => panic!("unknown type {other}"),
    }
}

/// Java's `String.hashCode` for the ASCII strings this test passes.
fn java_string_hash(text: &str) -> i32 {
    text.bytes()
        .fold(0i32, |h, b| h.wrapping_mul(31).wrapping_add(i32::from(b)))
}

/// What `Target.record` computes for these arguments (Java long arithmetic wraps).
fn expected_hash(site: i32, args: &[Arg], object_hash: impl Fn(jobject) -> i32) -> i64 {
    args.iter().fold(i64::from(site), |h, &arg| {
        let term = match arg {
            Arg::Z(v) => i64::from(v != 0),
            Arg::B(v) => i64::from(v),
            Arg::C(v) => i64::from(v),
            Arg::S(v) => i64::from(v),
            Arg::I(v) => i64::from(v),
            Arg::J(v) => v,
            Arg::F(v) => i64::from(v.to_bits() as i32),
            Arg::D(v) => v.to_bits() as i64,
            Arg::L(v) => i64::from(object_hash(v)),
        };
        h.wrapping_mul(31).wrapping_add(term)
    })
}

// ---------------------------------------------------------------------------------------------
// Thin JNI helpers (functions outside the 93, so they fire no hooks).

struct Jvm {
    env: *mut JNIEnv,
    target: jclass,
    sub_instance: jobject,
    alpha: jobject,
    omega: jobject,
}

impl Jvm {
    fn functions(&self) -> &JNINativeInterface_ {
        // SAFETY: a JNIEnv points to the VM's live function table.
        unsafe { &**self.env }
    }

    fn find_class(&self, name: &std::ffi::CStr) -> jclass {
        // SAFETY: valid env and class name.
        let class =
            unsafe { (self.functions().FindClass.expect("FindClass"))(self.env, name.as_ptr()) };
        self.assert_no_exception("FindClass");
        assert!(!class.is_null());
        class
    }

    fn method(&self, class: jclass, is_static: bool, name: &str, descriptor: &str) -> jmethodID {
        let name = CString::new(name).expect("no NUL");
        let descriptor = CString::new(descriptor).expect("no NUL");
        let lookup = if is_static {
            self.functions().GetStaticMethodID
        } else {
            self.functions().GetMethodID
        };
        // SAFETY: valid env, class and C strings.
        let id = unsafe {
            (lookup.expect("Get*MethodID"))(self.env, class, name.as_ptr(), descriptor.as_ptr())
        };
        self.assert_no_exception("Get*MethodID");
        assert!(!id.is_null(), "method {name:?} {descriptor:?} not found");
        id
    }

    fn new_string(&self, text: &std::ffi::CStr) -> jobject {
        // SAFETY: valid env and modified-UTF-8 (ASCII) string.
        unsafe { (self.functions().NewStringUTF.expect("NewStringUTF"))(self.env, text.as_ptr()) }
    }

    fn static_field_id(&self, name: &str, descriptor: &str) -> jfieldID {
        let name = CString::new(name).expect("no NUL");
        let descriptor = CString::new(descriptor).expect("no NUL");
        // SAFETY: valid env, class and C strings.
        let id = unsafe {
            (self.functions().GetStaticFieldID.expect("GetStaticFieldID"))(
                self.env,
                self.target,
                name.as_ptr(),
                descriptor.as_ptr(),
            )
        };
        assert!(!id.is_null(), "field {name:?}");
        id
    }

    /// Reads the static field `name` of `target` with the JNI getter `get` (one of
    /// `GetStatic<Type>Field`).
    fn static_field<T>(
        &self,
        name: &str,
        descriptor: &str,
        get: Option<unsafe extern "system" fn(*mut JNIEnv, jclass, jfieldID) -> T>,
    ) -> T {
        let field = self.static_field_id(name, descriptor);
        // SAFETY: a static field of `target` whose descriptor matches the getter's type.
        unsafe { (get.expect("GetStatic*Field"))(self.env, self.target, field) }
    }

    fn last_hash(&self) -> i64 {
        self.static_field("lastHash", "J", self.functions().GetStaticLongField)
    }

    fn last_site(&self) -> i32 {
        self.static_field("lastSite", "I", self.functions().GetStaticIntField)
    }

    fn static_object(&self, name: &str) -> jobject {
        let getter = self.functions().GetStaticObjectField;
        self.static_field(name, "Ljava/lang/Object;", getter)
    }

    fn same_object(&self, a: jobject, b: jobject) -> bool {
        // SAFETY: valid env and references.
        unsafe { (self.functions().IsSameObject.expect("IsSameObject"))(self.env, a, b) != 0 }
    }

    fn exception_pending(&self) -> bool {
        // SAFETY: valid env.
        unsafe { (self.functions().ExceptionCheck.expect("ExceptionCheck"))(self.env) != 0 }
    }

    fn assert_no_exception(&self, what: &str) {
        if self.exception_pending() {
            // SAFETY: valid env with a pending exception.
            unsafe {
                (self
                    .functions()
                    .ExceptionDescribe
                    .expect("ExceptionDescribe"))(self.env)
            };
            panic!("Java exception after {what}");
        }
    }

    fn clear_exception(&self) {
        // SAFETY: valid env.
        unsafe { (self.functions().ExceptionClear.expect("ExceptionClear"))(self.env) };
    }

    fn objects(&self) -> [jobject; 3] {
        [self.alpha, std::ptr::null_mut(), self.omega]
    }

    fn object_hash(&self, object: jobject) -> i32 {
        if object.is_null() {
            0
        } else if self.same_object(object, self.alpha) {
            java_string_hash("alpha")
        } else if self.same_object(object, self.omega) {
            java_string_hash("omega")
        } else {
            panic!("unexpected object argument")
        }
    }

    fn receiver(&self, name: &str) -> jobject {
        match name {
            "obj" => self.sub_instance,
            "clazz" => self.target,
            other => panic!("unknown receiver {other}"),
        }
    }

    /// Checks one call: hooks around exactly one run of the Java code at `site`, which saw exactly
    /// the arguments passed.
    fn check_call(&self, index: u32, name: &str, site: i32) {
        self.assert_no_exception(name);
        assert_eq!(
            take_events(),
            vec![Event::Begin(index), Event::Java(site), Event::End(index)],
            "events of {name}"
        );
        assert_eq!(self.last_site(), site, "site of {name}");
        let args = java_args(self.objects());
        assert_eq!(
            self.last_hash(),
            expected_hash(site, &args, |o| self.object_hash(o)),
            "arguments Java received through {name}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Return values.

trait CheckReturn {
    fn check(self, jvm: &Jvm, name: &str, site: i32);
}

impl CheckReturn for jobject {
    fn check(self, jvm: &Jvm, name: &str, site: i32) {
        let expected = if site == SITE_CONSTRUCTOR {
            jvm.static_object("lastConstructed")
        } else {
            jvm.static_object("RESULT")
        };
        assert!(!self.is_null(), "{name} returned null");
        assert!(
            jvm.same_object(self, expected),
            "{name} returned another object"
        );
    }
}

macro_rules! check_primitive_return {
    ($type:ty, |$v:ident| $bits:expr, $expected:expr) => {
        impl CheckReturn for $type {
            fn check(self, _jvm: &Jvm, name: &str, _site: i32) {
                let $v = self;
                assert_eq!($bits, $expected, "{name} returned {self:?}");
            }
        }
    };
}

check_primitive_return!(jboolean, |v| v, RETURNED_BOOLEAN);
check_primitive_return!(jbyte, |v| v, RETURNED_BYTE);
check_primitive_return!(jchar, |v| v, RETURNED_CHAR);
check_primitive_return!(jshort, |v| v, RETURNED_SHORT);
check_primitive_return!(jint, |v| v, RETURNED_INT);
check_primitive_return!(jlong, |v| v, RETURNED_LONG);
check_primitive_return!(jfloat, |v| v.to_bits(), RETURNED_FLOAT_BITS);
check_primitive_return!(jdouble, |v| v.to_bits(), RETURNED_DOUBLE_BITS);

impl CheckReturn for () {
    fn check(self, _jvm: &Jvm, _name: &str, _site: i32) {}
}

// ---------------------------------------------------------------------------------------------
// The 31 families (support's `every_family!`): expected index of the variadic member, Java
// method, site, receivers.

/// The Java method a family of `kind` calls for return type `type_name`, and the site it runs at.
fn java_method_and_site(kind: &str, type_name: &str) -> (String, i32) {
    match kind {
        "virtual" => (format!("virtual{type_name}"), SITE_SUB_INSTANCE),
        "nonvirtual" => (format!("virtual{type_name}"), SITE_TARGET_INSTANCE),
        "static" => (format!("static{type_name}"), SITE_STATIC),
        "constructor" => ("<init>".to_string(), SITE_CONSTRUCTOR),
        other => panic!("unknown kind {other}"),
    }
}

/// Makes one call, then checks the events, the arguments Java saw and the returned value.
fn check_entry<R: CheckReturn>(
    jvm: &Jvm,
    index: u32,
    name: &str,
    site: i32,
    call: impl FnOnce() -> R,
) {
    let result = call();
    jvm.check_call(index, name, site);
    result.check(jvm, name, site);
}

macro_rules! exercise_families {
    ($( $base:tt $kind:literal $type_name:literal ($($receiver:ident),*)
        $variadic:ident $with_va_list:ident $with_array:ident -> $ret:ty; )*) => {
        fn exercise_every_function(jvm: &Jvm, methods: &dyn Fn(&str) -> jmethodID) {
            let env = jvm.env;
            $({
                let table = jvm.functions();
                let (java_method, site) = java_method_and_site($kind, $type_name);
                let method = methods(&java_method);

                let entry = table.$variadic.expect("variadic entry");
                check_entry::<$ret>(jvm, $base, stringify!($variadic), site, || {
                    // SAFETY: a variadic JNI call with the promoted arguments the method declares.
                    unsafe {
                        call_with_java_args!(entry, jvm.objects(), env,
                                             $(jvm.receiver(stringify!($receiver)),)* method)
                    }
                });

                let entry = table.$with_va_list.expect("V entry");
                check_entry::<$ret>(jvm, $base + 1, stringify!($with_va_list), site, || {
                    // SAFETY: the C helper builds a real va_list from the promoted arguments.
                    unsafe {
                        call_with_java_args!(invoke::$with_va_list, jvm.objects(), entry, env,
                                             $(jvm.receiver(stringify!($receiver)),)* method)
                    }
                });

                let entry = table.$with_array.expect("A entry");
                let array: Vec<jvalue> =
                    java_args(jvm.objects()).iter().map(|a| a.to_jvalue()).collect();
                check_entry::<$ret>(jvm, $base + 2, stringify!($with_array), site, || {
                    // SAFETY: one jvalue per parameter of the method.
                    unsafe {
                        entry(env, $(jvm.receiver(stringify!($receiver)),)* method, array.as_ptr())
                    }
                });
            })*
        }
    };
}

every_family!(exercise_families);

// ---------------------------------------------------------------------------------------------

fn run_on_real_jvm() {
    let home = java_home();
    let (target_source, sub_source) = java_sources();
    let class_dir = compile_java(
        &home,
        &[("Target.java", target_source), ("Sub.java", sub_source)],
    );
    // -Xcheck:jni makes HotSpot validate every JNI call (types, method ids) behind the wrappers.
    let (vm, env) = create_jvm(&home, &class_dir, &["-Xcheck:jni"]);

    let mut jvm = Jvm {
        env,
        target: std::ptr::null_mut(),
        sub_instance: std::ptr::null_mut(),
        alpha: std::ptr::null_mut(),
        omega: std::ptr::null_mut(),
    };
    jvm.target = jvm.find_class(c"Target");
    let sub = jvm.find_class(c"Sub");
    let natives = [JNINativeMethod {
        name: c"mark".as_ptr().cast_mut(),
        signature: c"(I)V".as_ptr().cast_mut(),
        fnPtr: java_mark as *mut c_void,
    }];
    // SAFETY: registers a native with the matching signature on Target.
    let registered = unsafe {
        (jvm.functions().RegisterNatives.expect("RegisterNatives"))(
            env,
            jvm.target,
            natives.as_ptr(),
            1,
        )
    };
    assert_eq!(registered, JNI_OK);
    jvm.alpha = jvm.new_string(c"alpha");
    jvm.omega = jvm.new_string(c"omega");

    let params = params_descriptor();
    let sub_init = jvm.method(sub, false, "<init>", "()V");
    let mut methods: Vec<(String, jmethodID)> = vec![(
        "<init>".to_string(),
        jvm.method(jvm.target, false, "<init>", &format!("({params})V")),
    )];
    for (name, java_type, _) in RETURN_TYPES {
        let descriptor = format!("({params}){}", return_descriptor(java_type));
        methods.push((
            format!("virtual{name}"),
            jvm.method(jvm.target, false, &format!("virtual{name}"), &descriptor),
        ));
        methods.push((
            format!("static{name}"),
            jvm.method(jvm.target, true, &format!("static{name}"), &descriptor),
        ));
    }
    let thrower = jvm.method(jvm.target, true, "thrower", &format!("({params})I"));
    let method_by_name = |name: &str| {
        methods
            .iter()
            .find(|(known, _)| known == name)
            .map(|&(_, id)| id)
            .unwrap_or_else(|| panic!("no method {name}"))
    };

    // Before installation: the Sub instance for virtual/nonvirtual calls, through the VM's own table.
    // SAFETY: NewObjectA with a no-argument constructor.
    jvm.sub_instance = unsafe {
        (jvm.functions().NewObjectA.expect("NewObjectA"))(env, sub, sub_init, std::ptr::null())
    };
    jvm.assert_no_exception("new Sub()");
    let vm_int_method_v = table_entry(jvm.functions(), FunctionIndex::CallIntMethodV);

    install_through_jvmti(vm, LOGGING_HOOKS);
    assert_eq!(
        original_entry(FunctionIndex::CallIntMethodV),
        Some(vm_int_method_v)
    );
    assert_ne!(
        table_entry(jvm.functions(), FunctionIndex::CallIntMethodV),
        vm_int_method_v,
        "the env's table must now hold the wrapper"
    );
    take_events();

    exercise_every_function(&jvm, &method_by_name);

    // A Java exception comes back as a pending exception, with the end hook fired.
    let args: Vec<jvalue> = java_args(jvm.objects())
        .iter()
        .map(|a| a.to_jvalue())
        .collect();
    // SAFETY: thrower takes the 25 arguments in `args`.
    unsafe {
        (jvm.functions().CallStaticIntMethodA.expect("entry"))(
            env,
            jvm.target,
            thrower,
            args.as_ptr(),
        )
    };
    assert!(jvm.exception_pending(), "exception must stay pending");
    jvm.clear_exception();
    assert_eq!(
        take_events(),
        vec![Event::Begin(77), Event::Java(SITE_THROWER), Event::End(77)]
    );
    let entry = jvm.functions().CallStaticIntMethod.expect("entry");
    // SAFETY: as above, through the variadic entry.
    unsafe { call_with_java_args!(entry, jvm.objects(), env, jvm.target, thrower) };
    assert!(
        jvm.exception_pending(),
        "exception must stay pending (variadic)"
    );
    jvm.clear_exception();
    assert_eq!(
        take_events(),
        vec![Event::Begin(75), Event::Java(SITE_THROWER), Event::End(75)]
    );

    let _ = std::fs::remove_dir_all(&class_dir);
}

#[test]
fn every_wrapped_function_runs_java_with_exact_arguments_and_results() {
    run_on_vm_thread(run_on_real_jvm, "the real-JVM check failed (see above)");
}
