#!/usr/bin/python3
"""Records the conditions of a benchmark run (standard library only).

    capture.py environment --out FILE [--root DIR] [--rkbench PATH] [--device N] [--allow-dirty]
    capture.py run --out FILE --profile P --trials N --experiments "E ..."
                   --warmup-requested S --warmup-done S --started ISO
                   [--failures TSV] [--environment FILE]

``environment`` writes what the methodology asks to be recorded before
trials: the GPU as nvidia-smi reports it (name, driver, clocks, ECC, compute
mode, temperature, power, persistence mode, clock-event reasons), the CUDA
toolkit, the RingKernel commit and whether the tree is dirty (provenance.py),
what rkbench was built from, OS, kernel,
CPU model and governor, rkbench's own version line, and the busiest
processes. It only reads: nvidia-smi is run with query options alone
(``QUERY_ONLY``) and nothing is set. Exit status 0 when a GPU was found, 2
when not (the file is written either way).

``run`` writes run.json after the trials: the commit and dirty state (from
environment.json), the profile, the trial count, the experiments, the
warm-up requested and done, and the failures (read from the driver's
tab-separated failures file).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import shutil
import subprocess
import sys
from pathlib import Path

import provenance

# nvidia-smi is only ever run with one of these as its first argument (or none).
QUERY_ONLY = ("--query-gpu", "-L", "-q")

# environment.json key -> nvidia-smi --query-gpu fields, tried in order (the
# clock-event fields were renamed from clocks_throttle_reasons.* in newer drivers).
NVSMI_FIELDS = {
    "name": ("name",),
    "driver_version": ("driver_version",),
    "compute_cap": ("compute_cap",),
    "pci_bus_id": ("pci.bus_id",),
    "memory_total_mib": ("memory.total",),
    "sm_clock_mhz": ("clocks.sm",),
    "mem_clock_mhz": ("clocks.mem",),
    "max_sm_clock_mhz": ("clocks.max.sm",),
    "max_mem_clock_mhz": ("clocks.max.mem",),
    "applications_sm_clock_mhz": ("clocks.applications.graphics",),
    "default_applications_sm_clock_mhz": ("clocks.default_applications.graphics",),
    "ecc_mode": ("ecc.mode.current",),
    "compute_mode": ("compute_mode",),
    "temperature_c": ("temperature.gpu",),
    "power_draw_w": ("power.draw",),
    "power_limit_w": ("power.limit",),
    "persistence_mode": ("persistence_mode",),
    "pstate": ("pstate",),
    "clock_event_reasons": ("clocks_event_reasons.active", "clocks_throttle_reasons.active"),
    "applications_clock_limit": (
        "clocks_event_reasons.applications_clocks_setting",
        "clocks_throttle_reasons.applications_clocks_setting",
    ),
}
# The fields kept as numbers (the rest, e.g. compute capability "9.0", stay text).
NUMERIC_FIELDS = {
    "memory_total_mib", "sm_clock_mhz", "mem_clock_mhz", "max_sm_clock_mhz", "max_mem_clock_mhz",
    "applications_sm_clock_mhz", "default_applications_sm_clock_mhz", "temperature_c", "power_draw_w", "power_limit_w",
}
UNKNOWN = "unknown"
COMMAND_TIMEOUT_S = 20


def run_command(argv: list[str], cwd: str | None = None) -> tuple[int, str]:
    """Runs a command; (exit status, stdout and stderr). 127 when it cannot start, 124 on timeout."""
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S, cwd=cwd)
    except FileNotFoundError:
        return 127, f"{argv[0]}: not found"
    except PermissionError:
        return 126, f"{argv[0]}: not executable"
    except subprocess.TimeoutExpired:
        return 124, f"{argv[0]}: no answer in {COMMAND_TIMEOUT_S} s"
    return p.returncode, (p.stdout + p.stderr).strip()


def nvidia_smi(args: list[str]) -> tuple[int, str]:
    """Runs nvidia-smi with a query-only argument list."""
    if args and args[0].split("=", 1)[0] not in QUERY_ONLY:
        raise ValueError(f"nvidia-smi {args[0]} is not a query")
    return run_command(["nvidia-smi", *args])


def _number(text: str) -> float | int | str:
    try:
        f = float(text)
    except ValueError:
        return text
    return int(f) if f.is_integer() else f


def query_gpu(device: int) -> dict:
    """Every NVSMI_FIELDS value of one GPU: a number, a string, or None when
    the driver does not report it."""
    values = {}
    for key, fields in NVSMI_FIELDS.items():
        values[key] = None
        for name in fields:
            rc, out = nvidia_smi([f"--query-gpu={name}", "--format=csv,noheader,nounits", f"--id={device}"])
            text = out.strip()
            if rc == 0 and text and "[N/A]" not in text and "Not Supported" not in text and text != "N/A":
                values[key] = _number(text) if key in NUMERIC_FIELDS else text
                break
    return values


def capture_gpu(device: int) -> dict:
    """Whether a GPU is present, and what nvidia-smi says about it."""
    if shutil.which("nvidia-smi") is None:
        return {"present": False, "reason": "nvidia-smi not found"}
    rc, listing = nvidia_smi(["-L"])
    if rc != 0 or not re.search(r"^GPU \d+:", listing, re.MULTILINE):
        return {"present": False, "reason": f"nvidia-smi -L found no GPU (status {rc}): {listing}"}
    gpu = {"present": True, "list": listing, **query_gpu(device)}
    rc, banner = nvidia_smi([])
    m = re.search(r"CUDA Version:\s*([\d.]+)", banner)
    gpu["driver_cuda_version"] = m.group(1) if m else None
    rc, details = nvidia_smi(["-q", "-d", "CLOCK,PERFORMANCE,COMPUTE,ECC", f"--id={device}"])
    gpu["details"] = details if rc == 0 else None
    return gpu


def clock_controls(gpu: dict) -> dict:
    """Whether clocks look locked and the compute mode is exclusive, with the
    evidence. nvidia-smi has no direct query for a clock lock; it is taken as
    locked when the driver reports the applications/user clock setting as an
    active clock limiter, and otherwise as not locked, with the clocks read."""
    if not gpu.get("present"):
        return {"clocks_locked": None, "clocks_basis": "no GPU", "exclusive_mode": None, "compute_mode": None}
    limit = gpu.get("applications_clock_limit")
    clocks = (
        f"SM {gpu.get('sm_clock_mhz')} MHz (max {gpu.get('max_sm_clock_mhz')}), "
        f"memory {gpu.get('mem_clock_mhz')} MHz at capture"
    )
    if limit is None:
        locked, basis = None, f"the driver does not report clock limiters; {clocks}"
    elif str(limit).lower() == "active":
        locked, basis = True, f"the applications/user clock setting limits the clocks; {clocks}"
    else:
        locked, basis = False, f"no user clock limit reported; {clocks}"
    mode = gpu.get("compute_mode")
    return {
        "clocks_locked": locked,
        "clocks_basis": basis,
        "exclusive_mode": None if mode is None else "exclusive" in str(mode).lower(),
        "compute_mode": mode,
    }


def _read(path: str) -> str | None:
    try:
        return Path(path).read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None


def capture_host() -> dict:
    """OS, kernel, CPU model, governor and the busiest processes."""
    os_release = _read("/etc/os-release") or ""
    m = re.search(r'^PRETTY_NAME="?([^"\n]*)"?', os_release, re.MULTILINE)
    cpuinfo = _read("/proc/cpuinfo") or ""
    cpu = re.search(r"^model name\s*:\s*(.*)$", cpuinfo, re.MULTILINE)
    rc, ps = run_command(["ps", "-eo", "pid,comm,%cpu", "--sort=-%cpu"])
    return {
        "os": m.group(1) if m else UNKNOWN,
        "kernel": platform.release(),
        "cpu_model": cpu.group(1).strip() if cpu else UNKNOWN,
        "cpu_count": os.cpu_count(),
        "cpu_governor": _read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"),
        "hostname": platform.node(),
        "processes": ps.splitlines()[:20] if rc == 0 else [],
    }


def capture_software(root: Path, rkbench: str | None, allow_dirty: bool = False) -> dict:
    """The RingKernel commit and whether the tree differs from it
    (provenance.py: git, else a verified stamp, else RINGKERNEL_COMMIT as
    stated), what rkbench says it was built from, the CUDA toolkit, and
    rkbench --version."""
    record, problems = provenance.check(root, rkbench, allow_dirty)
    software = {
        "git_commit": record["git_commit"],
        "git_dirty": record["git_dirty"],
        "provenance": record["provenance"],
        "changes": record["changes"],
        "changes_count": record["changes_count"],
        "rkbench_commit": record["rkbench_commit"],
        "rkbench_dirty": record["rkbench_dirty"],
        "clean_build": not problems,
        "provenance_problems": problems,
        "allow_dirty": allow_dirty,
    }
    nvcc = shutil.which("nvcc")
    for candidate in (os.environ.get("CUDA_HOME", ""), "/usr/local/cuda"):
        if nvcc is None and candidate and Path(candidate, "bin", "nvcc").exists():
            nvcc = str(Path(candidate, "bin", "nvcc"))
    software["cuda_toolkit"] = UNKNOWN
    if nvcc:
        rc, out = run_command([nvcc, "--version"])
        m = re.search(r"release ([\d.]+)", out)
        if rc == 0 and m:
            software["cuda_toolkit"] = m.group(1)
    software["rkbench_version"] = UNKNOWN
    if rkbench:
        rc, out = run_command([rkbench, "--version"])
        if rc == 0 and out:
            software["rkbench_version"] = out
    return software


def system_block(gpu: dict, software: dict, controls: dict) -> dict:
    """The short description copied into every summary entry."""
    ecc = gpu.get("ecc_mode")
    return {
        "gpu": gpu.get("name"),
        "driver": gpu.get("driver_version"),
        "cuda": software["cuda_toolkit"] if software["cuda_toolkit"] != UNKNOWN else gpu.get("driver_cuda_version"),
        "compute_cap": gpu.get("compute_cap"),
        "gpu_clock_mhz": gpu.get("sm_clock_mhz"),
        "mem_clock_mhz": gpu.get("mem_clock_mhz"),
        "ecc": None if ecc is None else str(ecc).lower() == "enabled",
        "clocks_locked": controls["clocks_locked"],
        "compute_mode": controls["compute_mode"],
    }


def utc_now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def capture_environment(root: Path, rkbench: str | None, device: int, allow_dirty: bool = False) -> dict:
    gpu = capture_gpu(device)
    software = capture_software(root, rkbench, allow_dirty)
    controls = clock_controls(gpu)
    return {
        "captured_at": utc_now(),
        "device_index": device,
        "system": system_block(gpu, software, controls),
        "gpu": gpu,
        "controls": controls,
        "host": capture_host(),
        "software": software,
        "ambient_temperature_c": None,
    }


def read_failures(path: Path | None) -> list[dict]:
    """The driver's failures file: a header, then experiment, trial, exit status, log per line."""
    if path is None or not path.exists():
        return []
    lines = path.read_text(encoding="utf-8").splitlines()
    failures = []
    for line in lines[1:]:
        experiment, trial, status, log = line.split("\t")
        failures.append({"experiment": experiment, "trial": trial, "exit_status": int(status), "log": log})
    return failures


def write_json(path: Path, obj: dict) -> None:
    path.write_text(json.dumps(obj, indent=2) + "\n", encoding="utf-8")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    env = sub.add_parser("environment", help="record the environment before the trials")
    env.add_argument("--out", required=True, type=Path)
    env.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[2])
    env.add_argument("--rkbench")
    env.add_argument("--device", type=int, default=0)
    env.add_argument("--allow-dirty", action="store_true", help="recorded: the run was allowed from a modified tree")
    run = sub.add_parser("run", help="record how the trials went")
    run.add_argument("--out", required=True, type=Path)
    run.add_argument("--profile", required=True)
    run.add_argument("--trials", required=True, type=int)
    run.add_argument("--experiments", required=True)
    run.add_argument("--warmup-requested", required=True, type=float)
    run.add_argument("--warmup-done", required=True, type=float)
    run.add_argument("--started", required=True)
    run.add_argument("--failures", type=Path)
    run.add_argument("--environment", type=Path, help="environment.json, whose commit and dirty state run.json repeats")
    args = parser.parse_args(argv)

    if args.command == "environment":
        environment = capture_environment(args.root, args.rkbench, args.device, args.allow_dirty)
        write_json(args.out, environment)
        if not environment["gpu"]["present"]:
            print(f"capture: no GPU: {environment['gpu']['reason']}", file=sys.stderr)
            return 2
        return 0
    software = {}
    if args.environment is not None and args.environment.exists():
        software = json.loads(args.environment.read_text(encoding="utf-8")).get("software", {})
    write_json(
        args.out,
        {
            "git_commit": software.get("git_commit", UNKNOWN),
            "git_dirty": software.get("git_dirty"),
            "allow_dirty": software.get("allow_dirty", False),
            "profile": args.profile,
            "trials": args.trials,
            "experiments": args.experiments.split(),
            "warmup_seconds_requested": args.warmup_requested,
            "warmup_seconds_done": args.warmup_done,
            "started": args.started,
            "finished": utc_now(),
            "fresh_process_per_trial": True,
            "failures": read_failures(args.failures),
        },
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
