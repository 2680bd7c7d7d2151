"""Read the files of a source wherever they sit: a folder or a `.tar.xz` archive, the same way.

Paths are given relative to the source's top folder (e.g. `doc/classes/Node.xml`), so an archive,
a Debian tarball and a GitHub tarball of the same release yield the same paths and the same hash.
"""

from __future__ import annotations

import fnmatch
import hashlib
import tarfile
from pathlib import Path
from typing import Iterator

ARCHIVE_SUFFIXES = (".tar.xz", ".tar.gz", ".tgz", ".tar")


def is_archive(path: Path) -> bool:
    return path.is_file() and path.name.endswith(ARCHIVE_SUFFIXES)


def _strip_top(name: str) -> str:
    parts = name.split("/", 1)
    return parts[1] if len(parts) == 2 else parts[0]


def iter_files(location: Path | str, patterns: tuple[str, ...], strip_top: bool = True) -> Iterator[tuple[str, bytes]]:
    """(relative path, bytes) of the files matching any glob pattern, sorted by path."""
    location = Path(location)
    found: list[tuple[str, bytes]] = []
    if is_archive(location):
        with tarfile.open(location) as tar:
            for member in tar:
                if not member.isfile():
                    continue
                name = member.name.removeprefix("./")
                rel = _strip_top(name) if strip_top else name
                if any(fnmatch.fnmatch(rel, p) for p in patterns):
                    found.append((rel, tar.extractfile(member).read()))
    elif location.is_dir():
        for path in location.rglob("*"):
            rel = path.relative_to(location).as_posix()
            if path.is_file() and any(fnmatch.fnmatch(rel, p) for p in patterns):
                found.append((rel, path.read_bytes()))
    elif location.is_file():
        found.append((location.name, location.read_bytes()))
    else:
        raise FileNotFoundError(f"{location}: the source is gone; rebuild with `gd-assets corpus build`")
    return iter(sorted(found))


def hash_files(files: list[tuple[str, bytes]] | Iterator[tuple[str, bytes]]) -> str:
    """Content hash of (path, bytes) pairs: independent of how the files were packed."""
    digest = hashlib.sha256()
    for rel, data in files:
        digest.update(rel.encode() + b"\0" + hashlib.sha256(data).digest())
    return digest.hexdigest()[:16]


def read_version_py(text: str) -> str:
    """`3.6.2-stable` from Godot's version.py."""
    values = {}
    for line in text.splitlines():
        if "=" in line:
            key, _, value = line.partition("=")
            values[key.strip()] = value.strip().strip('"')
    version = f"{values.get('major')}.{values.get('minor')}"
    if values.get("patch", "0") not in ("0", ""):
        version += f".{values['patch']}"
    return f"{version}-{values.get('status', 'stable')}"


def extract_matching(tar: tarfile.TarFile, target: Path, patterns: tuple[str, ...] | list[str]) -> None:
    """Write the tar's regular files whose path (top folder stripped) matches a pattern under `target`.

    Works on streamed archives too (members are read in order, never seeked back to)."""
    for member in tar:
        rel = _strip_top(member.name)
        if member.isfile() and any(fnmatch.fnmatch(rel, p) for p in patterns):
            dest = target / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(tar.extractfile(member).read())
