//! The 137 counting-only wrappers over a fake table: every entry is replaced and its original
//! saved; each wrapper passes every argument and the result through bit for bit, counts the call
//! in the calling thread's block (or, without one, in the process-wide counters), marks the thread
//! as inside the function while the original runs, and leaves no live mark afterwards: the outer
//! mark is restored, or the wrapper's own mark reads as returned once its caller's frame is back.
//!
//! The fakes are defined from the crate's own table of signatures (`for_each_counted_function!`),
//! so every counted function but `FatalError` (which does not return) is called.

use std::cell::RefCell;
use std::ffi::{c_char, c_void};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

#[allow(unused_imports)] // each signature uses a part
use jni::sys::{
    jarray, jboolean, jbooleanArray, jbyte, jbyteArray, jchar, jcharArray, jclass, jdouble,
    jdoubleArray, jfieldID, jfloat, jfloatArray, jint, jintArray, jlong, jlongArray, jmethodID,
    jobject, jobjectArray, jobjectRefType, jshort, jshortArray, jsize, jstring, jthrowable, jweak,
    JNIEnv, JNINativeInterface_, JNINativeMethod, JavaVM,
};
use jni_wrappers::{
    calls_without_block, counted_entry, install, original_counted_entry, set_thread_block,
    thread_block, CountedIndex, Hooks, Mark, StackWord, ThreadBlock, COUNTED_COUNT, COUNTED_NAMES,
    FUNCTION_COUNT,
};

/// A value made from a seed, and its bits as the fake saw them.
trait Probe: Copy {
    fn make(seed: u64) -> Self;
    fn bits(self) -> u64;
}

impl<T> Probe for *mut T {
    fn make(seed: u64) -> Self {
        (0x5000_0000 + 16 * seed) as *mut T
    }
    fn bits(self) -> u64 {
        self as u64
    }
}

impl<T> Probe for *const T {
    fn make(seed: u64) -> Self {
        (0x6000_0000 + 16 * seed) as *const T
    }
    fn bits(self) -> u64 {
        self as u64
    }
}

macro_rules! integer_probe {
    ($($t:ty),*) => {$(
        impl Probe for $t {
            fn make(seed: u64) -> Self {
                (seed.wrapping_mul(2654435761) >> 3) as $t
            }
            fn bits(self) -> u64 {
                self as u64
            }
        }
    )*};
}
integer_probe!(i8, u8, u16, i16, i32, i64);

impl Probe for f32 {
    fn make(seed: u64) -> Self {
        seed as f32 * -1.25
    }
    fn bits(self) -> u64 {
        u64::from(self.to_bits())
    }
}

impl Probe for f64 {
    fn make(seed: u64) -> Self {
        seed as f64 * 3.5e-7
    }
    fn bits(self) -> u64 {
        self.to_bits()
    }
}

impl Probe for () {
    fn make(_: u64) -> Self {}
    fn bits(self) -> u64 {
        0
    }
}

impl Probe for jobjectRefType {
    fn make(seed: u64) -> Self {
        match seed % 3 {
            0 => jobjectRefType::JNILocalRefType,
            1 => jobjectRefType::JNIGlobalRefType,
            _ => jobjectRefType::JNIWeakGlobalRefType,
        }
    }
    fn bits(self) -> u64 {
        self as u64
    }
}

/// What a fake saw: its name, env, arguments' bits, and the calling thread's mark (as stored, and
/// as a sampler would read it from the fake's own stack depth).
#[derive(Debug, PartialEq)]
struct Seen {
    name: &'static str,
    env: u64,
    args: Vec<u64>,
    inside: Option<u32>,
    mark: Option<Mark>,
}

/// An address in the caller's frame: a stack pointer as a sampler would see it there.
#[inline(never)]
fn stack_here() -> usize {
    let here = 0u8;
    std::hint::black_box(&here) as *const u8 as usize
}

/// Read a word of this thread's stack (the test's frames are all live).
fn read_stack(address: usize) -> StackWord {
    // SAFETY: `ThreadBlock::mark` asks for an address at or above the caller's stack pointer,
    // within this thread's live stack.
    StackWord::Holds(unsafe { *(address as *const usize) })
}

thread_local! {
    static SEEN: RefCell<Vec<Seen>> = const { RefCell::new(Vec::new()) };
}

fn record(name: &'static str, env: *mut JNIEnv, args: Vec<u64>) {
    let block = thread_block();
    // SAFETY: the test keeps the published block alive while calls run.
    let inside = (!block.is_null()).then(|| unsafe { &*block }.inside.load(Relaxed));
    // SAFETY: as above.
    let mark = (!block.is_null()).then(|| unsafe { &*block }.mark(stack_here(), read_stack));
    SEEN.with(|seen| {
        seen.borrow_mut().push(Seen {
            name,
            env: env as u64,
            args,
            inside,
            mark,
        })
    });
}

fn seed_of(name: &str) -> u64 {
    COUNTED_NAMES.iter().position(|n| *n == name).unwrap() as u64 * 100
}

macro_rules! fakes {
    ($( $name:ident($($arg:ident: $ty:ty),*) -> $ret:ty; )*) => {
        #[allow(non_snake_case)]
        mod fake {
            use super::*;
            $(
                pub unsafe extern "system" fn $name(env: *mut JNIEnv, $($arg: $ty),*) -> $ret {
                    record(stringify!($name), env, vec![$(Probe::bits($arg)),*]);
                    <$ret as Probe>::make(seed_of(stringify!($name)) + 99)
                }
            )*
        }

        fn write_fakes(table: &mut JNINativeInterface_) {
            $( table.$name = Some(fake::$name); )*
        }

        /// Calls every counted entry of `table` with arguments made from its seed; returns, per
        /// function, (name, the arguments' bits, the result's bits
        /// and the bits the fake returns).
        #[allow(unused_mut)]
        fn call_every_entry(table: &JNINativeInterface_, env: *mut JNIEnv) -> Vec<(&'static str, Vec<u64>, u64, u64)> {
            let mut calls = Vec::new();
            $({
                let seed = seed_of(stringify!($name));
                let mut k = 0;
                $( k += 1; let $arg: $ty = Probe::make(seed + k); )*
                let _ = k;
                // SAFETY: the wrapper forwards to the fake, which only records its arguments.
                let result = unsafe { (table.$name.unwrap())(env, $($arg),*) };
                let fake_result: $ret = Probe::make(seed + 99);
                calls.push((stringify!($name), vec![$(Probe::bits($arg)),*], Probe::bits(result), Probe::bits(fake_result)));
            })*
            calls
        }

        fn fake_entry(name: &str) -> *const c_void {
            match name {
                $( stringify!($name) => fake::$name as *const c_void, )*
                _ => std::ptr::null(),
            }
        }
    };
}

jni_wrappers::for_each_counted_function!(fakes);

extern "C" fn no_hook(_: u32) {}

extern "system" fn never_called() {
    unreachable!("the upcall entries of the fake table are never called")
}

/// The fake table installed once: upcall entries point at `never_called`, counted ones at fakes.
fn installed() -> &'static JNINativeInterface_ {
    static TABLE: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    let address = *TABLE.get_or_init(|| {
        // SAFETY: all-zero is a valid table (every entry None, reserved pointers null).
        let mut table: Box<JNINativeInterface_> = Box::new(unsafe { std::mem::zeroed() });
        let words = std::mem::size_of::<JNINativeInterface_>() / std::mem::size_of::<usize>();
        let slots = &mut *table as *mut JNINativeInterface_ as *mut usize;
        for i in 4..words {
            // SAFETY: every slot past the four reserved ones is a function pointer entry.
            unsafe { *slots.add(i) = never_called as *const () as usize };
        }
        write_fakes(&mut table);
        let hooks = Hooks {
            begin: no_hook,
            end: no_hook,
        };
        // SAFETY: a valid, writable table.
        assert!(unsafe { install(&mut *table, hooks) });
        Box::leak(table) as *const JNINativeInterface_ as usize
    });
    // SAFETY: leaked above, never freed.
    unsafe { &*(address as *const JNINativeInterface_) }
}

fn counted_index(name: &str) -> usize {
    COUNTED_NAMES.iter().position(|n| *n == name).unwrap()
}

#[test]
fn every_counted_entry_is_replaced_and_its_original_saved() {
    let table = installed();
    assert_eq!(COUNTED_COUNT, 137);
    for function in CountedIndex::all() {
        let original = original_counted_entry(function).unwrap();
        let now = counted_entry(table, function);
        if function.name() == "FatalError" {
            assert_eq!(original, never_called as *const c_void);
        } else {
            assert_eq!(original, fake_entry(function.name()), "{}", function.name());
        }
        assert_ne!(now, original, "{} is not wrapped", function.name());
    }
}

#[test]
fn each_wrapper_passes_everything_through_and_counts_into_the_thread_s_block() {
    let table = installed();
    let env = 0x7777_0000 as *mut JNIEnv;
    let block = Box::new(ThreadBlock::new());
    // SAFETY: the block outlives its publication (null unpublishes).
    unsafe { set_thread_block(&*block) };
    // An outer mark (as if inside another JNI function): each call restores it, or leaves its own.
    block.inside.store(5, Relaxed);
    SEEN.with(|s| s.borrow_mut().clear());
    let calls = call_every_entry(table, env);
    let seen = SEEN.with(|s| std::mem::take(&mut *s.borrow_mut()));
    // SAFETY: the block outlives its publication (null unpublishes).
    unsafe { set_thread_block(std::ptr::null()) };
    assert_eq!(calls.len(), COUNTED_COUNT - 1);
    assert_eq!(seen.len(), calls.len());
    for ((name, args, result, fake_result), seen) in calls.iter().zip(&seen) {
        let index = counted_index(name);
        assert_eq!(seen.name, *name);
        assert_eq!(seen.env, env as u64, "{name}: env");
        assert_eq!(&seen.args, args, "{name}: arguments");
        assert_eq!(result, fake_result, "{name}: result");
        assert_eq!(
            seen.inside,
            Some((FUNCTION_COUNT + index + 1) as u32),
            "{name}: the thread is marked inside it while the original runs"
        );
        assert_eq!(
            seen.mark,
            Some(Mark::Inside((FUNCTION_COUNT + index + 1) as u32)),
            "{name}: a sampler in the original reads the mark as live"
        );
        assert_eq!(
            block.calls[index].load(Relaxed),
            1,
            "{name}: one call counted"
        );
    }
    // Back in this frame: the outer mark is restored (wrappers that return through themselves),
    // or the last wrapper's mark is left behind and reads as returned.
    let after = block.mark(stack_here(), read_stack);
    if block.return_slot.load(Relaxed) == 0 {
        assert_eq!(after, Mark::Inside(5), "the outer mark is restored");
    } else {
        assert_eq!(
            after,
            Mark::Outside,
            "the mark left behind reads as returned"
        );
        assert_ne!(block.inside.load(Relaxed), 0);
    }
    let fatal = counted_index("FatalError");
    assert_eq!(block.calls[fatal].load(Relaxed), 0);
}

#[test]
fn a_thread_without_a_block_is_counted_process_wide() {
    installed();
    let before = calls_without_block(counted_index("GetVersion"));
    std::thread::spawn(|| {
        let (table, env) = (installed(), 0x7777_0000 as *mut JNIEnv);
        // SAFETY: the block outlives its publication (null unpublishes).
        unsafe { set_thread_block(std::ptr::null()) };
        for _ in 0..3 {
            // SAFETY: the wrapper forwards to the fake.
            unsafe { (table.GetVersion.unwrap())(env) };
        }
    })
    .join()
    .unwrap();
    assert!(calls_without_block(counted_index("GetVersion")) >= before + 3);
}

#[test]
fn calls_from_many_threads_count_into_their_own_blocks() {
    installed();
    let threads: Vec<_> = (1..=4u64)
        .map(|n| {
            std::thread::spawn(move || {
                let (table, env) = (installed(), 0x7777_0000 as *mut JNIEnv);
                let block = Box::new(ThreadBlock::new());
                // SAFETY: the block outlives its publication (null unpublishes).
                unsafe { set_thread_block(&*block) };
                for _ in 0..n * 1000 {
                    // SAFETY: the wrapper forwards to the fake.
                    unsafe { (table.ExceptionCheck.unwrap())(env) };
                }
                // SAFETY: the block outlives its publication (null unpublishes).
                unsafe { set_thread_block(std::ptr::null()) };
                (
                    n,
                    block.calls[counted_index("ExceptionCheck")].load(Relaxed),
                )
            })
        })
        .collect();
    for thread in threads {
        let (n, counted) = thread.join().unwrap();
        assert_eq!(counted, n * 1000);
    }
}

#[test]
fn a_mark_left_behind_is_live_only_while_its_return_address_is_in_its_slot() {
    let native_calls = AtomicU64::new(7);
    let block = ThreadBlock::new();
    let (slot, return_to, mark) = (0x7000_1000usize, 0x4000_1234usize, 118u32);
    let never = |_: usize| -> StackWord { panic!("no read needed") };
    assert_eq!(block.mark(slot - 64, never), Mark::Outside, "no mark");
    block.inside.store(mark, Relaxed);
    assert_eq!(
        block.mark(slot - 64, never),
        Mark::Inside(mark),
        "restored marks are exact"
    );
    block.return_slot.store(slot, Relaxed);
    block.return_to.store(return_to, Relaxed);
    let holds = |word: usize| {
        move |at: usize| {
            assert_eq!(at, slot);
            StackWord::Holds(word)
        }
    };
    assert_eq!(
        block.mark(slot - 64, holds(return_to)),
        Mark::Inside(mark),
        "deeper, caller's frame intact"
    );
    assert_eq!(
        block.mark(slot, holds(return_to)),
        Mark::Inside(mark),
        "at the function's first instruction"
    );
    assert_eq!(
        block.mark(slot + 8, never),
        Mark::Outside,
        "returned: the stack rose past the slot"
    );
    assert_eq!(
        block.mark(slot - 64, holds(0x4000_5678)),
        Mark::Outside,
        "as deep again, from another call"
    );
    assert_eq!(
        block.mark(slot - 64, |_| StackWord::Unmapped),
        Mark::Outside,
        "nothing mapped at the slot"
    );
    assert_eq!(
        block.mark(slot - 64, |_| StackWord::Unreadable),
        Mark::Unverified(mark),
        "the slot cannot be read: the caller decides"
    );
    assert_eq!(
        block.mark(slot - (2 << 20), never),
        Mark::Outside,
        "a stack far below: another stack"
    );
    // The owner entered another native method since: the mark is an earlier call's.
    // SAFETY: `native_calls` outlives `block` (declared before it).
    unsafe { block.set_entries(&native_calls) };
    assert_eq!(
        block.mark(slot - 64, never),
        Mark::Outside,
        "left in an earlier native call"
    );
    block.entries_at_mark.store(7, Relaxed);
    assert_eq!(
        block.mark(slot - 64, holds(return_to)),
        Mark::Inside(mark),
        "in this native call"
    );
}

#[test]
fn a_block_reused_after_its_calls_were_taken_or_not_starts_from_zero() {
    installed();
    let (table, env) = (installed(), 0x7777_0000 as *mut JNIEnv);
    let check = counted_index("ExceptionCheck");
    let version = counted_index("GetVersion");
    let mut block = Box::new(ThreadBlock::new());
    let count = |block: &ThreadBlock, n: u64| {
        // SAFETY: the block outlives its publication (null unpublishes).
        unsafe { set_thread_block(block) };
        for _ in 0..n {
            // SAFETY: the wrappers forward to the fakes.
            unsafe { (table.ExceptionCheck.unwrap())(env) };
        }
        // SAFETY: as above.
        unsafe { (table.GetVersion.unwrap())(env) };
        // SAFETY: unpublishes the block.
        unsafe { set_thread_block(std::ptr::null()) };
    };
    count(&block, 5);
    let mut taken = vec![0; COUNTED_COUNT];
    block.take_calls(|index, calls| taken[index] = calls);
    assert_eq!((taken[check], taken[version]), (5, 1));
    assert_eq!(taken.iter().sum::<u64>(), 6);
    assert!(block.calls.iter().all(|c| c.load(Relaxed) == 0));

    // Taken, then reset: the next owner counts from zero.
    block.reset();
    count(&block, 2);
    assert_eq!(block.calls[check].load(Relaxed), 2);
    // Not taken (a merge that was skipped), then reset: the reset zeroes every counter itself.
    block.reset();
    assert!(block.calls.iter().all(|c| c.load(Relaxed) == 0));
    count(&block, 1);
    assert_eq!(block.calls[check].load(Relaxed), 1);
}
