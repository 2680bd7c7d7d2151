"""Score the migration rewrite on the development set, beside Godot's converter (see ../shared/devset/README.md).

Per demo: the Godot 3 tree is sliced, read in its project context, judged (the evidence judge, cues
only), and every fragment judged migration_needed is rewritten with the pipeline's own rewrite; the
edits are applied to the files as `project_migration` does, and the result is scored against the
human port. `--ungated` rewrites every fragment (what the rules alone would do). `--compile` also loads every
script of each migrated demo in Godot 4.6.3 (eval/compile_check.py) beside the untouched Godot 3
demo and, with `--converted DIR` (demos converted by `godot --convert-3to4`, one folder per demo
name), beside the converter's output.
Run: python eval/rewrite.py --home <folder with corpora.duckdb> [--out DIR] [--verbose] [--compile]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from collections import Counter
from pathlib import Path

import rewrite_scoring as scoring
from judging import EvidenceSource, Item, attach_scopes, items_of_file, load_judge, run_judge
from trees import DEFAULT_MIRROR, cache_root, extract

from gd_assets.core.migration import migrate_file
from gd_assets.core.rewrite import rewrite_fragment
from gd_assets.core.rewrite.rules import load_rules

_KINDS = {".gd": "gdscript", ".tscn": "scene", ".tres": "resource", ".godot": "project"}


def project_items(root: Path, prefix: str) -> tuple[dict[str, str], list[Item]]:
    """Texts and fragment items of every file the rewrite reads."""
    texts, items = {}, []
    for file in sorted(root.rglob("*")):
        kind = _KINDS.get(file.suffix)
        if kind is None or not file.is_file():
            continue
        rel = file.relative_to(root).as_posix()
        text = file.read_bytes().decode("utf-8", "replace").replace("\r\n", "\n").replace("\r", "\n")
        texts[rel] = text
        items.extend(items_of_file(prefix, rel, kind, text))
    return texts, items


def migrate_tree(root: Path, out: Path, home: str, judge, evidence, gated: bool = True,
                 left: dict | None = None) -> dict:
    """Rewrite the demo at `root` into `out`; returns counts (edits, manual items by kind, fragments).
    `left`, when given, gets (path, unit name) -> the kinds of the manual items in that unit."""
    texts, items = project_items(root, "dev")
    attach_scopes(root, items, home)
    rules = load_rules(str(Path(home) / "corpora.duckdb"))
    judgements = run_judge(judge, items, evidence) if gated else {}
    per_file: dict[str, list] = {}
    manual: dict[str, list[str]] = {}
    rewritten = 0
    for item in items:
        j = judgements.get(item.key)
        if gated and not (j is not None and j.migration_needed):
            continue
        result = rewrite_fragment(item.kind, item.text, item.start_line, item.file_kind, item.scope, rules)
        rewritten += bool(result.edits)
        per_file.setdefault(item.path, []).extend(result.edits)
        manual.setdefault(item.path, []).extend(m.kind for m in result.manual)
        if left is not None and result.manual:
            units = scoring.unit_names(texts[item.path])
            for m in result.manual:
                left.setdefault((item.path, units[m.start_line - 1]), []).append(m.kind)
    counts: Counter = Counter()
    for path, text in texts.items():
        migrated = migrate_file(path, text, per_file.get(path, []), manual.get(path, []))
        target = out / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(migrated.new)
        counts["edits"] += migrated.edits
        counts.update({f"manual:{k}": v for k, v in migrated.manual.items()})
        if migrated.problem:
            print(f"warning: {path}: {migrated.problem}", file=sys.stderr)
    counts["fragments rewritten"] = rewritten
    return dict(counts)


def full_tree(mirror: str, ref: str, subpath: str) -> Path:
    """A demo with its binary files (images, sounds): its own cache folder, since `extract` skips them by default."""
    saved = os.environ.get("GD_EVAL_CACHE")
    os.environ["GD_EVAL_CACHE"] = str(cache_root().with_name(cache_root().name + "-full"))
    try:
        return extract(mirror, ref, subpath, skip_binaries=False)
    finally:
        if saved is None:
            os.environ.pop("GD_EVAL_CACHE")
        else:
            os.environ["GD_EVAL_CACHE"] = saved


def compile_table(demos: list[dict], mirror: str, rewritten: Path, converted: str | None, godot_root: str) -> None:
    """Share of scripts Godot 4 fails to load: the Godot 3 demos, ours, and the converter's when given."""
    from compile_check import check_projects

    columns: dict[str, list[Path]] = {"Godot 3 as is": [], "our rewrite": []}
    if converted:
        columns["--convert-3to4"] = []
    scratch = cache_root() / "compile"
    for demo in demos:
        original = full_tree(mirror, demo["gd3"]["commit"], demo["gd3"]["subpath"])
        ours = scratch / demo["demo"]
        shutil.rmtree(ours, ignore_errors=True)
        shutil.copytree(original, ours)
        shutil.copytree(rewritten / demo["demo"], ours, dirs_exist_ok=True)
        columns["Godot 3 as is"].append(original)
        columns["our rewrite"].append(ours)
        if converted:
            columns["--convert-3to4"].append(Path(converted) / demo["demo"].split("/")[-1])
    print("\nscripts that fail to load in Godot 4.6.3 (parse or compile errors):")
    for name, dirs in columns.items():
        results = check_projects(dirs, Path(godot_root))
        failing = sum(1 for files in results.values() for error in files.values() if error)
        total = sum(len(files) for files in results.values())
        print(f"  {name:<16} {failing:>3}/{total:<3} ({100.0 * failing / max(total, 1):.1f}%)   " + ", ".join(
            f"{Path(p).name} {sum(1 for e in f.values() if e)}/{len(f)}" for p, f in results.items()))
        if name == "our rewrite":
            for project, files in results.items():
                for path, error in files.items():
                    if error:
                        print(f"      {Path(project).name}/{path}: {error[:150]}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mirror", default=DEFAULT_MIRROR, help="git dir of godot-demo-projects")
    parser.add_argument("--home", default=os.environ.get("GD_ASSETS_HOME"),
                        help="data home holding corpora.duckdb (default: $GD_ASSETS_HOME)")
    parser.add_argument("--truth", default=str(scoring.DEFAULT_TRUTH), help="demo_migration_truth.json")
    parser.add_argument("--out", default=None, help="where the rewritten demos go (default: the eval cache)")
    parser.add_argument("--ungated", action="store_true", help="rewrite every fragment, not only flagged ones")
    parser.add_argument("--verbose", action="store_true", help="list the worse units and the false rewrites")
    parser.add_argument("--json", default=None, metavar="PATH", help="also write the figures as JSON")
    parser.add_argument("--compile", action="store_true", help="also load every migrated script in Godot 4")
    parser.add_argument("--converted", default=None, help="folder of the demos converted by --convert-3to4")
    parser.add_argument("--godot-root", default=os.environ.get("GODOT_SID_ROOT", "/tmp/godot-sid"),
                        help="the debootstrap root holding Godot 4 (see ../shared/devset/README.md)")
    args = parser.parse_args(argv)
    if not args.home or not (Path(args.home) / "corpora.duckdb").exists():
        parser.error("--home must hold corpora.duckdb (build it with `gd-assets corpus build`)")
    truth = json.loads(Path(args.truth).read_text())
    out_root = Path(args.out) if args.out else cache_root() / "rewrite"
    judge = load_judge("evidence", home=args.home)
    evidence = EvidenceSource(args.home, cache_root(), retrieval=False)
    scores, counts, left = [], Counter(), {}
    for demo in truth["demos"]:
        gd3 = extract(args.mirror, demo["gd3"]["commit"], demo["gd3"]["subpath"])
        gd4 = extract(args.mirror, demo["gd4"]["commit"], demo["gd4"]["subpath"])
        out = out_root / demo["demo"]
        found: dict = {}
        counts.update(migrate_tree(gd3, out, args.home, judge, evidence, gated=not args.ungated, left=found))
        demo_scores = scoring.score_demo(demo, gd3, gd4, out)
        scores.extend(demo_scores)
        changed = {(s.path, s.function) for s in demo_scores if s.reproduction is not None}
        left.update({(demo["demo"], *k): v for k, v in found.items() if k in changed})
    ours = scoring.summary(scores)
    print(f"rewrite {'of every fragment' if args.ungated else 'of fragments judged migration_needed'}; "
          f"rewritten demos in {out_root}")
    scoring.print_table([("ours", ours), ("converter (README)", scoring.CONVERTER)])
    print("\n" + ", ".join(f"{k}: {v}" for k, v in sorted(counts.items())))
    kinds = Counter(k for v in left.values() for k in set(v))
    print(f"changed units with something left to people: {len(left)} of {ours['changed']} ("
          + ", ".join(f"{k} {n}" for k, n in kinds.most_common()) + ")")
    for (demo, path, unit), found in sorted(left.items()):
        print(f"  {demo}/{path}::{unit}: {', '.join(sorted(set(found)))}")
    if args.verbose:
        for s in sorted(scores, key=lambda s: (s.reproduction if s.reproduction is not None else 2)):
            if (s.reproduction is not None and s.d_rt > s.d_at) or s.false_rewrite:
                print(f"  {'worse' if s.reproduction is not None else 'false rewrite'}: "
                      f"{s.demo}/{s.path}::{s.function} d(A,T)={s.d_at} d(R,T)={s.d_rt}")
    if args.json:
        Path(args.json).write_text(json.dumps({"ours": ours, "counts": dict(counts)}, indent=2))
    if args.compile:
        compile_table(truth["demos"], args.mirror, out_root, args.converted, args.godot_root)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
