//! A JVM inside the test process: JDK discovery, javac, JNI_CreateJavaVM from the JDK's libjvm, and
//! installing the wrappers through JVMTI Get/SetJNIFunctionTable the way the agent does.

use std::ffi::{c_char, c_int, c_void, CString};
use std::path::{Path, PathBuf};
use std::process::Command;

use jni::sys::{
    jint, JNIEnv, JNINativeInterface_, JavaVM, JavaVMInitArgs, JavaVMOption, JNI_OK, JNI_VERSION_10,
};
use jni_wrappers::{install, Hooks};

/// The workspace's test JDK (`NATIVEACCT_TEST_JAVA_HOME`), which must also have a server libjvm.
pub fn java_home() -> PathBuf {
    let home = test_support::java_home();
    let libjvm = home.join("lib/server/libjvm.so");
    assert!(libjvm.exists(), "this test needs {}", libjvm.display());
    home
}

/// Writes `sources` (file name, text) to a fresh directory, compiles them with javac, returns it.
pub fn compile_java(home: &Path, sources: &[(&str, String)]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("nativeacct-jni-wrappers-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("create class dir");
    let mut javac = Command::new(home.join("bin/javac"));
    javac.arg("-d").arg(&dir);
    for (file_name, text) in sources {
        std::fs::write(dir.join(file_name), text).expect("write Java source");
        javac.arg(dir.join(file_name));
    }
    let status = javac.status().expect("run javac");
    assert!(status.success(), "javac failed");
    dir
}

/// Runs `body` on a new thread with a 16 MiB stack, which HotSpot wants on the thread that creates
/// the VM (that thread stays attached), and waits for it; panics with `failure` if `body` did.
pub fn run_on_vm_thread(body: fn(), failure: &str) {
    std::thread::Builder::new()
        .stack_size(16 << 20)
        .spawn(body)
        .expect("spawn")
        .join()
        .expect(failure);
}

// glibc's dynamic loader (std already links libc; Linux flag values).
const RTLD_NOW: c_int = 2;
const RTLD_GLOBAL: c_int = 0x100;
extern "C" {
    fn dlopen(filename: *const c_char, flags: c_int) -> *mut c_void;
    fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void;
}

type CreateJavaVm =
    unsafe extern "system" fn(*mut *mut JavaVM, *mut *mut c_void, *mut c_void) -> jint;

pub fn create_jvm(
    home: &Path,
    class_dir: &Path,
    extra_options: &[&str],
) -> (*mut JavaVM, *mut JNIEnv) {
    let libjvm = CString::new(
        home.join("lib/server/libjvm.so")
            .to_str()
            .expect("utf-8 path"),
    )
    .expect("no NUL");
    // SAFETY: dlopen/dlsym with valid C strings; the library stays loaded for the process.
    let create: CreateJavaVm = unsafe {
        let handle = dlopen(libjvm.as_ptr(), RTLD_NOW | RTLD_GLOBAL);
        assert!(!handle.is_null(), "dlopen libjvm failed");
        let symbol = dlsym(handle, c"JNI_CreateJavaVM".as_ptr());
        assert!(!symbol.is_null(), "JNI_CreateJavaVM not found");
        std::mem::transmute::<*mut c_void, CreateJavaVm>(symbol)
    };
    let class_path =
        CString::new(format!("-Djava.class.path={}", class_dir.display())).expect("no NUL");
    let mut option_strings = vec![class_path];
    option_strings.extend(
        extra_options
            .iter()
            .map(|o| CString::new(*o).expect("no NUL")),
    );
    let mut options: Vec<JavaVMOption> = option_strings
        .iter()
        .map(|s| JavaVMOption {
            optionString: s.as_ptr().cast_mut(),
            extraInfo: std::ptr::null_mut(),
        })
        .collect();
    let mut init_args = JavaVMInitArgs {
        version: JNI_VERSION_10,
        nOptions: options.len() as jint,
        options: options.as_mut_ptr(),
        ignoreUnrecognized: 0,
    };
    let mut vm: *mut JavaVM = std::ptr::null_mut();
    let mut env: *mut c_void = std::ptr::null_mut();
    // SAFETY: valid out-pointers and init args that live across the call.
    let result = unsafe {
        create(
            &mut vm,
            &mut env,
            (&mut init_args as *mut JavaVMInitArgs).cast(),
        )
    };
    assert_eq!(result, JNI_OK, "JNI_CreateJavaVM failed");
    (vm, env.cast())
}

// ---------------------------------------------------------------------------------------------
// JVMTI: just the three functions the agent uses for this.

const JVMTI_VERSION_1_2: jint = 0x3001_0200;
/// 0-based positions in jvmtiInterface_1 (jvmti.h numbers them from 1).
const JVMTI_DEALLOCATE: usize = 46;
const JVMTI_SET_JNI_FUNCTION_TABLE: usize = 119;
const JVMTI_GET_JNI_FUNCTION_TABLE: usize = 120;

type JvmtiEnv = *mut *const *const c_void;

fn jvmti_function(jvmti: JvmtiEnv, position: usize) -> *const c_void {
    // SAFETY: a jvmtiEnv points to its function table, which has more than `position` entries.
    unsafe { *(*jvmti).add(position) }
}

/// Installs the wrappers into the running VM the way the agent does.
pub fn install_through_jvmti(vm: *mut JavaVM, hooks: Hooks) {
    let mut jvmti: *mut c_void = std::ptr::null_mut();
    // SAFETY: `vm` is a live JavaVM; GetEnv writes a jvmtiEnv pointer.
    let result = unsafe { ((**vm).GetEnv.expect("GetEnv"))(vm, &mut jvmti, JVMTI_VERSION_1_2) };
    assert_eq!(result, JNI_OK, "GetEnv(JVMTI) failed");
    let jvmti: JvmtiEnv = jvmti.cast();
    type GetTable = unsafe extern "system" fn(JvmtiEnv, *mut *mut JNINativeInterface_) -> jint;
    type SetTable = unsafe extern "system" fn(JvmtiEnv, *const JNINativeInterface_) -> jint;
    type Deallocate = unsafe extern "system" fn(JvmtiEnv, *mut u8) -> jint;
    // SAFETY: these positions hold exactly these signatures in jvmtiInterface_1.
    let (get, set, deallocate) = unsafe {
        (
            std::mem::transmute::<*const c_void, GetTable>(jvmti_function(
                jvmti,
                JVMTI_GET_JNI_FUNCTION_TABLE,
            )),
            std::mem::transmute::<*const c_void, SetTable>(jvmti_function(
                jvmti,
                JVMTI_SET_JNI_FUNCTION_TABLE,
            )),
            std::mem::transmute::<*const c_void, Deallocate>(jvmti_function(
                jvmti,
                JVMTI_DEALLOCATE,
            )),
        )
    };
    let mut table: *mut JNINativeInterface_ = std::ptr::null_mut();
    // SAFETY: JVMTI calls in the live phase with valid out-pointers; the copy is ours until freed.
    unsafe {
        assert_eq!(get(jvmti, &mut table), 0, "GetJNIFunctionTable");
        assert!(install(table, hooks), "install must succeed once");
        assert_eq!(set(jvmti, table), 0, "SetJNIFunctionTable");
        assert_eq!(deallocate(jvmti, table.cast()), 0, "Deallocate");
    }
}
