"""The record every source adapter returns, and the cache manifest that keeps them between builds."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

from gd_assets import home

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
    return home.sources_dir()


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
