//! One thread's record: what the scan and the contexts saw of it, and the parts it is split into.

use super::*;

/// The CPU time of an open context up to the last commit, and the agent's counters then.
#[derive(Clone, Copy, Debug)]
pub(super) struct OpenContext {
    pub(super) cpu: u64,
    pub(super) bytecode_ns: u64,
    pub(super) native_ns: u64,
}

/// What is known of one thread (one incarnation of a tid).
#[derive(Clone, Debug)]
pub(super) struct Record {
    pub(super) tid: i32,
    /// OS name (empty until read).
    pub(super) comm: String,
    pub(super) java_name: Option<String>,
    /// The thread's CPU time when last observed outside a context (or at its context's last commit).
    pub(super) cpu_seen: u64,
    /// CPU seen by scans while the thread had no open context.
    pub(super) outside_ns: u64,
    /// CPU before its first context that no scan saw.
    pub(super) startup_ns: u64,
    /// CPU inside contexts: bytecode, native.
    pub(super) java: [u64; 2],
    pub(super) open: Option<OpenContext>,
    pub(super) had_context: bool,
    /// It entered Java from native code (see `ThreadContext::began_native`).
    pub(super) began_native: bool,
    pub(super) comm_reads: u8,
    /// The last scan that listed it.
    pub(super) scan: u64,
    /// The thread ran its exit (see `EXIT_PROBE`): a later thread with its tid is another one.
    pub(super) exited: bool,
    /// Who started it, when it was started through the hook (known at its end).
    pub(super) started_by: Option<Origin>,
}

impl Record {
    pub(super) fn new(tid: i32, scan: u64) -> Record {
        Record {
            tid,
            comm: String::new(),
            java_name: None,
            cpu_seen: 0,
            outside_ns: 0,
            startup_ns: 0,
            java: [0, 0],
            open: None,
            had_context: false,
            began_native: false,
            comm_reads: 0,
            scan,
            exited: false,
            started_by: None,
        }
    }

    /// Charge the CPU since the last observation, up to `cpu`, to the time outside contexts.
    pub(super) fn observe_outside(&mut self, cpu: u64) {
        self.outside_ns += cpu.saturating_sub(self.cpu_seen);
        self.cpu_seen = self.cpu_seen.max(cpu);
    }

    /// Charge an open context's CPU since the last commit, up to `cpu`, split between bytecode and
    /// native as the agent's counters moved meanwhile (all to the current state if they did not).
    pub(super) fn commit(&mut self, cpu: u64, bytecode_ns: u64, native_ns: u64, in_native: bool) {
        let Some(open) = self.open.as_mut() else {
            return;
        };
        if cpu <= open.cpu {
            // Not later than the last commit: keep the counters for the next split.
            return;
        }
        let delta = cpu - open.cpu;
        let b = bytecode_ns.saturating_sub(open.bytecode_ns);
        let n = native_ns.saturating_sub(open.native_ns);
        let [to_bytecode, to_native] = match (b, n) {
            (0, 0) if in_native => [0, delta],
            (0, 0) => [delta, 0],
            _ => split_two(delta, b, n),
        };
        self.java[0] += to_bytecode;
        self.java[1] += to_native;
        open.cpu = cpu;
        open.bytecode_ns = open.bytecode_ns.max(bytecode_ns);
        open.native_ns = open.native_ns.max(native_ns);
        self.cpu_seen = self.cpu_seen.max(cpu);
    }

    pub(super) fn name(&self) -> String {
        match &self.java_name {
            Some(name) => name.clone(),
            None if self.comm.is_empty() => format!("tid-{}", self.tid),
            None => self.comm.clone(),
        }
    }
}

/// Facts about a thread that decide its parts, beyond its name.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Story {
    /// One of nativeacct's threads.
    pub(super) agent: bool,
    /// The thread the VM was created on (it ran Agent_OnLoad and VMInit).
    pub(super) vm_main: bool,
    /// The process's first thread (tid = pid): the launcher, waiting for `main` to end.
    pub(super) first: bool,
}

/// Where one thread's CPU goes, besides its time inside contexts.
enum Placement {
    /// All of it, contexts included, to one part.
    Whole(Part),
    /// Its start-up before its first context, and its time outside contexts.
    Split { startup: Part, outside: Part },
}

fn placement(r: &Record, class: NameClass, story: Story) -> Placement {
    use Placement::{Split, Whole};
    let both = |part: Part| Split {
        startup: part,
        outside: part,
    };
    if story.agent {
        return Whole(Part::Agent);
    }
    match class {
        NameClass::Agent => Whole(Part::Agent),
        NameClass::JitCompiler => Whole(Part::JitCompiler),
        NameClass::Gc => Whole(Part::Gc),
        NameClass::VmOther => both(Part::VmOther),
        NameClass::JdkJava => both(Part::JavaBytecode),
        NameClass::Unknown if story.vm_main || story.first => both(Part::VmOther),
        NameClass::Unknown if r.had_context && r.began_native => both(Part::NativeThreads),
        // Started by the VM (Thread.start): its time outside the context is thread start-up and
        // teardown in the VM.
        NameClass::Unknown if r.had_context => both(Part::VmOther),
        // A thread libjvm started that never ran Java: a VM thread whose name the table lacks.
        NameClass::Unknown if r.started_by == Some(Origin::Vm) => both(Part::VmOther),
        NameClass::Unknown => both(Part::NativeThreads),
    }
}

/// The part of a thread's time outside contexts (its teardown after its exit probe, too).
pub(super) fn outside_part(r: &Record, class: NameClass, story: Story) -> Part {
    match placement(r, class, story) {
        Placement::Whole(part) => part,
        Placement::Split { outside, .. } => outside,
    }
}

/// The parts of one thread's CPU time: `(part, ns)` for Java bytecode, Java native, start-up, the
/// time outside contexts, and GC pauses run on it (`gc_pause_ns`, taken out of the time outside).
pub(super) fn attribute(
    r: &Record,
    class: NameClass,
    story: Story,
    gc_pause_ns: u64,
) -> [(Part, u64); 5] {
    let (startup, outside) = match placement(r, class, story) {
        Placement::Whole(part) => {
            let whole = r.java[0] + r.java[1] + r.startup_ns + r.outside_ns;
            return [
                (part, whole),
                (Part::JavaBytecode, 0),
                (Part::JavaNative, 0),
                (part, 0),
                (Part::Gc, 0),
            ];
        }
        Placement::Split { startup, outside } => (startup, outside),
    };
    let pause = gc_pause_ns.min(r.outside_ns);
    [
        (Part::JavaBytecode, r.java[0]),
        (Part::JavaNative, r.java[1]),
        (startup, r.startup_ns),
        (outside, r.outside_ns - pause),
        (Part::Gc, pause),
    ]
}
