//! Appending constants to an existing pool, reusing equal entries that are already there.

use crate::parse::ClassLayout;
use crate::reader::{PutBe, Result};
use crate::RewriteError;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A small multiplicative hasher (keys are short constant-pool entries; SipHash is overkill).
#[derive(Default)]
pub(crate) struct FastHasher(u64);

impl Hasher for FastHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        const K: u64 = 0x517c_c1b7_2722_0a95;
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let word = u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
            self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(K);
        }
        for &b in chunks.remainder() {
            self.0 = (self.0.rotate_left(5) ^ b as u64).wrapping_mul(K);
        }
    }
}

type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<FastHasher>>;

const TAG_UTF8: u8 = 1;
const TAG_INTEGER: u8 = 3;
const TAG_CLASS: u8 = 7;
const TAG_FIELDREF: u8 = 9;
const TAG_METHODREF: u8 = 10;
const TAG_NAME_AND_TYPE: u8 = 12;

pub(crate) struct PoolBuilder<'a> {
    /// Existing entries of the dedupable kinds, keyed by their raw bytes (tag included).
    existing: FastMap<&'a [u8], u16>,
    added: FastMap<Vec<u8>, u16>,
    /// Next free index (may reach 65536, which is an overflow).
    next_index: u32,
    /// Encoded new entries, appended after the original pool.
    pub appended: Vec<u8>,
}

impl<'a> PoolBuilder<'a> {
    pub(crate) fn new(layout: &ClassLayout<'a>) -> Self {
        let mut existing = FastMap::default();
        existing.reserve(layout.cp_count as usize);
        for index in 1..layout.cp_count {
            if let Some(raw) = layout.raw_entry(index) {
                if matches!(
                    raw[0],
                    TAG_UTF8
                        | TAG_INTEGER
                        | TAG_CLASS
                        | TAG_FIELDREF
                        | TAG_METHODREF
                        | TAG_NAME_AND_TYPE
                ) {
                    existing.entry(raw).or_insert(index);
                }
            }
        }
        PoolBuilder {
            existing,
            added: FastMap::default(),
            next_index: layout.cp_count as u32,
            appended: Vec::new(),
        }
    }

    /// The new `constant_pool_count`.
    pub(crate) fn count(&self) -> Result<u16> {
        u16::try_from(self.next_index).map_err(|_| RewriteError::ConstantPoolOverflow)
    }

    fn intern(&mut self, entry: Vec<u8>) -> Result<u16> {
        if let Some(&index) = self.existing.get(entry.as_slice()) {
            return Ok(index);
        }
        if let Some(&index) = self.added.get(&entry) {
            return Ok(index);
        }
        // The count field is a u16, so the last usable index is 65534.
        if self.next_index >= u16::MAX as u32 {
            return Err(RewriteError::ConstantPoolOverflow);
        }
        let index = self.next_index as u16;
        self.next_index += 1;
        self.appended.extend_from_slice(&entry);
        self.added.insert(entry, index);
        Ok(index)
    }

    pub(crate) fn utf8(&mut self, text: &[u8]) -> Result<u16> {
        let len = u16::try_from(text.len())
            .map_err(|_| RewriteError::Malformed("constant longer than 65535 bytes".into()))?;
        let mut entry = Vec::with_capacity(3 + text.len());
        entry.put_u8(TAG_UTF8);
        entry.put_u16(len);
        entry.extend_from_slice(text);
        self.intern(entry)
    }

    fn pair(&mut self, tag: u8, a: u16, b: u16) -> Result<u16> {
        let mut entry = Vec::with_capacity(5);
        entry.put_u8(tag);
        entry.put_u16(a);
        entry.put_u16(b);
        self.intern(entry)
    }

    pub(crate) fn class(&mut self, name: &[u8]) -> Result<u16> {
        let name = self.utf8(name)?;
        let mut entry = Vec::with_capacity(3);
        entry.put_u8(TAG_CLASS);
        entry.put_u16(name);
        self.intern(entry)
    }

    pub(crate) fn integer(&mut self, value: i32) -> Result<u16> {
        let mut entry = Vec::with_capacity(5);
        entry.put_u8(TAG_INTEGER);
        entry.put_u32(value as u32);
        self.intern(entry)
    }

    pub(crate) fn name_and_type(&mut self, name: &[u8], descriptor: &[u8]) -> Result<u16> {
        let name = self.utf8(name)?;
        let descriptor = self.utf8(descriptor)?;
        self.pair(TAG_NAME_AND_TYPE, name, descriptor)
    }

    /// A Methodref whose class and descriptor are already pool entries.
    pub(crate) fn methodref_by_index(
        &mut self,
        class: u16,
        name: &[u8],
        descriptor_index: u16,
    ) -> Result<u16> {
        let name = self.utf8(name)?;
        let nat = self.pair(TAG_NAME_AND_TYPE, name, descriptor_index)?;
        self.pair(TAG_METHODREF, class, nat)
    }

    pub(crate) fn methodref(
        &mut self,
        class: &[u8],
        name: &[u8],
        descriptor: &[u8],
    ) -> Result<u16> {
        let class = self.class(class)?;
        let nat = self.name_and_type(name, descriptor)?;
        self.pair(TAG_METHODREF, class, nat)
    }

    pub(crate) fn fieldref(&mut self, class: &[u8], name: &[u8], descriptor: &[u8]) -> Result<u16> {
        let class = self.class(class)?;
        let nat = self.name_and_type(name, descriptor)?;
        self.pair(TAG_FIELDREF, class, nat)
    }
}
