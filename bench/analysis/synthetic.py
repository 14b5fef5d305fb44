"""Synthetic rkbench output, for testing the analysis without a GPU.

``write_trial_csv(path, experiment, trial, iterations)`` writes one trial of
one experiment (named as on rkbench's command line: exp1, hop, paths, exp2
... exp8, jit) in rkbench's CSV format, with the experiment names, configurations,
metrics and units that rkbench writes. Values are random but reproducible
(seeded by the experiment and trial) and shaped like real ones: persistent
paths faster than relaunches, k2k faster than the host path, and so on.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

from rkdata import HEADER

TIMESTAMP = "2026-11-21T10:00:00Z"
US, MSGS, BYTES, OPS = "microseconds", "messages/second", "bytes/second", "operations/second"
PAYLOADS = (64, 256, 1024, 4096)
# (configuration, median latency in microseconds) of experiment 1.
EXP1_CONFIGS = (
    ("traditional", 14.0),
    ("launch_sync", 8.4),
    ("graph_launch_sync", 5.7),
    ("launch_return", 2.4),
    ("graph_launch_return", 1.9),
    ("cuper_persistent_roundtrip", 1.9),
    ("persistent_send", 0.12),
    ("timer_overhead", 0.018),
    ("persistent_ask_roundtrip", 7.6),
)

Row = tuple[str, str, int, float, str]  # configuration, metric, iteration, value, unit


class _Trial:
    """One trial's random source, its small drift, and the measured iterations."""

    def __init__(self, experiment: str, trial: int, iterations: int):
        self.rng = np.random.default_rng(zlib.crc32(f"{experiment}/{trial}".encode()))
        self.drift = 1.0 + 0.02 * (trial - 2)  # trials differ a little, as real ones do
        self.n = iterations
        self.its = range(1, iterations + 1)

    def latencies(self, median: float) -> np.ndarray:
        """Right-skewed latencies with a few spikes, like a preempted host thread."""
        x = median * self.drift * self.rng.lognormal(0.0, 0.15, self.n)
        x[self.rng.random(self.n) < 0.005] *= 8
        return x

    def noisy(self, mean: float, cv: float) -> np.ndarray:
        return mean * self.drift * self.rng.normal(1.0, cv, self.n)


def _exp1(t: _Trial) -> Iterator[Row]:
    for config, median in EXP1_CONFIGS:
        for i, v in zip(t.its, t.latencies(median)):
            yield config, "latency_us", i, v, US


def _hop(t: _Trial) -> Iterator[Row]:
    for i, v in zip(t.its, t.latencies(0.23)):
        yield "raw_flag_one_way", "one_hop_us", i, v, US
    for i, v in zip(t.its, t.latencies(3.2)):
        yield "global_memory_mailbox", "one_hop_us", i, v, US


def _trace_cost(t: _Trial) -> Iterator[Row]:
    for prefix, hop, ask in (("untraced_", 2.2, 5.3), ("trace_off_", 2.22, 5.35), ("trace_on_", 2.55, 5.6)):
        for i, v in zip(t.its, t.latencies(hop)):
            yield f"{prefix}global_memory_mailbox", "one_hop_us", i, v, US
        for i, v in zip(t.its, t.latencies(ask)):
            yield f"{prefix}ask_roundtrip", "latency_us", i, v, US


PATHS_PAIRS = 528


def _paths(t: _Trial) -> Iterator[Row]:
    bursts = range(1, min(t.n, 5) + 1)
    idle, busy = t.noisy(70.0, 0.01)[:30], t.noisy(118.0, 0.01)[:30]
    for config, watts in (("path=power;system=none", idle), ("path=power;system=one_idle_actor", busy)):
        for i, w in enumerate(watts, start=1):
            yield config, "power_w", i, w, "watts"
    yield "path=power;system=one_idle_actor", "power_delta_w", 1, float(np.median(busy) - np.median(idle)), "watts"
    for i, v in zip(t.its, t.latencies(1.9)):
        yield "path=host_roundtrip_floor", "latency_us", i, v, US
    for i, v in enumerate(t.latencies(14.0)[:3], start=1):
        yield "path=ask;quiet_ms=1000", "latency_us", i, v, US
    for threads, receivers, rate in ((1, 1, 2.4e5), (4, 4, 2.6e5), (1, 32, 2.4e6), (4, 128, 2.6e6)):
        config = f"path=host_to_gpu;payload=64;threads={threads};receivers={receivers}"
        for i, m in zip(bursts, t.noisy(rate, 0.03)):
            yield config, "msgs_per_s", i, m, MSGS
            yield config, "full_retries", i, float(t.rng.poisson(100)), "count"
    for payload, pairs, spread, rate in ((64, 1, "one_pair", 5.3e5), (4096, 1, "one_pair", 4.1e4),
                                         (64, PATHS_PAIRS, "all_workers", 2.8e8)):
        config = f"path=k2k;payload={payload};pairs={pairs};receiver=other;spread={spread}"
        for i, m in zip(bursts, t.noisy(rate, 0.03)):
            yield config, "msgs_per_s", i, m, MSGS
            yield config, "bytes_per_s", i, m * payload, BYTES
            yield config, "full_retries", i, float(t.rng.poisson(1000)), "count"
            if pairs > 1:
                yield config, "start_skew_us", i, 2000 * t.rng.lognormal(0, 0.1), US
    for i, v in zip(t.its, t.latencies(9.5)):
        yield "path=ask;background_pairs=0", "latency_us", i, v, US
    config = "path=ask;background_pairs=4;background_payload=64"
    for i, v in zip(t.its, t.latencies(12.0)):
        yield config, "latency_us", i, v, US
    yield config, "background_msgs_per_s", 1, 2.1e6 * t.drift, MSGS


def _exp2(t: _Trial) -> Iterator[Row]:
    for depth in (256, 1024, 4096):
        for payload in PAYLOADS:
            for path, rate in (("host", 2.0e6), ("k2k", 9.0e6)):
                config = f"path={path};payload={payload};depth={depth}"
                for i, m in zip(t.its, t.noisy(rate * (1 + depth / 8192) / (1 + payload / 2048), 0.03)):
                    yield config, "msgs_per_s", i, m, MSGS
                    yield config, "bytes_per_s", i, m * payload, BYTES
                    yield config, "queue_full_fraction", i, 0.001 * 256 / depth, "fraction"
                    yield config, "full_retries", i, float(t.rng.poisson(3)), "count"


def _exp3(t: _Trial) -> Iterator[Row]:
    for mode in ("weak", "strong"):
        for k in range(11):
            actors = 2**k
            config = f"mode={mode};actors={actors}"
            yield config, "actors_per_worker", 1, float(max(1, actors // 128)), "count"
            rates = t.noisy(1.0e6 * (0.98 if mode == "weak" else 0.95) ** k, 0.02)
            for i, rate in zip(t.its, rates):
                yield config, "aggregate_msgs_per_s", i, rate * actors, MSGS
                yield config, "per_actor_msgs_per_s", i, rate, MSGS
                yield config, "start_skew_us", i, 0.5 * k * t.rng.lognormal(0, 0.2), US


def _exp4(t: _Trial) -> Iterator[Row]:
    yield "phase=peak", "peak_msgs_per_s", 1, 1.0e7 * t.drift, MSGS
    config = "rate=90pct"
    for i in t.its:
        yield config, "window_msgs_per_s", i, 9.0e6 * t.rng.normal(1, 0.01), MSGS
        yield config, "window_offered_per_s", i, 9.0e6 * t.rng.normal(1, 0.002), MSGS
        yield config, "window_asks", i, 9500.0, "count"
        yield config, "window_p50_us", i, 4.0 * t.rng.normal(1, 0.02), US
        yield config, "window_p99_us", i, 9.0 * t.rng.normal(1, 0.05), US
        yield config, "window_mailbox_depth", i, float(t.rng.integers(0, 40)), "messages"
        yield config, "window_ring_backlog", i, float(t.rng.integers(0, 200)), "messages"
        yield config, "window_ring_full", i, 0.0, "count"


def _exp5(t: _Trial) -> Iterator[Row]:
    for mix in ("compute_heavy", "balanced", "comm_heavy"):
        for model, speed in (("persistent", 6.0), ("traditional", 1.0)):
            config = f"mix={mix};model={model}"
            for op in ("compute", "inject", "query"):
                for i, v in zip(t.its, t.latencies(20.0 / speed)):
                    yield f"{config};op={op}", "latency_us", i, v, US
            for i, v in zip(range(1, t.n // 100 + 2), t.noisy(speed * 5.0e4, 0.03)):
                yield config, "ops_per_s", i, v, OPS


def _exp6(t: _Trial) -> Iterator[Row]:
    for depth in (256, 32):
        d = f";mailbox={depth}"
        useful = 256 * 16384.0
        for part, value in (("useful_state", useful), ("actor_state", useful), ("mailboxes", 256 * depth * 64.0),
                            ("device_used", useful * 1.04), ("per_actor_infrastructure", 0.04 * 16384)):
            yield f"part={part}{d}", "bytes", 1, value, "bytes"
        for basis, pct in (("used", 4.0), ("allocated", 9.5)):
            yield f"basis={basis}{d}", "overhead_pct", 1, pct, "percent"


def _exp7(t: _Trial) -> Iterator[Row]:
    for fault in ("nan", "hang"):
        config = f"fault={fault}"
        for phase, level in (("before", 1.0), ("during", 0.97 if fault == "nan" else 0.9), ("after", 0.99)):
            for i, v in enumerate(t.noisy(8.5e6 * level, 0.02)[:20], start=1):
                yield f"{config};phase={phase}", "healthy_msgs_per_s", i, v, MSGS
        yield config, "recovery_ms", 1, 3.0 * t.rng.lognormal(0, 0.2), "milliseconds"
        yield config, "healthy_actors", 1, 32.0, "count"
        yield config, "corruption_events", 1, 0.0, "count"


def _exp8(t: _Trial) -> Iterator[Row]:
    for method, speed in (("global", 1.0), ("dsmem", 2.5), ("tma", 1.8)):
        for payload in PAYLOADS:
            config = f"method={method};payload={payload}"
            for i, us in zip(t.its, t.latencies((1.0 + payload / 1024) / speed)):
                yield config, "latency_us", i, us, US
                yield config, "bytes_per_s", i, payload / (us * 1e-6), BYTES


def _jit(t: _Trial) -> Iterator[Row]:
    for i in range(1, 4):
        yield "cold_two_archs", "build_ms", i, 1600 * t.rng.normal(1, 0.03), "milliseconds"
    for i, v in zip(t.its, t.noisy(0.9, 0.05)):
        yield "cached_two_archs", "build_ms", i, v, "milliseconds"


# Command-line name -> (experiment name in the CSV, row generator).
GENERATORS: dict[str, tuple[str, Callable[[_Trial], Iterator[Row]]]] = {
    "exp1": ("exp1_launch_overhead", _exp1),
    "hop": ("k2k_hop", _hop),
    "trace_cost": ("trace_overhead", _trace_cost),
    "paths": ("message_paths", _paths),
    "exp2": ("exp2_k2k_throughput", _exp2),
    "exp3": ("exp3_scaling", _exp3),
    "exp4": ("exp4_sustained", _exp4),
    "exp5": ("exp5_mixed", _exp5),
    "exp6": ("exp6_memory", _exp6),
    "exp7": ("exp7_fault_isolation", _exp7),
    "exp8": ("exp8_hopper", _exp8),
    "jit": ("jit_compile", _jit),
}
EXPERIMENTS = tuple(GENERATORS)


def csv_lines(experiment: str, trial: int, iterations: int) -> Iterator[str]:
    """The CSV rows (without the header) of one trial of ``experiment`` (a command-line name)."""
    name, generate = GENERATORS[experiment]
    for config, metric, iteration, value, unit in generate(_Trial(experiment, trial, iterations)):
        yield f"{name},{config},{trial},{iteration},{metric},{value:.6g},{unit},{TIMESTAMP}\n"


def write_trial_csv(path: Path, experiment: str, trial: int, iterations: int) -> None:
    """Writes one trial of ``experiment`` (a command-line name) to ``path``, with the header."""
    with open(path, "w", encoding="utf-8") as f:
        f.write(",".join(HEADER) + "\n")
        f.writelines(csv_lines(experiment, trial, iterations))


def write_run(run_dir: Path, trials: int, iterations: int, experiments=EXPERIMENTS) -> None:
    """A run directory's raw/ folder with every trial of every experiment."""
    raw = run_dir / "raw"
    raw.mkdir(parents=True, exist_ok=True)
    for trial in range(1, trials + 1):
        for experiment in experiments:
            write_trial_csv(raw / f"{experiment}.trial{trial}.csv", experiment, trial, iterations)
