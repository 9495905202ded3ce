//! Agent entry points and JVMTI wiring: options → clock, rewriter, JNI wrappers, thread contexts → report.

use crate::clock;
use crate::context::{self, State};
use crate::jvmti::{self, capability, event, EventCallbacks, JThread, Jni, Jvmti, RawEnv};
use crate::options::{self, Format, J2nMode, Mode, Options};
use crate::report::{self, Report, RunInfo};
use crate::{bind, class_hook, diag, merge, methods, spa, transitions};
use jni::sys::{jclass, jint, jobject, JNIEnv, JavaVM, JNI_ERR, JNI_OK};
use nativeacct_classfile::{HelperSpec, Policy, RewriteConfig};
use once_cell::sync::OnceCell;
use std::ffi::{c_char, c_uchar, c_void, CStr, CString};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::time::Instant;

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
    let raw = if options.is_null() {
        None
    } else {
        // SAFETY: the VM passes a NUL-terminated option string.
        Some(
            unsafe { CStr::from_ptr(options) }
                .to_string_lossy()
                .into_owned(),
        )
    };
    no_unwind(JNI_ERR, || on_load(vm, raw.as_deref()))
}

/// # Safety
/// Called by the VM; the arguments are not used.
#[no_mangle]
pub unsafe extern "system" fn Agent_OnAttach(
    _vm: *mut JavaVM,
    _options: *mut c_char,
    _reserved: *mut c_void,
) -> jint {
    diag::line(
        "error: nativeacct must be loaded at start-up (-agentpath:...); attaching to a running VM is not supported",
    );
    JNI_ERR
}

/// # Safety
/// Called by the VM at shutdown.
#[no_mangle]
pub unsafe extern "system" fn Agent_OnUnload(_vm: *mut JavaVM) {}

fn on_load(vm: *mut JavaVM, raw: Option<&str>) -> jint {
    // The VM is being created on this thread, which will also run VMInit.
    crate::process::note_vm_thread();
    let options = match options::parse(raw) {
        Ok(o) => o,
        Err(e) => {
            diag::line(&format!("error: {e}"));
            return JNI_ERR;
        }
    };
    if options.help {
        // stderr, like every other word of the agent: stdout belongs to the program.
        eprint!("{}", options::reference_text());
        std::process::exit(0);
    }
    if let Err((path, e)) = report::prepare_outputs(&options) {
        diag::line(&format!("error: cannot write file={}: {e}", path.display()));
        return JNI_ERR;
    }
    let Some(jvmti) = Jvmti::from_vm(vm) else {
        diag::line("error: this VM offers no JVMTI 1.2 environment");
        return JNI_ERR;
    };
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
            wrap_intrinsics: options.wrap_intrinsics,
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
    let agent = Agent {
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
    };
    if !TESTED_JDK_FEATURES.contains(&jdk_feature) {
        let msg = format!(
            "JDK {jdk_feature} is not one nativeacct was tested on ({TESTED_JDK_FEATURES:?}); wrapping with a conservative exclusion policy (the union of the nearest tested lists)"
        );
        diag::line(&msg);
        agent.note(msg);
    }
    let (mode, j2n) = (agent.options.mode, agent.options.j2n);
    let scan = agent.options.scan;
    if AGENT.set(agent).is_err() {
        diag::line("error: nativeacct was loaded twice");
        return JNI_ERR;
    }
    context::set_lifecycle(context::Lifecycle {
        clock: clock::chosen,
        register: register_context,
        retire: merge::retire,
    });
    if let Some(agent) = AGENT.get() {
        crate::snapshot::start(&agent.options, assemble_for_snapshot);
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
            crate::process::start(scan);
            JNI_OK
        }
        Err(e) => {
            diag::line(&format!("error: {e}"));
            JNI_ERR
        }
    }
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

/// GarbageCollectionStart: on the thread that runs the pause, inside it (no JNI, no JVMTI here).
unsafe extern "system" fn on_gc_start(_env: RawEnv) {
    no_unwind((), crate::process::gc_pause_started)
}

/// GarbageCollectionFinish: on the same thread, still inside the pause.
unsafe extern "system" fn on_gc_finish(_env: RawEnv) {
    no_unwind((), crate::process::gc_pause_finished)
}

fn register_context(ctx: &'static context::ThreadContext) {
    merge::register(ctx);
    if let Some(agent) = AGENT.get() {
        // Reachable through JVMTI thread-local storage too (used at ThreadEnd and VMDeath); fails
        // harmlessly in the primordial phase, where the Rust thread-local suffices.
        let _ = agent
            .jvmti
            .set_thread_local(std::ptr::null_mut(), ctx as *const _ as *const c_void);
    }
}

/// VMStart: the earliest moment SetJNIFunctionTable is allowed; install the N2J wrappers. In bind
/// mode, also name the natives bound so far.
unsafe extern "system" fn on_vm_start(_env: RawEnv, _jni: *mut JNIEnv) {
    no_unwind((), || {
        let Some(agent) = AGENT.get() else { return };
        if agent.options.j2n == J2nMode::Bind {
            bind::name_pending(&agent.jvmti, &agent.bind_policy);
        }
        match install_jni_wrappers(&agent.jvmti) {
            Ok(()) => agent.jni_wrapped.store(true, Relaxed),
            Err(e) => {
                let msg = format!("JNI upcalls are not counted: {e}");
                diag::line(&msg);
                agent.note(msg);
            }
        }
    })
}

fn install_jni_wrappers(jvmti: &Jvmti) -> Result<(), String> {
    let table = jvmti.jni_function_table().map_err(|e| e.to_string())?;
    // SAFETY: `table` is a writable copy of the JNI function table allocated by GetJNIFunctionTable.
    let installed = unsafe { jni_wrappers::install(table, transitions::jni_hooks()) };
    let result = if installed {
        jvmti
            .set_jni_function_table(table)
            .map_err(|e| e.to_string())
    } else {
        Err("the JNI wrappers were already installed".into())
    };
    jvmti.deallocate(table as *mut u8);
    result
}

/// VMInit: the main thread gets its context, the J2N helper natives are linked, and the gate opens.
unsafe extern "system" fn on_vm_init(_env: RawEnv, jni_env: *mut JNIEnv, thread: JThread) {
    no_unwind((), || {
        let Some(agent) = AGENT.get() else { return };
        let name = agent.jvmti.thread_name(thread);
        if let Some(version) = agent
            .jvmti
            .system_property("java.vm.version")
            .or_else(|| agent.jvmti.system_property("java.version"))
        {
            let _ = agent.jdk_version.set(version);
        }
        // SAFETY: `jni_env` is the JNIEnv of this (the VMInit) thread.
        find_thread_name_field(&unsafe { Jni::new(jni_env) });
        crate::stacks::vm_is_live();
        crate::histograms::start_drainer(
            merge::drain_pending_samples,
            crate::process::register_agent_thread,
        );
        if agent.options.mode == Mode::Ipa && agent.options.j2n == J2nMode::Bind {
            // The main thread may have crossed during start-up already; from here until `main`
            // runs it executes the launcher's native code.
            context::attach_current_in(State::Native, name);
            bind::name_pending(&agent.jvmti, &agent.bind_policy);
        } else {
            context::attach_current(State::Native, name);
        }
        if agent.options.mode == Mode::Ipa && agent.options.j2n == J2nMode::Wrap {
            // SAFETY: `jni_env` is the JNIEnv of this (the VMInit) thread.
            let jni = unsafe { Jni::new(jni_env) };
            match open_j2n_gate(&jni, &agent.rewrite.helper) {
                Ok(()) => agent.j2n_enabled.store(true, Relaxed),
                Err(e) => {
                    let msg = format!("native-method calls are not counted: {e}");
                    diag::line(&msg);
                    agent.note(msg);
                }
            }
        }
        // Measured on a thread of its own, beside start-up rather than in it.
        let clock = clock::chosen();
        let job = std::thread::Builder::new()
            .name("nativeacct-calibration".into())
            .spawn(move || {
                crate::process::register_agent_thread();
                crate::histograms::discarding(|| {
                    context::measure_transition_pair_ns(
                        clock,
                        CALIBRATION_PAIRS,
                        CALIBRATION_BUDGET_NS,
                    )
                })
            });
        if let (Ok(job), Ok(mut slot)) = (job, agent.pair_cost_job.lock()) {
            *slot = Some(job);
        }
    })
}

/// The measured cost of a transition pair: waits for the VMInit measurement if it still runs.
fn transition_pair_ns(agent: &Agent) -> f64 {
    let job = agent
        .pair_cost_job
        .lock()
        .ok()
        .and_then(|mut slot| slot.take());
    if let Some(Ok(cost)) = job.map(std::thread::JoinHandle::join) {
        agent.pair_cost_bits.store(cost.to_bits(), Relaxed);
    }
    f64::from_bits(agent.pair_cost_bits.load(Relaxed))
}

/// The clock's reason, with the TSC rate checked over the run when it was taken as stated at start.
fn clock_reason_at_exit(agent: &Agent) -> String {
    let choice = clock::chosen();
    let mut reason = choice.reason.clone();
    let uses_tsc = matches!(
        choice.kind,
        clock::ClockKind::Tsc | clock::ClockKind::TscHybrid
    );
    if let (true, Some((measured, off, seconds))) = (uses_tsc, clock::tsc_check_over_run()) {
        reason.push_str(&format!(
            "; over the run ({seconds:.2} s) the TSC ran at {measured} Hz, {:.4}% from the rate used",
            off * 100.0
        ));
        if off > 0.001 {
            agent.note(format!(
                "the TSC ran {:.3}% off its stated rate over the run: tsc-hybrid re-bases on CPU time every 250 µs, so its error stays small; clock=tsc values are off by that much",
                off * 100.0
            ));
        }
    }
    reason
}

/// Link `Object.<begin>N` / `<end>N` while the gate is still closed, then open it. Linking in the live
/// phase resolves them against this library's exported symbols, with nothing printed.
fn open_j2n_gate(jni: &Jni, helper: &HelperSpec) -> Result<(), String> {
    let owner = CString::new(helper.owner.as_str()).map_err(|e| e.to_string())?;
    let class: jclass = jni.find_class(&owner);
    if class.is_null() {
        jni.clear_exception();
        return Err(format!("class {} not found", helper.owner));
    }
    for name in [&helper.begin, &helper.end] {
        let native = CString::new(format!("{name}N")).map_err(|e| e.to_string())?;
        let method = jni.static_method(class, &native, c"(I)V");
        if method.is_null() {
            jni.clear_exception();
            return Err(format!(
                "{}.{name}N is missing: {} was not rewritten (see classes_failed)",
                helper.owner, helper.owner
            ));
        }
        jni.call_static_void_int(class, method, methods::LINK_PROBE_ID);
        if jni.clear_exception() {
            return Err(format!("{}.{name}N could not be linked", helper.owner));
        }
    }
    let gate = CString::new(helper.gate_field.as_str()).map_err(|e| e.to_string())?;
    if !jni.set_static_boolean(class, &gate, true) {
        jni.clear_exception();
        return Err(format!("gate field {} is missing", helper.gate_field));
    }
    Ok(())
}

/// `java.lang.Thread.name`, looked up at VMInit (null: use JVMTI GetThreadInfo).
static THREAD_NAME_FIELD: std::sync::atomic::AtomicPtr<c_void> =
    std::sync::atomic::AtomicPtr::new(std::ptr::null_mut());

fn find_thread_name_field(jni: &Jni) {
    let class = jni.find_class(c"java/lang/Thread");
    if class.is_null() {
        jni.clear_exception();
        return;
    }
    let field = jni.field(class, c"name", c"Ljava/lang/String;");
    THREAD_NAME_FIELD.store(field.cast(), Relaxed);
}

/// The thread's Java name: its `name` field read through JNI (cheap: thread starts are frequent),
/// or JVMTI GetThreadInfo where that field is not found.
fn thread_name(agent: &Agent, jni_env: *mut JNIEnv, thread: JThread) -> Option<String> {
    let field = THREAD_NAME_FIELD.load(Relaxed);
    if field.is_null() || jni_env.is_null() || thread.is_null() {
        return agent.jvmti.thread_name(thread);
    }
    // SAFETY: `jni_env` is the JNIEnv the VM passed to this callback, on this thread.
    let jni = unsafe { Jni::new(jni_env) };
    jni.string_field(thread, field.cast())
}

unsafe extern "system" fn on_thread_start(_env: RawEnv, jni_env: *mut JNIEnv, thread: JThread) {
    no_unwind((), || {
        let Some(agent) = AGENT.get() else { return };
        let name = thread_name(agent, jni_env, thread);
        // Either the VM is about to call Thread.run() or a native thread just attached: the thread's
        // first crossing decides which (see `State::Undecided`).
        context::thread_started(name);
    })
}

unsafe extern "system" fn on_thread_end(_env: RawEnv, _jni: *mut JNIEnv, _thread: JThread) {
    no_unwind((), context::retire_current)
}

/// NativeMethodBind: hand the VM the method's trampoline instead of its C function.
unsafe extern "system" fn on_native_method_bind(
    _env: RawEnv,
    _jni: *mut JNIEnv,
    _thread: JThread,
    method: jni::sys::jmethodID,
    address: *mut c_void,
    new_address_ptr: *mut *mut c_void,
) {
    no_unwind((), || {
        let Some(agent) = AGENT.get() else { return };
        if new_address_ptr.is_null() {
            return;
        }
        if let Some(stub) =
            bind::on_bind(&agent.jvmti, &agent.bind_policy, method, address as usize)
        {
            // SAFETY: the VM passes a valid out-pointer for the duration of this callback.
            unsafe { *new_address_ptr = stub as *mut c_void };
        }
    })
}

unsafe extern "system" fn on_class_file_load(
    _env: RawEnv,
    _jni: *mut JNIEnv,
    _redefined: jclass,
    _loader: jobject,
    name: *const c_char,
    _protection_domain: jobject,
    class_data_len: jint,
    class_data: *const c_uchar,
    new_class_data_len: *mut jint,
    new_class_data: *mut *mut c_uchar,
) {
    no_unwind((), || {
        let Some(agent) = AGENT.get() else { return };
        if class_data.is_null() || class_data_len <= 0 {
            return;
        }
        // SAFETY: the VM passes `class_data_len` readable bytes at `class_data` for this call.
        let bytes = unsafe { std::slice::from_raw_parts(class_data, class_data_len as usize) };
        let name = if name.is_null() {
            "<unnamed>".to_string()
        } else {
            // SAFETY: a non-null name is NUL-terminated.
            unsafe { CStr::from_ptr(name) }
                .to_string_lossy()
                .into_owned()
        };
        let Some(rewritten) =
            class_hook::transform(&name, bytes, &agent.rewrite, agent.options.verbose)
        else {
            return;
        };
        let Ok(len) = jint::try_from(rewritten.len()) else {
            return;
        };
        let Some(mem) = agent.jvmti.allocate(rewritten.len()) else {
            return;
        };
        // SAFETY: `mem` has room for `rewritten.len()` bytes; the out-pointers are valid for this callback.
        unsafe {
            std::ptr::copy_nonoverlapping(rewritten.as_ptr(), mem, rewritten.len());
            *new_class_data_len = len;
            *new_class_data = mem;
        }
    })
}

/// VMDeath: merge every thread still alive and write the report.
unsafe extern "system" fn on_vm_death(_env: RawEnv, _jni: *mut JNIEnv) {
    no_unwind((), || {
        let Some(agent) = AGENT.get() else { return };
        crate::snapshot::write_final(|| {
            context::settle_current();
            let names = live_thread_names(&agent.jvmti);
            let (totals, histograms) = merge::close(|addr| {
                names
                    .iter()
                    .find(|(a, _)| *a == addr)
                    .map(|(_, n)| n.clone())
            });
            let process = crate::process::close(&merge::live_java());
            let report = assemble_report(agent, &totals, histograms, crate::stacks::close, process);
            crate::snapshot::publish_final(&report, &agent.options);
        });
    })
}

/// The report of merged `totals`, with the run's facts. `stacks` supplies the sampled stacks
/// when the formats need them. Uses no JVMTI: it also runs on the snapshot thread and at exit.
fn assemble_report(
    agent: &Agent,
    totals: &merge::Totals,
    histograms: crate::histograms::Histograms,
    stacks: impl FnOnce() -> Option<crate::stacks::StackData>,
    process: crate::process::ProcessCpu,
) -> Report {
    let bind_mode = agent.options.j2n == J2nMode::Bind && agent.options.mode == Mode::Ipa;
    let info = RunInfo {
        mode: match agent.options.mode {
            Mode::Ipa => "ipa",
            Mode::Spa => "spa",
        },
        j2n: agent.options.j2n.name(),
        bind: bind_mode.then(bind::stats),
        intrinsics: bind_mode
            .then(bind::stats)
            .filter(|stats| stats.intrinsics_known)
            .map(|_| bind::intrinsic_ids()),
        clock: clock::chosen().kind.name().to_string(),
        clock_reason: clock_reason_at_exit(agent),
        tsc_hz: clock::chosen().tsc_hz,
        jdk_version: agent
            .jdk_version
            .get()
            .cloned()
            .unwrap_or_else(|| agent.jdk_feature.to_string()),
        jdk_feature: agent.jdk_feature,
        transition_pair_ns: transition_pair_ns(agent),
        wall_ns: agent.started.elapsed().as_nanos() as u64,
        j2n_enabled: agent.j2n_enabled.load(Relaxed),
        jni_wrapped: agent.jni_wrapped.load(Relaxed),
        notes: agent
            .notes
            .lock()
            .map(|n| n.clone())
            .unwrap_or_default()
            .into_iter()
            .chain(process.notes.iter().cloned())
            .collect(),
    };
    let mut report = Report::build(totals, histograms, info);
    report.top = agent.options.top;
    report.process = process;
    let wants_stacks = agent
        .options
        .formats
        .iter()
        .any(|f| matches!(f, Format::Collapsed | Format::Html));
    if wants_stacks {
        report.attach_stacks(stacks(), &agent.options);
    }
    report
}

/// [`assemble_report`] for the snapshot writer, which knows the numbers but not the agent.
fn assemble_for_snapshot(
    totals: &merge::Totals,
    histograms: crate::histograms::Histograms,
    stacks: fn() -> Option<crate::stacks::StackData>,
    process: crate::process::ProcessCpu,
) -> Report {
    let agent = AGENT
        .get()
        .expect("the snapshot writer starts after the agent");
    assemble_report(agent, totals, histograms, stacks, process)
}

/// (context address, Java name) of every live thread that has a context. Addresses are only compared,
/// never dereferenced, since a thread may end meanwhile.
fn live_thread_names(jvmti: &Jvmti) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for thread in jvmti.all_threads() {
        let Ok(ptr) = jvmti.thread_local(thread) else {
            continue;
        };
        if ptr.is_null() {
            continue;
        }
        if let Some(name) = jvmti.thread_name(thread) {
            out.push((ptr as usize, name));
        }
    }
    out
}
