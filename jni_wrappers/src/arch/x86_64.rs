//! x86-64: the calling thread's block read inline from its initial-exec TLS word, and counted
//! wrappers that jump to the original, leaving their mark behind (see `counted`).

use crate::counted::{CountedIndex, ThreadBlock, COUNTED_COUNT, ORIGINAL_ENTRIES, WITHOUT_BLOCK};
use crate::FUNCTION_COUNT;

/// The calling thread's initial-exec TLS word `$symbol`, as a `usize`: two loads, no call, safe in
/// a signal handler. The agent reads its own thread word with it too (its `src/arch/x86_64.rs`).
#[macro_export]
macro_rules! initial_exec_load {
    ($symbol:literal) => {{
        let value: usize;
        // SAFETY: loads the calling thread's own initial-exec TLS word `$symbol`; no other memory
        // is touched.
        unsafe {
            ::core::arch::asm!(
                concat!("mov {v}, qword ptr [rip + ", $symbol, "@GOTTPOFF]"),
                "mov {v}, qword ptr fs:[{v}]",
                v = out(reg) value,
                options(nostack, readonly, preserves_flags),
            );
        }
        value
    }};
}

/// The calling thread's block, or null (see [`crate::thread_block`]): its word in
/// `csrc/thread_block.c`.
#[inline(always)]
pub(crate) fn thread_block() -> *const ThreadBlock {
    initial_exec_load!("nativeacct_thread_block_word") as *const ThreadBlock
}

/// Defines one stub per counted function, `nativeacct_counted_<Name>`, and [`counted_wrappers`].
/// A stub counts the call in the thread's block, notes the owner's count of native calls, the
/// stack pointer at its entry (the slot of the caller's return address) and that address, marks
/// the thread inside the function and jumps to the original, which returns to the caller
/// directly. It touches rax and r11 alone (neither carries an argument of a fixed-argument
/// function), and the stack not at all, so the default unwind rule (return address at the stack
/// pointer) holds throughout. A thread with no block is counted process-wide. The symbols are
/// global but hidden: any object of the library may name them, no other library sees them.
macro_rules! tail_stubs {
    ($( $name:ident($($arg:ident: $ty:ty),*) -> $ret:ty; )*) => {
        $(
            std::arch::global_asm!(
                ".text",
                ".p2align 4",
                concat!(".globl nativeacct_counted_", stringify!($name)),
                concat!(".hidden nativeacct_counted_", stringify!($name)),
                concat!(".type nativeacct_counted_", stringify!($name), ",@function"),
                concat!("nativeacct_counted_", stringify!($name), ":"),
                ".cfi_startproc",
                "mov rax, qword ptr [rip + nativeacct_thread_block_word@GOTTPOFF]",
                "mov rax, qword ptr fs:[rax]",
                "test rax, rax",
                "jz 2f",
                "add qword ptr [rax + {calls}], 1",
                "mov r11, qword ptr [rax + {entries}]",
                "mov r11, qword ptr [r11]",
                "mov qword ptr [rax + {entries_at_mark}], r11",
                "mov qword ptr [rax + {return_slot}], rsp",
                "mov r11, qword ptr [rsp]",
                "mov qword ptr [rax + {return_to}], r11",
                "mov dword ptr [rax + {inside}], {mark}",
                "jmp qword ptr [rip + {originals} + {entry}]",
                "2:",
                "lock add qword ptr [rip + {without_block} + {entry}], 1",
                "jmp qword ptr [rip + {originals} + {entry}]",
                ".cfi_endproc",
                concat!(".size nativeacct_counted_", stringify!($name), ", .-nativeacct_counted_", stringify!($name)),
                calls = const std::mem::offset_of!(ThreadBlock, calls) + CountedIndex::$name as usize * 8,
                return_slot = const std::mem::offset_of!(ThreadBlock, return_slot),
                return_to = const std::mem::offset_of!(ThreadBlock, return_to),
                entries = const std::mem::offset_of!(ThreadBlock, entries),
                entries_at_mark = const std::mem::offset_of!(ThreadBlock, entries_at_mark),
                inside = const std::mem::offset_of!(ThreadBlock, inside),
                mark = const FUNCTION_COUNT + CountedIndex::$name as usize + 1,
                entry = const CountedIndex::$name as usize * 8,
                originals = sym ORIGINAL_ENTRIES,
                without_block = sym WITHOUT_BLOCK,
            );
        )*

        #[allow(non_snake_case)]
        mod stubs {
            extern "C" {
                $(
                    #[link_name = concat!("nativeacct_counted_", stringify!($name))]
                    pub(super) fn $name();
                )*
            }
        }

        /// The stub of each counted function but `FatalError`, by [`CountedIndex`].
        pub(crate) fn counted_wrappers() -> [usize; COUNTED_COUNT - 1] {
            [ $( stubs::$name as *const () as usize, )* ]
        }
    };
}

crate::for_each_counted_function!(tail_stubs);
