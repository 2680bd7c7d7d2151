"""Sources read from local files: class-reference folders or `.tar.xz` archives, the rename map,
the converter (its `.cpp` or the extracted `converter_rules_3_to_4.json`) and the docs `.rst` pages.

This is what tests and CI use (pointed at `../shared/corpus/`), and what the other adapters
produce after extraction.
"""

from __future__ import annotations

import json
import re
import tarfile
from pathlib import Path

from corpora_build.sources.base import CLASS_PATTERNS, Source
from corpora_build.sources.files import hash_files, is_archive, iter_files, read_version_py

RENAME_FILE = "renames_map_3_to_4.cpp"
CONVERTER_FILES = ("project_converter_3_to_4.cpp", "converter_rules_3_to_4.json")


def _archive_names(path: Path) -> list[str]:
    with tarfile.open(path) as tar:
        return tar.getnames()


def classes_source(location: Path, adapter: str = "archive") -> Source:
    """A class-reference folder or archive; its version comes from the version.py next to the XML."""
    version_files = list(iter_files(location, ("version.py",)))
    if not version_files:
        raise ValueError(f"{location}: no version.py next to the class XML, so its Godot version is unknown")
    version = read_version_py(version_files[0][1].decode())
    files = list(iter_files(location, CLASS_PATTERNS))
    if not files:
        raise ValueError(f"{location}: no doc/classes/*.xml inside")
    name = f"godot{version[0]}_classes"
    return Source(name, adapter, version, str(location), hash_files(files))


def file_source(name: str, path: Path, version: str, adapter: str = "archive") -> Source:
    return Source(name, adapter, version, str(path), hash_files(iter_files(path, ("*",))))


def docs_source(location: Path, adapter: str = "archive") -> Source:
    files = list(iter_files(location, ("*.rst",), strip_top=False))
    tops = sorted({rel.split("/", 1)[0] for rel, _ in files if "/" in rel}) or [location.stem]
    return Source("docs_pages", adapter, "+".join(tops), str(location), hash_files(files))


def _candidates(paths: list[Path]) -> list[Path]:
    found: list[Path] = []
    for path in paths:
        if not path.exists():
            raise FileNotFoundError(f"{path}: no such corpus source; pass a folder or archive that exists")
        if path.is_dir() and not (path / "version.py").exists():
            found.extend(sorted(path.iterdir()))
        else:
            found.append(path)
    return found


def _converter_version(path: Path) -> str | None:
    if path.suffix == ".json":
        match = re.search(r"Godot (\d+\.\d+(?:\.\d+)?)", json.loads(path.read_text()).get("about", ""))
        return f"{match.group(1)}-stable" if match else None
    return None


def from_paths(paths: list[Path]) -> list[Source]:
    """Recognise each input by its content; the rename map and converter take the 4.x release's version."""
    by_name: dict[str, Source] = {}
    pending: dict[str, Path] = {}
    for path in _candidates(paths):
        if path.is_dir() and (path / "version.py").exists():
            source = classes_source(path)
            by_name[source.name] = source
        elif is_archive(path):
            names = _archive_names(path)
            if any(n.endswith("/version.py") for n in names):
                source = classes_source(path)
                by_name[source.name] = source
            elif any(n.endswith(".rst") for n in names):
                by_name["docs_pages"] = docs_source(path)
        elif path.name == RENAME_FILE:
            pending["rename_map"] = path
        elif path.name in CONVERTER_FILES and ("converter_rules" not in pending or path.suffix == ".cpp"):
            pending["converter_rules"] = path
        elif path.is_dir() and any(path.rglob("*.rst")):
            by_name.setdefault("docs_pages", docs_source(path))
        elif path.suffix == ".rst" and "docs_pages" not in by_name:
            pending["docs_pages"] = path
    godot4 = by_name.get("godot4_classes")
    for name, path in pending.items():
        if name == "docs_pages":
            if "docs_pages" not in by_name:
                by_name[name] = docs_source(path)
            continue
        version = _converter_version(path) or (godot4.version if godot4 else "unknown")
        by_name[name] = file_source(name, path, version)
    missing = {"godot3_classes", "godot4_classes", "rename_map"} - set(by_name)
    if missing:
        raise ValueError(f"{', '.join(map(str, paths))}: missing {', '.join(sorted(missing))}")
    return [by_name[n] for n in sorted(by_name)]
