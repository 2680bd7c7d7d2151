"""Slicing coverage on real projects: every non-blank line of every included file in exactly one fragment.

    python eval/fragment_coverage.py TREE [TREE...]   # e.g. checkouts of godot-demo-projects 3.x and master

Each folder holding a project.godot is ingested as one project; prints files, exclusions by reason,
fragments by kind, unparsed regions and any line that is missing or doubled.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

from gd_assets.core.ingest import ingest
from gd_assets.core.slicing import slice_file, uncovered_lines


def projects_in(tree: Path) -> list[Path]:
    return sorted(p.parent for p in tree.rglob("project.godot"))


def measure(tree: Path) -> None:
    projects = projects_in(tree)
    files = excluded = fragments = broken = 0
    reasons: Counter[str] = Counter()
    kinds: Counter[str] = Counter()
    unparsed: list[str] = []
    for folder in projects:
        project = ingest(folder)
        for f in project.files:
            if not f.included:
                excluded += 1
                reasons[(f.reason or "").split(":")[0].split(" (")[0]] += 1
                continue
            files += 1
            frags = slice_file(f.path, f.kind, f.text or "")
            fragments += len(frags)
            kinds.update(fr.kind for fr in frags)
            unparsed += [f"{folder.relative_to(tree)}/{f.path}:{fr.start_line}-{fr.end_line} {fr.reason}"
                         for fr in frags if fr.kind == "unparsed" or fr.reason]
            missing, doubled = uncovered_lines(f.text or "", frags)
            if missing or doubled:
                broken += 1
                print(f"  COVERAGE {folder.relative_to(tree)}/{f.path}: missing {missing[:5]} doubled {doubled[:5]}")
    print(f"{tree}: {len(projects)} projects, {files} files included, {excluded} excluded, {fragments} fragments")
    print(f"  files breaking the invariant: {broken}")
    print("  fragments by kind: " + ", ".join(f"{k} {v}" for k, v in kinds.most_common()))
    print("  exclusions: " + ", ".join(f"{k} {v}" for k, v in reasons.most_common()))
    print(f"  unparsed or parsed with errors: {len(unparsed)}")
    for line in unparsed[:10]:
        print("    " + line)


if __name__ == "__main__":
    for arg in sys.argv[1:] or ["."]:
        measure(Path(arg))
