"""Resume after a kill at about 50% against a full run, and 1 vs 2 concurrent projects.

    GD_ASSETS_CORPUS_HOME=/path/to/built/corpus python bench/resume.py [--fragments 400]

Each measurement runs `gd-assets analyze` in a subprocess in a scratch data directory (as a user
would); the kill is a SIGKILL once half of the judgements are recorded, then `gd-assets resume`.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import dagster as dg

REPO = Path(__file__).resolve().parents[1]


def write_project(folder: Path, fragments: int) -> None:
    """A Godot 3 project of `fragments` function fragments (plus one `extends` per file)."""
    folder.mkdir(parents=True)
    per_file = 10
    for f in range(max(1, fragments // (per_file + 1))):
        lines = ["extends KinematicBody2D", ""]
        for i in range(per_file):
            lines += [f"func step_{i}(delta):", f"\tvar v = Vector2({i}, {f})", "\tv = move_and_slide(v)",
                      "\tposition += v * delta", ""]
        (folder / f"actor_{f}.gd").write_text("\n".join(lines))


def cli(home: Path, *args: str, wait: bool = True):
    env = {k: v for k, v in os.environ.items() if k != "DAGSTER_HOME"}
    env["GD_ASSETS_HOME"] = str(home)
    command = [sys.executable, "-m", "gd_assets.cli", *args]
    if wait:
        return subprocess.run(command, cwd=REPO, env=env, check=True, capture_output=True, text=True)
    return subprocess.Popen(command, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)


def judged(home: Path) -> int:
    os.environ["GD_ASSETS_HOME"] = str(home)
    os.environ.pop("DAGSTER_HOME", None)
    from gd_assets.home import dagster_instance

    instance = dagster_instance()
    return len(instance.fetch_materializations(dg.AssetKey("fragment_judgement"), limit=10_000).records)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--fragments", type=int, default=400)
    args = parser.parse_args()
    if not os.environ.get("GD_ASSETS_CORPUS_HOME"):
        sys.exit("set GD_ASSETS_CORPUS_HOME to a data directory with a built corpus (gd-assets corpus build)")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for name in ("a", "b", "full", "killed"):
            write_project(root / "src" / name, args.fragments)
        total = (args.fragments // 11) * 11

        started = time.perf_counter()
        cli(root / "home-full", "analyze", str(root / "src" / "full"))
        full = time.perf_counter() - started
        print(f"full run, {total} fragments            {full:8.2f} s  {total / full:6.1f} fragments/s")

        home = root / "home-killed"
        home.mkdir()
        judged(home)  # create the instance before the run starts
        proc = cli(home, "analyze", str(root / "src" / "killed"), wait=False)
        while judged(home) < total // 2 and proc.poll() is None:
            time.sleep(0.05)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        done = judged(home)
        started = time.perf_counter()
        cli(home, "resume", "killed")
        resume = time.perf_counter() - started
        print(f"killed with {done}/{total} judged; resume {resume:8.2f} s  "
              f"({total - done} fragments left)")
        print(f"resume / full run                      {resume / full:8.2f}")

        started = time.perf_counter()
        shared = root / "home-ab"  # one data directory: both share the DuckDB files and the instance
        shared.mkdir()
        judged(shared)
        procs = [cli(shared, "analyze", str(root / "src" / name), wait=False) for name in ("a", "b")]
        for proc in procs:
            if proc.wait() != 0:
                sys.exit("a concurrent analysis failed")
        both = time.perf_counter() - started
        print(f"2 projects at once, {2 * total} fragments   {both:8.2f} s  {2 * total / both:6.1f} fragments/s")
        print(f"throughput 2 concurrent / 1 project    {(2 * total / both) / (total / full):8.2f}")


if __name__ == "__main__":
    main()
