//! Issue 4, stress: a GC-heavy run (small heap, SerialGC and G1GC) with natives making allocating JNI
//! upcalls does not crash and keeps exact counts.

#[path = "compat/support.rs"]
mod support;

use support::*;

const GC_ARGS: [&str; 3] = ["4", "300", "2000"]; // threads, iterations, strings per native call

fn gc_heavy(collector: &str) {
    let home = jdk_home(17).unwrap();
    let flags = ["-Xmx24m", "-Xms24m", collector, "-Xlog:gc:stderr"];
    let measured = measure_exact(&home, &flags, "compat.GcHeavy", &GC_ARGS, collector);
    let collections = measured
        .run
        .stderr
        .lines()
        .filter(|l| l.contains("[gc") && l.contains("Pause"))
        .count();
    eprintln!(
        "{collector}: {collections} GC pauses, {:.1} s",
        measured.run.seconds
    );
    assert!(
        collections >= 10,
        "{collector}: only {collections} GC pauses: the run is not GC-heavy"
    );
}

#[test]
fn serial_gc_small_heap() {
    gc_heavy("-XX:+UseSerialGC");
}

#[test]
fn g1_gc_small_heap() {
    gc_heavy("-XX:+UseG1GC");
}
