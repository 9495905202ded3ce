//! The open native calls and JNI upcalls of one thread, in a layout the bind routine of
//! `timing=exact` reads and writes (see [`super::EXACT_LAYOUT`]): fixed-size `repr(C)` frames in
//! one buffer whose address, length and capacity are plain fields.

/// [`Frame::kind`] of a wrapped native method.
pub(super) const NATIVE: u32 = 0;
/// [`Frame::kind`] of a JNI upcall into Java.
pub(super) const UPCALL: u32 = 1;

/// An open native call ([`NATIVE`]) or JNI upcall ([`UPCALL`]).
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub(super) struct Frame {
    pub(super) kind: u32,
    /// The native method's id, or the JNI function's index.
    pub(super) id: u32,
    /// A native: the innermost native before this one (the sampler's `innermost` to restore).
    pub(super) outer: u32,
    pub(super) start: u64,
    /// A native: time spent in nested upcalls and inner natives (see `Owned::not_own`).
    pub(super) nested: u64,
}

impl Frame {
    pub(super) fn native(method: u32, outer: u32, start: u64) -> Frame {
        Frame {
            kind: NATIVE,
            id: method,
            outer,
            start,
            nested: 0,
        }
    }

    pub(super) fn upcall(function: u32, start: u64) -> Frame {
        Frame {
            kind: UPCALL,
            id: function,
            outer: 0,
            start,
            nested: 0,
        }
    }

    /// Whether this is the open native `method`.
    #[inline(always)]
    pub(super) fn is_native(&self, method: u32) -> bool {
        self.kind == NATIVE && self.id == method
    }

    /// Whether this is the open upcall of `function`.
    #[inline(always)]
    pub(super) fn is_upcall(&self, function: u32) -> bool {
        self.kind == UPCALL && self.id == function
    }
}

/// Frames `storage[..len]` are open, innermost last. `base` and `capacity` mirror `storage`'s
/// buffer for the assembly, which pushes and pops by writing `len` and the frames in place.
#[repr(C)]
pub(super) struct FrameStack {
    base: usize,
    len: usize,
    capacity: usize,
    storage: Vec<Frame>,
}

/// Frames a fresh stack holds before it grows: nesting deeper is rare.
const INITIAL_FRAMES: usize = 16;

impl FrameStack {
    pub(super) fn new() -> FrameStack {
        let mut stack = FrameStack {
            base: 0,
            len: 0,
            capacity: 0,
            storage: Vec::new(),
        };
        stack.grow_to(INITIAL_FRAMES);
        stack
    }

    #[cold]
    fn grow_to(&mut self, frames: usize) {
        self.storage.resize(frames, Frame::default());
        self.base = self.storage.as_mut_ptr() as usize;
        self.capacity = self.storage.len();
    }

    #[inline(always)]
    pub(super) fn push(&mut self, frame: Frame) {
        if self.len == self.storage.len() {
            self.grow_to(2 * self.storage.len());
        }
        self.storage[self.len] = frame;
        self.len += 1;
    }

    #[inline(always)]
    pub(super) fn pop(&mut self) {
        self.len = self.len.saturating_sub(1);
    }

    #[inline(always)]
    pub(super) fn last(&self) -> Option<&Frame> {
        self.storage.get(self.len.checked_sub(1)?)
    }

    #[inline(always)]
    pub(super) fn last_mut(&mut self) -> Option<&mut Frame> {
        self.storage.get_mut(self.len.checked_sub(1)?)
    }

    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.len
    }

    pub(super) fn clear(&mut self) {
        self.len = 0;
    }

    /// Where the assembly finds the buffer's address, the open frames and the capacity.
    pub(super) const BASE: usize = std::mem::offset_of!(FrameStack, base);
    pub(super) const LEN: usize = std::mem::offset_of!(FrameStack, len);
    pub(super) const CAPACITY: usize = std::mem::offset_of!(FrameStack, capacity);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_push_pop_and_grow_in_place_of_the_mirror() {
        let mut stack = FrameStack::new();
        for n in 0..40u32 {
            stack.push(Frame::native(n, n.wrapping_sub(1), u64::from(n)));
        }
        assert_eq!(stack.len, 40);
        assert!(stack.capacity >= 40);
        assert_eq!(stack.base, stack.storage.as_ptr() as usize);
        assert!(stack.last().is_some_and(|f| f.is_native(39)));
        stack.last_mut().expect("open").nested += 5;
        assert_eq!(stack.last().map(|f| f.nested), Some(5));
        stack.pop();
        assert!(stack
            .last()
            .is_some_and(|f| f.is_native(38) && !f.is_upcall(38)));
        stack.clear();
        assert!(stack.last().is_none());
        stack.pop();
        assert!(stack.last().is_none());
    }
}
