//! What the hooks and the code behind a wrapper report, in call order, on the calling thread; a
//! per-thread list, so tests can run in parallel.

use std::cell::RefCell;

use jni_wrappers::Hooks;

#[derive(Debug, PartialEq, Eq)]
pub enum Event {
    Begin(u32),
    /// A fake original ran (fake_table.rs): its name.
    Original(String),
    /// Java code ran (real_jvm.rs, `Target.mark`): its site.
    Java(i32),
    End(u32),
}

thread_local! {
    static EVENTS: RefCell<Vec<Event>> = const { RefCell::new(Vec::new()) };
}

pub fn log(event: Event) {
    EVENTS.with(|events| events.borrow_mut().push(event));
}

pub fn take_events() -> Vec<Event> {
    EVENTS.with(|events| std::mem::take(&mut *events.borrow_mut()))
}

extern "C" fn on_begin(index: u32) {
    log(Event::Begin(index));
}

extern "C" fn on_end(index: u32) {
    log(Event::End(index));
}

/// Hooks that log `Begin` and `End`.
pub const LOGGING_HOOKS: Hooks = Hooks {
    begin: on_begin,
    end: on_end,
};
