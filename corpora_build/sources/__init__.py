"""Where the corpus comes from: adapters that all return the same `Source` records.

A source names one input (the 3.x or 4.x class reference, the rename map, the converter rules, the
docs pages), the adapter that delivered it, its exact release and a content hash. Table builders only
read `Source.location` through `files.iter_files`, so they never care which adapter ran.
"""

from __future__ import annotations

import logging
import os
import shutil
from pathlib import Path

from corpora_build.sources import archive, debian, github
from corpora_build.sources.base import (
    ADAPTERS,
    CLASS_PATTERNS,
    NAMES,
    Source,
    cache_dir,
    read_manifest,
    write_manifest,
)

__all__ = ["ADAPTERS", "CLASS_PATTERNS", "NAMES", "Source", "cache_dir", "read_manifest", "resolve", "write_manifest"]

log = logging.getLogger(__name__)


def resolve(spec: str = "auto") -> list[Source]:
    """Sources for `spec`: auto|debian|github, or paths (joined by os.pathsep or ',') to read as archives.

    `auto` uses the local cache when an adapter has filled it, else Debian where apt-get exists,
    else GitHub.
    """
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
