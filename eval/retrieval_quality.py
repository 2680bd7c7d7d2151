"""Retrieval quality on probes with a known answer: does the right api_mapping row reach the top 10?

Probes come from the official rename map in the corpus (api_mapping rows with source 'rename_map',
category class or function, not ambiguous): `extends <old class>` and `var target: <old class>`
for classes, `target.<old method>(…)` inside a function for functions, plus fixture fragments whose
answer is known (enemy.gd: `extends KinematicBody2D`, `_physics_process` calling move_and_slide).
Each probe is a .gd file sliced, cued and searched exactly as the pipeline does (slice_file ->
gather_evidence with the default RetrievalParams and request). Prints recall@10 and the mean rank
of the right row per category and overall, and the worst misses.

    python eval/retrieval_quality.py --home /path/to/corpus/home [--limit N] [--worst 15]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO.parent / "shared" / "fixtures"
TOP = 10
BATCH = 64


@dataclass
class Probe:
    category: str               # class:extends, class:var, function, fixture
    label: str                  # what the probe asks about, for people
    fragment: dict              # a fragment as the store holds it (key, kind, text, file_kind)
    expected: Callable[[str], bool]   # is this candidate id a right answer?
    rank: int | None = None     # 1-based rank of the best right candidate; None: not among the candidates
    top: tuple[str, ...] = ()   # titles of the first candidates, for the miss report
    cues: tuple[str, ...] = ()


def probe_fragment(text: str, line: str, path: str = "probe.gd") -> dict:
    """The fragment of a sliced .gd `text` that holds `line`, as fragment_evidence reads it."""
    from gd_assets.core.slicing import slice_file

    for frag in slice_file(path, "gdscript", text):
        if line in frag.text:
            return {"key": f"probe/{path}::{frag.symbol}", "kind": frag.kind, "text": frag.text, "file_kind": "gdscript"}
    raise ValueError(f"{path}: no fragment holds {line!r}; the slicer cut the probe unexpectedly")


def call_arguments(method: str) -> str:
    """A plausible argument list: setters and adders take a value, the rest are called bare."""
    return "value" if method.startswith(("set_", "add_", "remove_")) else ""


def rename_probes(corpus_db: Path, limit: int | None) -> list[Probe]:
    from gd_assets.core.duck import connect

    with connect(corpus_db, read_only=True) as con:
        rows = con.execute(
            "SELECT id, category, old_name FROM api_mapping WHERE source = 'rename_map' "
            "AND category IN ('class', 'function') AND NOT ambiguous ORDER BY category, id").fetchall()
    if limit and limit < len(rows):
        rows = rows[:: -(-len(rows) // limit)]  # spread over both categories
    probes = []
    for row_id, category, old in rows:
        def right(candidate: str, row_id: str = row_id) -> bool:
            return candidate == row_id

        if category == "class":
            line = f"extends {old}"
            probes.append(Probe("class:extends", line, probe_fragment(line + "\n", line), right))
            line = f"var target: {old}"
            probes.append(Probe("class:var", line, probe_fragment(f"extends Node\n\n{line}\n", line), right))
        else:
            line = f"target.{old}({call_arguments(old)})"
            text = f"extends Node\n\n\nfunc _ready():\n\t{line}\n"
            probes.append(Probe("function", line, probe_fragment(text, line), right))
    return probes


def fixture_probes() -> list[Probe]:
    """Fragments of the seed fixtures with the row each must retrieve."""
    from gd_assets.core.ingest import ingest
    from gd_assets.core.slicing import slice_file

    expectations = [  # (dump, path, fragment symbol, label, is the candidate id right?)
        ("enemy.dump.txt", "enemy.gd", "extends", "enemy.gd extends KinematicBody2D",
         lambda c: c == "map:rename:class:KinematicBody2D"),
        ("enemy.dump.txt", "enemy.gd", "_physics_process", "enemy.gd _physics_process -> a move_and_slide row",
         lambda c: c.startswith("map:") and "move_and_slide" in c),
    ]
    probes = []
    for dump, path, symbol, label, right in expectations:
        files = {f.path: f for f in ingest(FIXTURES / dump).files if f.included}
        file = files[path]
        frags = [f for f in slice_file(file.path, file.kind, file.text) if f.symbol == symbol]
        if not frags:
            raise ValueError(f"{FIXTURES / dump}: {path} has no fragment {symbol!r}; the fixture changed")
        frag = frags[0]
        probes.append(Probe("fixture", label, {"key": f"fixture/{path}::{symbol}", "kind": frag.kind,
                                               "text": frag.text, "file_kind": file.kind}, right))
    return probes


def search(probes: list[Probe]) -> str:
    """Rank of the right row for every probe, through gather_evidence in the asset's batch size; the index version."""
    from gd_assets.core.cues import DEFAULT_REQUEST
    from gd_assets.core.evidence import gather_evidence
    from gd_assets.core.retrieval import CorpusIndex, RetrievalParams
    from gd_assets.home import index_dir

    index = CorpusIndex.load(index_dir())
    params = RetrievalParams()
    for start in range(0, len(probes), BATCH):
        batch = probes[start:start + BATCH]
        for probe, ev in zip(batch, gather_evidence([p.fragment for p in batch], index, params, DEFAULT_REQUEST)):
            ranks = [c.rank for c in ev.candidates if c.table == "api_mapping" and probe.expected(c.id)]
            probe.rank = min(ranks) if ranks else None
            probe.top = tuple(f"{c.table}:{c.title}" for c in ev.candidates[:3])
            probe.cues = tuple(c.cue for c in ev.cues if c.source != "request")
        print(f"  searched {min(start + BATCH, len(probes))}/{len(probes)}", file=sys.stderr, end="\r")
    print(file=sys.stderr)
    return index.version


def report(probes: list[Probe], worst: int) -> dict[str, float]:
    from gd_assets.core.retrieval import RetrievalParams

    k_final = RetrievalParams().k_final
    order = ("class:extends", "class:var", "class (both)", "function", "fixture", "overall")
    groups: dict[str, list[Probe]] = {name: [] for name in order}
    for p in probes:
        groups[p.category].append(p)
        if p.category.startswith("class:"):
            groups["class (both)"].append(p)
    groups["overall"] = probes
    groups = {name: group for name, group in groups.items() if group}
    print(f"{'category':<16} {'probes':>6} {'recall@10':>10} {'in list':>8} {'mean rank':>10} {'mean rank*':>11}")
    recalls = {}
    for name, group in groups.items():
        found = [p.rank for p in group if p.rank is not None]
        recall = sum(1 for r in found if r <= TOP) / len(group)
        mean = sum(found) / len(found) if found else float("nan")
        penalised = (sum(found) + (k_final + 1) * (len(group) - len(found))) / len(group)
        print(f"{name:<16} {len(group):>6} {recall:>10.3f} {len(found) / len(group):>8.3f} {mean:>10.2f} {penalised:>11.2f}")
        recalls[name] = recall
    print(f"mean rank: over probes whose row is among the candidates; mean rank*: a missing row counts as {k_final + 1}")
    print("aim: recall@10 >= 0.95 on class and function renames: "
          + ", ".join(f"{n} {'met' if recalls[n] >= 0.95 else 'NOT met'}" for n in ("class (both)", "function")
                      if n in recalls))
    misses = sorted((p for p in probes if p.rank is None or p.rank > TOP),
                    key=lambda p: (p.rank is not None, -(p.rank or 0), p.category, p.label))
    if misses:
        print(f"\nworst misses ({len(misses)} outside the top {TOP}; first {min(worst, len(misses))}):")
    for p in misses[:worst]:
        print(f"  [{p.category}] {p.label}: {'not among the candidates' if p.rank is None else f'rank {p.rank}'}")
        print(f"      cues: {', '.join(p.cues[:8])}")
        print(f"      top: {' | '.join(t[:60] for t in p.top)}")
    return recalls


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--home", default=os.environ.get("GD_ASSETS_CORPUS_HOME") or os.environ.get("GD_ASSETS_HOME"),
                        help="folder with corpora.duckdb and index/ (default $GD_ASSETS_CORPUS_HOME, $GD_ASSETS_HOME)")
    parser.add_argument("--limit", type=int, default=None, help="about N rename rows, evenly spread (quick runs)")
    parser.add_argument("--worst", type=int, default=15, help="misses to list")
    args = parser.parse_args(argv)
    if args.home:
        os.environ["GD_ASSETS_CORPUS_HOME"] = str(Path(args.home).expanduser().resolve())

    from gd_assets.home import corpora_db_path

    started = time.perf_counter()
    probes = fixture_probes() + rename_probes(corpora_db_path(), args.limit)
    version = search(probes)
    print(f"{len(probes)} probes searched in {time.perf_counter() - started:.1f} s "
          f"(corpus {corpora_db_path()}, index {version})\n")
    report(probes, args.worst)
    return 0


if __name__ == "__main__":
    sys.exit(main())
