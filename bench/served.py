"""A command from nothing, on its own and through `gd-assets serve`: how much of it is start-up.

    GD_ASSETS_CORPUS_HOME=/path/to/built/corpus python bench/served.py [PROJECT ...] [--repeat 3]

For each project (default: the bundled example), in one new data home, `--repeat` pairs of `gd-assets
analyze` under a new project name each time (nothing of it analysed before): one run in its own process
(GD_ASSETS_SERVER=off), then one handed to the home's server. The pairs alternate, so a machine whose
speed drifts drifts for both. A cold command in a data home of its own is timed first, and so is the
server's start until it is ready. Every served verdict must equal the one computed in its own process.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
GD_ASSETS = str(Path(sys.executable).with_name("gd-assets"))


def analyze(source: str, name: str, env: dict) -> tuple[float, dict]:
    began = time.monotonic()
    done = subprocess.run([GD_ASSETS, "analyze", source, "--project", name, "--json"], env=env, capture_output=True,
                          text=True, cwd=REPO)
    seconds = time.monotonic() - began
    if done.returncode:
        sys.exit(f"analyze {source} failed:\n{done.stderr[-3000:]}")
    doc = json.loads(done.stdout)
    return seconds, {k: v for k, v in doc.items() if k not in ("project", "fragments")} | {
        "fragments": [{k: v for k, v in f.items() if k != "key"} for f in doc["fragments"]]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("projects", nargs="*", default=[str(REPO / "examples" / "dodge-godot3")])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="gd-served-"))
    base = {k: v for k, v in os.environ.items() if k not in ("DAGSTER_HOME", "GD_ASSETS_SERVER")}
    base.setdefault("GD_ASSETS_CORPUS_HOME", str(REPO / "data"))
    env = {**base, "GD_ASSETS_HOME": str(scratch / "home")}
    here = {**env, "GD_ASSETS_SERVER": "off"}

    cold, _ = analyze(args.projects[0], "cold", {**here, "GD_ASSETS_HOME": str(scratch / "cold")})
    print(f"cold: {Path(args.projects[0]).name} in a data home of its own: {cold:.2f} s")
    analyze(args.projects[0], "first", here)   # the home's instance and store exist from here on

    log = (scratch / "serve.log").open("w")
    began = time.monotonic()
    server = subprocess.Popen([GD_ASSETS, "serve"], env=env, stdout=log, stderr=subprocess.STDOUT, cwd=REPO)
    while "ready in" not in (scratch / "serve.log").read_text():
        if server.poll() is not None:
            sys.exit((scratch / "serve.log").read_text())
        time.sleep(0.05)
    print(f"server ready {time.monotonic() - began:.2f} s after `gd-assets serve`")
    try:
        for source in args.projects:
            times: dict[str, list[float]] = {"own process": [], "served": []}
            for i in range(args.repeat):
                alone, expected = analyze(source, f"here-{i}", here)
                served, got = analyze(source, f"served-{i}", env)
                if got != expected:
                    sys.exit(f"{source}: the served verdict differs from the one computed in its own process")
                times["own process"].append(alone)
                times["served"].append(served)
            fragments = len(expected["fragments"])
            print(f"{Path(source).name} ({fragments} fragments), same verdicts:")
            for how, seconds in times.items():
                print(f"  {how:<12} " + " ".join(f"{s:6.2f}" for s in seconds)
                      + f"  s  (median {statistics.median(seconds):.2f} s, {fragments / statistics.median(seconds):.0f}"
                      " fragments/s)")
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=60)
        log.close()


if __name__ == "__main__":
    main()
