//! Java caller chains of native calls, for the collapsed-stacks output (`stacks=`, `depth=`).
//!
//! When sampling is on, the end of every wrapped native call comes here on its own thread. A call is
//! sampled if it is the first of its method on this thread or, with `stacks=N`, every Nth after that
//! (`stacks=every`: all of them). A sampled call's Java stack is read with JVMTI GetStackTrace (which
//! costs microseconds, hence the sampling), the two helper frames and the wrapper frame are dropped,
//! and its exact self time is added to the entry for (method, caller chain).
//!
//! Each thread keeps its own shard behind its own mutex, which only the owner takes on the hot path
//! (uncontended); the VMDeath merge takes each one once. A thread's shard is folded into a shared
//! "retired" shard when the thread exits, so short-lived threads leave no per-thread memory behind.

use crate::jvmti::FrameInfo;
use crate::options::StackSampling;
use crate::sync::lock;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Read by `timing=exact`'s bind routine too, which leaves the natives' ends to the hooks while set.
pub(crate) static ENABLED: AtomicBool = AtomicBool::new(false);
/// Set at VMDeath once the shards were collected: later calls are not recorded.
static CLOSED: AtomicBool = AtomicBool::new(false);
/// Set at VMInit: GetStackTrace works only in the live phase (bind mode counts natives before it).
static VM_LIVE: AtomicBool = AtomicBool::new(false);

/// The VM entered its live phase: stacks can be captured from now on.
pub(crate) fn vm_is_live() {
    VM_LIVE.store(true, Relaxed);
}
/// Sample every Nth call (1 = every call).
static EVERY: AtomicU32 = AtomicU32::new(1);
/// Java caller frames kept per stack.
static DEPTH: AtomicU32 = AtomicU32::new(crate::options::DEFAULT_DEPTH);

/// Room for the frames skipped at the top of every captured stack (`<end>N` and `<end>` of the
/// helper owner).
const HELPER_FRAMES_MAX: usize = 4;
/// Frame id of a helper frame (never part of a stack).
const HELPER: u32 = u32::MAX;
/// Distinct (method, caller chain) entries a thread keeps; later new chains are merged (see `capture`).
const MAX_STACKS_PER_THREAD: usize = 50_000;
const MORE_STACKS: &str = "[more stacks]";
/// Method ids past this share one sampling counter (mirrors `methods::MAX_METHODS`).
const MAX_COUNTED_METHODS: usize = crate::methods::MAX_METHODS;

/// Whether any stack sampling is on (one relaxed load on the hot path).
#[inline]
pub(crate) fn enabled() -> bool {
    ENABLED.load(Relaxed)
}

pub(crate) fn enable(on: bool) {
    ENABLED.store(on, Relaxed);
}

/// Switch sampling on as `stacks=` and `depth=` ask (off for [`StackSampling::Off`]).
pub(crate) fn configure(sampling: StackSampling, depth: u32) {
    let every = match sampling {
        StackSampling::Off => {
            enable(false);
            return;
        }
        StackSampling::Every => 1,
        StackSampling::Nth(n) => n.max(1),
    };
    EVERY.store(every, Relaxed);
    DEPTH.store(depth.max(1), Relaxed);
    enable(true);
}

/// Names of Java frames, shared by all threads; ids index `names`.
#[derive(Default)]
struct FrameNames {
    by_name: HashMap<String, u32>,
    names: Vec<String>,
}

static FRAME_NAMES: Mutex<Option<FrameNames>> = Mutex::new(None);

fn frame_id(name: String) -> u32 {
    let mut guard = lock(&FRAME_NAMES);
    let table = guard.get_or_insert_with(FrameNames::default);
    if let Some(&id) = table.by_name.get(&name) {
        return id;
    }
    let id = table.names.len() as u32;
    table.names.push(name.clone());
    table.by_name.insert(name, id);
    id
}

/// (native method id, caller frame ids innermost first).
type StackKey = (u32, Box<[u32]>);

/// One thread's samples.
#[derive(Default)]
struct Shard {
    /// Calls seen per method id on this thread, for every-Nth sampling.
    calls: Vec<u32>,
    /// (native method id, caller frame ids, innermost first) → (sampled self ns, sampled calls).
    stacks: HashMap<StackKey, (u64, u64)>,
    /// jmethodID → frame id (or [`HELPER`]), so each method is named once per thread.
    frame_ids: HashMap<usize, u32>,
    counts: Counts,
}

/// A shard's counters besides its samples (the same as [`StackData`]'s).
#[derive(Default, Clone, Copy)]
struct Counts {
    captures: u64,
    capture_ns: u64,
    failures: u64,
    /// Calls that ended before the live phase, when no stack can be read.
    before_live: u64,
}

impl Counts {
    fn add(&mut self, other: Counts) {
        self.captures += other.captures;
        self.capture_ns += other.capture_ns;
        self.failures += other.failures;
        self.before_live += other.before_live;
    }
}

impl Shard {
    /// Add a copy of this shard's samples to `target` (for reports during the run).
    fn copy_into(&self, target: &mut Shard) {
        for (key, &sampled) in &self.stacks {
            target.add_sampled(key.clone(), sampled);
        }
        target.counts.add(self.counts);
    }

    fn fold_into(&mut self, target: &mut Shard) {
        for (key, sampled) in self.stacks.drain() {
            target.add_sampled(key, sampled);
        }
        target.counts.add(std::mem::take(&mut self.counts));
    }

    fn add_sampled(&mut self, key: StackKey, (ns, n): (u64, u64)) {
        let entry = self.stacks.entry(key).or_insert((0, 0));
        entry.0 += ns;
        entry.1 += n;
    }
}

type SharedShard = Arc<Mutex<Shard>>;

/// Shards of live threads.
static LIVE: Mutex<Vec<SharedShard>> = Mutex::new(Vec::new());
/// Samples of threads that have exited.
static RETIRED: Mutex<Option<Shard>> = Mutex::new(None);

/// The thread-local handle: registers the shard on creation, retires it when the thread exits.
struct ShardHandle(SharedShard);

impl ShardHandle {
    fn new() -> ShardHandle {
        let shard = SharedShard::default();
        lock(&LIVE).push(shard.clone());
        ShardHandle(shard)
    }
}

impl Drop for ShardHandle {
    fn drop(&mut self) {
        // Lock order everywhere: LIVE, then a shard, then RETIRED. Holding LIVE until the samples are
        // in RETIRED means `close` sees them either here or there, never neither.
        let mut live = lock(&LIVE);
        live.retain(|s| !Arc::ptr_eq(s, &self.0));
        let mut mine = lock(&self.0);
        let mut retired = lock(&RETIRED);
        mine.fold_into(retired.get_or_insert_with(Shard::default));
    }
}

thread_local! {
    static SHARD: ShardHandle = ShardHandle::new();
}

/// Called on the owning thread at the end of a wrapped native call, before J2N end returns.
#[cold]
pub(crate) fn on_native_exit(method: u32, self_ns: u64) {
    if CLOSED.load(Relaxed) || crate::histograms::discarding_now() {
        return;
    }
    // Fails harmlessly while the thread's locals are being torn down.
    let _ = SHARD.try_with(|handle| {
        let mut shard = lock(&handle.0);
        if !VM_LIVE.load(Relaxed) {
            shard.counts.before_live += 1;
            return;
        }
        if sampled(&mut shard, method) {
            capture(&mut shard, method, self_ns);
        }
    });
}

/// Whether this call of `method` is sampled: the first on this thread, then every Nth.
fn sampled(shard: &mut Shard, method: u32) -> bool {
    let every = EVERY.load(Relaxed);
    if every <= 1 {
        return true;
    }
    let slot = (method as usize).min(MAX_COUNTED_METHODS);
    if shard.calls.len() <= slot {
        shard.calls.resize(slot + 1, 0);
    }
    let seen = shard.calls[slot];
    shard.calls[slot] = if seen + 1 >= every { 0 } else { seen + 1 };
    seen == 0
}

/// What capturing needs from the VM: its JVMTI environment, and the names of wrap mode's helper
/// methods and renamed natives (never part of a stack).
pub(crate) struct VmAccess {
    pub(crate) jvmti: crate::jvmti::Jvmti,
    pub(crate) helper: nativeacct_classfile::HelperSpec,
    pub(crate) prefix: String,
}

static VM: std::sync::OnceLock<VmAccess> = std::sync::OnceLock::new();

/// Give the sampler the VM access it needs (at Agent_OnLoad).
pub(crate) fn attach_vm(vm: VmAccess) {
    let _ = VM.set(vm);
}

fn capture(shard: &mut Shard, method: u32, self_ns: u64) {
    let Some(agent) = VM.get() else {
        return;
    };
    let started = Instant::now();
    let depth = DEPTH.load(Relaxed) as usize;
    // Helper frames, the wrapper, then the callers we keep.
    let wanted = depth + HELPER_FRAMES_MAX + 1;
    let mut buffer = vec![FrameInfo::default(); wanted];
    let callers: Option<Box<[u32]>> = match agent.jvmti.own_stack_trace(0, &mut buffer) {
        Ok(count) => {
            let mut ids = buffer[..count]
                .iter()
                .map(|frame| resolve(shard, frame, agent))
                .skip_while(|&id| id == HELPER);
            // The first frame after the helpers is the wrapper, i.e. the native method itself.
            ids.next();
            // Renamed natives further down (a native that called back into Java) are hidden too:
            // their wrapper frame, with the original name, is right below them.
            Some(ids.filter(|&id| id != HELPER).take(depth).collect())
        }
        Err(_) => None,
    };
    let callers = callers.unwrap_or_else(|| {
        shard.counts.failures += 1;
        Box::new([])
    });
    // Bound the memory of programs with very many distinct call paths: past the limit, new paths of
    // a thread are kept under one "[more stacks]" caller (their time still counts).
    let key = if shard.stacks.len() >= MAX_STACKS_PER_THREAD
        && !shard.stacks.contains_key(&(method, callers.clone()))
    {
        (
            method,
            vec![frame_id(MORE_STACKS.to_string())].into_boxed_slice(),
        )
    } else {
        (method, callers)
    };
    let entry = shard.stacks.entry(key).or_insert((0, 0));
    entry.0 += self_ns;
    entry.1 += 1;
    shard.counts.captures += 1;
    shard.counts.capture_ns += started.elapsed().as_nanos() as u64;
}

/// Frame id of a stack frame, naming its method on first sight on this thread. The agent's helper
/// methods and the renamed (prefixed) natives are [`HELPER`].
fn resolve(shard: &mut Shard, frame: &FrameInfo, agent: &VmAccess) -> u32 {
    let key = frame.method as usize;
    if let Some(&id) = shard.frame_ids.get(&key) {
        return id;
    }
    let helper = &agent.helper;
    let is_helper = |class: &str, name: &str| {
        (class == helper.owner
            && (name.starts_with(&helper.begin) || name.starts_with(&helper.end)))
            || name.starts_with(&agent.prefix)
    };
    let id = match agent.jvmti.method_identity(frame.method) {
        Some((class, name, _)) if is_helper(&class, &name) => HELPER,
        Some((class, name, _)) => frame_id(format!("{}.{name}", class.replace('/', "."))),
        None => frame_id("[unknown]".to_string()),
    };
    shard.frame_ids.insert(key, id);
    id
}

/// One (native method, caller chain) with the self time of its sampled calls.
#[derive(Clone, Debug)]
pub(crate) struct StackSample {
    pub(crate) method: u32,
    /// Java callers, outermost first (at most `depth=` of them, the innermost ones).
    pub(crate) callers: Vec<String>,
    pub(crate) sampled_ns: u64,
    pub(crate) sampled_calls: u64,
}

/// Everything sampled during the run.
#[derive(Clone, Debug, Default)]
pub(crate) struct StackData {
    pub(crate) samples: Vec<StackSample>,
    /// Calls whose stack was captured.
    pub(crate) captures: u64,
    /// Time spent capturing and naming them (wall clock), for the cost in the report.
    pub(crate) capture_ns: u64,
    /// Captures where GetStackTrace failed (recorded without callers).
    pub(crate) failures: u64,
    /// Calls that ended before the VM's live phase, when no stack can be read (bind mode).
    pub(crate) before_live: u64,
}

/// At VMDeath: stop recording and collect every thread's samples. None if sampling was off.
pub(crate) fn close() -> Option<StackData> {
    if !enabled() || CLOSED.swap(true, Relaxed) {
        return None;
    }
    Some(gathered(Shard::fold_into))
}

/// Every thread's samples so far, recording going on (`nativeacct dump`). None if sampling is off
/// or closed.
pub fn so_far() -> Option<StackData> {
    if !enabled() || CLOSED.load(Relaxed) {
        return None;
    }
    Some(gathered(|shard, all| shard.copy_into(all)))
}

/// The samples of every shard, retired and live, added into one by `add` (which moves or copies them).
fn gathered(add: impl Fn(&mut Shard, &mut Shard)) -> StackData {
    let mut all = Shard::default();
    let live = lock(&LIVE);
    if let Some(retired) = lock(&RETIRED).as_mut() {
        add(retired, &mut all);
    }
    for shard in live.iter() {
        add(&mut lock(shard), &mut all);
    }
    drop(live);
    named(all)
}

/// The samples of `all` with their frames named.
fn named(all: Shard) -> StackData {
    let names = lock(&FRAME_NAMES);
    let name_of = |id: u32| -> String {
        names
            .as_ref()
            .and_then(|t| t.names.get(id as usize).cloned())
            .unwrap_or_else(|| "[unknown]".to_string())
    };
    let samples = all
        .stacks
        .into_iter()
        .map(
            |((method, callers), (sampled_ns, sampled_calls))| StackSample {
                method,
                callers: callers.iter().rev().map(|&id| name_of(id)).collect(),
                sampled_ns,
                sampled_calls,
            },
        )
        .collect();
    StackData {
        samples,
        captures: all.counts.captures,
        capture_ns: all.counts.capture_ns,
        failures: all.counts.failures,
        before_live: all.counts.before_live,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_nth_samples_the_first_call_then_every_nth_per_method() {
        EVERY.store(3, Relaxed);
        let mut shard = Shard::default();
        let picks: Vec<bool> = (0..7).map(|_| sampled(&mut shard, 5)).collect();
        assert_eq!(picks, [true, false, false, true, false, false, true]);
        // Another method has its own count.
        assert!(sampled(&mut shard, 9));
        EVERY.store(1, Relaxed);
        assert!(sampled(&mut shard, 5) && sampled(&mut shard, 5));
    }
}
