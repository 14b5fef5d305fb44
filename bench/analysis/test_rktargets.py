"""Tests of issue 8's target computation (rktargets.py), on hand-computed
runs and a synthetic one (no GPU needed).

    python3 -m unittest discover -s bench/analysis -v
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

import rktargets
import synthetic
from rkdata import HEADER, read_run

HERE = Path(__file__).resolve().parent
STAMP = "2026-11-21T10:00:00Z"
UNITS = {"latency_us": "microseconds", "one_hop_us": "microseconds", "msgs_per_s": "messages/second",
         "bytes_per_s": "bytes/second", "background_msgs_per_s": "messages/second", "power_delta_w": "watts"}


def write_run(directory: Path, rows: list[tuple]) -> None:
    """rows: (experiment, configuration, trial, metric, values); one file per (experiment, trial)."""
    raw = directory / "raw"
    raw.mkdir(parents=True, exist_ok=True)
    files: dict[tuple[str, int], list[str]] = {}
    for experiment, configuration, trial, metric, values in rows:
        lines = files.setdefault((experiment, trial), [])
        for i, v in enumerate(values, start=1):
            lines.append(f"{experiment},{configuration},{trial},{i},{metric},{v!r},{UNITS[metric]},{STAMP}")
    for (experiment, trial), lines in files.items():
        (raw / f"{experiment}.trial{trial}.csv").write_text(",".join(HEADER) + "\n" + "\n".join(lines) + "\n")


def by_key(results: list[dict]) -> dict[str, dict]:
    return {r["target"]: r for r in results}


class TargetTest(unittest.TestCase):
    def evaluate(self, rows: list[tuple]) -> dict[str, dict]:
        with tempfile.TemporaryDirectory() as tmp:
            write_run(Path(tmp), rows)
            return by_key(rktargets.evaluate(read_run(Path(tmp) / "raw")))

    def test_ratios_are_medians_over_trials_of_per_trial_statistics(self):
        exp1 = "exp1_launch_overhead"
        r = self.evaluate([
            (exp1, "persistent_ask_roundtrip", 1, "latency_us", [2.0, 2.2, 2.4]),  # p50 2.2, p99 2.396
            (exp1, "persistent_ask_roundtrip", 2, "latency_us", [2.6, 2.6, 9.0]),  # p50 2.6, p99 8.872
            (exp1, "persistent_ask_roundtrip", 3, "latency_us", [2.3, 2.4, 2.5]),  # p50 2.4, p99 2.498
            (exp1, "cuper_persistent_roundtrip", 1, "latency_us", [1.9, 2.0, 2.1]),  # p50 2.0
            (exp1, "cuper_persistent_roundtrip", 2, "latency_us", [1.8, 2.0, 2.2]),  # p50 2.0
            (exp1, "cuper_persistent_roundtrip", 3, "latency_us", [2.0, 2.1, 2.2]),  # p50 2.1
            (exp1, "persistent_send", 1, "latency_us", [0.04, 0.05, 0.3]),
            (exp1, "persistent_send", 2, "latency_us", [0.06, 0.07, 0.08]),
        ])
        p50 = r["ask_p50"]
        self.assertEqual((p50["status"], p50["trials"]), ("met", 3))
        self.assertAlmostEqual(p50["measure"]["value"], 2.4)  # median of 2.2, 2.6, 2.4
        self.assertAlmostEqual(p50["floor"]["value"], 2.0)    # median of 2.0, 2.0, 2.1
        self.assertAlmostEqual(p50["value"], 1.2)
        self.assertAlmostEqual(p50["per_trial_ratio"]["3"], 2.4 / 2.1)
        p99 = r["ask_p99"]
        self.assertAlmostEqual(p99["measure"]["value"], 2.498)  # the median of the per-trial p99s, not the pooled p99
        self.assertAlmostEqual(p99["value"], 1.249)
        self.assertEqual(p99["status"], "met")
        send = r["send_p50"]
        self.assertAlmostEqual(send["value"], (0.05 + 0.07) / 2)  # median of two trials' medians
        self.assertEqual((send["status"], send["unit"]), ("missed", "us"))

    def test_a_ratio_uses_only_trials_that_measured_both_sides(self):
        hop = "k2k_hop"
        r = self.evaluate([
            (hop, "global_memory_mailbox", 1, "one_hop_us", [0.4, 0.4]),
            (hop, "global_memory_mailbox", 2, "one_hop_us", [5.0, 5.0]),  # this process measured no floor
            (hop, "raw_flag_one_way", 1, "one_hop_us", [0.25, 0.25]),
        ])["hop_p50"]
        self.assertEqual((r["trials"], r["status"]), (1, "met"))
        self.assertAlmostEqual(r["value"], 1.6)
        self.assertEqual(list(r["per_trial_ratio"]), ["1"])

    def test_throughput_targets_and_the_largest_pair_count(self):
        paths = "message_paths"
        r = self.evaluate([
            (paths, "path=host_to_gpu;payload=64;threads=1;receivers=1", 1, "msgs_per_s", [6e5]),
            (paths, "path=host_to_gpu;payload=64;threads=1;receivers=32", 1, "msgs_per_s", [1.2e7, 0.9e7, 1.1e7]),
            (paths, "path=host_to_gpu;payload=64;threads=4;receivers=4", 1, "msgs_per_s", [2.5e7]),
            (paths, "path=host_to_gpu;payload=64;threads=4;receivers=128", 1, "msgs_per_s", [1.9e7]),
            (paths, "path=k2k;payload=64;pairs=1;receiver=other;spread=one_pair", 1, "msgs_per_s", [6e6]),
            (paths, "path=k2k;payload=4096;pairs=1;receiver=other;spread=one_pair", 1, "bytes_per_s", [4e9, 6e9]),
            (paths, "path=k2k;payload=64;pairs=64;receiver=other;spread=all_workers", 1, "msgs_per_s", [2e9]),
            (paths, "path=k2k;payload=64;pairs=528;receiver=other;spread=all_workers", 1, "msgs_per_s", [5e8]),
        ])
        # Of the host configurations, the one with the most receivers.
        self.assertEqual((r["host_to_gpu_1"]["status"], r["host_to_gpu_1"]["value"]), ("met", 1.1e7))
        self.assertEqual(r["host_to_gpu_1"]["measure"]["configuration"],
                         "path=host_to_gpu;payload=64;threads=1;receivers=32")
        self.assertEqual((r["host_to_gpu_4"]["status"], r["host_to_gpu_4"]["value"]), ("missed", 1.9e7))
        self.assertEqual(r["k2k_pair_64"]["status"], "met")
        self.assertEqual((r["k2k_pair_4k"]["status"], r["k2k_pair_4k"]["value"]), ("met", 5e9))  # >= holds at equality
        agg = r["k2k_all_64"]
        self.assertEqual(agg["measure"]["configuration"],
                         "path=k2k;payload=64;pairs=528;receiver=other;spread=all_workers")
        self.assertEqual(agg["status"], "missed")

    def test_ask_under_background_needs_the_background(self):
        paths = "message_paths"
        floor = (paths, "path=host_roundtrip_floor", 1, "latency_us", [2.0, 2.0, 2.0])
        loaded = "path=ask;background_pairs=4;background_payload=64"
        asks = (paths, loaded, 1, "latency_us", [3.0] * 98 + [3.8, 4.0])  # p99: h = 98.01, 3.8 + 0.01 * 0.2
        idle = (paths, "path=ask;background_pairs=0", 1, "latency_us", [100.0] * 10)  # not the loaded one
        quiet = (paths, "path=ask;quiet_ms=1000", 1, "latency_us", [3.0, 5.0, 4.2])
        strong = self.evaluate([floor, asks, idle, quiet, (paths, loaded, 1, "background_msgs_per_s", [2e6])])
        t = strong["ask_p99_background"]
        self.assertEqual(t["status"], "met")
        self.assertAlmostEqual(t["value"], 3.802 / 2.0)
        self.assertEqual(t["measure"]["configuration"], loaded)
        self.assertEqual(t["condition"]["value"], 2e6)
        self.assertEqual(strong["quiet_ask"]["status"], "missed")  # 4.2 / 2.0
        self.assertAlmostEqual(strong["quiet_ask"]["value"], 2.1)
        weak = self.evaluate([floor, asks, (paths, loaded, 1, "background_msgs_per_s", [4e5])])["ask_p99_background"]
        self.assertEqual(weak["status"], "not evaluable")
        self.assertIn("background_msgs_per_s was 4e+05", weak["reason"])
        none = self.evaluate([floor, idle])["ask_p99_background"]
        self.assertEqual(none["status"], "not evaluable")  # only the no-background Asks: no background rate

    def test_missing_sides_and_power(self):
        paths = "message_paths"
        r = self.evaluate([
            (paths, "path=ask;quiet_ms=1000", 1, "latency_us", [3.0]),
            (paths, "path=power;system=one_idle_actor", 1, "power_delta_w", [12.0]),
            (paths, "path=power;system=one_idle_actor", 2, "power_delta_w", [20.0]),
            (paths, "path=power;system=one_idle_actor", 3, "power_delta_w", [14.0]),
        ])
        self.assertEqual(r["quiet_ask"]["status"], "no data")
        self.assertIn("host_roundtrip_floor", r["quiet_ask"]["reason"])
        self.assertEqual((r["idle_power"]["status"], r["idle_power"]["value"]), ("met", 14.0))
        self.assertEqual(r["send_p50"]["status"], "no data")
        self.assertIsNone(r["send_p50"]["value"])

    def test_a_floor_from_another_process_is_refused(self):
        with self.assertRaises(ValueError):
            rktargets.Target("bad", "Ask over a floor of another experiment",
                             rktargets.measure("message_paths", "latency_us", path="ask", quiet_ms="1000"), "<=", 2.0,
                             "x floor", floor=rktargets.measure("exp1_launch_overhead", "latency_us",
                                                                name="cuper_persistent_roundtrip"))


class AnalyzeTargetsTest(unittest.TestCase):
    def test_analyze_writes_targets_json_and_the_report_section(self):
        with tempfile.TemporaryDirectory() as tmp:
            run_dir = Path(tmp)
            synthetic.write_run(run_dir, trials=2, iterations=40, experiments=("exp1", "hop", "trace_cost", "paths"))
            result = subprocess.run([sys.executable, str(HERE / "analyze.py"), str(run_dir)], capture_output=True,
                                    text=True)
            self.assertEqual(result.returncode, 0, result.stderr)
            doc = json.loads((run_dir / "targets.json").read_text())
            results = by_key(doc["targets"])
            self.assertEqual(set(results), {t.key for t in rktargets.TARGETS})
            self.assertTrue(all(r["status"] in ("met", "missed") for r in results.values()), results)
            self.assertEqual(results["ask_p50"]["trials"], 2)
            report = (run_dir / "report.md").read_text()
            self.assertIn("## Issue 8 targets", report)
            self.assertIn("| K2K one hop p50 / raw fenced flag one way p50 |", report)
            comparisons = json.loads((run_dir / "comparisons.json").read_text())["comparisons"]
            names = {c["comparison"] for c in comparisons}
            self.assertIn("launch_return_vs_persistent_send", names)
            self.assertIn("graph_launch_return_vs_persistent_send", names)
            self.assertIn("raw_flag_one_way_vs_global_memory_mailbox", names)
            self.assertTrue((run_dir / "plots" / "message_paths.latency_us.box.svg").exists())


if __name__ == "__main__":
    unittest.main()
