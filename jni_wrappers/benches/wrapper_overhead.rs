//! Cost of the wrappers on a real HotSpot: the same JNI calls through the VM's own entries (a copy of
//! its table taken before installation) and through the wrapped table, side by side.
//!
//! Run: `cargo bench -p jni_wrappers --bench wrapper_overhead` (needs a JDK, like tests/real_jvm.rs).
//! The hooks here only bump a thread-local counter, so the difference is the wrappers' own cost plus
//! two trivial hook calls; the agent's clock reads come on top.

#[macro_use]
#[path = "../tests/support/mod.rs"]
mod support;

use std::cell::Cell;
use std::ffi::CString;
use std::hint::black_box;
use std::time::Instant;

use jni::sys::{jclass, jmethodID, jvalue, JNIEnv, JNINativeInterface_};
use jni_wrappers::Hooks;
use support::jvm::{compile_java, create_jvm, install_through_jvmti, java_home, run_on_vm_thread};

thread_local! {
    static HOOK_CALLS: Cell<u64> = const { Cell::new(0) };
}

extern "C" fn count_hook(_index: u32) {
    HOOK_CALLS.with(|calls| calls.set(calls.get() + 1));
}

const CALLS_PER_ROUND: u32 = 500_000;
const ROUNDS: usize = 21;

const BENCH_SOURCE: &str = "public class Bench {
    public static void empty() {}
    public static int echo(int a, long b, double c, Object d) { return a; }
}
";

struct Setup {
    env: *mut JNIEnv,
    class: jclass,
    empty: jmethodID,
    echo: jmethodID,
}

/// One measured operation: calls `table`'s entry once.
type Operation = fn(&Setup, &JNINativeInterface_);

fn call_void_a(setup: &Setup, table: &JNINativeInterface_) {
    let entry = table.CallStaticVoidMethodA.expect("entry");
    // SAFETY: `empty` takes no arguments.
    unsafe { entry(setup.env, setup.class, setup.empty, std::ptr::null()) };
}

fn call_void_variadic(setup: &Setup, table: &JNINativeInterface_) {
    let entry = table.CallStaticVoidMethod.expect("entry");
    // SAFETY: `empty` takes no arguments.
    unsafe { entry(setup.env, setup.class, setup.empty) };
}

fn call_int_a(setup: &Setup, table: &JNINativeInterface_) {
    let entry = table.CallStaticIntMethodA.expect("entry");
    let args = [
        jvalue { i: 7 },
        jvalue { j: 8 },
        jvalue { d: 9.0 },
        jvalue {
            l: std::ptr::null_mut(),
        },
    ];
    // SAFETY: `echo(int, long, double, Object)`.
    black_box(unsafe { entry(setup.env, setup.class, setup.echo, args.as_ptr()) });
}

fn call_int_variadic(setup: &Setup, table: &JNINativeInterface_) {
    let entry = table.CallStaticIntMethod.expect("entry");
    let null: jni::sys::jobject = std::ptr::null_mut();
    // SAFETY: `echo(int, long, double, Object)` with promoted arguments.
    black_box(unsafe { entry(setup.env, setup.class, setup.echo, 7, 8i64, 9.0f64, null) });
}

fn call_int_va_list(setup: &Setup, table: &JNINativeInterface_) {
    let entry = table.CallStaticIntMethodV.expect("entry");
    let null: jni::sys::jobject = std::ptr::null_mut();
    // SAFETY: the C helper builds a va_list for `echo(int, long, double, Object)`.
    black_box(unsafe {
        support::invoke::CallStaticIntMethodV(
            entry,
            setup.env,
            setup.class,
            setup.echo,
            7,
            8i64,
            9.0f64,
            null,
        )
    });
}

/// Nanoseconds per call over one round.
fn ns_per_call(setup: &Setup, table: &JNINativeInterface_, operation: Operation) -> f64 {
    let start = Instant::now();
    for _ in 0..CALLS_PER_ROUND {
        operation(setup, table);
    }
    start.elapsed().as_nanos() as f64 / f64::from(CALLS_PER_ROUND)
}

/// Best-of-rounds (VM, wrapped) nanoseconds per call, rounds alternating so drift hits both.
fn compare(
    setup: &Setup,
    vm: &JNINativeInterface_,
    wrapped: &JNINativeInterface_,
    operation: Operation,
) -> (f64, f64) {
    (0..ROUNDS).fold(
        (f64::INFINITY, f64::INFINITY),
        |(best_vm, best_wrapped), _| {
            let direct = ns_per_call(setup, vm, operation);
            let through_wrapper = ns_per_call(setup, wrapped, operation);
            (best_vm.min(direct), best_wrapped.min(through_wrapper))
        },
    )
}

fn method(setup_env: *mut JNIEnv, class: jclass, name: &str, descriptor: &str) -> jmethodID {
    let name = CString::new(name).expect("no NUL");
    let descriptor = CString::new(descriptor).expect("no NUL");
    // SAFETY: valid env, class and strings.
    let id = unsafe {
        ((**setup_env).GetStaticMethodID.expect("GetStaticMethodID"))(
            setup_env,
            class,
            name.as_ptr(),
            descriptor.as_ptr(),
        )
    };
    assert!(!id.is_null(), "method {name:?}");
    id
}

fn run() {
    let home = java_home();
    let class_dir = compile_java(&home, &[("Bench.java", BENCH_SOURCE.to_string())]);
    let (vm, env) = create_jvm(&home, &class_dir, &[]);
    // SAFETY: valid env and class name.
    let class = unsafe { ((**env).FindClass.expect("FindClass"))(env, c"Bench".as_ptr()) };
    assert!(!class.is_null(), "class Bench");
    let setup = Setup {
        env,
        class,
        empty: method(env, class, "empty", "()V"),
        echo: method(env, class, "echo", "(IJDLjava/lang/Object;)I"),
    };

    // SAFETY: a JNIEnv points to the VM's function table; copy it before installing.
    let vm_table: JNINativeInterface_ = unsafe { **env };
    install_through_jvmti(
        vm,
        Hooks {
            begin: count_hook,
            end: count_hook,
        },
    );
    // SAFETY: as above; now the wrapped table.
    let wrapped_table: &JNINativeInterface_ = unsafe { &**env };

    let operations: [(&str, Operation); 5] = [
        ("CallStaticVoidMethodA  empty()", call_void_a),
        ("CallStaticVoidMethod   empty()", call_void_variadic),
        ("CallStaticIntMethodA   echo(I,J,D,L)", call_int_a),
        ("CallStaticIntMethod    echo(I,J,D,L)", call_int_variadic),
        ("CallStaticIntMethodV   echo(I,J,D,L)", call_int_va_list),
    ];
    // Warm up: let HotSpot compile the Java methods.
    for &(_, operation) in &operations {
        compare(&setup, &vm_table, wrapped_table, operation);
    }
    eprintln!(
        "JNI call cost, best of {ROUNDS} alternating rounds x {CALLS_PER_ROUND} calls (ns/call)\n\
         {:<40} {:>9} {:>9} {:>9}",
        "function", "VM", "wrapped", "overhead"
    );
    for (name, operation) in operations {
        HOOK_CALLS.with(|calls| calls.set(0));
        let (direct, wrapped) = compare(&setup, &vm_table, wrapped_table, operation);
        let hook_calls = HOOK_CALLS.with(Cell::get);
        assert_eq!(
            hook_calls,
            2 * ROUNDS as u64 * u64::from(CALLS_PER_ROUND),
            "every wrapped call fires begin and end, and VM-table calls fire none"
        );
        eprintln!(
            "{name:<40} {direct:>9.1} {wrapped:>9.1} {:>9.1}",
            wrapped - direct
        );
    }
    let _ = std::fs::remove_dir_all(&class_dir);
}

fn main() {
    // `cargo test --benches` runs bench targets with --bench absent; only measure under cargo bench.
    if !std::env::args().any(|arg| arg == "--bench") {
        eprintln!("wrapper_overhead: skipped (run with `cargo bench`)");
        return;
    }
    run_on_vm_thread(run, "benchmark failed");
}
