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

#[test]
fn the_fast_path_fields_point_into_the_tsc_clocks() {
    let open = |kind| {
        ThreadClock::open(&ClockChoice {
            kind,
            reason: String::new(),
            tsc_hz: Some(2_000_000_000),
        })
    };
    let tag_of = |clock: &ThreadClock| {
        // SAFETY: the tag byte lies inside `clock`, which nothing writes meanwhile.
        unsafe {
            (clock as *const ThreadClock as *const u8)
                .add(HYBRID_FIELDS.tag)
                .read()
        }
    };
    for kind in [ClockKind::TscHybrid, ClockKind::TscGated] {
        let clock = open(kind);
        let from = &clock as *const ThreadClock as usize;
        // Where each clock sits is what the fields were composed with; a clock that degraded (no
        // TSC here) never runs the assembly.
        let (payload, expected, tag) = match &clock.imp {
            Imp::TscHybrid(inner) => (
                inner as *const TscHybridClock as usize,
                std::mem::align_of::<TscHybridClock>(),
                HYBRID_FIELDS.tag_value,
            ),
            Imp::TscGated(inner) => (
                inner as *const TscGatedClock as usize,
                std::mem::align_of::<TscGatedClock>(),
                GATED_TAG,
            ),
            _ => continue,
        };
        assert_eq!(payload - from - HYBRID_FIELDS.tag, expected);
        assert_eq!(tag_of(&clock), tag);
    }
    assert_ne!(HYBRID_FIELDS.tag_value, GATED_TAG);
    let other = open(ClockKind::ThreadCputime);
    assert!(![HYBRID_FIELDS.tag_value, GATED_TAG].contains(&tag_of(&other)));
}
