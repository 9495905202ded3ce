#!/usr/bin/env python3
"""Start-up benchmark: wall time of an empty `main` without the agent, with it in each J2N mode, and
with -Xshare:off (what turning CDS off costs alone), interleaved, medians of --runs each. Started by
scripts/bench-startup, which compiles the empty class first."""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

TARGET_RATIO = 1.15


def main() -> int:
    p = argparse.ArgumentParser(prog="scripts/bench-startup")
    p.add_argument("--java", required=True)
    p.add_argument("--agent", type=Path, required=True)
    p.add_argument("--classes", type=Path, required=True)
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--spaced", type=float, default=0.0,
                   help="seconds of idle before each JVM (over 1 s: the kernel has switched its perf "
                        "hooks off again, so each run pays for the first perf event as a lone start would)")
    args = p.parse_args()
    agent = f"-agentpath:{args.agent}=quiet"
    configs = {
        "none": [],
        "agent (default: j2n=bind)": [agent],
        "agent j2n=wrap": [agent + ",j2n=wrap"],
        "-Xshare:off, no agent": ["-Xshare:off"],
    }
    times: dict[str, list[float]] = {name: [] for name in configs}
    for run in range(args.runs):
        print(f"bench-startup: run {run + 1}/{args.runs}", file=sys.stderr, flush=True)
        for name, extra in configs.items():
            cmd = [args.java, *extra, "-cp", str(args.classes), "Empty"]
            if args.spaced:
                time.sleep(args.spaced)
            start = time.perf_counter()
            done = subprocess.run(cmd, capture_output=True)
            elapsed = time.perf_counter() - start
            if done.returncode != 0:
                raise SystemExit(f"bench-startup: {' '.join(cmd)} failed:\n{done.stderr.decode()[-2000:]}")
            times[name].append(elapsed)
    base = statistics.median(times["none"])
    spacing = f", {args.spaced:g} s idle before each" if args.spaced else ", back to back"
    print(f"Empty main, wall time, median of {args.runs} interleaved runs each{spacing}")
    print()
    print("| configuration | median (s) | min (s) | × none |")
    print("|---|---:|---:|---:|")
    for name, values in times.items():
        median = statistics.median(values)
        print(f"| {name} | {median:.4f} | {min(values):.4f} | {median / base:.3f} |")
    ratio = statistics.median(times["agent (default: j2n=bind)"]) / base
    verdict = "met" if ratio <= TARGET_RATIO else "not met"
    print()
    print(f"default agent: {ratio:.3f} × the run without it; target ≤ {TARGET_RATIO}: {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
