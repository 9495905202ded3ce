//! `nativeacct attach PID` into a JVM started without the agent, then `dump` and `detach`, on JDK
//! 11/17/21/25 where installed: JNI upcalls and native calls from the attach on are counted
//! exactly (the workload counts its own), the natives bound before the attach are covered or
//! listed with a reason, and the program's stdout is only its own.

#[path = "control/support.rs"]
mod support;

use support::*;

fn check_attach(feature: u32) {
    let Some(home) = jdk_or_skip(feature, "attach") else {
        return;
    };
    let dir = scratch(&format!("attach-{feature}"));
    let mut service = Service::start(&home, &[], &["4", "1000", "40"], &dir);
    let pid = service.pid().to_string();
    service.ready();
    service.go();
    // Phase 1 ran without the agent: spin() and the other natives are bound by now.
    let t1 = service.ready();
    let attach = nativeacct_ok(&dir, &["attach", &pid]);
    let said = String::from_utf8_lossy(&attach.stderr);
    if feature >= 21 {
        assert!(said.contains("EnableDynamicAgentLoading"), "{said}");
    } else {
        assert!(!said.contains("EnableDynamicAgentLoading"), "{said}");
    }
    service.go();
    let t2 = service.ready();
    nativeacct_ok(&dir, &["dump", &pid, "file=dump.json"]);
    service.go();
    let t3 = service.ready();
    let detach = stderr_of(&nativeacct_ok(&dir, &["detach", &pid, "file=final.json"]));
    assert!(detach.contains("final.json"), "{detach}");
    // A phase after the detach: pass-through trampolines and the VM's own JNI table.
    let (t4, stdout, _) = service.finish_after_phase();
    // Only the program's own lines on stdout.
    let expected: Vec<String> = (0..=4)
        .map(|i| format!("READY {i} "))
        .chain(std::iter::once(format!("DONE ticks={}", t4.upcalls)))
        .collect();
    assert_eq!(stdout.len(), expected.len(), "{stdout:?}");
    for (line, start) in stdout.iter().zip(&expected) {
        assert!(line.starts_with(start.as_str()), "{stdout:?}");
    }
    // Detach took the final report: nothing is written at VM death.
    assert!(!dir.join(format!("nativeacct-{pid}.json")).exists());

    let dump = read_json(&dir.join("dump.json"));
    assert_eq!(dump["written_at"], "dump");
    assert_window_counts(&dump, &t2.since(&t1), "since the attach");

    let last = read_json(&dir.join("final.json"));
    assert_eq!(last["written_at"], "detach");
    let since = t3.since(&t1);
    let worker = thread(&last, "worker");
    assert_eq!(u(&worker["jni_calls"]), since.upcalls);
    assert_eq!(service_calls(&last, "spin"), since.calls);
    let coverage = &last["attach"];
    let uncovered: Vec<&str> = coverage["not_covered_methods"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap())
        .collect();
    assert!(
        uncovered.iter().all(|m| !m.starts_with("Service.")),
        "the program's natives bound before the attach are covered: {uncovered:?}"
    );
    assert!(u(&coverage["covered_by_rebind"]) >= 3, "{coverage}");
    assert!(u(&coverage["natives_at_attach"]) > 100, "{coverage}");
    assert_eq!(
        u(&coverage["not_covered"]),
        coverage["not_covered_by_reason"]
            .as_object()
            .unwrap()
            .values()
            .map(u)
            .sum::<i64>()
    );
    let cpu = u(&worker["bytecode_ns"]) + u(&worker["native_ns"]);
    let (measured, expected) = (native_pct(worker), since.native_pct());
    println!(
        "JDK {feature}: attach coverage {}; worker cpu {cpu} ns (truth {}), native {measured:.2} % (truth {expected:.2} %)",
        serde_json::json!({
            "natives_at_attach": coverage["natives_at_attach"],
            "covered_by_rebind": coverage["covered_by_rebind"],
            "covered_in_place": coverage["covered_in_place"],
            "not_bound_yet": coverage["not_bound_yet"],
            "not_covered_by_reason": coverage["not_covered_by_reason"],
        }),
        since.cpu_ns
    );
    assert!(
        (measured - expected).abs() <= 1.0,
        "split {measured:.2} % vs truth {expected:.2} %"
    );
    assert!(
        (cpu - since.cpu_ns).abs() as f64 / (since.cpu_ns as f64) < 0.05,
        "worker CPU since the attach {cpu} ns vs truth {} ns",
        since.cpu_ns
    );
    // The process section starts at the attach too.
    let process_cpu = u(&last["process"]["cpu_ns"]);
    assert!(
        process_cpu < since.cpu_ns * 13 / 10,
        "process CPU {process_cpu} ns covers more than the time since the attach"
    );
}

#[test]
fn attach_jdk17() {
    check_attach(17);
}

#[test]
fn attach_other_jdks() {
    for feature in FEATURES.into_iter().filter(|&f| f != 17) {
        check_attach(feature);
    }
}

/// What attach and detach refuse: a process that is not a JVM (it must not get SIGQUIT), a JVM
/// that has the agent already (the JVM goes on, its output unchanged), a second attach, a
/// detach from an agent loaded at start-up, and a process with libjvm that would not survive SIGQUIT.
#[test]
fn attach_refusals() {
    let dir = scratch("refusals");
    // Not timed: the first agent_path() may build the agent, which takes a while on a busy host.
    let mut sleeper = std::process::Command::new("sleep")
        .arg("600")
        .spawn()
        .unwrap();
    let said = nativeacct_fails(&dir, &["attach", &sleeper.id().to_string()]);
    assert!(said.contains("not a HotSpot JVM"));
    assert!(
        sleeper.try_wait().unwrap().is_none(),
        "the process was not signalled"
    );
    let _ = sleeper.kill();
    let _ = sleeper.wait();

    let home = java_home();
    let report = dir.join("with-agent.json");
    let agent = agent_to(&report, ",quiet");
    let mut service = Service::start(&home, &[agent], &ONE_SHORT_PHASE, &dir);
    let pid = service.pid().to_string();
    service.ready();
    let said = nativeacct_fails(&dir, &["attach", &pid]);
    assert!(said.contains("did not start"), "{said}");
    let said = nativeacct_fails(&dir, &["detach", &pid]);
    assert!(said.contains("loaded at start-up"), "{said}");
    let (t1, stdout, stderr) = service.finish_after_phase();
    assert_eq!(stdout.len(), 3, "{stdout:?}");
    assert!(stderr.contains("already loaded"), "{stderr}");
    let last = read_json(&report);
    assert_eq!(u(&thread(&last, "worker")["jni_calls"]), t1.upcalls);

    // libjvm mapped but no VM yet (a JVM still starting looks the same): no SIGQUIT handler, so
    // the signal would end the process. It is not sent.
    let source = dir.join("holds_libjvm.c");
    std::fs::write(
        &source,
        "#include <dlfcn.h>\n#include <stdio.h>\n#include <unistd.h>\n\
         int main(int c, char **v) { if (!dlopen(v[1], RTLD_NOW)) return 2;\n\
         puts(\"LOADED\"); fflush(stdout); sleep(600); return 0; }\n",
    )
    .unwrap();
    let holder = dir.join("holds_libjvm");
    let built = std::process::Command::new("gcc")
        .arg("-o")
        .arg(&holder)
        .arg(&source)
        .arg("-ldl")
        .status()
        .unwrap();
    assert!(built.success());
    let mut process = std::process::Command::new(&holder)
        .arg(home.join("lib/server/libjvm.so"))
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(process.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    assert_eq!(line, "LOADED\n");
    // A socket file left at its attach path by an earlier process with the same pid, with no
    // listener: not taken for the JVM's.
    let stale = std::path::PathBuf::from(format!("/tmp/.java_pid{}", process.id()));
    let _ = std::fs::remove_file(&stale);
    drop(std::os::unix::net::UnixListener::bind(&stale).unwrap());
    let said = nativeacct_fails(&dir, &["attach", &process.id().to_string()]);
    let _ = std::fs::remove_file(&stale);
    assert!(said.contains("does not handle SIGQUIT"), "{said}");
    assert!(
        process.try_wait().unwrap().is_none(),
        "it was not signalled"
    );
    let _ = process.kill();
    let _ = process.wait();

    let mut service = Service::start(&home, &[], &ONE_SHORT_PHASE, &dir);
    let pid = service.pid().to_string();
    service.ready();
    nativeacct_ok(&dir, &["attach", &pid]);
    let out = nativeacct(&dir, &["attach", &pid]);
    assert!(!out.status.success(), "a second attach fails");
    let (_, stdout, _) = service.finish_after_phase();
    assert_eq!(stdout.len(), 3, "{stdout:?}");
}
