"""Where the corpus comes from: adapters that all return the same `Source` records.

A source names one input (the 3.x or 4.x class reference, the rename map, the converter rules, the
docs pages), the adapter that delivered it, its exact release and a content hash. Table builders only
read `Source.location` through `files.iter_files`, so they never care which adapter ran.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
from dataclasses import asdict, dataclass
from pathlib import Path

log = logging.getLogger(__name__)

NAMES = ("godot3_classes", "godot4_classes", "rename_map", "converter_rules", "docs_pages")
CLASS_PATTERNS = ("doc/classes/*.xml", "modules/*/doc_classes/*.xml", "platform/*/doc_classes/*.xml")
ADAPTERS = ("auto", "debian", "github")


@dataclass(frozen=True)
class Source:
    name: str          # one of NAMES
    adapter: str       # archive|debian|github
    version: str       # e.g. 3.6.2-stable
    location: str      # folder, archive or file the builders read
    content_hash: str  # of the files the builders read, not of their packing


def cache_dir() -> Path:
    """`<corpus home>/sources/`: downloaded and extracted sources, reused by `auto`."""
    from gd_assets.home import corpus_home

    path = corpus_home() / "sources"
    path.mkdir(parents=True, exist_ok=True)
    return path


def write_manifest(folder: Path, sources: list[Source]) -> None:
    (folder / "manifest.json").write_text(json.dumps([asdict(s) for s in sources], indent=1))


def read_manifest(folder: Path) -> list[Source] | None:
    """The sources an adapter cached earlier, or None when absent or no longer on disk."""
    path = folder / "manifest.json"
    if not path.exists():
        return None
    sources = [Source(**row) for row in json.loads(path.read_text())]
    if not all(Path(s.location).exists() for s in sources):
        return None
    return sources


def resolve(spec: str = "auto") -> list[Source]:
    """Sources for `spec`: auto|debian|github, or paths (joined by os.pathsep or ',') to read as archives.

    `auto` uses the local cache when an adapter has filled it, else Debian where apt-get exists,
    else GitHub.
    """
    from corpora_build.sources import archive, debian, github

    spec = (spec or "auto").strip()
    if spec not in ADAPTERS:
        paths = [Path(p).expanduser() for p in spec.replace(",", os.pathsep).split(os.pathsep) if p]
        return archive.from_paths(paths)
    cache = cache_dir()
    if spec == "auto":
        for adapter in ("debian", "github"):
            cached = read_manifest(cache / adapter)
            if cached:
                log.info("using the %s sources cached in %s", adapter, cache / adapter)
                return cached
        spec = "debian" if shutil.which("apt-get") else "github"
    return debian.fetch(cache / "debian") if spec == "debian" else github.fetch(cache / "github")
