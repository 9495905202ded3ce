use super::*;
use std::collections::BTreeMap;

fn numbers(methods: &[(u32, u64, u64)], top: usize) -> Numbers {
    Numbers {
        version: "0.1.0".into(),
        facts: RunFacts::default(),
        bytecode_ns: 3_000_000_007,
        native_ns: methods.iter().map(|m| m.2).sum(),
        boundary: Default::default(),
        parts: Parts::default(),
        methods: methods
            .iter()
            .map(|&(id, calls, self_ns)| MethodNumbers { id, calls, self_ns })
            .collect(),
        jni: vec![("CallVoidMethod", 2, 30)],
        threads: 1,
        top,
        boundary_sampler: "on",
    }
}

/// The exposition of these numbers, choosing the named methods first.
fn expose(mut n: Numbers, memory: &mut Memory, h: Option<&Histograms>, flavor: Flavor) -> String {
    let ids = memory.name_methods(&mut n.methods, n.top);
    let latency = h.map(|h| memory.latency(h, &[], &ids));
    let named: Vec<(u32, String)> = ids
        .into_iter()
        .map(|id| (id, method_label(id, None)))
        .collect();
    render(
        &n,
        &named,
        latency.as_ref(),
        memory,
        Endpoint::default(),
        flavor,
    )
}

/// Histograms as they are live: samples of `direct` recorded straight into the overall one, those
/// of `method1` in method 1's.
fn histograms(direct: &[u64], method1: &[u64]) -> Histograms {
    let of = |samples: &[u64]| {
        let mut h = Histogram::<u64>::new(2).unwrap();
        for &ns in samples {
            h.record(ns).unwrap();
        }
        h
    };
    let mut by_method = crate::histograms::IdMap::default();
    by_method.insert(1, of(method1));
    Histograms::restored(of(direct), of(&[]), by_method, Default::default(), 0)
}

/// `name{labels}` → value, for every sample line.
fn samples(text: &str) -> BTreeMap<String, f64> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let (series, value) = l.rsplit_once(' ').unwrap();
            (series.to_string(), value.parse().unwrap())
        })
        .collect()
}

fn self_series(s: &BTreeMap<String, f64>) -> BTreeMap<String, f64> {
    s.iter()
        .filter(|(k, _)| k.starts_with("nativeacct_native_self_seconds_total"))
        .map(|(k, v)| (k.clone(), *v))
        .collect()
}

#[test]
fn method_series_keep_counters_whole_when_the_ranking_changes() {
    let mut memory = Memory::default();
    // top=1: method 1 leads, then 2 overtakes it, then 3 overtakes both (1 falls to rank 3 ≥ 2).
    let steps = [
        vec![(1, 10, 1000), (2, 5, 500), (3, 1, 100)],
        vec![(1, 11, 1100), (2, 50, 5000), (3, 2, 200)],
        vec![(1, 12, 1200), (2, 60, 6000), (3, 90, 9000)],
        vec![(1, 13, 1300), (2, 61, 6100), (3, 95, 9500)],
    ];
    let mut before: Option<BTreeMap<String, f64>> = None;
    let mut total_before = 0.0;
    for step in &steps {
        let text = expose(numbers(step, 1), &mut memory, None, Flavor::OpenMetrics);
        let now = self_series(&samples(&text));
        assert!(
            now.len() <= 3,
            "at most 2 × top named plus (other): {now:?}"
        );
        let total: f64 = step.iter().map(|m| m.2 as f64 / 1e9).sum();
        if let Some(before) = &before {
            for (series, v) in &now {
                if let Some(b) = before.get(series) {
                    assert!(v >= b, "{series} went down: {b} → {v}");
                }
            }
            // What the series that exist at both ends gained is what the whole gained, less what
            // went to series that appeared (they start where the method stood).
            let gained: f64 = now
                .iter()
                .map(|(k, v)| v - before.get(k).copied().unwrap_or(*v))
                .sum();
            assert!(
                (gained - (total - total_before)).abs() < 1e-12,
                "{gained} vs {}",
                total - total_before
            );
        }
        before = Some(now);
        total_before = total;
    }
    let last = before.unwrap();
    assert!(!last.contains_key(r#"nativeacct_native_self_seconds_total{method="?id1.()"}"#));
    assert_eq!(
        last[r#"nativeacct_native_self_seconds_total{method="?id3.()"}"#],
        9.5e-6
    );
}

#[test]
fn histograms_are_cumulative_in_seconds_and_both_flavors_end_right() {
    let mut memory = Memory::default();
    let h = histograms(&[50, 150, 20_000_000_000], &[150, 3_000]);
    let text = expose(
        numbers(&[(1, 3, 300)], 20),
        &mut memory,
        Some(&h),
        Flavor::OpenMetrics,
    );
    assert!(text.ends_with("# EOF\n"));
    let s = samples(&text);
    let b = |le: &str| s[&format!("nativeacct_native_self_time_seconds_bucket{{le=\"{le}\"}}")];
    assert_eq!(b("1e-07"), 1.0);
    assert_eq!(b("2e-07"), 3.0);
    assert_eq!(b("5e-06"), 4.0);
    assert_eq!(b("10"), 4.0);
    assert_eq!(b("+Inf"), 5.0);
    assert_eq!(s["nativeacct_native_self_time_seconds_count"], 5.0);
    let m = |le: &str| {
        s[&format!(
            "nativeacct_native_method_self_time_seconds_bucket{{method=\"?id1.()\",le=\"{le}\"}}"
        )]
    };
    assert_eq!(
        (m("1e-07"), m("2e-07"), m("5e-06"), m("+Inf")),
        (0.0, 1.0, 2.0, 2.0)
    );
    // Read again with one more sample in method 1: the cached buckets are not reused.
    let h = histograms(&[50, 150, 20_000_000_000], &[150, 3_000, 3_000]);
    let again = samples(&expose(
        numbers(&[(1, 4, 300)], 20),
        &mut memory,
        Some(&h),
        Flavor::OpenMetrics,
    ));
    assert_eq!(again["nativeacct_native_self_time_seconds_count"], 6.0);
    assert!(text.contains(
        "# TYPE nativeacct_java_cpu_seconds counter\n# UNIT nativeacct_java_cpu_seconds seconds\n"
    ));
    assert_eq!(
        s[r#"nativeacct_java_cpu_seconds_total{side="bytecode"}"#],
        3.000000007
    );
    assert!(text.contains("nativeacct_java_cpu_seconds_total{side=\"bytecode\"} 3.000000007\n"));
    let plain = expose(
        numbers(&[(1, 3, 300)], 20),
        &mut memory,
        Some(&h),
        Flavor::Prometheus,
    );
    assert!(!plain.contains("# EOF") && !plain.contains("# UNIT"));
    assert!(plain.contains("# TYPE nativeacct_java_cpu_seconds_total counter\n"));
    assert!(plain.contains("# TYPE nativeacct_info gauge\n"));
}

#[test]
fn label_values_are_escaped() {
    let mut out = String::new();
    write_labels(&mut out, &[("method", "a\"b\\c\nd")]);
    assert_eq!(out, r#"{method="a\"b\\c\nd"}"#);
}

#[test]
fn buckets_count_every_sample_once_as_a_walk_over_the_values_would() {
    let mut h = Histogram::<u64>::new(2).unwrap();
    let mut x: u64 = 12345;
    for _ in 0..20_000 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        // Log-uniform from 1 ns to about 60 s, and the bounds themselves.
        let v = 1u64 << ((x >> 58) % 36);
        h.record(v + (x >> 40) % v.max(1)).unwrap();
    }
    for (_, bound) in BUCKETS {
        h.record(bound).unwrap();
        h.record(bound + 1).unwrap();
    }
    let mut walked = Buckets::default();
    for v in h.iter_recorded() {
        let low = h.lowest_equivalent(v.value_iterated_to());
        walked.counts[BUCKETS.partition_point(|(_, b)| *b < low)] += v.count_at_value();
    }
    let fast = Buckets::of(&h);
    assert_eq!(fast, walked);
    assert_eq!(fast.counts.iter().sum::<u64>(), h.len());
    assert_eq!(
        Buckets::of(&Histogram::<u64>::new(2).unwrap()),
        Buckets::default()
    );
    // The walk starts at the lowest recorded value: narrow histograms, far from 0, and a zero.
    for (values, bucket) in [
        (&[201u64][..], 2),
        (&[499, 500][..], 2),
        (&[502, 503][..], 3),
        (&[10_100_000_000][..], BUCKETS.len()),
        (&[0][..], 0),
    ] {
        let mut h = Histogram::<u64>::new(2).unwrap();
        for &v in values {
            h.record(v).unwrap();
        }
        let mut want = Buckets::default();
        want.counts[bucket] = values.len() as u64;
        assert_eq!(Buckets::of(&h), want, "{values:?}");
    }
    let mut h = Histogram::<u64>::new(2).unwrap();
    for v in [0, 0, 700] {
        h.record(v).unwrap();
    }
    let mut want = Buckets::default();
    (want.counts[0], want.counts[3]) = (2, 1);
    assert_eq!(Buckets::of(&h), want);
}

/// An exposition reads a live thread's slots in place: its buckets are those of the histograms a
/// dump of the same moment merges, for a method held in a slot and recorded past it at once.
#[test]
fn live_slots_give_the_buckets_a_dump_would() {
    use crate::histograms::{SampleKind, SlotRef, ThreadLatency};
    // Ids of this test's own: the process histograms are shared with the other tests.
    let (in_slot, past_slot) = (3_000_001u32, 3_000_002u32);
    let latency = ThreadLatency::default();
    let (slot, other) = (SlotRef::default(), SlotRef::default());
    latency.record(&slot, SampleKind::NativeSelf, in_slot, 1);
    // The thread's other slots taken: `past_slot` has none, its samples go at once.
    let fillers: Vec<SlotRef> = (1..crate::histograms::SLOTS_PER_THREAD)
        .map(|_| SlotRef::default())
        .collect();
    for (i, filler) in fillers.iter().enumerate() {
        latency.record(filler, SampleKind::UpcallJava, 3_000_100 + i as u32, 1);
    }
    let mut x: u64 = 0x2545_F491_4F6C_DD1D;
    for i in 0..50_000u64 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        // Log-uniform up to 2^27 ns: some past what a slot covers (recorded at once).
        let ns = (1u64 << (x % 27)) + (x >> 40) % (1 << (x % 27));
        latency.record(&slot, SampleKind::NativeSelf, in_slot, ns);
        if i % 10 == 0 {
            latency.record(&other, SampleKind::NativeSelf, past_slot, ns / 7);
        }
    }
    let mut memory = Memory::default();
    let live = [&latency];
    let served = crate::histograms::read_locked(&live, |h, slots| {
        memory.latency(h, slots, &[in_slot, past_slot])
    });
    let dumped = crate::histograms::snapshot(&live);
    for id in [in_slot, past_slot] {
        let want = Buckets::of(&dumped.native_by_method[&id]);
        assert_eq!(served.native_by_method[&id], want, "method {id}");
        let calls = if id == in_slot { 50_001 } else { 5_000 };
        assert_eq!(want.counts.iter().sum::<u64>(), calls);
    }
}
