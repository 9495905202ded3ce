//! Issue 4, every JDK class (sampled; scripts/compat-matrix loads all of them): under -Xverify:all
//! with the agent, a deterministic sample of the classes of every module of JDK 17's image loads and
//! links with no failure that does not also happen without the agent.

#[path = "compat/support.rs"]
mod support;

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::time::Duration;
use support::*;

const STRIDE: &str = "25";

fn failures(path: &Path) -> BTreeMap<String, String> {
    fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| {
            let mut parts = l.split('\t');
            Some((parts.next()?.to_string(), parts.next()?.to_string()))
        })
        .collect()
}

/// Runs EveryClass (with `extra_flag`) under -Xverify:all on every module, its failures listed in `out`;
/// asserts that it exited 0 (`what` says with or without the agent).
fn every_class(home: &Path, extra_flag: Option<&str>, out: &Path, what: &str) -> Run {
    let mut flags = vec!["-Xverify:all", "--add-modules", "ALL-SYSTEM"];
    flags.extend(extra_flag);
    let args = [STRIDE, out.to_str().unwrap()];
    let run = run_java(
        home,
        &program_args(home, &flags, "compat.EveryClass", &args),
        Duration::from_secs(600),
    );
    assert_eq!(run.code, Some(0), "EveryClass {what}: {}", run.describe());
    run
}

#[test]
fn sampled_jdk17_classes_load_and_verify_under_the_agent() {
    let home = jdk_home(17).unwrap();
    let report = scratch("everyclass.json");
    let with_agent = scratch("failures-agent.txt");
    // Every class through the rewriter: wrap mode (bind mode changes no class).
    let flag = agent_flag(&report, "j2n=wrap");
    let run = every_class(&home, Some(&flag), &with_agent, "with the agent");
    eprintln!("{}", run.stdout.trim());
    let summary = run
        .stdout
        .lines()
        .find(|l| l.starts_with("everyclass: attempted"))
        .expect("summary line");
    let agent_failures = failures(&with_agent);
    if !agent_failures.is_empty() {
        let without = scratch("failures-plain.txt");
        every_class(&home, None, &without, "without the agent");
        let jdk_failures = failures(&without);
        let caused: Vec<_> = agent_failures
            .iter()
            .filter(|(c, kind)| jdk_failures.get(*c) != Some(kind))
            .collect();
        eprintln!(
            "{} failures also happen without the agent (not the agent's)",
            jdk_failures.len()
        );
        assert!(
            caused.is_empty(),
            "failures caused by the agent ({summary}): {caused:#?}"
        );
    }
    let report =
        parse_json(&fs::read_to_string(&report).expect("agent report")).expect("report JSON");
    let rewritten = int_field(&report, "classes_rewritten");
    let wrapped = int_field(&report, "natives_wrapped");
    eprintln!("classes_rewritten {rewritten}, natives_wrapped {wrapped}");
    assert!(
        rewritten > 0 && wrapped >= rewritten,
        "classes_rewritten {rewritten}, natives_wrapped {wrapped}"
    );
}
