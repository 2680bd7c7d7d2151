"""A click in the Dagster UI: how long until the work it asks for starts and ends, through the UI's
own GraphQL calls against `gd-assets dev` (its webserver and daemon) on an analysed project.

    GD_ASSETS_CORPUS_HOME=/path/to/built/corpus python bench/ui_click.py [--fragments 220] [--clicks 3]

Two clicks, each measured `--clicks` times on new fragments (a function added to the project, sliced):
- "Materialize" of one fragment's evidence partition (the UI's launchRun with its partition tag);
- a backfill of two new fragments' evidence and judgement (the UI's launchPartitionBackfill).
For each: seconds to the first step's start, and to the end (the run's, or the backfill's completion).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
from resume import write_project  # noqa: E402

LAUNCH_RUN = """
mutation ($params: ExecutionParams!) {
  launchRun(executionParams: $params) {
    __typename
    ... on LaunchRunSuccess { run { runId } }
    ... on PythonError { message }
    ... on RunConfigValidationInvalid { errors { message } }
  }
}"""
RUN = "query ($id: ID!) { runOrError(runId: $id) { ... on Run { status stepStats { startTime } } } }"
BACKFILL = """
mutation ($params: LaunchBackfillParams!) {
  launchPartitionBackfill(backfillParams: $params) {
    __typename ... on LaunchBackfillSuccess { backfillId } ... on PythonError { message }
  }
}"""
BACKFILL_STATUS = """
query ($id: String!) {
  partitionBackfillOrError(backfillId: $id) { ... on PartitionBackfill { status runs(limit: 10) { runId } } }
}"""
LOCATIONS = "{ workspaceOrError { ... on Workspace { locationEntries { loadStatus } } } }"
FINISHED_RUN = {"SUCCESS", "FAILURE", "CANCELED"}


class UI:
    def __init__(self, env: dict, log: Path):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        self.url, self.log = f"http://127.0.0.1:{port}/graphql", log
        self.process = subprocess.Popen([sys.executable, "-m", "gd_assets.cli", "dev", "--host", "127.0.0.1", "--port",
                                         str(port)], env=env, cwd=REPO, stdout=log.open("wb"), stderr=subprocess.STDOUT,
                                        start_new_session=True)

    def query(self, text: str, variables: dict | None = None) -> dict:
        body = json.dumps({"query": text, "variables": variables or {}}).encode()
        request = urllib.request.Request(self.url, data=body, headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=60) as response:
            answer = json.load(response)
        if answer.get("errors"):
            raise RuntimeError(answer["errors"])
        return answer["data"]

    def wait_loaded(self) -> float:
        started = time.perf_counter()
        while True:
            try:
                entries = self.query(LOCATIONS)["workspaceOrError"]["locationEntries"]
                if entries and all(e["loadStatus"] == "LOADED" for e in entries):
                    return time.perf_counter() - started
            except (urllib.error.URLError, ConnectionError, OSError):
                pass
            if self.process.poll() is not None:
                sys.exit(f"gd-assets dev exited:\n{self.log.read_text()[-3000:]}")
            time.sleep(0.5)

    def stop(self) -> None:
        if self.process.poll() is not None:
            return
        os.killpg(self.process.pid, signal.SIGINT)
        try:
            self.process.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)


def cli(env: dict, *args: str) -> str:
    return subprocess.run([sys.executable, "-m", "gd_assets.cli", *args], env=env, cwd=REPO, check=True,
                          capture_output=True, text=True).stdout


def new_fragments(env: dict, project: Path, count: int, tag: str) -> list[str]:
    """Add `count` functions to the project and slice it again; their fragment keys."""
    target = next(project.glob("*.gd"))
    names = [f"clicked_{tag}_{i}" for i in range(count)]
    target.write_text(target.read_text() + "".join(f"\nfunc {n}():\n\treturn {i}\n" for i, n in enumerate(names)))
    cli(env, "fragments", str(project), "--project", "bench")
    return [f"bench/{target.name}::{n}" for n in names]


def click_materialize(ui: UI, key: str) -> tuple[float, float]:
    params = {"selector": {"repositoryLocationName": "gd_assets", "repositoryName": "__repository__",
                           "pipelineName": "__ASSET_JOB", "assetSelection": [{"path": ["fragment_evidence"]}]},
              "executionMetadata": {"tags": [{"key": "dagster/partition", "value": key}]}}
    clicked = time.perf_counter()
    launched = ui.query(LAUNCH_RUN, {"params": params})["launchRun"]
    if launched["__typename"] != "LaunchRunSuccess":
        raise RuntimeError(launched)
    run_id, first = launched["run"]["runId"], None
    while True:
        run = ui.query(RUN, {"id": run_id})["runOrError"]
        if first is None and any(s["startTime"] for s in run["stepStats"]):
            first = time.perf_counter() - clicked
        if run["status"] in FINISHED_RUN:
            if run["status"] != "SUCCESS":
                raise RuntimeError(f"run {run_id} {run['status']}")
            return first or time.perf_counter() - clicked, time.perf_counter() - clicked
        time.sleep(0.1)


def click_backfill(ui: UI, keys: list[str]) -> tuple[float, float]:
    selection = [{"path": ["fragment_evidence"]}, {"path": ["fragment_judgement"]}]
    clicked = time.perf_counter()
    launched = ui.query(BACKFILL, {"params": {"partitionNames": keys, "assetSelection": selection}})
    backfill_id = launched["launchPartitionBackfill"]["backfillId"]
    first = None
    while True:
        backfill = ui.query(BACKFILL_STATUS, {"id": backfill_id})["partitionBackfillOrError"]
        if first is None:
            for run in backfill["runs"]:
                steps = ui.query(RUN, {"id": run["runId"]})["runOrError"]["stepStats"]
                if any(s["startTime"] for s in steps):
                    first = time.perf_counter() - clicked
        if backfill["status"] not in {"REQUESTED", "CANCELING", "FAILING"}:
            if backfill["status"] != "COMPLETED_SUCCESS":
                raise RuntimeError(f"backfill {backfill_id} {backfill['status']}")
            return first or time.perf_counter() - clicked, time.perf_counter() - clicked
        time.sleep(0.2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fragments", type=int, default=220)
    parser.add_argument("--clicks", type=int, default=3)
    args = parser.parse_args()
    if not os.environ.get("GD_ASSETS_CORPUS_HOME"):
        sys.exit("set GD_ASSETS_CORPUS_HOME to a data directory with a built corpus (gd-assets corpus build)")
    with tempfile.TemporaryDirectory(prefix="gd-bench-ui-") as scratch:
        root = Path(scratch)
        project = root / "project"
        write_project(project, args.fragments)
        env = {k: v for k, v in os.environ.items() if k != "DAGSTER_HOME"}
        env["GD_ASSETS_HOME"] = str(root / "home")
        cli(env, "analyze", str(project), "--project", "bench")
        ui = UI(env, root / "dev.log")
        try:
            print(f"UI loaded in {ui.wait_loaded():.1f} s", flush=True)
            for i in range(args.clicks):
                [key] = new_fragments(env, project, 1, f"m{i}")
                start, end = click_materialize(ui, key)
                print(f"materialize one partition: first step started {start:5.1f} s, run done {end:5.1f} s", flush=True)
            for i in range(args.clicks):
                keys = new_fragments(env, project, 2, f"b{i}")
                start, end = click_backfill(ui, keys)
                print(f"backfill 2 fragments x 2 assets: first step started {start:5.1f} s, done {end:5.1f} s",
                      flush=True)
        finally:
            ui.stop()


if __name__ == "__main__":
    main()
