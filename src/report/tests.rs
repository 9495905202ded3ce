//! Tests of the report model: descriptors in Java spelling and the exact split of parts.

use super::descriptor::java_parameter_types;
use super::*;

#[test]
fn parameter_types_read_every_descriptor_shape() {
    assert_eq!(
        java_parameter_types("(IJ[Ljava/lang/String;[[DZLa/B$C;)V"),
        [
            "int",
            "long",
            "java.lang.String[]",
            "double[][]",
            "boolean",
            "a.B$C"
        ]
    );
    assert!(java_parameter_types("()V").is_empty());
}

#[test]
fn split_is_proportional_and_adds_up() {
    assert_eq!(split_exactly(10, &[1, 1, 1]), [4, 3, 3]);
    assert_eq!(split_exactly(1000, &[3, 1]), [750, 250]);
    assert_eq!(split_exactly(7, &[0, 5]), [0, 7]);
    let parts = split_exactly(u64::MAX, &[u64::MAX, 3, 7]);
    assert_eq!(
        parts.iter().map(|&p| p as u128).sum::<u128>(),
        u64::MAX as u128
    );
}

#[test]
fn interval_boundary_parts_add_up_to_the_interval_and_pair_threads_by_tid_and_name() {
    use crate::merge::{JavaCounts, ThreadSummary};
    use crate::sampler::{Boundary, BoundarySamples};
    let row = |tid: i64, name: &str, bytecode_ns: u64, native_ns: u64, k: u64| ThreadSummary {
        name: name.into(),
        tid,
        counts: JavaCounts {
            bytecode_ns,
            native_ns,
            ..JavaCounts::default()
        },
        boundary_samples: BoundarySamples {
            java_code: 3 * k,
            jvm_in_java: k,
            native_code: 2 * k,
            jvm_in_native: k,
            agent_in_native: k,
            ..BoundarySamples::default()
        },
        ..ThreadSummary::default()
    };
    let then: ThreadRows = (vec![row(1, "a", 1_000, 2_000, 1)], None);
    let now: ThreadRows = (
        vec![row(1, "a", 5_000, 10_000, 5), row(2, "b", 700, 300, 1)],
        None,
    );
    let parts = boundary_parts_between(&now, &then);
    assert_eq!(parts.iter().sum::<u64>(), 4_000 + 8_000 + 1_000);
    // Thread a's interval (4 samples a side) plus thread b from zero, each split as a report would.
    let a = Boundary::of_thread(
        4_000,
        8_000,
        &now.0[0].boundary_samples.since(&then.0[0].boundary_samples),
    );
    let b = Boundary::of_thread(700, 300, &now.0[1].boundary_samples);
    let expected: Vec<u64> = boundary_values(&a)
        .iter()
        .zip(boundary_values(&b))
        .map(|((_, x, _), (_, y, _))| x + y)
        .collect();
    assert_eq!(parts.to_vec(), expected);
    assert_eq!(parts[0], 3_000 + 525);
    // From nothing, the interval is the whole run.
    let whole = boundary_parts_between(&now, &ThreadRows::default());
    assert_eq!(whole.iter().sum::<u64>(), 15_000 + 1_000);
}

#[test]
fn a_thread_renamed_while_running_keeps_its_interval() {
    use crate::merge::{JavaCounts, ThreadSummary};
    let row = |name: &str, native_ns: u64, alive: bool| ThreadSummary {
        name: name.into(),
        tid: 7,
        counts: JavaCounts {
            native_ns,
            ..JavaCounts::default()
        },
        alive_at_exit: alive,
        ..ThreadSummary::default()
    };
    // The VM renames the main thread DestroyJavaVM at exit: still the same thread.
    let then: ThreadRows = (vec![row("main", 5_000, true)], None);
    let now: ThreadRows = (vec![row("DestroyJavaVM", 6_000, false)], None);
    assert_eq!(
        boundary_parts_between(&now, &then).iter().sum::<u64>(),
        1_000
    );
}
