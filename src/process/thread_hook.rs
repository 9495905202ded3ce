//! Every thread start and end, as it happens: `pthread_create` is replaced in the GOT of every
//! loaded library (and of libraries the VM loads later, through its `dlopen`), so that each new
//! thread first runs [`started`], which notes who started it (the VM or native code) and arms the
//! thread's exit probe. The exit probe reads the thread's CPU clock as it exits: a thread that lives
//! and ends between two scans is accounted to its last instant, like one the scan saw.
//!
//! Nothing here reads or changes what the program's threads do: the started routine runs with its
//! own argument and returns its own value; a thread that leaves by `pthread_exit` or cancellation
//! unwinds through [`started`], which holds nothing to drop.

use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::Mutex;

/// Who called `pthread_create` for a thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Origin {
    /// libjvm: a VM thread or a Java thread.
    Vm,
    /// Any other library or the executable: native code.
    Native,
}

type StartRoutine = extern "C-unwind" fn(*mut c_void) -> *mut c_void;

/// What a hooked `pthread_create` hands to the new thread.
#[derive(Clone, Copy)]
struct Start {
    routine: StartRoutine,
    arg: *mut c_void,
    origin: Origin,
}

extern "C" {
    /// libc's own (this library's GOT is never patched).
    #[link_name = "pthread_create"]
    fn libc_pthread_create(
        thread: *mut libc::pthread_t,
        attr: *const libc::pthread_attr_t,
        routine: StartRoutine,
        arg: *mut c_void,
    ) -> c_int;
}

/// The state of the hook: the GOT slots it replaced (to put back at the end) and the libraries it
/// has looked at.
struct Hook {
    /// (slot address, the value it had, in a read-only page).
    slots: Vec<(usize, usize, bool)>,
    /// (load address, name) of every library looked at.
    seen: Vec<(usize, String)>,
    /// The loader's count of loaded objects at the last look (`dlpi_adds`).
    adds: u64,
    /// libjvm's `pthread_create` was replaced: VM and Java threads are seen.
    vm_hooked: bool,
    libraries_hooked: u32,
    removed: bool,
}

static HOOK: Mutex<Hook> = Mutex::new(Hook {
    slots: Vec::new(),
    seen: Vec::new(),
    adds: 0,
    vm_hooked: false,
    libraries_hooked: 0,
    removed: false,
});

/// What the hook covers, for the report.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Coverage {
    pub(crate) vm_hooked: bool,
    pub(crate) libraries_hooked: u32,
}

/// Replace `pthread_create` in every library loaded now (and `dlopen` in libjvm, to hook the
/// libraries it loads later). Returns what is covered.
pub(crate) fn install() -> Coverage {
    look_at_new_libraries(true)
}

/// Hook the libraries loaded since the last look (cheap when none was: one loader call).
pub(crate) fn refresh() {
    look_at_new_libraries(false);
}

pub(crate) fn coverage() -> Coverage {
    let hook = crate::sync::lock(&HOOK);
    Coverage {
        vm_hooked: hook.vm_hooked && !hook.removed,
        libraries_hooked: hook.libraries_hooked,
    }
}

/// Put every replaced slot back (the agent stops); threads started meanwhile end as usual.
pub(crate) fn remove() {
    let mut hook = crate::sync::lock(&HOOK);
    if hook.removed {
        return;
    }
    hook.removed = true;
    for &(slot, original, read_only) in &hook.slots {
        write_slot(slot, original, read_only);
    }
}

fn look_at_new_libraries(first: bool) -> Coverage {
    let mut hook = crate::sync::lock(&HOOK);
    if hook.removed {
        return Coverage::default();
    }
    let adds = loaded_objects_added();
    if !first && adds == hook.adds {
        return Coverage::default();
    }
    hook.adds = adds;
    let mut objects: Vec<Object> = Vec::new();
    // SAFETY: the callback only reads the loader's descriptions of the objects and copies them out.
    unsafe { libc::dl_iterate_phdr(Some(collect_object), &mut objects as *mut _ as *mut c_void) };
    let own = own_base();
    for object in objects {
        let key = (object.base, object.name.clone());
        if object.base == own || hook.seen.contains(&key) || skipped(&object.name) {
            continue;
        }
        hook.seen.push(key);
        let is_vm = object.name.ends_with("/libjvm.so");
        let origin = if is_vm { Origin::Vm } else { Origin::Native };
        // SAFETY: `object` was just described by the loader and is still loaded (objects are
        // unloaded only by dlclose, which a JVM does not do to the libraries that start threads
        // while they run; a GOT is written only through `write_slot`).
        let replaced = unsafe { patch_object(&object, origin, &mut hook.slots) };
        if replaced {
            hook.libraries_hooked += 1;
            hook.vm_hooked |= is_vm;
        }
    }
    Coverage {
        vm_hooked: hook.vm_hooked,
        libraries_hooked: hook.libraries_hooked,
    }
}

/// The dynamic loader itself and the vDSO start no threads through a GOT.
fn skipped(name: &str) -> bool {
    name.contains("/ld-linux") || name.starts_with("linux-vdso") || name.contains("ld-linux-")
}

/// One loaded object as the loader describes it.
struct Object {
    base: usize,
    name: String,
    phdrs: *const libc::Elf64_Phdr,
    phnum: usize,
}

unsafe extern "C" fn collect_object(
    info: *mut libc::dl_phdr_info,
    _size: libc::size_t,
    out: *mut c_void,
) -> c_int {
    // SAFETY: the loader passes a valid info for the duration of the call, and `out` is the Vec
    // passed to dl_iterate_phdr by the only caller.
    let (info, out) = unsafe { (&*info, &mut *(out as *mut Vec<Object>)) };
    let name = if info.dlpi_name.is_null() {
        String::new()
    } else {
        // SAFETY: a NUL-terminated name owned by the loader.
        unsafe { CStr::from_ptr(info.dlpi_name) }
            .to_string_lossy()
            .into_owned()
    };
    out.push(Object {
        base: info.dlpi_addr as usize,
        name,
        phdrs: info.dlpi_phdr,
        phnum: info.dlpi_phnum as usize,
    });
    0
}

unsafe extern "C" fn count_adds(
    info: *mut libc::dl_phdr_info,
    _size: libc::size_t,
    out: *mut c_void,
) -> c_int {
    // SAFETY: as in `collect_object`; `out` is a u64.
    unsafe { *(out as *mut u64) = (*info).dlpi_adds };
    1 // one object tells the count
}

fn loaded_objects_added() -> u64 {
    let mut adds = 0u64;
    // SAFETY: the callback writes one u64 through the pointer it is given.
    unsafe { libc::dl_iterate_phdr(Some(count_adds), &mut adds as *mut u64 as *mut c_void) };
    adds
}

/// The load address of this library.
fn own_base() -> usize {
    // SAFETY: Dl_info is plain data (pointers and integers); all-zero is a valid value.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr fills `info` for an address inside a loaded object (this function's).
    let found = unsafe { libc::dladdr(own_base as *const c_void, &mut info) };
    if found == 0 {
        0
    } else {
        info.dli_fbase as usize
    }
}

const PT_DYNAMIC: u32 = 2;
const PT_GNU_RELRO: u32 = 0x6474_e552;
const DT_NULL: i64 = 0;
const DT_PLTRELSZ: i64 = 2;
const DT_STRTAB: i64 = 5;
const DT_SYMTAB: i64 = 6;
const DT_RELA: i64 = 7;
const DT_RELASZ: i64 = 8;
const DT_STRSZ: i64 = 10;
const DT_PLTREL: i64 = 20;
const DT_JMPREL: i64 = 23;

#[repr(C)]
struct Dyn {
    tag: i64,
    val: u64,
}

#[repr(C)]
struct Rela {
    offset: u64,
    info: u64,
    addend: i64,
}

#[repr(C)]
struct Sym {
    name: u32,
    info: u8,
    other: u8,
    shndx: u16,
    value: u64,
    size: u64,
}

/// Replace the GOT slots of `pthread_create` (and, in libjvm, `dlopen`) of one object. Returns
/// whether a `pthread_create` slot was replaced.
///
/// # Safety
/// `object` describes an object loaded now, with the loader's program headers.
unsafe fn patch_object(
    object: &Object,
    origin: Origin,
    slots: &mut Vec<(usize, usize, bool)>,
) -> bool {
    // SAFETY: the loader's program headers of a loaded object.
    let phdrs = unsafe { std::slice::from_raw_parts(object.phdrs, object.phnum) };
    let base = object.base;
    let Some(dynamic) = phdrs.iter().find(|p| p.p_type == PT_DYNAMIC) else {
        return false;
    };
    // The pages the loader made read-only: RELRO's whole pages (its last, partial page is shared
    // with writable data and stays writable).
    let page = page_size();
    let relro = phdrs.iter().find(|p| p.p_type == PT_GNU_RELRO).map(|p| {
        let start = base + p.p_vaddr as usize;
        (
            start & !(page - 1),
            (start + p.p_memsz as usize) & !(page - 1),
        )
    });
    // The loader relocates most dynamic entries in place; an unrelocated one is below the base.
    let address = |v: u64| {
        let v = v as usize;
        if v < base {
            v + base
        } else {
            v
        }
    };
    let (mut symtab, mut strtab, mut strsz) = (0usize, 0usize, 0usize);
    let (mut rela, mut relasz, mut jmprel, mut pltrelsz, mut pltrel) = (0, 0, 0, 0, DT_RELA);
    let mut entry = (base + dynamic.p_vaddr as usize) as *const Dyn;
    loop {
        // SAFETY: the dynamic section of a loaded object, terminated by DT_NULL.
        let d = unsafe { &*entry };
        match d.tag {
            DT_NULL => break,
            DT_SYMTAB => symtab = address(d.val),
            DT_STRTAB => strtab = address(d.val),
            DT_STRSZ => strsz = d.val as usize,
            DT_RELA => rela = address(d.val),
            DT_RELASZ => relasz = d.val as usize,
            DT_JMPREL => jmprel = address(d.val),
            DT_PLTRELSZ => pltrelsz = d.val as usize,
            DT_PLTREL => pltrel = d.val as i64,
            _ => {}
        }
        // SAFETY: within the dynamic section, which ends with the DT_NULL entry above.
        entry = unsafe { entry.add(1) };
    }
    if symtab == 0 || strtab == 0 || strsz == 0 {
        return false;
    }
    let mut tables = vec![(rela, relasz)];
    if pltrel == DT_RELA {
        tables.push((jmprel, pltrelsz));
    }
    let mut replaced = false;
    for (table, size) in tables {
        if table == 0 || size == 0 {
            continue;
        }
        let count = size / std::mem::size_of::<Rela>();
        // SAFETY: a relocation table of the object, `size` bytes long.
        let relocations = unsafe { std::slice::from_raw_parts(table as *const Rela, count) };
        for r in relocations {
            let kind = (r.info & 0xffff_ffff) as u32;
            if kind != crate::arch::RELOC_JUMP_SLOT && kind != crate::arch::RELOC_GLOB_DAT {
                continue;
            }
            let index = (r.info >> 32) as usize;
            if index == 0 {
                continue;
            }
            // SAFETY: the symbol a relocation of the object names is in its symbol table.
            let sym = unsafe { &*(symtab as *const Sym).add(index) };
            if sym.name as usize >= strsz {
                continue;
            }
            // SAFETY: a NUL-terminated name inside the string table (checked above).
            let name = unsafe { CStr::from_ptr((strtab + sym.name as usize) as *const c_char) };
            let target = match (name.to_bytes(), origin) {
                (b"pthread_create", Origin::Vm) => pthread_create_by_vm as *const () as usize,
                (b"pthread_create", Origin::Native) => {
                    pthread_create_by_native as *const () as usize
                }
                (b"dlopen", Origin::Vm) => dlopen_by_vm as *const () as usize,
                _ => continue,
            };
            let slot = base + r.offset as usize;
            let read_only = relro.is_some_and(|(start, end)| slot >= start && slot < end);
            // SAFETY: a GOT slot of the object, 8-byte aligned, read atomically.
            let original = unsafe { (*(slot as *const AtomicPtr<c_void>)).load(Ordering::Acquire) };
            if original as usize == target || !write_slot(slot, target, read_only) {
                continue;
            }
            slots.push((slot, original as usize, read_only));
            replaced |= name.to_bytes() == b"pthread_create";
        }
    }
    replaced
}

/// Write `value` into the GOT slot at `slot`, lifting the page's write protection for the moment
/// when the slot is in the object's RELRO part.
fn write_slot(slot: usize, value: usize, read_only: bool) -> bool {
    let page = slot & !(page_size() - 1);
    if read_only {
        // SAFETY: a page of a loaded object's RELRO part; made writable for the write only.
        let rc = unsafe {
            libc::mprotect(
                page as *mut c_void,
                page_size(),
                libc::PROT_READ | libc::PROT_WRITE,
            )
        };
        if rc != 0 {
            return false;
        }
    }
    // SAFETY: an aligned, writable GOT slot; other threads read it atomically (one word).
    unsafe { (*(slot as *const AtomicPtr<c_void>)).store(value as *mut c_void, Ordering::Release) };
    if read_only {
        // SAFETY: as above, back to read-only.
        unsafe { libc::mprotect(page as *mut c_void, page_size(), libc::PROT_READ) };
    }
    true
}

fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    (unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).max(4096) as usize
}

unsafe extern "C" fn pthread_create_by_vm(
    thread: *mut libc::pthread_t,
    attr: *const libc::pthread_attr_t,
    routine: StartRoutine,
    arg: *mut c_void,
) -> c_int {
    // SAFETY: the caller's arguments, passed on as given.
    unsafe { create(thread, attr, routine, arg, Origin::Vm) }
}

unsafe extern "C" fn pthread_create_by_native(
    thread: *mut libc::pthread_t,
    attr: *const libc::pthread_attr_t,
    routine: StartRoutine,
    arg: *mut c_void,
) -> c_int {
    // SAFETY: the caller's arguments, passed on as given.
    unsafe { create(thread, attr, routine, arg, Origin::Native) }
}

/// # Safety
/// The arguments of a `pthread_create` call.
unsafe fn create(
    thread: *mut libc::pthread_t,
    attr: *const libc::pthread_attr_t,
    routine: StartRoutine,
    arg: *mut c_void,
    origin: Origin,
) -> c_int {
    // malloc, not Box: out of memory, the thread starts unhooked rather than the process aborting.
    // SAFETY: malloc of a plain struct's size; checked for null.
    let start = unsafe { libc::malloc(std::mem::size_of::<Start>()) } as *mut Start;
    if start.is_null() {
        // SAFETY: the caller's arguments, passed on as given.
        return unsafe { libc_pthread_create(thread, attr, routine, arg) };
    }
    // SAFETY: `start` is a fresh allocation of a Start, suitably aligned by malloc.
    unsafe {
        start.write(Start {
            routine,
            arg,
            origin,
        })
    };
    // SAFETY: libc's pthread_create with the caller's thread and attributes; `started` takes
    // ownership of `start` on the new thread.
    let rc = unsafe { libc_pthread_create(thread, attr, started, start as *mut c_void) };
    if rc != 0 {
        // SAFETY: no thread was started: `start` is still ours.
        unsafe { libc::free(start as *mut c_void) };
    }
    rc
}

/// The first function of a hooked thread. It keeps nothing that needs dropping across the
/// program's routine, so a `pthread_exit` may unwind through it.
extern "C-unwind" fn started(start: *mut c_void) -> *mut c_void {
    // SAFETY: made by `create` for this thread only; read once and freed.
    let Start {
        routine,
        arg,
        origin,
    } = unsafe { (start as *const Start).read() };
    // SAFETY: allocated by malloc in `create`, no longer used.
    unsafe { libc::free(start) };
    super::thread_started(origin);
    routine(arg)
}

/// libjvm's `dlopen`: the library it loads (System.loadLibrary, the JDK's own) is hooked before
/// its `JNI_OnLoad` runs. The loader sees the file name as given; the VM passes full paths.
unsafe extern "C" fn dlopen_by_vm(file: *const c_char, flags: c_int) -> *mut c_void {
    // SAFETY: the caller's arguments, passed on as given.
    let handle = unsafe { libc::dlopen(file, flags) };
    if !handle.is_null() {
        crate::diag::no_unwind(&crate::diag::PROCESS_EXIT, (), refresh);
    }
    handle
}
