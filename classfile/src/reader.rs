//! Bounds-checked big-endian cursor over class-file bytes. Every read fails with
//! [`RewriteError::Malformed`] instead of panicking.

use crate::RewriteError;

pub(crate) type Result<T> = std::result::Result<T, RewriteError>;

pub(crate) fn truncated(what: &str) -> RewriteError {
    RewriteError::Malformed(format!("truncated while reading {what}"))
}

#[derive(Clone, Copy)]
pub(crate) struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        Reader { bytes, pos: 0 }
    }

    pub(crate) fn at(bytes: &'a [u8], pos: usize) -> Self {
        Reader { bytes, pos }
    }

    #[inline]
    pub(crate) fn pos(&self) -> usize {
        self.pos
    }

    #[inline]
    pub(crate) fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// Moves to `pos`; callers check `pos <= len` first.
    #[inline]
    pub(crate) fn set_pos(&mut self, pos: usize) {
        self.pos = pos;
    }

    #[inline]
    pub(crate) fn remaining(&self) -> usize {
        self.bytes.len().saturating_sub(self.pos)
    }

    /// The next `N` bytes, or a truncation error naming `what`.
    #[inline]
    fn array<const N: usize>(&mut self, what: &str) -> Result<[u8; N]> {
        match self.bytes.get(self.pos..self.pos + N) {
            Some(s) => {
                self.pos += N;
                let mut out = [0; N];
                out.copy_from_slice(s);
                Ok(out)
            }
            None => Err(truncated(what)),
        }
    }

    #[inline]
    pub(crate) fn u8(&mut self, what: &str) -> Result<u8> {
        self.array(what).map(u8::from_be_bytes)
    }

    #[inline]
    pub(crate) fn u16(&mut self, what: &str) -> Result<u16> {
        self.array(what).map(u16::from_be_bytes)
    }

    #[inline]
    pub(crate) fn u32(&mut self, what: &str) -> Result<u32> {
        self.array(what).map(u32::from_be_bytes)
    }

    #[inline]
    pub(crate) fn skip(&mut self, n: usize, what: &str) -> Result<()> {
        if n > self.remaining() {
            return Err(truncated(what));
        }
        self.pos += n;
        Ok(())
    }
}

/// Big-endian writers for the output buffer.
pub(crate) trait PutBe {
    fn put_u8(&mut self, v: u8);
    fn put_u16(&mut self, v: u16);
    fn put_u32(&mut self, v: u32);
}

impl PutBe for Vec<u8> {
    #[inline]
    fn put_u8(&mut self, v: u8) {
        self.push(v);
    }
    #[inline]
    fn put_u16(&mut self, v: u16) {
        self.extend_from_slice(&v.to_be_bytes());
    }
    #[inline]
    fn put_u32(&mut self, v: u32) {
        self.extend_from_slice(&v.to_be_bytes());
    }
}
