//! Tests of the sample logs and the histograms they drain into.

use super::*;

#[test]
fn packed_samples_round_trip_and_clamp() {
    let top_id = (crate::methods::MAX_METHODS - 1) as u32;
    for (kind, id, ns) in [
        (SampleKind::NativeSelf, 0, 1),
        (SampleKind::UpcallJava, 92, 123_456),
        (SampleKind::NativeSelf, top_id, MAX_NS),
    ] {
        assert_eq!(unpack(pack(kind, id, ns)), (kind, id, ns));
    }
    // Longer than the histogram range: clamped to its top, as recording would.
    assert_eq!(
        unpack(pack(SampleKind::UpcallJava, 7, u64::MAX)),
        (SampleKind::UpcallJava, 7, MAX_NS)
    );
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
        h.record_native(method, 1_000 + method as u64);
        h.record_native(method, 2_000_000);
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
    h.record_native(0, MAX_NS * 10);
    assert_eq!(
        h.native_by_method[&0].max(),
        h.native_by_method[&0].highest_equivalent(MAX_NS)
    );
}
