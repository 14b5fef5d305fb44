"""Reading rkbench's raw CSV files into measurement groups.

Each row of a raw file is one measurement:

    experiment,configuration,trial,iteration,metric,value,unit,timestamp

A configuration is a plain name (``traditional``) or ``key=value`` pairs
joined by ``;`` (``path=k2k;payload=256;depth=1024``). Rows are grouped by
(experiment, configuration, metric); a group keeps its values per trial with
their iteration numbers.

The reader is strict: a wrong header, a row with the wrong number of fields,
a value that does not parse (or is not finite), a malformed configuration, a
unit that differs from the one first seen for the same group, or the same
(experiment, configuration, trial, iteration, metric) twice is a
``DataError`` naming the file and line.
"""

from __future__ import annotations

import csv
import datetime
import gzip
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

HEADER = ["experiment", "configuration", "trial", "iteration", "metric", "value", "unit", "timestamp"]
PLAIN_NAME_KEY = "name"


class DataError(Exception):
    """A raw file that does not follow the CSV format."""


def parse_configuration(text: str) -> dict[str, str]:
    """The parameters of a configuration string.

    ``path=k2k;payload=256`` gives {"path": "k2k", "payload": "256"}; a plain
    name such as ``traditional`` gives {"name": "traditional"}. Raises
    ValueError for an empty string, an empty key or value, a part without
    ``=`` in a key=value configuration, or a repeated key."""
    if not text:
        raise ValueError("empty configuration")
    if "=" not in text:
        return {PLAIN_NAME_KEY: text}
    params: dict[str, str] = {}
    for part in text.split(";"):
        key, sep, value = part.partition("=")
        if not sep or not key or not value or "=" in value:
            raise ValueError(f"malformed configuration part '{part}' in '{text}'")
        if key in params:
            raise ValueError(f"key '{key}' repeated in configuration '{text}'")
        params[key] = value
    return params


def numeric(value: str) -> float | None:
    """A parameter value as a number, or None when it is not one."""
    try:
        return float(value)
    except ValueError:
        return None


def natural_key(text: str) -> list:
    """A sort key that orders embedded numbers numerically (trial2 before trial10)."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text)]


@dataclass
class Group:
    """The measurements of one (experiment, configuration, metric)."""

    experiment: str
    configuration: str
    metric: str
    unit: str
    params: dict[str, str]
    first_timestamp: str
    by_trial: dict[int, list[tuple[int, float]]] = field(default_factory=dict)

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.experiment, self.configuration, self.metric)

    def trial_values(self) -> dict[int, list[float]]:
        """The values of each trial, in file order."""
        return {t: [v for _, v in rows] for t, rows in sorted(self.by_trial.items())}

    def values(self) -> list[float]:
        """All values, trial by trial."""
        return [v for t in sorted(self.by_trial) for _, v in self.by_trial[t]]


@dataclass
class Dataset:
    """Every group read from a run, in order of first appearance, and the files read."""

    groups: dict[tuple[str, str, str], Group] = field(default_factory=dict)
    files: list[Path] = field(default_factory=list)

    def experiments(self) -> list[str]:
        return list(dict.fromkeys(g.experiment for g in self.groups.values()))

    def select(self, experiment: str, metric: str | None = None) -> list[Group]:
        """The groups of ``experiment`` (and ``metric`` if given), in order of appearance."""
        return [
            g for g in self.groups.values() if g.experiment == experiment and (metric is None or g.metric == metric)
        ]


def _parse_timestamp(text: str) -> None:
    datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))


def read_file(path: Path, dataset: Dataset, seen: dict[tuple, str]) -> None:
    """Adds the rows of one raw CSV file to ``dataset``.

    ``seen`` maps each (experiment, configuration, trial, iteration, metric)
    read so far to its "file:line", to find duplicates across files."""
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rt", newline="", encoding="utf-8") as f:
        reader = csv.reader(f)
        header = next(reader, None)
        if header != HEADER:
            raise DataError(f"{path}:1: expected the header '{','.join(HEADER)}', found '{','.join(header or [])}'")
        for row in reader:
            where = f"{path}:{reader.line_num}"
            if len(row) != len(HEADER):
                raise DataError(f"{where}: expected {len(HEADER)} fields, found {len(row)}")
            experiment, configuration, trial_s, iteration_s, metric, value_s, unit, timestamp = row
            if not experiment or not metric or not unit:
                raise DataError(f"{where}: empty experiment, metric or unit")
            try:
                params = parse_configuration(configuration)
                trial, iteration = int(trial_s), int(iteration_s)
                value = float(value_s)
                _parse_timestamp(timestamp)
            except ValueError as e:
                raise DataError(f"{where}: {e}") from None
            if trial < 0 or iteration < 0:
                raise DataError(f"{where}: negative trial or iteration")
            if not math.isfinite(value):
                raise DataError(f"{where}: value '{value_s}' is not finite")
            point = (experiment, configuration, trial, iteration, metric)
            if point in seen:
                raise DataError(f"{where}: the same measurement as {seen[point]} ({','.join(row[:5])})")
            seen[point] = where
            key = (experiment, configuration, metric)
            group = dataset.groups.get(key)
            if group is None:
                group = Group(experiment, configuration, metric, unit, params, timestamp)
                dataset.groups[key] = group
            elif group.unit != unit:
                raise DataError(f"{where}: unit '{unit}' differs from '{group.unit}' used earlier for {key}")
            group.first_timestamp = min(group.first_timestamp, timestamp)
            group.by_trial.setdefault(trial, []).append((iteration, value))
    dataset.files.append(path)


def read_run(raw_dir: Path) -> Dataset:
    """Reads every ``*.csv`` and ``*.csv.gz`` file in ``raw_dir`` (in natural
    name order); committed results keep their raw files compressed."""
    paths = sorted([*raw_dir.glob("*.csv"), *raw_dir.glob("*.csv.gz")], key=lambda p: natural_key(p.name))
    if not paths:
        raise DataError(f"{raw_dir}: no raw CSV files")
    dataset = Dataset()
    seen: dict[tuple, str] = {}
    for path in paths:
        read_file(path, dataset, seen)
    return dataset
