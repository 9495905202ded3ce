//! The time-stamp counter: reading it, deciding whether it is usable, calibrating it once, and the
//! plain `tsc` clock (wall time per thread: wrong for natives that block, by design).

use super::perf::{EventKind, PerfEvent};
use once_cell::sync::OnceCell;

/// Read the TSC. Only called where [`available`] is true.
#[inline(always)]
pub(crate) fn rdtsc() -> u64 {
    crate::arch::read_counter()
}

/// Whether this build can read a TSC at all.
pub(crate) const fn available() -> bool {
    crate::arch::counter_available()
}

/// Fixed-point ticks→ns conversion: `ns = ticks * mult >> 32`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TscScale {
    mult: u64,
}

impl TscScale {
    /// Where `mult` sits (an assembly copy of [`ticks_to_ns`](Self::ticks_to_ns) reads it).
    pub(crate) const MULT_OFFSET: usize = std::mem::offset_of!(TscScale, mult);

    pub(crate) fn from_hz(hz: u64) -> TscScale {
        let hz = hz.max(1) as u128;
        // Rounded to nearest; relative error ≤ 2^-32 · hz / 1e9.
        let mult = ((1_000_000_000u128 << 32) + hz / 2) / hz;
        TscScale {
            mult: u64::try_from(mult).unwrap_or(u64::MAX),
        }
    }

    #[inline(always)]
    pub(crate) fn ticks_to_ns(self, ticks: u64) -> u64 {
        ((ticks as u128 * self.mult as u128) >> 32) as u64
    }

    /// Ticks in `ns` nanoseconds (the inverse of [`ticks_to_ns`](Self::ticks_to_ns), saturating).
    pub(crate) fn ns_to_ticks(self, ns: u64) -> u64 {
        u64::try_from(((ns as u128) << 32) / self.mult.max(1) as u128).unwrap_or(u64::MAX)
    }
}

/// The once-per-process TSC calibration.
#[derive(Clone, Debug)]
pub struct Calibration {
    /// The TSC frequency.
    pub hz: u64,
    /// Where `hz` came from, for the report.
    pub(crate) source: String,
}

impl Calibration {
    pub(crate) fn scale(&self) -> TscScale {
        TscScale::from_hz(self.hz)
    }
}

/// Calibrate the TSC once per process (2 or 20 ms the first time, see `calibrate`). `None` without a TSC.
pub(crate) fn calibration() -> Option<&'static Calibration> {
    static CALIBRATION: OnceCell<Option<Calibration>> = OnceCell::new();
    CALIBRATION.get_or_init(calibrate).as_ref()
}

/// Whether the TSC ticks at a constant rate through frequency changes and idle states, so that TSC
/// deltas measure time. `Ok(evidence)` or `Err(why not)`.
pub(crate) fn invariant() -> Result<&'static str, &'static str> {
    static INVARIANT: OnceCell<Result<&'static str, &'static str>> = OnceCell::new();
    *INVARIANT.get_or_init(|| {
        if !available() {
            return Err("no TSC on this architecture");
        }
        if let Some(evidence) = crate::arch::counter_constant_rate() {
            return Ok(evidence);
        }
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let Some(flags) = cpuinfo_flags(&cpuinfo) else {
            return Err("no flags line in /proc/cpuinfo");
        };
        let has = |flag: &str| flags.split_whitespace().any(|f| f == flag);
        match (has("constant_tsc"), has("nonstop_tsc")) {
            (true, true) => Ok("constant_tsc and nonstop_tsc in /proc/cpuinfo"),
            (false, true) => Err("TSC not invariant: constant_tsc missing from /proc/cpuinfo"),
            (true, false) => Err("TSC not invariant: nonstop_tsc missing from /proc/cpuinfo"),
            (false, false) => {
                Err("TSC not invariant: constant_tsc and nonstop_tsc missing from /proc/cpuinfo")
            }
        }
    })
}

fn cpuinfo_flags(cpuinfo: &str) -> Option<&str> {
    cpuinfo
        .lines()
        .find(|line| line.starts_with("flags"))
        .and_then(|line| line.split_once(':'))
        .map(|(_, flags)| flags)
}

fn monotonic_raw_ns() -> u64 {
    super::read_clock(libc::CLOCK_MONOTONIC_RAW).unwrap_or(0)
}

/// One (TSC, CLOCK_MONOTONIC_RAW) pair: the TSC midpoint of the tightest of several brackets, so a
/// preemption in the middle of one attempt does not skew it. Returns (tsc, ns, bracket ticks).
fn paired_sample() -> (u64, u64, u64) {
    let mut best = (0, 0, u64::MAX);
    for _ in 0..16 {
        let before = rdtsc();
        let ns = monotonic_raw_ns();
        let after = rdtsc();
        let bracket = after.wrapping_sub(before);
        if bracket < best.2 {
            best = (before + bracket / 2, ns, bracket);
        }
    }
    best
}

/// TSC frequency measured against CLOCK_MONOTONIC_RAW over `duration`, with its relative uncertainty.
pub fn measure_hz(duration: std::time::Duration) -> (u64, f64) {
    let (tsc0, ns0, bracket0) = paired_sample();
    std::thread::sleep(duration);
    let (tsc1, ns1, bracket1) = paired_sample();
    let ticks = tsc1.wrapping_sub(tsc0) as f64;
    let ns = ns1.saturating_sub(ns0).max(1) as f64;
    let hz = ticks * 1e9 / ns;
    let uncertainty = (bracket0 + bracket1) as f64 / ticks.max(1.0);
    (hz.round() as u64, uncertainty)
}

/// Frequencies the kernel or hypervisor states, best first, with their source.
fn stated_frequencies() -> Vec<(u64, String)> {
    let mut stated = Vec::new();
    // The kernel's own ticks→ns conversion, published on perf mmap pages when cap_user_time is set.
    if let Ok(mut event) = PerfEvent::open_current_thread(EventKind::SwTaskClock, true) {
        if let Some(hz) = event
            .page()
            .and_then(|page| page.snapshot())
            .and_then(|snapshot| snapshot.kernel_tsc_hz())
        {
            stated.push((hz, "kernel perf time_mult/time_shift".to_string()));
        }
        event.close();
    }
    stated.extend(cpuid_frequencies());
    // /proc/cpuinfo's "cpu MHz" is the kernel's TSC rate when the kernel was told the rate
    // (tsc_known_freq) and has no APERF/MPERF to report a live core clock instead.
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let flags = cpuinfo_flags(&cpuinfo).unwrap_or("");
    let has = |flag: &str| flags.split_whitespace().any(|f| f == flag);
    if has("tsc_known_freq") && !has("aperfmperf") {
        let mhz = cpuinfo
            .lines()
            .find(|line| line.starts_with("cpu MHz"))
            .and_then(|line| line.split_once(':'))
            .and_then(|(_, value)| value.trim().parse::<f64>().ok());
        if let Some(mhz) = mhz.filter(|mhz| *mhz > 0.0) {
            stated.push((
                (mhz * 1e6).round() as u64,
                "kernel-known (/proc/cpuinfo cpu MHz with tsc_known_freq)".to_string(),
            ));
        }
    }
    stated
}

fn cpuid_frequencies() -> Vec<(u64, String)> {
    crate::arch::stated_counter_frequencies()
}

/// A stated frequency is used when a short measurement agrees with it; otherwise the measurement is.
const AGREEMENT: f64 = 0.001;

/// How long the measurement that checks a stated frequency runs: its uncertainty (two ~100 ns
/// brackets over 2 ms, about 1e-4) is well inside [`AGREEMENT`], and every JVM start waits for it.
const CHECK: std::time::Duration = std::time::Duration::from_millis(2);

/// How long the measurement runs when no stated frequency agrees with the check, and it is used.
const MEASURE: std::time::Duration = std::time::Duration::from_millis(20);

/// The first stated frequency within [`AGREEMENT`] (or twice the uncertainty) of `measured`, with
/// the deviation.
fn agreeing(stated: &[(u64, String)], measured: u64, uncertainty: f64) -> Option<(u64, &str, f64)> {
    stated.iter().find_map(|(hz, source)| {
        let deviation = (*hz as f64 - measured as f64).abs() / measured as f64;
        (deviation <= AGREEMENT.max(2.0 * uncertainty)).then_some((*hz, source.as_str(), deviation))
    })
}

/// A stated frequency that `measurement` (hz, uncertainty), taken over `duration`, confirms.
fn confirmed(
    stated: &[(u64, String)],
    (measured, uncertainty): (u64, f64),
    duration: std::time::Duration,
) -> Option<Calibration> {
    let (hz, source, deviation) = agreeing(stated, measured, uncertainty)?;
    Some(Calibration {
        hz,
        source: format!(
            "{source}; a {} ms measurement agrees within {:.4}%",
            duration.as_millis(),
            deviation * 100.0
        ),
    })
}

/// The (TSC, CLOCK_MONOTONIC_RAW) pair taken when a stated frequency was used without a measurement
/// at start; [`check_over_run`] takes the second pair at exit.
static RUN_START: OnceCell<(u64, u64, u64)> = OnceCell::new();

fn deviation(hz: u64, reference: u64) -> f64 {
    (hz as f64 - reference as f64).abs() / reference.max(1) as f64
}

fn calibrate() -> Option<Calibration> {
    if !available() {
        return None;
    }
    let stated = stated_frequencies();
    if let Some((hz, source)) = stated.first() {
        // Stated sources that agree with each other are used at once (no sleep at start-up); the
        // rate is measured over the whole run at exit instead (`check_over_run`).
        if stated
            .iter()
            .all(|(other, _)| deviation(*other, *hz) <= AGREEMENT)
        {
            let _ = RUN_START.set(paired_sample());
            let agreeing = if stated.len() > 1 {
                format!(" (all {} stated sources agree)", stated.len())
            } else {
                String::new()
            };
            return Some(Calibration {
                hz: *hz,
                source: format!(
                    "{source}{agreeing}; checked against CLOCK_MONOTONIC_RAW over the run, at exit"
                ),
            });
        }
        if let Some(calibration) = confirmed(&stated, measure_hz(CHECK), CHECK) {
            return Some(calibration);
        }
    }
    let (measured, uncertainty) = measure_hz(MEASURE);
    if measured == 0 {
        return None;
    }
    confirmed(&stated, (measured, uncertainty), MEASURE).or(Some(Calibration {
        hz: measured,
        source: format!(
            "measured over {} ms against CLOCK_MONOTONIC_RAW (±{:.4}%), no stated frequency agreed",
            MEASURE.as_millis(),
            uncertainty * 100.0
        ),
    }))
}

/// The TSC rate measured over the run so far, when a stated rate was used without a measurement at
/// start: `(measured hz, relative deviation from the rate used, seconds measured over)`.
pub(crate) fn check_over_run() -> Option<(u64, f64, f64)> {
    let (tsc0, ns0, bracket0) = *RUN_START.get()?;
    let used = calibration()?.hz;
    let (tsc1, ns1, bracket1) = paired_sample();
    let ns = ns1.saturating_sub(ns0);
    let ticks = tsc1.wrapping_sub(tsc0);
    if ns < 1_000_000 || ticks == 0 {
        return None;
    }
    let measured = (ticks as f64 * 1e9 / ns as f64).round() as u64;
    let uncertainty = (bracket0 + bracket1) as f64 / ticks as f64;
    let off = (deviation(measured, used) - uncertainty).max(0.0);
    Some((measured, off, ns as f64 / 1e9))
}

/// The smallest step the counter was seen to move by, in ticks: its effective resolution. One tick
/// on hardware whose counter is slow next to a read; more where the counter is updated in coarser
/// steps (qemu-user 7.2 moves CNTVCT_EL0 by 62–63 ticks, i.e. in 1 µs steps) or a read costs more
/// than a tick. A few short spins (bounded, microseconds) the first time; 0 without a counter or if
/// it never moved.
pub(crate) fn observed_step_ticks() -> u64 {
    static STEP: OnceCell<u64> = OnceCell::new();
    *STEP.get_or_init(measure_step_ticks)
}

fn measure_step_ticks() -> u64 {
    if !available() {
        return 0;
    }
    // The next value the counter takes after `from`, or None if it did not move within the bound.
    let next_after = |from: u64| (0..1_000_000).map(|_| rdtsc()).find(|&now| now != from);
    let mut smallest = u64::MAX;
    // Many tries, the smallest kept: a try the thread was stalled in (preempted, or stopped by
    // an emulator's exclusive section) reads a longer step.
    for _ in 0..50 {
        let Some(first) = next_after(rdtsc()) else {
            return 0;
        };
        let Some(second) = next_after(first) else {
            return 0;
        };
        smallest = smallest.min(second.wrapping_sub(first));
    }
    smallest
}

/// `tsc`: wall-clock nanoseconds since the clock was opened.
#[derive(Debug)]
pub(crate) struct TscClock {
    origin: u64,
    scale: TscScale,
}

impl TscClock {
    pub(crate) fn open(scale: TscScale) -> TscClock {
        TscClock {
            origin: rdtsc(),
            scale,
        }
    }

    #[inline(always)]
    pub(crate) fn read(&self) -> u64 {
        self.scale.ticks_to_ns(rdtsc().wrapping_sub(self.origin))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scale_round_trips() {
        let scale = TscScale::from_hz(2_000_000_000);
        assert_eq!(scale.ticks_to_ns(2_000_000_000), 1_000_000_000);
        let odd = TscScale::from_hz(2_893_437_000);
        let ns = odd.ticks_to_ns(2_893_437_000 * 3600);
        assert!((ns as i64 - 3_600_000_000_000i64).abs() < 1_000, "{ns}");
        // No overflow for a year of ticks at 5 GHz, and the fixed-point error stays below 1e-8.
        let fast = TscScale::from_hz(5_000_000_000);
        let year_ns = 365 * 24 * 3600 * 1_000_000_000u64;
        let ns = fast.ticks_to_ns(year_ns * 5);
        assert!(
            ns.abs_diff(year_ns) as f64 / (year_ns as f64) < 1e-8,
            "{ns}"
        );
    }

    #[test]
    fn scale_inverts() {
        let scale = TscScale::from_hz(2_893_437_000);
        let ticks = scale.ns_to_ticks(1_000_000);
        assert!(scale.ticks_to_ns(ticks).abs_diff(1_000_000) <= 1);
        assert_eq!(scale.ns_to_ticks(u64::MAX), u64::MAX);
    }

    #[test]
    fn a_stated_frequency_is_used_only_when_the_measurement_agrees() {
        let stated = vec![
            (2_020_000_000, "one percent off".to_string()),
            (2_000_500_000, "within the agreement".to_string()),
        ];
        let (hz, source, _) = agreeing(&stated, 2_000_000_000, 1e-5).expect("one agrees");
        assert_eq!((hz, source), (2_000_500_000, "within the agreement"));
        assert!(agreeing(&stated[..1], 2_000_000_000, 1e-5).is_none());
        // A rough measurement widens the window to twice its uncertainty.
        assert!(agreeing(&stated[..1], 2_000_000_000, 0.006).is_some());
    }

    #[test]
    fn cpuinfo_flag_parsing() {
        let text = "processor\t: 0\nflags\t\t: fpu tsc constant_tsc nonstop_tsc\n";
        assert_eq!(
            cpuinfo_flags(text).map(str::trim),
            Some("fpu tsc constant_tsc nonstop_tsc")
        );
        assert_eq!(cpuinfo_flags("processor: 0\n"), None);
    }
}
