"""Sources from Debian's source packages `godot3` (3.6.x) and `godot` (4.x).

Debian ships no class-reference binary, but the source packages carry the complete XML and
`editor/project_upgrade/*`. We add a temporary deb-src list pointing at the mirror the system
already uses, download the orig tarballs with `apt-get source --download-only`, and extract only
what the corpus reads. The system's apt configuration is never changed.
"""

from __future__ import annotations

import functools
import logging
import re
import subprocess
import tarfile
from pathlib import Path

from corpora_build.sources.archive import classes_source, file_source
from corpora_build.sources.base import CLASS_PATTERNS, Source, write_manifest
from corpora_build.sources.files import extract_matching

log = logging.getLogger(__name__)

PACKAGES = {"godot3": "godot3_classes", "godot": "godot4_classes"}
SUITE = "sid"
KEYRING = "/usr/share/keyrings/debian-archive-keyring.gpg"
UPGRADE_FILES = {
    "renames_map_3_to_4.cpp": "rename_map",
    "project_converter_3_to_4.cpp": "converter_rules",
}
EXTRACT = CLASS_PATTERNS + ("version.py", "editor/project_upgrade/*_3_to_4.cpp", "editor/*_3_to_4.cpp")


def mirror_uri() -> str:
    """The Debian mirror the system already uses (deb822 `.sources` or one-line `sources.list`)."""
    candidates = sorted(Path("/etc/apt/sources.list.d").glob("*.sources")) + [Path("/etc/apt/sources.list")]
    for path in candidates:
        if not path.exists():
            continue
        for line in path.read_text().splitlines():
            match = re.match(r"\s*URIs:\s*(\S+)", line) or re.match(r"\s*deb\s+(?:\[[^]]*\]\s+)?(\S+)", line)
            if match and not match.group(1).rstrip("/").endswith("-security"):
                return match.group(1)
    raise RuntimeError("no Debian mirror found in /etc/apt/sources.list*: use --source github or a path")


def _apt(work: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    options = [
        f"-o=Dir::Etc::SourceList={work / 'sources.list'}", "-o=Dir::Etc::SourceParts=/dev/null",
        f"-o=Dir::State::Lists={work / 'lists'}", f"-o=Dir::Cache={work / 'cache'}",
    ]
    command = [args[0], *options, *args[1:]]
    log.info("running %s", " ".join(command))
    return subprocess.run(command, cwd=work / "downloads", check=check, capture_output=True, text=True)


def _prepare(work: Path) -> None:
    for sub in ("lists/partial", "cache/archives/partial", "downloads"):
        (work / sub).mkdir(parents=True, exist_ok=True)
    signed = f"[signed-by={KEYRING}] " if Path(KEYRING).exists() else ""
    (work / "sources.list").write_text(f"deb-src {signed}{mirror_uri()} {SUITE} main\n")
    _apt(work, "apt-get", "update")


def source_version(work: Path, package: str) -> str:
    """The newest version of a source package in the temporary list, e.g. `3.6.2+ds-1`."""
    out = _apt(work, "apt-cache", "showsrc", package).stdout
    versions = re.findall(r"^Version:\s*(\S+)", out, flags=re.M)
    if not versions:
        raise RuntimeError(f"Debian {SUITE} has no source package {package}")
    def newer(a: str, b: str) -> int:
        return -1 if subprocess.run(["dpkg", "--compare-versions", a, "lt", b], check=False).returncode == 0 else 1

    return max(versions, key=functools.cmp_to_key(newer))


def _extract(orig: Path, target: Path) -> None:
    target.mkdir(parents=True, exist_ok=True)
    with tarfile.open(orig) as tar:
        extract_matching(tar, target, EXTRACT)


def _package_sources(folder: Path) -> list[Source]:
    found = [classes_source(folder, adapter="debian")]
    if found[0].name == "godot4_classes":
        for path in sorted(folder.rglob("*_3_to_4.cpp")):
            if path.name in UPGRADE_FILES:
                found.append(file_source(UPGRADE_FILES[path.name], path, found[0].version, adapter="debian"))
    return found


def fetch(cache: Path) -> list[Source]:
    """Download (only when Debian has a newer version than the cache) and extract both packages."""
    work = cache / "apt"
    _prepare(work)
    sources: list[Source] = []
    for package in PACKAGES:
        version = source_version(work, package)
        folder = cache / f"{package}-{version}"
        if not (folder / "version.py").exists():
            result = _apt(work, "apt-get", "source", "--download-only", f"{package}={version}", check=False)
            upstream = version.split("-")[0].split(":")[-1]
            origs = sorted((work / "downloads").glob(f"{package}_{upstream}.orig.tar.*"))
            if not origs:  # the .dsc may 404 while the orig tarball still arrives
                raise RuntimeError(f"apt-get source {package}={version} failed: {result.stderr[-500:]}")
            _extract(origs[0], folder)
            for leftover in (work / "downloads").glob(f"{package}_*"):
                leftover.unlink()
        sources.extend(_package_sources(folder))
    write_manifest(cache, sources)
    return sources
