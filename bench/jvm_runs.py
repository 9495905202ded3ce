"""What the Python benchmark runners (bench/*/run.py) share: the command-line options every runner
takes, the -agentpath option, and running JVMs (one, or several at once) with their failures reported."""

from __future__ import annotations

import argparse
import contextlib
import subprocess
import tempfile
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path


def parser(prog: str) -> argparse.ArgumentParser:
    """An argument parser with the options of every runner: --build, --java, --agent, --agent-opts."""
    p = argparse.ArgumentParser(prog=prog)
    p.add_argument("--build", type=Path, required=True)
    p.add_argument("--java", default="java")
    p.add_argument("--agent", type=Path, required=True)
    p.add_argument("--agent-opts", default="")
    return p


def agentpath(agent: Path, report: Path, opts: str, extra: tuple[str, ...] = ()) -> str:
    """-agentpath with the report written to `report`, `extra` options, quiet, then the user's `opts`."""
    options = [f"file={report}", *extra, "quiet"] + ([opts] if opts else [])
    return f"-agentpath:{agent}={','.join(options)}"


def run_jvm(cmd: list[str], prog: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """Runs one JVM; a non-zero exit stops the benchmark with the command and the end of its stderr."""
    return checked(subprocess.run(cmd, capture_output=True, text=True, env=env), prog)


def run_jvms_beside(cmds: list[list[str]], prog: str) -> list[subprocess.CompletedProcess]:
    """Runs the JVMs at the same time, each as `run_jvm` does. Their output goes to files, not
    pipes, so that none waits on a full pipe while another is read."""
    with contextlib.ExitStack() as stack:
        files = [(stack.enter_context(tempfile.TemporaryFile("w+")), stack.enter_context(tempfile.TemporaryFile("w+")))
                 for _ in cmds]
        procs = [subprocess.Popen(cmd, stdout=out, stderr=err, text=True) for cmd, (out, err) in zip(cmds, files)]
        results = []
        for cmd, proc, (out, err) in zip(cmds, procs, files):
            proc.wait()
            out.seek(0)
            err.seek(0)
            results.append(subprocess.CompletedProcess(cmd, proc.returncode, out.read(), err.read()))
    return [checked(r, prog) for r in results]


def checked(r: subprocess.CompletedProcess, prog: str) -> subprocess.CompletedProcess:
    """`r`, or the benchmark stops with its command and the end of its stderr."""
    if r.returncode != 0:
        raise SystemExit(f"{prog}: failed (exit {r.returncode}):\n  {' '.join(r.args)}\n{r.stderr[-2000:]}")
    return r


def interleaved(prog: str, reps: int, configs: Sequence[str], report: Path) -> Iterator[tuple[int, str]]:
    """(rep, config) for `reps` rounds over every configuration in turn, so that a slow spell of the
    machine hits all of them alike; announces each run on stderr and removes the last run's report."""
    for rep in range(1, reps + 1):
        for config in configs:
            print(f"{prog}: rep {rep}/{reps} {config} ...", file=sys.stderr, flush=True)
            if report.exists():
                report.unlink()
            yield rep, config
