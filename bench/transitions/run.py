#!/usr/bin/env python3
"""Runs the transition microbenchmark (Transitions.java + transitions.c) without and with the agent,
interleaved, and prints the nanoseconds the agent adds per wrapped native call (J2N) and per intercepted JNI
upcall (N2J). Started by scripts/bench-transitions, which builds the Java and C parts first."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

TARGET_NS = 25.0
J2N_CASES = ("j2n-static", "j2n-instance")
N2J_CASES = ("n2j-static", "n2j-static-a", "n2j-virtual")


# Floor configurations (--floor): the agent built with the bench-floor feature, told to cut every
# transition short after doing only part of its work.
FLOORS = {"floor-empty": "empty", "floor-clock": "clock"}


def run_once(java: str, build: Path, agent: Path | None, opts: str, report: Path, n: int, warmup: int,
             floor: str | None = None) -> dict:
    cmd = [java, f"-Djava.library.path={build}", "-cp", str(build)]
    if agent is not None:
        options = [f"file={report}", "format=json", "quiet"] + ([opts] if opts else [])
        cmd.append(f"-agentpath:{agent}={','.join(options)}")
    cmd += ["Transitions", str(n), str(warmup)]
    env = dict(os.environ)
    env.pop("NATIVEACCT_BENCH_FLOOR", None)
    if floor is not None:
        env["NATIVEACCT_BENCH_FLOOR"] = floor
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        raise SystemExit(f"bench-transitions: failed (exit {r.returncode}):\n  {' '.join(cmd)}\n{r.stderr[-2000:]}")
    cases = {}
    for line in r.stdout.splitlines():
        parts = line.split()
        if len(parts) == 5 and parts[0] == "case":
            cases[parts[1]] = {"wall": float(parts[3]), "cpu": float(parts[4])}
    return {"cases": cases, "command": " ".join(cmd)}


def check_report(report: Path, n: int, warmup: int) -> str:
    """The agent must really have counted the crossings, or the added time means nothing."""
    data = json.loads(report.read_text())
    per_case = n + (warmup // 5) * 5
    want_native = per_case * len(J2N_CASES)
    want_jni = per_case * len(N2J_CASES)
    problems = []
    if data.get("native_calls", 0) < want_native:
        problems.append(f"native_calls {data.get('native_calls')} < {want_native}")
    if data.get("jni_calls", 0) < want_jni:
        problems.append(f"jni_calls {data.get('jni_calls')} < {want_jni}")
    by_function = data.get("jni_calls_by_function") or {}
    for function in ("CallStaticIntMethod", "CallStaticIntMethodA", "CallIntMethod"):
        if function in by_function and by_function[function] < per_case:
            problems.append(f"{function} {by_function[function]} < {per_case}")
    status = "counts ok" if not problems else "COUNTS WRONG: " + "; ".join(problems)
    return (f"agent report: native_calls {data.get('native_calls')}, jni_calls {data.get('jni_calls')}, "
            f"clock {data.get('clock')}: {status}")


def main() -> int:
    p = argparse.ArgumentParser(prog="scripts/bench-transitions")
    p.add_argument("--build", type=Path, required=True)
    p.add_argument("--java", default="java")
    p.add_argument("--agent", type=Path, required=True)
    p.add_argument("--agent-opts", default="")
    p.add_argument("--iterations", type=int, default=50_000_000)
    p.add_argument("--warmup", type=int, default=5_000_000)
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--metric", choices=["cpu", "wall"], default="cpu")
    p.add_argument("--floor-agent", type=Path, help="the agent built with --features bench-floor: adds the "
                   "floor configurations that split the added cost into crossing, clock reads and bookkeeping")
    args = p.parse_args()

    configs = ["none", "agent"] + (list(FLOORS) if args.floor_agent else [])
    samples: dict[str, dict[str, list[float]]] = {config: {} for config in configs}
    report = args.build / "agent-report.json"
    notes = []
    for rep in range(1, args.reps + 1):
        for config in configs:
            print(f"bench-transitions: rep {rep}/{args.reps} {config} ...", file=sys.stderr, flush=True)
            if report.exists():
                report.unlink()
            agent = {"none": None, "agent": args.agent}.get(config, args.floor_agent)
            result = run_once(args.java, args.build, agent, args.agent_opts, report, args.iterations, args.warmup,
                              FLOORS.get(config))
            for name, values in result["cases"].items():
                samples[config].setdefault(name, []).append(values[args.metric])
            if config == "agent":
                if not report.exists():
                    raise SystemExit(f"bench-transitions: the agent wrote no report:\n  {result['command']}")
                note = check_report(report, args.iterations, args.warmup)
                if rep == 1 or "WRONG" in note:
                    notes.append(note)
                    print(f"bench-transitions: {note}", file=sys.stderr)

    print(f"Transition cost, {args.iterations:,} crossings per case, median of {args.reps} runs "
          f"({args.metric} ns per crossing; agent options: {args.agent_opts or 'default'})")
    print()
    print("| case | no agent (ns) | agent (ns) | added (ns) | target |")
    print("|---|---:|---:|---:|---|")
    added_by_kind: dict[str, list[float]] = {"j2n": [], "n2j": []}
    for name in (*J2N_CASES, *N2J_CASES):
        if name not in samples["none"] or name not in samples["agent"]:
            continue
        none = statistics.median(samples["none"][name])
        agent = statistics.median(samples["agent"][name])
        added = agent - none
        added_by_kind[name[:3]].append(added)
        verdict = "ok" if added <= TARGET_NS else "over"
        print(f"| {name} | {none:.1f} | {agent:.1f} | {added:+.1f} | ≤ {TARGET_NS:.0f} ns: {verdict} |")
    print()
    for kind, label in (("j2n", "per wrapped native call"), ("n2j", "per intercepted JNI upcall")):
        if added_by_kind[kind]:
            # The first case of each kind is the headline (static native / CallStaticIntMethod).
            print(f"added {label}: {added_by_kind[kind][0]:+.1f} ns "
                  f"(worst of the {len(added_by_kind[kind])} {kind.upper()} cases {max(added_by_kind[kind]):+.1f} ns)")
    if args.floor_agent:
        print_floor(samples)
    for note in notes:
        print(note)
    # Over-target numbers are a result, not an error; wrong counts are an error.
    return 1 if any("WRONG" in n for n in notes) else 0


def print_floor(samples: dict[str, dict[str, list[float]]]) -> None:
    """Where the added cost goes: the crossing the instrumentation itself adds (J2N: the wrapper and its
    two helper natives; N2J: the hook calls), the two clock reads, and the agent's bookkeeping."""
    print()
    print("Where the added cost goes (medians; floor-empty = hooks return at once, floor-clock = they only "
          "read the clock):")
    print()
    print("| case | added (ns) | crossing: floor-empty − none | clock reads: floor-clock − floor-empty "
          "| bookkeeping: agent − floor-clock |")
    print("|---|---:|---:|---:|---:|")
    for name in (*J2N_CASES, *N2J_CASES):
        if not all(name in samples[config] for config in samples):
            continue
        m = {config: statistics.median(values[name]) for config, values in samples.items()}
        print(f"| {name} | {m['agent'] - m['none']:+.1f} | {m['floor-empty'] - m['none']:+.1f} "
              f"| {m['floor-clock'] - m['floor-empty']:+.1f} | {m['agent'] - m['floor-clock']:+.1f} |")


if __name__ == "__main__":
    sys.exit(main())
