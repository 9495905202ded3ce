//! The report as a Prometheus exposition: OpenMetrics 1.0 text, or Prometheus text 0.0.4.
//!
//! Every value is the whole run's, from the same merged totals and process section a report is built from (a dump's `--reset` window is not used): counters only grow.
//! Two things need memory from one exposition to the next, kept in [`Memory`]:
//! - which native methods have series of their own: the `top` ones by self time so far join, and a
//!   method keeps its series while it ranks within twice `top`, so at most `2 × top` are named. The
//!   `(other)` series counts each method's calls and self time *while it had no series of its
//!   own*, so it never goes down when a method joins or leaves, and `sum(rate(...))` over all
//!   series is the rate of the whole;
//! - the highest value each counter series has shown: a counter is never shown lower than before
//!   (the process split's `unattributed` shrinks when a scan finds where its time went; the exposed
//!   value then holds until the true one passes it).

use super::RunFacts;
use crate::histograms::{bucket_value, Histograms, IdMap, SampleKind, SlotCounts, SLOT_BUCKETS};
use crate::process::Parts;
use hdrhistogram::Histogram;
use std::collections::HashMap;
use std::fmt::Write;

/// Which text format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Flavor {
    /// `application/openmetrics-text; version=1.0.0; charset=utf-8`
    OpenMetrics,
    /// `text/plain; version=0.0.4; charset=utf-8`
    Prometheus,
}

impl Flavor {
    /// The HTTP `Content-Type` of this flavor.
    pub(crate) fn content_type(self) -> &'static str {
        match self {
            Flavor::OpenMetrics => "application/openmetrics-text; version=1.0.0; charset=utf-8",
            Flavor::Prometheus => "text/plain; version=0.0.4; charset=utf-8",
        }
    }
}

/// Upper bounds of the latency histograms' buckets, in seconds (1-2-5 steps, 100 ns to 10 s),
/// as written in the `le` label.
pub(crate) const BUCKETS: [(&str, u64); 25] = [
    ("1e-07", 100),
    ("2e-07", 200),
    ("5e-07", 500),
    ("1e-06", 1_000),
    ("2e-06", 2_000),
    ("5e-06", 5_000),
    ("1e-05", 10_000),
    ("2e-05", 20_000),
    ("5e-05", 50_000),
    ("0.0001", 100_000),
    ("0.0002", 200_000),
    ("0.0005", 500_000),
    ("0.001", 1_000_000),
    ("0.002", 2_000_000),
    ("0.005", 5_000_000),
    ("0.01", 10_000_000),
    ("0.02", 20_000_000),
    ("0.05", 50_000_000),
    ("0.1", 100_000_000),
    ("0.2", 200_000_000),
    ("0.5", 500_000_000),
    ("1", 1_000_000_000),
    ("2", 2_000_000_000),
    ("5", 5_000_000_000),
    ("10", 10_000_000_000),
];

/// For each bucket of a thread's latency slot (HdrHistogram's index at 2 significant digits), the
/// exposition's bucket its samples go to: the first whose bound is at least the bucket's lowest
/// value, as [`Buckets::of`] places them.
const BUCKET_OF_SLOT_INDEX: [u8; SLOT_BUCKETS] = bucket_of_slot_index();

const fn bucket_of_slot_index() -> [u8; SLOT_BUCKETS] {
    let mut table = [0u8; SLOT_BUCKETS];
    let mut index = 0;
    while index < SLOT_BUCKETS {
        let low = bucket_value(index);
        let mut bucket = 0;
        while bucket < BUCKETS.len() && BUCKETS[bucket].1 < low {
            bucket += 1;
        }
        table[index] = bucket as u8;
        index += 1;
    }
    table
}

/// The label of the series that sums the methods without one of their own.
pub(crate) const OTHER: &str = "(other)";

/// What the endpoint itself did, shown in its own families.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Endpoint {
    /// Expositions rendered (HTTP scrapes and `nativeacct metrics`), this one included.
    pub(crate) scrapes: u64,
    /// CPU time the endpoint's thread spent rendering them, in ns.
    pub(crate) scrape_cpu_ns: u64,
    /// HTTP requests answered with an error or dropped (malformed, oversized, too slow).
    pub(crate) bad_requests: u64,
}

/// One latency histogram in the exposition's fixed buckets.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Buckets {
    /// Samples per bucket of [`BUCKETS`], then above the last bound.
    counts: [u64; BUCKETS.len() + 1],
}

impl Buckets {
    /// The samples of an HdrHistogram of ns (2 significant digits): each goes to the first bucket
    /// whose bound is at least the lower end of its HdrHistogram bucket. One pass over its counts.
    pub(crate) fn of(h: &Histogram<u64>) -> Buckets {
        let mut out = Buckets::default();
        if h.is_empty() {
            return out;
        }
        let max = h.max();
        // The lowest value not counted yet: the start of an HdrHistogram bucket. The walk reads
        // only the counts between the lowest value above 0 and the highest (the first count it
        // touches is the lowest one's: each histogram read costs a cache miss or more).
        let mut from = h.min_nz();
        for (i, &(_, bound)) in BUCKETS.iter().enumerate() {
            if from > max {
                break;
            }
            if bound >= from {
                out.counts[i] = h.count_between(from, bound);
                from = h.highest_equivalent(bound).saturating_add(1);
            }
        }
        if from <= max {
            out.counts[BUCKETS.len()] = h.count_between(from, max);
        }
        // The rest are zeros (not recorded by the agent, which clamps to 1 ns, but counted).
        let walked: u64 = out.counts.iter().sum();
        out.counts[0] += h.len().saturating_sub(walked);
        out
    }

    /// The samples of a live thread's slot.
    pub(crate) fn of_slot(slot: &SlotCounts<'_>) -> Buckets {
        let mut out = Buckets::default();
        slot.each_count(|index, count| {
            out.counts[usize::from(BUCKET_OF_SLOT_INDEX[index])] += u64::from(count);
        });
        out
    }

    pub(crate) fn add(&mut self, other: &Buckets) {
        for (mine, theirs) in self.counts.iter_mut().zip(other.counts) {
            *mine += theirs;
        }
    }
}

/// The histograms an exposition shows.
#[derive(Default)]
pub(crate) struct LatencyBuckets {
    pub(crate) native_overall: Buckets,
    pub(crate) upcall_overall: Buckets,
    /// Of the methods with series of their own.
    pub(crate) native_by_method: HashMap<u32, Buckets>,
}

/// What one exposition remembers for the next (see the module's documentation).
#[derive(Default)]
pub(crate) struct Memory {
    /// Each process histogram's buckets and the sample count they were made from (an
    /// HdrHistogram only grows, so the same count means the same samples): only histograms that
    /// changed since the last exposition are read again. By method, by JNI function, and for the
    /// samples recorded straight into the overall ones (native, upcall).
    method_buckets: IdMap<(u64, Buckets)>,
    function_buckets: IdMap<(u64, Buckets)>,
    direct_buckets: [(u64, Buckets); 2],
    /// Every method that has had a series of its own.
    methods: HashMap<u32, Named>,
    /// The highest value each counter series has shown, by `name{labels}`.
    highest: HashMap<String, u64>,
    /// The length of the last exposition's text (the next one allocates that much at once).
    text_len: usize,
}

#[derive(Default)]
struct Named {
    /// (calls, self ns) when its current series began; None: it has none now.
    since: Option<(u64, u64)>,
    /// Calls and self ns counted in its own series during earlier periods.
    earlier: (u64, u64),
    /// (calls, self ns) its series last showed: what it gains after that and before it leaves
    /// goes to `(other)`.
    last: (u64, u64),
}

impl Named {
    /// What went to its own series so far, given its values now.
    fn own(&self, calls: u64, self_ns: u64) -> (u64, u64) {
        let now = self.since.map_or((0, 0), |(c, ns)| {
            (calls - c.min(calls), self_ns - ns.min(self_ns))
        });
        (self.earlier.0 + now.0, self.earlier.1 + now.1)
    }
}

/// One native method's whole-run numbers.
#[derive(Clone, Copy, Debug)]
pub(crate) struct MethodNumbers {
    pub(crate) id: u32,
    pub(crate) calls: u64,
    pub(crate) self_ns: u64,
}

/// The whole-run numbers an exposition shows: the same fields a report of the same merged totals
/// and process section has.
pub(crate) struct Numbers {
    pub(crate) version: String,
    pub(crate) facts: RunFacts,
    pub(crate) bytecode_ns: u64,
    pub(crate) native_ns: u64,
    /// The same Java CPU split into the JNI boundary's parts (the report's `boundary`).
    pub(crate) boundary: crate::sampler::Boundary,
    pub(crate) parts: Parts,
    /// Every counted native method, ranked by [`Memory::name_methods`].
    pub(crate) methods: Vec<MethodNumbers>,
    /// (JNI function, upcalls, Java ns), for every function.
    pub(crate) jni: Vec<(&'static str, u64, u64)>,
    pub(crate) threads: u64,
    /// Methods that may have series of their own.
    pub(crate) top: usize,
    /// `on` when the boundary sampler runs, else `off` (`boundary=`).
    pub(crate) boundary_sampler: &'static str,
}

/// The buckets of `h`, read again only if it has new samples since `cached` was.
fn cached_buckets(cached: &mut (u64, Buckets), h: &Histogram<u64>) -> Buckets {
    let len = h.len();
    if cached.0 != len {
        *cached = (len, Buckets::of(h));
    }
    cached.1
}

impl Memory {
    /// The buckets of every histogram in `h` and in the live threads' `slots` (what a dump of
    /// this moment would merge): the overall ones, and those of the `named` methods.
    pub(crate) fn latency(
        &mut self,
        h: &Histograms,
        slots: &[SlotCounts<'_>],
        named: &[u32],
    ) -> LatencyBuckets {
        let [native_direct, upcall_direct] = &mut self.direct_buckets;
        let mut out = LatencyBuckets {
            native_overall: cached_buckets(native_direct, &h.native_overall),
            upcall_overall: cached_buckets(upcall_direct, &h.upcall_overall),
            native_by_method: HashMap::new(),
        };
        for (&id, method) in &h.native_by_method {
            let b = cached_buckets(self.method_buckets.entry(id).or_default(), method);
            out.native_overall.add(&b);
            if named.contains(&id) {
                out.native_by_method.insert(id, b);
            }
        }
        for (&i, function) in &h.upcall_by_function {
            let b = cached_buckets(self.function_buckets.entry(i).or_default(), function);
            out.upcall_overall.add(&b);
        }
        // Slots are read whole each time: only their touched blocks, without a lookup.
        for slot in slots {
            let b = Buckets::of_slot(slot);
            match slot.key() {
                (SampleKind::NativeSelf, id) => {
                    out.native_overall.add(&b);
                    if named.contains(&id) && h.keeps_method(id) {
                        out.native_by_method.entry(id).or_default().add(&b);
                    }
                }
                (SampleKind::UpcallJava, _) => out.upcall_overall.add(&b),
            }
        }
        out
    }

    /// Rank `methods` by self time (most first) and decide which have series of their own: the
    /// `top` first join, and a method keeps its series while it ranks within `2 × top`. Their ids,
    /// in rank order.
    pub(crate) fn name_methods(&mut self, methods: &mut [MethodNumbers], top: usize) -> Vec<u32> {
        let top = top.max(1);
        methods.sort_unstable_by(|a, b| {
            b.self_ns
                .cmp(&a.self_ns)
                .then(b.calls.cmp(&a.calls))
                .then(a.id.cmp(&b.id))
        });
        let mut named = Vec::new();
        for (rank, row) in methods.iter().enumerate() {
            let m = self.methods.get_mut(&row.id);
            let is_named = m.as_ref().is_some_and(|m| m.since.is_some());
            if rank < top && !is_named {
                let m = self.methods.entry(row.id).or_default();
                m.since = Some((row.calls, row.self_ns));
                m.last = (row.calls, row.self_ns);
                named.push(row.id);
            } else if rank >= 2 * top && is_named {
                if let Some(m) = m {
                    m.earlier = m.own(m.last.0, m.last.1);
                    m.since = None;
                }
            } else if is_named {
                named.push(row.id);
            }
        }
        named
    }
}

/// The exposition of `numbers` in `flavor`. `named`: the methods with series of their own (from
/// [`Memory::name_methods`]) and their labels; `histograms`: the overall ones and those of the
/// named methods ([`Memory::latency`]).
pub(crate) fn render(
    numbers: &Numbers,
    named: &[(u32, String)],
    histograms: Option<&LatencyBuckets>,
    memory: &mut Memory,
    endpoint: Endpoint,
    flavor: Flavor,
) -> String {
    let mut out = Exposition {
        text: String::with_capacity((memory.text_len + 4096).max(16 << 10)),
        flavor,
        memory,
        key: String::new(),
    };
    out.info(numbers);
    out.counter(
        "nativeacct_java_cpu_seconds",
        "CPU time of Java threads (ended ones included) by side: bytecode (interpreter, compiled code, the VM work they call) or native (inside native methods); the share is native over both",
    );
    out.seconds(
        "nativeacct_java_cpu_seconds",
        &[("side", "bytecode")],
        numbers.bytecode_ns,
    );
    out.seconds(
        "nativeacct_java_cpu_seconds",
        &[("side", "native")],
        numbers.native_ns,
    );

    out.counter(
        "nativeacct_java_boundary_cpu_seconds",
        "The same Java CPU split at the JNI boundary: java_code and jvm_in_java (bytecode side), native_code and jvm_in_native (native side), agent_in_thread; each side's exact time split by a per-thread CPU-time sampler (the report's boundary); the parts add up to nativeacct_java_cpu_seconds_total",
    );
    let b = &numbers.boundary.parts;
    for (part, ns) in [
        ("java_code", b.java_code_ns),
        ("jvm_in_java", b.jvm_in_java_ns),
        ("native_code", b.native_code_ns),
        ("jvm_in_native", b.jvm_in_native_ns),
        ("agent_in_thread", b.agent_in_thread_ns),
    ] {
        out.seconds(
            "nativeacct_java_boundary_cpu_seconds",
            &[("part", part)],
            ns,
        );
    }

    out.counter(
        "nativeacct_process_cpu_seconds",
        "The whole process's CPU time by part; the parts add up to the process's CPU time",
    );
    for (part, ns) in numbers.parts.iter() {
        out.seconds(
            "nativeacct_process_cpu_seconds",
            &[("part", part.key())],
            ns,
        );
    }

    out.methods(numbers, named, histograms);

    out.counter(
        "nativeacct_jni_upcalls",
        "JNI calls from native code that run Java (CallXMethod, NewObject, ...), by function",
    );
    for &(function, calls, _) in numbers.jni.iter().filter(|f| f.1 > 0) {
        out.count("nativeacct_jni_upcalls", &[("function", function)], calls);
    }
    out.counter(
        "nativeacct_jni_upcall_java_seconds",
        "CPU time of the Java code that JNI upcalls ran, by function",
    );
    for &(function, _, java_ns) in numbers.jni.iter().filter(|f| f.1 > 0) {
        out.seconds(
            "nativeacct_jni_upcall_java_seconds",
            &[("function", function)],
            java_ns,
        );
    }
    out.counter(
        "nativeacct_java_threads",
        "Java threads that ran with the agent, ended ones included",
    );
    out.count("nativeacct_java_threads", &[], numbers.threads);

    if let Some(h) = histograms {
        out.histogram_family(
            "nativeacct_native_self_time_seconds",
            "Native self time of one native-method call (time in callees of JNI upcalls excluded), every method",
        );
        let self_ns = numbers.methods.iter().map(|m| m.self_ns).sum();
        out.histogram(
            "nativeacct_native_self_time_seconds",
            &[],
            &h.native_overall,
            self_ns,
        );
        out.histogram_family(
            "nativeacct_jni_upcall_java_time_seconds",
            "Java time of one JNI upcall, every function",
        );
        let java_ns = numbers.jni.iter().map(|f| f.2).sum();
        out.histogram(
            "nativeacct_jni_upcall_java_time_seconds",
            &[],
            &h.upcall_overall,
            java_ns,
        );
    }

    out.counter(
        "nativeacct_metrics_scrapes",
        "Expositions this agent rendered (HTTP scrapes and nativeacct metrics), this one included",
    );
    out.count("nativeacct_metrics_scrapes", &[], endpoint.scrapes);
    out.counter(
        "nativeacct_metrics_scrape_cpu_seconds",
        "CPU time the endpoint's thread spent rendering expositions (part of the process split's agent part)",
    );
    out.seconds(
        "nativeacct_metrics_scrape_cpu_seconds",
        &[],
        endpoint.scrape_cpu_ns,
    );
    out.counter(
        "nativeacct_metrics_bad_requests",
        "HTTP requests the endpoint refused or dropped: malformed, oversized, not GET /metrics, or too slow",
    );
    out.count(
        "nativeacct_metrics_bad_requests",
        &[],
        endpoint.bad_requests,
    );
    if flavor == Flavor::OpenMetrics {
        out.text.push_str("# EOF\n");
    }
    out.memory.text_len = out.text.len();
    out.text
}

struct Exposition<'a> {
    text: String,
    flavor: Flavor,
    memory: &'a mut Memory,
    /// The `name{labels}` of the counter being written (reused: an exposition writes hundreds).
    key: String,
}

impl Exposition<'_> {
    fn info(&mut self, numbers: &Numbers) {
        let run = &numbers.facts;
        let labels = [
            ("version", numbers.version.as_str()),
            ("jdk", run.jdk_version.as_str()),
            ("clock", run.clock.as_str()),
            ("j2n", run.j2n.as_str()),
            ("mode", run.mode.as_str()),
            ("timing", "exact"),
            ("boundary", numbers.boundary_sampler),
        ];
        let help = "The agent and the run it measures";
        match self.flavor {
            Flavor::OpenMetrics => {
                let _ = write!(
                    self.text,
                    "# TYPE nativeacct info\n# HELP nativeacct {help}\n"
                );
            }
            Flavor::Prometheus => {
                let _ = write!(
                    self.text,
                    "# HELP nativeacct_info {help}\n# TYPE nativeacct_info gauge\n"
                );
            }
        }
        self.sample("nativeacct_info", "", &labels, 1);
    }

    /// A counter family's metadata; `base` ends in the unit (`_seconds`) when it has one.
    fn counter(&mut self, base: &str, help: &str) {
        match self.flavor {
            Flavor::OpenMetrics => {
                let _ = writeln!(self.text, "# TYPE {base} counter");
                if base.ends_with("_seconds") {
                    let _ = writeln!(self.text, "# UNIT {base} seconds");
                }
                let _ = writeln!(self.text, "# HELP {base} {help}");
            }
            Flavor::Prometheus => {
                let _ = writeln!(self.text, "# HELP {base}_total {help}");
                let _ = writeln!(self.text, "# TYPE {base}_total counter");
            }
        }
    }

    fn histogram_family(&mut self, base: &str, help: &str) {
        match self.flavor {
            Flavor::OpenMetrics => {
                let _ = writeln!(self.text, "# TYPE {base} histogram");
                let _ = writeln!(self.text, "# UNIT {base} seconds");
                let _ = writeln!(self.text, "# HELP {base} {help}");
            }
            Flavor::Prometheus => {
                let _ = writeln!(self.text, "# HELP {base} {help}");
                let _ = writeln!(self.text, "# TYPE {base} histogram");
            }
        }
    }

    /// One counter sample of `base`, never lower than this series showed before.
    fn total(&mut self, base: &str, labels: &[(&str, &str)], value: u64) -> u64 {
        let key = &mut self.key;
        key.clear();
        key.push_str(base);
        key.push_str("_total");
        write_labels(key, labels);
        let highest = match self.memory.highest.get_mut(key.as_str()) {
            Some(highest) => highest,
            None => self.memory.highest.entry(key.clone()).or_default(),
        };
        *highest = (*highest).max(value);
        *highest
    }

    fn seconds(&mut self, base: &str, labels: &[(&str, &str)], ns: u64) {
        let ns = self.total(base, labels, ns);
        self.sample(base, "_total", labels, Seconds(ns));
    }

    fn count(&mut self, base: &str, labels: &[(&str, &str)], n: u64) {
        let n = self.total(base, labels, n);
        self.sample(base, "_total", labels, n);
    }

    /// `{base}{suffix}{labels} value`.
    fn sample(
        &mut self,
        base: &str,
        suffix: &str,
        labels: &[(&str, &str)],
        value: impl std::fmt::Display,
    ) {
        self.text.push_str(base);
        self.text.push_str(suffix);
        write_labels(&mut self.text, labels);
        let _ = writeln!(self.text, " {value}");
    }

    /// Cumulative buckets, count and sum of one histogram. `sum_ns` is the exact total of the
    /// times it counts (the samples a thread still holds in its slots included).
    fn histogram(&mut self, base: &str, labels: &[(&str, &str)], h: &Buckets, sum_ns: u64) {
        let mut with_le: Vec<(&str, &str)> = labels.to_vec();
        with_le.push(("le", ""));
        let mut cumulative = 0;
        for (i, (le, _)) in BUCKETS.iter().enumerate() {
            cumulative += h.counts[i];
            *with_le.last_mut().expect("le") = ("le", le);
            self.sample(base, "_bucket", &with_le, cumulative);
        }
        cumulative += h.counts[BUCKETS.len()];
        *with_le.last_mut().expect("le") = ("le", "+Inf");
        self.sample(base, "_bucket", &with_le, cumulative);
        self.sample(base, "_count", labels, cumulative);
        self.sample(base, "_sum", labels, Seconds(sum_ns));
    }

    /// Calls and self time of the named methods and `(other)`, and the named ones' histograms.
    fn methods(
        &mut self,
        numbers: &Numbers,
        named: &[(u32, String)],
        histograms: Option<&LatencyBuckets>,
    ) {
        let mut shown: Vec<(&MethodNumbers, &str)> = Vec::with_capacity(named.len());
        let (mut other_calls, mut other_ns) = (0u64, 0u64);
        for row in &numbers.methods {
            let memory = self.memory.methods.get(&row.id);
            let own = memory.map_or((0, 0), |m| m.own(row.calls, row.self_ns));
            other_calls += row.calls - own.0.min(row.calls);
            other_ns += row.self_ns - own.1.min(row.self_ns);
            if memory.is_some_and(|m| m.since.is_some()) {
                if let Some((_, label)) = named.iter().find(|(id, _)| *id == row.id) {
                    shown.push((row, label));
                }
            }
        }
        for (row, _) in &shown {
            if let Some(m) = self.memory.methods.get_mut(&row.id) {
                m.last = (row.calls, row.self_ns);
            }
        }
        self.counter(
            "nativeacct_native_calls",
            "Calls of native methods: the top ones by self time so far each have a series; (other) counts every method while it has none",
        );
        for (row, name) in &shown {
            self.count("nativeacct_native_calls", &[("method", name)], row.calls);
        }
        self.count("nativeacct_native_calls", &[("method", OTHER)], other_calls);
        self.counter(
            "nativeacct_native_self_seconds",
            "Native self time of native methods (time in Java called back through JNI excluded): the top ones by self time so far each have a series; (other) counts every method while it has none",
        );
        for (row, name) in &shown {
            self.seconds(
                "nativeacct_native_self_seconds",
                &[("method", name)],
                row.self_ns,
            );
        }
        self.seconds(
            "nativeacct_native_self_seconds",
            &[("method", OTHER)],
            other_ns,
        );

        let Some(histograms) = histograms else {
            return;
        };
        self.histogram_family(
            "nativeacct_native_method_self_time_seconds",
            "Native self time of one call, for each method that has its own nativeacct_native_calls_total series",
        );
        for (row, name) in &shown {
            if let Some(h) = histograms.native_by_method.get(&row.id) {
                self.histogram(
                    "nativeacct_native_method_self_time_seconds",
                    &[("method", name)],
                    h,
                    row.self_ns,
                );
            }
        }
    }
}

/// The label of method `id`: `pkg.Class.name(param,...)` (`?idN.()` when it has no name).
pub(crate) fn method_label(
    id: u32,
    method: Option<&nativeacct_classfile::NativeMethodRef>,
) -> String {
    match method {
        Some(m) if !m.class.is_empty() => {
            super::descriptor::frame_name(&m.class, &m.name, &m.descriptor)
        }
        _ => format!("?id{id}.()"),
    }
}

/// `{a="x",b="y"}` with values escaped; nothing for no labels.
fn write_labels(out: &mut String, labels: &[(&str, &str)]) {
    if labels.is_empty() {
        return;
    }
    out.push('{');
    for (i, (name, value)) in labels.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(name);
        out.push_str("=\"");
        for c in value.chars() {
            match c {
                '\\' => out.push_str("\\\\"),
                '"' => out.push_str("\\\""),
                '\n' => out.push_str("\\n"),
                c => out.push(c),
            }
        }
        out.push('"');
    }
    out.push('}');
}

/// ns written as exact decimal seconds.
struct Seconds(u64);

impl std::fmt::Display for Seconds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}.{:09}",
            self.0 / 1_000_000_000,
            self.0 % 1_000_000_000
        )
    }
}

#[cfg(test)]
mod tests;
