"""GPU power during the trials, attributed to the experiment that ran.

run_suite.sh samples the board's power draw (``nvidia-smi --query-gpu=
power.draw``) about every 200 ms while the trials run, into ``power.csv``
(``epoch_ms,power_w``), and records when each rkbench process started and
ended in ``runs.tsv`` (``experiment, trial, start_ms, end_ms``, epoch
milliseconds on the same clock). A sample belongs to the experiment whose
process was running at that instant; samples between processes belong to
none. Samples nvidia-smi could not give (``[N/A]``, an error) are counted,
not guessed.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path

import rkstats
from rkdata import DataError


@dataclass
class PowerData:
    """Power samples per experiment, and what could not be used."""

    by_experiment: dict[str, list[float]] = field(default_factory=dict)
    samples: int = 0           # rows in power.csv
    unreadable: int = 0        # rows without a number
    outside_runs: int = 0      # samples taken between rkbench processes


def read_power(run_dir: Path) -> PowerData | None:
    """The run's power samples, or None when it has no power.csv/runs.tsv."""
    power_path, runs_path = run_dir / "power.csv", run_dir / "runs.tsv"
    if not power_path.is_file() or not runs_path.is_file():
        return None
    runs = []
    with open(runs_path, newline="", encoding="utf-8") as f:
        for n, row in enumerate(csv.reader(f, delimiter="\t"), start=1):
            if n == 1 and row[:1] == ["experiment"]:
                continue
            try:
                experiment, _trial, start, end = row
                runs.append((int(start), int(end), experiment))
            except ValueError:
                raise DataError(f"{runs_path}:{n}: expected 'experiment, trial, start_ms, end_ms'") from None
    data = PowerData()
    with open(power_path, newline="", encoding="utf-8") as f:
        for n, row in enumerate(csv.reader(f), start=1):
            if n == 1 and row[:1] == ["epoch_ms"]:
                continue
            data.samples += 1
            try:
                at, watts = int(row[0]), float(row[1])
            except (ValueError, IndexError):
                data.unreadable += 1
                continue
            owner = next((e for start, end, e in runs if start <= at <= end), None)
            if owner is None:
                data.outside_runs += 1
            else:
                data.by_experiment.setdefault(owner, []).append(watts)
    return data


def summary_entries(power: PowerData, system: dict) -> list[dict]:
    """summary.json entries: metric ``power_w`` of configuration ``gpu_board``."""
    return [
        {
            "experiment": experiment,
            "configuration": "gpu_board",
            "parameters": {"name": "gpu_board"},
            "metric": "power_w",
            "unit": "watts",
            "gpu": system.get("gpu"),
            **rkstats.summarize(values),
            "source": "nvidia-smi power.draw, sampled about every 200 ms during this experiment's processes",
            "system": system,
        }
        for experiment, values in sorted(power.by_experiment.items())
    ]


def report_section(power: PowerData | None) -> list[str]:
    """report.md lines: power per experiment, or why there is none."""
    out = ["## Power", ""]
    if power is None:
        return out + ["Not sampled in this run (no power.csv and runs.tsv).", ""]
    out += [f"Board power from `nvidia-smi` ({power.samples} samples, about every 200 ms; "
            f"{power.unreadable} unreadable, {power.outside_runs} taken between processes), "
            "attributed to the experiment whose process was running. It includes start-up, "
            "compilation and idle moments of each process.", ""]
    out += ["| experiment | samples | mean W | median W | max W |", "|---|---|---|---|---|"]
    for experiment, values in sorted(power.by_experiment.items()):
        d = rkstats.describe(values)
        out.append(f"| {experiment} | {d['n']} | {d['mean']:.1f} | {d['median']:.1f} | {d['max']:.1f} |")
    return out + [""]
