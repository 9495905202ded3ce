//! A structural parse that records where everything is, so the splice can copy untouched bytes.
//! Only native methods get their attributes itemised; everything else is a byte range.

use crate::reader::{Reader, Result};
use crate::scan::{self, ACC_NATIVE};
use crate::RewriteError;

pub(crate) const TAG_UTF8: u8 = 1;
pub(crate) const TAG_CLASS: u8 = 7;
const TAG_METHODREF: u8 = 10;
const TAG_NAME_AND_TYPE: u8 = 12;

/// One attribute of a native method: name index and the byte range of the whole attribute.
#[derive(Clone, Copy, Debug)]
pub(crate) struct AttrSpan {
    pub name_index: u16,
    /// Start of the attribute (its name index).
    pub start: usize,
    /// Start of the body (after the u4 length).
    pub body: usize,
    pub end: usize,
}

#[derive(Debug)]
pub(crate) struct MethodSpan {
    pub start: usize,
    pub end: usize,
    pub access: u16,
    pub name_index: u16,
    pub descriptor_index: u16,
    /// Filled in for native methods only.
    pub attributes: Vec<AttrSpan>,
}

#[derive(Debug)]
pub(crate) struct ClassLayout<'a> {
    pub bytes: &'a [u8],
    pub major: u16,
    pub cp_count: u16,
    /// Offset of each entry's tag byte; 0 for index 0 and the second slot of long/double.
    pub cp_offsets: Vec<u32>,
    pub cp_end: usize,
    pub access: u16,
    pub this_class: u16,
    /// Offset of `fields_count`.
    pub fields_start: usize,
    pub fields_count: u16,
    /// Offset of `methods_count`.
    pub methods_start: usize,
    pub methods: Vec<MethodSpan>,
    /// Offset of the class `attributes_count`.
    pub methods_end: usize,
}

fn malformed(why: String) -> RewriteError {
    RewriteError::Malformed(why)
}

impl<'a> ClassLayout<'a> {
    pub(crate) fn parse(bytes: &'a [u8]) -> Result<Self> {
        let mut r = Reader::new(bytes);
        let (major, _minor) = scan::header(&mut r)?;
        let declared_count = {
            let mut peek = r;
            peek.u16("constant pool count")?
        };
        let mut cp_offsets = vec![0u32; declared_count as usize];
        let cp_count = scan::walk_constant_pool(&mut r, |index, at| {
            // walk_constant_pool only visits indices below the count it read.
            cp_offsets[index as usize] = at as u32;
        })?;
        let cp_end = r.pos();
        let access = r.u16("class access")?;
        let this_class = r.u16("this_class")?;
        r.skip(2, "super_class")?;
        let interfaces = r.u16("interfaces count")? as usize;
        r.skip(2 * interfaces, "interfaces")?;
        let fields_start = r.pos();
        let fields_count = {
            let mut peek = r;
            peek.u16("fields count")?
        };
        scan::skip_members(&mut r)?;
        let methods_start = r.pos();
        let method_count = r.u16("methods count")?;
        let mut methods = Vec::with_capacity(method_count as usize);
        for _ in 0..method_count {
            let start = r.pos();
            let access = r.u16("method access")?;
            let name_index = r.u16("method name")?;
            let descriptor_index = r.u16("method descriptor")?;
            let mut attributes = Vec::new();
            if access & ACC_NATIVE != 0 {
                let count = r.u16("attributes count")?;
                for _ in 0..count {
                    let attr_start = r.pos();
                    let name_index = r.u16("attribute name")?;
                    let len = r.u32("attribute length")? as usize;
                    let body = r.pos();
                    r.skip(len, "attribute body")?;
                    attributes.push(AttrSpan {
                        name_index,
                        start: attr_start,
                        body,
                        end: r.pos(),
                    });
                }
            } else {
                scan::skip_attributes(&mut r)?;
            }
            methods.push(MethodSpan {
                start,
                end: r.pos(),
                access,
                name_index,
                descriptor_index,
                attributes,
            });
        }
        let methods_end = r.pos();
        scan::skip_attributes(&mut r)?;
        if r.remaining() != 0 {
            return Err(malformed(format!(
                "{} extra bytes after the class attributes",
                r.remaining()
            )));
        }
        let layout = ClassLayout {
            bytes,
            major,
            cp_count,
            cp_offsets,
            cp_end,
            access,
            this_class,
            fields_start,
            fields_count,
            methods_start,
            methods,
            methods_end,
        };
        Ok(layout)
    }

    /// Tag and body offset of a constant, or an error for index 0, out-of-range or unusable slots.
    fn entry(&self, index: u16) -> Result<(u8, usize)> {
        match self.cp_offsets.get(index as usize) {
            Some(&at) if at != 0 => Ok((self.bytes[at as usize], at as usize + 1)),
            _ => Err(malformed(format!("bad constant pool index {index}"))),
        }
    }

    /// The raw (modified UTF-8) bytes of a Utf8 constant.
    pub(crate) fn utf8(&self, index: u16) -> Result<&'a [u8]> {
        let (tag, body) = self.entry(index)?;
        if tag != TAG_UTF8 {
            return Err(malformed(format!("constant {index} is not Utf8")));
        }
        let len = u16::from_be_bytes([self.bytes[body], self.bytes[body + 1]]) as usize;
        Ok(&self.bytes[body + 2..body + 2 + len])
    }

    /// The Utf8 name of a Class constant.
    pub(crate) fn class_name(&self, index: u16) -> Result<&'a [u8]> {
        let (tag, body) = self.entry(index)?;
        if tag != TAG_CLASS {
            return Err(malformed(format!("constant {index} is not a Class")));
        }
        self.utf8(u16::from_be_bytes([self.bytes[body], self.bytes[body + 1]]))
    }

    /// The whole entry (tag included) of a constant, used as a dedup key.
    pub(crate) fn raw_entry(&self, index: u16) -> Option<&'a [u8]> {
        let (tag, body) = self.entry(index).ok()?;
        let size = if tag == TAG_UTF8 {
            2 + u16::from_be_bytes([self.bytes[body], self.bytes[body + 1]]) as usize
        } else {
            scan::fixed_entry_size(tag)?
        };
        Some(&self.bytes[body - 1..body + size])
    }

    /// Does the constant pool hold a Methodref to `class.name` (any descriptor)? That is, does some
    /// code of this class call that method? Malformed entries count as no.
    pub(crate) fn references_method(&self, class: &[u8], name: &[u8]) -> bool {
        let u16_at = |at: usize| u16::from_be_bytes([self.bytes[at], self.bytes[at + 1]]);
        (1..self.cp_count).any(|index| {
            let Ok((TAG_METHODREF, body)) = self.entry(index) else {
                return false;
            };
            let Ok((TAG_NAME_AND_TYPE, nat)) = self.entry(u16_at(body + 2)) else {
                return false;
            };
            self.utf8(u16_at(nat)).ok() == Some(name)
                && self.class_name(u16_at(body)).ok() == Some(class)
        })
    }

    pub(crate) fn is_interface(&self) -> bool {
        self.access & 0x0200 != 0
    }
}
