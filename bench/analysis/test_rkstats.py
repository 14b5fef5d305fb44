"""Tests of the benchmark statistics, the CSV reader and the analysis, on
hand-computed numbers and synthetic runs (no GPU needed).

    python3 -m unittest discover -s bench/analysis -v
"""

from __future__ import annotations

import csv
import json
import math
import re
import statistics
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
from scipy import stats as scipy_stats

import rkstats
import synthetic
from rkdata import DataError, HEADER, parse_configuration, read_run

HERE = Path(__file__).resolve().parent
# Student t 97.5th percentiles in closed form: with 1 degree of freedom
# tan(pi (p - 1/2)), with 2 (2p - 1) / sqrt(2 p (1 - p)) (tables: 12.706, 4.303).
T_975_DF1 = math.tan(math.pi * 0.475)
T_975_DF2 = 0.95 / math.sqrt(2 * 0.975 * 0.025)


class PercentileTest(unittest.TestCase):
    def test_linear_interpolation_between_order_statistics(self):
        x = [1.0, 2.0, 3.0, 4.0]
        self.assertEqual(rkstats.percentile(x, 0.0), 1.0)
        self.assertEqual(rkstats.percentile(x, 1.0), 4.0)
        self.assertAlmostEqual(rkstats.percentile(x, 0.5), 2.5)
        self.assertAlmostEqual(rkstats.percentile(x, 0.25), 1.75)  # h = 0.75
        self.assertAlmostEqual(rkstats.percentile(x, 0.95), 3.85)  # h = 2.85
        self.assertEqual(rkstats.percentile([7.0], 0.999), 7.0)

    def test_rejects_empty_and_out_of_range(self):
        with self.assertRaises(ValueError):
            rkstats.percentile([], 0.5)
        with self.assertRaises(ValueError):
            rkstats.percentile([1.0], 1.5)


class SummarizeTest(unittest.TestCase):
    def test_hand_computed_sample(self):
        s = rkstats.summarize([2, 4, 4, 4, 5, 5, 7, 9])
        sd = math.sqrt(32 / 7)  # squared deviations from 5 sum to 32
        self.assertEqual(s["n"], 8)
        self.assertAlmostEqual(s["mean"], 5.0)
        self.assertAlmostEqual(s["median"], 4.5)
        self.assertAlmostEqual(s["std_dev"], sd)
        self.assertAlmostEqual(s["ci_95_lower"], 5 - 1.96 * sd / math.sqrt(8))
        self.assertAlmostEqual(s["ci_95_upper"], 5 + 1.481620734, places=8)
        self.assertAlmostEqual(s["cv"], sd / 5)
        self.assertEqual((s["min"], s["max"]), (2.0, 9.0))
        self.assertAlmostEqual(s["p50"], 4.5)
        self.assertAlmostEqual(s["p95"], 8.3)  # h = 6.65: 7 + 0.65 * (9 - 7)
        self.assertAlmostEqual(s["p99"], 8.86)
        self.assertAlmostEqual(s["p999"], 8.986)

    def test_outliers_counted_and_reported_both_ways(self):
        # median 4.5, MAD 0.5: 9 scores 0.6745 * 4.5 / 0.5 = 6.07 (out), 2 and 7 score 3.37 (in)
        s = rkstats.summarize([2, 4, 4, 4, 5, 5, 7, 9])
        self.assertEqual(s["outliers"], 1)
        self.assertEqual(s["outlier_method"], "mad")
        self.assertEqual(s["n"], 8)  # the outlier stays in the main statistics
        w = s["without_outliers"]
        self.assertEqual(w["outliers_removed"], 1)
        self.assertEqual(w["n"], 7)
        self.assertAlmostEqual(w["mean"], 31 / 7)
        self.assertEqual(w["max"], 7.0)

    def test_mad_outliers_exact_count(self):
        values = [1, 2, 3, 4, 5, 6, 7, 8, 9, 30, -20]  # median 5, MAD 3
        scores, method = rkstats.modified_z_scores(values)
        self.assertEqual(method, "mad")
        self.assertAlmostEqual(scores[9], 0.6745 * 25 / 3)
        self.assertAlmostEqual(scores[10], -0.6745 * 25 / 3)
        self.assertAlmostEqual(scores[8], 0.6745 * 4 / 3)
        s = rkstats.summarize(values)
        self.assertEqual(s["outliers"], 2)
        self.assertEqual(s["without_outliers"]["n"], 9)
        self.assertAlmostEqual(s["without_outliers"]["mean"], 5.0)
        self.assertAlmostEqual(s["without_outliers"]["std_dev"], math.sqrt(7.5))

    def test_zero_mad_falls_back_to_mean_absolute_deviation(self):
        values = [5, 5, 5, 5, 5, 5, 6, 20]  # MAD 0; mean absolute deviation 16 / 8 = 2
        scores, method = rkstats.modified_z_scores(values)
        self.assertEqual(method, "meanad")
        self.assertAlmostEqual(scores[7], 15 / (1.253314 * 2))
        self.assertAlmostEqual(scores[6], 1 / (1.253314 * 2))
        s = rkstats.summarize(values)
        self.assertEqual(s["outliers"], 1)
        self.assertEqual(s["without_outliers"]["max"], 6.0)

    def test_identical_values(self):
        s = rkstats.summarize([3.0, 3.0, 3.0])
        self.assertEqual((s["outliers"], s["outlier_method"]), (0, "identical"))
        self.assertEqual(s["std_dev"], 0.0)
        self.assertEqual(s["cv"], 0.0)

    def test_single_value_has_no_spread(self):
        s = rkstats.summarize([4.0])
        self.assertEqual(s["n"], 1)
        self.assertIsNone(s["std_dev"])
        self.assertIsNone(s["ci_95_lower"])
        self.assertIsNone(s["cv"])
        self.assertEqual(s["p999"], 4.0)

    def test_rejects_empty_and_non_finite(self):
        with self.assertRaises(ValueError):
            rkstats.summarize([])
        with self.assertRaises(ValueError):
            rkstats.summarize([1.0, float("nan")])


class CompareTest(unittest.TestCase):
    # Per-trial means: baseline 11, 20, 16; candidate 1.1, 4, 2: speedups 10, 5, 8.
    BASE = {1: [10.0, 12.0], 2: [20.0, 20.0], 3: [16.0, 16.0]}
    CAND = {1: [1.0, 1.2], 2: [4.0, 4.0], 3: [2.0, 2.0]}

    def test_geometric_mean_speedup_and_t_interval(self):
        r = rkstats.compare(self.BASE, self.CAND)
        logs = [math.log(10), math.log(5), math.log(8)]
        centre = sum(logs) / 3
        half = T_975_DF2 * statistics.stdev(logs) / math.sqrt(3)
        self.assertAlmostEqual(r["speedup"], 400 ** (1 / 3))
        self.assertAlmostEqual(r["speedup_ci_95"][0], math.exp(centre - half), places=7)
        self.assertAlmostEqual(r["speedup_ci_95"][1], math.exp(centre + half), places=7)
        self.assertEqual(r["trials"], 3)
        self.assertEqual(r["per_trial_speedup"], {"1": 10.0, "2": 5.0, "3": 8.0})

    def test_effect_size_test_and_difference(self):
        r = rkstats.compare(self.BASE, self.CAND)
        b = [v for t in (1, 2, 3) for v in self.BASE[t]]
        c = [v for t in (1, 2, 3) for v in self.CAND[t]]
        pooled = math.sqrt((5 * statistics.variance(b) + 5 * statistics.variance(c)) / 10)
        self.assertAlmostEqual(r["cohens_d"], (statistics.mean(b) - statistics.mean(c)) / pooled)
        self.assertAlmostEqual(r["p_value"], scipy_stats.ttest_ind(b, c, equal_var=False).pvalue)
        self.assertTrue(r["significant"])
        self.assertAlmostEqual(r["abs_diff"], 94 / 6 - 14.2 / 6)
        self.assertAlmostEqual(r["baseline"]["mean"], 94 / 6)
        lo, hi = r["candidate"]["ci_95"]
        self.assertAlmostEqual(hi - lo, 2 * 1.96 * statistics.stdev(c) / math.sqrt(6))

    def test_welch_p_value_by_formula(self):
        rng = np.random.default_rng(1)
        b = {1: list(rng.normal(10, 1, 40))}
        c = {1: list(rng.normal(10.4, 3, 25))}
        r = rkstats.compare(b, c)
        m1, m2 = np.mean(b[1]), np.mean(c[1])
        v1, v2 = np.var(b[1], ddof=1) / 40, np.var(c[1], ddof=1) / 25
        df = (v1 + v2) ** 2 / (v1**2 / 39 + v2**2 / 24)
        expected = 2 * scipy_stats.t.sf(abs(m1 - m2) / math.sqrt(v1 + v2), df)
        self.assertAlmostEqual(r["p_value"], expected)
        self.assertEqual(r["significant"], expected < 0.05)

    def test_higher_is_better_inverts_the_ratio_and_the_sign(self):
        base = {1: [100.0], 2: [110.0]}
        cand = {1: [200.0], 2: [330.0]}
        r = rkstats.compare(base, cand, higher_is_better=True)
        self.assertAlmostEqual(r["speedup"], math.sqrt(6))  # speedups 2 and 3
        half = T_975_DF1 * statistics.stdev([math.log(2), math.log(3)]) / math.sqrt(2)
        self.assertAlmostEqual(r["speedup_ci_95"][1], math.exp(math.log(6) / 2 + half), places=7)
        self.assertGreater(r["cohens_d"], 0)

    def test_one_trial_has_no_interval(self):
        r = rkstats.compare({1: [10.0, 11.0]}, {1: [5.0, 6.0]})
        self.assertAlmostEqual(r["speedup"], 21 / 11)
        self.assertIsNone(r["speedup_ci_95"])
        self.assertIn("one trial", r["speedup_note"])

    def test_no_shared_trial_has_no_speedup(self):
        r = rkstats.compare({1: [10.0, 11.0]}, {2: [5.0, 6.0]})
        self.assertIsNone(r["speedup"])
        self.assertIn("no trial", r["speedup_note"])


def write_csv(path: Path, rows: list[str], header: str = ",".join(HEADER)) -> Path:
    path.write_text(header + "\n" + "".join(r + "\n" for r in rows), encoding="utf-8")
    return path


ROW = "exp1_launch_overhead,traditional,1,{it},latency_us,{v},microseconds,2026-11-21T10:00:00Z"


class ReaderTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.raw = Path(self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    def assertDataError(self, where: str):
        with self.assertRaises(DataError) as cm:
            read_run(self.raw)
        self.assertIn(where, str(cm.exception))

    def test_reads_groups_parameters_and_trials(self):
        write_csv(self.raw / "a.trial1.csv", [ROW.format(it=1, v=5.5), ROW.format(it=2, v=6),
                                              "exp2_k2k_throughput,path=k2k;payload=256;depth=1024,1,1,msgs_per_s,1e6,"
                                              "messages_per_second,2026-11-21T10:00:01Z"])
        write_csv(self.raw / "a.trial2.csv", [ROW.format(it=1, v=7).replace(",1,1,", ",2,1,")])
        data = read_run(self.raw)
        g = data.groups[("exp1_launch_overhead", "traditional", "latency_us")]
        self.assertEqual(g.trial_values(), {1: [5.5, 6.0], 2: [7.0]})
        self.assertEqual(g.params, {"name": "traditional"})
        k = data.groups[("exp2_k2k_throughput", "path=k2k;payload=256;depth=1024", "msgs_per_s")]
        self.assertEqual(k.params, {"path": "k2k", "payload": "256", "depth": "1024"})
        self.assertEqual(k.unit, "messages_per_second")

    def test_reads_compressed_raw_files_alongside_plain_ones(self):
        import gzip
        write_csv(self.raw / "a.trial1.csv", [ROW.format(it=1, v=5.5)])
        write_csv(self.raw / "a.trial2.csv", [ROW.format(it=1, v=7).replace(",1,1,", ",2,1,")])
        plain = (self.raw / "a.trial2.csv").read_bytes()
        (self.raw / "a.trial2.csv").unlink()
        (self.raw / "a.trial2.csv.gz").write_bytes(gzip.compress(plain))
        data = read_run(self.raw)
        g = data.groups[("exp1_launch_overhead", "traditional", "latency_us")]
        self.assertEqual(g.trial_values(), {1: [5.5], 2: [7.0]})

    def test_malformed_row_names_file_and_line(self):
        write_csv(self.raw / "bad.csv", [ROW.format(it=1, v=1), "exp1_launch_overhead,traditional,1,2,latency_us,3"])
        self.assertDataError("bad.csv:3: expected 8 fields, found 6")

    def test_value_that_does_not_parse(self):
        write_csv(self.raw / "x.csv", [ROW.format(it=1, v="fast")])
        self.assertDataError("x.csv:2")

    def test_non_finite_value(self):
        write_csv(self.raw / "x.csv", [ROW.format(it=1, v="nan")])
        self.assertDataError("x.csv:2: value 'nan' is not finite")

    def test_wrong_header(self):
        write_csv(self.raw / "h.csv", [ROW.format(it=1, v=1)], header="experiment,configuration,value")
        self.assertDataError("h.csv:1: expected the header")

    def test_malformed_configuration(self):
        write_csv(self.raw / "c.csv", [ROW.format(it=1, v=1).replace("traditional", "path=k2k;payload")])
        self.assertDataError("c.csv:2: malformed configuration part 'payload'")

    def test_unit_mismatch(self):
        write_csv(self.raw / "a.csv", [ROW.format(it=1, v=1)])
        write_csv(self.raw / "b.csv", [ROW.format(it=2, v=1).replace("microseconds", "nanoseconds")])
        self.assertDataError("b.csv:2: unit 'nanoseconds' differs")

    def test_duplicate_measurement(self):
        write_csv(self.raw / "a.csv", [ROW.format(it=1, v=1)])
        write_csv(self.raw / "b.csv", [ROW.format(it=1, v=2)])
        with self.assertRaises(DataError) as cm:
            read_run(self.raw)
        self.assertIn("b.csv:2", str(cm.exception))
        self.assertIn("a.csv:2", str(cm.exception))

    def test_no_files(self):
        self.assertDataError("no raw CSV files")

    def test_parse_configuration(self):
        self.assertEqual(parse_configuration("launch_sync"), {"name": "launch_sync"})
        self.assertEqual(parse_configuration("mode=weak;actors=64"), {"mode": "weak", "actors": "64"})
        for bad in ("", "a=1;b", "a=1;a=2", "a=", "=1", "a=1;;b=2"):
            with self.assertRaises(ValueError, msg=bad):
                parse_configuration(bad)


ENVIRONMENT = {
    "captured_at": "2026-11-21T09:59:00Z",
    "system": {"gpu": "NVIDIA H100 80GB HBM3", "driver": "580.159.04", "cuda": "13.0", "compute_cap": "9.0",
               "gpu_clock_mhz": 1980, "mem_clock_mhz": 2619, "ecc": True, "clocks_locked": False,
               "compute_mode": "Default"},
    "gpu": {"present": True, "name": "NVIDIA H100 80GB HBM3", "driver_version": "580.159.04", "compute_cap": 9.0,
            "sm_clock_mhz": 1980, "max_sm_clock_mhz": 1980, "mem_clock_mhz": 2619, "max_mem_clock_mhz": 2619,
            "ecc_mode": "Enabled", "compute_mode": "Default", "persistence_mode": "Enabled", "temperature_c": 34,
            "power_draw_w": 71.5, "pstate": "P0", "driver_cuda_version": "13.0"},
    "controls": {"clocks_locked": False, "clocks_basis": "no user clock limit reported; SM 1980 MHz",
                 "exclusive_mode": False, "compute_mode": "Default"},
    "host": {"os": "Debian GNU/Linux 12 (bookworm)", "kernel": "6.1.0", "cpu_model": "Xeon", "cpu_count": 16,
             "cpu_governor": "powersave", "processes": ["PID COMMAND %CPU", "1 init 0.0"]},
    "software": {"git_commit": "0123abcd", "git_dirty": False, "cuda_toolkit": "13.0", "rkbench_version": "unknown"},
    "ambient_temperature_c": None,
}
RUN = {"profile": "quick", "trials": 3, "experiments": list(synthetic.EXPERIMENTS), "warmup_seconds_requested": 0,
       "warmup_seconds_done": 0, "started": "2026-11-21T10:00:00Z", "finished": "2026-11-21T10:05:00Z",
       "fresh_process_per_trial": True, "failures": []}
EXPECTED_FIGURES = [
    "exp1_launch_overhead.latency_us.box.svg",
    "k2k_hop.one_hop_us.box.svg",
    "exp5_mixed.latency_us.box.svg",
    "exp8_hopper.latency_us.box.svg",
    "exp1_launch_overhead.latency_us.cdf.svg",
    "k2k_hop.one_hop_us.cdf.svg",
    "exp2_k2k_throughput.msgs_per_s.bar.svg",
    "exp2_k2k_throughput.bytes_per_s.bar.svg",
    "exp5_mixed.ops_per_s.bar.svg",
    "exp8_hopper.bytes_per_s.bar.svg",
    "exp3_scaling.scaling.svg",
    "exp4_sustained.rate_90pct.timeseries.svg",
    "exp2_k2k_throughput.msgs_per_s.heatmap.svg",
]
SEED_SUMMARY_FIELDS = ["experiment", "configuration", "gpu", "metric", "n", "mean", "median", "std_dev", "ci_95_lower",
                       "ci_95_upper", "p50", "p95", "p99", "p999", "min", "max", "cv", "timestamp", "system"]


def run_analyze(run_dir: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(HERE / "analyze.py"), str(run_dir)], capture_output=True, text=True)


class AnalyzeEndToEndTest(unittest.TestCase):
    """analyze.py over a synthetic run of every experiment (3 trials)."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.run_dir = Path(cls.tmp.name) / "run"
        synthetic.write_run(cls.run_dir, trials=3, iterations=60)
        (cls.run_dir / "environment.json").write_text(json.dumps(ENVIRONMENT))
        (cls.run_dir / "run.json").write_text(json.dumps(RUN))
        cls.result = run_analyze(cls.run_dir)
        ok = cls.result.returncode == 0
        cls.summary = json.loads((cls.run_dir / "summary.json").read_text()) if ok else []
        cls.comparisons = json.loads((cls.run_dir / "comparisons.json").read_text()) if ok else {}
        cls.report = (cls.run_dir / "report.md").read_text() if ok else ""

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_exit_status(self):
        self.assertEqual(self.result.returncode, 0, self.result.stderr)

    def test_summary_has_the_seed_fields_and_the_raw_numbers(self):
        entry = next(e for e in self.summary if (e["experiment"], e["configuration"], e["metric"])
                     == ("exp1_launch_overhead", "traditional", "latency_us"))
        for name in SEED_SUMMARY_FIELDS + ["outliers", "without_outliers", "trials", "unit", "per_trial"]:
            self.assertIn(name, entry)
        self.assertEqual(entry["system"], ENVIRONMENT["system"])
        self.assertEqual(entry["gpu"], "NVIDIA H100 80GB HBM3")
        self.assertEqual((entry["n"], entry["trials"]), (180, 3))
        values = []
        for trial in (1, 2, 3):
            with open(self.run_dir / "raw" / f"exp1.trial{trial}.csv", newline="") as f:
                values += [float(r["value"]) for r in csv.DictReader(f) if r["configuration"] == "traditional"]
        self.assertAlmostEqual(entry["mean"], statistics.mean(values))
        self.assertAlmostEqual(entry["std_dev"], statistics.stdev(values))
        self.assertAlmostEqual(entry["p99"], float(np.percentile(values, 99)))
        self.assertEqual(entry["without_outliers"]["n"], 180 - entry["outliers"])
        self.assertEqual([p["trial"] for p in entry["per_trial"]], [1, 2, 3])

    def test_every_group_is_summarised(self):
        keys = {(e["experiment"], e["configuration"], e["metric"]) for e in self.summary}
        self.assertIn(("exp3_scaling", "mode=weak;actors=1024", "per_actor_msgs_per_s"), keys)
        self.assertIn(("jit_compile", "cold_two_archs", "build_ms"), keys)
        self.assertIn(("exp7_fault_isolation", "fault=nan", "corruption_events"), keys)

    def test_comparisons(self):
        done = self.comparisons["comparisons"]
        exp1 = {c["comparison"] for c in done if c["experiment"] == "exp1_launch_overhead"}
        self.assertEqual(len(exp1), 10)  # 4 baselines vs Ask, 6 (with the enqueue calls) vs Send
        self.assertIn("launch_return_vs_persistent_send", exp1)
        self.assertIn("traditional_vs_persistent_send", exp1)
        self.assertIn("cuper_persistent_roundtrip_vs_persistent_ask_roundtrip", exp1)
        self.assertEqual(len([c for c in done if c["experiment"] == "exp2_k2k_throughput"]), 12 * 2)
        exp5 = [(c["context"], c["metric"]) for c in done if c["experiment"] == "exp5_mixed"]
        self.assertEqual(len(exp5), 3 * 3 + 3)  # latency per mix and operation, throughput per mix
        self.assertIn(("mix=balanced;op=inject", "latency_us"), exp5)
        self.assertIn(("mix=comm_heavy", "ops_per_s"), exp5)
        exp8 = [c for c in done if c["experiment"] == "exp8_hopper"]
        self.assertEqual({c["comparison"] for c in exp8}, {"global_vs_dsmem", "global_vs_tma"})
        self.assertEqual(len(exp8), 2 * 4 * 2)  # two methods, four payloads, latency and bandwidth
        exp7 = {(c["comparison"], c["context"]) for c in done if c["experiment"] == "exp7_fault_isolation"}
        self.assertEqual(exp7, {(f"before_vs_{p}", f"fault={f}") for p in ("during", "after") for f in ("nan", "hang")})
        c = next(c for c in done if c["comparison"] == "traditional_vs_persistent_send")
        for name in ("comparison", "metric", "baseline", "candidate", "speedup", "speedup_ci_95", "cohens_d", "p_value",
                     "significant", "abs_diff"):
            self.assertIn(name, c)
        self.assertEqual(c["baseline"]["configuration"], "traditional")
        self.assertEqual(len(c["baseline"]["ci_95"]), 2)
        self.assertGreater(c["speedup"], 50)  # about 14 us / 0.12 us
        self.assertTrue(c["significant"])
        k2k = next(c for c in done if c["comparison"] == "host_vs_k2k" and c["metric"] == "msgs_per_s")
        self.assertTrue(k2k["higher_is_better"])
        self.assertAlmostEqual(k2k["speedup"], 4.5, delta=0.3)
        self.assertIn({"comparison": "exp2_k2k_throughput: path=host vs path=k2k",
                       "reason": "queue_full_fraction has no better direction"}, self.comparisons["skipped"])

    def test_figures_exist_and_are_svg(self):
        plots = self.run_dir / "plots"
        for name in EXPECTED_FIGURES:
            path = plots / name
            self.assertTrue(path.exists(), name)
            root = ET.parse(path).getroot()
            self.assertEqual(root.tag, "{http://www.w3.org/2000/svg}svg")
            texts = root.findall(".//{http://www.w3.org/2000/svg}text")
            self.assertTrue(texts, f"{name} has no text elements (fonts must stay text)")
            sizes = [float(s) for t in texts for s in re.findall(r"font: ([\d.]+)px", t.get("style", ""))]
            self.assertTrue(sizes and min(sizes) >= 8, f"{name}: font sizes {sorted(set(sizes))}")

    def test_report(self):
        self.assertIn("| GPU clocks locked (frequency reported) | no | no user clock limit reported", self.report)
        self.assertIn("| Exclusive compute mode enabled | no | compute mode: Default; recorded, not set |", self.report)
        self.assertIn("| CPU governor set to performance | no | governor: powersave; recorded, not set |", self.report)
        self.assertIn("| Multiple trials completed (minimum 10) | no | fewest trials of any configuration: 3",
                      self.report)
        self.assertIn("| ECC status recorded | yes | Enabled |", self.report)
        self.assertIn("| Heatmaps for parameter sensitivity (payload x queue depth) | yes |", self.report)
        self.assertIn("| `persistent_send` | 3 | 180 |", self.report)
        self.assertIn("traditional_vs_persistent_send", self.report)
        self.assertNotIn("skipped (", self.report)
        # 60 values a trial: too few to look for lattices.
        self.assertIn("## Lattices", self.report)
        self.assertIn("No latency sample sits on a lattice.", self.report)


class LatticeTest(unittest.TestCase):
    PERIODS = (0.1, 1.0, 0.002)

    def on_lattice(self, rng, n, period=0.47, base=3.85, steps=4, jitter=0.03):
        return base + period * rng.integers(0, steps, n) + rng.normal(0.0, jitter, n)

    def test_finds_the_period_and_offset_of_a_lattice(self):
        x = self.on_lattice(np.random.default_rng(7), 1000)
        lat = rkstats.lattice(x, *self.PERIODS)
        self.assertTrue(lat["on_lattice"])
        self.assertAlmostEqual(lat["period"], 0.47, delta=0.006)
        self.assertGreater(lat["coherence"], 0.6)
        # The points lie at 3.85 + k * 0.47: 3.85 mod 0.47 = 0.09.
        self.assertAlmostEqual(lat["offset"], 3.85 % lat["period"], delta=0.03)

    def test_a_smooth_sample_is_not_on_one(self):
        lat = rkstats.lattice(np.random.default_rng(7).normal(4.6, 0.5, 1000), *self.PERIODS)
        self.assertFalse(lat["on_lattice"])
        self.assertLess(lat["contrast"], rkstats.LATTICE_CONTRAST)

    def test_one_narrow_peak_with_a_tail_is_not_on_one(self):
        # Coherent at every long period (the peak), with a contrast of about 0.
        rng = np.random.default_rng(7)
        x = np.concatenate([rng.normal(1.3, 0.01, 950), rng.uniform(1.5, 5.0, 50)])
        lat = rkstats.lattice(x, *self.PERIODS)
        self.assertFalse(lat["on_lattice"])

    def test_too_few_values_and_bad_arguments(self):
        x = self.on_lattice(np.random.default_rng(7), rkstats.LATTICE_MIN_VALUES - 1)
        self.assertIsNone(rkstats.lattice(x, *self.PERIODS))
        with self.assertRaises(ValueError):
            rkstats.lattice(x, 1.0, 0.5, 0.002)
        with self.assertRaises(ValueError):
            rkstats.lattice(x, 0.1, 1.0, 0.0)
        with self.assertRaises(ValueError):
            rkstats.lattice(np.append(self.on_lattice(np.random.default_rng(7), 300), np.nan), *self.PERIODS)

    def test_the_report_names_the_latencies_on_a_lattice(self):
        with tempfile.TemporaryDirectory() as tmp:
            raw = Path(tmp) / "raw"
            raw.mkdir()
            rng = np.random.default_rng(11)
            for trial in (1, 2):
                with open(raw / f"exp1.trial{trial}.csv", "w", newline="") as f:
                    w = csv.writer(f)
                    w.writerow(HEADER)
                    samples = {"persistent_ask_roundtrip": self.on_lattice(rng, 400, period=0.5),
                               "cuper_persistent_roundtrip": rng.normal(2.0, 0.3, 400)}
                    for config, values in samples.items():
                        for i, v in enumerate(values, 1):
                            w.writerow(["exp1_launch_overhead", config, trial, i, "latency_us", f"{v:.4f}",
                                        "microseconds", "2026-12-06T00:00:00Z"])
            result = run_analyze(Path(tmp))
            self.assertEqual(result.returncode, 0, result.stderr)
            report = (Path(tmp) / "report.md").read_text()
            self.assertIn("## Lattices", report)
            row = next(line for line in report.splitlines() if "`persistent_ask_roundtrip`" in line and "of 2" in line)
            self.assertIn("| 2 of 2 | 0.5", row)
            self.assertNotIn("`cuper_persistent_roundtrip` | latency_us | ", report.split("## Lattices")[1])


class AnalyzePartialDataTest(unittest.TestCase):
    def test_absent_data_is_skipped_with_a_reason(self):
        with tempfile.TemporaryDirectory() as tmp:
            run_dir = Path(tmp)
            synthetic.write_run(run_dir, trials=1, iterations=30, experiments=("exp1",))
            result = run_analyze(run_dir)
            self.assertEqual(result.returncode, 0, result.stderr)
            report = (run_dir / "report.md").read_text()
            self.assertIn("- time series for exp4_sustained: skipped (no exp4_sustained data)", report)
            self.assertIn("- heatmap for exp2_k2k_throughput: skipped (no exp2_k2k_throughput data)", report)
            self.assertIn("No environment.json", report)
            comparisons = json.loads((run_dir / "comparisons.json").read_text())
            c = comparisons["comparisons"][0]
            self.assertIsNone(c["speedup_ci_95"])
            self.assertIn("one trial", c["speedup_note"])
            self.assertIn({"comparison": "exp8_hopper: method=global vs method=dsmem", "reason": "no exp8_hopper data"},
                          comparisons["skipped"])

    def test_malformed_row_fails_the_analysis(self):
        with tempfile.TemporaryDirectory() as tmp:
            run_dir = Path(tmp)
            (run_dir / "raw").mkdir()
            write_csv(run_dir / "raw" / "exp1.trial1.csv", [ROW.format(it=1, v=1), ROW.format(it=2, v=1)[:-30]])
            result = run_analyze(run_dir)
            self.assertEqual(result.returncode, 1)
            self.assertIn("exp1.trial1.csv:3:", result.stderr)
            self.assertFalse((run_dir / "summary.json").exists())


if __name__ == "__main__":
    unittest.main()
