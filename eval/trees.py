"""Source trees of godot-demo-projects, read from a local git mirror and cached outside the repository.

The mirror may lack its largest blobs (4 MiB and more), so `git archive` cannot be used: files are
listed with `git ls-tree` and read through one `git cat-file --batch`, and missing blobs are skipped
(they are images, audio and meshes, never scripts). A finished extraction leaves a `.complete` marker,
so an interrupted one is redone rather than trusted.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path, PurePosixPath

from gd_assets.core.ingest import BINARY_SUFFIXES

DEFAULT_MIRROR = "/work/.mirror/godotengine+godot-demo-projects/repo"
DEFAULT_CACHE = "/tmp/gd-eval"
_MARKER = ".complete"


def cache_root() -> Path:
    """Where extracted trees live: $GD_EVAL_CACHE or /tmp/gd-eval (never inside the repository)."""
    return Path(os.environ.get("GD_EVAL_CACHE") or DEFAULT_CACHE)


def _git(mirror: str, *args: str) -> str:
    try:
        done = subprocess.run(["git", "--git-dir", mirror, *args], capture_output=True, text=True, check=True)
    except subprocess.CalledProcessError as error:
        raise SystemExit(f"git {' '.join(args)} failed in {mirror}: {error.stderr.strip()} "
                         "(pass the mirror's git directory with --mirror)") from error
    return done.stdout


def resolve(mirror: str, ref: str) -> str:
    """The commit id of a branch, tag or commit of the mirror."""
    return _git(mirror, "rev-parse", "--verify", f"{ref}^{{commit}}").strip()


def extract(mirror: str, ref: str, subpath: str = "", skip_binaries: bool = True) -> Path:
    """The folder holding `subpath` of commit `ref` (cached by commit id); binaries are skipped by default."""
    commit = resolve(mirror, ref)
    root = cache_root() / commit[:12]
    target = root / subpath if subpath else root
    marker = root / f"{_MARKER}-{(subpath or '.').replace('/', '+')}"
    if marker.exists():
        return target
    if target.exists():
        shutil.rmtree(target)
    listing = _git(mirror, "ls-tree", "-r", "-z", commit, "--", subpath or ".")
    entries = []
    for record in filter(None, listing.split("\0")):
        meta, path = record.split("\t", 1)
        mode, kind, sha = meta.split()
        if kind != "blob" or mode == "120000":
            continue
        if skip_binaries and PurePosixPath(path).suffix.lower() in BINARY_SUFFIXES:
            continue
        entries.append((sha, path))
    _write_blobs(mirror, root, entries)
    marker.parent.mkdir(parents=True, exist_ok=True)
    marker.write_text(commit + "\n")
    return target


def _write_blobs(mirror: str, root: Path, entries: list[tuple[str, str]]) -> None:
    proc = subprocess.Popen(["git", "--git-dir", mirror, "cat-file", "--batch"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        for sha, path in entries:
            proc.stdin.write(sha.encode() + b"\n")
            proc.stdin.flush()
            header = proc.stdout.readline().decode()
            if header.rstrip().endswith("missing"):
                continue
            size = int(header.split()[2])
            data = proc.stdout.read(size)
            proc.stdout.read(1)
            dest = root / path
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(data)
    finally:
        proc.stdin.close()
        proc.wait()


def project_folders(tree: Path) -> list[Path]:
    """Every folder under `tree` that holds a project.godot, sorted."""
    return sorted(p.parent for p in tree.rglob("project.godot"))
