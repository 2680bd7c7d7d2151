"""A project's migrated copy: the fragments' edits applied to its files, a unified diff and a summary.

Edits are in file coordinates (rewrite.py), so a file is rewritten once from its stored text; an
edit whose old text no longer matches is never applied blindly: the file is copied as it was and
the mismatch reported. A file Godot 4 reads under another name (`x.shader` -> `x.gdshader`) is
written under that name; the patch says so with git's rename lines, and the rewrite points every
reference at the new name.
"""

from __future__ import annotations

import difflib
import posixpath
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from gd_assets.core.rewrite import Edit, apply_edits

RENAMED_SUFFIXES = {".shader": ".gdshader"}  # Godot 4 loads shaders only as `.gdshader`


def migrated_path(path: str) -> str:
    """Where a file of the source goes in the copy: its own path, or Godot 4's name for it."""
    stem, dot, suffix = path.rpartition(".")
    new = RENAMED_SUFFIXES.get(f".{suffix.lower()}") if dot else None
    return f"{stem}{new}" if new else path


@dataclass
class FileMigration:
    path: str
    old: str
    new: str
    edits: int = 0
    manual: Counter = field(default_factory=Counter)
    problem: str | None = None
    new_path: str = ""

    def __post_init__(self) -> None:
        self.new_path = self.new_path or migrated_path(self.path)

    @property
    def changed(self) -> bool:
        return self.new != self.old or self.renamed

    @property
    def renamed(self) -> bool:
        return self.new_path != self.path


def migrate_file(path: str, text: str, edits: list[Edit], manual_kinds: list[str] = ()) -> FileMigration:
    """The file with its edits applied (overlapping edits: the first one wins; the others are dropped)."""
    kept: list[Edit] = []
    for e in sorted(edits, key=lambda e: (e.start_line, e.start_col, e.end_line, e.end_col)):
        if kept and (e.start_line, e.start_col) < (kept[-1].end_line, kept[-1].end_col):
            continue
        kept.append(e)
    try:
        new = apply_edits(text, kept)
    except ValueError as error:
        return FileMigration(path, text, text, 0, Counter(manual_kinds), f"not rewritten: {error}")
    return FileMigration(path, text, new, len(kept), Counter(manual_kinds))


def unified_diff(files: list[FileMigration]) -> str:
    """One patch for the whole project (`a/`, `b/` prefixes, as `git apply -p1` reads them)."""
    out = []
    for f in sorted(files, key=lambda f: f.path):
        if not f.changed:
            continue
        if f.renamed:
            out.append(f"diff --git a/{f.path} b/{f.new_path}\n")
            out.append("similarity index 100%\n" if f.new == f.old else "")
            out.append(f"rename from {f.path}\nrename to {f.new_path}\n")
        out.extend(difflib.unified_diff(f.old.splitlines(keepends=True), f.new.splitlines(keepends=True),
                                        f"a/{f.path}", f"b/{f.new_path}"))
        if out and not out[-1].endswith("\n"):
            out[-1] += "\n\\ No newline at end of file\n"
    return "".join(out)


def summary(files: list[FileMigration]) -> dict:
    """Edits and manual items per file and per folder, and in all."""
    folders: dict[str, Counter] = defaultdict(Counter)
    per_file = []
    for f in sorted(files, key=lambda f: f.path):
        if not (f.edits or f.manual or f.problem or f.renamed):
            continue
        per_file.append({"path": f.path, "edits": f.edits, "manual": dict(f.manual), "problem": f.problem,
                         **({"renamed_to": f.new_path} if f.renamed else {})})
        folder = posixpath.dirname(f.path) or "."
        folders[folder]["edits"] += f.edits
        folders[folder]["manual"] += sum(f.manual.values())
        folders[folder]["files"] += 1
    manual = sum((f.manual for f in files), Counter())
    return {"files_changed": sum(f.changed for f in files), "edits": sum(f.edits for f in files),
            "manual": sum(manual.values()), "manual_by_kind": dict(manual.most_common()),
            "problems": [f.path for f in files if f.problem], "files": per_file,
            "renamed": {f.path: f.new_path for f in sorted(files, key=lambda f: f.path) if f.renamed},
            "folders": [{"folder": k, **v} for k, v in sorted(folders.items())]}
