//! A hasher for small integer keys (method ids, JNI function indexes, thread ids): one
//! multiplication. The maps it serves are looked up on every merge and every thread start and
//! end, where SipHash cost more than the work around the lookup.

use std::hash::BuildHasherDefault;

#[derive(Default, Clone, Copy)]
pub(crate) struct IdHasher(u64);

impl std::hash::Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8 | b as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_u32(&mut self, id: u32) {
        self.0 = (id as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// Builds [`IdHasher`]s: the `S` of a `HashMap` or `HashSet` keyed by a `u32` or an `i32`.
pub(crate) type IdBuild = BuildHasherDefault<IdHasher>;
