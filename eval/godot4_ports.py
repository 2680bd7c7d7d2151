"""What Godot 4.6.3 says about real Godot 3 -> 4 ports: our migrated copy, Godot's `--convert-3to4` and the
human port, side by side (scripts failing, scenes failing to load, properties dropped, input actions
without a key, config_version), per project and pooled, with the code `gd-assets verify` runs.

Per port: the Godot 3 tree and the human port are extracted from a local git mirror with their binary
files (`trees.extract`; blobs of 4 MiB and more are absent from mirrors); ours is `gd-assets migrate`
run for real (a data home under the cache, `GD_ASSETS_CORPUS_HOME` = `--home`); the converter's is
`godot --convert-3to4` on a copy (cached by commit). All three are verified with `gd_assets.core.verify`.
Nothing is written into the repository.

Run: python eval/godot4_ports.py --home CORPUS_HOME --godot GODOT4 [--port NAME ...] [--json out.json] [--verbose]
Errors of missing binary files (images, sounds, models the mirror lacks) are counted apart.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

from trees import cache_root, extract

from gd_assets.core import verify

MIRRORS = "/work/.mirror"
# name: (mirror, Godot 3 commit, the human port's commit, project folder)
PORTS = {
    "tps-demo": ("godotengine+tps-demo", "0abde438b276", "f41444c0bf", ""),
    "pixelorama": ("Orama-Interactive+Pixelorama", "b2c157fa07", "91bfef16b3", ""),
    "lorien": ("mbrlabs+Lorien", "2f4f18992567", "238af68c7a2a", "lorien"),
    "escoria": ("godot-escoria+escoria-demo-game", "0b7193c38bf7", "c17c019a5eaa", ""),
    "material-maker": ("RodZill4+material-maker", "112a08245294", "1c5bfcc120c0", ""),
    "retrohub": ("retrohub-org+retrohub", "61d8ca43b43c", "5339f568b300", ""),
    "arrow": ("mhgolkar+Arrow", "1f9e838eaa66", "5b963114cbbf", ""),
    "shotcaller": ("spicylobstergames+shotcaller-godot", "267aa0a7ffba", "1effa42543c5", "prototype"),
    "sonic-worlds-next": ("Techokami+SonicWorldsNext", "d5ddabb731fe", "684912497ea3", "Source"),
}
COLUMNS = ("ours", "converter", "port")


def tree(mirror: str, ref: str, subpath: str) -> Path:
    """The project folder of a commit, binaries included (their own cache beside the plain trees)."""
    saved = os.environ.get("GD_EVAL_CACHE")
    os.environ["GD_EVAL_CACHE"] = str(cache_root().with_name(cache_root().name + "-full"))
    try:
        return extract(f"{MIRRORS}/{mirror}/repo", ref, subpath, skip_binaries=False)
    finally:
        if saved is None:
            os.environ.pop("GD_EVAL_CACHE")
        else:
            os.environ["GD_EVAL_CACHE"] = saved


def converted(godot: verify.Godot, name: str, source: Path, commit: str) -> Path:
    """`--convert-3to4` of a copy of `source`, cached by commit."""
    out = cache_root() / "converted" / f"{name}-{commit}"
    if (out / ".converted").exists():
        return out
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(source, out, ignore=shutil.ignore_patterns(".godot", ".git"))
    with tempfile.TemporaryDirectory() as home:
        status, text = godot.run(["--path", str(out), "--convert-3to4"], Path(home), 1800)
    if status != 0:
        print(f"warning: {name}: --convert-3to4 exited with {status}: {text.strip().splitlines()[-1:]}",
              file=sys.stderr)
    (out / ".converted").write_text(commit + "\n")
    return out


def ours(name: str, source: Path, corpus_home: str, label: str) -> Path:
    """`gd-assets migrate` of the Godot 3 tree into a data home of its own (one per `label`, so two
    versions of the product can be compared); returns the migrated copy."""
    data = cache_root() / f"ours-home-{label}"
    out = cache_root() / "ours" / label / name
    env = dict(os.environ, GD_ASSETS_HOME=str(data), GD_ASSETS_CORPUS_HOME=corpus_home)
    env.pop("DAGSTER_HOME", None)
    done = subprocess.run([sys.executable, "-m", "gd_assets.cli", "migrate", str(source), "--project", name,
                           "--out", str(out), "--json"], env=env, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"{name}: gd-assets migrate failed:\n{done.stderr[-3000:]}")
    facts = json.loads(done.stdout)
    print(f"{name}: migrated: {facts['files_changed']} files changed, {len(facts['edits'])} edits, "
          f"{len(facts['manual'])} manual items", file=sys.stderr)
    return out


def figures(report: verify.Report) -> dict:
    f = report.figures()
    f["node_properties_dropped"] = sum(1 for p in report.problems if p.kind == "property"
                                       and not p.property.startswith("["))
    f["resource_properties_dropped"] = f["properties_dropped"] - f["node_properties_dropped"]
    return f


ROWS = [("scripts failing", "scripts_failing", "scripts"), ("scenes failing to load", "scenes_failing", "scenes"),
        ("node properties dropped", "node_properties_dropped", None),
        ("resource properties dropped", "resource_properties_dropped", None),
        ("input actions without a key", "input_actions_without_key", "input_actions"),
        ("missing binary assets (not counted)", "missing_assets", None)]


def print_table(results: dict[str, dict[str, dict]]) -> None:
    pooled: dict[str, Counter] = {c: Counter() for c in COLUMNS}
    for name, cols in results.items():
        print(f"\n{name}  (config_version: " + ", ".join(f"{c} {cols[c]['config_version']}" for c in COLUMNS) + ")")
        for label, key, total in ROWS:
            cells = []
            for c in COLUMNS:
                f = cols[c]
                pooled[c][key] += f[key]
                if total:
                    pooled[c][total] += f[total]
                cells.append(f"{f[key]}/{f[total]}" if total else str(f[key]))
            print(f"  {label:<38}" + "".join(f"{cell:>14}" for cell in cells))
    print("\npooled" + " " * 34 + "".join(f"{c:>14}" for c in COLUMNS))
    for label, key, total in ROWS:
        cells = [f"{pooled[c][key]}/{pooled[c][total]}" if total else str(pooled[c][key]) for c in COLUMNS]
        print(f"  {label:<38}" + "".join(f"{cell:>14}" for cell in cells))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--home", required=True, help="a data home holding the built corpus (corpora.duckdb, index/)")
    parser.add_argument("--godot", help="a Godot 4 executable (default: as `gd-assets verify` finds one)")
    parser.add_argument("--port", action="append", choices=sorted(PORTS), help="only these ports (repeatable)")
    parser.add_argument("--json", type=Path, help="write every figure and problem here")
    parser.add_argument("--skip", action="append", default=[], choices=COLUMNS, help="leave a column out")
    parser.add_argument("--label", default="current", help="names our data home and copies (compare versions)")
    args = parser.parse_args(argv)
    godot = verify.find_godot(args.godot)
    results: dict[str, dict[str, dict]] = {}
    problems: dict[str, dict[str, list]] = {}
    for name in args.port or PORTS:
        mirror, ref3, ref4, sub = PORTS[name]
        gd3, gd4 = tree(mirror, ref3, sub), tree(mirror, ref4, sub)
        results[name], problems[name] = {}, {}
        for column in COLUMNS:
            if column in args.skip:
                results[name][column] = Counter()
                continue
            folder = ours(name, gd3, args.home, args.label) if column == "ours" else \
                converted(godot, name, gd3, ref3) if column == "converter" else gd4
            report = verify.verify(folder, godot)
            results[name][column] = figures(report)
            problems[name][column] = [vars(p) for p in report.problems] + [
                {"path": p, "kind": "failing", "message": e} for p, e in report.failing.items()]
            print(f"{name} {column}: {results[name][column]}", file=sys.stderr)
    print_table(results)
    if args.json:
        args.json.write_text(json.dumps({"figures": results, "problems": problems}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
