//! Bytecode for the wrapper methods and for the helpers injected into the helper owner.

use crate::constpool::PoolBuilder;
use crate::descriptor::{MethodShape, ValueKind};
use crate::reader::{PutBe, Result};

const ICONST_0: u8 = 0x03;
const BIPUSH: u8 = 0x10;
const SIPUSH: u8 = 0x11;
const LDC: u8 = 0x12;
const LDC_W: u8 = 0x13;
const ILOAD_0: u8 = 0x1a;
const ILOAD: u8 = 0x15;
const IFEQ: u8 = 0x99;
const GETSTATIC: u8 = 0xb2;
const INVOKESPECIAL: u8 = 0xb7;
const INVOKESTATIC: u8 = 0xb8;
const ATHROW: u8 = 0xbf;
const IRETURN: u8 = 0xac;
const RETURN: u8 = 0xb1;

/// Verification type tag `Object_variable_info` (JVMS 4.7.4).
const ITEM_OBJECT: u8 = 7;
/// `same_locals_1_stack_item_frame_extended`.
const SAME_LOCALS_1_STACK_ITEM_EXTENDED: u8 = 247;

/// Pool indices shared by every wrapper of one class.
pub(crate) struct CommonRefs {
    pub begin: u16,
    pub end: u16,
    pub code_name: u16,
    /// `StackMapTable` name and `java/lang/Throwable` class, for class versions >= 50.
    pub stack_map: Option<(u16, u16)>,
}

/// Pushes an int constant with the shortest instruction.
pub(crate) fn push_int(code: &mut Vec<u8>, value: i32, pool: &mut PoolBuilder<'_>) -> Result<()> {
    match value {
        -1..=5 => code.put_u8((ICONST_0 as i32 + value) as u8),
        -128..=127 => {
            code.put_u8(BIPUSH);
            code.put_u8(value as i8 as u8);
        }
        -32768..=32767 => {
            code.put_u8(SIPUSH);
            code.put_u16(value as i16 as u16);
        }
        _ => {
            let index = pool.integer(value)?;
            if index <= 0xff {
                code.put_u8(LDC);
                code.put_u8(index as u8);
            } else {
                code.put_u8(LDC_W);
                code.put_u16(index);
            }
        }
    }
    Ok(())
}

fn load(code: &mut Vec<u8>, kind: ValueKind, slot: u16) {
    let (short_base, long_op) = match kind {
        ValueKind::Int => (ILOAD_0, ILOAD),
        ValueKind::Long => (0x1e, 0x16),
        ValueKind::Float => (0x22, 0x17),
        ValueKind::Double => (0x26, 0x18),
        ValueKind::Reference => (0x2a, 0x19),
    };
    if slot <= 3 {
        code.put_u8(short_base + slot as u8);
    } else {
        // Slots stay below 256: descriptor parsing rejects more than 255 argument slots.
        code.put_u8(long_op);
        code.put_u8(slot as u8);
    }
}

fn return_op(kind: Option<ValueKind>) -> u8 {
    match kind {
        None => RETURN,
        Some(ValueKind::Int) => IRETURN,
        Some(ValueKind::Long) => 0xad,
        Some(ValueKind::Float) => 0xae,
        Some(ValueKind::Double) => 0xaf,
        Some(ValueKind::Reference) => 0xb0,
    }
}

/// Writes the complete `Code` attribute of a wrapper:
///
/// ```text
///   push id; invokestatic begin
/// try_start:
///   load this and every argument; invokestatic|invokespecial renamed
/// try_end:
///   push id; invokestatic end; <x>return
/// handler (any exception, frame: same locals, stack [Throwable]):
///   push id; invokestatic end; athrow
/// ```
pub(crate) fn write_wrapper_code(
    out: &mut Vec<u8>,
    shape: &MethodShape,
    is_static: bool,
    id: i32,
    renamed: u16,
    refs: &CommonRefs,
    pool: &mut PoolBuilder<'_>,
) -> Result<()> {
    let mut code = Vec::with_capacity(32 + 2 * shape.params.len());
    push_int(&mut code, id, pool)?;
    code.put_u8(INVOKESTATIC);
    code.put_u16(refs.begin);
    let try_start = code.len() as u16;
    let mut slot: u16 = 0;
    if !is_static {
        load(&mut code, ValueKind::Reference, 0);
        slot = 1;
    }
    for &kind in &shape.params {
        load(&mut code, kind, slot);
        slot += kind.slots();
    }
    code.put_u8(if is_static {
        INVOKESTATIC
    } else {
        INVOKESPECIAL
    });
    code.put_u16(renamed);
    let try_end = code.len() as u16;
    push_int(&mut code, id, pool)?;
    code.put_u8(INVOKESTATIC);
    code.put_u16(refs.end);
    code.put_u8(return_op(shape.ret));
    let handler = code.len() as u16;
    push_int(&mut code, id, pool)?;
    code.put_u8(INVOKESTATIC);
    code.put_u16(refs.end);
    code.put_u8(ATHROW);

    let arg_slots = slot;
    let ret_slots = shape.ret.map_or(0, |k| k.slots());
    // Arguments on the stack; or the result plus the id; or the exception plus the id.
    let max_stack = arg_slots.max(ret_slots + 1).max(2);
    let max_locals = arg_slots;

    let mut frames = Vec::new();
    if let Some((stack_map_name, throwable)) = refs.stack_map {
        // The handler frame is the first frame, so its offset_delta is its pc. Its locals are the
        // implicit initial ones (the wrapper never stores to a local).
        frames.put_u16(stack_map_name);
        if handler <= 63 {
            frames.put_u32(2 + 1 + 3);
            frames.put_u16(1);
            frames.put_u8(64 + handler as u8);
        } else {
            frames.put_u32(2 + 3 + 3);
            frames.put_u16(1);
            frames.put_u8(SAME_LOCALS_1_STACK_ITEM_EXTENDED);
            frames.put_u16(handler);
        }
        frames.put_u8(ITEM_OBJECT);
        frames.put_u16(throwable);
    }
    write_code_attribute(
        out,
        refs.code_name,
        max_stack,
        max_locals,
        &code,
        &[(try_start, try_end, handler, 0)],
        &frames,
    );
    Ok(())
}

/// Writes a `Code` attribute around `code`. `frames` is an optional complete StackMapTable
/// attribute (empty for none).
fn write_code_attribute(
    out: &mut Vec<u8>,
    code_name: u16,
    max_stack: u16,
    max_locals: u16,
    code: &[u8],
    exception_table: &[(u16, u16, u16, u16)],
    frames: &[u8],
) {
    let body_len = 2 + 2 + 4 + code.len() + 2 + 8 * exception_table.len() + 2 + frames.len();
    out.put_u16(code_name);
    out.put_u32(body_len as u32);
    out.put_u16(max_stack);
    out.put_u16(max_locals);
    out.put_u32(code.len() as u32);
    out.extend_from_slice(code);
    out.put_u16(exception_table.len() as u16);
    for &(start, end, handler, catch_type) in exception_table {
        out.put_u16(start);
        out.put_u16(end);
        out.put_u16(handler);
        out.put_u16(catch_type);
    }
    out.put_u16(if frames.is_empty() { 0 } else { 1 });
    out.extend_from_slice(frames);
}

/// Writes a helper method `access name(I)V` with body
/// `getstatic gate; ifeq L; iload_0; invokestatic native_ref; L: return`.
pub(crate) fn write_gated_helper(
    out: &mut Vec<u8>,
    access: u16,
    name: u16,
    int_void: u16,
    gate: u16,
    native_ref: u16,
    refs: &CommonRefs,
) {
    let mut code = Vec::with_capacity(11);
    code.put_u8(GETSTATIC);
    code.put_u16(gate);
    code.put_u8(IFEQ);
    code.put_u16(7); // from the ifeq at pc 3 to the return at pc 10
    code.put_u8(ILOAD_0);
    code.put_u8(INVOKESTATIC);
    code.put_u16(native_ref);
    code.put_u8(RETURN);
    let mut frames = Vec::new();
    if let Some((stack_map_name, _)) = refs.stack_map {
        frames.put_u16(stack_map_name);
        frames.put_u32(2 + 1);
        frames.put_u16(1);
        frames.put_u8(10); // same_frame at pc 10
    }
    out.put_u16(access);
    out.put_u16(name);
    out.put_u16(int_void);
    out.put_u16(1);
    write_code_attribute(out, refs.code_name, 1, 1, &code, &[], &frames);
}
