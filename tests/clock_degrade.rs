//! Forced degradation: a clock that cannot be opened falls back, says why, and prints one stderr
//! line per clock and failure class per process. Every test here holds `SERIAL` because they change
//! process-wide state (RLIMIT_NOFILE, fd 2).

use nativeacct::testing::clock::{
    choose, tsc_calibration, ClockChoice, ClockKind, ClockRequest, ThreadClock, MAX_STEP_BACK_NS,
};
use std::io::Read;
use std::os::fd::AsRawFd;
use std::sync::Mutex;

static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Whether this machine has a PMU that exposes CPU cycles to perf (independent check).
fn hardware_cycles_open() -> bool {
    // SAFETY: perf_event_attr is plain old data.
    let mut attr: perf_event_open_sys::bindings::perf_event_attr = unsafe { std::mem::zeroed() };
    attr.type_ = perf_event_open_sys::bindings::PERF_TYPE_HARDWARE;
    attr.config = u64::from(perf_event_open_sys::bindings::PERF_COUNT_HW_CPU_CYCLES);
    attr.size = std::mem::size_of_val(&attr) as u32;
    attr.set_exclude_kernel(1);
    attr.set_exclude_hv(1);
    // SAFETY: valid attr, this thread, any CPU.
    let fd = unsafe { perf_event_open_sys::perf_event_open(&mut attr, 0, -1, -1, 0) };
    if fd >= 0 {
        // SAFETY: our fd.
        unsafe { libc::close(fd) };
    }
    fd >= 0
}

/// Run `body` with fd 2 redirected into a temporary file; returns what was written to it.
fn capture_stderr(body: impl FnOnce()) -> String {
    let mut file = tempfile_in_tmp();
    // SAFETY: dup/dup2 on valid descriptors; fd 2 is restored before returning.
    let saved = unsafe { libc::dup(2) };
    assert!(saved >= 0);
    // SAFETY: both descriptors are open; fd 2 is restored below.
    unsafe { libc::dup2(file.as_raw_fd(), 2) };
    body();
    // SAFETY: as above.
    unsafe {
        libc::dup2(saved, 2);
        libc::close(saved);
    }
    let mut text = String::new();
    std::io::Seek::rewind(&mut file).unwrap();
    file.read_to_string(&mut text).unwrap();
    text
}

fn tempfile_in_tmp() -> std::fs::File {
    let path = std::env::temp_dir().join(format!("nativeacct-clock-stderr-{}", std::process::id()));
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(&path)
        .unwrap();
    std::fs::remove_file(&path).unwrap();
    file
}

/// Run `body` while no new descriptor can be opened (soft RLIMIT_NOFILE = lowest free fd).
fn with_no_free_descriptors<T>(body: impl FnOnce() -> T) -> T {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit/dup with valid arguments; the limit is restored below.
    unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) };
    // SAFETY: fd 0 is open; dup has no other precondition.
    let probe = unsafe { libc::dup(0) };
    assert!(probe >= 0);
    // SAFETY: `probe` was just opened here and is closed once.
    unsafe { libc::close(probe) };
    let tight = libc::rlimit {
        rlim_cur: probe as libc::rlim_t,
        rlim_max: limit.rlim_max,
    };
    // SAFETY: a valid rlimit with the hard limit unchanged.
    unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &tight) };
    let result = body();
    // SAFETY: restores the limit read above.
    unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &limit) };
    result
}

#[test]
fn cycles_request_degrades_or_works() {
    let _guard = serial();
    let choice = choose(ClockRequest::Exactly(ClockKind::Cycles));
    if hardware_cycles_open() {
        assert_eq!(choice.kind, ClockKind::Cycles, "{}", choice.reason);
        let mut clock = ThreadClock::open(&choice);
        let (a, b) = (clock.read(), clock.read());
        assert!(b >= a);
        assert!(clock.read_cycles().is_some());
    } else {
        assert_ne!(choice.kind, ClockKind::Cycles);
        assert!(
            choice
                .reason
                .contains("clock=cycles requested but unavailable"),
            "{}",
            choice.reason
        );
        assert!(
            choice.reason.contains("PERF_COUNT_HW_CPU_CYCLES"),
            "{}",
            choice.reason
        );
        let expected =
            if nativeacct::testing::clock::choose(ClockRequest::Exactly(ClockKind::TscHybrid)).kind
                == ClockKind::TscHybrid
            {
                ClockKind::TscHybrid
            } else {
                // No perf events at all: tsc-gated where the TSC is invariant, else thread-cputime.
                nativeacct::testing::clock::choose(ClockRequest::Exactly(ClockKind::TscGated)).kind
            };
        assert_eq!(choice.kind, expected, "{}", choice.reason);
    }
}

#[test]
fn auto_names_its_clock_and_reason() {
    let _guard = serial();
    let choice = choose(ClockRequest::Auto);
    assert!(choice
        .reason
        .starts_with(&format!("auto picked {}", choice.kind.name())));
    if !hardware_cycles_open() {
        assert_ne!(choice.kind, ClockKind::Cycles);
        assert!(
            choice.reason.contains("cycles unavailable"),
            "{}",
            choice.reason
        );
    }
    if choice.kind == ClockKind::TscHybrid {
        let hz = choice.tsc_hz.expect("TSC frequency shown");
        assert!(choice.describe().contains("MHz"));
        // Independent check of the calibration: our own 50 ms measurement.
        let (measured, _) =
            nativeacct::testing::clock::measure_tsc_hz(std::time::Duration::from_millis(50));
        let deviation = hz.abs_diff(measured) as f64 / measured as f64;
        assert!(
            deviation < 0.002,
            "calibrated {hz} Hz, measured {measured} Hz"
        );
        assert_eq!(Some(hz), tsc_calibration().map(|c| c.hz));
    }
}

#[test]
fn a_thread_that_cannot_open_cycles_falls_back() {
    let _guard = serial();
    if hardware_cycles_open() {
        return; // nothing to force on a machine with a PMU; covered by cycles_request_degrades_or_works
    }
    let forced = ClockChoice {
        kind: ClockKind::Cycles,
        reason: "forced by test".into(),
        tsc_hz: tsc_calibration().map(|c| c.hz),
    };
    let clock = std::thread::spawn(move || {
        let mut clock = ThreadClock::open(&forced);
        let (a, b) = (clock.read(), clock.read());
        // The fallback is tsc-hybrid, which may step back a little at an exact read.
        assert!(b + MAX_STEP_BACK_NS >= a, "{a} then {b}");
        (clock.kind(), clock.fallback_reason().map(str::to_string))
    })
    .join()
    .unwrap();
    assert_ne!(clock.0, ClockKind::Cycles);
    let reason = clock.1.expect("a fallback reason");
    assert!(
        reason.starts_with("cycles: perf_event_open of PERF_COUNT_HW_CPU_CYCLES"),
        "{reason}"
    );
}

#[test]
fn descriptor_exhaustion_degrades_with_one_line() {
    let _guard = serial();
    let hybrid = choose(ClockRequest::Exactly(ClockKind::TscHybrid));
    let task = choose(ClockRequest::Exactly(ClockKind::TaskClock));
    // What an explicit request falls back to without perf events: tsc-gated (no descriptor)
    // where the TSC is invariant.
    let without_perf = choose(ClockRequest::Exactly(ClockKind::TscGated)).kind;
    assert_eq!(hybrid.kind, ClockKind::TscHybrid, "{}", hybrid.reason);
    let mut results = Vec::new();
    let stderr = capture_stderr(|| {
        with_no_free_descriptors(|| {
            for _ in 0..3 {
                for choice in [&hybrid, &task] {
                    let mut clock = ThreadClock::open(choice);
                    // task-clock opens its event at the first read; tsc-hybrid once the thread
                    // has run 1 ms of CPU (without switching often): both fail here and fall back.
                    let spin_start = clock.read();
                    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
                    while clock.read() < spin_start + 1_500_000
                        && std::time::Instant::now() < deadline
                    {}
                    for _ in 0..5 {
                        std::thread::sleep(std::time::Duration::from_micros(200));
                        clock.read();
                    }
                    let advanced = clock.read() >= spin_start + 1_500_000;
                    results.push((
                        clock.kind(),
                        clock.fallback_reason().map(str::to_string),
                        advanced,
                    ));
                    clock.close();
                }
            }
            results.push((
                choose(ClockRequest::Exactly(ClockKind::TaskClock)).kind,
                None,
                true,
            ));
        })
    });
    // tsc-hybrid stays on the gate it started on; task-clock reads CPU time at every read.
    for (i, (kind, reason, advanced)) in results[..6].iter().enumerate() {
        let expected = [ClockKind::TscGated, ClockKind::ThreadCputime][i % 2];
        assert_eq!(*kind, expected);
        let reason = reason.as_deref().expect("fallback reason");
        assert!(reason.contains("EMFILE"), "{reason}");
        assert!(advanced, "the fallback clock must still count");
    }
    assert_eq!(results[6].0, without_perf, "explicit request under EMFILE");
    let lines: Vec<&str> = stderr.lines().collect();
    let count = |needle: &str| lines.iter().filter(|l| l.contains(needle)).count();
    assert_eq!(
        count("clock tsc-hybrid unavailable for a thread"),
        1,
        "{stderr}"
    );
    assert_eq!(
        count("clock task-clock unavailable for a thread"),
        1,
        "{stderr}"
    );
    assert_eq!(count("clock=task-clock unavailable"), 1, "{stderr}");
    assert!(
        lines.iter().all(|l| l.starts_with("nativeacct: ")),
        "{stderr}"
    );
    // Once descriptors are back, the clocks open again.
    let clock = ThreadClock::open(&hybrid);
    assert_eq!(clock.kind(), ClockKind::TscHybrid);
}
