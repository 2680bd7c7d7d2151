"""Score a Godot 3 -> 4 rewrite of the development-set demos against the human port.

Implements "Scoring a rewrite" of ../shared/devset/README.md, so a rewrite's figures can be set next to
those the README publishes for Godot's own converter: per unit (function or `<toplevel>`), how much of
the token distance from the Godot 3 text A to the port T the rewrite R covers, and whether units the
port left alone stay untouched. A unit renamed in the port (absent from T, a new function of T's file
within the rename distance of A) is read through that new function, as the README does for R.
Run: python eval/rewrite_scoring.py --rewritten 2d/platformer=DIR [...] [--mirror GITDIR] [--self-check]
(DIR is the rewritten demo folder; demos not given are scored untouched, R = A.)
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import tempfile
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from trees import DEFAULT_MIRROR, extract

DEFAULT_TRUTH = Path(__file__).resolve().parents[2] / "shared" / "devset" / "demo_migration_truth.json"
TOPLEVEL = "<toplevel>"
MAX_TOKENS = 4000
CONVERTER = {"changed": 117, "mean": 0.541, "micro": 0.368, "closer": 0.658, "worse": 0.085, "exact": 0.453,
             "unchanged": 132, "false_rewrites": 6, "false_rewrite_units": []}
_TOKEN = re.compile(r'''
    (?P<skip>\s+|\\\n|\#[^\n]*)
  | (?P<tok>"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'
  | 0[xX][0-9A-Fa-f_]+|0[bB][01_]+|(?:\d[\d_]*(?:\.[\d_]*)?|\.\d[\d_]*)(?:[eE][+-]?\d[\d_]*)?
  | [A-Za-z_]\w*
  | \*\*=|<<=|>>=|->|:=|==|!=|<=|>=|&&|\|\||\+=|-=|\*=|/=|%=|&=|\|=|\^=|\*\*|<<|>>|\.\.
  | \S)''', re.VERBOSE)
_FUNC = re.compile(r"(?:static\s+)?func\s+([A-Za-z_]\w*)")


def tokens(text: str) -> list[str]:
    """Tokens as the README reads them, so that comment and whitespace edits cost nothing."""
    return [m.group("tok") for m in _TOKEN.finditer(text) if m.group("tok") is not None]


def unit_names(text: str) -> list[str]:
    """The unit of each line: a column-0 function runs to the next column-0 code line; the rest is `<toplevel>`."""
    names, current = [], TOPLEVEL
    for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        if line and not line[0].isspace() and not line.startswith("#"):
            match = _FUNC.match(line)
            current = match.group(1) if match else TOPLEVEL
        names.append(current)
    return names


def cut_units(text: str) -> dict[str, str]:
    """Name -> text of each unit (`unit_names`); a repeated name joins its first definition."""
    units: dict[str, list[str]] = {TOPLEVEL: []}
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    for name, line in zip(unit_names(text), lines):
        units.setdefault(name, []).append(line)
    return {name: "\n".join(lines) for name, lines in units.items()}


def distance(a: list[str], b: list[str]) -> int:
    """Token Levenshtein distance; shared ends are trimmed first since rewrites mostly touch a few lines."""
    start = len(os.path.commonprefix([a, b]))
    a, b = a[start:], b[start:]
    end = len(os.path.commonprefix([a[::-1], b[::-1]]))
    return _bit_parallel(a[:len(a) - end], b[:len(b) - end])


def _bit_parallel(a: list[str], b: list[str]) -> int:
    """Levenshtein distance by Myers/Hyyro bit vectors over Python ints: one column of the DP per token
    of `a` in a few integer operations, so units of thousands of tokens take milliseconds."""
    if not b:
        return len(a)
    full, top = (1 << len(b)) - 1, 1 << (len(b) - 1)
    peq: dict[str, int] = {}
    for i, token in enumerate(b):
        peq[token] = peq.get(token, 0) | (1 << i)
    pv, mv, score = full, 0, len(b)
    for token in a:
        eq = peq.get(token, 0)
        xv = eq | mv
        xh = ((((eq & pv) + pv) & full) ^ pv) | eq
        ph = (mv | ~(xh | pv)) & full
        mh = pv & xh
        score += 1 if ph & top else -1 if mh & top else 0
        ph = ((ph << 1) | 1) & full
        mh = (mh << 1) & full
        pv = (mh | ~(xv | ph)) & full
        mv = ph & xv
    return score


@dataclass
class UnitScore:
    """One scored unit; reproduction is None for unchanged units."""

    demo: str
    path: str
    function: str
    status: str
    d_at: int
    d_rt: int
    exact: bool
    false_rewrite: bool
    reproduction: float | None

    @property
    def label(self) -> str:
        """demo/path::function, as reports list units."""
        return f"{self.demo}/{self.path}::{self.function}"


def _file_units(path: Path) -> dict[str, list[str]] | None:
    """Token lists per unit of a .gd file, or None when the file is absent."""
    if not path.is_file():
        return None
    text = path.read_bytes().decode("utf-8", "replace")
    return {name: tokens(unit) for name, unit in cut_units(text).items()}


def _renamed(a: list[str], side: dict[str, list[str]], a_names: set[str], taken: set[str]) -> str | None:
    """The new function of the file (absent from A's file) nearest A within half of A's tokens, if any."""
    best, best_d = None, len(a) // 2 + 1
    for name, toks in side.items():
        if name in a_names or name in taken or name == TOPLEVEL or abs(len(toks) - len(a)) >= best_d:
            continue
        d = distance(a, toks)
        if d < best_d:
            best, best_d = name, d
    return best


def _unit(name: str, a: list[str], side: dict[str, list[str]] | None, a_names: set[str],
          taken: set[str]) -> list[str]:
    """The unit's tokens on one side: by name, else through a rename, else empty."""
    if side is None:
        return []
    if name in side:
        return side[name]
    new = _renamed(a, side, a_names, taken)
    taken.add(new)
    return side.get(new, [])


def _score(demo: str, row: dict, a: list[str], t: list[str], r: list[str]) -> UnitScore | None:
    """One unit's score, or None when the README leaves it out."""
    d_at = distance(a, t)
    if max(len(a), len(t)) > MAX_TOKENS or (row["status"] == "changed" and d_at == 0):
        return None
    d_rt, exact = distance(r, t), r == t
    if row["status"] == "unchanged":
        return UnitScore(demo, row["path"], row["function"], "unchanged", d_at, d_rt, exact, r != a, None)
    repro = max(-1.0, min(1.0, 1 - d_rt / d_at))
    return UnitScore(demo, row["path"], row["function"], "changed", d_at, d_rt, exact, False, repro)


def score_demo(demo_row: dict, gd3_root: Path, gd4_root: Path, rewritten_root: Path) -> list[UnitScore]:
    """Scores of the demo's changed and unchanged units; a file absent from rewritten_root is an empty R."""
    out, files, taken = [], {}, defaultdict(set)
    for row in demo_row["functions"]:
        if row["status"] not in ("changed", "unchanged"):
            continue
        path, gd4_path = row["path"], row["gd4_path"] or row["path"]
        for key, root, rel in (("a", gd3_root, path), ("t", gd4_root, gd4_path), ("r", rewritten_root, path)):
            if (key, rel) not in files:
                files[key, rel] = _file_units(root / rel)
        a_units = files["a", path] or {}
        a = a_units.get(row["function"], [])
        t = _unit(row["function"], a, files["t", gd4_path], set(a_units), taken["t", gd4_path])
        r = _unit(row["function"], a, files["r", path], set(a_units), taken["r", path])
        scored = _score(demo_row["demo"], row, a, t, r)
        if scored is not None:
            out.append(scored)
    return out


def summary(scores: list[UnitScore]) -> dict:
    """The README's figures: reproduction mean/micro and closer/worse/exact shares; false rewrites."""
    changed = [s for s in scores if s.status == "changed"]
    unchanged = [s for s in scores if s.status == "unchanged"]
    total_at = sum(s.d_at for s in changed)
    false = [s.label for s in unchanged if s.false_rewrite]
    return {"changed": len(changed), "mean": _mean([s.reproduction for s in changed]),
            "micro": 1 - sum(s.d_rt for s in changed) / total_at if total_at else None,
            "closer": _mean([s.d_rt < s.d_at for s in changed]),
            "worse": _mean([s.d_rt > s.d_at for s in changed]),
            "exact": _mean([s.exact for s in changed]),
            "unchanged": len(unchanged), "false_rewrites": len(false), "false_rewrite_units": false}


def _mean(values: list) -> float | None:
    """Mean of numbers or booleans (a share), None for no units rather than a misleading 0."""
    return sum(values) / len(values) if values else None


_ROWS = (("changed", "changed units"), ("mean", "reproduction mean"), ("micro", "reproduction micro"),
         ("closer", "closer"), ("worse", "worse"), ("exact", "exact"), ("unchanged", "unchanged units"),
         ("false_rewrites", "false rewrites"))


def _cell(key: str, s: dict) -> str:
    """One figure as printed: signed reproduction, percent shares, plain counts."""
    value = s.get(key)
    if value is None:
        return "-"
    if key in ("mean", "micro"):
        return f"{value:+.3f}"
    if key in ("closer", "worse", "exact"):
        return f"{100 * value:.1f}%"
    if key == "false_rewrites" and s.get("unchanged"):
        return f"{value} ({100 * value / s['unchanged']:.1f}%)"
    return str(value)


def print_table(rows: list[tuple[str, dict]]) -> None:
    """A text table with one column per named summary, so rewrites read side by side."""
    width = max([14] + [len(name) + 2 for name, _ in rows])
    label_w = max(len(label) for _, label in _ROWS) + 2
    print(f"{'':{label_w}}" + "".join(f"{name:>{width}}" for name, _ in rows))
    for key, label in _ROWS:
        print(f"{label:{label_w}}" + "".join(f"{_cell(key, s):>{width}}" for _, s in rows))


def _port_as_rewrite(demo_row: dict, gd4_root: Path, into: Path) -> Path:
    """A folder holding T's files at their Godot 3 paths, to score the port itself as a rewrite."""
    for row in demo_row["functions"]:
        source = gd4_root / (row["gd4_path"] or row["path"])
        if source.is_file():
            (into / row["path"]).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, into / row["path"])
    return into


def _roots(demo_row: dict, mirror: str) -> tuple[Path, Path]:
    """The extracted Godot 3 and Godot 4 demo folders."""
    gd3, gd4 = demo_row["gd3"], demo_row["gd4"]
    return extract(mirror, gd3["commit"], gd3["subpath"]), extract(mirror, gd4["commit"], gd4["subpath"])


def _report(title: str, per_demo: dict[str, list[UnitScore]], extra: list[tuple[str, dict]]) -> None:
    """Per-demo columns, the pooled column, then any reference columns."""
    print(f"\n{title}")
    pooled = [s for scores in per_demo.values() for s in scores]
    print_table([(demo, summary(s)) for demo, s in per_demo.items()] + [("all", summary(pooled))] + extra)
    for label in summary(pooled)["false_rewrite_units"]:
        print(f"  false rewrite: {label}")


def self_check(demos: list[dict], mirror: str) -> None:
    """R = A must give mean 0 and no false rewrites; R = T must give mean 1 and 100% exact."""
    untouched, port = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        for row in demos:
            gd3, gd4 = _roots(row, mirror)
            untouched[row["demo"]] = score_demo(row, gd3, gd4, gd3)
            as_rewrite = _port_as_rewrite(row, gd4, Path(tmp) / row["demo"])
            port[row["demo"]] = score_demo(row, gd3, gd4, as_rewrite)
    statuses = [f["status"] for d in demos for f in d["functions"]]
    print(f"units in the truth: {statuses.count('changed')} changed, {statuses.count('unchanged')} unchanged")
    _report("R = A (untouched original)", untouched, [])
    _report("R = T (the port itself)", port, [("converter (README)", CONVERTER)])


def main(argv: list[str] | None = None) -> int:
    """Score the given rewritten demo folders, the rest as untouched, next to the converter."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rewritten", action="append", default=[], metavar="DEMO=DIR")
    parser.add_argument("--mirror", default=DEFAULT_MIRROR)
    parser.add_argument("--truth", default=str(DEFAULT_TRUTH))
    parser.add_argument("--self-check", action="store_true")
    args = parser.parse_args(argv)
    demos = json.loads(Path(args.truth).read_text())["demos"]
    if args.self_check:
        self_check(demos, args.mirror)
        return 0
    given = dict(item.split("=", 1) for item in args.rewritten)
    unknown = set(given) - {d["demo"] for d in demos}
    if unknown:
        parser.error(f"unknown demo(s): {', '.join(sorted(unknown))}")
    ours = {}
    for row in demos:
        gd3, gd4 = _roots(row, args.mirror)
        ours[row["demo"]] = score_demo(row, gd3, gd4, Path(given.get(row["demo"], gd3)))
    _report("rewrite per demo (demos not given are untouched, R = A); all = pooled", ours,
            [("converter (README)", CONVERTER)])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
