"""Score judges on real Godot 3 -> 4 ports outside godot-demo-projects, as the development set is scored.

For each port (a git mirror with a Godot 3 ref and a Godot 4 ref) the truth is built here: .gd files
are paired by path (else by path or file name ignoring case, `_` and `-`), cut into units as
../shared/devset/README.md says and compared token by token (`unchanged` when equal, `changed` when
not, `missing_in_gd4` not scored). Fragments go to the unit holding their first code line. The Godot 3
side is judged in its project's context; every fragment of the Godot 4 side counts for false flags.
With `--godot GODOT4` the Godot 4 side is verified by that Godot, as `gd-assets verify` does, and the false
flags are split by what it says of each script: a human port keeps Godot 3 code Godot 4 rejects (a setget, a
`File`, mixed indentation), and a flag there is no false flag.
Run: python eval/ports.py [--port NAME:GITDIR:GD3_REF:GD4_REF ...] [--verbose] [--json PATH] [--godot GODOT4]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

from devset import TOPLEVEL, Unit, flagged, gd_items, list_errors, print_table, reasons, score, share
from judging import EvidenceSource, Item, attach_scopes, load_judge, run_judge
from rewrite_scoring import tokens
from trees import cache_root

from gd_assets.core.project_context import _ADDONS_WARNED

DEFAULT_PORTS = ["tps-demo:/work/.mirror/godotengine+tps-demo/repo:3.x:f41444c"]
PATTERNS = ("*.gd", "*.tscn", "*.godot")
_FUNC = re.compile(r"(?:static\s+)?func\s+([A-Za-z_]\w*)")


def unit_of_lines(text: str) -> list[str]:
    """The unit of each line: a column-0 `func NAME` / `static func NAME` runs up to the next column-0
    line that is not a comment or a closing bracket (the `) -> T:` of a multi-line signature); the rest
    of the file is `<toplevel>`. A second definition of a name is kept apart as `NAME<dup>`."""
    names, seen, current = [], set(), TOPLEVEL
    for line in text.split("\n"):
        if line[:1].strip() and line[0] not in "#)]}":
            match = _FUNC.match(line)
            current = match.group(1) if match else TOPLEVEL
            if match:
                current = current + "<dup>" if current in seen else current
                seen.add(current)
        names.append(current)
    return names


def cut_units(text: str) -> dict[str, str]:
    """Unit name -> its text (the lines of unit_of_lines)."""
    units: dict[str, list[str]] = defaultdict(list)
    for name, line in zip(unit_of_lines(text), text.split("\n")):
        units[name].append(line)
    return {name: "\n".join(lines) for name, lines in units.items()}


def units_of_file(label: str, path: str, text: str, items: list[Item]) -> dict[str, Unit]:
    """Units of one file with their fragments, each fragment given to the unit of its first code line
    (by line, not by name: the slicer names inner-class methods and split bodies its own way)."""
    lines, names = text.split("\n"), unit_of_lines(text)
    units = {name: Unit(label, path, name, "") for name in dict.fromkeys(names)}
    for item in items:
        span = range(max(item.start_line, 1) - 1, min(item.end_line, len(lines)))
        code = [n for n in span if lines[n].strip() and not lines[n].lstrip().startswith("#")]
        units[names[code[0] if code else span.start]].items.append(item)
    return units


def _read(path: Path) -> str:
    return path.read_bytes().decode("utf-8", "replace").replace("\r\n", "\n").replace("\r", "\n")


# ------------------------------------------------------------------------------------------ trees


def _git(gitdir: str, *args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "--git-dir", gitdir, *args], capture_output=True, check=True, **kw)


def extract(name: str, gitdir: str, ref: str) -> tuple[Path, str]:
    """The .gd, .tscn and project.godot files of `ref`, cached by commit; returns (folder, commit)."""
    commit = _git(gitdir, "rev-parse", "--verify", f"{ref}^{{commit}}", text=True).stdout.strip()
    root = cache_root() / "ports" / name / commit[:12]
    marker = root.parent / f"{commit[:12]}.complete"
    if not marker.exists():
        root.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "--git-dir", gitdir, "archive", commit, "--", *PATTERNS],
                                 capture_output=True)
        if archive.returncode:  # a pattern matched nothing, or a blob is absent: go file by file
            listing = _git(gitdir, "ls-tree", "-r", "--name-only", "-z", commit, text=True).stdout
            for path in filter(None, listing.split("\0")):
                if path.endswith((".gd", ".tscn", ".godot")):
                    blob = subprocess.run(["git", "--git-dir", gitdir, "show", f"{commit}:{path}"],
                                          capture_output=True)
                    if blob.returncode == 0:
                        (root / path).parent.mkdir(parents=True, exist_ok=True)
                        (root / path).write_bytes(blob.stdout)
        else:
            subprocess.run(["tar", "x", "-C", str(root)], input=archive.stdout, check=True)
        marker.write_text(commit + "\n")
    return root, commit


def config_version(root: Path) -> str:
    """config_version of the tree's project.godot files (4 = Godot 3, 5 = Godot 4)."""
    found = {m.group(1) for p in root.rglob("project.godot")
             for m in [re.search(r"^config_version=(\d+)", _read(p), re.M)] if m}
    return ",".join(sorted(found)) or "?"


def _plain(path: str) -> str:
    """`src/Player_Body.gd` and `src/playerbody.gd` read the same: lower case, no `_`, `-` or space."""
    return re.sub(r"[_\- ]", "", path.lower())


def pair_files(gd3: list[str], gd4: list[str]) -> dict[str, str | None]:
    """Godot 3 path -> Godot 4 path: the same path, else the same path or file name (unique) read plainly."""
    free = [p for p in gd4 if p not in set(gd3)]
    by_path = {_plain(p): p for p in free}
    by_name: dict[str, list[str]] = defaultdict(list)
    for p in free:
        by_name[_plain(p.rsplit("/", 1)[-1])].append(p)
    out: dict[str, str | None] = {}
    for p in gd3:
        names = by_name.get(_plain(p.rsplit("/", 1)[-1]), [])
        out[p] = p if p in gd4 else by_path.get(_plain(p)) or (names[0] if len(names) == 1 else None)
    return out


# ------------------------------------------------------------------------------------------ one port


def load_port(spec: str, home: str | None) -> dict:
    """Truth units, Godot 4 units and all items of one port `NAME:GITDIR:GD3_REF:GD4_REF`."""
    name, gitdir, ref3, ref4 = spec.split(":")
    root3, commit3 = extract(name, gitdir, ref3)
    root4, commit4 = extract(name, gitdir, ref4)
    by_file3 = gd_items(root3, f"{name}/gd3")
    by_file4 = gd_items(root4, f"{name}/gd4")
    items3 = [i for items in by_file3.values() for i in items]
    items4 = [i for items in by_file4.values() for i in items]
    attach_scopes(root3, items3, home)
    attach_scopes(root4, items4, home)
    pairs = pair_files(list(by_file3), list(by_file4))
    truth, counts = [], defaultdict(int)
    for path3, path4 in pairs.items():
        counts["files paired by path" if path3 == path4 else "files renamed" if path4 else "files gone"] += 1
        units4 = {n: tokens(t) for n, t in cut_units(_read(root4 / path4)).items()} if path4 else {}
        text3 = _read(root3 / path3)
        texts3 = cut_units(text3)
        for fn, unit in units_of_file(name, path3, text3, by_file3[path3]).items():
            ours = tokens(texts3[fn])
            unit.status = "missing_in_gd4" if fn not in units4 else "unchanged" if ours == units4[fn] else "changed"
            if unit.items:
                counts[unit.status] += 1
                truth.append(unit)
            else:  # comments only, or code the slicer left out: not scored
                counts["units without fragments"] += 1
    gd4_units = [u for path, items in by_file4.items()
                 for u in units_of_file(f"{name}(gd4)", path, _read(root4 / path), items).values() if u.items]
    return {"name": name, "refs": {"gd3": [ref3, commit3, config_version(root3)],
                                   "gd4": [ref4, commit4, config_version(root4)]},
            "counts": dict(counts), "truth": truth, "gd4_units": gd4_units, "gd4_items": items4,
            "items": items3 + items4, "root3": root3, "root4": root4, "pairs": pairs, "gitdir": gitdir}


def godot4_rejects(port: dict, godot_path: str) -> dict[str, list[int]]:
    """Script of the port's Godot 4 tree (path from the repository root) -> the lines of its own errors, for
    every script Godot 4 fails to load on its own (not only through another script or a missing binary file).
    The tree is verified with its binary files, each project folder apart; cached by commit."""
    from godot4_ports import tree
    from trees import project_folders

    from gd_assets.core import engines, verify

    cached = cache_root() / "port-verdicts" / f"{port['refs']['gd4'][1][:12]}.json"
    if cached.exists():
        return json.loads(cached.read_text())
    full = tree(Path(port["gitdir"]).parent.name, port["refs"]["gd4"][1], "")
    rejected: dict[str, list[int]] = {}
    for folder in project_folders(full):
        if "config_version=5" not in _read(folder / "project.godot"):
            continue
        report, _ = verify.verify(folder, engines.find_godot(godot_path))
        prefix = folder.relative_to(full).as_posix()
        own = set(report.failing) - set(report.through) - set(report.asset_only)
        for path in own:
            lines = [p.line for p in report.problems if p.path == path and p.kind == "script" and p.line]
            rejected[f"{prefix}/{path}" if prefix != "." else path] = sorted(set(lines))
    cached.parent.mkdir(parents=True, exist_ok=True)
    cached.write_text(json.dumps(rejected))
    return rejected


def split_by_godot(ports: list[dict], judgements: dict, godot_path: str, top: int = 12) -> dict:
    """Godot 4 code flagged and unchanged units flagged, split by whether Godot 4 loads the port's script;
    the reasons of the flags on code Godot 4 loads (the false flags left) are listed."""
    places = ("loads", "fails elsewhere", "fails on these lines")
    out = {"Godot 4 fragments": defaultdict(int), "unchanged units": defaultdict(int)}
    loaded_reasons: dict[str, dict[str, int]] = {kind: defaultdict(int) for kind in out}
    example: dict[str, str] = {}
    godot4_flags: list[tuple[str, str, str]] = []   # (what Godot 4 says of the script, place, key) of each flag
    unchanged_flags: list[tuple[str, str, str]] = []   # the same for each flagged unchanged unit (its first flag)
    lowered: dict[str, bool] = {}   # key -> whether Godot 4 reports no native override there (settings, addons/)

    def note(kind: str, key: str, where: str) -> None:
        for part in reasons(judgements[key].rationale):
            loaded_reasons[kind][part] += 1
            example.setdefault(part, where)

    for port in ports:
        rejected = godot4_rejects(port, godot_path)
        for item in port["gd4_items"]:
            lines = rejected.get(item.path)
            where = places[0] if lines is None else places[2] if any(
                item.start_line <= n <= item.end_line for n in lines) else places[1]
            hit = judgements[item.key].migration_needed
            out["Godot 4 fragments"][where, hit] += 1
            if hit:
                godot4_flags.append((where, f"{port['name']}(gd4)/{item.path} L{item.start_line}", item.key))
            if hit and where == places[0]:
                note("Godot 4 fragments", item.key, f"{port['name']}(gd4)/{item.path} L{item.start_line}")
        for unit in port["truth"]:
            if unit.status == "unchanged":
                where = places[0] if port["pairs"].get(unit.path) not in rejected else places[1]
                out["unchanged units"][where, flagged(unit, judgements)] += 1
                for item in unit.items if where == places[0] else ():
                    if judgements[item.key].migration_needed:
                        note("unchanged units", item.key, f"{port['name']}/{item.path} L{item.start_line}")
                first = next((i for i in unit.items if judgements[i.key].migration_needed), None)
                if first is not None:
                    unchanged_flags.append((where, f"{port['name']}/{first.path} L{first.start_line}", first.key))
                    path4 = port["pairs"].get(unit.path) or unit.path
                    settings = _project_godot(port["root4"], path4)
                    lowered[first.key] = bool(_LOWERED_OVERRIDE.search(settings)) or (
                        "/addons/" in f"/{path4}" and not _ADDONS_WARNED.search(settings))
    print("\nevidence: flags split by what Godot 4 says of the port's own script (the flags are false where it loads)")
    for kind, counts in out.items():
        for where in places:
            hit, miss = counts.get((where, True), 0), counts.get((where, False), 0)
            if hit + miss:
                print(f"  {kind:<18} where the port's script {where:<22} {share(hit, hit + miss)}")
    for kind, counts in loaded_reasons.items():
        print(f"\nevidence: reasons of the flags on {kind} in scripts that Godot 4 loads")
        for reason, count in sorted(counts.items(), key=lambda kv: -kv[1])[:top]:
            print(f"  {count:4}  {reason}\n        e.g. {example[reason]}")
    figures = {kind: {f"{where}|{flag}": n for (where, flag), n in counts.items()} for kind, counts in out.items()}
    figures["flags on Godot 4 code, by what Godot 4 confirms"] = check_claims(
        godot4_flags, judgements, godot_path, "flags on the ports' Godot 4 code")
    figures["flagged unchanged units, by what Godot 4 confirms"] = check_claims(
        unchanged_flags, judgements, godot_path, "flagged functions the ports left unchanged", lowered)
    return figures


def _project_godot(root: Path, path: str) -> str:
    """The text of the project.godot nearest above `path` in the tree at `root` ("" when none)."""
    for folder in (root / path).parents:
        if (folder / "project.godot").is_file():
            return _read(folder / "project.godot")
        if folder == root:
            break
    return ""


_LOWERED_OVERRIDE = re.compile(r"^gdscript/warnings/native_method_override\s*=\s*[01]\s*$", re.M)
_OVERRIDE = re.compile(r"the project's `\w+\(\)` overrides Godot 4's native")
# Findings of a behaviour both engines run differently, shown by a differential case (tests/fixtures/behaviour/).
_BEHAVIOURS = {"overrides the parent script's: Godot 3 called both": "lifecycle-parent-first",
               "`Camera2D.zoom`: inverted in Godot 4": "camera-zoom",
               "Godot 3 made group calls on idle, Godot 4 at once": "group-call-deferred",
               "Godot 3 wrote ARGB, Godot 4 writes RGBA": "color-html",
               "Godot 4 measures the angle the opposite way": "vector-angle-to-point",
               "Godot 3 erased in place, Godot 4 returns the new string": "string-erase",
               "never calls randomize()": "random-seed",
               "whose setter takes more than one parameter": "setter-extra-parameters"}


def check_claims(flags: list[tuple[str, str, str]], judgements: dict, godot_path: str, what: str,
                 lowered: dict[str, bool] | None = None) -> dict[str, int]:
    """Each flag by what Godot 4 itself confirms of it: its compiler rejects the flagged lines, or its ClassDB
    lacks the member the finding's first "exists only in Godot 3" claim names (a runtime error or a wrong
    value the port left). On unchanged units also: a native override Godot 4 does not report in the port
    (`lowered`: its project.godot lowers the warning, or the script is under addons/), and a behaviour change
    a differential case (tests/fixtures/behaviour/) runs in both engines. The rest are the flags nothing confirms."""
    from engine_claims import claims, godot4_members, verdict

    first = {key: (claims(judgements[key].rationale) or [None])[0] for _, _, key in flags}
    answers = godot4_members({c for c in first.values() if c}, godot_path)
    counts: dict[str, int] = defaultdict(int)
    examples: dict[str, list[str]] = defaultdict(list)
    for where, place, key in flags:
        claim = first[key]
        rationale = judgements[key].rationale.split(" Godot 4: ")[0]
        case = next((c for text, c in _BEHAVIOURS.items() if text in rationale), None)
        if (lowered or {}).get(key) and _OVERRIDE.search(rationale):
            label = "answered otherwise: the port's project.godot, or its script's place under addons/, keeps " \
                "Godot 4 from reporting the native override"
        elif case:
            label = f"a behaviour change a differential case runs in both engines ({case})"
        elif where == "fails on these lines":
            label = "confirmed: Godot 4 rejects the flagged lines"
        elif claim and verdict(claim[1], answers[claim]) != "wrong":
            label = "confirmed: Godot 4's ClassDB makes the method static (the call's result is dropped)" \
                if claim[1].startswith("static ") else "confirmed: Godot 4's ClassDB has no virtual of that name " \
                "(Godot 4 never calls the override)" if claim[1].startswith("virtual ") else \
                "confirmed: Godot 4's ClassDB has no such member" + (
                    " (a signal of that name)" if verdict(claim[1], answers[claim]) == "holds: another kind" else "")
        else:
            found = answers[claim] if claim else []
            label = "not confirmed" + (f" (the port's script {where})" if where != "loads" else "") + (
                ": a behaviour or syntax finding" if not claim else ": Godot 4 takes a write of it (a compatibility "
                "setter)" if "compatibility setter" in found else ": ClassDB has the member")
        counts[label] += 1
        if len(examples[label]) < 3:
            examples[label].append((f"{claim[0]}.{claim[1]} " if claim else "") + f"({place})")
    print(f"\nevidence: the {len(flags)} {what}, by what Godot 4 itself confirms (the rest are the false flags)")
    for label, count in sorted(counts.items(), key=lambda kv: -kv[1]):
        print(f"  {count:4}  {label}" + "".join(f"\n        e.g. {e}" for e in examples[label]))
    return dict(counts)


def rewrite_table(ports: list[dict], home: str | None, evidence: EvidenceSource) -> None:
    """The rewrite of each port's Godot 3 tree, scored against the port as ../shared/devset/README.md says
    (units whose name is defined twice in a file are left out: the scoring reads them as one)."""
    import rewrite_scoring as scoring
    from rewrite import migrate_tree

    judge = load_judge("evidence", home=home)
    rows, everything = [], []
    for port in ports:
        out = cache_root() / "ports-rewrite" / port["name"]
        counts = migrate_tree(port["root3"], out, home, judge, evidence)
        row = {"demo": port["name"], "functions": [
            {"path": u.path, "gd4_path": port["pairs"][u.path], "function": u.function, "status": u.status}
            for u in port["truth"] if u.status in ("changed", "unchanged") and "<dup>" not in u.function]}
        scores = scoring.score_demo(row, port["root3"], port["root4"], out)
        if os.environ.get("GD_ASSETS_LIST_WORSE"):
            for s in scores:
                if s.status == "changed" and s.d_rt > s.d_at:
                    print(f"worse {port['name']} {s.path}::{s.function} {s.d_at} -> {s.d_rt}", file=sys.stderr)
                if s.status == "unchanged" and s.false_rewrite:
                    print(f"false rewrite {port['name']} {s.label}", file=sys.stderr)
        everything.extend(scores)
        rows.append((port["name"], scoring.summary(scores)))
        print(f"{port['name']}: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())), file=sys.stderr)
    if len(ports) > 1:
        rows.append(("pooled", scoring.summary(everything)))
    print("\nrewrite of the fragments judged migration_needed, scored against each port")
    scoring.print_table(rows + [("converter (README, demos)", scoring.CONVERTER)])


def false_flag_reasons(units: list[Unit], judgements: dict, top: int = 10) -> list[tuple[str, int, str]]:
    """The most frequent findings of flagged fragments in `units`, each with one example."""
    counts: dict[str, int] = defaultdict(int)
    example: dict[str, str] = {}
    for unit in units:
        for item in unit.items:
            if judgements[item.key].migration_needed:
                for part in reasons(judgements[item.key].rationale):
                    counts[part] += 1
                    example.setdefault(part, f"{unit.label} L{item.start_line}")
    return [(r, n, example[r]) for r, n in sorted(counts.items(), key=lambda kv: -kv[1])[:top]]


# ------------------------------------------------------------------------------------------ main


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--home", default=os.environ.get("GD_ASSETS_HOME"),
                        help="GD_ASSETS_HOME with corpora.duckdb (default $GD_ASSETS_HOME)")
    parser.add_argument("--port", action="append", metavar="NAME:GITDIR:GD3_REF:GD4_REF",
                        help=f"a port to score (repeatable; default {DEFAULT_PORTS[0]})")
    parser.add_argument("--verbose", action="store_true", help="list the evidence judge's misses and false flags")
    parser.add_argument("--rewrite", action="store_true",
                        help="also score the migration rewrite against each port (eval/rewrite.py's scoring)")
    parser.add_argument("--max-lines", type=int, default=12, help="lines of text shown per fragment")
    parser.add_argument("--json", default=None, metavar="PATH", help="also write the figures as JSON")
    parser.add_argument("--godot", metavar="GODOT4", help="split the false flags by what this Godot 4 says of each "
                        "script of the port")
    args = parser.parse_args(argv)
    if args.home:
        os.environ["GD_ASSETS_HOME"] = args.home

    ports = [load_port(spec, args.home) for spec in args.port or DEFAULT_PORTS]
    items = [i for port in ports for i in port["items"]]
    evidence = EvidenceSource(args.home, cache_root(), retrieval=False)
    runs = [("baseline", "baseline", False), ("evidence (names)", "evidence", False), ("evidence", "evidence", True)]
    judgements_by = {}
    for label, judge_name, in_context in runs:
        started = time.monotonic()
        judgements_by[label] = run_judge(load_judge(judge_name, home=args.home), items, evidence, context=in_context)
        print(f"{label}: {time.monotonic() - started:.1f}s", file=sys.stderr)

    groups = [(p["name"], p["truth"], p["gd4_units"], p["gd4_items"]) for p in ports]
    if len(ports) > 1:
        groups.append(("pooled", *([x for p in ports for x in p[k]] for k in ("truth", "gd4_units", "gd4_items"))))
    out = {"ports": {p["name"]: {"refs": p["refs"], "counts": p["counts"]} for p in ports}, "scores": {}}
    for port in ports:
        refs = "; ".join(f"{side} {ref} {commit[:10]} config_version={cv}" for side, (ref, commit, cv)
                         in port["refs"].items())
        print(f"\n{port['name']}: {refs}\n  " + ", ".join(f"{k} {v}" for k, v in sorted(port["counts"].items())))
    for name, truth, gd4_units, gd4_items in groups:
        results = {label: score(truth, gd4_units, gd4_items, j) for label, j in judgements_by.items()}
        scored = sum(u.status in ("changed", "unchanged") for u in truth)
        print(f"\n== {name}: {scored} scored units; Godot 4: {len(gd4_units)} functions, {len(gd4_items)} fragments")
        print_table(results)
        out["scores"][name] = results
    truth, gd4_units = groups[-1][1], groups[-1][2]
    j = judgements_by["evidence"]
    false_unchanged = [u for u in truth if u.status == "unchanged" and flagged(u, j)]
    for title, units in (("unchanged", false_unchanged), ("Godot 4 code", gd4_units)):
        print(f"\nevidence: most frequent reasons of false flags on {title}")
        for reason, count, example in false_flag_reasons(units, j):
            print(f"  {count:4}  {reason}\n        e.g. {example}")
    if args.godot:
        out["split_by_godot"] = split_by_godot(ports, j, args.godot)
    if args.verbose:
        list_errors("evidence", truth, gd4_units, j, args.max_lines)
    if args.rewrite:
        rewrite_table(ports, args.home, evidence)
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
