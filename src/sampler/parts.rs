//! What the samples mean: a thread's exact bytecode and native time split into the five parts of
//! the JNI boundary in proportion to its samples on each side, with a 95 % interval per part.
//!
//! Each side is split on its own: the bytecode side into Java code, JVM for Java and the agent;
//! the native side into native code, JVM for native code and the agent. So the parts of a thread
//! add up exactly to its `bytecode_ns + native_ns`, and the headline split (IPA's) is unchanged:
//! bytecode = Java code + JVM for Java (+ the agent's share), native = native code + JVM for
//! native code (+ the agent's share).

use super::BoundarySamples;

/// How the parts are estimated, as the report states it.
pub(crate) const METHOD: &str = "exact bytecode and native time per thread (IPA), each side split by a per-thread CPU-time sampler (perf task-clock, or timer_create(CLOCK_THREAD_CPUTIME_ID) at most once per scheduler tick) classifying the interrupted PC: Java code (interpreter, compiled code), the JVM (libjvm, VM stubs), the agent, inside a JNI function, other code; error: 95 % Wilson interval per thread and side, combined over threads in quadrature";

/// Two-sided 95 % normal quantile.
pub(crate) const Z95: f64 = 1.959_964;

/// The five parts, in ns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Parts {
    /// Bytecode, interpreted or compiled (PC in the code cache on the bytecode side).
    pub(crate) java_code_ns: u64,
    /// The VM's work on the Java side: the upcall machinery, allocation, the VM runtime.
    pub(crate) jvm_in_java_ns: u64,
    /// The program's C and C++ and the libraries they call.
    pub(crate) native_code_ns: u64,
    /// The JNI functions native code calls (and libjvm code run for it).
    pub(crate) jvm_in_native_ns: u64,
    /// The agent's own code in the program's threads (wrappers, trampolines, hooks).
    pub(crate) agent_in_thread_ns: u64,
}

impl Parts {
    #[cfg(test)]
    pub(crate) fn sum(&self) -> u64 {
        self.java_code_ns
            + self.jvm_in_java_ns
            + self.native_code_ns
            + self.jvm_in_native_ns
            + self.agent_in_thread_ns
    }

    fn as_array(&self) -> [u64; 5] {
        [
            self.java_code_ns,
            self.jvm_in_java_ns,
            self.native_code_ns,
            self.jvm_in_native_ns,
            self.agent_in_thread_ns,
        ]
    }

    fn from_array(a: [u64; 5]) -> Parts {
        Parts {
            java_code_ns: a[0],
            jvm_in_java_ns: a[1],
            native_code_ns: a[2],
            jvm_in_native_ns: a[3],
            agent_in_thread_ns: a[4],
        }
    }
}

/// The boundary figures of one thread, or of any sum of threads: the `boundary` JSON object.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Boundary {
    #[serde(flatten)]
    pub(crate) parts: Parts,
    /// Samples taken (both sides).
    pub(crate) samples: u64,
    /// Time of a side that got no sample at all (a short thread): given to Java code or native
    /// code as IPA reads it, and counted whole in that part's error.
    pub(crate) unsampled_ns: u64,
    /// Half-width of each part's 95 % interval, in ns.
    pub(crate) error95_ns: Parts,
    /// How the parts were estimated (top level only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) method: Option<String>,
}

/// Half-width of the 95 % Wilson score interval of a proportion `k / n`.
pub(crate) fn wilson_half_width(k: u64, n: u64) -> f64 {
    if n == 0 {
        return 1.0;
    }
    let (k, n) = (k as f64, n as f64);
    let q = k / n;
    let z2 = Z95 * Z95;
    Z95 / (1.0 + z2 / n) * (q * (1.0 - q) / n + z2 / (4.0 * n * n)).sqrt()
}

/// One side's exact `ns` split by its three sample counts: the parts and each part's variance
/// (from the 95 % half-width). With no sample, everything goes to `fallback` with full error.
fn split_side(ns: u64, samples: [u64; 3], fallback: usize) -> ([u64; 3], [f64; 3], u64) {
    let n: u64 = samples.iter().sum();
    if n == 0 {
        let mut parts = [0; 3];
        parts[fallback] = ns;
        let mut variance = [0.0; 3];
        variance[fallback] = (ns as f64 / Z95).powi(2);
        return (parts, variance, ns);
    }
    let split = crate::process::split_exactly(ns, &samples);
    let parts = [split[0], split[1], split[2]];
    let variance = samples.map(|k| (ns as f64 * wilson_half_width(k, n) / Z95).powi(2));
    (parts, variance, 0)
}

impl Boundary {
    /// A thread's boundary from its exact side times and its samples.
    pub(crate) fn of_thread(
        bytecode_ns: u64,
        native_ns: u64,
        samples: &BoundarySamples,
    ) -> Boundary {
        let (java, java_var, java_unsampled) = split_side(bytecode_ns, samples.bytecode_side(), 0);
        let (native, native_var, native_unsampled) =
            split_side(native_ns, samples.native_side(), 0);
        let parts =
            Parts::from_array([java[0], java[1], native[0], native[1], java[2] + native[2]]);
        let variance = [
            java_var[0],
            java_var[1],
            native_var[0],
            native_var[1],
            java_var[2] + native_var[2],
        ];
        Boundary {
            parts,
            samples: samples.total(),
            unsampled_ns: java_unsampled + native_unsampled,
            error95_ns: Parts::from_array(variance.map(|v| (v.sqrt() * Z95).round() as u64)),
            method: None,
        }
    }

    /// The sum of several threads' boundaries: parts and samples add, errors add in quadrature.
    pub(crate) fn sum<'a>(rows: impl IntoIterator<Item = &'a Boundary>) -> Boundary {
        let mut parts = [0u64; 5];
        let mut variance = [0f64; 5];
        let mut samples = 0;
        let mut unsampled = 0;
        for row in rows {
            for (i, (p, e)) in row
                .parts
                .as_array()
                .into_iter()
                .zip(row.error95_ns.as_array())
                .enumerate()
            {
                parts[i] += p;
                variance[i] += (e as f64 / Z95).powi(2);
            }
            samples += row.samples;
            unsampled += row.unsampled_ns;
        }
        Boundary {
            parts: Parts::from_array(parts),
            samples,
            unsampled_ns: unsampled,
            error95_ns: Parts::from_array(variance.map(|v| (v.sqrt() * Z95).round() as u64)),
            method: None,
        }
    }
}

/// Estimated time inside one JNI function on one thread: the thread's native time in proportion
/// to the native-side samples inside it.
pub(crate) fn share_of_native(native_ns: u64, inside: u64, samples: &BoundarySamples) -> u64 {
    let n: u64 = samples.native_side().iter().sum();
    if n == 0 {
        return 0;
    }
    (native_ns as u128 * inside as u128 / n as u128) as u64
}

/// Half-width of the 95 % interval of a time estimated from `k` samples (Poisson), in ns.
pub(crate) fn count_error95(estimate_ns: u64, k: u64) -> u64 {
    (estimate_ns as f64 * Z95 / (k.max(1) as f64).sqrt()).round() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_add_up_exactly_and_follow_the_samples() {
        let samples = BoundarySamples {
            java_code: 30,
            jvm_in_java: 10,
            agent_in_java: 0,
            native_code: 25,
            jvm_in_native: 50,
            agent_in_native: 25,
        };
        let b = Boundary::of_thread(1_000_000_007, 2_000_000_003, &samples);
        assert_eq!(b.parts.sum(), 3_000_000_010);
        assert_eq!(b.parts.java_code_ns, 750_000_005);
        assert_eq!(b.parts.jvm_in_native_ns, 1_000_000_001);
        assert_eq!(b.samples, 140);
        assert!(b.error95_ns.java_code_ns > 0);
        let twice = Boundary::sum([&b, &b]);
        assert_eq!(twice.parts.sum(), 2 * b.parts.sum());
        let ratio = twice.error95_ns.java_code_ns as f64 / b.error95_ns.java_code_ns as f64;
        assert!((ratio - 2f64.sqrt()).abs() < 0.01, "{ratio}");
    }

    #[test]
    fn a_side_without_samples_keeps_ipa_s_reading_with_its_whole_time_as_error() {
        let b = Boundary::of_thread(5_000, 0, &BoundarySamples::default());
        assert_eq!(b.parts.java_code_ns, 5_000);
        assert_eq!(b.unsampled_ns, 5_000);
        assert_eq!(b.error95_ns.java_code_ns, 5_000);
    }

    #[test]
    fn the_wilson_interval_is_not_zero_at_the_edges() {
        assert!(wilson_half_width(0, 100) > 0.015);
        assert!((wilson_half_width(50, 100) - 0.096).abs() < 0.002);
    }
}
