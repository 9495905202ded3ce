//! The fast pre-scan: "does this class declare a native method?" without building anything.
//!
//! Every class loaded under the agent passes through here (CDS is off under an early
//! ClassFileLoadHook), so it walks the constant pool and member tables in place and never allocates
//! unless it has to report an error.

use crate::reader::{Reader, Result};
use crate::RewriteError;

pub(crate) const ACC_NATIVE: u16 = 0x0100;

/// Oldest and newest class-file major versions accepted (JDK 1.1 .. JDK 25).
pub const MIN_MAJOR_VERSION: u16 = 45;
pub const MAX_MAJOR_VERSION: u16 = 69;

/// Reads magic and version, returning the major version.
pub(crate) fn header(r: &mut Reader<'_>) -> Result<(u16, u16)> {
    let magic = r.u32("magic")?;
    if magic != 0xCAFE_BABE {
        return Err(RewriteError::Malformed(format!("bad magic {magic:#010x}")));
    }
    let minor = r.u16("minor version")?;
    let major = r.u16("major version")?;
    if !(MIN_MAJOR_VERSION..=MAX_MAJOR_VERSION).contains(&major) {
        return Err(RewriteError::UnsupportedVersion(major));
    }
    Ok((major, minor))
}

/// Size in bytes (after the tag) of a fixed-size constant, or `None` for Utf8 / unknown tags.
#[inline]
pub(crate) fn fixed_entry_size(tag: u8) -> Option<usize> {
    match tag {
        7 | 8 | 16 | 19 | 20 => Some(2),
        15 => Some(3),
        3 | 4 | 9 | 10 | 11 | 12 | 17 | 18 => Some(4),
        5 | 6 => Some(8),
        _ => None,
    }
}

/// Skips the constant pool, calling `visit(index, tag_offset)` for each entry.
#[inline]
pub(crate) fn walk_constant_pool(
    r: &mut Reader<'_>,
    mut visit: impl FnMut(u16, usize),
) -> Result<u16> {
    let count = r.u16("constant pool count")?;
    if count == 0 {
        return Err(RewriteError::Malformed("constant pool count is 0".into()));
    }
    let mut index: u16 = 1;
    while index < count {
        let at = r.pos();
        let tag = r.u8("constant tag")?;
        visit(index, at);
        if tag == 1 {
            let len = r.u16("utf8 length")? as usize;
            r.skip(len, "utf8 bytes")?;
        } else {
            match fixed_entry_size(tag) {
                Some(size) => r.skip(size, "constant")?,
                None => {
                    return Err(RewriteError::Malformed(format!(
                        "unknown constant tag {tag} at index {index}"
                    )))
                }
            }
            if tag == 5 || tag == 6 {
                // Long and Double take two indices.
                index += 1;
                if index >= count {
                    return Err(RewriteError::Malformed(
                        "long/double constant in the last pool slot".into(),
                    ));
                }
            }
        }
        index += 1;
    }
    Ok(count)
}

/// Skips `attributes_count` and the attributes after it.
#[inline]
pub(crate) fn skip_attributes(r: &mut Reader<'_>) -> Result<()> {
    let count = r.u16("attributes count")?;
    for _ in 0..count {
        r.skip(2, "attribute name")?;
        let len = r.u32("attribute length")? as usize;
        r.skip(len, "attribute body")?;
    }
    Ok(())
}

/// Skips a field or method table (count + members).
pub(crate) fn skip_members(r: &mut Reader<'_>) -> Result<()> {
    let count = r.u16("member count")?;
    for _ in 0..count {
        r.skip(6, "member header")?;
        skip_attributes(r)?;
    }
    Ok(())
}

/// True when some method has `ACC_NATIVE`. Validates the structure up to the first native method
/// (or to the end of the method table).
pub fn has_native_methods(class_bytes: &[u8]) -> Result<bool> {
    let mut r = Reader::new(class_bytes);
    header(&mut r)?;
    walk_constant_pool(&mut r, |_, _| {})?;
    r.skip(6, "access/this/super")?;
    let interfaces = r.u16("interfaces count")? as usize;
    r.skip(2 * interfaces, "interfaces")?;
    skip_members(&mut r)?;
    let methods = r.u16("methods count")?;
    for _ in 0..methods {
        let access = r.u16("method access")?;
        if access & ACC_NATIVE != 0 {
            return Ok(true);
        }
        r.skip(4, "method name/descriptor")?;
        skip_attributes(&mut r)?;
    }
    Ok(false)
}
