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
