//! Tests of the clock interface: names, requests and the description of a choice.

use super::*;

#[test]
fn option_names_round_trip() {
    for kind in ClockKind::all() {
        assert_eq!(ClockKind::from_name(kind.name()), Some(kind));
        assert_eq!(
            ClockRequest::from_name(kind.name()),
            Some(ClockRequest::Exactly(kind))
        );
    }
    assert_eq!(ClockRequest::from_name("auto"), Some(ClockRequest::Auto));
    assert_eq!(ClockKind::from_name("auto"), None);
    assert_eq!(ClockKind::from_name("wall"), None);
    assert_eq!(ClockKind::from_name("TSC"), None);
}

#[test]
fn describe_names_the_tsc_rate() {
    let choice = ClockChoice {
        kind: ClockKind::Cycles,
        reason: String::new(),
        tsc_hz: Some(3_000_000_000),
    };
    assert!(choice
        .describe()
        .starts_with("clock=cycles (TSC 3000.000 MHz)"));
}
