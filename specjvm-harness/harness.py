#!/usr/bin/env python3
"""The specjvm-harness: runs real workloads without the agent (none), with IPA and with SPA, interleaved,
and prints the paper's Table I (time and overhead) and Table II (native share and crossings) as Markdown,
with CSV copies in the results directory. Run it as `scripts/harness`; `--help` lists the options.

Only the Python 3.11 standard library is used.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import suite  # noqa: E402
import tables  # noqa: E402

CONFIGS = ("none", "ipa", "spa")
WORK_LINE = re.compile(r"nativeacct-harness: workload=\S+ work_ns=(\d+)")


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="scripts/harness",
        description="Run the workloads under none / IPA / SPA and print Table I and Table II.",
    )
    p.add_argument("--quick", action="store_true", help="small inputs, one run per configuration (CI size)")
    p.add_argument("--runs", type=int, help="runs per configuration; the median is reported (default 3, quick 1)")
    p.add_argument("--cap", type=float, help="SPA time cap in seconds, reported as '> cap' (default 200, quick 25)")
    p.add_argument("--timeout", type=float, help="time limit for none/IPA runs, a failure (default 900, quick 180)")
    p.add_argument("--only", help="comma-separated workload names (see --list)")
    p.add_argument("--configs", default="none,ipa,spa", help="comma-separated subset of none,ipa,spa")
    p.add_argument("--spec", type=Path, help="path of an installed SPECjvm2008 or SPECjvm98 to run as well")
    p.add_argument("--spec-only", action="store_true", help="with --spec: skip the built-in workloads")
    p.add_argument("--spec-benchmarks", help="comma-separated SPEC benchmark names (default: a list that runs on 17)")
    p.add_argument("--spec-ops", type=int, help="SPECjvm2008 -ops for full runs (default 5; quick uses 1)")
    p.add_argument("--metric", choices=["wall", "cpu", "work"], default="wall",
                   help="Table I time: process wall time (default), process CPU time, or the workload's own timer")
    p.add_argument("--agent", type=Path, help="agent library (default target/release/libnativeacct.so)")
    p.add_argument("--agent-opts", default="", help="extra agent options appended for IPA and SPA, e.g. clock=...")
    p.add_argument("--build-agent", action="store_true", help="cargo build --release -p nativeacct first")
    p.add_argument("--jvm-opt", action="append", default=[], help="extra JVM option for every run (repeatable)")
    p.add_argument("--java", help="java launcher (default $JAVA_HOME/bin/java or java on PATH)")
    p.add_argument("--results", type=Path, help="results directory (default target/harness/<timestamp>)")
    p.add_argument("--list", action="store_true", help="list the workloads with their sizes and exit")
    args = p.parse_args(argv)
    args.configs = [c.strip() for c in args.configs.split(",") if c.strip()]
    for c in args.configs:
        if c not in CONFIGS:
            p.error(f"unknown configuration {c!r}; choose from {', '.join(CONFIGS)}")
    if "none" not in args.configs:
        p.error("--configs must include none (overheads are relative to it)")
    args.configs = [c for c in CONFIGS if c in args.configs]
    if args.runs is None:
        args.runs = 1 if args.quick else 3
    if args.runs < 1:
        p.error("--runs must be at least 1")
    if args.cap is None:
        args.cap = 25.0 if args.quick else 200.0
    if args.timeout is None:
        args.timeout = 180.0 if args.quick else 900.0
    return args


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def find_java(args) -> tuple[str, str]:
    if args.java:
        java = args.java
    elif os.environ.get("JAVA_HOME"):
        java = str(Path(os.environ["JAVA_HOME"]) / "bin" / "java")
    else:
        java = shutil.which("java") or ""
    if not java or not Path(java).exists() and not shutil.which(java):
        raise SystemExit("harness: no java found (install openjdk-17-jdk-headless or set JAVA_HOME / --java)")
    javac = str(Path(java).resolve().parent / "javac")
    if not Path(javac).exists():
        raise SystemExit(f"harness: no javac next to {java} (install openjdk-17-jdk-headless)")
    return java, javac


def find_agent(args) -> Path | None:
    if args.configs == ["none"]:
        return None
    agent = (args.agent or suite.REPO_ROOT / "target" / "release" / "libnativeacct.so").resolve()
    if args.build_agent:
        log("harness: building the agent: cargo build --release -p nativeacct")
        subprocess.run(["cargo", "build", "--release", "-p", "nativeacct"], cwd=suite.REPO_ROOT, check=True)
    if not agent.exists():
        raise SystemExit(
            f"harness: agent library {agent} not found.\n"
            "  Build it with:  cargo build --release -p nativeacct   (or pass --build-agent)\n"
            "  or run without it:  scripts/harness --configs none ..."
        )
    return agent


def select_workloads(args) -> tuple[list[suite.Workload], list[suite.Workload]]:
    """Returns (workloads to run, built-in workloads whose packages are installed)."""
    builtin = suite.builtin_workloads()
    available = [w for w in builtin if not w.missing()]
    chosen: list[suite.Workload] = [] if args.spec_only else list(builtin)
    if args.spec:
        benches = args.spec_benchmarks.split(",") if args.spec_benchmarks else None
        chosen += suite.spec_workloads(args.spec, benches, args.spec_ops)
    if args.only:
        wanted = [n.strip() for n in args.only.split(",") if n.strip()]
        by_name = {w.name: w for w in chosen}
        unknown = [n for n in wanted if n not in by_name]
        if unknown:
            raise SystemExit(f"harness: unknown workload(s) {', '.join(unknown)}; known: {', '.join(by_name)}")
        chosen = [by_name[n] for n in wanted]
    missing = [(w, w.missing()) for w in chosen if w.missing()]
    if missing:
        lines = [f"  {w.name}: missing {', '.join(map(str, m))} (Debian: {' '.join(w.packages)})" for w, m in missing]
        raise SystemExit(
            "harness: some workloads cannot run on this machine:\n" + "\n".join(lines)
            + "\n  Install them with:  scripts/install-workloads   (or leave them out with --only)"
        )
    return chosen, available


def agent_args(agent: Path | None, config: str, report: Path, extra: str) -> list[str]:
    if config == "none":
        return []
    options = [f"file={report}", "format=json", "quiet"]
    if config == "spa":
        options.append("mode=spa")
    if extra:
        options.append(extra)
    return [f"-agentpath:{agent}={','.join(options)}"]


def run_process(cmd: list[str], cwd: Path, out: Path, err: Path, limit: float, grace: float = 20.0) -> dict:
    """Runs cmd with stdout/stderr to files; returns wall time, CPU time (rusage) and how it ended.

    Past `limit` seconds the process group gets SIGTERM (so the JVM still runs VMDeath and the agent can
    write its report), then SIGKILL after `grace` seconds.
    """
    result: dict = {}
    start = time.monotonic()
    with open(out, "wb") as fo, open(err, "wb") as fe:
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=fo, stderr=fe, stdin=subprocess.DEVNULL, start_new_session=True)

    def reap() -> None:
        _, status, usage = os.wait4(proc.pid, 0)
        result.update(end=time.monotonic(), status=status, usage=usage)

    waiter = threading.Thread(target=reap, daemon=True)
    waiter.start()
    waiter.join(limit)
    hit_limit = waiter.is_alive()
    if hit_limit:
        for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, None)):
            try:
                os.killpg(proc.pid, sig)
            except ProcessLookupError:
                pass
            waiter.join(wait)
            if not waiter.is_alive():
                break
    exit_code = os.waitstatus_to_exitcode(result["status"])
    proc.returncode = exit_code  # reaped by wait4 above; keeps Popen from waiting again
    usage = result["usage"]
    return {
        "wall_s": result["end"] - start,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "exit_code": exit_code,
        "hit_limit": hit_limit,
    }


def tail(path: Path, lines: int = 3) -> str:
    try:
        text = path.read_text(errors="replace").strip().splitlines()
    except OSError:
        return ""
    text = [t for t in text if not WORK_LINE.search(t)]
    return " | ".join(t.strip() for t in text[-lines:])[:300]


def machine_info(java: str) -> dict:
    def first_line(cmd: list[str]) -> str:
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
            return (r.stdout + r.stderr).strip().splitlines()[0]
        except (OSError, subprocess.SubprocessError, IndexError):
            return "?"

    try:
        git = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=suite.REPO_ROOT, capture_output=True,
                             text=True).stdout.strip()
    except OSError:
        git = "?"
    cpu = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "host": f"{platform.system()} {platform.release()}, {os.cpu_count()} CPUs ({cpu})",
        "java": first_line([java, "-version"]),
        "commit": git or "?",
    }


def loadavg() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    chosen, available = select_workloads(args)
    if args.list:
        for w in chosen:
            unit = f" {w.size_unit}" if w.size_unit else ""
            print(f"{w.name:22} full {w.full_size}{unit}, quick {w.quick_size}{unit}; {w.description}")
        return 0
    java, javac = find_java(args)
    agent = find_agent(args)

    results = args.results or suite.REPO_ROOT / "target" / "harness" / datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    results = results.resolve()
    (results / "runs").mkdir(parents=True, exist_ok=True)
    log(f"harness: results in {results}")

    java_workloads = [w for w in available if w.main_class]
    build = suite.build_java(java_workloads, suite.REPO_ROOT / "target" / "harness", javac)

    if agent is not None:
        # A private copy: the agent may be rebuilt while a long run is in progress.
        snapshot = results / "agent" / agent.name
        snapshot.parent.mkdir(exist_ok=True)
        shutil.copy2(agent, snapshot)
        agent_label = f"{agent} (built {datetime.datetime.fromtimestamp(agent.stat().st_mtime).strftime('%Y-%m-%d %H:%M')}, run from a copy)"
        agent = snapshot
    else:
        agent_label = "not used"
    info = machine_info(java)
    load_start = loadavg()
    total = sum(args.runs * len(args.configs) for _ in chosen)
    done = 0
    runs: list[dict] = []
    failures = 0
    started = time.monotonic()
    for w in chosen:
        size = w.quick_size if args.quick else w.full_size
        reference_stdout: bytes | None = None
        spa_capped = False
        for run in range(1, args.runs + 1):
            for config in args.configs:
                done += 1
                stem = f"{w.name.replace(':', '_')}-{config}-{run}"
                if config == "spa" and spa_capped:
                    log(f"[{done:3}/{total}] {w.name:14} {config:4} run {run}/{args.runs}: skipped (first SPA run hit the cap)")
                    continue
                report = results / "runs" / f"{stem}.json"
                if report.exists():
                    report.unlink()
                jvm = [java, f"-XX:ErrorFile={results / 'runs' / (stem + '-hs_err_%p.log')}", *args.jvm_opt]
                cmd = suite.java_command(w, build, jvm, agent_args(agent, config, report, args.agent_opts), size, args.quick)
                limit = args.cap if config == "spa" else args.timeout
                log(f"[{done:3}/{total}] {w.name:14} {config:4} run {run}/{args.runs} ...")
                out, err = results / "runs" / f"{stem}.out", results / "runs" / f"{stem}.err"
                cwd = w.cwd or results / "runs"
                r = run_process(cmd, cwd, out, err, limit)
                record = {"workload": w.name, "config": config, "run": run, "command": " ".join(cmd), **r}
                work = WORK_LINE.findall(err.read_text(errors="replace")) if err.exists() else []
                record["work_s"] = int(work[-1]) / 1e9 if work else None
                if report.exists():
                    try:
                        record["report"] = json.loads(report.read_text())
                    except (OSError, ValueError) as e:
                        record["report_error"] = str(e)
                if r["hit_limit"]:
                    record["status"] = "capped" if config == "spa" else "timeout"
                    if config == "spa":
                        spa_capped = True
                elif r["exit_code"] != 0:
                    record["status"] = "failed"
                    record["error"] = f"exit {r['exit_code']}: {tail(err)}"
                elif config != "none" and not record.get("report"):
                    record["status"] = "no-report"
                    record["error"] = record.get("report_error") or f"agent wrote no {report.name}; stderr: {tail(err)}"
                else:
                    record["status"] = "ok"
                if record["status"] == "ok" and w.deterministic_stdout:
                    stdout = out.read_bytes()
                    if reference_stdout is None:
                        reference_stdout = stdout
                    elif stdout != reference_stdout:
                        record["status"] = "stdout-differs"
                        record["error"] = f"stdout differs from the first run; see {out}"
                if record["status"] not in ("ok", "capped"):
                    failures += 1
                runs.append(record)
                extra = ""
                if record.get("work_s") is not None:
                    extra += f", work {record['work_s']:.2f} s"
                if record.get("report"):
                    rep = record["report"]
                    extra += f", native {rep.get('native_pct', '?')} %"
                log(f"[{done:3}/{total}] {w.name:14} {config:4} run {run}/{args.runs}: {record['status']} "
                    f"{r['wall_s']:.2f} s wall, {r['cpu_s']:.2f} s CPU{extra}"
                    + (f" -- {record['error']}" if record.get("error") else ""))
    elapsed = time.monotonic() - started
    load_end = loadavg()

    summary = tables.Summary(chosen, runs, args.configs, args.metric, args.cap)
    t1 = tables.table1_markdown(summary)
    t2 = tables.table2_markdown(summary) if "ipa" in args.configs else "(no IPA runs, so no Table II)"
    header = [
        f"Command: `{' '.join(['scripts/harness', *argv])}`",
        "",
        f"- Date: {info['date']}; commit {info['commit']}; harness took {elapsed / 60:.1f} min",
        f"- Machine: {info['host']}; load average {load_start} at start, {load_end} at end",
        f"- JVM: {info['java']}; agent: {agent_label}",
        f"- Sizes: {'quick' if args.quick else 'full'}; {args.runs} run(s) per configuration, median; runs interleaved "
        f"({', '.join(args.configs)}, ...); SPA cap {args.cap:.0f} s",
        f"- Table I metric: {args.metric} time of the whole JVM process (start-up included) unless --metric says otherwise",
    ]
    markdown = "\n".join(
        [
            *header,
            "",
            "### Table I: execution time and overhead",
            "",
            t1,
            "",
            "\\* not in the geometric mean. Overheads are relative to the median of the none runs.",
            "",
            "### Table II: native share and crossings (IPA)",
            "",
            t2,
            "",
        ]
    )
    (results / "tables.md").write_text(markdown)
    tables.write_csv(summary, results)
    tables.write_runs_csv(runs, results / "runs.csv")
    latest = results.parent / "latest"
    try:
        if latest.is_symlink() or latest.exists():
            latest.unlink()
        latest.symlink_to(results.name)
    except OSError:
        pass
    print(markdown)
    log(f"harness: wrote {results / 'tables.md'}, table1.csv, table2.csv, runs.csv; logs in {results / 'runs'}")
    if failures:
        log(f"harness: {failures} run(s) failed; see the notes in Table I and {results / 'runs.csv'}")
        return 1
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except KeyboardInterrupt:
        sys.exit(130)
