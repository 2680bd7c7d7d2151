"""A project's migrated copy: the fragments' edits applied to its files, a unified diff and a summary.

Edits are in file coordinates (rewrite.py), so a file is rewritten once from its stored text; an
edit whose old text no longer matches is never applied blindly: the file is copied as it was and
the mismatch reported.
"""

from __future__ import annotations

import difflib
import posixpath
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from gd_assets.core.rewrite import Edit, apply_edits


@dataclass
class FileMigration:
    path: str
    old: str
    new: str
    edits: int = 0
    manual: Counter = field(default_factory=Counter)
    problem: str | None = None

    @property
    def changed(self) -> bool:
        return self.new != self.old


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
        if f.changed:
            out.extend(difflib.unified_diff(f.old.splitlines(keepends=True), f.new.splitlines(keepends=True),
                                            f"a/{f.path}", f"b/{f.path}"))
            if out and not out[-1].endswith("\n"):
                out[-1] += "\n\\ No newline at end of file\n"
    return "".join(out)


def summary(files: list[FileMigration]) -> dict:
    """Edits and manual items per file and per folder, and in all."""
    folders: dict[str, Counter] = defaultdict(Counter)
    per_file = []
    for f in sorted(files, key=lambda f: f.path):
        if not (f.edits or f.manual or f.problem):
            continue
        per_file.append({"path": f.path, "edits": f.edits, "manual": dict(f.manual), "problem": f.problem})
        folder = posixpath.dirname(f.path) or "."
        folders[folder]["edits"] += f.edits
        folders[folder]["manual"] += sum(f.manual.values())
        folders[folder]["files"] += 1
    manual = sum((f.manual for f in files), Counter())
    return {"files_changed": sum(f.changed for f in files), "edits": sum(f.edits for f in files),
            "manual": sum(manual.values()), "manual_by_kind": dict(manual.most_common()),
            "problems": [f.path for f in files if f.problem], "files": per_file,
            "folders": [{"folder": k, **v} for k, v in sorted(folders.items())]}
