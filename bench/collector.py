"""What Python's cycle collector costs `gd-assets analyze`, with and without `gd_assets.core.heap`.

    GD_ASSETS_CORPUS_HOME=/path/to/built/corpus python bench/collector.py [PROJECT] [--repeat 3]

Each pair analyses PROJECT (default: the bundled example) from nothing, each run in a process and a
data home of its own: once as shipped (imports with the collector held, then the modules, the API
surface once read and what is alive at exit frozen out of later collections), once with `heap.hold`,
`heap.settle` and `heap.before_exit` doing nothing. The two alternate, so a machine whose speed drifts drifts for
both. Printed: the command's wall time, the seconds its collections took until `main` returned (the
last collection at exit is in the wall time only), and the verdict, which must be the same.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

# Runs `gd-assets analyze` in this process, timing every collection; `off` turns the heap's calls into no-ops.
COMMAND = """
import gc, json, sys, time
spent = [0.0, 0]
began = [0.0]
def timed(phase, info):
    if phase == "start":
        began[0] = time.perf_counter()
    else:
        spent[0] += time.perf_counter() - began[0]
        spent[1] += 1
gc.callbacks.append(timed)
if sys.argv[1] == "off":
    from gd_assets.core import heap
    heap.hold = heap.settle = heap.before_exit = lambda *args, **kwargs: None

try:
    from gd_assets.__main__ import main as entry
    rc = entry(["analyze", sys.argv[2], "--project", "bench", "--json"])
finally:
    print(json.dumps({"gc_s": spent[0], "collections": spent[1]}), file=sys.stderr)
sys.exit(rc)
"""


def analyze(project: str, mode: str, env: dict) -> dict:
    home = tempfile.mkdtemp(prefix=f"gd-collector-{mode}-")
    began = time.monotonic()
    done = subprocess.run([sys.executable, "-c", COMMAND, mode, project], capture_output=True, text=True,
                          env={**env, "GD_ASSETS_HOME": home}, cwd=REPO)
    wall = time.monotonic() - began
    if done.returncode:
        sys.exit(f"analyze ({mode}) failed:\n{done.stderr[-3000:]}")
    collected = json.loads(done.stderr.strip().splitlines()[-1])
    verdict = json.loads(done.stdout)
    return {"wall": wall, **collected, "verdict": (verdict["verdict"], json.dumps(verdict["counts"], sort_keys=True))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("project", nargs="?", default=str(REPO / "examples" / "dodge-godot3"))
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "DAGSTER_HOME"} | {"GD_ASSETS_SERVER": "off"}
    env.setdefault("GD_ASSETS_CORPUS_HOME", str(REPO / "data"))
    runs: dict[str, list[dict]] = {"shipped": [], "off": []}
    for i in range(args.repeat):
        for mode in ("shipped", "off") if i % 2 == 0 else ("off", "shipped"):
            run = analyze(args.project, mode, env)
            runs[mode].append(run)
            print(f"{mode:8} {run['wall']:6.2f} s wall, collections {run['gc_s']:5.2f} s ({run['collections']}), "
                  f"verdict {run['verdict']}", flush=True)
    verdicts = {run["verdict"] for mode in runs.values() for run in mode}
    if len(verdicts) != 1:
        sys.exit(f"the verdicts differ: {verdicts}")
    for mode, done in runs.items():
        print(f"{mode:8} median {statistics.median(r['wall'] for r in done):6.2f} s wall, "
              f"{statistics.median(r['gc_s'] for r in done):5.2f} s in collections")
    print(f"shipped/off wall: {statistics.median(r['wall'] for r in runs['shipped']) / statistics.median(r['wall'] for r in runs['off']):.2f}")


if __name__ == "__main__":
    main()
