//! The JVMTI event callbacks: VM start, init and death, threads, native binds, class loads and GC pauses.

use super::*;

/// GarbageCollectionStart: on the thread that runs the pause, inside it (no JNI, no JVMTI here).
pub(super) unsafe extern "system" fn on_gc_start(_env: RawEnv) {
    no_unwind((), crate::process::gc_pause_started)
}

/// GarbageCollectionFinish: on the same thread, still inside the pause.
pub(super) unsafe extern "system" fn on_gc_finish(_env: RawEnv) {
    no_unwind((), crate::process::gc_pause_finished)
}

/// A JVMTI callback's body: `f` with the agent (nothing before it is set up), under the panic guard.
fn with_agent(f: impl FnOnce(&'static Agent)) {
    no_unwind((), || {
        if let Some(agent) = AGENT.get() {
            f(agent)
        }
    })
}

pub(super) fn register_context(ctx: &'static context::ThreadContext) {
    merge::register(ctx);
    if ctx.has_name() {
        // Named at ThreadStart: nothing to look up later. JVMTI thread-local storage makes the VM
        // create and later free its per-thread JVMTI state under a global lock, a few µs and a
        // contended lock per thread of a churning program.
        return;
    }
    if let Some(agent) = AGENT.get() {
        // Reachable through JVMTI thread-local storage, so that VMDeath and detach can name it
        // (`live_thread_names`); fails harmlessly in the primordial phase.
        let _ = agent
            .jvmti
            .set_thread_local(std::ptr::null_mut(), ctx as *const _ as *const c_void);
    }
}

/// Tell the boundary sampler where the code cache is (reserved by VMStart; read again at VMInit
/// and after an attach).
fn learn_code_cache() {
    if let Some(code) = crate::vm_structs::code_layout() {
        crate::sampler::set_code_cache(code.cache, code.interpreter, code.vm_stubs);
    }
}

/// VMStart: the earliest moment SetJNIFunctionTable is allowed; install the N2J wrappers. In bind
/// mode, also name the natives bound so far.
pub(super) unsafe extern "system" fn on_vm_start(_env: RawEnv, _jni: *mut JNIEnv) {
    with_agent(|agent| {
        learn_code_cache();
        if agent.options.j2n == J2nMode::Bind {
            bind::name_pending(&agent.jvmti, &agent.bind_policy);
        }
        wrap_jni_or_note(agent);
    })
}

/// Install the N2J wrappers, or say (on stderr and in the report) why JNI upcalls go uncounted.
pub(super) fn wrap_jni_or_note(agent: &Agent) {
    let counting = if agent.options.count_every_jni_function {
        jni_wrappers::Counting::Every
    } else {
        jni_wrappers::Counting::UpcallsOnly
    };
    match install_jni_wrappers(&agent.jvmti, counting) {
        Ok(()) => {
            agent.jni_wrapped.store(true, Relaxed);
            if counting == jni_wrappers::Counting::UpcallsOnly {
                agent.note(
                    "jni_counts=upcalls: only the 93 JNI functions that run Java are counted; the other 137 were left uncounted (their time in libjvm is still JVM for native code; what they run in other libraries, such as memcpy or malloc in the C library, is then native code)"
                        .to_string(),
                );
            }
        }
        Err(e) => {
            let msg = format!("JNI upcalls are not counted: {e}");
            diag::line(&msg);
            agent.note(msg);
        }
    }
}

fn install_jni_wrappers(jvmti: &Jvmti, counting: jni_wrappers::Counting) -> Result<(), String> {
    let table = jvmti.jni_function_table().map_err(|e| e.to_string())?;
    // SAFETY: `table` is a writable copy of the JNI function table allocated by GetJNIFunctionTable.
    let installed =
        unsafe { jni_wrappers::install_with(table, transitions::jni_hooks(), counting) };
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
pub(super) unsafe extern "system" fn on_vm_init(
    _env: RawEnv,
    jni_env: *mut JNIEnv,
    thread: JThread,
) {
    with_agent(|agent| {
        let name = agent.jvmti.thread_name(thread);
        // SAFETY: `jni_env` is the JNIEnv of this (the VMInit) thread.
        vm_is_live(agent, &unsafe { Jni::new(jni_env) });
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
        start_calibration(agent);
    })
}

/// The VM is live (VMInit, or the attach): note its version, find `Thread.name`, let the stack walker
/// use the VM. `jni` is the calling thread's.
pub(super) fn vm_is_live(agent: &Agent, jni: &Jni) {
    if let Some(version) = agent
        .jvmti
        .system_property("java.vm.version")
        .or_else(|| agent.jvmti.system_property("java.version"))
    {
        let _ = agent.jdk_version.set(version);
    }
    learn_code_cache();
    find_thread_name_field(jni);
    crate::stacks::vm_is_live();
}

/// Measure the cost of a transition pair on a thread of its own, beside start-up rather than in it.
pub(super) fn start_calibration(agent: &Agent) {
    let clock = clock::chosen();
    let job = std::thread::Builder::new()
        .name("nativeacct-calibration".into())
        .spawn(move || {
            crate::process::register_agent_thread();
            crate::histograms::discarding(|| {
                context::measure_transition_pair_ns(clock, CALIBRATION_PAIRS, CALIBRATION_BUDGET_NS)
            })
        });
    if let (Ok(job), Ok(mut slot)) = (job, agent.pair_cost_job.lock()) {
        *slot = Some(job);
    }
}

/// The measured cost of a transition pair: waits for the VMInit measurement if it still runs.
pub(super) fn transition_pair_ns(agent: &Agent) -> f64 {
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
pub(super) fn clock_reason_at_exit(agent: &Agent) -> String {
    let choice = clock::chosen();
    let mut reason = choice.reason.clone();
    let uses_tsc = matches!(
        choice.kind,
        clock::ClockKind::Tsc | clock::ClockKind::TscHybrid | clock::ClockKind::TscGated
    );
    if let (true, Some((measured, off, seconds))) = (uses_tsc, clock::tsc_check_over_run()) {
        reason.push_str(&format!(
            "; over the run ({seconds:.2} s) the {counter} ran at {measured} Hz, {:.4}% from the rate used",
            off * 100.0,
            counter = crate::arch::COUNTER_NAME,
        ));
        if off > 0.001 {
            agent.note(format!(
                "the {counter} ran {:.3}% off its stated rate over the run: tsc-hybrid and tsc-gated re-base on CPU time every 250 µs, so their error stays small; clock=tsc values are off by that much",
                off * 100.0,
                counter = crate::arch::COUNTER_NAME,
            ));
        }
    }
    let moved = clock::moved_to_gate();
    if choice.kind == clock::ClockKind::TscHybrid && moved > 0 {
        reason.push_str(&format!(
            "; {moved} thread(s) that blocked or were switched in more than {} times per ms of their CPU kept or went back to tsc-gated's gate instead of perf's switch detection (a perf event costs its thread about 1 µs per switch)",
            clock::SWITCHES_PER_CPU_MS_FOR_GATE
        ));
    }
    if let (true, Some(hz)) = (uses_tsc, choice.tsc_hz) {
        if let Some(note) = coarse_counter_note(hz) {
            agent.note(note);
        }
    }
    reason
}

/// Counters slower than this make a note: one tick is then more than 2 ns.
const COARSE_COUNTER_HZ: u64 = 500_000_000;

/// The note for a counter-based clock whose counter is coarse (arm64's CNTVCT_EL0 ticks at 62.5 MHz
/// under qemu, and moves there in 1 µs steps; 121.875 MHz on Graviton2; tens of MHz on some parts):
/// each call's time is a difference of two reads, off by less than one step either way and unbiased
/// over many calls (see README, "A coarse counter").
fn coarse_counter_note(hz: u64) -> Option<String> {
    if hz >= COARSE_COUNTER_HZ {
        return None;
    }
    let tick_ns = 1e9 / hz as f64;
    let step_ticks = clock::counter_step_ticks().max(1);
    let step_ns = step_ticks as f64 * tick_ns;
    let steps = if step_ticks > 1 {
        format!(" and was seen to move in steps of {step_ticks} ticks ({step_ns:.0} ns) here")
    } else {
        String::new()
    };
    Some(format!(
        "the {} counter ticks at {:.3} MHz ({tick_ns:.1} ns per tick){steps}: each native call's time is read to within {step_ns:.0} ns either way, so a single call shorter than {:.0} ns can be off by more than 10 % and per-call histograms are coarse at that scale; totals and means over many calls are not biased",
        crate::arch::COUNTER_NAME,
        hz as f64 / 1e6,
        10.0 * step_ns
    ))
}

/// Link `Object.<begin>N` / `<end>N` while the gate is still closed, then open it. Linking in the live
/// phase resolves them against this library's exported symbols, with nothing printed.
pub(super) fn open_j2n_gate(jni: &Jni, helper: &HelperSpec) -> Result<(), String> {
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
pub(super) static THREAD_NAME_FIELD: std::sync::atomic::AtomicPtr<c_void> =
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
pub(super) fn thread_name(agent: &Agent, jni_env: *mut JNIEnv, thread: JThread) -> Option<String> {
    let field = THREAD_NAME_FIELD.load(Relaxed);
    if field.is_null() || jni_env.is_null() || thread.is_null() {
        return agent.jvmti.thread_name(thread);
    }
    // SAFETY: `jni_env` is the JNIEnv the VM passed to this callback, on this thread.
    let jni = unsafe { Jni::new(jni_env) };
    jni.string_field(thread, field.cast())
}

pub(super) unsafe extern "system" fn on_thread_start(
    _env: RawEnv,
    jni_env: *mut JNIEnv,
    thread: JThread,
) {
    with_agent(|agent| {
        let name = thread_name(agent, jni_env, thread);
        // Either the VM is about to call Thread.run() or a native thread just attached: the thread's
        // first crossing decides which (see `State::Undecided`).
        context::thread_started(name);
    })
}

pub(super) unsafe extern "system" fn on_thread_end(
    _env: RawEnv,
    jni_env: *mut JNIEnv,
    thread: JThread,
) {
    no_unwind((), || {
        if let Some(agent) = AGENT.get().filter(|_| crate::attach::is_attached()) {
            // Attached late: a thread that was running then has no name yet.
            context::name_current(thread_name(agent, jni_env, thread));
        }
        context::retire_current()
    })
}

/// NativeMethodBind: hand the VM the method's trampoline instead of its C function.
pub(super) unsafe extern "system" fn on_native_method_bind(
    _env: RawEnv,
    _jni: *mut JNIEnv,
    _thread: JThread,
    method: jni::sys::jmethodID,
    address: *mut c_void,
    new_address_ptr: *mut *mut c_void,
) {
    with_agent(|agent| {
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

pub(super) unsafe extern "system" fn on_class_file_load(
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
    with_agent(|agent| {
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
pub(super) unsafe extern "system" fn on_vm_death(_env: RawEnv, _jni: *mut JNIEnv) {
    with_agent(|agent| {
        crate::control::stop();
        crate::metrics::stop();
        crate::snapshot::write_final(|| {
            context::settle_current();
            let names = live_thread_names(&agent.jvmti);
            let (totals, histograms) = merge::close(|addr| {
                names
                    .iter()
                    .find(|(a, _)| *a == addr)
                    .map(|(_, n)| n.clone())
            });
            let process =
                crate::attach::process_since_attach(crate::process::close(&merge::live_java()));
            let report = assemble_report(agent, &totals, histograms, crate::stacks::close, process);
            crate::snapshot::publish_final(&report, &agent.options);
        });
    })
}
