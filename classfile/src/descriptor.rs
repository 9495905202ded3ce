//! Method descriptors (JVMS 4.3.3): what the wrapper must load, return, and reserve.

use crate::RewriteError;

/// How a value travels through locals and the operand stack.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValueKind {
    /// `Z B C S I` (one slot, `iload`/`ireturn`).
    Int,
    /// `F`.
    Float,
    /// `J` (two slots).
    Long,
    /// `D` (two slots).
    Double,
    /// `L...;` or `[...` (one slot, `aload`/`areturn`).
    Reference,
}

impl ValueKind {
    /// Local-variable (and operand-stack) slots a value of this kind takes.
    pub fn slots(self) -> u16 {
        match self {
            ValueKind::Long | ValueKind::Double => 2,
            _ => 1,
        }
    }
}

/// A parsed method descriptor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MethodShape {
    /// The parameters, in order.
    pub params: Vec<ValueKind>,
    /// `None` for `V`.
    pub ret: Option<ValueKind>,
    /// Local slots taken by the parameters (without `this`).
    pub param_slots: u16,
}

/// The JVM's limit on argument slots, `this` included (JVMS 4.3.3).
pub const MAX_ARG_SLOTS: u16 = 255;

fn bad(desc: &[u8], why: &str) -> RewriteError {
    RewriteError::Malformed(format!(
        "bad method descriptor {:?}: {why}",
        String::from_utf8_lossy(desc)
    ))
}

/// Parses one field type at `pos`, returning its kind and the position after it.
fn field_type(desc: &[u8], mut pos: usize) -> Result<(ValueKind, usize), RewriteError> {
    let mut dims = 0usize;
    while desc.get(pos) == Some(&b'[') {
        dims += 1;
        pos += 1;
    }
    if dims > 255 {
        return Err(bad(desc, "more than 255 array dimensions"));
    }
    let kind = match desc.get(pos) {
        Some(b'Z' | b'B' | b'C' | b'S' | b'I') => ValueKind::Int,
        Some(b'F') => ValueKind::Float,
        Some(b'J') => ValueKind::Long,
        Some(b'D') => ValueKind::Double,
        Some(b'L') => {
            let rest = &desc[pos + 1..];
            let len = rest
                .iter()
                .position(|&b| b == b';')
                .ok_or_else(|| bad(desc, "unterminated class name"))?;
            if len == 0 {
                return Err(bad(desc, "empty class name"));
            }
            if rest[..len].iter().any(|&b| b == b'.' || b == b'[') {
                return Err(bad(desc, "illegal character in class name"));
            }
            pos += len + 1;
            ValueKind::Reference
        }
        _ => return Err(bad(desc, "unknown type")),
    };
    pos += 1;
    Ok((if dims > 0 { ValueKind::Reference } else { kind }, pos))
}

/// Parses `(params)ret`. `is_static` decides whether `this` counts against the 255-slot limit.
pub fn parse_method(desc: &[u8], is_static: bool) -> Result<MethodShape, RewriteError> {
    if desc.first() != Some(&b'(') {
        return Err(bad(desc, "does not start with '('"));
    }
    let mut pos = 1;
    let mut params = Vec::new();
    let mut slots: u32 = 0;
    while desc.get(pos) != Some(&b')') {
        if pos >= desc.len() {
            return Err(bad(desc, "missing ')'"));
        }
        let (kind, next) = field_type(desc, pos)?;
        slots += kind.slots() as u32;
        params.push(kind);
        pos = next;
    }
    pos += 1;
    let this_slot = if is_static { 0 } else { 1 };
    if slots + this_slot > MAX_ARG_SLOTS as u32 {
        return Err(bad(desc, "more than 255 argument slots"));
    }
    let ret = if desc.get(pos) == Some(&b'V') {
        pos += 1;
        None
    } else {
        let (kind, next) = field_type(desc, pos)?;
        pos = next;
        Some(kind)
    };
    if pos != desc.len() {
        return Err(bad(desc, "trailing characters"));
    }
    Ok(MethodShape {
        params,
        ret,
        param_slots: slots as u16,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ValueKind::*;

    #[test]
    fn slots_and_kinds() {
        let s = parse_method(b"(ZBCSIJFD[ILjava/lang/String;[[Ljava/lang/Object;)V", true).unwrap();
        assert_eq!(
            s.params,
            [Int, Int, Int, Int, Int, Long, Float, Double, Reference, Reference, Reference]
        );
        assert_eq!(s.param_slots, 13);
        assert_eq!(s.ret, None);
        assert_eq!(parse_method(b"()J", true).unwrap().ret, Some(Long));
        assert_eq!(parse_method(b"()[D", false).unwrap().ret, Some(Reference));
        assert_eq!(parse_method(b"()D", false).unwrap().param_slots, 0);
    }

    #[test]
    fn the_255_slot_limit_counts_this() {
        let longs = |n: usize| format!("({})V", "J".repeat(n) + "I");
        assert!(parse_method(longs(127).as_bytes(), true).is_ok()); // 255 slots
        assert!(parse_method(longs(127).as_bytes(), false).is_err()); // 256 with this
        assert!(parse_method(format!("({})V", "I".repeat(254)).as_bytes(), false).is_ok());
    }

    #[test]
    fn malformed_descriptors() {
        for bad in [
            &b""[..],
            b"V",
            b"(",
            b"(I",
            b"(I)",
            b"(L;)V",
            b"(Ljava/lang/String)V",
            b"(Q)V",
            b"()VV",
            b"(V)V",
            b"([)V",
            b"(La.b;)V",
        ] {
            assert!(
                parse_method(bad, true).is_err(),
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
    }
}
