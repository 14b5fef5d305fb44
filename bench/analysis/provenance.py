#!/usr/bin/python3
"""Which source a benchmark run was built from (standard library only).

    provenance.py check --root DIR [--rkbench PATH] [--allow-dirty]
    provenance.py stamp --root DIR

A committed results directory must name the clean commit it was built from.
``describe(root)`` finds the commit and whether the tree differs from it:

1. In a git work tree: HEAD, and every difference from it that would be
   built or run — tracked files modified, added or deleted, and files that
   git neither tracks nor ignores — except under ``bench/results/`` (the
   outputs of runs, not sources) and the stamp file itself.
2. In a copy without ``.git`` (a GPU machine may get only the files): the
   stamp that ``stamp`` wrote in the clean work tree the copy came from
   (``bench/.source_stamp.json``: HEAD, the git blob hash of every tracked
   file, and the ignore patterns), verified file by file; a file the stamp
   does not list and its patterns do not ignore makes the copy dirty.
3. Otherwise the commit stated in ``RINGKERNEL_COMMIT`` (or "unknown"),
   with the dirty state unknown (None).

``check`` prints what it found, adds what ``rkbench --version`` says it was
built from (a binary built from another commit or from a modified tree is
refused too; one built without git says "unknown" and is taken on the
tree's word), and exits 0 when everything is clean or ``--allow-dirty`` was
given, else 4. ``stamp`` writes the stamp (exit 1 if the tree is not a clean
git work tree).
"""

from __future__ import annotations

import argparse
import datetime
import fnmatch
import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

STAMP = "bench/.source_stamp.json"
# Paths whose changes do not change what is built or run: results of runs.
OUTPUT_PREFIXES = ("bench/results/",)
UNKNOWN = "unknown"
MAX_LISTED = 50
REFUSED = 4


def _git(root: Path, *args: str) -> tuple[int, str]:
    try:
        p = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=60)
    except (FileNotFoundError, subprocess.TimeoutExpired) as e:
        return 127, str(e)
    return p.returncode, p.stdout


def _excluded(path: str) -> bool:
    return path == STAMP or path.startswith(OUTPUT_PREFIXES)


def _git_changes(root: Path) -> list[str] | None:
    """``git status`` lines (tracked changes and untracked, unignored files)
    outside the excluded paths; None when git cannot say."""
    rc, out = _git(root, "status", "--porcelain=v1", "--untracked-files=all")
    if rc != 0:
        return None
    changes = []
    for line in out.splitlines():
        path = line[3:].split(" -> ")[-1].strip('"')
        if not _excluded(path):
            changes.append(line)
    return changes


def _work_tree_top(root: Path) -> bool:
    rc, top = _git(root, "rev-parse", "--show-toplevel")
    return rc == 0 and Path(top.strip()).resolve() == root.resolve()


def blob_hash(path: Path) -> str:
    """git's object id of a file's content as a blob (a symbolic link's is its target)."""
    data = os.readlink(path).encode() if path.is_symlink() else path.read_bytes()
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _read_patterns(path: Path) -> list[str]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return []
    return [ln.strip() for ln in lines if ln.strip() and not ln.startswith(("#", "!"))]


def _ignored(relpath: str, is_dir: bool, patterns: list[str]) -> bool:
    """Whether a root-level gitignore-style pattern ignores ``relpath`` (the
    common forms: ``/name``, ``/prefix-*/``, ``name/``, ``*.ext``; no
    negation)."""
    name = relpath.rsplit("/", 1)[-1]
    for pattern in patterns:
        dir_only = pattern.endswith("/")
        p = pattern.strip("/")
        if dir_only and not is_dir:
            continue
        anchored = pattern.startswith("/") or "/" in p
        if fnmatch.fnmatchcase(relpath if anchored else name, p):
            return True
    return False


def make_stamp(root: Path) -> dict:
    """The stamp of a clean git work tree; ValueError when it is not one."""
    found = describe_git(root)
    if found is None:
        raise ValueError(f"{root} is not the top of a git work tree")
    if found["git_dirty"] is not False:
        listed = "\n  ".join(found["changes"])
        raise ValueError(f"{root} differs from {found['git_commit']}; commit first:\n  {listed}")
    rc, out = _git(root, "ls-files", "-s", "-z")
    if rc != 0:
        raise ValueError("git ls-files failed")
    files = {}
    for entry in out.split("\0"):
        if not entry:
            continue
        meta, path = entry.split("\t", 1)
        mode, sha, _stage = meta.split()
        if mode != "160000" and not _excluded(path):  # not submodules
            files[path] = sha
    patterns = _read_patterns(root / ".gitignore") + _read_patterns(root / ".git" / "info" / "exclude")
    return {
        "git_commit": found["git_commit"],
        "created": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "ignore_patterns": patterns,
        "files": files,
    }


def verify_stamp(root: Path, stamp: dict) -> list[str]:
    """How the tree at ``root`` differs from the stamp: modified, deleted and
    untracked files (an empty list: identical)."""
    changes = []
    files: dict[str, str] = stamp["files"]
    for path, sha in sorted(files.items()):
        p = root / path
        if not p.exists() and not p.is_symlink():
            changes.append(f" D {path}")
        elif blob_hash(p) != sha:
            changes.append(f" M {path}")
    patterns = list(stamp.get("ignore_patterns", []))
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = os.path.relpath(dirpath, root)
        rel_dir = "" if rel_dir == "." else rel_dir + "/"
        dirnames[:] = sorted(
            d for d in dirnames
            if d not in (".git", "__pycache__") and not _excluded(rel_dir + d + "/")
            and not _ignored(rel_dir + d, True, patterns)
        )
        for f in sorted(filenames):
            rel = rel_dir + f
            if rel not in files and not _excluded(rel) and not _ignored(rel, False, patterns):
                changes.append(f"?? {rel}")
    return changes


def describe_git(root: Path) -> dict | None:
    if not _work_tree_top(root):
        return None
    rc, head = _git(root, "rev-parse", "HEAD")
    changes = _git_changes(root)
    return {
        "git_commit": head.strip() if rc == 0 else UNKNOWN,
        "git_dirty": None if changes is None or rc != 0 else bool(changes),
        "provenance": "git work tree",
        "changes": (changes or [])[:MAX_LISTED],
        "changes_count": len(changes or []),
    }


def describe(root: Path) -> dict:
    """``git_commit``, ``git_dirty`` (True, False, or None when unknown),
    ``provenance`` (how they were found), ``changes`` (the first differences)
    and ``changes_count``."""
    found = describe_git(root)
    if found is not None:
        return found
    stamp_path = root / STAMP
    if stamp_path.is_file():
        stamp = json.loads(stamp_path.read_text(encoding="utf-8"))
        changes = verify_stamp(root, stamp)
        return {
            "git_commit": stamp["git_commit"],
            "git_dirty": bool(changes),
            "provenance": f"{STAMP} of {stamp.get('created', '?')}, verified file by file",
            "changes": changes[:MAX_LISTED],
            "changes_count": len(changes),
        }
    stated = os.environ.get("RINGKERNEL_COMMIT")
    return {
        "git_commit": stated or UNKNOWN,
        "git_dirty": None,
        "provenance": "RINGKERNEL_COMMIT, as stated (not verifiable)" if stated else "none: no git, no stamp",
        "changes": [],
        "changes_count": 0,
    }


VERSION_RE = re.compile(r"commit (\S+) \((clean|dirty|unknown)\)")


def rkbench_build(rkbench: str | None) -> dict:
    """What ``rkbench --version`` says it was built from."""
    if not rkbench:
        return {"rkbench_commit": UNKNOWN, "rkbench_dirty": None}
    try:
        p = subprocess.run([rkbench, "--version"], capture_output=True, text=True, timeout=60)
        out = p.stdout
    except (OSError, subprocess.TimeoutExpired):
        out = ""
    m = VERSION_RE.search(out)
    if not m:
        return {"rkbench_commit": UNKNOWN, "rkbench_dirty": None}
    return {"rkbench_commit": m.group(1), "rkbench_dirty": {"clean": False, "dirty": True}.get(m.group(2))}


def problems(found: dict, build: dict) -> list[str]:
    """Why the tree and binary do not make a clean run (empty: they do)."""
    out = []
    if found["git_dirty"] is None:
        out.append(f"whether the tree is clean cannot be told ({found['provenance']})")
    elif found["git_dirty"]:
        out.append(f"the tree differs from {found['git_commit']} in {found['changes_count']} path(s): "
                   + ", ".join(c.strip() for c in found["changes"][:10])
                   + (" …" if found["changes_count"] > 10 else ""))
    if build["rkbench_dirty"]:
        out.append("rkbench was built from a modified tree (rkbench --version); rebuild it from the commit")
    commit = build["rkbench_commit"]
    if commit != UNKNOWN and found["git_commit"] != UNKNOWN and commit != found["git_commit"]:
        out.append(f"rkbench was built from {commit}, the tree is at {found['git_commit']}; rebuild it")
    return out


def check(root: Path, rkbench: str | None, allow_dirty: bool) -> tuple[dict, list[str]]:
    found = describe(root)
    build = rkbench_build(rkbench)
    return {**found, **build, "allow_dirty": allow_dirty}, problems(found, build)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("check", help="is the tree (and rkbench) a clean commit?")
    c.add_argument("--root", type=Path, required=True)
    c.add_argument("--rkbench")
    c.add_argument("--allow-dirty", action="store_true")
    s = sub.add_parser("stamp", help=f"write {STAMP} for copies without .git")
    s.add_argument("--root", type=Path, required=True)
    args = parser.parse_args(argv)
    if args.command == "stamp":
        try:
            stamp = make_stamp(args.root)
        except ValueError as e:
            print(f"provenance: no stamp written: {e}", file=sys.stderr)
            return 1
        (args.root / STAMP).write_text(json.dumps(stamp, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        print(f"provenance: {args.root / STAMP}: {stamp['git_commit']}, {len(stamp['files'])} files")
        return 0
    record, why = check(args.root, args.rkbench, args.allow_dirty)
    state = {True: "dirty", False: "clean", None: "unknown"}[record["git_dirty"]]
    print(f"provenance: commit {record['git_commit']} ({state}; {record['provenance']}); "
          f"rkbench built from {record['rkbench_commit']}")
    for problem in why:
        print(f"provenance: {problem}", file=sys.stderr)
    if why and not args.allow_dirty:
        return REFUSED
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
