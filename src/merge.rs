//! Merging per-thread contexts into process totals: at ThreadEnd for each ending thread, and at
//! VMDeath for every thread still alive.

use crate::context::{State, ThreadContext};
use crate::histograms::IdMap;
use crate::sampler::{Boundary, BoundarySamples};
use jni_wrappers::{ALL_FUNCTION_COUNT, FUNCTION_COUNT as UPCALL_FUNCTION_COUNT};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Mutex;

/// Per-thread rows kept in full: past twice this many, the rows of the threads with the least CPU
/// time are folded into [`Totals::other_threads`], so that memory stays flat under thread churn.
pub(crate) const THREAD_ROWS: usize = 4096;

/// The counters of one thread, and of any sum of threads: CPU time per state and crossings.
/// Flattened where it is serialized, so that its fields are keys of the row that holds it.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
pub(crate) struct JavaCounts {
    pub(crate) bytecode_ns: u64,
    pub(crate) native_ns: u64,
    pub(crate) jni_calls: u64,
    pub(crate) native_calls: u64,
}

impl JavaCounts {
    /// Bytecode plus native CPU time.
    pub(crate) fn cpu_ns(&self) -> u64 {
        self.bytecode_ns + self.native_ns
    }

    pub(crate) fn add(&mut self, other: &JavaCounts) {
        self.bytecode_ns += other.bytecode_ns;
        self.native_ns += other.native_ns;
        self.jni_calls += other.jni_calls;
        self.native_calls += other.native_calls;
    }

    /// What was added between `earlier` and `self` (both cumulative), counter by counter, at least 0.
    pub(crate) fn since(&self, earlier: &JavaCounts) -> JavaCounts {
        JavaCounts {
            bytecode_ns: self.bytecode_ns.saturating_sub(earlier.bytecode_ns),
            native_ns: self.native_ns.saturating_sub(earlier.native_ns),
            jni_calls: self.jni_calls.saturating_sub(earlier.jni_calls),
            native_calls: self.native_calls.saturating_sub(earlier.native_calls),
        }
    }
}

/// One thread's numbers, kept for the per-thread report.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub(crate) struct ThreadSummary {
    pub(crate) name: String,
    pub(crate) tid: i64,
    #[serde(flatten)]
    pub(crate) counts: JavaCounts,
    /// True if the thread was still running when the VM died.
    pub(crate) alive_at_exit: bool,
    /// The boundary sampler's raw samples of the thread.
    #[serde(default)]
    pub(crate) boundary_samples: BoundarySamples,
    /// Its time split into the boundary's parts (filled by the report from the two above).
    #[serde(default)]
    pub(crate) boundary: Boundary,
}

#[derive(Clone, Debug, Default)]
pub(crate) struct MethodTotals {
    pub(crate) calls: u64,
    pub(crate) total_ns: u64,
    pub(crate) self_ns: u64,
    /// Native-side samples while the method was innermost: own code, JNI functions, agent.
    pub(crate) samples: [u64; 3],
}

/// One JNI function's totals (every function: the upcalls first, then the counted ones).
#[derive(Clone, Debug, Default)]
pub(crate) struct JniTotals {
    pub(crate) calls: u64,
    pub(crate) java_ns: u64,
    /// Native-side samples inside the function (counted functions only).
    pub(crate) samples: u64,
    /// Time inside it, estimated per thread from those samples.
    pub(crate) estimated_ns: u64,
}

/// Process-wide totals.
#[derive(Clone, Debug, Default)]
pub(crate) struct Totals {
    pub(crate) counts: JavaCounts,
    pub(crate) unmatched: u64,
    pub(crate) jni: Vec<JniTotals>,
    pub(crate) methods: IdMap<MethodTotals>,
    pub(crate) overflow_method: MethodTotals,
    /// At most 2 × [`THREAD_ROWS`] rows: the busiest ones kept at the last fold (in no order), then
    /// those merged since.
    pub(crate) threads: Vec<ThreadSummary>,
    /// The threads whose rows were folded away, summed (`name` is empty, `tid` 0).
    pub(crate) other_threads: Option<OtherThreads>,
    pub(crate) threads_seen: u64,
    pub(crate) threads_merged: u64,
    /// `timing=sampled`: the sum over threads of the variance of their estimated native time
    /// (ns²); the split's 95 % half-width is its root times 1.96.
    pub(crate) sampled_split_variance: f64,
}

/// The sum of the rows folded out of [`Totals::threads`].
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub(crate) struct OtherThreads {
    pub(crate) threads: u64,
    #[serde(flatten)]
    pub(crate) counts: JavaCounts,
    pub(crate) alive_at_exit: u64,
    #[serde(default)]
    pub(crate) boundary_samples: BoundarySamples,
    /// The folded threads' boundary, split by their pooled samples (filled by the report).
    #[serde(default)]
    pub(crate) boundary: Boundary,
}

impl Totals {
    /// Keep `summary` as a row, folding the least busy half of the rows into `other_threads`
    /// when there are too many.
    fn push_row(&mut self, summary: ThreadSummary) {
        self.threads.push(summary);
        if self.threads.len() < 2 * THREAD_ROWS {
            return;
        }
        // In place: a stable sort would take a scratch copy of the rows (2 MB here) on whichever
        // thread retires now, in its malloc arena, which keeps it (RSS grew with thread churn).
        // The report sorts the rows it shows again.
        self.threads
            .select_nth_unstable_by_key(THREAD_ROWS, |t| std::cmp::Reverse(t.counts.cpu_ns()));
        let other = self.other_threads.get_or_insert_with(OtherThreads::default);
        for row in self.threads.drain(THREAD_ROWS..) {
            other.threads += 1;
            other.counts.add(&row.counts);
            other.alive_at_exit += u64::from(row.alive_at_exit);
            other.boundary_samples.add(&row.boundary_samples);
        }
    }
}

struct Registry {
    live: Vec<&'static ThreadContext>,
    totals: Totals,
    /// Set once the final report is taken: later retirements are dropped, not merged twice.
    closed: bool,
}

static REGISTRY: once_cell::sync::Lazy<Mutex<Registry>> = once_cell::sync::Lazy::new(|| {
    Mutex::new(Registry {
        live: Vec::new(),
        totals: Totals::default(),
        closed: false,
    })
});

fn lock() -> std::sync::MutexGuard<'static, Registry> {
    crate::sync::lock(&REGISTRY)
}

/// How often the armer looks for threads whose boundary sampler is due: at most this much of a
/// grown thread's time (one sample at the default period) goes by unsampled after it is due.
const ARM_PERIOD: std::time::Duration = std::time::Duration::from_millis(10);
/// The armer waits at least this many times its own CPU time between two looks, so that it never
/// costs more than 0.1 % of one core (many idle threads are looked at less often).
const ARM_COST_RATIO: u32 = 1000;

/// Start the armer (`boundary_after=` above 0): a thread of the agent's that arms the boundary
/// sampler of each live context whose thread has run `after` of CPU time, from outside, so that
/// short threads never pay for one (see `sampler`).
pub(crate) fn start_armer(after: std::time::Duration) {
    let Some(config) = crate::sampler::config().filter(|c| c.enabled) else {
        return;
    };
    let after_ns = after.as_nanos() as u64;
    let spawned = std::thread::Builder::new()
        .name("nativeacct-arm".into())
        .spawn(move || {
            crate::process::register_agent_thread();
            // SAFETY: gettid has no preconditions.
            let own = unsafe { libc::gettid() };
            loop {
                let began = crate::clock::thread_cpu_ns(own).unwrap_or(0);
                match std::panic::catch_unwind(|| arm_grown(after_ns, &config)) {
                    Ok(true) => {}
                    Ok(false) => return,
                    Err(_) => {
                        crate::diag::line(
                            "internal error in the boundary sampler's armer; it stops",
                        );
                        return;
                    }
                }
                let cost = crate::clock::thread_cpu_ns(own)
                    .unwrap_or(0)
                    .saturating_sub(began);
                std::thread::sleep(
                    ARM_PERIOD.max(std::time::Duration::from_nanos(cost) * ARM_COST_RATIO),
                );
            }
        });
    if let Err(e) = spawned {
        crate::diag::line(&format!(
            "boundary sampler's armer not started ({e}); threads are not sampled"
        ));
    }
}

/// Arm the sampler of every live thread that has run `after_ns` of CPU time without one, and take
/// the one later look at each perf-sampled thread (see `Probe::move_if_switchy`). Under the
/// registry lock, so that no context retires meanwhile (see `Probe::arm`). False once the final
/// report is taken.
fn arm_grown(after_ns: u64, config: &crate::sampler::Config) -> bool {
    let reg = lock();
    if reg.closed {
        return false;
    }
    // Taken under the lock: every live context opened before it.
    let now = std::time::Instant::now();
    for ctx in &reg.live {
        let tid = ctx.tid as i32;
        if ctx.probe.waits_for_arming() {
            if ctx.may_have_run(after_ns, now)
                && crate::clock::thread_cpu_ns(tid).is_some_and(|ns| ns >= after_ns)
            {
                ctx.probe.arm(tid, config);
            }
        } else if ctx.probe.awaits_a_look()
            && crate::clock::thread_cpu_ns(tid)
                .is_some_and(|ns| ctx.probe.due_for_a_look(ns, config))
        {
            ctx.probe.move_if_switchy(tid, config);
        }
    }
    true
}

/// A new context joins the live set (on its own thread).
pub fn register(ctx: &'static ThreadContext) {
    crate::process::context_opened(ctx.tid, ctx.cpu_at_open());
    let mut reg = lock();
    reg.totals.threads_seen += 1;
    ctx.registry_slot.store(reg.live.len(), Relaxed);
    reg.live.push(ctx);
}

/// A thread ended: merge its context and hand it back for reuse.
pub fn retire(ctx: &'static ThreadContext) {
    let split = as_split(
        ctx,
        ctx.bytecode_ns.load(Relaxed),
        ctx.native_ns.load(Relaxed),
    );
    crate::process::context_closed(
        ctx.tid,
        ctx.name.lock().ok().and_then(|n| n.clone()),
        split.bytecode_ns,
        split.native_ns,
        ctx.began_native(),
        ctx.cpu_at_finish(),
    );
    let mut reg = lock();
    let ptr = ctx as *const ThreadContext;
    let slot = ctx.registry_slot.load(Relaxed);
    if reg.live.get(slot).is_some_and(|c| std::ptr::eq(*c, ptr)) {
        reg.live.swap_remove(slot);
        if let Some(moved) = reg.live.get(slot) {
            moved.registry_slot.store(slot, Relaxed);
        }
    } else {
        reg.live.retain(|c| !std::ptr::eq(*c, ptr));
    }
    if !reg.closed {
        merge_into(&mut reg.totals, ctx, Merge::Retired);
    }
    drop(reg);
    // SAFETY: the context was leaked in `context::attach_current`; it is no longer in the live set and its
    // owning thread has detached it, so this is the last reference.
    crate::context::recycle(unsafe { Box::from_raw(ptr as *mut ThreadContext) });
}

/// Whether a merged thread has ended, or is still running (merged at VMDeath or in a snapshot).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Merge {
    Retired,
    Alive,
}

fn merge_into(totals: &mut Totals, ctx: &ThreadContext, how: Merge) {
    let alive = how == Merge::Alive;
    let name = match ctx.name.lock() {
        // A retired context is about to be reused: its name can move.
        Ok(mut name) if !alive => name.take(),
        Ok(name) => name.clone(),
        Err(_) => None,
    };
    let mut summary = ThreadSummary {
        name: name.unwrap_or_else(|| format!("tid-{}", ctx.tid)),
        tid: ctx.tid,
        counts: JavaCounts {
            bytecode_ns: ctx.bytecode_ns.load(Relaxed),
            native_ns: ctx.native_ns.load(Relaxed),
            jni_calls: ctx.jni_calls.load(Relaxed),
            native_calls: ctx.native_calls.load(Relaxed),
        },
        alive_at_exit: alive,
        boundary_samples: ctx.probe.samples(),
        boundary: Boundary::default(),
    };
    if alive {
        // The thread is still running: charge the interval since its last crossing too.
        match ctx.open_interval() {
            Some((State::Native, ns)) => summary.counts.native_ns += ns,
            Some((_, ns)) => summary.counts.bytecode_ns += ns,
            None => {}
        }
    }
    let sampled = crate::context::sampled_timing();
    if sampled {
        totals.sampled_split_variance +=
            split_by_samples(&mut summary.counts, &summary.boundary_samples);
    }
    totals.counts.add(&summary.counts);
    totals.unmatched += ctx.unmatched.load(Relaxed);
    if totals.jni.len() < ALL_FUNCTION_COUNT {
        totals.jni.resize(ALL_FUNCTION_COUNT, JniTotals::default());
    }
    if summary.counts.jni_calls != 0 {
        for (sum, stat) in totals.jni.iter_mut().zip(ctx.jni.iter()) {
            sum.calls += stat.calls.load(Relaxed);
            sum.java_ns += stat.java_ns.load(Relaxed);
        }
    }
    let counted_sums = &mut totals.jni[UPCALL_FUNCTION_COUNT..];
    if alive {
        for (sum, calls) in counted_sums.iter_mut().zip(ctx.probe.counted_calls()) {
            sum.calls += calls;
        }
    } else {
        // Its counters are zeroed in the same pass, for the context's next thread.
        ctx.probe.take_counted_calls(|index, calls| {
            if let Some(sum) = counted_sums.get_mut(index) {
                sum.calls += calls;
            }
        });
    }
    // A thread that ended unsampled (most short ones) has no sample inside any function.
    if alive || summary.boundary_samples.total() != 0 {
        for (sum, inside) in counted_sums
            .iter_mut()
            .zip(ctx.probe.samples_inside_counted())
        {
            if inside != 0 {
                sum.samples += inside;
                sum.estimated_ns += crate::sampler::share_of_native(
                    summary.counts.native_ns,
                    inside,
                    &summary.boundary_samples,
                );
            }
        }
    }
    let native_samples: u64 = summary.boundary_samples.native_side().iter().sum();
    ctx.methods.for_each(|id, row| {
        let sum = totals.methods.entry(id).or_default();
        sum.calls += row.calls.load(Relaxed);
        sum.total_ns += row.total_ns.load(Relaxed);
        sum.self_ns += row.self_ns.load(Relaxed);
        let samples = &row.samples;
        if sampled && native_samples != 0 {
            // No clock read at crossings: a native's self time is the thread's native time in
            // proportion to the samples it was innermost for (its total is not known apart).
            let mine = [&samples.own, &samples.jni, &samples.agent]
                .iter()
                .map(|c| c.load(Relaxed))
                .sum::<u64>()
                .min(native_samples);
            let estimate = crate::process::split_exactly(
                summary.counts.native_ns,
                &[mine, native_samples - mine],
            )[0];
            sum.self_ns += estimate;
            sum.total_ns += estimate;
        }
        for (total, counter) in
            sum.samples
                .iter_mut()
                .zip([&samples.own, &samples.jni, &samples.agent])
        {
            *total += counter.load(Relaxed);
        }
    });
    let over = &ctx.methods.overflow;
    totals.overflow_method.calls += over.calls.load(Relaxed);
    totals.overflow_method.total_ns += over.total_ns.load(Relaxed);
    totals.overflow_method.self_ns += over.self_ns.load(Relaxed);
    totals.threads_merged += 1;
    totals.push_row(summary);
}

/// A context's bytecode and native time as the report splits them: as measured, or under
/// `timing=sampled` split by its samples (see [`split_by_samples`]).
fn as_split(ctx: &ThreadContext, bytecode_ns: u64, native_ns: u64) -> JavaCounts {
    let mut counts = JavaCounts {
        bytecode_ns,
        native_ns,
        ..JavaCounts::default()
    };
    if crate::context::sampled_timing() {
        split_by_samples(&mut counts, &ctx.probe.samples());
    }
    counts
}

/// `timing=sampled`: a thread's exact CPU time (charged whole to the state it settled in) split
/// between bytecode and native in proportion to its boundary samples on each side. Returns the
/// variance of the native part (ns²); a thread without samples keeps its reading, its whole time
/// as the error.
fn split_by_samples(counts: &mut JavaCounts, samples: &BoundarySamples) -> f64 {
    let total = counts.bytecode_ns + counts.native_ns;
    let n = samples.total();
    if n == 0 {
        return (total as f64 / crate::sampler::Z95).powi(2);
    }
    let native: u64 = samples.native_side().iter().sum();
    [counts.bytecode_ns, counts.native_ns] = crate::process::split_two(total, n - native, native);
    (total as f64 * crate::sampler::wilson_half_width(native, n) / crate::sampler::Z95).powi(2)
}

/// Add the counted JNI calls made by threads that had no context (process-wide counters).
fn add_calls_without_context(totals: &mut Totals) {
    if totals.jni.len() < ALL_FUNCTION_COUNT {
        totals.jni.resize(ALL_FUNCTION_COUNT, JniTotals::default());
    }
    for (counted, sum) in totals.jni[UPCALL_FUNCTION_COUNT..].iter_mut().enumerate() {
        sum.calls += jni_wrappers::calls_without_block(counted);
    }
}

/// The latency histograms so far, the live threads' slots included (for dumps, snapshots and the
/// `interval=` log). The registry lock keeps their contexts alive meanwhile (lock order: registry,
/// then histograms).
pub(crate) fn histograms_so_far() -> crate::histograms::Histograms {
    with_live_latency(crate::histograms::snapshot)
}

/// `read` the latency slots of the live threads (none once the registry is closed) under the
/// registry lock, which keeps their contexts alive meanwhile (lock order: registry, then
/// histograms).
pub(crate) fn with_live_latency<R>(
    read: impl FnOnce(&[&crate::histograms::ThreadLatency]) -> R,
) -> R {
    let reg = lock();
    let live: Vec<&crate::histograms::ThreadLatency> = if reg.closed {
        Vec::new()
    } else {
        reg.live.iter().map(|c| &c.latency).collect()
    };
    read(&live)
}

/// Every live context's numbers now, its open interval included (for the process accounting).
pub(crate) fn live_java() -> Vec<crate::process::LiveJava> {
    let reg = lock();
    reg.live
        .iter()
        .map(|ctx| {
            let mut java = crate::process::LiveJava {
                tid: ctx.tid,
                name: ctx.name.lock().ok().and_then(|n| n.clone()),
                bytecode_ns: ctx.bytecode_ns.load(Relaxed),
                native_ns: ctx.native_ns.load(Relaxed),
                in_native: ctx.is_in_native(),
                began_native: ctx.began_native(),
            };
            match ctx.open_interval() {
                Some((State::Native, ns)) => java.native_ns += ns,
                Some((_, ns)) => java.bytecode_ns += ns,
                None => {}
            }
            let split = as_split(ctx, java.bytecode_ns, java.native_ns);
            java.bytecode_ns = split.bytecode_ns;
            java.native_ns = split.native_ns;
            java
        })
        .collect()
}

/// The totals so far, live threads included with the time since their last crossing, without
/// closing anything (for `snapshot=`). None once the registry is closed.
pub(crate) fn snapshot() -> Option<Totals> {
    let reg = lock();
    if reg.closed {
        return None;
    }
    let mut totals = reg.totals.clone();
    for ctx in &reg.live {
        merge_into(&mut totals, ctx, Merge::Alive);
    }
    add_calls_without_context(&mut totals);
    Some(totals)
}

/// At VMDeath: merge every live thread, close the registry, and return the final totals and histograms.
/// `name_of` may supply names, by context address, for threads that have none yet.
pub(crate) fn close(
    name_of: impl Fn(usize) -> Option<String>,
) -> (Totals, crate::histograms::Histograms) {
    let mut reg = lock();
    if reg.closed {
        return (reg.totals.clone(), crate::histograms::close(&[]));
    }
    let live = std::mem::take(&mut reg.live);
    for ctx in &live {
        if let Ok(mut name) = ctx.name.lock() {
            if name.is_none() {
                *name = name_of(*ctx as *const ThreadContext as usize);
            }
        }
        merge_into(&mut reg.totals, ctx, Merge::Alive);
    }
    let latency: Vec<&crate::histograms::ThreadLatency> = live.iter().map(|c| &c.latency).collect();
    let histograms = crate::histograms::close(&latency);
    // Threads still running keep their contexts (they may still transition); they are simply not merged again.
    reg.live = live;
    reg.closed = true;
    add_calls_without_context(&mut reg.totals);
    (reg.totals.clone(), histograms)
}

/// Benchmark entry for `bench/`: ns per J2N begin+end pair on the calling thread, through the same
/// path the helper natives take (thread-local lookup, registered context, per-thread latency slots), with the `auto` clock, measured in the thread's own CPU time.
pub fn bench_transition_pairs(iterations: u64) -> f64 {
    use crate::clock::ThreadClock;
    use crate::context::{
        attach_current, j2n_begin, j2n_end, retire_current, set_lifecycle, Lifecycle, State,
    };
    crate::clock::choose_in_background(crate::clock::ClockRequest::Auto, || {});
    let choice = crate::clock::chosen();
    set_lifecycle(Lifecycle {
        clock: crate::clock::chosen,
        register,
        retire,
    });
    let method = crate::methods::id_for(&nativeacct_classfile::NativeMethodRef {
        class: "bench/Bench".into(),
        name: "nop".into(),
        descriptor: "()V".into(),
    });
    attach_current(State::Bytecode, Some("bench".into()));
    let mut probe = ThreadClock::open(choice);
    let iterations = iterations.max(1);
    let start = probe.read();
    for _ in 0..iterations {
        j2n_begin(method);
        j2n_end(method);
    }
    let elapsed = probe.read().saturating_sub(start);
    probe.close();
    retire_current();
    elapsed as f64 / iterations as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_past_the_limit_fold_into_other_threads_and_nothing_is_lost() {
        let mut totals = Totals::default();
        let threads = 5 * THREAD_ROWS as u64 + 17;
        for i in 0..threads {
            totals.push_row(ThreadSummary {
                name: format!("t{i}"),
                tid: i as i64,
                counts: JavaCounts {
                    bytecode_ns: i,
                    native_ns: 2 * i,
                    jni_calls: 1,
                    native_calls: 3,
                },
                alive_at_exit: i % 2 == 0,
                ..ThreadSummary::default()
            });
            assert!(totals.threads.len() < 2 * THREAD_ROWS);
        }
        let other = totals.other_threads.clone().expect("rows were folded");
        assert_eq!(totals.threads.len() as u64 + other.threads, threads);
        let kept_cpu: u64 = totals.threads.iter().map(|t| t.counts.cpu_ns()).sum();
        let all_cpu: u64 = (0..threads).map(|i| 3 * i).sum();
        assert_eq!(kept_cpu + other.counts.cpu_ns(), all_cpu);
        let kept_calls: u64 = totals.threads.iter().map(|t| t.counts.native_calls).sum();
        assert_eq!(kept_calls + other.counts.native_calls, 3 * threads);
        let kept_alive = totals.threads.iter().filter(|t| t.alive_at_exit).count() as u64;
        assert_eq!(kept_alive + other.alive_at_exit, threads.div_ceil(2));
        // The busiest threads keep their rows.
        assert!(totals.threads.iter().any(|t| t.tid == threads as i64 - 1));
        let least_kept = totals
            .threads
            .iter()
            .map(|t| t.counts.cpu_ns())
            .min()
            .unwrap();
        assert!(least_kept >= 3 * (threads - 2 * THREAD_ROWS as u64));
    }
}
