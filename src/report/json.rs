//! JSON output: the whole [`Report`], keys as documented in the README, and the way back: a saved
//! JSON read into the same [`Report`], which every other format renders (`nativeacct report`).
//!
//! The JSON carries everything the formats need: the collapsed stacks (`collapsed_stacks`), the rows
//! of ranked tables (`top`) and the latency histograms (`histograms`, HdrHistogram V2 in
//! base64, the encoding HdrHistogram's own tools read), so a report made from it equals the one the
//! agent wrote at VM death byte for byte.

use super::Report;

pub(crate) fn render(report: &Report) -> Vec<u8> {
    let mut out = serde_json::to_vec_pretty(report)
        .unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}").into_bytes());
    out.push(b'\n');
    out
}

/// A report saved by [`render`], read back.
pub fn read(json: &[u8]) -> Result<Report, String> {
    let report: Report = serde_json::from_slice(json).map_err(|e| {
        format!("not a nativeacct JSON report ({e}); reports are written with format=json")
    })?;
    if report.tool != "nativeacct" {
        return Err(format!(
            "written by '{}', not by nativeacct",
            report.tool.escape_debug()
        ));
    }
    Ok(report)
}

/// `Report::histograms` in the JSON: one base64 V2 histogram per key. Uncompressed, because deflate
/// output differs between zlib back ends, and a re-rendered JSON must equal the saved one.
pub(crate) mod saved_histograms {
    use crate::histograms::{Histograms, IdMap};
    use base64::Engine;
    use hdrhistogram::serialization::{Deserializer, Serializer, V2Serializer};
    use hdrhistogram::Histogram;
    use serde::{Deserialize, Serialize};
    use std::collections::BTreeMap;
    use std::sync::Arc;

    const ENCODING: &str = "HdrHistogram V2 (uncompressed), base64; values in ns";

    #[derive(Serialize, Deserialize)]
    struct Saved {
        encoding: String,
        /// Native self time per call, all methods.
        native_self: String,
        /// Java time per JNI upcall, all functions.
        jni_java: String,
        /// Per method, by `native_methods[].id`.
        native_self_by_method: BTreeMap<u32, String>,
        /// Per JNI function, by name.
        jni_java_by_function: BTreeMap<String, String>,
        methods_without_histogram: u64,
    }

    fn encode(h: &Histogram<u64>) -> String {
        let mut bytes = Vec::new();
        // Writing into a Vec fails only for histograms the serializer cannot represent.
        if V2Serializer::new().serialize(h, &mut bytes).is_err() {
            bytes.clear();
        }
        base64::engine::general_purpose::STANDARD.encode(bytes)
    }

    fn decode<E: serde::de::Error>(what: &str, text: &str) -> Result<Histogram<u64>, E> {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(text)
            .map_err(|e| E::custom(format!("histogram {what}: {e}")))?;
        Deserializer::new()
            .deserialize(&mut bytes.as_slice())
            .map_err(|e| E::custom(format!("histogram {what}: {e:?}")))
    }

    pub(crate) fn serialize<S: serde::Serializer>(
        histograms: &Option<Arc<Histograms>>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        let Some(h) = histograms else {
            return serializer.serialize_none();
        };
        let by_function = h
            .upcall_by_function
            .iter()
            .map(|(&id, hist)| {
                let name = jni_wrappers::FUNCTION_NAMES
                    .get(id as usize)
                    .copied()
                    .unwrap_or("?");
                (name.to_string(), encode(hist))
            })
            .collect();
        Saved {
            encoding: ENCODING.to_string(),
            native_self: encode(&h.native_overall),
            jni_java: encode(&h.upcall_overall),
            native_self_by_method: h
                .native_by_method
                .iter()
                .map(|(&id, hist)| (id, encode(hist)))
                .collect(),
            jni_java_by_function: by_function,
            methods_without_histogram: h.methods_without_histogram,
        }
        .serialize(serializer)
    }

    pub(crate) fn deserialize<'de, D: serde::Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<Arc<Histograms>>, D::Error> {
        let Some(saved) = Option::<Saved>::deserialize(deserializer)? else {
            return Ok(None);
        };
        let mut by_method = IdMap::default();
        for (id, text) in &saved.native_self_by_method {
            by_method.insert(*id, decode(&format!("of method {id}"), text)?);
        }
        let mut by_function = IdMap::default();
        for (name, text) in &saved.jni_java_by_function {
            let id = jni_wrappers::FUNCTION_NAMES
                .iter()
                .position(|n| n == name)
                .ok_or_else(|| serde::de::Error::custom(format!("unknown JNI function {name}")))?;
            by_function.insert(id as u32, decode(name, text)?);
        }
        Ok(Some(Arc::new(Histograms::restored(
            decode("native_self", &saved.native_self)?,
            decode("jni_java", &saved.jni_java)?,
            by_method,
            by_function,
            saved.methods_without_histogram,
        ))))
    }
}
