//! Reading (and, for `@IntrinsicCandidate`, removing) method annotations (JVMS 4.7.16).

use crate::parse::{AttrSpan, ClassLayout};
use crate::reader::{PutBe, Reader, Result};
use crate::RewriteError;

pub(crate) const INTRINSIC_CANDIDATE: &[&[u8]] = &[
    b"Ljdk/internal/vm/annotation/IntrinsicCandidate;",
    b"Ljdk/internal/HotSpotIntrinsicCandidate;",
];
pub(crate) const CALLER_SENSITIVE: &[&[u8]] = &[
    b"Ljdk/internal/reflect/CallerSensitive;",
    b"Lsun/reflect/CallerSensitive;",
];

const RUNTIME_VISIBLE: &[u8] = b"RuntimeVisibleAnnotations";
const RUNTIME_INVISIBLE: &[u8] = b"RuntimeInvisibleAnnotations";

/// Deepest nesting of annotation values we follow; real classes use a handful.
const MAX_DEPTH: u32 = 64;

/// One top-level annotation: its type descriptor and byte range inside the class.
pub(crate) struct AnnotationSpan<'a> {
    pub type_name: &'a [u8],
    pub start: usize,
    pub end: usize,
}

pub(crate) fn is_annotations_attribute(layout: &ClassLayout<'_>, attr: &AttrSpan) -> bool {
    matches!(layout.utf8(attr.name_index), Ok(n) if n == RUNTIME_VISIBLE || n == RUNTIME_INVISIBLE)
}

fn skip_element_value(r: &mut Reader<'_>, depth: u32) -> Result<()> {
    if depth > MAX_DEPTH {
        return Err(RewriteError::Malformed(
            "annotation nesting too deep".into(),
        ));
    }
    let tag = r.u8("element value tag")?;
    match tag {
        b'B' | b'C' | b'D' | b'F' | b'I' | b'J' | b'S' | b'Z' | b's' | b'c' => {
            r.skip(2, "element value")?
        }
        b'e' => r.skip(4, "enum value")?,
        b'@' => skip_annotation(r, depth + 1)?,
        b'[' => {
            let n = r.u16("array length")?;
            for _ in 0..n {
                skip_element_value(r, depth + 1)?;
            }
        }
        _ => {
            return Err(RewriteError::Malformed(format!(
                "unknown element value tag {tag}"
            )))
        }
    }
    Ok(())
}

fn skip_annotation(r: &mut Reader<'_>, depth: u32) -> Result<()> {
    r.skip(2, "annotation type")?;
    let pairs = r.u16("annotation pairs")?;
    for _ in 0..pairs {
        r.skip(2, "element name")?;
        skip_element_value(r, depth)?;
    }
    Ok(())
}

/// Lists the annotations of a Runtime(In)VisibleAnnotations attribute.
pub(crate) fn list<'a>(
    layout: &ClassLayout<'a>,
    attr: &AttrSpan,
) -> Result<Vec<AnnotationSpan<'a>>> {
    let bytes = &layout.bytes[..attr.end];
    let mut r = Reader::at(bytes, attr.body);
    let count = r.u16("annotations count")?;
    let mut out = Vec::with_capacity(count as usize);
    for _ in 0..count {
        let start = r.pos();
        let type_index = {
            let mut peek = r;
            peek.u16("annotation type")?
        };
        skip_annotation(&mut r, 0)?;
        out.push(AnnotationSpan {
            type_name: layout.utf8(type_index)?,
            start,
            end: r.pos(),
        });
    }
    if r.pos() != attr.end {
        return Err(RewriteError::Malformed(
            "annotations attribute length mismatch".into(),
        ));
    }
    Ok(out)
}

/// Writes `attr` without the annotations whose type is in `drop`. Writes nothing if none remain.
/// Returns whether an attribute was written.
pub(crate) fn write_without(
    out: &mut Vec<u8>,
    layout: &ClassLayout<'_>,
    attr: &AttrSpan,
    drop: &[&[u8]],
) -> Result<bool> {
    let kept: Vec<AnnotationSpan<'_>> = list(layout, attr)?
        .into_iter()
        .filter(|a| !drop.contains(&a.type_name))
        .collect();
    if kept.is_empty() {
        return Ok(false);
    }
    let body_len: usize = 2 + kept.iter().map(|a| a.end - a.start).sum::<usize>();
    out.put_u16(attr.name_index);
    out.put_u32(body_len as u32);
    out.put_u16(kept.len() as u16);
    for a in &kept {
        out.extend_from_slice(&layout.bytes[a.start..a.end]);
    }
    Ok(true)
}
