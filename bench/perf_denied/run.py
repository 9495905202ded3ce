#!/usr/bin/env python3
"""Whole-program cost of the agent with and without perf events: a crossing-heavy JNA program (libc's
qsort calling a Java comparator back, JnaSort.java) run without the agent, with it (perf events allowed:
clock=auto picks tsc-hybrid), with it under scripts/deny-perf (perf_event_open fails with EPERM, as in a
container: auto picks tsc-gated), and with clock=thread-cputime (what auto fell back to before tsc-gated),
interleaved. Reports medians of wall time and of the process's user + system CPU time, and the CPU each
agent configuration adds. Started by scripts/bench-perf-denied, which builds JnaSort first."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import jvm_runs  # noqa: E402  (bench/jvm_runs.py)

JNA_JAR = "/usr/share/java/jna.jar"
CONFIGS = ("none", "perf", "denied", "thread-cputime")
LABELS = {
    "none": "no agent",
    "perf": "agent, perf allowed",
    "denied": "agent, perf denied (EPERM)",
    "thread-cputime": "agent, clock=thread-cputime",
}
TARGET_DENIED_RATIO = 1.5


def run_once(args, config: str, report: Path) -> tuple[float, float, str]:
    cmd = [args.java, "-cp", f"{JNA_JAR}:{args.build}"]
    if config != "none":
        opts = "clock=thread-cputime" if config == "thread-cputime" else ""
        opts = ",".join(o for o in (opts, args.agent_opts) if o)
        cmd.append(jvm_runs.agentpath(args.agent, report, opts, extra=("format=json",)))
    cmd += ["JnaSort", str(args.rounds), str(args.n)]
    if config == "denied":
        cmd = [str(args.deny_perf), "EPERM", *cmd]
    start = time.monotonic()
    process = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.monotonic() - start
    out, err = process.stdout.read(), process.stderr.read()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"bench-perf-denied: failed:\n  {' '.join(cmd)}\n{err[-2000:]}")
    clock = ""
    if config != "none":
        clock = json.loads(report.read_text()).get("clock", "?")
    return wall, usage.ru_utime + usage.ru_stime, f"{out.strip()}, clock {clock or '-'}"


def main() -> int:
    p = jvm_runs.parser("scripts/bench-perf-denied")
    p.add_argument("--deny-perf", type=Path, required=True)
    p.add_argument("--rounds", type=int, default=20)
    p.add_argument("--n", type=int, default=20_000)
    p.add_argument("--reps", type=int, default=3)
    args = p.parse_args()
    report = args.build / "agent-report.json"
    walls: dict[str, list[float]] = {c: [] for c in CONFIGS}
    cpus: dict[str, list[float]] = {c: [] for c in CONFIGS}
    seen: dict[str, str] = {}
    for _, config in jvm_runs.interleaved("bench-perf-denied", args.reps, CONFIGS, report):
        wall, cpu, what = run_once(args, config, report)
        walls[config].append(wall)
        cpus[config].append(cpu)
        seen[config] = what
    print(f"JnaSort {args.rounds} rounds of qsort over {args.n:,} ints with a JNA comparator; medians of "
          f"{args.reps} interleaved runs; load average at the end {os.getloadavg()[0]:.1f}")
    print()
    print("| configuration | wall s | user + sys CPU s | added CPU | what it printed |")
    print("|---|---:|---:|---:|---|")
    base = statistics.median(cpus["none"])
    added = {}
    for config in CONFIGS:
        cpu = statistics.median(cpus[config])
        added[config] = cpu - base
        extra = "" if config == "none" else f"{100 * (cpu - base) / base:+.1f} %"
        print(f"| {LABELS[config]} | {statistics.median(walls[config]):.2f} | {cpu:.2f} | {extra} | {seen[config]} |")
    print()
    if added["perf"] > 0:
        ratio = added["denied"] / added["perf"]
        verdict = "met" if ratio <= TARGET_DENIED_RATIO else "not met"
        print(f"added CPU with perf denied = {ratio:.2f} × the added CPU with perf; target ≤ {TARGET_DENIED_RATIO} ×: "
              f"{verdict}")
    wrong = [c for c, w in seen.items() if c == "denied" and "tsc-gated" not in w]
    if wrong:
        print(f"WRONG CLOCK with perf denied: {seen['denied']}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
