#!/usr/bin/python3
"""Analyses one benchmark run of RingKernel's suite.

    analyze.py RUN_DIR [--out DIR]

Reads every raw CSV in RUN_DIR/raw (strictly: a malformed row stops the
analysis with its file:line), RUN_DIR/environment.json and RUN_DIR/run.json
when present, and writes to DIR (default RUN_DIR):

* summary.json      one entry per (experiment, configuration, metric)
* comparisons.json  the comparisons of ``COMPARISONS`` and those skipped
* targets.json      issue 8's targets, met or missed (``rktargets``)
* report.md         tables, lattices, comparisons, targets, environment, checklist, figures
* plots/*.svg       the figures of ``rkplots.PLOTS``

Exit status: 0 on success, 1 when the data cannot be read.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path

import rkplots
import rkpower
import rkstats
import rktargets
from rkdata import PLAIN_NAME_KEY, DataError, Dataset, read_run

# Whether a larger value of a metric is better, where the name alone does not
# say (see higher_is_better); None: no direction, the metric is not compared.
METRIC_DIRECTION = {"bytes": False, "corruption_events": False, "queue_utilization": None}
WARMUP_TARGET_S = 300
MIN_TRIALS = 10


def higher_is_better(metric: str) -> bool | None:
    """True for throughputs (*_per_s), False for times (*_us, *_ms, *_ns) and
    percentages of overhead (*_pct), METRIC_DIRECTION for the rest, else None."""
    if metric in METRIC_DIRECTION:
        return METRIC_DIRECTION[metric]
    if metric.endswith("_per_s"):
        return True
    if metric.endswith(("_us", "_ms", "_ns", "_pct")):
        return False
    return None


@dataclass(frozen=True)
class ComparisonSpec:
    """Configurations of ``experiment`` whose parameter ``key`` is ``baseline``,
    each compared with the configuration that has ``key`` = ``candidate`` and
    every other parameter equal. Plain configuration names are the parameter
    "name"."""

    experiment: str
    key: str
    baseline: str
    candidate: str

    @property
    def label(self) -> str:
        return f"{self.experiment}: {self.key}={self.baseline} vs {self.key}={self.candidate}"


EXP1_BASELINES = ("traditional", "launch_sync", "graph_launch_sync", "cuper_persistent_roundtrip")
# The enqueue calls alone: what `Send` (an enqueue too) is compared with.
EXP1_ENQUEUE_BASELINES = ("launch_return", "graph_launch_return")

# Every comparison the report makes, in one place.
COMPARISONS = (
    *(ComparisonSpec("exp1_launch_overhead", PLAIN_NAME_KEY, b, "persistent_ask_roundtrip") for b in EXP1_BASELINES),
    *(ComparisonSpec("exp1_launch_overhead", PLAIN_NAME_KEY, b, "persistent_send")
      for b in EXP1_BASELINES + EXP1_ENQUEUE_BASELINES),
    ComparisonSpec("k2k_hop", PLAIN_NAME_KEY, "raw_flag_one_way", "global_memory_mailbox"),
    *(ComparisonSpec("trace_overhead", PLAIN_NAME_KEY, f"untraced_{m}", f"trace_{state}_{m}")
      for m in ("global_memory_mailbox", "ask_roundtrip") for state in ("off", "on")),
    ComparisonSpec("exp2_k2k_throughput", "path", "host", "k2k"),
    ComparisonSpec("exp5_mixed", "model", "traditional", "persistent"),
    ComparisonSpec("exp8_hopper", "method", "global", "dsmem"),
    ComparisonSpec("exp8_hopper", "method", "global", "tma"),
    ComparisonSpec("exp7_fault_isolation", "phase", "before", "during"),
    ComparisonSpec("exp7_fault_isolation", "phase", "before", "after"),
)


def load_json(path: Path) -> dict | None:
    if not path.exists():
        return None
    return json.loads(path.read_text(encoding="utf-8"))


def build_summary(data: Dataset, environment: dict) -> list[dict]:
    """One entry per (experiment, configuration, metric), in order of appearance."""
    system = environment.get("system", {})
    entries = []
    for g in data.groups.values():
        per_trial = []
        for trial, values in g.trial_values().items():
            d = rkstats.describe(values)
            per_trial.append({"trial": trial, "n": d["n"], "mean": d["mean"], "median": d["median"], "p99": d["p99"]})
        entries.append(
            {
                "experiment": g.experiment,
                "configuration": g.configuration,
                "parameters": g.params,
                "metric": g.metric,
                "unit": g.unit,
                "gpu": system.get("gpu"),
                "trials": len(g.by_trial),
                **rkstats.summarize(g.values()),
                "per_trial": per_trial,
                "timestamp": g.first_timestamp,
                "system": system,
            }
        )
    return entries


def build_comparisons(data: Dataset, environment: dict) -> dict:
    """The comparisons of COMPARISONS that the data allows, and why the others were skipped."""
    done, skipped = [], []

    def skip(spec: ComparisonSpec, reason: str) -> None:
        entry = {"comparison": spec.label, "reason": reason}
        if entry not in skipped:
            skipped.append(entry)

    for spec in COMPARISONS:
        configs = {g.configuration: g.params for g in data.select(spec.experiment)}
        bases = [c for c, p in configs.items() if p.get(spec.key) == spec.baseline]
        if not configs:
            skip(spec, f"no {spec.experiment} data")
        elif not bases:
            skip(spec, f"no configuration with {spec.key}={spec.baseline}")
        for base in bases:
            wanted = {**configs[base], spec.key: spec.candidate}
            cand = next((c for c, p in configs.items() if p == wanted), None)
            if cand is None:
                skip(spec, f"no {spec.key}={spec.candidate} configuration matching '{base}'")
                continue
            context = ";".join(f"{k}={v}" for k, v in configs[base].items() if k != spec.key)
            for (experiment, configuration, metric), b in data.groups.items():
                if (experiment, configuration) != (spec.experiment, base):
                    continue
                c = data.groups.get((spec.experiment, cand, metric))
                direction = higher_is_better(metric)
                if c is None:
                    skip(spec, f"{metric} of '{base}' has no counterpart in '{cand}'")
                elif direction is None:
                    skip(spec, f"{metric} has no better direction")
                else:
                    r = rkstats.compare(b.trial_values(), c.trial_values(), higher_is_better=direction)
                    done.append({
                        "comparison": f"{spec.baseline}_vs_{spec.candidate}",
                        "experiment": spec.experiment,
                        "context": context,
                        "metric": metric,
                        "unit": b.unit,
                        **r,
                        "baseline": {"configuration": base, **r["baseline"]},
                        "candidate": {"configuration": cand, **r["candidate"]},
                    })
    return {"system": environment.get("system", {}), "comparisons": done, "skipped": skipped}


def fmt(x, digits: int = 4) -> str:
    """A value for a table: floats to `digits` significant digits, "—" for None."""
    if x is None:
        return "—"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, float):
        return f"{x:.{digits}g}"
    return str(x)


def _interval(ci: list[float] | None) -> str:
    return f"[{fmt(ci[0])}, {fmt(ci[1])}]" if ci else "—"


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    return lines + ["| " + " | ".join(r) + " |" for r in rows] + [""]


# The figure items of the checklist: the plot kind (rkplots.PLOTS) that meets each.
FIGURE_CHECKLIST = (
    ("box plot", "Box plots for latency distributions"),
    ("CDF", "CDF plots for tail latency"),
    ("bar chart", "Bar charts with 95% CI error bars for throughput comparisons"),
    ("scalability line plot", "Line plots for scalability"),
    ("time series", "Time series for sustained throughput"),
    ("heatmap", "Heatmaps for parameter sensitivity (payload x queue depth)"),
)


def checklist(environment: dict | None, run: dict | None, data: Dataset, drawn, skipped) -> list[list[str]]:
    """The seed's pre-publication checklist as rows of (item, yes/no/unknown, evidence)."""
    env = environment or {}
    gpu, sw, host, controls = (env.get(k, {}) for k in ("gpu", "software", "host", "controls"))
    rows: list[list[str]] = []

    def add(item: str, met: bool | None, evidence: str) -> None:
        rows.append([item, {True: "yes", False: "no", None: "unknown"}[met], evidence])

    def recorded(item: str, value, evidence: str | None = None) -> None:
        if not environment:
            add(item, None, "no environment.json")
        elif value in (None, "unknown", "", []):
            add(item, False, "not available")
        else:
            add(item, True, evidence or str(value))

    recorded("GPU driver version recorded", gpu.get("driver_version"))
    recorded("CUDA toolkit version recorded", sw.get("cuda_toolkit"))
    add("GPU clocks locked (frequency reported)", controls.get("clocks_locked"),
        f"{controls.get('clocks_basis', 'no environment.json')}; recorded, not set")
    add("Exclusive compute mode enabled", controls.get("exclusive_mode"),
        f"compute mode: {fmt(controls.get('compute_mode'))}; recorded, not set")
    governor = host.get("cpu_governor")
    add("CPU governor set to performance", None if governor is None else governor == "performance",
        f"governor: {governor}; recorded, not set" if governor else "no cpufreq governor readable")
    if run is None:
        add("5-minute GPU warm-up completed", None, "no run.json")
    else:
        done = run.get("warmup_seconds_done", 0)
        failed = any(f.get("trial") == "warmup" for f in run.get("failures", []))
        add("5-minute GPU warm-up completed", done >= WARMUP_TARGET_S and not failed,
            f"{done:.0f} s of warm-up" + (" (a warm-up run failed)" if failed else ""))
    recorded("ECC status recorded", gpu.get("ecc_mode"))
    add("Ambient temperature noted", False,
        f"not measurable from the host; GPU temperature at capture: {fmt(gpu.get('temperature_c'))} C")
    processes = host.get("processes", [])
    recorded("Background process list captured", processes,
             f"{max(len(processes) - 1, 0)} busiest processes in environment.json")
    commit = sw.get("git_commit")
    recorded("RingKernel git commit recorded", commit, f"{commit} (dirty: {fmt(sw.get('git_dirty'))})")
    if not environment:
        add("Built from a clean commit (tree and rkbench)", None, "no environment.json")
    else:
        clean = sw.get("clean_build")
        problems = "; ".join(sw.get("provenance_problems", [])) or "none"
        add("Built from a clean commit (tree and rkbench)", clean,
            f"{sw.get('provenance', 'provenance not recorded')}; rkbench built from {sw.get('rkbench_commit')}; "
            f"problems: {problems}" + ("; run with --allow-dirty" if sw.get("allow_dirty") else ""))
    recorded("CUDA driver API version recorded (the seed's cudarc item)", gpu.get("driver_cuda_version"))
    recorded("Host compiler version recorded (the seed's Rust compiler item; rkbench --version)",
             sw.get("rkbench_version"))
    recorded("OS version and kernel recorded", host.get("os"), f"{host.get('os')}, kernel {host.get('kernel')}")
    add("Raw data exported as CSV", bool(data.files), f"{len(data.files)} files in raw/")
    add("Summary statistics computed", True, "summary.json")
    add("Outlier analysis performed", True, "modified Z-score (MAD), threshold 3.5; statistics with and without")
    fewest = min((len(g.by_trial) for g in data.groups.values()), default=0)
    failures = len((run or {}).get("failures", []))
    add("Multiple trials completed (minimum 10)", fewest >= MIN_TRIALS,
        f"fewest trials of any configuration: {fewest}; failed runs: {failures}")
    add("Fresh process per trial", None if run is None else bool(run.get("fresh_process_per_trial")),
        "one rkbench process per trial and experiment" if run else "no run.json")
    for kind, item in FIGURE_CHECKLIST:
        made = [p for spec, paths in drawn if spec.kind == kind for p in paths]
        reasons = "; ".join(reason for spec, reason in skipped if spec.kind == kind)
        add(item, bool(made), f"{len(made)} figure(s)" if made else reasons)
    add("Vector graphics, fixed colours, fonts >= 8 pt, data points shown", bool(drawn),
        "SVG with text as text; gray baselines, blue RingKernel, green DSMEM, purple TMA")
    return rows


def _environment_section(environment: dict | None) -> list[str]:
    out = ["## Environment", ""]
    if not environment:
        return out + ["No environment.json in the run directory: the conditions of this run are unknown.", ""]
    gpu, sw, host = (environment.get(k, {}) for k in ("gpu", "software", "host"))

    def joined(source: dict, *keys: str) -> str:
        return " / ".join(fmt(source.get(k)) for k in keys)

    rows = [
        ["GPU", fmt(gpu.get("name")) if gpu.get("present") else f"none ({gpu.get('reason')})"],
        ["driver / CUDA (driver)", joined(gpu, "driver_version", "driver_cuda_version")],
        ["CUDA toolkit", fmt(sw.get("cuda_toolkit"))],
        ["compute capability", fmt(gpu.get("compute_cap"))],
        ["SM clock / max (MHz)", joined(gpu, "sm_clock_mhz", "max_sm_clock_mhz")],
        ["memory clock / max (MHz)", joined(gpu, "mem_clock_mhz", "max_mem_clock_mhz")],
        ["ECC", fmt(gpu.get("ecc_mode"))],
        ["compute mode / persistence mode", joined(gpu, "compute_mode", "persistence_mode")],
        ["temperature (C) / power (W) / pstate", joined(gpu, "temperature_c", "power_draw_w", "pstate")],
        ["OS / kernel", joined(host, "os", "kernel")],
        ["CPU / CPUs / governor", joined(host, "cpu_model", "cpu_count", "cpu_governor")],
        ["RingKernel commit / dirty", joined(sw, "git_commit", "git_dirty")],
        ["rkbench --version", fmt(sw.get("rkbench_version")).replace("\n", "; ")],
        ["captured at", fmt(environment.get("captured_at"))],
    ]
    return out + _table(["", "value"], rows)


def _failures_section(run: dict | None, failed_files: list[str]) -> list[str]:
    out = ["## Failed runs", ""]
    failures = (run or {}).get("failures", [])
    if not failures and not failed_files:
        return out + ["None." if run else "Unknown (no run.json).", ""]
    rows = [[f["experiment"], str(f["trial"]), str(f["exit_status"]), f"`{f['log']}`"] for f in failures]
    out += _table(["experiment", "trial", "exit status", "log"], rows)
    if failed_files:
        out += [f"Partial CSVs of failed runs, kept in failed/ and not analysed: {', '.join(failed_files)}.", ""]
    return out


def _statistics_section(data: Dataset, summary: list[dict]) -> list[str]:
    out = ["## Statistics", "",
           "Over all values of all trials. Outliers (modified Z-score above 3.5) are counted and kept in every "
           "statistic; the mean without them is shown alongside. The p99.9 of fewer than 1000 values is an "
           "interpolation near the maximum.", ""]
    header = ["configuration", "trials", "n", "mean", "95% CI", "median", "p99", "p99.9", "CV", "outliers",
              "mean w/o outliers"]
    for experiment in data.experiments():
        out += [f"### {experiment}", ""]
        entries = [e for e in summary if e["experiment"] == experiment]
        for metric in dict.fromkeys(e["metric"] for e in entries):
            group = [e for e in entries if e["metric"] == metric]
            rows = [
                [f"`{e['configuration']}`", str(e["trials"]), str(e["n"]), fmt(e["mean"]),
                 _interval([e["ci_95_lower"], e["ci_95_upper"]] if e["ci_95_lower"] is not None else None),
                 fmt(e["median"]), fmt(e["p99"]), fmt(e["p999"]), fmt(e["cv"], 3),
                 f"{e['outliers']} ({e['outlier_method']})", fmt(e["without_outliers"]["mean"])]
                for e in group
            ]
            out += [f"**{metric}** ({group[0]['unit']})", ""] + _table(header, rows)
    return out


# Periods tried for lattices (rkstats.lattice), in the unit of the latencies.
LATTICE_PERIODS_US = (0.1, 1.0, 0.002)


def _lattices_section(data: Dataset) -> list[str]:
    """Latency samples whose values sit on a lattice, trial by trial."""
    shortest, longest, step = LATTICE_PERIODS_US
    out = ["## Lattices", "",
           f"Each trial's latencies in microseconds ({rkstats.LATTICE_MIN_VALUES} values or more), tried for "
           f"periods of {shortest}-{longest} µs: a period counts where the values' coherence on it stands "
           f"{rkstats.LATTICE_CONTRAST} or more above the lowest coherence of the periods up to twice it "
           "(`rkstats.lattice`). A sample on a lattice is a constant plus whole periods of some polling loop "
           "locked in phase with the measurement: its median moves in steps of the period from process to "
           "process, so a change smaller than a period shows as a step in some processes and none in others.", ""]
    rows = []
    for g in data.groups.values():
        if g.unit != "microseconds":
            continue
        found = {}
        for trial, values in g.trial_values().items():
            lat = rkstats.lattice(values, shortest, longest, step)
            if lat is not None and lat["on_lattice"]:
                found[trial] = lat
        if not found:
            continue
        periods = sorted(lat["period"] for lat in found.values())
        coherences = sorted(lat["coherence"] for lat in found.values())
        rows.append([g.experiment, f"`{g.configuration}`", g.metric, f"{len(found)} of {len(g.by_trial)}",
                     f"{fmt(rkstats.percentile(periods, 0.5), 3)} [{fmt(periods[0], 3)}, {fmt(periods[-1], 3)}]",
                     f"{fmt(coherences[0], 2)}-{fmt(coherences[-1], 2)}"])
    if not rows:
        return out + ["No latency sample sits on a lattice.", ""]
    return out + _table(["experiment", "configuration", "metric", "trials on a lattice", "period (µs): median [range]",
                         "coherence"], rows)


def _comparisons_section(comparisons: dict) -> list[str]:
    out = ["## Comparisons", "",
           "Speedup: the geometric mean over trials of the per-trial ratio of means (baseline / candidate for times, "
           "candidate / baseline for throughputs: above 1 favours the candidate), with a t interval across trials. "
           "Cohen's d is signed so that positive favours the candidate; p is Welch's t-test over all measurements.",
           ""]
    rows = []
    for c in comparisons["comparisons"]:
        speedup = fmt(c["speedup"]) + (f" {_interval(c['speedup_ci_95'])}" if c["speedup_ci_95"] else "")
        if c["speedup_note"]:
            speedup += f" ({c['speedup_note']})"
        rows.append([
            f"{c['experiment']}: `{c['comparison']}`", c["context"] or "—", f"{c['metric']} ({c['unit']})",
            f"{fmt(c['baseline']['mean'])} {_interval(c['baseline']['ci_95'])}",
            f"{fmt(c['candidate']['mean'])} {_interval(c['candidate']['ci_95'])}",
            speedup, fmt(c["abs_diff"]), fmt(c["cohens_d"], 3), fmt(c["p_value"], 3), fmt(c["significant"]),
            str(c["trials"]),
        ])
    if rows:
        out += _table(["comparison", "context", "metric", "baseline mean [95% CI]", "candidate mean [95% CI]",
                       "speedup [95% CI]", "abs. difference", "Cohen's d", "p", "p < 0.05", "trials"], rows)
    else:
        out += ["No comparison could be made from this data.", ""]
    if comparisons["skipped"]:
        out += ["Not compared:", ""] + [f"- {s['comparison']}: {s['reason']}" for s in comparisons["skipped"]] + [""]
    return out


def _figures_section(drawn, skipped) -> list[str]:
    out = ["## Figures", ""]
    for spec, paths in drawn:
        out.append(f"- {spec.kind} for {spec.experiment}: " + ", ".join(f"[{p.name}](plots/{p.name})" for p in paths))
    for spec, reason in skipped:
        out.append(f"- {spec.kind} for {spec.experiment}: skipped ({reason})")
    return out + [""]


METHOD_NOTES = [
    "## Method",
    "",
    "- Percentiles interpolate linearly between order statistics (definition 7 of Hyndman and Fan).",
    "- Standard deviation with n - 1; 95% CI of a mean: mean ± 1.96 σ/√n; CV: σ / mean.",
    "- Outliers: |0.6745 (x - median) / MAD| > 3.5; where MAD = 0 the score uses 1.253314 × the mean absolute "
    "deviation instead (method `meanad`); identical values have none.",
    "- Welch's p-value treats iterations as independent; the speedup interval across trials is the more "
    "conservative statement.",
    "",
]


def render_report(run_dir: Path, data: Dataset, summary: list[dict], comparisons: dict, environment: dict | None,
                  run: dict | None, drawn, skipped, failed_files: list[str],
                  power: rkpower.PowerData | None = None, targets: list[dict] | None = None) -> str:
    """report.md: environment, checklist, failures, targets, statistics, lattices, comparisons, figures, method."""
    out = [f"# RingKernel benchmark report: {run_dir.resolve().name}", ""]
    if run:
        out += [f"Profile `{run.get('profile')}`, {run.get('trials')} trials of "
                f"{', '.join(run.get('experiments', []))}; started {run.get('started')}, "
                f"finished {run.get('finished')}.", ""]
    out += [f"{len(data.files)} raw files, {len(summary)} measurement groups, "
            f"{len(comparisons['comparisons'])} comparisons.", ""]
    out += _environment_section(environment)
    out += ["## Reproducibility checklist", "",
            "Clock locking, exclusive compute mode and the CPU governor are recorded as found; the suite never "
            "changes them.", ""]
    out += _table(["item", "met", "evidence"], checklist(environment, run, data, drawn, skipped))
    out += _failures_section(run, failed_files)
    out += rktargets.report_section(targets if targets is not None else rktargets.evaluate(data))
    out += _statistics_section(data, summary)
    out += _lattices_section(data)
    out += _comparisons_section(comparisons)
    out += rkpower.report_section(power)
    out += _figures_section(drawn, skipped)
    out += METHOD_NOTES
    return "\n".join(out)


def analyze(run_dir: Path, out_dir: Path) -> dict:
    """Runs the whole analysis and returns the paths written. Raises DataError for bad input."""
    data = read_run(run_dir / "raw")
    environment = load_json(run_dir / "environment.json")
    run = load_json(run_dir / "run.json")
    failed_dir = run_dir / "failed"
    failed_files = sorted(p.name for p in failed_dir.glob("*.csv")) if failed_dir.is_dir() else []
    out_dir.mkdir(parents=True, exist_ok=True)
    summary = build_summary(data, environment or {})
    power = rkpower.read_power(run_dir)
    if power is not None:
        summary += rkpower.summary_entries(power, (environment or {}).get("system", {}))
    comparisons = build_comparisons(data, environment or {})
    targets = rktargets.evaluate(data)
    drawn, skipped = rkplots.draw_all(data, out_dir / "plots")
    report = render_report(run_dir, data, summary, comparisons, environment, run, drawn, skipped, failed_files,
                           power, targets)
    paths = {name: out_dir / name for name in ("summary.json", "comparisons.json", "targets.json", "report.md")}
    paths["summary.json"].write_text(json.dumps(summary, indent=2, allow_nan=False) + "\n", encoding="utf-8")
    paths["comparisons.json"].write_text(json.dumps(comparisons, indent=2, allow_nan=False) + "\n", encoding="utf-8")
    targets_doc = {"system": (environment or {}).get("system", {}),
                   "software": {k: (environment or {}).get("software", {}).get(k)
                                for k in ("git_commit", "git_dirty", "clean_build")},
                   "targets": targets}
    paths["targets.json"].write_text(json.dumps(targets_doc, indent=2, allow_nan=False) + "\n", encoding="utf-8")
    paths["report.md"].write_text(report + "\n", encoding="utf-8")
    paths["figures"] = [p for _, ps in drawn for p in ps]
    return paths


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run_dir", type=Path, help="the run directory (with raw/*.csv)")
    parser.add_argument("--out", type=Path, help="where to write the outputs (default: the run directory)")
    args = parser.parse_args(argv)
    try:
        paths = analyze(args.run_dir, args.out or args.run_dir)
    except DataError as e:
        print(f"analyze: {e}", file=sys.stderr)
        return 1
    print(f"analyze: wrote {paths['report.md']}, summary.json, comparisons.json, targets.json and "
          f"{len(paths['figures'])} figures")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
