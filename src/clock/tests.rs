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
fn hybrid_fields_point_into_the_tsc_hybrid_clock() {
    let choice = ClockChoice {
        kind: ClockKind::TscHybrid,
        reason: String::new(),
        tsc_hz: Some(2_000_000_000),
    };
    let mut clock = ThreadClock::open(&choice);
    clock.read();
    let Imp::TscHybrid(inner) = &clock.imp else {
        // No TSC on this machine: the clock degraded, and the assembly never runs.
        return;
    };
    let from = &clock as *const ThreadClock as usize;
    let payload = inner as *const TscHybridClock as usize - from;
    let own = TscHybridClock::FAST_PATH;
    for (whole, part) in [
        (HYBRID_FIELDS.page, own.page),
        (HYBRID_FIELDS.base_seq, own.base_seq),
        (HYBRID_FIELDS.base_tsc, own.base_tsc),
        (HYBRID_FIELDS.base_ns, own.base_ns),
        (HYBRID_FIELDS.resample_ticks, own.resample_ticks),
        (HYBRID_FIELDS.mult, own.mult),
    ] {
        assert_eq!(whole, payload + part);
    }
    // SAFETY: the tag byte lies inside `clock`, which nothing writes meanwhile.
    let tag = unsafe { (from as *const u8).add(HYBRID_FIELDS.tag).read() };
    assert_eq!(tag, HYBRID_FIELDS.tag_value);
    let other = ThreadClock::open(&ClockChoice {
        kind: ClockKind::ThreadCputime,
        reason: String::new(),
        tsc_hz: None,
    });
    // SAFETY: as above, for `other`.
    let tag = unsafe {
        (&other as *const ThreadClock as *const u8)
            .add(HYBRID_FIELDS.tag)
            .read()
    };
    assert_ne!(tag, HYBRID_FIELDS.tag_value);
}
