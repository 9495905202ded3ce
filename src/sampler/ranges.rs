//! Which code a program counter is in: libjvm's text, the VM's code cache, the agent (its shared
//! object and its bind-trampoline pages), or anything else. In the code cache, the interpreter and
//! compiled Java are Java code; the VM's stubs (a segmented code cache's non-method heap, less the
//! interpreter) are the JVM's. The ranges are learnt once (libjvm
//! and the agent from the loaded objects' executable segments, the code cache from HotSpot's
//! published bounds) and kept in atomics, so that the signal handler reads them without a lock.

use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CodeClass {
    /// The code cache: interpreter, compiled Java, stubs.
    CodeCache,
    /// libjvm's own text.
    Jvm,
    /// The agent's shared object or its trampolines.
    Agent,
    /// Any other code: the program's libraries, libc, the vDSO.
    Other,
}

/// One half-open address range, empty until set.
struct Range {
    start: AtomicUsize,
    end: AtomicUsize,
}

impl Range {
    const fn empty() -> Range {
        Range {
            start: AtomicUsize::new(0),
            end: AtomicUsize::new(0),
        }
    }

    fn set(&self, start: usize, end: usize) {
        // End first as 0 keeps the range empty while it changes.
        self.end.store(0, Relaxed);
        self.start.store(start, Relaxed);
        self.end.store(end, Relaxed);
    }

    #[inline]
    fn contains(&self, pc: usize) -> bool {
        pc >= self.start.load(Relaxed) && pc < self.end.load(Relaxed)
    }
}

/// Executable segments per object: libjvm and the agent have one each on x86_64 and arm64
/// toolchains, a few more are allowed for other linkers.
const SEGMENTS: usize = 4;
static JVM: [Range; SEGMENTS] = [const { Range::empty() }; SEGMENTS];
static AGENT: [Range; SEGMENTS] = [const { Range::empty() }; SEGMENTS];
static CODE_CACHE: Range = Range::empty();
/// Inside the code cache: the interpreter (Java code) and the heap of VM stubs (JVM).
static INTERPRETER: Range = Range::empty();
static VM_STUBS: Range = Range::empty();
/// Trampoline chunks (mapped by `bind`); more than this many are classified as other code.
const AGENT_PAGES: usize = 64;
static TRAMPOLINES: [Range; AGENT_PAGES] = [const { Range::empty() }; AGENT_PAGES];
static TRAMPOLINES_USED: AtomicUsize = AtomicUsize::new(0);

/// What `pc` is. Async-signal-safe.
#[inline]
pub(crate) fn classify(pc: usize) -> CodeClass {
    if CODE_CACHE.contains(pc) {
        if VM_STUBS.contains(pc) && !INTERPRETER.contains(pc) {
            return CodeClass::Jvm;
        }
        return CodeClass::CodeCache;
    }
    if JVM.iter().any(|r| r.contains(pc)) {
        return CodeClass::Jvm;
    }
    if AGENT.iter().any(|r| r.contains(pc)) {
        return CodeClass::Agent;
    }
    let used = TRAMPOLINES_USED.load(Relaxed).min(AGENT_PAGES);
    if TRAMPOLINES[..used].iter().any(|r| r.contains(pc)) {
        return CodeClass::Agent;
    }
    CodeClass::Other
}

/// The VM's code cache spans `cache`; inside it, the interpreter and (segmented code cache) the
/// heap of VM stubs, whose code outside the interpreter is the JVM's (call stub, adapters).
pub(crate) fn set_code_cache(
    cache: (usize, usize),
    interpreter: Option<(usize, usize)>,
    vm_stubs: Option<(usize, usize)>,
) {
    let (start, end) = interpreter.unwrap_or((0, 0));
    INTERPRETER.set(start, end);
    let (start, end) = vm_stubs.unwrap_or((0, 0));
    VM_STUBS.set(start, end);
    CODE_CACHE.set(cache.0, cache.1);
}

/// Whether the code cache's bounds were learnt.
pub(crate) fn code_cache_known() -> bool {
    CODE_CACHE.end.load(Relaxed) != 0
}

/// Code the agent mapped (a trampoline chunk) spans `[start, end)`.
pub(crate) fn note_agent_pages(start: usize, end: usize) {
    let slot = TRAMPOLINES_USED.fetch_add(1, Relaxed);
    if let Some(range) = TRAMPOLINES.get(slot) {
        range.set(start, end);
    }
}

/// Learn the executable segments of libjvm (the object that defines `JNI_CreateJavaVM`) and of the
/// agent (the object this function is in). Returns whether libjvm was found.
pub(crate) fn learn_objects() -> bool {
    let agent = learn_object_at(learn_objects as *const () as usize, &AGENT);
    // SAFETY: dlsym with RTLD_DEFAULT and a NUL-terminated name only looks the symbol up.
    let jvm_symbol = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"JNI_CreateJavaVM".as_ptr()) };
    let jvm = !jvm_symbol.is_null() && learn_object_at(jvm_symbol as usize, &JVM);
    agent && jvm
}

/// Fill `ranges` with the executable PT_LOAD segments of the loaded object containing `address`.
fn learn_object_at(address: usize, ranges: &[Range; SEGMENTS]) -> bool {
    // SAFETY: a zeroed Dl_info is a valid out-parameter.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr only reads the loader's tables.
    if unsafe { libc::dladdr(address as *const libc::c_void, &mut info) } == 0
        || info.dli_fbase.is_null()
    {
        return false;
    }
    struct Search {
        base: usize,
        found: Vec<(usize, usize)>,
    }
    unsafe extern "C" fn each(
        object: *mut libc::dl_phdr_info,
        _size: libc::size_t,
        data: *mut libc::c_void,
    ) -> libc::c_int {
        // SAFETY: `data` is the `Search` passed below; `object` is the loader's valid record.
        let (search, object) = unsafe { (&mut *(data as *mut Search), &*object) };
        let base = object.dlpi_addr as usize;
        let headers = (0..object.dlpi_phnum as usize)
            // SAFETY: dlpi_phdr has dlpi_phnum entries.
            .map(|i| unsafe { &*object.dlpi_phdr.add(i) });
        let segments: Vec<(usize, usize)> = headers
            .filter(|h| h.p_type == libc::PT_LOAD && h.p_flags & libc::PF_X != 0)
            .map(|h| {
                let start = base + h.p_vaddr as usize;
                (start, start + h.p_memsz as usize)
            })
            .collect();
        // The object whose first loaded byte is dladdr's base (the lowest PT_LOAD's address).
        let lowest = headers_lowest(object);
        if lowest == Some(search.base) {
            search.found = segments;
            return 1;
        }
        0
    }
    fn headers_lowest(object: &libc::dl_phdr_info) -> Option<usize> {
        (0..object.dlpi_phnum as usize)
            // SAFETY: dlpi_phdr has dlpi_phnum entries.
            .map(|i| unsafe { &*object.dlpi_phdr.add(i) })
            .filter(|h| h.p_type == libc::PT_LOAD)
            .map(|h| object.dlpi_addr as usize + (h.p_vaddr as usize & !0xfff))
            .min()
    }
    let mut search = Search {
        base: info.dli_fbase as usize,
        found: Vec::new(),
    };
    // SAFETY: the callback matches dl_iterate_phdr's contract and only reads the records.
    unsafe { libc::dl_iterate_phdr(Some(each), &mut search as *mut Search as *mut libc::c_void) };
    for (range, (start, end)) in ranges.iter().zip(&search.found) {
        range.set(*start, *end);
    }
    !search.found.is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_agent_s_own_code_is_agent_and_libc_is_other() {
        assert!(learn_object_at(learn_objects as *const () as usize, &AGENT));
        assert_eq!(classify(classify as *const () as usize), CodeClass::Agent);
        assert_eq!(
            classify(libc::getpid as *const () as usize),
            CodeClass::Other
        );
        set_code_cache(
            (0x1000, 0x4000),
            Some((0x1100, 0x1200)),
            Some((0x1000, 0x2000)),
        );
        assert_eq!(classify(0x1150), CodeClass::CodeCache);
        assert_eq!(classify(0x1800), CodeClass::Jvm);
        assert_eq!(classify(0x2800), CodeClass::CodeCache);
        assert_eq!(classify(0x4000), CodeClass::Other);
    }
}
