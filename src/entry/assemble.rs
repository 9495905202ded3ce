//! The report assembled from the merged totals and the run's facts, at VMDeath, at process exit and for snapshots.

use super::*;

/// The report of merged `totals`, with the run's facts. `stacks` supplies the sampled stacks
/// when the formats need them. Uses no JVMTI: it also runs on the snapshot thread and at exit.
pub(super) fn assemble_report(
    agent: &Agent,
    totals: &merge::Totals,
    histograms: crate::histograms::Histograms,
    stacks: impl FnOnce() -> Option<crate::stacks::StackData>,
    process: crate::process::ProcessCpu,
) -> Report {
    let bind_mode = agent.options.j2n == J2nMode::Bind && agent.options.mode == Mode::Ipa;
    let info = RunInfo {
        facts: RunFacts {
            mode: match agent.options.mode {
                Mode::Ipa => "ipa",
                Mode::Spa => "spa",
            }
            .to_string(),
            j2n: agent.options.j2n.name().to_string(),
            jdk_version: agent
                .jdk_version
                .get()
                .cloned()
                .unwrap_or_else(|| agent.jdk_feature.to_string()),
            jdk_feature: agent.jdk_feature,
            clock: clock::chosen().kind.name().to_string(),
            clock_reason: clock_reason_at_exit(agent),
            timing: if agent.options.sampled_timing {
                "sampled"
            } else {
                "exact"
            }
            .to_string(),
            split_error95_ns: agent.options.sampled_timing.then(|| {
                (totals.sampled_split_variance.sqrt() * crate::sampler::Z95).round() as u64
            }),
            jni_counts: if agent.options.count_every_jni_function {
                "all"
            } else {
                "upcalls"
            }
            .to_string(),
            tsc_hz: clock::chosen().tsc_hz,
            wall_ns: agent.started.elapsed().as_nanos() as u64,
        },
        bind: bind_mode.then(bind::stats),
        intrinsics: bind_mode
            .then(bind::stats)
            .filter(|stats| stats.intrinsics_known)
            .map(|_| bind::intrinsic_ids()),
        transition_pair_ns: transition_pair_ns(agent),
        j2n_enabled: agent.j2n_enabled.load(Relaxed),
        jni_wrapped: agent.jni_wrapped.load(Relaxed),
        notes: agent
            .notes
            .lock()
            .map(|n| n.clone())
            .unwrap_or_default()
            .into_iter()
            .chain(process.notes.iter().cloned())
            .chain(crate::sampler::notes())
            .collect(),
    };
    let mut report = Report::build(totals, histograms, info);
    report.top = agent.options.top;
    report.process = process;
    report.attach = crate::attach::coverage();
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
pub(super) fn assemble_for_snapshot(
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
pub(super) fn live_thread_names(jvmti: &Jvmti) -> Vec<(usize, String)> {
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
