//! What a thread is, judged by its OS name (`/proc/self/task/TID/comm`, at most 15 characters).
//!
//! HotSpot names its own threads when they start (`os::set_native_thread_name`), so a VM thread is
//! known by its name. The prefixes below were read from `/proc/self/task/*/comm` of JDK 11.0.13,
//! 17.0.15, 21.0.8 and 25.0.2 runs with every collector each ships (Serial, Parallel, G1, CMS on 11,
//! ZGC, generational ZGC on 21, Shenandoah, Epsilon), and with JFR, `-Xlog:async`, string
//! deduplication and the attach listener switched on. JVMCI's and JDK 8's names come from HotSpot's
//! sources. A name that matches nothing is not a VM thread: the caller decides from what else it
//! knows (an agent context, the process's first thread).

/// What a thread name says about the thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NameClass {
    /// C1/C2 (and JVMCI) compiler threads, and the code-cache sweeper (JDK ≤ 19).
    JitCompiler,
    /// GC workers and concurrent GC threads of every collector.
    Gc,
    /// The VM thread, periodic task, service, signal, notification, monitor deflation and other
    /// VM-internal threads.
    VmOther,
    /// A JDK thread that runs Java code (Reference Handler, Finalizer, Common-Cleaner).
    JdkJava,
    /// One of nativeacct's own threads (`nativeacct-*`).
    Agent,
    /// Nothing known by this name.
    Unknown,
}

/// Name prefixes, as the kernel keeps them (truncated to 15 characters).
const JIT_COMPILER: &[&str] = &[
    "C1 CompilerThre",
    "C2 CompilerThre",
    // JVMCI (Graal) compiler threads: "JVMCI CompilerThread0", "JVMCI-native CompilerThread0".
    "JVMCI",
    "Sweeper thread",
];

const GC: &[&str] = &[
    // G1, Parallel (17+), CMS's young workers: "GC Thread#0". JDK 8 Parallel: "GC task thread#0".
    "GC Thread#",
    "GC task thread",
    // Parallel on 11: "ParGC Thread#0".
    "ParGC Thread#",
    // G1: "G1 Main Marker", "G1 Conc#0", "G1 Refine#0", "G1 Service", "G1 Young RemSet Sampling".
    "G1 ",
    // CMS (11): "CMS Main Thread", and its "Surrogate Locker Thread (Concurrent GC)".
    "CMS ",
    "Surrogate Locke",
    // Shenandoah: "Shenandoah GC Threads#0", "Shenandoah Control Thread" ("ShenandoahControlThread" on
    // 11), "Shenandoah Uncommit" (25).
    "Shenandoah",
    // ZGC: "ZWorker#0", "ZWorkerYoung#0", "ZWorkerOld#0", "ZDirector", "ZDriver", "ZDriverMajor",
    // "ZDriverMinor", "ZStat", "ZUncommitter", "ZUnmapper"; JDK 21 calls the non-generational ones X*.
    "ZWorker",
    "ZDirector",
    "ZDriver",
    "ZStat",
    "ZUncommitter",
    "ZUnmapper",
    "XWorker",
    "XDirector",
    "XDriver",
    "XStat",
    "XUncommitter",
    "XUnmapper",
    // ZGC's runtime workers (JDK 17-25 create them only with ZGC).
    "RuntimeWorker#",
    // String deduplication: "StringDedupThread" (≤ 17), "StringDedupProcessor" (18+).
    "StringDedup",
];

const VM_OTHER: &[&str] = &[
    "VM Thread",
    "VM Periodic Tas",
    "Signal Dispatch",
    "Service Thread",
    "Notification Th",
    "Monitor Deflati",
    "Safepoint Clean",
    "Attach Listener",
    // -Xlog:async's writer ("AsyncLog Thread"); JFR's "JFR Thread Sampler" (17), "JFR Sampler
    // Thread" (25), and its recorder and periodic-task threads when they have no context.
    "AsyncLog",
    "JFR ",
];

const JDK_JAVA: &[&str] = &["Reference Handl", "Finalizer", "Common-Cleaner"];

/// The prefix of every thread nativeacct starts ("nativeacct-proc", "nativeacct-interval", ...).
pub(crate) const AGENT_PREFIX: &str = "nativeacct-";

/// Classify a thread by its OS name.
pub(crate) fn classify(comm: &str) -> NameClass {
    let matches = |prefixes: &[&str]| prefixes.iter().any(|p| comm.starts_with(p));
    if comm.starts_with(AGENT_PREFIX) {
        NameClass::Agent
    } else if matches(JIT_COMPILER) {
        NameClass::JitCompiler
    } else if matches(GC) {
        NameClass::Gc
    } else if matches(VM_OTHER) {
        NameClass::VmOther
    } else if matches(JDK_JAVA) {
        NameClass::JdkJava
    } else {
        NameClass::Unknown
    }
}

#[cfg(test)]
mod tests {
    use super::{classify, NameClass::*};

    /// Every OS thread name seen in the JDK 11/17/21/25 runs (see the module doc), by class.
    #[test]
    fn every_observed_vm_name_is_classified() {
        let jit = ["C1 CompilerThre", "C2 CompilerThre", "Sweeper thread"];
        let gc = [
            "GC Thread#0",
            "GC Thread#11",
            "ParGC Thread#0",
            "G1 Main Marker",
            "G1 Conc#0",
            "G1 Refine#0",
            "G1 Refine#12",
            "G1 Service",
            "G1 Young RemSet",
            "CMS Main Thread",
            "Shenandoah GC T",
            "Shenandoah Cont",
            "ShenandoahContr",
            "Shenandoah Unco",
            "ZWorker#0",
            "ZWorkerYoung#0",
            "ZWorkerOld#1",
            "ZDirector",
            "ZDriver",
            "ZDriverMajor",
            "ZDriverMinor",
            "ZStat",
            "ZUncommitter",
            "ZUncommitter#0",
            "ZUnmapper",
            "XWorker#0",
            "XDirector",
            "XDriver",
            "XStat",
            "XUncommitter",
            "XUnmapper",
            "RuntimeWorker#0",
            "StringDedupThre",
            "StringDedupProc",
        ];
        let vm = [
            "VM Thread",
            "VM Periodic Tas",
            "Signal Dispatch",
            "Service Thread",
            "Notification Th",
            "Monitor Deflati",
            "Safepoint Clean",
            "Attach Listener",
            "AsyncLog Thread",
            "JFR Thread Samp",
            "JFR Sampler Thr",
            "JFR Recorder Th",
        ];
        let java = ["Reference Handl", "Finalizer", "Common-Cleaner"];
        for name in jit {
            assert_eq!(classify(name), JitCompiler, "{name}");
        }
        for name in gc {
            assert_eq!(classify(name), Gc, "{name}");
        }
        for name in vm {
            assert_eq!(classify(name), VmOther, "{name}");
        }
        for name in java {
            assert_eq!(classify(name), JdkJava, "{name}");
        }
    }

    #[test]
    fn agent_threads_and_full_names() {
        for name in ["nativeacct-proc", "nativeacct-drai", "nativeacct-inte"] {
            assert_eq!(classify(name), Agent, "{name}");
        }
        // Full names (as a JVMCI or JVMTI caller would see them) classify like their truncations.
        assert_eq!(classify("C2 CompilerThread0"), JitCompiler);
        assert_eq!(classify("JVMCI CompilerThread0"), JitCompiler);
        assert_eq!(classify("JVMCI-native CompilerThread1"), JitCompiler);
        assert_eq!(classify("VM Periodic Task Thread"), VmOther);
        assert_eq!(classify("Shenandoah GC Threads#3"), Gc);
    }

    #[test]
    fn everything_else_is_unknown() {
        // The launcher's threads, inherited names, and native libraries' own threads.
        for name in [
            "java",
            "main",
            "",
            "Thread-0",
            "ZMQbg/IO/0",
            "Zookeeper",
            "X11 event",
            "GC",
            "pool-1-thread-1",
            "C3 CompilerThre",
            "VM",
        ] {
            assert_eq!(classify(name), Unknown, "{name:?}");
        }
    }
}
