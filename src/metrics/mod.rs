//! Live metrics (`metrics=[ADDR:]PORT`): the run's numbers so far as a Prometheus exposition,
//! served over HTTP at `/metrics` by one agent thread (`nativeacct-metrics`), and handed to the
//! control channel for `nativeacct metrics PID`.
//!
//! An exposition reads the same whole-run numbers a dump reads (merged totals under the registry
//! lock, the histograms so far with the live threads' latency slots, the process CPU section so
//! far), builds the report with the same
//! assembly, and renders it with `report::openmetrics`. Nothing is added to the crossing path.
//! The HTTP side is `http`.

mod http;

use crate::report::openmetrics::{self, Endpoint, Flavor, Memory, MethodNumbers, Numbers};
use crate::snapshot::Assemble;
use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;

/// The report builder, set when the endpoint or the control channel starts.
static ASSEMBLE: once_cell::sync::OnceCell<Assemble> = once_cell::sync::OnceCell::new();
/// What one exposition remembers for the next; its lock also orders expositions.
static MEMORY: once_cell::sync::Lazy<Mutex<Memory>> =
    once_cell::sync::Lazy::new(|| Mutex::new(Memory::default()));
static SCRAPES: AtomicU64 = AtomicU64::new(0);
static SCRAPE_CPU_NS: AtomicU64 = AtomicU64::new(0);
static BAD_REQUESTS: AtomicU64 = AtomicU64::new(0);
static STOPPED: AtomicBool = AtomicBool::new(false);

/// Give the exposition its report builder (the control channel's `metrics` works without the
/// HTTP endpoint).
pub(crate) fn set_assemble(assemble: Assemble) {
    let _ = ASSEMBLE.set(assemble);
}

/// Listen on `addr` and serve `/metrics` on a thread of the agent's own. The error is one line
/// for the start-up error (the VM does not start, as with a bad option).
pub(crate) fn start(addr: SocketAddr, assemble: Assemble) -> Result<(), String> {
    set_assemble(assemble);
    let listener = TcpListener::bind(addr)
        .and_then(|l| l.set_nonblocking(true).map(|()| l))
        .map_err(|e| format!("metrics={addr}: cannot listen there: {e}"))?;
    std::thread::Builder::new()
        .name("nativeacct-metrics".into())
        .spawn(move || {
            crate::process::register_agent_thread();
            let served =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| http::serve(listener)));
            if served.is_err() {
                crate::diag::line("internal error in the metrics endpoint; it stops");
            }
        })
        .map(|_| ())
        .map_err(|e| format!("metrics={addr}: cannot start its thread: {e}"))
}

/// Stop serving (VMDeath, detach): the listener closes within a second.
pub(crate) fn stop() {
    STOPPED.store(true, Relaxed);
}

fn stopped() -> bool {
    STOPPED.load(Relaxed)
}

/// A request the endpoint refused or dropped.
fn count_bad_request() {
    BAD_REQUESTS.fetch_add(1, Relaxed);
}

/// The exposition of the whole run so far, in `flavor`; its CPU time is counted in
/// `nativeacct_metrics_scrape_cpu_seconds_total` (from the next exposition on).
pub(crate) fn exposition(flavor: Flavor) -> Result<String, String> {
    let assemble = ASSEMBLE.get().ok_or("the agent is not running")?;
    let began = own_cpu_ns();
    let mut memory = crate::sync::lock(&MEMORY);
    let totals = crate::merge::snapshot().ok_or("the VM is shutting down: no more metrics")?;
    let process = crate::attach::process_since_attach(crate::process::section_so_far(
        &crate::merge::live_java(),
    ));
    // The run's facts as a report has them (an empty report costs nothing to build).
    let none = || hdrhistogram::Histogram::<u64>::new(2).map_err(|e| e.to_string());
    let empty = crate::histograms::Histograms::restored(
        none()?,
        none()?,
        Default::default(),
        Default::default(),
        0,
    );
    let facts = assemble(
        &crate::merge::Totals::default(),
        empty,
        no_stacks,
        Default::default(),
    );
    let (mut rows, mut folded) = (totals.threads.clone(), totals.other_threads.clone());
    let boundary = crate::report::split_threads(&mut rows, folded.as_mut());
    let mut numbers = Numbers {
        version: facts.version.clone(),
        facts: facts.run.clone(),
        bytecode_ns: totals.counts.bytecode_ns,
        native_ns: totals.counts.native_ns,
        boundary,
        parts: process.parts,
        methods: totals
            .methods
            .iter()
            .map(|(&id, m)| MethodNumbers {
                id,
                calls: m.calls,
                self_ns: m.self_ns,
            })
            .collect(),
        jni: totals
            .jni
            .iter()
            .enumerate()
            .map(|(i, j)| {
                let name = jni_wrappers::FUNCTION_NAMES.get(i).copied().unwrap_or("?");
                (name, j.calls, j.java_ns)
            })
            .collect(),
        threads: totals.threads_seen,
        top: facts.top,
        boundary_sampler: match crate::sampler::config() {
            Some(config) if config.enabled => "on",
            _ => "off",
        },
    };
    let named = memory.name_methods(&mut numbers.methods, numbers.top);
    let labels: Vec<(u32, String)> = named
        .iter()
        .zip(crate::methods::some(&named))
        .map(|(&id, m)| (id, openmetrics::method_label(id, m.as_ref())))
        .collect();
    let histograms = crate::merge::with_live_latency(|live| {
        crate::histograms::read_locked(live, |h, slots| memory.latency(h, slots, &named))
    });
    let endpoint = Endpoint {
        scrapes: SCRAPES.fetch_add(1, Relaxed) + 1,
        scrape_cpu_ns: SCRAPE_CPU_NS.load(Relaxed),
        bad_requests: BAD_REQUESTS.load(Relaxed),
    };
    let text = openmetrics::render(
        &numbers,
        &labels,
        Some(&histograms),
        &mut memory,
        endpoint,
        flavor,
    );
    drop(memory);
    SCRAPE_CPU_NS.fetch_add(own_cpu_ns().saturating_sub(began), Relaxed);
    Ok(text)
}

/// Stack samples are not part of the exposition.
fn no_stacks() -> Option<crate::stacks::StackData> {
    None
}

fn own_cpu_ns() -> u64 {
    crate::clock::read_clock(libc::CLOCK_THREAD_CPUTIME_ID).unwrap_or(0)
}
