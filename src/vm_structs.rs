//! HotSpot's exported layout tables (`gHotSpotVMStructs`, `gHotSpotVMTypes`), the ones
//! serviceability tools read, used to learn facts JVMTI does not give: whether a method is a JIT
//! intrinsic (`Method::_intrinsic_id`), where a native method's current C function is kept (the
//! word past its `Method`, from the published size of `Method`) and whether it has compiled code
//! (`Method::_code`). Nothing here writes; `attach` redirects bindings through that word.
//!
//! Every read goes through the tables' own offsets and strides; anything missing gives `None`.

use jni::sys::jmethodID;
use std::collections::HashMap;
use std::ffi::{c_char, c_void, CStr};
use std::sync::OnceLock;

/// Field offsets of the VM's types, by (type name, field name), with the field's C type.
struct Layout {
    offsets: HashMap<(String, String), (u64, String)>,
    /// Static fields: their address, by (type name, field name), with the field's C type.
    statics: HashMap<(String, String), (usize, String)>,
}

/// The address of an exported libjvm symbol.
fn symbol(name: &CStr) -> Option<*const c_void> {
    // SAFETY: dlsym with RTLD_DEFAULT and a NUL-terminated name only looks the symbol up.
    let address = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) };
    (!address.is_null()).then_some(address as *const c_void)
}

/// The value of an exported `uint64_t` of libjvm.
fn exported_u64(name: &CStr) -> Option<u64> {
    let address = symbol(name)?;
    // SAFETY: the gHotSpotVMStruct* offset and stride symbols are `uint64_t` variables.
    Some(unsafe { *(address as *const u64) })
}

/// A C string at `entry + offset`, if the pointer there is not null.
///
/// # Safety
/// `entry + offset` must hold a `const char*` that is null or NUL-terminated.
unsafe fn string_at(entry: *const u8, offset: u64) -> Option<String> {
    // SAFETY: the caller's contract.
    let pointer = unsafe { *(entry.add(offset as usize) as *const *const c_char) };
    if pointer.is_null() {
        return None;
    }
    // SAFETY: non-null strings in the tables are NUL-terminated literals of libjvm.
    Some(
        unsafe { CStr::from_ptr(pointer) }
            .to_string_lossy()
            .into_owned(),
    )
}

impl Layout {
    fn read() -> Option<Layout> {
        let table = symbol(c"gHotSpotVMStructs")?;
        let type_name = exported_u64(c"gHotSpotVMStructEntryTypeNameOffset")?;
        let field_name = exported_u64(c"gHotSpotVMStructEntryFieldNameOffset")?;
        let type_string = exported_u64(c"gHotSpotVMStructEntryTypeStringOffset")?;
        let is_static = exported_u64(c"gHotSpotVMStructEntryIsStaticOffset")?;
        let offset = exported_u64(c"gHotSpotVMStructEntryOffsetOffset")?;
        let address = exported_u64(c"gHotSpotVMStructEntryAddressOffset")?;
        let stride = exported_u64(c"gHotSpotVMStructEntryArrayStride")?;
        if stride == 0 {
            return None;
        }
        // SAFETY: gHotSpotVMStructs is a `VMStructEntry*` variable.
        let mut entry = unsafe { *(table as *const *const u8) };
        if entry.is_null() {
            return None;
        }
        let mut offsets = HashMap::new();
        let mut statics = HashMap::new();
        // The table ends with an entry whose type name is null; bound the walk anyway.
        for _ in 0..100_000 {
            // SAFETY: `entry` is an element of the table; the offsets come from the VM itself.
            let Some(ty) = (unsafe { string_at(entry, type_name) }) else {
                break;
            };
            // SAFETY: as above.
            let field = unsafe { string_at(entry, field_name) };
            // SAFETY: as above.
            let c_type = unsafe { string_at(entry, type_string) }.unwrap_or_default();
            // SAFETY: as above; isStatic is an int32_t, offset a uint64_t.
            let (static_field, field_offset) = unsafe {
                (
                    *(entry.add(is_static as usize) as *const i32),
                    *(entry.add(offset as usize) as *const u64),
                )
            };
            match (field, static_field) {
                (Some(field), 0) => {
                    offsets.insert((ty, field), (field_offset, c_type));
                }
                (Some(field), _) => {
                    // SAFETY: as above; `address` is a `void*`.
                    let at = unsafe { *(entry.add(address as usize) as *const usize) };
                    statics.insert((ty, field), (at, c_type));
                }
                _ => {}
            }
            // SAFETY: the next element, within the table (its end is the null-name entry).
            entry = unsafe { entry.add(stride as usize) };
        }
        Some(Layout { offsets, statics })
    }

    /// The offset of `ty::field`, if the VM publishes it with C type `c_type`.
    fn offset(&self, ty: &str, field: &str, c_type: &str) -> Option<u64> {
        match self.offsets.get(&(ty.to_string(), field.to_string())) {
            Some((offset, published)) if published == c_type => Some(*offset),
            _ => None,
        }
    }
}

fn layout() -> Option<&'static Layout> {
    static LAYOUT: OnceLock<Option<Layout>> = OnceLock::new();
    LAYOUT.get_or_init(Layout::read).as_ref()
}

/// Whether `method` is a JIT intrinsic (its `Method::_intrinsic_id` is not `_none`), or None if
/// the VM does not publish it.
///
/// # Safety
/// `method` must be a valid jmethodID whose class is not unloaded during the call (e.g. inside
/// the method's NativeMethodBind callback).
pub(crate) unsafe fn is_intrinsic(method: jmethodID) -> Option<bool> {
    let offset = layout()?.offset("Method", "_intrinsic_id", "u2")?;
    if method.is_null() {
        return None;
    }
    // SAFETY: a jmethodID points at the slot that holds the Method*; the caller keeps it valid.
    let vm_method = unsafe { *(method as *const *const u8) };
    if vm_method.is_null() {
        return None;
    }
    // SAFETY: `_intrinsic_id` is a u16 field at the published offset within the Method.
    Some(unsafe { *(vm_method.add(offset as usize) as *const u16) } != 0)
}

/// Where the VM's generated code lives, for the boundary sampler.
pub(crate) struct CodeLayout {
    /// The whole code cache (`CodeCache::_low_bound`, `_high_bound`).
    pub(crate) cache: (usize, usize),
    /// The template interpreter's code (`AbstractInterpreter::_code`, a `StubQueue`).
    pub(crate) interpreter: Option<(usize, usize)>,
    /// With a segmented code cache: the heap of code that is not compiled Java (the call stub,
    /// adapters, runtime stubs), found as the heap that holds the interpreter.
    pub(crate) vm_stubs: Option<(usize, usize)>,
}

/// The value of static field `ty::field` of C type `c_type`, as a word.
fn static_word(ty: &str, field: &str, c_type: &str) -> Option<usize> {
    let (address, published) = layout()?
        .statics
        .get(&(ty.to_string(), field.to_string()))?;
    if *address == 0 || published != c_type {
        return None;
    }
    // SAFETY: the VM publishes this static field, of a pointer-sized type, at this address.
    Some(unsafe { std::ptr::read_volatile(*address as *const usize) })
}

/// The word (or with `int`, the 32-bit value) at `base + ty::field`.
///
/// # Safety
/// `base` must point at a live VM object of type `ty`.
unsafe fn field_word(base: usize, ty: &str, field: &str, c_type: &str) -> Option<usize> {
    let offset = layout()?.offset(ty, field, c_type)? as usize;
    let at = base.checked_add(offset)?;
    // SAFETY: the caller's contract; the offset is the VM's own.
    Some(unsafe {
        if c_type == "int" {
            std::ptr::read_volatile(at as *const i32) as usize
        } else {
            std::ptr::read_volatile(at as *const usize)
        }
    })
}

/// The code cache's layout once the VM has made it (VMStart); None if the VM does not publish
/// its bounds.
pub(crate) fn code_layout() -> Option<CodeLayout> {
    let (low, high) = (
        static_word("CodeCache", "_low_bound", "address")?,
        static_word("CodeCache", "_high_bound", "address")?,
    );
    if low == 0 || high <= low {
        return None;
    }
    let interpreter = (|| {
        let queue =
            static_word("AbstractInterpreter", "_code", "StubQueue*").filter(|q| *q != 0)?;
        // SAFETY: the interpreter's StubQueue lives as long as the VM.
        let buffer = unsafe { field_word(queue, "StubQueue", "_stub_buffer", "address") }?;
        // SAFETY: as above.
        let limit = unsafe { field_word(queue, "StubQueue", "_buffer_limit", "int") }?;
        (buffer != 0 && limit > 0).then_some((buffer, buffer + limit))
    })();
    let vm_stubs = interpreter.and_then(|(start, _)| {
        let heaps =
            static_word("CodeCache", "_heaps", "GrowableArray<CodeHeap*>*").filter(|h| *h != 0)?;
        // SAFETY: the heaps array lives as long as the VM.
        let count = unsafe { field_word(heaps, "GrowableArrayBase", "_len", "int") }? as u32;
        // SAFETY: as above.
        let data = unsafe { field_word(heaps, "GrowableArray<int>", "_data", "int*") }?;
        if !(2..=16).contains(&count) || data == 0 {
            return None; // not segmented: stubs and compiled code share one heap
        }
        let memory = layout()?.offset("CodeHeap", "_memory", "VirtualSpace")? as usize;
        (0..count as usize).find_map(|i| {
            // SAFETY: `data` holds `count` CodeHeap pointers.
            let heap = unsafe { std::ptr::read_volatile((data as *const usize).add(i)) };
            if heap == 0 {
                return None;
            }
            let space = heap + memory;
            // SAFETY: a CodeHeap's VirtualSpace, published with its fields.
            let low = unsafe { field_word(space, "VirtualSpace", "_low_boundary", "char*") }?;
            // SAFETY: as above.
            let high = unsafe { field_word(space, "VirtualSpace", "_high_boundary", "char*") }?;
            (low <= start && start < high).then_some((low, high))
        })
    });
    Some(CodeLayout {
        cache: (low, high),
        interpreter,
        vm_stubs,
    })
}

/// The size of the VM type `name` from `gHotSpotVMTypes`, or None if it is not published.
fn type_size(name: &str) -> Option<u64> {
    static SIZES: OnceLock<HashMap<String, u64>> = OnceLock::new();
    let sizes = SIZES.get_or_init(|| {
        let mut sizes = HashMap::new();
        let (Some(table), Some(type_name), Some(size), Some(stride)) = (
            symbol(c"gHotSpotVMTypes"),
            exported_u64(c"gHotSpotVMTypeEntryTypeNameOffset"),
            exported_u64(c"gHotSpotVMTypeEntrySizeOffset"),
            exported_u64(c"gHotSpotVMTypeEntryArrayStride"),
        ) else {
            return sizes;
        };
        // SAFETY: gHotSpotVMTypes is a `VMTypeEntry*` variable.
        let mut entry = unsafe { *(table as *const *const u8) };
        if entry.is_null() || stride == 0 {
            return sizes;
        }
        for _ in 0..100_000 {
            // SAFETY: `entry` is an element of the table (its end has a null type name).
            let Some(ty) = (unsafe { string_at(entry, type_name) }) else {
                break;
            };
            // SAFETY: as above; typeSize is a uint64_t.
            let bytes = unsafe { *(entry.add(size as usize) as *const u64) };
            sizes.insert(ty, bytes);
            // SAFETY: the next element, within the table.
            entry = unsafe { entry.add(stride as usize) };
        }
        sizes
    });
    sizes.get(name).copied()
}

/// The `Method*` behind a jmethodID.
///
/// # Safety
/// `method` must be a valid jmethodID whose class stays loaded during the call.
unsafe fn vm_method(method: jmethodID) -> Option<*const u8> {
    if method.is_null() {
        return None;
    }
    // SAFETY: a jmethodID points at the slot that holds the Method*; the caller keeps it valid.
    let vm_method = unsafe { *(method as *const *const u8) };
    (!vm_method.is_null()).then_some(vm_method)
}

/// Where a native method's current C function is kept: the word just past its `Method` (HotSpot's
/// `Method::native_function_addr()`), found from the published size of `Method`.
///
/// # Safety
/// `method` must be a valid jmethodID of a native method whose class stays loaded while the slot
/// is used.
pub(crate) unsafe fn native_function_slot(method: jmethodID) -> Option<*mut usize> {
    let size = type_size("Method")?;
    // SAFETY: the caller's contract.
    let vm_method = unsafe { vm_method(method) }?;
    // SAFETY: native methods have their function slot right after the Method object.
    Some(unsafe { vm_method.add(size as usize) } as *mut usize)
}

/// Whether the method has compiled code now (`Method::_code`; for a native, its compiled
/// wrapper, which calls the C function whose address it was compiled with).
///
/// # Safety
/// As for [`native_function_slot`].
pub(crate) unsafe fn has_compiled_code(method: jmethodID) -> Option<bool> {
    let layout = layout()?;
    let offset = layout
        .offsets
        .iter()
        .find(|((ty, field), _)| ty == "Method" && field == "_code")
        .map(|(_, (offset, _))| *offset)?;
    // SAFETY: the caller's contract.
    let vm_method = unsafe { vm_method(method) }?;
    // SAFETY: `_code` is a pointer field at the published offset within the Method.
    let code = unsafe { std::ptr::read_volatile(vm_method.add(offset as usize) as *const usize) };
    Some(code != 0)
}
