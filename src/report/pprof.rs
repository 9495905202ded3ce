//! pprof output (`format=pprof`): a gzipped `profile.proto`, read by `go tool pprof`, Pyroscope,
//! Grafana and Polar Signals. The protobuf encoding is written here (a few message types).
//!
//! Sample types (every sample has all four; `native_self` is the default):
//! - `native_self` (nanoseconds): native self time by Java call chain, one sample per collapsed stack
//!   (the chains of `stacks=`; without it, the method alone). Its total is the sum of the methods'
//!   self time, `native_methods[].self_ns` in the JSON.
//! - `calls` (count): native-method calls, one sample per method, located at the method alone (the
//!   chain of each call is not kept). Its total is the sum of `native_methods[].calls`.
//! - `cpu` (nanoseconds): each Java thread's CPU time in bytecode and in native code, located at
//!   `[Java bytecode]` or `[native code]` under `[thread NAME]`. Its total is `bytecode_ns +
//!   native_ns`.
//! - `boundary` (nanoseconds): each Java thread's CPU time in the JNI boundary's five parts, located
//!   at `[Java code]`, `[JVM for Java]`, `[native code]`, `[JVM for native]` or `[agent]` under
//!   `[thread NAME]` (the folded threads under `[N other threads]`), so `-top` lists the parts and
//!   `-traces`/`-peek` the threads. Its total is the JSON's `boundary`, part by part. The 95 %
//!   intervals and the method are in the profile's comments (`-comments`).
//!
//! Labels: `side` (`native` or `bytecode`; `both` for the agent's part) on every sample, `thread` on the `cpu` and `boundary`
//! samples (the per-method numbers are not kept per thread), and on the `boundary` samples `part`
//! (the JSON key) and `sampler` (`native` or `java`: what a sampling profiler would call the part,
//! so `-tagfocus=sampler=native` gives a sampler's "native").

use super::{boundary_values, Report};
use crate::sampler::Boundary;
use std::collections::HashMap;
use std::io::Write;

/// The one mapping: the JVM, with function names and no addresses.
const MAPPING_ID: u64 = 1;

/// Protobuf wire types.
const VARINT: u64 = 0;
const LEN: u64 = 2;

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn key(out: &mut Vec<u8>, field: u64, wire: u64) {
    varint(out, (field << 3) | wire);
}

/// A varint field (left out when 0, as proto3 does).
fn uint(out: &mut Vec<u8>, field: u64, v: u64) {
    if v != 0 {
        key(out, field, VARINT);
        varint(out, v);
    }
}

fn bytes(out: &mut Vec<u8>, field: u64, data: &[u8]) {
    key(out, field, LEN);
    varint(out, data.len() as u64);
    out.extend_from_slice(data);
}

fn packed(out: &mut Vec<u8>, field: u64, values: &[u64]) {
    let mut body = Vec::new();
    for &v in values {
        varint(&mut body, v);
    }
    bytes(out, field, &body);
}

/// The parts of a profile being built: strings, functions and locations deduplicated by name.
#[derive(Default)]
struct Builder {
    strings: Vec<String>,
    string_ids: HashMap<String, u64>,
    /// One function and one location per frame name, with the same id.
    frame_ids: HashMap<String, u64>,
    functions: Vec<u8>,
    locations: Vec<u8>,
    samples: Vec<u8>,
}

struct Label<'a> {
    key: &'a str,
    value: &'a str,
}

impl Builder {
    fn new() -> Builder {
        let mut b = Builder::default();
        b.string(""); // string_table[0] must be empty
        b
    }

    fn string(&mut self, s: &str) -> u64 {
        if let Some(&id) = self.string_ids.get(s) {
            return id;
        }
        let id = self.strings.len() as u64;
        self.strings.push(s.to_string());
        self.string_ids.insert(s.to_string(), id);
        id
    }

    fn frame(&mut self, name: &str) -> u64 {
        if let Some(&id) = self.frame_ids.get(name) {
            return id;
        }
        let id = self.frame_ids.len() as u64 + 1;
        self.frame_ids.insert(name.to_string(), id);
        let name_id = self.string(name);
        let mut function = Vec::new();
        uint(&mut function, 1, id);
        uint(&mut function, 2, name_id);
        uint(&mut function, 3, name_id);
        bytes(&mut self.functions, 5, &function);
        let mut line = Vec::new();
        uint(&mut line, 1, id);
        let mut location = Vec::new();
        uint(&mut location, 1, id);
        uint(&mut location, 2, MAPPING_ID);
        bytes(&mut location, 4, &line);
        bytes(&mut self.locations, 4, &location);
        id
    }

    /// A sample at `frames` (outermost first) with `values` (one per sample type).
    fn sample(&mut self, frames: &[&str], values: [u64; 4], labels: &[Label]) {
        let ids: Vec<u64> = frames.iter().rev().map(|f| self.frame(f)).collect();
        let mut sample = Vec::new();
        packed(&mut sample, 1, &ids);
        packed(&mut sample, 2, &values);
        for label in labels {
            let mut l = Vec::new();
            uint(&mut l, 1, self.string(label.key));
            uint(&mut l, 2, self.string(label.value));
            bytes(&mut sample, 3, &l);
        }
        bytes(&mut self.samples, 2, &sample);
    }

    fn value_type(&mut self, kind: &str, unit: &str) -> Vec<u8> {
        let mut v = Vec::new();
        uint(&mut v, 1, self.string(kind));
        uint(&mut v, 2, self.string(unit));
        v
    }
}

/// The profile, uncompressed.
fn profile(r: &Report) -> Vec<u8> {
    let mut b = Builder::new();
    let native = [Label {
        key: "side",
        value: "native",
    }];
    for (stack, ns) in &r.collapsed {
        let frames: Vec<&str> = stack.split(';').collect();
        b.sample(&frames, [*ns, 0, 0, 0], &native);
    }
    for m in r.native_methods.iter().filter(|m| m.calls > 0) {
        b.sample(&[&m.frame_name()], [0, m.calls, 0, 0], &native);
    }
    for t in &r.per_thread {
        let thread = format!("[thread {}]", t.name);
        for (side, frame, ns) in [
            ("bytecode", "[Java bytecode]", t.counts.bytecode_ns),
            ("native", "[native code]", t.counts.native_ns),
        ] {
            if ns > 0 {
                let labels = [
                    Label {
                        key: "side",
                        value: side,
                    },
                    Label {
                        key: "thread",
                        value: &t.name,
                    },
                ];
                b.sample(&[&thread, frame], [0, 0, ns, 0], &labels);
            }
        }
    }
    let mut threads: Vec<(String, &Boundary)> = r
        .per_thread
        .iter()
        .map(|t| (t.name.clone(), &t.boundary))
        .collect();
    if let Some(o) = &r.other_threads {
        threads.push((format!("{} other threads", o.threads), &o.boundary));
    }
    for (name, boundary) in threads {
        let thread = format!("[thread {name}]");
        for (part, ns, _) in boundary_values(boundary) {
            if ns == 0 {
                continue;
            }
            // The agent's part is on both sides (IPA's bytecode and native).
            let side = match part.key {
                "java_code" | "jvm_in_java" => "bytecode",
                "agent_in_thread" => "both",
                _ => "native",
            };
            let frame = format!("[{}]", part.label);
            let labels = [
                Label {
                    key: "side",
                    value: side,
                },
                Label {
                    key: "thread",
                    value: &name,
                },
                Label {
                    key: "part",
                    value: part.key,
                },
                Label {
                    key: "sampler",
                    value: if part.sampler_native {
                        "native"
                    } else {
                        "java"
                    },
                },
            ];
            b.sample(&[&thread, &frame], [0, 0, 0, ns], &labels);
        }
    }
    let types = [
        b.value_type("native_self", "nanoseconds"),
        b.value_type("calls", "count"),
        b.value_type("cpu", "nanoseconds"),
        b.value_type("boundary", "nanoseconds"),
    ];
    let period_type = b.value_type("native_self", "nanoseconds");
    let comment = b.string(&format!(
        "nativeacct {} ({} mode, j2n {}, clock {}, JDK {})",
        r.version, r.run.mode, r.run.j2n, r.run.clock, r.run.jdk_version
    ));
    let mut comments = vec![comment];
    for (part, ns, err) in boundary_values(&r.boundary) {
        comments.push(b.string(&format!("boundary {}_ns {ns} ±{err} (95 %)", part.key)));
    }
    comments.push(b.string(&format!(
        "boundary samples {}, unsampled_ns {}",
        r.boundary.samples, r.boundary.unsampled_ns
    )));
    if let Some(method) = &r.boundary.method {
        comments.push(b.string(&format!("boundary method: {method}")));
    }
    let default_type = b.string("native_self");
    let mut mapping = Vec::new();
    uint(&mut mapping, 1, MAPPING_ID);
    uint(&mut mapping, 5, b.string("java"));
    uint(&mut mapping, 7, 1); // has_functions
    let mut out = Vec::new();
    for t in &types {
        bytes(&mut out, 1, t);
    }
    out.extend_from_slice(&b.samples);
    bytes(&mut out, 3, &mapping);
    out.extend_from_slice(&b.locations);
    out.extend_from_slice(&b.functions);
    for s in &b.strings {
        bytes(&mut out, 6, s.as_bytes());
    }
    uint(&mut out, 10, r.run.wall_ns);
    bytes(&mut out, 11, &period_type);
    uint(&mut out, 12, 1);
    for c in comments {
        uint(&mut out, 13, c);
    }
    uint(&mut out, 14, default_type);
    out
}

/// The gzipped profile.
pub(crate) fn render(r: &Report) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    // Writing into a Vec cannot fail.
    let _ = gz.write_all(&profile(r));
    gz.finish().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_and_fields_encode_as_protobuf_does() {
        let mut out = Vec::new();
        varint(&mut out, 300);
        assert_eq!(out, [0xac, 0x02]);
        let mut out = Vec::new();
        uint(&mut out, 1, 150);
        assert_eq!(out, [0x08, 0x96, 0x01]);
        let mut out = Vec::new();
        packed(&mut out, 4, &[3, 270]);
        assert_eq!(out, [0x22, 0x03, 0x03, 0x8e, 0x02]);
        let mut b = Builder::new();
        assert_eq!(b.frame("a"), 1);
        assert_eq!(b.frame("b"), 2);
        assert_eq!(b.frame("a"), 1);
        assert_eq!(b.strings, ["", "a", "b"]);
    }
}
