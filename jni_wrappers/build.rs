//! Builds the C shim that defines the 31 variadic JNI entry points, the thread-block TLS word of
//! the counting wrappers, and (for integration tests only)
//! the fake JNI originals the tests install the wrappers over.

use std::env;
use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=csrc/variadic_shim.c");
    println!("cargo:rerun-if-changed=csrc/thread_block.c");
    println!("cargo:rerun-if-changed=tests/support/fake_jni.c");

    cc::Build::new()
        .file("csrc/variadic_shim.c")
        .opt_level(2)
        .flag_if_supported("-std=c11")
        .warnings(true)
        .extra_warnings(true)
        .compile("nativeacct_jni_variadic_shim");

    cc::Build::new()
        .file("csrc/thread_block.c")
        .opt_level(2)
        .flag_if_supported("-std=c11")
        .warnings(true)
        .extra_warnings(true)
        .compile("nativeacct_jni_thread_block");

    // Test-only: built as an archive that is linked into integration-test binaries alone, so the
    // library (and the agent) never carries these symbols.
    let fakes_name = "nativeacct_jni_test_fakes";
    cc::Build::new()
        .file("tests/support/fake_jni.c")
        .opt_level(2)
        .flag_if_supported("-std=c11")
        .warnings(true)
        .cargo_metadata(false)
        .compile(fakes_name);
    let out_dir = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let archive = out_dir.join(format!("lib{fakes_name}.a"));
    println!("cargo:rustc-link-arg-tests={}", archive.display());
    println!("cargo:rustc-link-arg-benches={}", archive.display());
}
