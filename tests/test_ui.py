"""The Dagster UI as the work screen: `gd-assets dev` on the analysed seed example, driven through GraphQL."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import REPO, fixture_path

from gd_assets import home, orchestrate, store

pytestmark = pytest.mark.slow

PROJECT_ASSETS = ["project_sources", "fragments", "fragment_evidence", "fragment_judgement", "project_verdict"]
CORPUS_ASSETS = ["corpus_sources", "docs_chunks", "api_mapping", "label_prototypes", "corpus_index"]
START_SECONDS = 180
STOP_SECONDS = 30
BACKFILL_SECONDS = 300
UNFINISHED = {"REQUESTED", "CANCELING", "FAILING"}

STOP_FUNCTION = "\nfunc stop():\n\thide()\n\t$CollisionShape2D.disabled = true\n"

ASSET_NODES = "{ assetNodes { assetKey { path } groupName } }"

LOCATIONS = """
{
  workspaceOrError {
    ... on Workspace {
      locationEntries {
        name
        loadStatus
        locationOrLoadError { __typename ... on PythonError { message } }
      }
    }
  }
}"""

PARTITIONS = """
query ($key: AssetKeyInput!) {
  assetNodeOrError(assetKey: $key) {
    __typename
    ... on AssetNode {
      partitionStats { numMaterialized numPartitions numFailed }
      assetPartitionStatuses {
        __typename
        ... on DefaultPartitionStatuses { materializedPartitions unmaterializedPartitions failedPartitions }
      }
    }
  }
}"""

LATEST = """
query ($key: AssetKeyInput!, $partitions: [String!]) {
  assetNodeOrError(assetKey: $key) {
    ... on AssetNode {
      latestMaterializationByPartition(partitions: $partitions) {
        partition
        metadataEntries {
          label
          ... on TextMetadataEntry { text }
          ... on MarkdownMetadataEntry { mdStr }
          ... on IntMetadataEntry { intValue }
        }
      }
    }
  }
}"""

BACKFILL = """
mutation ($params: LaunchBackfillParams!) {
  launchPartitionBackfill(backfillParams: $params) {
    __typename
    ... on LaunchBackfillSuccess { backfillId }
    ... on PythonError { message }
    ... on PartitionKeysNotFoundError { message }
    ... on InvalidSubsetError { message }
  }
}"""

BACKFILL_STATUS = """
query ($id: String!) {
  partitionBackfillOrError(backfillId: $id) {
    __typename
    ... on PartitionBackfill { id status partitionNames assetSelection { path } }
  }
}"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _own_group_and_default_sigint() -> None:
    # Its own process group, so every process it starts can be found and stopped afterwards; and
    # SIGINT back to default: started from a non-interactive shell it would inherit SIGINT ignored.
    os.setpgid(0, 0)
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class DagsterUI:
    """`gd-assets dev` (the webserver and the daemon on this data directory), talking GraphQL over HTTP."""

    def __init__(self, port: int, log: Path):
        self.url = f"http://127.0.0.1:{port}/graphql"
        self.log = log
        command = [str(Path(sys.executable).with_name("gd-assets")), "dev", "--host", "127.0.0.1", "--port", str(port)]
        with log.open("wb") as out:
            self.process = subprocess.Popen(command, cwd=REPO, env=dict(os.environ), stdout=out,
                                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                            preexec_fn=_own_group_and_default_sigint)

    def log_tail(self) -> str:
        return self.log.read_text(errors="replace")[-4000:]

    def query(self, text: str, variables: dict | None = None, timeout: float = 60) -> dict:
        body = json.dumps({"query": text, "variables": variables or {}}).encode()
        request = urllib.request.Request(self.url, data=body, headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=timeout) as response:
            answer = json.load(response)
        assert not answer.get("errors"), answer["errors"]
        return answer["data"]

    def wait_until_loaded(self, seconds: float) -> None:
        """Poll until the server answers and its code location has loaded; fail fast on a load error."""
        deadline = time.monotonic() + seconds
        last = "no answer"
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                pytest.fail(f"the webserver exited with {self.process.returncode}:\n{self.log_tail()}")
            try:
                entries = self.query(LOCATIONS, timeout=10)["workspaceOrError"]["locationEntries"]
            except (urllib.error.URLError, ConnectionError, TimeoutError) as error:
                last = repr(error)
            else:
                for entry in entries:
                    loaded = entry["locationOrLoadError"] or {}
                    if entry["loadStatus"] == "LOADED" and loaded.get("__typename") == "PythonError":
                        pytest.fail(f"code location {entry['name']} failed to load: {loaded['message']}")
                if entries and all(e["loadStatus"] == "LOADED" for e in entries):
                    return
                last = f"locations: {[(e['name'], e['loadStatus']) for e in entries]}"
            time.sleep(1)
        pytest.fail(f"the webserver was not ready within {seconds}s ({last}):\n{self.log_tail()}")

    def group_alive(self) -> bool:
        try:
            os.killpg(self.process.pid, 0)
        except ProcessLookupError:
            return False
        return True

    def stop(self) -> None:
        """SIGINT, then SIGKILL after a bounded wait; then whatever it started, so nothing is left running."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=STOP_SECONDS)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=STOP_SECONDS)
        deadline = time.monotonic() + STOP_SECONDS
        while self.group_alive() and time.monotonic() < deadline:
            time.sleep(0.5)
        if self.group_alive():
            os.killpg(self.process.pid, signal.SIGKILL)


@pytest.fixture
def ui(analysed, tmp_path) -> Iterator[DagsterUI]:
    server = DagsterUI(free_port(), tmp_path / "dagster-dev.log")
    try:
        yield server
    finally:
        server.stop()
    assert server.process.returncode is not None
    assert not server.group_alive(), "a process started by the UI is still running"


def partition_statuses(server: DagsterUI, asset: str) -> dict:
    node = server.query(PARTITIONS, {"key": {"path": [asset]}})["assetNodeOrError"]
    assert node["__typename"] == "AssetNode", node
    return {"stats": node["partitionStats"], **node["assetPartitionStatuses"]}


def latest_metadata(server: DagsterUI, asset: str, partition: str) -> dict[str, dict]:
    node = server.query(LATEST, {"key": {"path": [asset]}, "partitions": [partition]})["assetNodeOrError"]
    [event] = node["latestMaterializationByPartition"]
    assert event is not None and event["partition"] == partition, node
    return {entry["label"]: entry for entry in event["metadataEntries"]}


@pytest.fixture
def analysed(analysis_home, deployment, monkeypatch) -> list[str]:
    """The seed example analysed end to end in the private data directory; returns its fragment keys."""
    monkeypatch.setenv("DAGSTER_HOME", str(home.ensure_dagster_home()))
    project = orchestrate.analyze(str(fixture_path("mini_dodge.dump.txt")), None)
    assert project == "mini-dodge"
    return store.project_fragments(project)["key"].to_list()


def add_a_function(ui: DagsterUI, tmp_path: Path, analysed: list[str]) -> str:
    """Re-slice the seed example with one more function; returns the new, unmaterialised fragment key."""
    edited = tmp_path / "mini_dodge.dump.txt"
    text = fixture_path("mini_dodge.dump.txt").read_text()
    edited.write_text(text.replace("\n# player.tscn\n", STOP_FUNCTION + "\n# player.tscn\n"))
    assert orchestrate.ingest_and_slice(str(edited), None) == "mini-dodge"
    new_key = "mini-dodge/player.gd::stop"
    judged = partition_statuses(ui, "fragment_judgement")
    assert judged["stats"]["numPartitions"] == len(analysed) + 1
    assert judged["unmaterializedPartitions"] == [new_key]
    return new_key


def launch_backfill(ui: DagsterUI, keys: list[str]) -> dict:
    """The work screen's "backfill missing": evidence then judgement for `keys`; returns the backfill."""
    selection = [{"path": ["fragment_evidence"]}, {"path": ["fragment_judgement"]}]
    launched = ui.query(BACKFILL, {"params": {"partitionNames": keys, "assetSelection": selection}})
    result = launched["launchPartitionBackfill"]
    assert result["__typename"] == "LaunchBackfillSuccess", result
    assert result["backfillId"]
    backfill = ui.query(BACKFILL_STATUS, {"id": result["backfillId"]})["partitionBackfillOrError"]
    assert backfill["__typename"] == "PartitionBackfill", backfill
    return backfill


def test_ui_shows_partitions_debug_view_and_backfills_missing_fragments(analysed, ui, tmp_path):
    ui.wait_until_loaded(START_SECONDS)
    nodes = ui.query(ASSET_NODES)["assetNodes"]
    groups = {"/".join(n["assetKey"]["path"]): n["groupName"] for n in nodes}
    assert set(PROJECT_ASSETS + CORPUS_ASSETS) <= set(groups), sorted(groups)
    assert {groups[a] for a in PROJECT_ASSETS} == {"projects"}
    assert {groups[a] for a in CORPUS_ASSETS} == {"corpora"}

    # every fragment of the seed example is judged, none failed
    judged = partition_statuses(ui, "fragment_judgement")
    assert len(analysed) == 11
    assert set(analysed) <= set(judged["materializedPartitions"])
    assert judged["stats"]["numMaterialized"] == judged["stats"]["numPartitions"] == len(analysed)
    assert not judged["failedPartitions"]

    # the debug view of a fragment: tracking apart from what was searched
    key = "mini-dodge/player.gd::_process"
    evidence = latest_metadata(ui, "fragment_evidence", key)
    assert "player.gd" in evidence["tracking (not searched)"]["text"]
    assert "func _process(delta):" in evidence["fragment"]["mdStr"]
    assert evidence["fragment"]["mdStr"].startswith("```")
    cues = evidence["cues (retriever input)"]["mdStr"]
    assert "Input.is_action_pressed" in cues and "player.gd" not in cues
    assert "| rank | table |" in evidence["candidates"]["mdStr"]
    assert evidence["candidate_count"]["intValue"] > 0
    judgement = latest_metadata(ui, "fragment_judgement", key)
    assert judgement["signal"]["text"] == "godot4"

    # the project changes: a new fragment partition appears with nothing materialised; backfill it
    new_key = add_a_function(ui, tmp_path, analysed)
    backfill = launch_backfill(ui, [new_key])
    assert backfill["partitionNames"] == [new_key]
    assert sorted(a["path"][0] for a in backfill["assetSelection"]) == ["fragment_evidence", "fragment_judgement"]


def test_backfill_from_the_ui_judges_the_new_fragment(analysed, ui, tmp_path):
    ui.wait_until_loaded(START_SECONDS)
    new_key = add_a_function(ui, tmp_path, analysed)
    backfill_id = launch_backfill(ui, [new_key])["id"]

    # the daemon of `gd-assets dev` runs it: the new fragment gets its evidence, then its judgement
    deadline = time.monotonic() + BACKFILL_SECONDS
    status = "REQUESTED"
    while status in UNFINISHED and time.monotonic() < deadline:
        time.sleep(2)
        status = ui.query(BACKFILL_STATUS, {"id": backfill_id})["partitionBackfillOrError"]["status"]
    assert status == "COMPLETED_SUCCESS", f"backfill {status}:\n{ui.log_tail()}"
    judged = partition_statuses(ui, "fragment_judgement")
    assert judged["failedPartitions"] == []
    assert judged["stats"]["numMaterialized"] == len(analysed) + 1, f"backfill unfinished:\n{ui.log_tail()}"
    judgement = latest_metadata(ui, "fragment_judgement", new_key)
    assert judgement["signal"]["text"] in {"godot3", "godot4", "neutral"}
    assert "func stop():" in judgement["fragment"]["mdStr"]
