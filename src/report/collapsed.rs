//! Collapsed stacks (`frame;frame;frame value`, the input of flame-graph tools) of native self time.
//!
//! One line per (Java caller chain, native method): the callers outermost first, up to `depth=` of the
//! innermost ones, then the native method as `pkg.Class.name(param,...)`. The value is native self
//! time in ns, not a sample count; the lines of a method add up to its exact self time (see
//! `Report::attach_stacks`).

use super::Report;

pub(crate) fn render(r: &Report) -> String {
    let mut out = String::new();
    for (stack, ns) in &r.collapsed {
        out.push_str(stack);
        out.push(' ');
        out.push_str(&ns.to_string());
        out.push('\n');
    }
    out
}
