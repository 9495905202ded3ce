//! Loaded into a running VM (`nativeacct attach`): Agent_OnAttach's wiring, done on the attaching
//! thread, and `nativeacct detach`.

use super::*;

/// Agent_OnAttach: the agent arrives in a live VM. The VMStart/VMInit work is done here, on the
/// attaching thread; natives bound before now are covered where possible (see `attach`).
pub(super) fn on_attach(vm: *mut JavaVM, raw: Option<&str>) -> jint {
    if AGENT.get().is_some() {
        diag::line("error: nativeacct is already loaded in this JVM (a detached agent cannot be attached again)");
        return JNI_ERR;
    }
    let Some(options) = parse_options(raw) else {
        return JNI_ERR;
    };
    if options.help {
        eprint!("{}", options::reference_text());
        return JNI_ERR;
    }
    if options.mode != Mode::Ipa || options.j2n != J2nMode::Bind {
        diag::line("error: attaching supports mode=ipa with j2n=bind only (class rewriting and the SPA baseline need the agent from start-up)");
        return JNI_ERR;
    }
    let Some(jvmti) = open_outputs_and_jvmti(vm, &options) else {
        return JNI_ERR;
    };
    let mut jni_env: *mut c_void = std::ptr::null_mut();
    // SAFETY: `vm` is the JavaVM the VM passed; GetEnv writes one pointer for this (attached) thread.
    let rc = unsafe {
        match (**vm).GetEnv {
            Some(get_env) => get_env(vm, &mut jni_env, jni::sys::JNI_VERSION_1_6),
            None => JNI_ERR,
        }
    };
    if rc != JNI_OK || jni_env.is_null() {
        diag::line("error: the attaching thread has no JNIEnv");
        return JNI_ERR;
    }
    let jni_env = jni_env as *mut JNIEnv;
    crate::attach::keep_vm(vm);
    crate::attach::mark_process_start();
    // No class is rewritten after an attach: intrinsics are never wrapped.
    let agent = new_agent(jvmti, options, false);
    agent.note("attached to a running JVM: counts and times cover the time since the attach; threads that were running then are named by tid in dumps until the final report".into());
    let Some(agent) = publish(agent, Some(detach_now)) else {
        return JNI_ERR;
    };
    if let Err(e) = wire_bind(&jvmti) {
        diag::line(&format!("error: {e}"));
        return JNI_ERR;
    }
    // SAFETY: `jni_env` is this thread's JNIEnv.
    vm_is_live(agent, &unsafe { Jni::new(jni_env) });
    // SAFETY: `jni_env` is this thread's JNIEnv.
    unsafe { crate::attach::cover_bound_natives(&jvmti, jni_env, &agent.bind_policy) };
    // After the walk, so that its own JNI calls are not counted.
    crate::attach::keep_original_jni_table(&jvmti);
    wrap_jni_or_note(agent);
    start_calibration(agent);
    enable_gc_events(&jvmti);
    crate::process::start(agent.options.scan, agent.options.exit_hook);
    JNI_OK
}

/// `nativeacct detach`: stop counting as far as JVMTI allows and return the final report. JNI
/// upcalls are no longer intercepted, no more binds are redirected, and the trampolines of natives
/// already redirected jump straight to their functions.
fn detach_now() -> Result<Report, String> {
    let agent = AGENT.get().ok_or("the agent is not running")?;
    crate::metrics::stop();
    let mut report =
        Err("the final report was already written (the VM is shutting down?)".to_string());
    crate::snapshot::write_final(|| {
        // JVMTI's state-changing functions need a thread the VM knows: this one, for a moment.
        let names = crate::attach::as_vm_thread(|| {
            for e in [
                event::NATIVE_METHOD_BIND,
                event::THREAD_START,
                event::THREAD_END,
                event::GARBAGE_COLLECTION_START,
                event::GARBAGE_COLLECTION_FINISH,
            ] {
                let _ = agent.jvmti.disable_event(e);
            }
            bind::pass_through_all();
            if let Err(e) = crate::attach::restore_jni_table(&agent.jvmti) {
                agent.note(format!(
                    "JNI upcalls are still intercepted after detach: {e}"
                ));
            }
            live_thread_names(&agent.jvmti)
        })
        .unwrap_or_else(|e| {
            agent.note(format!("counting could not be switched off at detach: {e}"));
            Vec::new()
        });
        let (mut totals, histograms) = merge::close(|addr| {
            names
                .iter()
                .find(|(a, _)| *a == addr)
                .map(|(_, n)| n.clone())
        });
        crate::control::window::name_rows_from_os(&mut totals);
        let process =
            crate::attach::process_since_attach(crate::process::close(&merge::live_java()));
        let mut built = assemble_report(agent, &totals, histograms, crate::stacks::close, process);
        built.written_at = "detach".to_string();
        report = Ok(built);
    });
    report
}
