//! nativeacct: a JVMTI agent that measures, exactly, how much CPU time a Java program spends in
//! bytecode and how much in native code behind JNI (the IPA design of Binder et al.).
//!
//! Data flow, one module per step:
//! - [`clock`]: per-thread CPU clocks;
//! - [`context`]: the per-thread context and the four transitions (J2N/N2J begin/end);
//! - [`sampler`]: the per-thread CPU-time sampler that splits each thread's exact time into the
//!   parts of the JNI boundary (Java code, JVM for Java, native code, JVM for native, agent);
//! - [`histograms`]: per-crossing durations, buffered per thread, merged into HdrHistograms;
//! - [`transitions`]: the entry points the instrumentation calls (bind trampolines, J2N helper natives,
//!   JNI wrapper hooks);
//! - [`merge`]: contexts merged into process totals at ThreadEnd and VMDeath;
//! - [`process`]: the whole process's CPU time split into Java, JIT, GC, VM, native threads and agent;
//! - [`report`]: the run's model, and one module per output format (pure: model to bytes);
//! - [`publish`]: each selected format rendered and written; `snapshot` publishes during the run
//!   and at exit, `interval` keeps the periodic `hlog`;
//! - [`outputs`]: where the files go, safely (names, temporary files, symlinks, shared directories).
//!
//! Wiring: [`entry`] (Agent_OnLoad and the JVMTI callbacks), `bind` (NativeMethodBind trampolines,
//! `j2n=bind`), [`class_hook`] (the class-file rewriter in ClassFileLoadHook, `j2n=wrap`), [`spa`] (the slow MethodEntry/MethodExit baseline), [`jvmti`] (bindings),
//! [`control`] (the socket for `nativeacct dump`/`detach`, and `--reset` windows), `attach`
//! (Agent_OnAttach: covering natives bound before a late load).

mod arch;
mod attach;
mod bind;
mod bit_words;
mod clock;
mod context;
mod control;
mod histograms;
mod id_hash;
mod interval;
mod merge;
mod metrics;
mod process;
mod report;
mod sampler;
mod transitions;

mod class_hook;
mod diag;
mod entry;
mod jvmti;
mod methods;
mod options;
mod outputs;
mod publish;
mod snapshot;
mod spa;
mod stacks;
mod sync;
mod thread_exit;
mod vm_structs;

/// What the benchmarks (`bench/`) and the clock tests (`tests/clock_*.rs`) reach through the rlib.
/// Not an API: everything else in the crate is `pub(crate)`, so that the compiler finds dead code.
#[doc(hidden)]
pub mod testing {
    /// The per-thread clocks and their choice.
    pub mod clock {
        pub use crate::clock::{
            choose, choose_in_background, chosen, measure_tsc_hz, read_clock, tsc_calibration,
            ClockChoice, ClockKind, ClockRequest, RemoteCpu, ThreadClock, TscCalibration,
            GROW_AFTER_CPU_NS, MAX_STEP_BACK_NS,
        };
    }
    /// The per-thread context and its transitions.
    pub mod context {
        pub use crate::context::{
            j2n_begin, j2n_end, retire_current, set_lifecycle, set_sampled_timing, thread_started,
            Lifecycle, ThreadContext,
        };
    }
    /// The hooks the bind trampolines and the JNI wrappers call (`bench_crossings`).
    pub mod transitions {
        pub use crate::transitions::{
            bind_enter, bind_enter_sampled, bind_exit, bind_exit_sampled, n2j_begin,
            n2j_begin_sampled, n2j_end, n2j_end_sampled,
        };
    }
    /// Contexts merged into the run's totals, and the transition-pair benchmark.
    pub mod merge {
        pub use crate::merge::{bench_transition_pairs, register, retire};
    }
    pub use crate::bind::bench_trampoline;
    pub use crate::methods::id_for;
    pub use crate::process::bench_scan_ns;
}

/// What the launcher (`src/bin/`) shares with the agent: the option parser, the output names, and
/// the report model with its formats (for `nativeacct report` and `nativeacct diff`). The paths
/// mirror the crate's modules.
#[doc(hidden)]
pub mod launcher {
    /// The agent's options.
    pub mod options {
        pub use crate::options::{parse, Format, Options, DEFAULT_TOP};
    }
    /// The control socket's wire format, shared by the agent and `nativeacct dump`/`detach`.
    pub mod control {
        pub use crate::control::protocol;
    }
    /// Where the files go.
    pub mod outputs {
        pub use crate::outputs::{free_default_base, write_named};
    }
    /// The run's model and its formats.
    pub mod report {
        pub use crate::publish::write_saved;
        pub use crate::report::{render_single, Report};
        /// Two reports compared.
        pub mod diff {
            pub use crate::report::diff::{csv, text, Diff};
        }
        /// The comparison as one HTML page.
        pub mod diff_html {
            pub use crate::report::diff_html::render;
        }
        /// The JSON report read back.
        pub mod json {
            pub use crate::report::json::read;
        }
    }
}
