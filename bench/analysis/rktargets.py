"""The targets of issue 8 ("Messages at the hardware floor"), from one run.

Each target is one statistic of one configuration — alone, or divided by a
floor measured in the same processes — held against a threshold (DESIGN §6):

* ``send_p50``: exp1 ``persistent_send`` p50 <= 0.05 us;
* ``ask_p50``, ``ask_p99``: exp1 ``persistent_ask_roundtrip`` p50 and p99
  over ``cuper_persistent_roundtrip`` p50 <= 1.3 and <= 1.6;
* ``hop_p50``: k2k_hop ``global_memory_mailbox`` p50 over
  ``raw_flag_one_way`` p50 <= 2.0;
* ``host_to_gpu_1``, ``host_to_gpu_4``: message_paths host → GPU 64 B with
  one and four host threads >= 1e7 and >= 2e7 msg/s (the configuration with
  the most receivers: the host path's capacity; the one-receiver
  configurations measure one actor's handler rate and are reported beside
  it);
* ``k2k_pair_64``: one K2K pair, 64 B >= 5e6 msg/s;
* ``k2k_all_64``: every pair at once, 64 B >= 1e9 msg/s (the configuration
  with the most pairs);
* ``k2k_pair_4k``: one K2K pair, 4 KiB >= 5e9 B/s;
* ``ask_p99_background``: Ask p99 with K2K background over the paths
  experiment's own ``host_roundtrip_floor`` p50 <= 2.0, evaluable only when
  the background carried >= 1e6 msg/s;
* ``quiet_ask``: the Ask after 1 s of quiet (p50 of those Asks) over the same
  floor <= 2.0;
* ``idle_power``: board power with one idle actor minus none <= 15 W.

How a figure is made. Within each trial (one process) the statistic (p50 or
p99, linear interpolation) is taken over that trial's values; the figure is
the median over trials of those per-trial statistics. A ratio divides the
median over trials of the measurement's per-trial statistic by the median
over trials of the floor's per-trial p50, over the trials that have both —
and both must come from the same experiment, so every pair of numbers
compared was measured in one process. The per-trial ratios are given too.

``evaluate(data)`` returns one entry per target with ``status`` one of
"met", "missed", "no data" (a side is absent) or "not evaluable" (a
condition of the target, such as the background rate, did not hold).
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field

import numpy as np

import rkstats
from rkdata import PLAIN_NAME_KEY, Dataset, Group, numeric

STATS = {"p50": 0.5, "p99": 0.99}
OPS = {"<=": operator.le, ">=": operator.ge}


@dataclass(frozen=True)
class Measure:
    """The groups of ``experiment`` with metric ``metric`` whose parameters
    include ``params``; of several, the one with the largest numeric value of
    parameter ``largest`` (which must then be present). ``stat`` is the
    per-trial statistic."""

    experiment: str
    metric: str
    params: tuple[tuple[str, str], ...]
    stat: str = "p50"
    largest: str | None = None

    def describe(self) -> str:
        what = ";".join(f"{k}={v}" for k, v in self.params)
        if self.largest:
            what += f" (largest {self.largest})"
        return f"{self.experiment} {what} {self.metric} {self.stat}"


def measure(experiment: str, metric: str, stat: str = "p50", largest: str | None = None, **params: str) -> Measure:
    return Measure(experiment, metric, tuple(sorted(params.items())), stat, largest)


@dataclass(frozen=True)
class Target:
    key: str
    claim: str
    measure: Measure
    op: str
    threshold: float
    unit: str
    floor: Measure | None = None
    # (measure, op, threshold): the target is evaluable only when it holds.
    condition: tuple[Measure, str, float] | None = None

    def __post_init__(self):
        if self.floor is not None and self.floor.experiment != self.measure.experiment:
            raise ValueError(f"{self.key}: a floor must come from the same experiment (process) as the measurement")
        if self.op not in OPS:
            raise ValueError(f"{self.key}: unknown comparison {self.op}")


EXP1, HOP, PATHS, TRACE = "exp1_launch_overhead", "k2k_hop", "message_paths", "trace_overhead"
_EXP1_FLOOR = measure(EXP1, "latency_us", name="cuper_persistent_roundtrip")
_PATHS_FLOOR = measure(PATHS, "latency_us", path="host_roundtrip_floor")

TARGETS = (
    Target("send_p50", "`Send` returns (host enqueue), p50", measure(EXP1, "latency_us", name="persistent_send"),
           "<=", 0.05, "us"),
    Target("ask_p50", "`Ask` p50 / persistent round-trip floor p50",
           measure(EXP1, "latency_us", name="persistent_ask_roundtrip"), "<=", 1.3, "x floor", floor=_EXP1_FLOOR),
    Target("ask_p99", "`Ask` p99 / persistent round-trip floor p50",
           measure(EXP1, "latency_us", "p99", name="persistent_ask_roundtrip"), "<=", 1.6, "x floor",
           floor=_EXP1_FLOOR),
    Target("hop_p50", "K2K one hop p50 / raw fenced flag one way p50",
           measure(HOP, "one_hop_us", name="global_memory_mailbox"), "<=", 2.0, "x floor",
           floor=measure(HOP, "one_hop_us", name="raw_flag_one_way")),
    Target("host_to_gpu_1", "host → GPU, 64 B, one host thread (the configuration with the most receivers)",
           measure(PATHS, "msgs_per_s", largest="receivers", path="host_to_gpu", payload="64", threads="1"),
           ">=", 1e7, "msg/s"),
    Target("host_to_gpu_4", "host → GPU, 64 B, four host threads, aggregate (the configuration with the most "
           "receivers)",
           measure(PATHS, "msgs_per_s", largest="receivers", path="host_to_gpu", payload="64", threads="4"),
           ">=", 2e7, "msg/s"),
    Target("k2k_pair_64", "K2K 64 B, one pair (to another actor)",
           measure(PATHS, "msgs_per_s", path="k2k", payload="64", spread="one_pair"), ">=", 5e6, "msg/s"),
    Target("k2k_all_64", "K2K 64 B, every pair at once (to another actor, aggregate)",
           measure(PATHS, "msgs_per_s", largest="pairs", path="k2k", payload="64", spread="all_workers"),
           ">=", 1e9, "msg/s"),
    Target("k2k_pair_4k", "K2K 4 KiB, one pair (to another actor)",
           measure(PATHS, "bytes_per_s", path="k2k", payload="4096", spread="one_pair"), ">=", 5e9, "B/s"),
    Target("ask_p99_background", "`Ask` p99 under >= 1e6 msg/s K2K background / floor p50",
           measure(PATHS, "latency_us", "p99", largest="background_pairs", path="ask"), "<=", 2.0, "x floor",
           floor=_PATHS_FLOOR,
           condition=(measure(PATHS, "background_msgs_per_s", largest="background_pairs", path="ask"), ">=", 1e6)),
    Target("quiet_ask", "first `Ask` after 1 s of quiet / floor p50",
           measure(PATHS, "latency_us", path="ask", quiet_ms="1000"), "<=", 2.0, "x floor", floor=_PATHS_FLOOR),
    Target("idle_power", "board power: one idle actor minus no system",
           measure(PATHS, "power_delta_w", path="power", system="one_idle_actor"), "<=", 15.0, "W"),
    # Issue 11: the device timeline costs the hop at most 15 % while a trace
    # runs (against the program built without it, in the same process).
    Target("trace_on_hop", "K2K hop p50 with a trace running / the hop built without tracing",
           measure(TRACE, "one_hop_us", name="trace_on_global_memory_mailbox"), "<=", 1.15, "x untraced",
           floor=measure(TRACE, "one_hop_us", name="untraced_global_memory_mailbox")),
)


@dataclass
class Found:
    """A measure's group and its per-trial statistic, or why there is none."""

    group: Group | None = None
    per_trial: dict[int, float] = field(default_factory=dict)
    reason: str = ""


def find(data: Dataset, m: Measure) -> Found:
    """The group a measure names and its statistic in each trial."""
    wanted = dict(m.params)
    # A plain name (``name=...``) matches only that configuration; key=value
    # parameters match every configuration that has them.
    exact = bool(wanted) and set(wanted) == {PLAIN_NAME_KEY}
    candidates = [g for g in data.select(m.experiment, m.metric)
                  if (g.params == wanted if exact else all(g.params.get(k) == v for k, v in wanted.items()))]
    if m.largest is not None:
        candidates = [g for g in candidates if numeric(g.params.get(m.largest, "")) is not None]
        candidates.sort(key=lambda g: numeric(g.params[m.largest]))
        candidates = candidates[-1:]
    if not candidates:
        return Found(reason=f"no {m.describe()}")
    if len(candidates) > 1:
        names = ", ".join(g.configuration for g in candidates)
        return Found(reason=f"{m.describe()} is ambiguous: {names}")
    group = candidates[0]
    per_trial = {t: rkstats.percentile(sorted(v), STATS[m.stat]) for t, v in group.trial_values().items() if v}
    return Found(group, per_trial)


def _median(values) -> float:
    return float(np.median(np.asarray(list(values), dtype=float)))


def _side(found: Found, m: Measure, trials: list[int]) -> dict:
    return {
        "experiment": m.experiment,
        "configuration": found.group.configuration,
        "metric": m.metric,
        "unit": found.group.unit,
        "statistic": m.stat,
        "value": _median(found.per_trial[t] for t in trials),
        "per_trial": {str(t): found.per_trial[t] for t in trials},
    }


def evaluate_one(data: Dataset, target: Target) -> dict:
    entry = {"target": target.key, "claim": target.claim, "op": target.op, "threshold": target.threshold,
             "unit": target.unit, "status": "no data", "value": None, "trials": 0, "reason": ""}
    num = find(data, target.measure)
    if num.group is None:
        return {**entry, "reason": num.reason}
    trials = sorted(num.per_trial)
    den = None
    if target.floor is not None:
        den = find(data, target.floor)
        if den.group is None:
            return {**entry, "reason": den.reason}
        trials = sorted(set(trials) & set(den.per_trial))
        if not trials:
            return {**entry, "reason": "no trial (process) measured both the figure and its floor"}
    entry["measure"] = _side(num, target.measure, trials)
    entry["trials"] = len(trials)
    if den is not None:
        entry["floor"] = _side(den, target.floor, trials)
        entry["value"] = entry["measure"]["value"] / entry["floor"]["value"]
        entry["per_trial_ratio"] = {str(t): num.per_trial[t] / den.per_trial[t] for t in trials}
    else:
        entry["value"] = entry["measure"]["value"]
    if target.condition is not None:
        cm, cop, cthreshold = target.condition
        cond = find(data, cm)
        if cond.group is None:
            return {**entry, "status": "not evaluable", "reason": f"its condition has no data: {cond.reason}"}
        cvalue = _median(cond.per_trial.values())
        entry["condition"] = {"measure": cm.describe(), "op": cop, "threshold": cthreshold, "value": cvalue,
                              "configuration": cond.group.configuration}
        if not OPS[cop](cvalue, cthreshold):
            return {**entry, "status": "not evaluable",
                    "reason": f"{cm.metric} was {cvalue:.4g}, not {cop} {cthreshold:g}"}
    entry["status"] = "met" if OPS[target.op](entry["value"], target.threshold) else "missed"
    return entry


def evaluate(data: Dataset, targets=TARGETS) -> list[dict]:
    """One entry per target: the figure, its sides, and met / missed / no data / not evaluable."""
    return [evaluate_one(data, t) for t in targets]


def _fmt(x: float | None) -> str:
    return "—" if x is None else f"{x:.4g}"


def report_section(results: list[dict]) -> list[str]:
    """report.md lines: one row per target."""
    out = ["## Issue 8 targets", "",
           "Per trial (one process) the statistic is taken over that trial's values; the figure is the median over "
           "trials. A ratio is the median over trials of the measurement's statistic over the median over trials of "
           "the floor's p50, both from the same processes (trials that have both).", ""]
    out += ["| target | figure | target | status | from | trials |", "|---|---|---|---|---|---|"]
    for r in results:
        if "floor" in r:
            m, f = r["measure"], r["floor"]
            basis = (f"`{m['configuration']}` {m['statistic']} {_fmt(m['value'])} / `{f['configuration']}` p50 "
                     f"{_fmt(f['value'])} {f['unit']}")
        elif "measure" in r:
            m = r["measure"]
            basis = f"`{m['configuration']}` {m['metric']} {m['statistic']} ({m['unit']})"
        else:
            basis = ""
        if "condition" in r:
            c = r["condition"]
            basis += f"; condition {c['op']} {c['threshold']:g}: {_fmt(c['value'])}"
        status = r["status"] + (f" ({r['reason']})" if r["reason"] else "")
        out.append(f"| {r['claim']} | {_fmt(r['value'])} {r['unit']} | {r['op']} {r['threshold']:g} {r['unit']} | "
                   f"{status} | {basis} | {r['trials']} |")
    return out + [""]
