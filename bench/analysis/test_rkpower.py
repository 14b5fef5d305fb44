"""Tests of rkpower: power samples attributed to the experiment that ran.

    python3 -m unittest discover -s bench/analysis -v
"""

from __future__ import annotations

import tempfile
import unittest
from pathlib import Path

import rkpower
from rkdata import DataError


class ReadPowerTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = Path(self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, runs: list[str], power: list[str]):
        (self.dir / "runs.tsv").write_text("\n".join(["experiment\ttrial\tstart_ms\tend_ms", *runs]) + "\n")
        (self.dir / "power.csv").write_text("\n".join(["epoch_ms,power_w", *power]) + "\n")

    def test_samples_go_to_the_process_that_ran(self):
        self.write(["exp1\t1\t1000\t2000", "hop\t1\t2500\t3000"],
                   ["900,60.0", "1000,100.0", "1500,110.0", "2000,120.0", "2200,61.0", "2600,200.5",
                    "2700,[N/A]", "3100,59.0"])
        p = rkpower.read_power(self.dir)
        self.assertEqual(p.by_experiment, {"exp1": [100.0, 110.0, 120.0], "hop": [200.5]})
        self.assertEqual((p.samples, p.unreadable, p.outside_runs), (8, 1, 3))
        entries = rkpower.summary_entries(p, {"gpu": "NVIDIA H200"})
        self.assertEqual([(e["experiment"], e["metric"], e["n"], e["mean"]) for e in entries],
                         [("exp1", "power_w", 3, 110.0), ("hop", "power_w", 1, 200.5)])
        section = "\n".join(rkpower.report_section(p))
        self.assertIn("8 samples", section)
        self.assertIn("1 unreadable, 3 taken between processes", section)
        self.assertIn("| exp1 | 3 | 110.0 | 110.0 | 120.0 |", section)

    def test_absent_files_mean_no_power(self):
        self.assertIsNone(rkpower.read_power(self.dir))
        self.assertIn("Not sampled in this run", "\n".join(rkpower.report_section(None)))

    def test_malformed_runs_line_names_file_and_line(self):
        self.write(["exp1\t1\t1000"], ["1000,100.0"])
        with self.assertRaises(DataError) as cm:
            rkpower.read_power(self.dir)
        self.assertIn("runs.tsv:2:", str(cm.exception))


if __name__ == "__main__":
    unittest.main()
