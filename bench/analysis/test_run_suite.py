"""Tests of the trial driver (bench/run_suite.sh), the environment capture and
the provenance check, with stand-ins for nvidia-smi and rkbench on PATH (no
GPU needed). The suite runs from a copy of itself in a temporary git
repository, so that whether this checkout is clean does not matter.

    python3 -m unittest discover -s bench/analysis -v
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path
from unittest import mock

import capture
import provenance
import synthetic

HERE = Path(__file__).resolve().parent
SUITE = HERE.parent / "run_suite.sh"

# An nvidia-smi that answers queries like an H100 with unlocked clocks, logs
# its arguments, and fails on anything that is not a query.
FAKE_NVIDIA_SMI = r"""#!/bin/bash
echo "$*" >> "$FAKE_NVSMI_LOG"
if [ "${FAKE_NVSMI_MODE:-gpu}" = nodevice ]; then echo "No devices were found"; exit 6; fi
case "$1" in
  "") echo "| NVIDIA-SMI 580.159.04    Driver Version: 580.159.04    CUDA Version: 13.0 |" ;;
  -L) echo "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-00000000-0000-0000-0000-000000000000)" ;;
  -q) echo "Clocks Event Reasons: Idle" ;;
  --query-gpu=*)
    case "${1#--query-gpu=}" in
      name) echo "NVIDIA H100 80GB HBM3" ;;
      driver_version) echo "580.159.04" ;;
      compute_cap) echo "9.0" ;;
      clocks.sm|clocks.max.sm) echo 1980 ;;
      clocks.mem|clocks.max.mem) echo 2619 ;;
      ecc.mode.current) echo Enabled ;;
      compute_mode) echo Default ;;
      temperature.gpu) echo 34 ;;
      power.draw) echo 71.52 ;;
      persistence_mode) echo Enabled ;;
      clocks_event_reasons.active) echo 0x0000000000000001 ;;
      clocks_event_reasons.applications_clocks_setting) echo "Not Active" ;;
      *) echo "Field \"${1#--query-gpu=}\" is not a valid field to query."; exit 2 ;;
    esac ;;
  *) echo "not a query: $*"; exit 9 ;;
esac
"""

# An rkbench that writes synthetic rows (at most 50 iterations, to stay quick)
# and fails where FAKE_RKBENCH_FAIL=experiment:trial says, after a partial row.
FAKE_RKBENCH = r"""#!{python}
import os, sys
sys.path.insert(0, {analysis!r})
import synthetic
from rkdata import HEADER
args = sys.argv[1:]
if args == ["--version"]:
    print(os.environ.get("FAKE_RKBENCH_VERSION", "rkbench (stand-in) built with g++ 12.2.0"))
    sys.exit(0)
with open(os.environ["FAKE_RKBENCH_LOG"], "a") as log:
    log.write(" ".join(args) + "\n")
experiments, trial, iterations, csv = [], 1, 1000, None
it = iter(args)
for a in it:
    if a == "--experiment": experiments.append(next(it))
    elif a == "--trial": trial = int(next(it))
    elif a == "--iterations": iterations = int(next(it))
    elif a == "--csv": csv = next(it)
    elif a.startswith("--"): next(it)  # the experiments' own flags
    else: sys.exit(f"rkbench: unexpected argument '{{a}}'")
with open(csv, "a") as f:
    if f.tell() == 0:
        f.write(",".join(HEADER) + "\n")
    for e in experiments:
        lines = synthetic.csv_lines(e, trial, min(iterations, 50))
        if os.environ.get("FAKE_RKBENCH_FAIL") == f"{{e}}:{{trial}}":
            f.write(next(lines)[:20])
            sys.exit("rkbench: the stand-in fails here")
        f.writelines(lines)
"""

QUERY_ARGUMENTS = ("", "-L", "-q")
HAVE_GIT = shutil.which("git") is not None


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), "-c", "user.name=rkbench test", "-c", "user.email=test@example",
                           "-c", "commit.gpgsign=false", *args], check=True, capture_output=True, text=True).stdout


def make_repository(root: Path) -> None:
    """A git repository holding the suite, the analysis, a README and a
    .gitignore, committed (without git: the same files, no repository)."""
    (root / "bench" / "analysis").mkdir(parents=True)
    shutil.copy2(SUITE, root / "bench" / "run_suite.sh")
    for source in HERE.glob("*.py"):
        shutil.copy2(source, root / "bench" / "analysis" / source.name)
    (root / "README.md").write_text("a benchmark fixture\n")
    (root / ".gitignore").write_text("/build-*/\n__pycache__/\n")
    if HAVE_GIT:
        git(root, "init", "-q")
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", "fixture")


class SuiteFixture(unittest.TestCase):
    """A temporary folder with the stand-ins on PATH and the suite in a clean
    git repository (``self.repo``)."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = Path(self.tmp.name)
        self.repo = self.dir / "repo"
        make_repository(self.repo)
        bin_dir = self.dir / "bin"
        bin_dir.mkdir()
        smi = bin_dir / "nvidia-smi"
        smi.write_text(FAKE_NVIDIA_SMI)
        self.rkbench = self.dir / "rkbench"
        self.rkbench.write_text(FAKE_RKBENCH.format(python=sys.executable, analysis=str(HERE)))
        for exe in (smi, self.rkbench):
            exe.chmod(0o755)
        self.smi_log = self.dir / "nvidia-smi.log"
        self.rkbench_log = self.dir / "rkbench.log"
        self.env = {
            **os.environ,
            "PATH": f"{bin_dir}:{os.environ.get('PATH', '/usr/bin:/bin')}",
            "RK_PYTHON": sys.executable,
            "FAKE_NVSMI_LOG": str(self.smi_log),
            "FAKE_RKBENCH_LOG": str(self.rkbench_log),
        }

    def tearDown(self):
        self.tmp.cleanup()

    def suite(self, *args: str, repo: Path | None = None, **env: str) -> subprocess.CompletedProcess:
        """Runs the repository's copy of the suite. Without git the fixture
        cannot be a clean commit, so --allow-dirty is added."""
        extra = () if HAVE_GIT or repo is not None else ("--allow-dirty",)
        script = (repo or self.repo) / "bench" / "run_suite.sh"
        return subprocess.run(["bash", str(script), "--rkbench", str(self.rkbench), *args, *extra],
                              capture_output=True, text=True, env={**self.env, **env}, timeout=600)

    def lines(self, path: Path) -> list[str]:
        return path.read_text().splitlines() if path.exists() else []


class RunSuiteTest(SuiteFixture):
    def test_trials_failures_warmup_and_analysis(self):
        out = self.dir / "run"
        r = self.suite("--out", str(out), "--trials", "2", "--warmup-seconds", "1", FAKE_RKBENCH_FAIL="exp7:2")
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)  # one run failed: non-zero at the end

        raw = sorted(p.name for p in (out / "raw").glob("*.csv"))
        self.assertEqual(len(raw), 2 * len(synthetic.EXPERIMENTS) - 1)
        self.assertIn("exp7.trial1.csv", raw)
        self.assertTrue((out / "failed" / "exp7.trial2.csv").exists())  # kept, not analysed
        self.assertEqual(self.lines(out / "failures.tsv"),
                         ["experiment\ttrial\texit_status\tlog", "exp7\t2\t1\tlogs/exp7.trial2.log"])
        self.assertIn("the stand-in fails here", (out / "logs" / "exp7.trial2.log").read_text())

        # One fresh process per experiment and trial, with the profile's arguments.
        calls = [c for c in self.lines(self.rkbench_log) if "--trial 0" not in c]
        self.assertEqual(len(calls), 2 * len(synthetic.EXPERIMENTS))
        first = f"--experiment exp1 --trial 1 --device 0 --csv {out}/raw/exp1.trial1.csv"
        self.assertIn(f"{first} --warmup 20 --iterations 300", calls)
        last = f"--experiment jit --trial 2 --device 0 --csv {out}/raw/jit.trial2.csv"
        self.assertIn(f"{last} --jit-cold 2 --iterations 50", calls)
        warmups = [c for c in self.lines(self.rkbench_log) if "--trial 0" in c]
        self.assertTrue(warmups)
        self.assertFalse((out / "logs" / "warmup.csv").exists())

        run = json.loads((out / "run.json").read_text())
        self.assertEqual((run["profile"], run["trials"]), ("quick", 2))
        self.assertEqual(run["experiments"], list(synthetic.EXPERIMENTS))
        self.assertGreaterEqual(run["warmup_seconds_done"], 1)
        self.assertEqual(run["failures"], [{"experiment": "exp7", "trial": "2", "exit_status": 1,
                                            "log": "logs/exp7.trial2.log"}])

        env = json.loads((out / "environment.json").read_text())
        self.assertEqual(env["system"]["gpu"], "NVIDIA H100 80GB HBM3")
        self.assertEqual(env["system"]["compute_cap"], "9.0")
        self.assertEqual(env["gpu"]["sm_clock_mhz"], 1980)
        self.assertEqual(env["gpu"]["power_draw_w"], 71.52)
        self.assertIsNone(env["gpu"]["pstate"])  # a field this driver does not know
        self.assertEqual(env["gpu"]["driver_cuda_version"], "13.0")
        self.assertIs(env["controls"]["clocks_locked"], False)
        self.assertIs(env["controls"]["exclusive_mode"], False)
        self.assertTrue(env["system"]["ecc"])
        self.assertEqual(env["software"]["rkbench_version"], "rkbench (stand-in) built with g++ 12.2.0")
        self.assertTrue(env["host"]["processes"][0].split()[:2] == ["PID", "COMMAND"])

        # nvidia-smi was only ever asked, never told.
        for call in self.lines(self.smi_log):
            first = call.split(" ")[0]
            self.assertTrue(first in QUERY_ARGUMENTS or first.startswith("--query-gpu="), call)

        report = (out / "report.md").read_text()
        self.assertIn("| exp7 | 2 | 1 | `logs/exp7.trial2.log` |", report)
        self.assertIn("Partial CSVs of failed runs, kept in failed/ and not analysed: exp7.trial2.csv.", report)
        self.assertIn("| 5-minute GPU warm-up completed | no |", report)
        self.assertIn("| GPU clocks locked (frequency reported) | no |", report)
        self.assertTrue((out / "plots" / "exp3_scaling.scaling.svg").exists())

        # Power was sampled during the trials and matched to the processes.
        runs = self.lines(out / "runs.tsv")
        self.assertEqual(runs[0], "experiment\ttrial\tstart_ms\tend_ms")
        self.assertEqual(len(runs) - 1, 2 * len(synthetic.EXPERIMENTS))
        samples = self.lines(out / "power.csv")
        self.assertEqual(samples[0], "epoch_ms,power_w")
        self.assertTrue(samples[1:] and all(line.endswith(",71.52") for line in samples[1:]), samples[:3])
        self.assertIn("## Power", report)
        summary = json.loads((out / "summary.json").read_text())
        power = [e for e in summary if e["metric"] == "power_w" and e["configuration"] == "gpu_board"]
        self.assertTrue(power)
        self.assertTrue(all(e["median"] == 71.52 and e["unit"] == "watts" for e in power))

    def test_only_selected_experiments_and_success(self):
        out = self.dir / "run"
        r = self.suite("--out", str(out), "--trials", "1", "--only", "exp1,hop")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(sorted(p.name for p in (out / "raw").glob("*.csv")), ["exp1.trial1.csv", "hop.trial1.csv"])
        self.assertIn("done:", r.stdout)
        self.assertTrue((out / "summary.json").exists())

    def test_missing_analysis_modules_keep_the_data_and_exit_3(self):
        python = self.dir / "python-without-matplotlib"
        python.write_text(f'#!/bin/bash\nif [ "$1" = -c ] && [[ "$2" == *matplotlib* ]]; then exit 1; fi\n'
                          f'exec {sys.executable} "$@"\n')
        python.chmod(0o755)
        out = self.dir / "run"
        r = self.suite("--out", str(out), "--trials", "1", "--only", "exp1", RK_PYTHON=str(python))
        self.assertEqual(r.returncode, 3, r.stdout + r.stderr)
        self.assertIn("analysis skipped", r.stdout)
        self.assertIn(f"'bench/analysis/analyze.py {out}'", r.stdout)
        self.assertTrue((out / "raw" / "exp1.trial1.csv").exists())
        self.assertTrue((out / "run.json").exists())
        self.assertFalse((out / "report.md").exists())

    def test_no_gpu_records_the_environment_and_exits_2(self):
        out = self.dir / "run"
        r = self.suite("--out", str(out), FAKE_NVSMI_MODE="nodevice")
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn("no GPU", r.stdout)
        env = json.loads((out / "environment.json").read_text())
        self.assertIs(env["gpu"]["present"], False)
        self.assertIn("No devices were found", env["gpu"]["reason"])
        self.assertEqual(list((out / "raw").glob("*.csv")), [])
        self.assertFalse(any("--experiment" in c for c in self.lines(self.rkbench_log)))

    def test_usage_errors(self):
        self.assertEqual(self.suite("--profile", "huge").returncode, 64)
        self.assertEqual(self.suite("--only", "exp9").returncode, 64)
        self.assertEqual(self.suite("--trials", "0").returncode, 64)
        self.assertEqual(self.suite("--out").returncode, 64)
        out = self.dir / "run"
        (out / "raw").mkdir(parents=True)
        (out / "raw" / "exp1.trial1.csv").write_text("")
        r = self.suite("--out", str(out))
        self.assertEqual(r.returncode, 64)
        self.assertIn("already holds raw data", r.stderr)


@unittest.skipUnless(HAVE_GIT, "git is not installed")
class ProvenanceTest(SuiteFixture):
    """A results directory names the clean commit it was built from."""

    def head(self) -> str:
        return git(self.repo, "rev-parse", "HEAD").strip()

    def test_a_clean_commit_is_recorded(self):
        out = self.dir / "run"
        # Earlier runs' results inside the tree are outputs, not changes.
        (self.repo / "bench" / "results" / "earlier").mkdir(parents=True)
        (self.repo / "bench" / "results" / "earlier" / "report.md").write_text("old\n")
        r = self.suite("--out", str(out), "--trials", "1", "--only", "exp1")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        software = json.loads((out / "environment.json").read_text())["software"]
        self.assertEqual((software["git_commit"], software["git_dirty"]), (self.head(), False))
        self.assertTrue(software["clean_build"])
        self.assertEqual(software["provenance"], "git work tree")
        run = json.loads((out / "run.json").read_text())
        self.assertEqual((run["git_commit"], run["git_dirty"], run["allow_dirty"]), (self.head(), False, False))
        self.assertIn("| Built from a clean commit (tree and rkbench) | yes |", (out / "report.md").read_text())

    def test_a_modified_tree_is_refused_unless_allowed(self):
        out = self.dir / "run"
        for change in ("modified", "untracked"):
            with self.subTest(change=change):
                if change == "modified":
                    (self.repo / "README.md").write_text("changed\n")
                else:
                    git(self.repo, "checkout", "--", "README.md")
                    (self.repo / "notes.txt").write_text("new\n")
                r = self.suite("--out", str(out), "--trials", "1", "--only", "exp1")
                self.assertEqual(r.returncode, 4, r.stdout + r.stderr)
                self.assertIn("refusing to produce results", r.stderr)
                self.assertIn("README.md" if change == "modified" else "notes.txt", r.stderr)
                self.assertFalse(out.exists())  # nothing written
                self.assertFalse(any("--experiment" in c for c in self.lines(self.rkbench_log)))
        r = self.suite("--out", str(out), "--trials", "1", "--only", "exp1", "--allow-dirty")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        software = json.loads((out / "environment.json").read_text())["software"]
        self.assertEqual((software["git_dirty"], software["allow_dirty"], software["clean_build"]), (True, True, False))
        self.assertIn("?? notes.txt", software["changes"])
        self.assertTrue(json.loads((out / "run.json").read_text())["git_dirty"])
        self.assertIn("| Built from a clean commit (tree and rkbench) | no |", (out / "report.md").read_text())

    def test_an_rkbench_of_another_or_a_modified_tree_is_refused(self):
        for version, why in ((f"rkbench (RingKernel) commit {'1' * 40} (clean), built today", "rebuild it"),
                             (f"rkbench (RingKernel) commit {self.head()} (dirty), built today", "modified tree")):
            with self.subTest(version=version):
                r = self.suite("--out", str(self.dir / "run"), "--only", "exp1", FAKE_RKBENCH_VERSION=version)
                self.assertEqual(r.returncode, 4, r.stdout + r.stderr)
                self.assertIn(why, r.stderr)
        version = f"rkbench (RingKernel) commit {self.head()} (clean), built today"
        r = self.suite("--out", str(self.dir / "run"), "--trials", "1", "--only", "exp1", FAKE_RKBENCH_VERSION=version)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        software = json.loads((self.dir / "run" / "environment.json").read_text())["software"]
        self.assertEqual((software["rkbench_commit"], software["rkbench_dirty"]), (self.head(), False))

    def test_a_stamped_copy_without_git_proves_its_commit(self):
        r = self.suite("--stamp")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        stamp = json.loads((self.repo / provenance.STAMP).read_text())
        self.assertEqual(stamp["git_commit"], self.head())
        self.assertEqual(stamp["files"]["README.md"], git(self.repo, "hash-object", "README.md").strip())
        self.assertNotIn(provenance.STAMP, stamp["files"])
        # The stamp itself is not a change to the tree.
        self.assertIs(provenance.describe(self.repo)["git_dirty"], False)

        copy = self.dir / "copy"
        shutil.copytree(self.repo, copy, ignore=shutil.ignore_patterns(".git"))
        (copy / "build-x").mkdir()  # ignored by the .gitignore the stamp recorded
        (copy / "build-x" / "rkbench.o").write_text("object\n")
        out = self.dir / "run"
        r = self.suite("--out", str(out), "--trials", "1", "--only", "exp1", repo=copy)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        software = json.loads((out / "environment.json").read_text())["software"]
        self.assertEqual((software["git_commit"], software["git_dirty"]), (self.head(), False))
        self.assertIn("verified file by file", software["provenance"])

        (copy / "extra.cc").write_text("int x;\n")
        self.assertEqual(provenance.describe(copy)["changes"], ["?? extra.cc"])
        (copy / "extra.cc").unlink()
        (copy / "README.md").write_text("changed\n")
        (copy / "bench" / "analysis" / "rkdata.py").unlink()
        self.assertEqual(provenance.describe(copy)["changes"], [" M README.md", " D bench/analysis/rkdata.py"])
        r = self.suite("--out", str(self.dir / "run2"), "--only", "exp1", repo=copy)
        self.assertEqual(r.returncode, 4, r.stdout + r.stderr)

    def test_no_stamp_of_a_modified_tree_and_no_word_without_git_or_stamp(self):
        (self.repo / "README.md").write_text("changed\n")
        r = self.suite("--stamp")
        self.assertEqual(r.returncode, 1)
        self.assertIn("commit first", r.stderr)
        self.assertFalse((self.repo / provenance.STAMP).exists())
        bare = self.dir / "bare"
        shutil.copytree(self.repo, bare, ignore=shutil.ignore_patterns(".git"))
        with mock.patch.dict(os.environ, {"RINGKERNEL_COMMIT": "abc123"}):
            found = provenance.describe(bare)
        self.assertEqual((found["git_commit"], found["git_dirty"]), ("abc123", None))
        r = self.suite("--out", str(self.dir / "run"), "--only", "exp1", repo=bare)
        self.assertEqual(r.returncode, 4, r.stdout + r.stderr)
        self.assertIn("cannot be told", r.stderr)


class ProfileTableTest(unittest.TestCase):
    def test_every_flag_and_experiment_of_the_table_is_rkbench_s(self):
        script = SUITE.read_text()
        table = script.split("EXPERIMENT_TABLE='", 1)[1].split("'", 1)[0]
        source = "".join(p.read_text() for p in (HERE.parent).glob("*.cc"))
        rows = [[cell.split() for cell in line.split("|")] for line in table.strip().splitlines()]
        self.assertEqual([r[0][0] for r in rows], list(synthetic.EXPERIMENTS))
        for name, *profiles in rows:
            self.assertIn(f'"{name[0]}"', source)
            for args in profiles:
                for flag in (a for a in args if a.startswith("--")):
                    self.assertIn(f'"{flag}"', source, f"{name[0]}: rkbench has no {flag}")


class CaptureTest(unittest.TestCase):
    def test_no_nvidia_smi(self):
        with tempfile.TemporaryDirectory() as empty, mock.patch.dict(os.environ, {"PATH": empty}):
            gpu = capture.capture_gpu(0)
        self.assertEqual(gpu, {"present": False, "reason": "nvidia-smi not found"})
        self.assertIsNone(capture.clock_controls(gpu)["clocks_locked"])

    def test_setters_are_refused(self):
        for setter in (["-lgc", "1980"], ["-c", "EXCLUSIVE_PROCESS"], ["-pm", "1"], ["--lock-gpu-clocks=1980"]):
            with self.assertRaises(ValueError):
                capture.nvidia_smi(setter)

    def test_clock_lock_evidence(self):
        gpu = {"present": True, "applications_clock_limit": "Active", "compute_mode": "Exclusive_Process",
               "sm_clock_mhz": 1755, "max_sm_clock_mhz": 1980, "mem_clock_mhz": 2619}
        controls = capture.clock_controls(gpu)
        self.assertIs(controls["clocks_locked"], True)
        self.assertIs(controls["exclusive_mode"], True)
        self.assertIn("SM 1755 MHz (max 1980)", controls["clocks_basis"])
        self.assertIsNone(capture.clock_controls({**gpu, "applications_clock_limit": None})["clocks_locked"])


if __name__ == "__main__":
    unittest.main()
