//! Agent entry points and JVMTI wiring: options → clock, rewriter, JNI wrappers, thread contexts → report.
//!
//! `Agent_OnLoad` and the wiring of components are here; the event callbacks are in `events`, the
//! report's assembly from the merged totals in `assemble`. Nothing below this module calls into it.

use crate::clock;
use crate::context::{self, State};
use crate::jvmti::{self, capability, event, EventCallbacks, JThread, Jni, Jvmti, RawEnv};
use crate::options::{self, Format, J2nMode, Mode, Options};
use crate::report::{Report, RunFacts, RunInfo};
use crate::{bind, class_hook, diag, merge, methods, spa, transitions};
use jni::sys::{jclass, jint, jobject, JNIEnv, JavaVM, JNI_ERR, JNI_OK};
use nativeacct_classfile::{HelperSpec, Policy, RewriteConfig};
use once_cell::sync::OnceCell;
use std::ffi::{c_char, c_uchar, c_void, CStr, CString};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::time::Instant;

mod assemble;
mod attached;
mod events;
use assemble::*;
use attached::*;
use events::*;

/// Everything fixed at start-up.
pub(crate) struct Agent {
    pub(crate) jvmti: Jvmti,
    pub(crate) options: Options,
    pub(crate) rewrite: RewriteConfig,
    bind_policy: bind::BindPolicy,
    pub(crate) jdk_feature: u32,
    started: Instant,
    j2n_enabled: AtomicBool,
    jni_wrapped: AtomicBool,
    /// f64 bits of the measured cost of one transition pair.
    pair_cost_bits: AtomicU64,
    /// The background measurement of that cost, started at VMInit, joined at VMDeath.
    pair_cost_job: std::sync::Mutex<Option<std::thread::JoinHandle<f64>>>,
    notes: std::sync::Mutex<Vec<String>>,
    /// `java.vm.version`, read at VMInit (the report is also built where JVMTI cannot be used).
    jdk_version: OnceCell<String>,
}

static AGENT: OnceCell<Agent> = OnceCell::new();

/// Transition pairs timed at VMInit to measure the agent's own cost: enough for a stable mean, few
/// enough that every JVM start pays only about a millisecond for it.
const CALIBRATION_PAIRS: u64 = 20_000;
/// ...and at most about this much of the clock's time (slow clocks reach it first).
const CALIBRATION_BUDGET_NS: u64 = 2_000_000;

/// JDK feature versions of the compatibility matrix (`scripts/compat-matrix`).
const TESTED_JDK_FEATURES: [u32; 4] = [11, 17, 21, 25];

impl Agent {
    /// A freshly loaded (or attached) agent: nothing enabled or measured yet.
    fn new(
        jvmti: Jvmti,
        options: Options,
        rewrite: RewriteConfig,
        bind_policy: bind::BindPolicy,
        jdk_feature: u32,
    ) -> Agent {
        Agent {
            jvmti,
            options,
            rewrite,
            bind_policy,
            jdk_feature,
            started: Instant::now(),
            j2n_enabled: AtomicBool::new(false),
            jni_wrapped: AtomicBool::new(false),
            pair_cost_bits: AtomicU64::new(0f64.to_bits()),
            pair_cost_job: std::sync::Mutex::new(None),
            notes: std::sync::Mutex::new(Vec::new()),
            jdk_version: OnceCell::new(),
        }
    }

    fn note(&self, message: String) {
        // Snapshots assemble the report again and again: each note once.
        if let Ok(mut notes) = self.notes.lock() {
            if !notes.contains(&message) {
                notes.push(message);
            }
        }
    }
}

/// Run a JVMTI callback's body with the agent's one panic guard: no unwinding into the VM.
fn no_unwind<T>(fallback: T, f: impl FnOnce() -> T) -> T {
    diag::no_unwind(&diag::JVMTI_CALLBACK, fallback, f)
}

/// # Safety
/// Called by the VM with a valid `JavaVM*` and a NUL-terminated option string (or null).
#[no_mangle]
pub unsafe extern "system" fn Agent_OnLoad(
    vm: *mut JavaVM,
    options: *mut c_char,
    _reserved: *mut c_void,
) -> jint {
    // SAFETY: the VM passes a NUL-terminated option string or null.
    unsafe { start_agent(vm, options, on_load) }
}

/// # Safety
/// Called by the VM (dynamic attach, `nativeacct attach`) on a live Java thread, with a valid
/// `JavaVM*` and a NUL-terminated option string (or null).
#[no_mangle]
pub unsafe extern "system" fn Agent_OnAttach(
    vm: *mut JavaVM,
    options: *mut c_char,
    _reserved: *mut c_void,
) -> jint {
    // SAFETY: the VM passes a NUL-terminated option string or null.
    unsafe { start_agent(vm, options, on_attach) }
}

/// Agent_OnLoad's and Agent_OnAttach's common part: read the option string the VM passed and run
/// `start` with it, under the panic guard.
///
/// # Safety
/// `options` is null or a NUL-terminated string.
unsafe fn start_agent(
    vm: *mut JavaVM,
    options: *const c_char,
    start: fn(*mut JavaVM, Option<&str>) -> jint,
) -> jint {
    let raw = (!options.is_null()).then(|| {
        // SAFETY: not null, and NUL-terminated by the caller's contract.
        unsafe { CStr::from_ptr(options) }
            .to_string_lossy()
            .into_owned()
    });
    no_unwind(JNI_ERR, || start(vm, raw.as_deref()))
}

/// # Safety
/// Called by the VM at shutdown.
#[no_mangle]
pub unsafe extern "system" fn Agent_OnUnload(_vm: *mut JavaVM) {}

fn on_load(vm: *mut JavaVM, raw: Option<&str>) -> jint {
    // The VM is being created on this thread, which will also run VMInit.
    crate::process::note_vm_thread();
    let Some(options) = parse_options(raw) else {
        return JNI_ERR;
    };
    if options.help {
        // stderr, like every other word of the agent: stdout belongs to the program.
        eprint!("{}", options::reference_text());
        std::process::exit(0);
    }
    let Some(jvmti) = open_outputs_and_jvmti(vm, &options) else {
        return JNI_ERR;
    };
    let wrap_intrinsics = options.wrap_intrinsics;
    let agent = new_agent(jvmti, options, wrap_intrinsics);
    let jdk_feature = agent.jdk_feature;
    if !TESTED_JDK_FEATURES.contains(&jdk_feature) {
        let msg = format!(
            "JDK {jdk_feature} is not one nativeacct was tested on ({TESTED_JDK_FEATURES:?}); wrapping with a conservative exclusion policy (the union of the nearest tested lists)"
        );
        diag::line(&msg);
        agent.note(msg);
    }
    let (mode, j2n) = (agent.options.mode, agent.options.j2n);
    let (scan, exit_hook) = (agent.options.scan, agent.options.exit_hook);
    if publish(agent, None).is_none() {
        return JNI_ERR;
    }
    let result = match (mode, j2n) {
        (Mode::Ipa, J2nMode::Bind) => wire_bind(&jvmti),
        (Mode::Ipa, J2nMode::Wrap) => wire_wrap(&jvmti),
        (Mode::Spa, _) => {
            let (capabilities, own, own_events) = spa::events(&jvmti);
            wire_events(&jvmti, capabilities, own, own_events)
        }
    };
    match result {
        Ok(()) => {
            enable_gc_events(&jvmti);
            crate::process::start(scan, exit_hook);
            JNI_OK
        }
        Err(e) => {
            diag::line(&format!("error: {e}"));
            JNI_ERR
        }
    }
}

/// The agent's options, or None after saying on stderr why they are wrong.
fn parse_options(raw: Option<&str>) -> Option<Options> {
    options::parse(raw)
        .map_err(|e| diag::line(&format!("error: {e}")))
        .ok()
}

/// Create the report files the options name and take the VM's JVMTI environment; None after saying
/// on stderr which of the two failed.
fn open_outputs_and_jvmti(vm: *mut JavaVM, options: &Options) -> Option<Jvmti> {
    if let Err((path, e)) = crate::publish::prepare_outputs(options) {
        diag::line(&format!("error: cannot write file={}: {e}", path.display()));
        return None;
    }
    let jvmti = Jvmti::from_vm(vm);
    if jvmti.is_none() {
        diag::line("error: this VM offers no JVMTI 1.2 environment");
    }
    jvmti
}

/// The agent for these options, with the clock being chosen and the stack walker given the VM.
fn new_agent(jvmti: Jvmti, options: Options, wrap_intrinsics: bool) -> Agent {
    let jdk_feature = jvmti
        .version()
        .map(|v| ((v as u32) & 0x0FFF_0000) >> 16)
        .unwrap_or(0);
    clock::choose_in_background(options.clock, crate::process::register_agent_thread);
    let rewrite = RewriteConfig {
        prefix: options.prefix.clone(),
        helper: HelperSpec::default(),
        policy: Policy {
            jdk_feature,
            wrap_intrinsics,
            include: options.include.clone(),
            exclude: options.exclude.clone(),
        },
    };
    let bind_policy = bind::BindPolicy {
        include: options.include.clone(),
        exclude: options.exclude.clone(),
    };
    crate::stacks::attach_vm(crate::stacks::VmAccess {
        jvmti,
        helper: rewrite.helper.clone(),
        prefix: rewrite.prefix.clone(),
    });
    Agent::new(jvmti, options, rewrite, bind_policy, jdk_feature)
}

/// Make `agent` the one agent, give the thread contexts their lifecycle, and start the periodic
/// snapshots and the control channel (`detach`: how the channel's `detach` command stops counting).
fn publish(agent: Agent, detach: Option<crate::control::Detach>) -> Option<&'static Agent> {
    if AGENT.set(agent).is_err() {
        diag::line("error: nativeacct was loaded twice");
        return None;
    }
    let agent = AGENT.get()?;
    context::set_sampled_timing(agent.options.sampled_timing);
    crate::metrics::set_assemble(assemble_for_snapshot);
    if let Some(addr) = agent.options.metrics {
        // Before anything else starts: a port that cannot be had stops the VM, like a bad option.
        if let Err(e) = crate::metrics::start(addr, assemble_for_snapshot) {
            diag::line(&format!("error: {e}"));
            return None;
        }
    }
    if let Err(e) = crate::sampler::configure(
        agent.options.boundary,
        agent.options.boundary_timer_only,
        agent.options.boundary_period,
        agent.options.boundary_after,
    ) {
        diag::line(&e);
        agent.note(e);
    } else if agent.options.boundary && !agent.options.boundary_after.is_zero() {
        merge::start_armer(agent.options.boundary_after);
    }
    context::set_lifecycle(context::Lifecycle {
        clock: clock::chosen,
        register: register_context,
        retire: merge::retire,
    });
    crate::snapshot::start(&agent.options, assemble_for_snapshot);
    if agent.options.control {
        crate::control::start(&agent.options, assemble_for_snapshot, detach);
    }
    Some(agent)
}

/// `j2n=bind`: NativeMethodBind redirects every native to a trampoline; no class is touched, so the
/// early ClassFileLoadHook (which turns CDS off) is never enabled.
fn wire_bind(jvmti: &Jvmti) -> Result<(), jvmti::JvmtiError> {
    wire_events(
        jvmti,
        jvmti::Capabilities::default().with(capability::CAN_GENERATE_NATIVE_METHOD_BIND_EVENTS),
        |callbacks| {
            callbacks.vm_start(on_vm_start);
            callbacks.native_method_bind(on_native_method_bind);
        },
        &[event::VM_START, event::NATIVE_METHOD_BIND],
    )?;
    if let Some(agent) = AGENT.get() {
        agent.j2n_enabled.store(true, Relaxed);
    }
    Ok(())
}

/// `j2n=wrap`: the class-file hook rewrites every native into a Java wrapper around a renamed native.
fn wire_wrap(jvmti: &Jvmti) -> Result<(), jvmti::JvmtiError> {
    wire_events(
        jvmti,
        jvmti::Capabilities::default()
            .with(capability::CAN_GENERATE_ALL_CLASS_HOOK_EVENTS)
            .with(capability::CAN_GENERATE_EARLY_CLASS_HOOK_EVENTS)
            .with(capability::CAN_SET_NATIVE_METHOD_PREFIX),
        |callbacks| {
            callbacks.vm_start(on_vm_start);
            callbacks.class_file_load_hook(on_class_file_load);
        },
        &[event::VM_START, event::CLASS_FILE_LOAD_HOOK],
    )?;
    let prefix = AGENT
        .get()
        .map(|a| a.rewrite.prefix.clone())
        .unwrap_or_default();
    jvmti.set_native_method_prefix(&prefix)
}

/// Add `capabilities`, install the callbacks every mode shares plus the mode's `own`, and enable the
/// shared events plus `own_events`.
fn wire_events(
    jvmti: &Jvmti,
    capabilities: jvmti::Capabilities,
    own: impl FnOnce(&mut EventCallbacks),
    own_events: &[u32],
) -> Result<(), jvmti::JvmtiError> {
    jvmti.add_capabilities(&capabilities)?;
    let mut callbacks = EventCallbacks::default();
    callbacks.vm_init(on_vm_init);
    callbacks.vm_death(on_vm_death);
    callbacks.thread_start(on_thread_start);
    callbacks.thread_end(on_thread_end);
    callbacks.garbage_collection_start(on_gc_start);
    callbacks.garbage_collection_finish(on_gc_finish);
    own(&mut callbacks);
    jvmti.set_event_callbacks(&callbacks)?;
    let shared = [
        event::VM_INIT,
        event::VM_DEATH,
        event::THREAD_START,
        event::THREAD_END,
    ];
    for &e in shared.iter().chain(own_events) {
        jvmti.enable_event(e)?;
    }
    Ok(())
}

/// GC pause events, for the process accounting: the CPU the VM thread spends in pauses is the GC's.
/// Without them (the capability refused) those pauses stay in `vm_other`.
fn enable_gc_events(jvmti: &Jvmti) {
    let wanted =
        jvmti::Capabilities::default().with(capability::CAN_GENERATE_GARBAGE_COLLECTION_EVENTS);
    let enabled = jvmti.add_capabilities(&wanted).and_then(|()| {
        jvmti.enable_event(event::GARBAGE_COLLECTION_START)?;
        jvmti.enable_event(event::GARBAGE_COLLECTION_FINISH)
    });
    if let (Err(e), Some(agent)) = (enabled, AGENT.get()) {
        agent.note(format!(
            "GC pauses on the VM thread are counted as vm_other, not gc: {e}"
        ));
    }
}
