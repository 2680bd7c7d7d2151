"""Sources from GitHub release tags of godotengine/godot and godotengine/godot-docs (needs internet).

The engine tarball of a tag carries the class reference and the converter files; godot-docs
branches carry the `.rst` pages. Only the files the corpus reads are kept in the cache.
"""

from __future__ import annotations

import logging
import os
import shutil
import tarfile
import urllib.request
from pathlib import Path

from corpora_build.sources.archive import classes_source, docs_source, file_source
from corpora_build.sources.base import CLASS_PATTERNS, Source, write_manifest
from corpora_build.sources.files import extract_matching

log = logging.getLogger(__name__)

ENGINE = "https://github.com/godotengine/godot/archive/refs/tags/{tag}.tar.gz"
DOCS = "https://github.com/godotengine/godot-docs/archive/refs/heads/{branch}.tar.gz"
TAGS = (os.environ.get("GD_ASSETS_GODOT3_TAG", "3.6.2-stable"), os.environ.get("GD_ASSETS_GODOT4_TAG", "4.6.3-stable"))
DOCS_BRANCHES = ("3.6", "stable")
ENGINE_FILES = CLASS_PATTERNS + ("version.py", "editor/project_upgrade/*_3_to_4.cpp", "editor/*_3_to_4.cpp")
DOCS_FILES = ("tutorials/scripting/gdscript/*.rst", "tutorials/migrating/*.rst")
UPGRADE_FILES = {"renames_map_3_to_4.cpp": "rename_map", "project_converter_3_to_4.cpp": "converter_rules"}


def _download_extract(url: str, target: Path, patterns: tuple[str, ...]) -> None:
    """Stream a tarball and keep only the members matching `patterns` (top folder stripped)."""
    tmp = target.with_name(target.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    log.info("downloading %s", url)
    with urllib.request.urlopen(url, timeout=120) as response, tarfile.open(fileobj=response, mode="r|gz") as tar:
        extract_matching(tar, tmp, patterns)
    shutil.rmtree(target, ignore_errors=True)
    tmp.rename(target)


def fetch(cache: Path) -> list[Source]:
    """Engine tags TAGS and docs branches DOCS_BRANCHES; a tag already in the cache is not downloaded again."""
    sources: list[Source] = []
    for tag in TAGS:
        folder = cache / f"godot-{tag}"
        if not (folder / "version.py").exists():
            _download_extract(ENGINE.format(tag=tag), folder, ENGINE_FILES)
        classes = classes_source(folder, adapter="github")
        sources.append(classes)
        for path in sorted(folder.rglob("*_3_to_4.cpp")):
            if path.name in UPGRADE_FILES:
                sources.append(file_source(UPGRADE_FILES[path.name], path, classes.version, adapter="github"))
    docs = cache / "docs"
    for branch in DOCS_BRANCHES:
        folder = docs / f"godot-docs-{branch}"
        if not folder.exists():
            _download_extract(DOCS.format(branch=branch), folder, DOCS_FILES)
    if docs.exists():
        sources.append(docs_source(docs, adapter="github"))
    write_manifest(cache, sources)
    return sources
