//! nativeacct: a JVMTI agent that measures, exactly, how much CPU time a Java program spends in
//! bytecode and how much in native code behind JNI (the IPA design of Binder et al.).
//!
//! Data flow, one module per step:
//! - [`clock`]: per-thread CPU clocks;
//! - [`context`]: the per-thread context and the four transitions (J2N/N2J begin/end);
//! - [`histograms`]: per-crossing durations, buffered per thread, merged into HdrHistograms;
//! - [`transitions`]: the entry points the instrumentation calls (bind trampolines, J2N helper natives,
//!   JNI wrapper hooks);
//! - [`merge`]: contexts merged into process totals at ThreadEnd and VMDeath;
//! - [`process`]: the whole process's CPU time split into Java, JIT, GC, VM, native threads and agent;
//! - [`report`]: one module per output format; `snapshot` writes it during the run and at exit;
//! - [`outputs`]: where the files go, safely (names, temporary files, symlinks, shared directories).
//!
//! Wiring: [`entry`] (Agent_OnLoad and the JVMTI callbacks), `bind` (NativeMethodBind trampolines,
//! `j2n=bind`), [`class_hook`] (the class-file rewriter in ClassFileLoadHook, `j2n=wrap`), [`spa`] (the slow MethodEntry/MethodExit baseline), [`jvmti`] (bindings),
//! [`control`] (the socket for `nativeacct dump`/`detach`, and `--reset` windows), `attach`
//! (Agent_OnAttach: covering natives bound before a late load).

mod attach;
pub mod bind;
pub mod clock;
pub mod context;
pub mod control;
pub mod histograms;
pub mod interval;
pub mod merge;
pub mod process;
pub mod report;
pub mod transitions;

pub mod class_hook;
pub mod diag;
mod entry;
mod jvmti;
pub mod methods;
pub mod options;
pub mod outputs;
mod snapshot;
mod spa;
pub mod stacks;
mod vm_structs;
