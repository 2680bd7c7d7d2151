"""Roll fragment judgements up: fragment -> file -> folder -> project.

The verdict comes only from judgements, never from file names. Mostly Godot 4 signals with a
real minority of Godot 3 migration signals is `mixed`, and the explanation says where the
minority sits ("addons/gut: 14 Godot 3 fragments; rest Godot 4").
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import PurePosixPath
from typing import Iterable, Mapping

MIXED_SHARE = 0.10   # the minority side's share of signalled fragments that makes a verdict mixed
MIXED_MIN = 2        # ... and at least this many minority fragments


def _counts(rows: Iterable[Mapping]) -> dict:
    c = {"fragments": 0, "godot3": 0, "godot4": 0, "neutral": 0, "migration_needed": 0}
    for r in rows:
        c["fragments"] += 1
        c[r["signal"]] += 1
        c["migration_needed"] += bool(r["migration_needed"])
    return c


def decide(counts: Mapping[str, int]) -> tuple[str, float]:
    """(verdict, confidence) from signal counts."""
    g3, g4 = counts["godot3"], counts["godot4"]
    if g3 + g4 == 0:
        return "unknown", 0.0
    minority = min(g3, g4)
    share = minority / (g3 + g4)
    if minority >= MIXED_MIN and share >= MIXED_SHARE:
        return "mixed", round(min(0.99, 0.5 + share), 2)
    verdict = "godot3" if g3 > g4 else "godot4"
    signalled = g3 + g4
    return verdict, round(min(0.99, (1 - share) * signalled / (signalled + 2)), 2)


def folder_of(path: str) -> str:
    parent = str(PurePosixPath(path).parent)
    return "." if parent in ("", ".") else parent


def roll_up(project: str, rows: list[Mapping]) -> dict:
    """Project verdict with per-file and per-folder counts; `rows` are judgement rows with `path`."""
    by_file: dict[str, list[Mapping]] = defaultdict(list)
    by_folder: dict[str, list[Mapping]] = defaultdict(list)
    for r in rows:
        by_file[r["path"]].append(r)
        by_folder[folder_of(r["path"])].append(r)
    counts = _counts(rows)
    verdict, confidence = decide(counts)
    files = []
    for path in sorted(by_file):
        c = _counts(by_file[path])
        files.append({"path": path, "verdict": decide(c)[0], **{k: c[k] for k in
                                                                 ("godot3", "godot4", "neutral", "migration_needed")}})
    folders = []
    for path in sorted(by_folder):
        c = _counts(by_folder[path])
        folders.append({"path": path, "verdict": decide(c)[0], **{k: c[k] for k in ("godot3", "godot4", "neutral")}})
    return {"project": project, "verdict": verdict, "confidence": confidence, "counts": counts,
            "explanation": explain(verdict, counts, folders, files), "folders": folders, "files": files}


def explain(verdict: str, counts: Mapping[str, int], folders: list[dict], files: list[dict]) -> str:
    g3, g4 = counts["godot3"], counts["godot4"]
    if verdict == "unknown":
        return (f"No fragment carries a Godot 3 or Godot 4 signal ({counts['fragments']} fragments, all neutral): "
                "nothing to decide from.")
    head = {"godot3": "Godot 3 project", "godot4": "Godot 4 project", "mixed": "Mixed Godot 3 / Godot 4 project"}[verdict]
    text = f"{head}: {g3} Godot 3 and {g4} Godot 4 fragments ({counts['neutral']} neutral)."
    minority = "godot3" if verdict in ("godot4", "mixed") and g3 <= g4 else "godot4"
    if verdict == "mixed":
        minority = "godot3" if g3 <= g4 else "godot4"
    where = _where(minority, folders, files)
    if where and min(g3, g4) > 0:
        label = "Godot 3" if minority == "godot3" else "Godot 4"
        text += f" {label} signals are in " + "; ".join(where) + "."
        rest = "Godot 4" if minority == "godot3" else "Godot 3"
        text += f" The rest is {rest} or neutral."
    return text


def _where(side: str, folders: list[dict], files: list[dict], limit: int = 5) -> list[str]:
    """The folders (or files, in a flat project) holding the minority signals, biggest first."""
    places = folders if len(folders) > 1 else files
    hits = sorted((p for p in places if p[side]), key=lambda p: (-p[side], p["path"]))
    label = "Godot 3" if side == "godot3" else "Godot 4"
    out = [f"{p['path']}: {p[side]} {label} fragment{'s' if p[side] != 1 else ''}" for p in hits[:limit]]
    if len(hits) > limit:
        out.append(f"{len(hits) - limit} more places")
    return out
