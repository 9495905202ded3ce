#!/usr/bin/env python3
"""Thread-churn benchmark: runs Churn.java without the agent, with an empty JVMTI agent (HotSpot's floor,
bare and with empty thread events, --floor), and with the agent (in each configuration asked
for, --config and --compare) as given and wrapping no native
method (the thread lifecycle alone: start, end, merge), interleaved, and prints the CPU and wall time
the agent adds per thread lifetime and the process RSS at 1,000 threads and at the last thread. The
agent's report is checked for exact counts. Started by scripts/bench-churn, which compiles Churn.java
first."""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import jvm_runs  # noqa: E402  (bench/jvm_runs.py)

TARGET_US = 10.0
# A fixed, pre-touched heap, so that the RSS difference is the agent's and not the collector's mood.
HEAP = ["-Xms64m", "-Xmx64m", "-XX:+AlwaysPreTouch"]


def churn_command(java: str, build: Path, agent: Path | None, opts: str, report: Path, threads: int,
                  parallel: int, calls: int, floor: Path | None = None, pin: str = "") -> list[str]:
    cmd = (["taskset", "-c", pin] if pin else []) + [java, *HEAP, "-cp", str(build)]
    if floor is not None:
        # The empty agent: no report, its only option says whether it enables the thread events.
        cmd.append(f"-agentpath:{floor}={opts}")
    elif agent is not None:
        cmd.append(jvm_runs.agentpath(agent, report, opts))
    return cmd + ["Churn", str(threads), str(parallel), str(calls)]


def run_once(java: str, build: Path, agent: Path | None, opts: str, report: Path, threads: int,
             parallel: int, calls: int, floor: Path | None = None, pin: str = "") -> dict:
    cmd = churn_command(java, build, agent, opts, report, threads, parallel, calls, floor, pin)
    return parse_churn(cmd, jvm_runs.run_jvm(cmd, "bench-churn").stdout)


def parse_churn(cmd: list[str], stdout: str) -> dict:
    out: dict = {"checkpoints": [], "command": " ".join(cmd)}
    for line in stdout.splitlines():
        parts = line.split()
        if parts and parts[0] == "checkpoint":
            out["checkpoints"].append([int(p) for p in parts[1:]])
        elif parts and parts[0] == "calls":
            out["calls"] = int(parts[1])
    return out


def check_report(report: Path, threads: int, deflate_calls: int, calls: int) -> str:
    """The agent must have seen and merged every thread and counted every native call exactly."""
    data = json.loads(report.read_text())
    by_name = {m["name"]: m["calls"] for m in data["native_methods"] if m["class"] == "java/util/zip/Deflater"}
    problems = []
    if data["threads"] != data["threads_merged"]:
        problems.append(f"{data['threads']} threads seen, {data['threads_merged']} merged")
    if data["threads"] < threads:
        problems.append(f"{data['threads']} threads < {threads}")
    # Each worker creates `calls` Deflaters (init and end once each) and deflates `deflate_calls` times
    # in all; the main thread makes none.
    for name, want in (("init", threads * calls), ("end", threads * calls), ("deflateBytesBytes", deflate_calls)):
        if by_name.get(name) != want:
            problems.append(f"Deflater.{name} {by_name.get(name)} != {want}")
    status = "counts exact" if not problems else "COUNTS WRONG: " + "; ".join(problems)
    return f"agent report: {data['threads']} threads, clock {data['clock']}: {status}"


def load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def main() -> int:
    p = jvm_runs.parser("scripts/bench-churn")
    p.add_argument("--threads", type=int, default=100_000)
    p.add_argument("--parallel", type=int, default=8)
    p.add_argument("--calls", type=int, default=4, help="Deflaters per thread")
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--config", action="append", default=[], metavar="NAME=OPTIONS",
                   help="another configuration of the agent, e.g. 'no sampler=boundary=off'")
    p.add_argument("--compare", action="append", default=[], metavar="NAME=PATH[@OPTIONS]",
                   help="another agent build (e.g. an earlier commit's), run with the same options "
                        "(plus OPTIONS)")
    p.add_argument("--floor", type=Path, help="the empty JVMTI agent (bench/churn/empty_agent.c): "
                   "HotSpot's own cost of an agent, bare and with empty ThreadStart/ThreadEnd callbacks")
    p.add_argument("--pin", default="", metavar="CPUS",
                   help="run every JVM on these CPUs only (taskset -c CPUS, e.g. 1): no cross-CPU "
                        "wake-ups or TLB shootdowns, so runs spread far less")
    p.add_argument("--paired", action="store_true",
                   help="run each configuration at the same time as a run without the agent, one on CPU 0 "
                        "and one on CPU 1 (swapped every rep), and report the differences of the pairs: the "
                        "host's slow spells hit both sides alike (needs 2 CPUs; not with --pin)")
    args = p.parse_args()
    if args.paired and args.pin:
        p.error("--paired pins the two JVMs of a pair itself; leave out --pin")

    report = args.build / "agent-report.json"
    # Each agent configuration runs twice: as given ("agent") and wrapping no native method ("lifecycle":
    # an include pattern that matches no class, so the agent runs, every thread gets its context, and
    # no native is wrapped).
    agents: dict[str, tuple[Path, str]] = {"default": (args.agent, args.agent_opts)}
    for spec in args.config:
        name, _, opts = spec.partition("=")
        agents[name] = (args.agent, ",".join(o for o in (opts, args.agent_opts) if o))
    for spec in args.compare:
        name, _, rest = spec.partition("=")
        path, _, opts = rest.partition("@")
        agents[name] = (Path(path).resolve(), ",".join(o for o in (opts, args.agent_opts) if o))
    configs: dict[str, tuple[Path | None, str]] = {"none": (None, "")}
    for name, (agent, opts) in agents.items():
        configs[f"{name}/agent"] = (agent, opts)
        configs[f"{name}/lifecycle"] = (agent, ",".join(o for o in (opts, "include=no/such/Class") if o))
    # HotSpot's floor: what a JVMTI environment costs a thread before any agent code runs.
    floors = {"floor/bare": "bare", "floor/events": "events"} if args.floor else {}
    for config, opts in floors.items():
        configs[config] = (args.floor, opts)
    if args.paired:
        return paired(args, configs, floors, report)
    runs: dict[str, list[dict]] = {config: [] for config in configs}
    notes = []
    loads = [load_average()]
    for rep, config in jvm_runs.interleaved("bench-churn", args.reps, list(configs), report):
        agent, opts = configs[config]
        result = run_once(args.java, args.build, agent, opts, report, args.threads, args.parallel,
                          args.calls, floor=agent if config in floors else None, pin=args.pin)
        runs[config].append(result)
        if config.endswith("/agent"):
            note = f"{config.removesuffix('/agent')}: " + check_report(report, args.threads, result["calls"], args.calls)
            if rep == 1 or "WRONG" in note:
                notes.append(note)
            print(f"bench-churn: {note}", file=sys.stderr)
        loads.append(load_average())

    measured = args.threads - min(1000, args.threads)

    def per_thread(config: str, index: int) -> float:
        return statistics.median(r["checkpoints"][-1][index] for r in runs[config]) / measured / 1000.0

    def fastest(config: str) -> float:
        return min(r["checkpoints"][-1][1] for r in runs[config]) / measured / 1000.0

    def rss_mb(config: str, checkpoint: int) -> float:
        return statistics.median(r["checkpoints"][checkpoint][3] for r in runs[config]) / 1024.0

    def growth(config: str) -> float:
        return (rss_mb(config, -1) - rss_mb(config, 0)) - (rss_mb("none", -1) - rss_mb("none", 0))

    print(f"Thread churn: {args.threads:,} threads, {args.parallel} at a time, {args.calls} Deflaters each; "
          f"median of {args.reps} runs, interleaved; load average (1, 5, 15 min) {loads[0]} before, "
          f"{loads[-1]} after" + (f"; every JVM pinned to CPUs {args.pin}" if args.pin else ""))
    print()
    print("| per thread lifetime (threads 1,001 to the last) | no agent | agent | added "
          "| agent wrapping nothing | added |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, (_, opts) in agents.items():
        for label, index in (("CPU", 1), ("wall", 2)):
            none, agent, life = (per_thread(c, index) for c in ("none", f"{name}/agent", f"{name}/lifecycle"))
            print(f"| {name} ({opts or 'default options'}): {label} time (µs) | {none:.1f} | {agent:.1f} "
                  f"| {agent - none:+.1f} | {life:.1f} | {life - none:+.1f} |")
    if floors:
        print()
        print("| HotSpot's floor: an empty JVMTI agent (bench/churn/empty_agent.c) | no agent | empty agent "
              "| added | empty agent with empty ThreadStart/ThreadEnd | added |")
        print("|---|---:|---:|---:|---:|---:|")
        for label, index in (("CPU", 1), ("wall", 2)):
            none, bare, events = (per_thread(c, index) for c in ("none", "floor/bare", "floor/events"))
            print(f"| {label} time (µs) | {none:.1f} | {bare:.1f} | {bare - none:+.1f} | {events:.1f} "
                  f"| {events - none:+.1f} |")
    print()
    print("| RSS (MiB) | no agent | " + " | ".join(agents) + " |")
    print("|---|---:|" + "---:|" * len(agents))
    first = runs["none"][0]["checkpoints"][0][0]
    last = runs["none"][0]["checkpoints"][-1][0]
    for label, checkpoint in ((f"at {first:,} threads", 0), (f"at {last:,} threads", -1)):
        cells = " | ".join(f"{rss_mb(f'{n}/agent', checkpoint):.1f}" for n in agents)
        print(f"| {label} | {rss_mb('none', checkpoint):.1f} | {cells} |")
    print()
    for name in agents:
        print(f"{name}: added per thread lifetime {per_thread(f'{name}/agent', 1) - per_thread('none', 1):+.1f} µs CPU "
              f"with its native calls, {per_thread(f'{name}/lifecycle', 1) - per_thread('none', 1):+.1f} µs for "
              f"start, end and merge alone (target ≤ {TARGET_US:.0f} µs); agent's RSS growth from {first:,} to "
              f"{last:,} threads: {growth(f'{name}/agent'):+.1f} MiB")
        if args.reps > 1:
            # The host only ever adds time to a run: the fastest runs are the least disturbed.
            print(f"{name}: fastest run against fastest run: {fastest(f'{name}/agent') - fastest('none'):+.1f} µs "
                  f"CPU with its native calls, {fastest(f'{name}/lifecycle') - fastest('none'):+.1f} µs lifecycle "
                  f"alone")
        if floors:
            print(f"{name}: above HotSpot's floor (the empty agent with thread events): "
                  f"{per_thread(f'{name}/agent', 1) - per_thread('floor/events', 1):+.1f} µs CPU with its "
                  f"native calls, {per_thread(f'{name}/lifecycle', 1) - per_thread('floor/events', 1):+.1f} "
                  f"µs lifecycle alone")
    print("runs (CPU µs per thread, in order): " + "; ".join(
        f"{c} " + " ".join(f"{r['checkpoints'][-1][1] / measured / 1000.0:.1f}" for r in runs[c]) for c in configs))
    for note in notes:
        print(note)
    return 1 if any("WRONG" in n for n in notes) else 0


def paired(args, configs: dict, floors: dict, report: Path) -> int:
    """`--paired`: each configuration beside a run without the agent, on the other CPU."""
    measured = args.threads - min(1000, args.threads)
    added: dict[str, list[float]] = {config: [] for config in configs if config != "none"}
    notes = []
    for rep, config in jvm_runs.interleaved("bench-churn", args.reps, list(added), report):
        agent, opts = configs[config]
        cpus = ("0", "1") if rep % 2 == 0 else ("1", "0")
        cmds = [churn_command(args.java, args.build, agent, opts, report, args.threads, args.parallel, args.calls,
                              floor=agent if config in floors else None, pin=cpus[0]),
                churn_command(args.java, args.build, None, "", report, args.threads, args.parallel, args.calls,
                              pin=cpus[1])]
        with_config, without = (parse_churn(r.args, r.stdout) for r in jvm_runs.run_jvms_beside(cmds, "bench-churn"))
        added[config].append((with_config["checkpoints"][-1][1] - without["checkpoints"][-1][1]) / measured / 1000.0)
        if config.endswith("/agent"):
            note = f"{config.removesuffix('/agent')}: " + check_report(report, args.threads, with_config["calls"],
                                                                     args.calls)
            if rep == 1 or "WRONG" in note:
                notes.append(note)
    print(f"Thread churn, paired: {args.threads:,} threads, {args.parallel} at a time, {args.calls} Deflaters "
          f"each; each configuration ran at the same time as a run without the agent (CPUs 0 and 1, swapped "
          f"every rep), {args.reps} pairs each; CPU time added per thread lifetime (threads 1,001 to the "
          f"last), mean ± standard error of the pairs' differences (target ≤ {TARGET_US:.0f} µs)")
    print()
    print("| configuration | added CPU (µs) | pairs |")
    print("|---|---:|---|")
    for config, diffs in added.items():
        error = statistics.stdev(diffs) / len(diffs) ** 0.5 if len(diffs) > 1 else float("nan")
        print(f"| {config} | {statistics.mean(diffs):+.1f} ± {error:.1f} | "
              + " ".join(f"{d:+.1f}" for d in diffs) + " |")
    for note in notes:
        print(note)
    return 1 if any("WRONG" in n for n in notes) else 0


if __name__ == "__main__":
    sys.exit(main())
