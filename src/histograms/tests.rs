//! Tests of the per-thread latency slots and the histograms they merge into.

use super::*;

#[test]
fn bucket_indexes_are_hdrhistograms_own() {
    let h = new_growing_histogram();
    let mut values: Vec<u64> = (0..5000).collect();
    for shift in 8..22 {
        for delta in [0u64, 1, 2, 63, 64, 127] {
            values.push((1 << shift) + (delta << (shift - 7)));
            values.push((2 << shift) - 1 - delta);
        }
    }
    values.push((1 << 22) - 1);
    for v in values {
        let index = bucket_index(v);
        assert!(index < SLOT_BUCKETS, "{v} → {index}");
        let low = bucket_value(index);
        assert_eq!(low, h.lowest_equivalent(v), "value {v}, index {index}");
        assert_eq!(bucket_index(low), index);
    }
    assert_eq!(
        bucket_index(SLOT_NS),
        SLOT_BUCKETS,
        "the first value past a slot"
    );
}

/// What the slots hand over is exactly what recording every value into an HdrHistogram gives.
#[test]
fn slots_merge_to_the_same_histogram_as_direct_recording() {
    let latency = ThreadLatency::default();
    let (native, upcall) = (SlotRef::default(), SlotRef::default());
    let mut direct = Histograms::new();
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    for i in 0..200_000u64 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        // Mostly short crossings, now and then up to 2^23 ns (past a slot: recorded at once).
        let ns = if i % 1000 == 0 {
            x % (1 << 23)
        } else {
            x % 5_000
        };
        latency.record(&native, SampleKind::NativeSelf, 7, ns);
        direct.record(SampleKind::NativeSelf, 7, ns, 1);
        latency.record(&upcall, SampleKind::UpcallJava, 3, ns / 3);
        direct.record(SampleKind::UpcallJava, 3, ns / 3, 1);
    }
    let mut merged = Histograms::new();
    latency.add_to(&mut merged);
    // The long ones went to the process histograms under the lock; fold them in.
    let mut process = crate::sync::lock(&LOCK);
    let long_native = process.native_by_method.remove(&7);
    let long_upcall = process.upcall_by_function.remove(&3);
    drop(process);
    if let Some(h) = long_native {
        merged
            .native_by_method
            .get_mut(&7)
            .unwrap()
            .add(&h)
            .unwrap();
    }
    if let Some(h) = long_upcall {
        merged
            .upcall_by_function
            .get_mut(&3)
            .unwrap()
            .add(&h)
            .unwrap();
    }
    for (a, b) in [
        (&merged.native_by_method[&7], &direct.native_by_method[&7]),
        (
            &merged.upcall_by_function[&3],
            &direct.upcall_by_function[&3],
        ),
    ] {
        assert_eq!(a.len(), b.len());
        assert_eq!(a.max(), b.max());
        assert_eq!(a.min(), b.min());
        for q in [0.5, 0.9, 0.99, 0.999, 1.0] {
            assert_eq!(a.value_at_quantile(q), b.value_at_quantile(q), "q {q}");
        }
        assert_eq!(a.mean(), b.mean());
        assert!(a.iter_recorded().eq(b.iter_recorded()));
    }
    // Draining empties the slots for the next thread.
    latency.drain();
    let mut after = Histograms::new();
    latency.add_to(&mut after);
    assert!(after.native_by_method.is_empty() && after.upcall_by_function.is_empty());
}

/// A thread's crossings wait to be counted until it has recorded [`WAITING`] of them: every
/// reader sees them, and a merge that resets the slots leaves nothing waiting for the next thread.
#[test]
fn waiting_crossings_are_read_and_merged_once() {
    let latency = ThreadLatency::default();
    let (a, b) = (SlotRef::default(), SlotRef::default());
    let values = |round: u64| [40, 40, 41, 3_000 + round];
    let rounds = (WAITING as u64 + 5) / 4;
    for round in 0..rounds {
        for ns in values(round) {
            latency.record(&a, SampleKind::NativeSelf, 11, ns);
        }
        latency.record(&b, SampleKind::UpcallJava, 2, 70);
    }
    let recorded = rounds * 5;
    assert!(recorded > WAITING as u64 && !recorded.is_multiple_of(WAITING as u64));
    let seen = |latency: &ThreadLatency| {
        let mut by_key = std::collections::BTreeMap::<(u8, u32, u64), u64>::new();
        for slot in latency.each() {
            let counts = SlotCounts {
                slot,
                waiting: latency.waiting_now(),
            };
            let (kind, id) = counts.key();
            counts.each_count(|index, count| {
                *by_key
                    .entry((kind as u8, id, bucket_value(index)))
                    .or_default() += u64::from(count);
            });
        }
        by_key
    };
    let before = seen(&latency);
    assert_eq!(before[&(0, 11, 40)], 2 * rounds);
    assert_eq!(before[&(0, 11, 41)], rounds);
    assert_eq!(before[&(1, 2, 70)], rounds);
    assert_eq!(
        before.values().sum::<u64>(),
        recorded,
        "counted and waiting, each once"
    );
    let mut merged = Histograms::new();
    latency.add_to(&mut merged);
    assert_eq!(merged.native_by_method[&11].len(), 4 * rounds);
    assert_eq!(merged.upcall_by_function[&2].len(), rounds);
    // What `drain` does, without the process histograms.
    latency.count_waiting();
    assert!(latency.waiting_now().is_empty());
    assert_eq!(seen(&latency), before, "counted in place, nothing lost");
    let mut drained = Histograms::new();
    for slot in latency.each() {
        slot.merge_into(&mut drained, true);
        assert!(slot.is_untouched());
    }
    assert_eq!(drained.native_by_method[&11].len(), 4 * rounds);
    assert!(seen(&latency).is_empty());
    latency.record(&a, SampleKind::NativeSelf, 11, 90);
    assert_eq!(
        seen(&latency).into_iter().collect::<Vec<_>>(),
        vec![((0, 11, 90), 1)]
    );
}

/// Past its slots, a thread records under the lock: nothing is lost.
#[test]
fn keys_past_the_slots_are_recorded_at_once() {
    let latency = ThreadLatency::default();
    let refs: Vec<SlotRef> = (0..SLOTS_PER_THREAD + 3)
        .map(|_| SlotRef::default())
        .collect();
    let first = 1_000_000;
    for (id, slot) in refs.iter().enumerate() {
        latency.record(slot, SampleKind::NativeSelf, first + id as u32, 500);
        latency.record(slot, SampleKind::NativeSelf, first + id as u32, 700);
    }
    let mut merged = Histograms::new();
    latency.add_to(&mut merged);
    assert_eq!(merged.native_by_method.len(), SLOTS_PER_THREAD);
    let mut process = crate::sync::lock(&LOCK);
    for id in SLOTS_PER_THREAD..SLOTS_PER_THREAD + 3 {
        let h = process
            .native_by_method
            .remove(&(first + id as u32))
            .expect("recorded under the lock");
        assert_eq!(h.len(), 2);
    }
}

#[test]
fn method_histograms_stop_at_the_budget_and_the_rest_is_counted() {
    let limit = method_histogram_limit();
    assert!(
        (1000..3000).contains(&limit),
        "{limit} histograms in the budget"
    );
    let mut h = Histograms::new();
    for method in 0..(limit as u32 + 5) {
        h.record(SampleKind::NativeSelf, method, 1_000 + method as u64, 1);
        h.record(SampleKind::NativeSelf, method, 2_000_000, 1);
    }
    assert_eq!(h.native_by_method.len(), limit);
    assert_eq!(
        h.methods_without_histogram, 5,
        "each refused method is counted once"
    );
    let summed = h.summed(h.native_by_method.clone(), h.upcall_by_function.clone());
    assert_eq!(
        summed.native_overall.len(),
        2 * (limit as u64 + 5),
        "every sample is in the overall histogram"
    );
    assert_eq!(h.native_by_method[&0].len(), 2);
    // A growing histogram keeps the full range.
    h.record(SampleKind::NativeSelf, 0, MAX_NS * 10, 1);
    assert_eq!(
        h.native_by_method[&0].max(),
        h.native_by_method[&0].highest_equivalent(MAX_NS)
    );
}
