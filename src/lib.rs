//! nativeacct: a JVMTI agent that measures, exactly, how much CPU time a Java program spends in
//! bytecode and how much in native code behind JNI (the IPA design of Binder et al.).
//!
//! Data flow: clock → thread context → transitions → merge → report.

pub mod clock;
