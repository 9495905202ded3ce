"""Table I (time and overhead per configuration) and Table II (native share and crossings, from the IPA
reports), computed from the harness's run records and written as Markdown and CSV."""

from __future__ import annotations

import csv
import math
import statistics
from pathlib import Path

# Above this IPA overhead a row says why (issue 7: no workload above 15 %).
OVERHEAD_LIMIT_PCT = 15.0


def median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def geomean(values: list[float]) -> float | None:
    values = [v for v in values if v and v > 0]
    if not values:
        return None
    return math.exp(sum(math.log(v) for v in values) / len(values))


def metric(run: dict, name: str) -> float | None:
    return run.get(f"{name}_s")


def fmt_s(v: float | None) -> str:
    return "—" if v is None else f"{v:.2f}"


def fmt_pct(v: float | None, lower_bound: bool = False) -> str:
    if v is None:
        return "—"
    return f"{'> ' if lower_bound else ''}{v:+.1f} %"


def rate(per_second: float) -> str:
    """A rate with a readable unit: 3.2 M, 41 k, 7."""
    if per_second >= 1e6:
        return f"{per_second / 1e6:.1f} M"
    if per_second >= 1e3:
        return f"{per_second / 1e3:.0f} k"
    return f"{per_second:.0f}"


def fmt_count(v: float | None) -> str:
    if v is None:
        return "—"
    v = int(round(v))
    return f"{v:,}".replace(",", " ")


class Summary:
    """Per-workload medians and the derived overheads for one metric (wall, cpu or work)."""

    def __init__(self, workloads: list, runs: list[dict], configs: list[str], metric_name: str, cap: float):
        self.workloads = workloads
        self.runs = runs
        self.configs = configs
        self.metric_name = metric_name
        self.cap = cap
        self.rows: list[dict] = []
        for w in workloads:
            self.rows.append(self._row(w))

    def _runs(self, workload: str, config: str, status: tuple[str, ...] = ("ok",)) -> list[dict]:
        return [r for r in self.runs if r["workload"] == workload and r["config"] == config and r["status"] in status]

    def _row(self, w) -> dict:
        row: dict = {"workload": w.name, "in_geomean": w.in_geomean, "problems": []}
        for config in self.configs:
            ok = self._runs(w.name, config)
            capped = self._runs(w.name, config, ("capped",))
            failed = self._runs(w.name, config, ("failed", "timeout", "stdout-differs", "no-report"))
            values = [metric(r, self.metric_name) for r in ok]
            values = [v for v in values if v is not None]
            row[f"{config}_n"] = len(values)
            row[f"{config}_median"] = median(values)
            row[f"{config}_capped"] = bool(capped) and not values
            for r in failed:
                row["problems"].append(f"{config} run {r['run']}: {r['status']}" + (f" ({r['error']})" if r.get("error") else ""))
        base = row.get("none_median")
        for config in ("ipa", "spa"):
            if config not in self.configs:
                continue
            value = row.get(f"{config}_median")
            if row.get(f"{config}_capped"):
                # Capped: only a lower bound on the time is known.
                row[f"{config}_time_text"] = f"> {self.cap:.0f}"
                row[f"{config}_ratio"] = self.cap / base if base else None
                row[f"{config}_ratio_lower_bound"] = True
            else:
                row[f"{config}_time_text"] = fmt_s(value)
                row[f"{config}_ratio"] = value / base if (value is not None and base) else None
                row[f"{config}_ratio_lower_bound"] = False
        if "ipa" in self.configs and "spa" in self.configs:
            spa = self.cap if row.get("spa_capped") else row.get("spa_median")
            ipa = row.get("ipa_median")
            row["spa_over_ipa"] = spa / ipa if (spa and ipa) else None
            row["spa_over_ipa_lower_bound"] = bool(row.get("spa_capped"))
        if self.metric_name != "work" and "ipa" in self.configs and w.in_geomean:
            # The workload's own timer leaves JVM start-up and shutdown out: the steady-state overhead.
            none_work = median([r["work_s"] for r in self._runs(w.name, "none") if r.get("work_s")])
            ipa_work = median([r["work_s"] for r in self._runs(w.name, "ipa") if r.get("work_s")])
            row["ipa_work_ratio"] = ipa_work / none_work if (none_work and ipa_work) else None
        row["note"] = self._note(w, row)
        return row

    def ipa_reports(self, workload: str) -> list[dict]:
        return [r["report"] for r in self._runs(workload, "ipa") if r.get("report")]

    def _note(self, w, row: dict) -> str:
        notes = list(row["problems"])
        ratio = row.get("ipa_ratio")
        if w.in_geomean and ratio is not None and (ratio - 1) * 100 > OVERHEAD_LIMIT_PCT:
            notes.append(self._why(w, row))
        return "; ".join(notes)

    def _why(self, w, row: dict) -> str:
        """Explains an IPA overhead over the limit: crossing rate and cost per crossing, start-up share."""
        reports = self.ipa_reports(w.name)
        base = row.get("none_median")
        if not reports or not base:
            return f"IPA overhead above {OVERHEAD_LIMIT_PCT:.0f} % (no IPA report to say why)"
        native_calls = median([r.get("native_calls", 0) for r in reports]) or 0
        jni_calls = median([r.get("jni_calls", 0) for r in reports]) or 0
        crossings = native_calls + jni_calls
        added = row["ipa_median"] - base
        parts = [f"{rate(native_calls / base)} native calls/s and {rate(jni_calls / base)} JNI upcalls/s"]
        startup = next((r for r in self.rows if r["workload"] == "startup"), None)
        startup_added = 0.0
        if self.metric_name != "work" and startup and startup.get("none_median") and startup.get("ipa_median"):
            startup_added = max(0.0, startup["ipa_median"] - startup["none_median"])
            parts.append(f"start-up accounts for {startup_added:.2f} s of the {added:.2f} s added")
        rest = added - startup_added
        if rest <= 0.2 * added:
            parts.append("so start-up is most of it (CDS off, every class through the hook)")
        elif crossings:
            per = rest * 1e9 / crossings
            text = f"the other {rest:.2f} s over {crossings:,.0f} crossings = {per:,.0f} ns each"
            if per > 1000:
                text += " (far above a crossing's cost: class loading/rewriting or noise, not the crossings)"
            parts.append(text)
        return "; ".join(parts)

    def geomeans(self) -> dict:
        out: dict = {}
        rows = [r for r in self.rows if r["in_geomean"]]
        for config in ("ipa", "spa"):
            ratios = [r.get(f"{config}_ratio") for r in rows]
            if ratios and all(x is not None for x in ratios):
                out[config] = geomean(ratios)
                out[f"{config}_lower_bound"] = any(r.get(f"{config}_ratio_lower_bound") for r in rows)
                out[f"{config}_max"] = max(ratios)
            else:
                out[config] = None
        ratios = [r.get("ipa_work_ratio") for r in rows]
        if ratios and all(x is not None for x in ratios):
            out["ipa_work"] = geomean(ratios)
        if "ipa" in self.configs and "spa" in self.configs:
            ratios = [r.get("spa_over_ipa") for r in rows]
            if ratios and all(x is not None for x in ratios):
                out["spa_over_ipa"] = geomean(ratios)
                out["spa_over_ipa_lower_bound"] = any(r.get("spa_over_ipa_lower_bound") for r in rows)
        return out


def table1_markdown(s: Summary) -> str:
    unit = {"wall": "wall s", "cpu": "CPU s", "work": "work s"}[s.metric_name]
    header = ["Workload", f"none ({unit})"]
    work_column = "ipa" in s.configs and s.metric_name != "work"
    if "ipa" in s.configs:
        header += [f"IPA ({unit})", "IPA overhead"]
    if work_column:
        header += ["IPA overhead (in-process timer)"]
    if "spa" in s.configs:
        header += [f"SPA ({unit})", "SPA overhead"]
    if "ipa" in s.configs and "spa" in s.configs:
        header += ["SPA / IPA"]
    header += ["note"]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(["---"] + ["---:"] * (len(header) - 2) + ["---"]) + "|"]
    for r in s.rows:
        cells = [r["workload"] + ("" if r["in_geomean"] else " *"), fmt_s(r.get("none_median"))]
        for config in ("ipa", "spa"):
            if config in s.configs:
                ratio = r.get(f"{config}_ratio")
                cells += [
                    r.get(f"{config}_time_text", "—"),
                    fmt_pct((ratio - 1) * 100 if ratio else None, r.get(f"{config}_ratio_lower_bound", False)),
                ]
            if config == "ipa" and work_column:
                ratio = r.get("ipa_work_ratio")
                cells.append(fmt_pct((ratio - 1) * 100 if ratio else None))
        if "ipa" in s.configs and "spa" in s.configs:
            x = r.get("spa_over_ipa")
            cells.append("—" if x is None else f"{'> ' if r.get('spa_over_ipa_lower_bound') else ''}{x:.1f}×")
        cells.append(r["note"])
        lines.append("| " + " | ".join(cells) + " |")
    g = s.geomeans()
    cells = ["**geomean**", ""]
    for config in ("ipa", "spa"):
        if config in s.configs:
            v = g.get(config)
            cells += ["", f"**{fmt_pct((v - 1) * 100 if v else None, g.get(f'{config}_lower_bound', False))}**"]
        if config == "ipa" and work_column:
            v = g.get("ipa_work")
            cells.append(f"**{fmt_pct((v - 1) * 100 if v else None)}**")
    if "ipa" in s.configs and "spa" in s.configs:
        v = g.get("spa_over_ipa")
        cells.append("—" if v is None else f"**{'> ' if g.get('spa_over_ipa_lower_bound') else ''}{v:.1f}×**")
    maximum = g.get("ipa_max")
    cells.append(f"IPA max {fmt_pct((maximum - 1) * 100)}" if maximum else "")
    lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def table2_rows(s: Summary) -> list[dict]:
    rows = []
    for r in s.rows:
        reports = s.ipa_reports(r["workload"])
        spa_reports = [x["report"] for x in s._runs(r["workload"], "spa", ("ok",)) if x.get("report")]

        def med(key: str, src: list[dict] = reports):
            values = [x[key] for x in src if isinstance(x.get(key), (int, float))]
            return median(values)

        base = r.get("none_median")
        native_calls = med("native_calls")
        jni_calls = med("jni_calls")
        rows.append(
            {
                "workload": r["workload"],
                "native_pct": med("native_pct"),
                "jni_calls": jni_calls,
                "native_calls": native_calls,
                "threads": med("threads"),
                "classes_rewritten": med("classes_rewritten"),
                "natives_wrapped": med("natives_wrapped"),
                "crossings_per_s": (native_calls + jni_calls) / base if (base and native_calls is not None and jni_calls is not None) else None,
                "spa_native_pct": med("native_pct", spa_reports),
                "top_jni": top_jni(reports),
                "top_natives": top_natives(reports),
            }
        )
    return rows


def top_jni(reports: list[dict]) -> str:
    if not reports:
        return ""
    by_function = reports[-1].get("jni_calls_by_function") or {}
    top = sorted(((v, k) for k, v in by_function.items() if isinstance(v, (int, float)) and v > 0), reverse=True)[:2]
    return ", ".join(f"{k} {fmt_count(v)}" for v, k in top)


def top_natives(reports: list[dict]) -> str:
    """The two most-called native methods of the last IPA report (its `native_methods` list, if present)."""
    if not reports:
        return ""
    methods = reports[-1].get("native_methods") or []
    top = sorted((m for m in methods if isinstance(m.get("calls"), int)), key=lambda m: -m["calls"])[:2]
    return ", ".join(f"{m.get('class', '?').rsplit('/', 1)[-1]}.{m.get('name', '?')} {fmt_count(m['calls'])}" for m in top)


def table2_markdown(s: Summary) -> str:
    header = ["Workload", "native % (IPA)", "JNI calls", "native-method calls", "crossings / s", "threads",
              "natives wrapped", "classes rewritten", "native % (SPA)", "top native methods", "top JNI functions"]
    lines = ["| " + " | ".join(header) + " |", "|---|" + "---:|" * (len(header) - 3) + "---|---|"]
    for t in table2_rows(s):
        cps = t["crossings_per_s"]
        lines.append(
            "| "
            + " | ".join(
                [
                    t["workload"],
                    "—" if t["native_pct"] is None else f"{t['native_pct']:.2f}",
                    fmt_count(t["jni_calls"]),
                    fmt_count(t["native_calls"]),
                    "—" if cps is None else (f"{cps / 1e6:.2f} M" if cps >= 1e5 else fmt_count(cps)),
                    fmt_count(t["threads"]),
                    fmt_count(t["natives_wrapped"]),
                    fmt_count(t["classes_rewritten"]),
                    "—" if t["spa_native_pct"] is None else f"{t['spa_native_pct']:.2f}",
                    t["top_natives"],
                    t["top_jni"],
                ]
            )
            + " |"
        )
    return "\n".join(lines)


def write_csv(s: Summary, out_dir: Path) -> None:
    with open(out_dir / "table1.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["workload", "metric", "config", "runs", "median_s", "capped", "ratio_to_none", "overhead_pct",
                    "overhead_is_lower_bound", "in_process_overhead_pct", "note"])
        for r in s.rows:
            for config in s.configs:
                ratio = r.get(f"{config}_ratio") if config != "none" else 1.0
                w.writerow([
                    r["workload"], s.metric_name, config, r.get(f"{config}_n"),
                    "" if r.get(f"{config}_median") is None else f"{r[f'{config}_median']:.4f}",
                    int(bool(r.get(f"{config}_capped"))),
                    "" if ratio is None else f"{ratio:.4f}",
                    "" if ratio is None else f"{(ratio - 1) * 100:.2f}",
                    int(bool(r.get(f"{config}_ratio_lower_bound"))),
                    f"{(r['ipa_work_ratio'] - 1) * 100:.2f}" if config == "ipa" and r.get("ipa_work_ratio") else "",
                    r["note"],
                ])
        g = s.geomeans()
        for config in ("ipa", "spa"):
            if g.get(config):
                w.writerow(["geomean", s.metric_name, config, "", "", "", f"{g[config]:.4f}",
                            f"{(g[config] - 1) * 100:.2f}", int(bool(g.get(f"{config}_lower_bound"))),
                            f"{(g['ipa_work'] - 1) * 100:.2f}" if config == "ipa" and g.get("ipa_work") else "", ""])
    with open(out_dir / "table2.csv", "w", newline="") as f:
        rows = table2_rows(s)
        fields = ["workload", "native_pct", "jni_calls", "native_calls", "crossings_per_s", "threads",
                  "natives_wrapped", "classes_rewritten", "spa_native_pct", "top_natives", "top_jni"]
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        for t in rows:
            w.writerow({k: ("" if t[k] is None else t[k]) for k in fields})


def write_runs_csv(runs: list[dict], path: Path) -> None:
    fields = ["workload", "config", "run", "status", "wall_s", "cpu_s", "work_s", "exit_code", "native_pct",
              "native_calls", "jni_calls", "error", "command"]
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        w.writeheader()
        for r in runs:
            report = r.get("report") or {}
            row = {k: r.get(k, "") for k in fields}
            for k in ("native_pct", "native_calls", "jni_calls"):
                row[k] = report.get(k, "")
            for k in ("wall_s", "cpu_s", "work_s"):
                row[k] = "" if r.get(k) is None else f"{r[k]:.4f}"
            w.writerow(row)
