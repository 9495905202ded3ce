//! The fast pre-scan: "does this class declare a native method?" without building anything.
//!
//! Every class loaded under the agent passes through here (CDS is off under an early
//! ClassFileLoadHook), so it walks the constant pool and member tables in place and never allocates
//! unless it has to report an error.

use crate::reader::{truncated, Reader, Result};
use crate::RewriteError;

pub(crate) const ACC_NATIVE: u16 = 0x0100;

/// Oldest and newest class-file major versions accepted (JDK 1.1 .. JDK 25).
pub const MIN_MAJOR_VERSION: u16 = 45;
/// See [`MIN_MAJOR_VERSION`].
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
    match ENTRY_SIZE[tag as usize] {
        0 | UTF8_MARK => None,
        size => Some(size as usize - 1),
    }
}

const UTF8_MARK: u8 = 0xff;

/// Whole-entry size (tag included) per tag; 0 = invalid tag, `UTF8_MARK` = length-prefixed.
static ENTRY_SIZE: [u8; 256] = {
    let mut table = [0u8; 256];
    table[1] = UTF8_MARK;
    table[7] = 3;
    table[8] = 3;
    table[16] = 3;
    table[19] = 3;
    table[20] = 3;
    table[15] = 4;
    table[3] = 5;
    table[4] = 5;
    table[9] = 5;
    table[10] = 5;
    table[11] = 5;
    table[12] = 5;
    table[17] = 5;
    table[18] = 5;
    table[5] = 9;
    table[6] = 9;
    table
};

/// Skips the constant pool, calling `visit(index, tag_offset)` for each entry. Nearly branch-free:
/// the size comes from a table (or the Utf8 length) and long/double bump the index by one more.
#[inline]
pub(crate) fn walk_constant_pool(
    r: &mut Reader<'_>,
    mut visit: impl FnMut(u16, usize),
) -> Result<u16> {
    let count = r.u16("constant pool count")?;
    if count == 0 {
        return Err(RewriteError::Malformed("constant pool count is 0".into()));
    }
    let bytes = r.bytes();
    let mut pos = r.pos();
    let mut index: u32 = 1;
    while index < count as u32 {
        // Every entry has at least 3 bytes (tag + u16); checked once here.
        let Some(head) = bytes.get(pos..pos + 3) else {
            return Err(truncated("constant pool"));
        };
        let tag = head[0];
        let utf8_len = u16::from_be_bytes([head[1], head[2]]) as usize;
        let size = match ENTRY_SIZE[tag as usize] {
            UTF8_MARK => 3 + utf8_len,
            0 => {
                return Err(RewriteError::Malformed(format!(
                    "unknown constant tag {tag} at index {index}"
                )))
            }
            fixed => fixed as usize,
        };
        visit(index as u16, pos);
        pos += size;
        // Long (5) and Double (6) take two indices.
        index += 1 + u32::from(tag.wrapping_sub(5) < 2);
    }
    if pos > bytes.len() {
        return Err(truncated("constant pool"));
    }
    if index > count as u32 {
        return Err(RewriteError::Malformed(
            "long/double constant in the last pool slot".into(),
        ));
    }
    r.set_pos(pos);
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
