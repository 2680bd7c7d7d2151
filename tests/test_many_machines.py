"""Many machines: fragment steps on two `gd-assets worker` processes (Dagster's Celery executor over a
Redis broker), each with its own home and no path in common with the others; the instance and the
DuckLake catalog in PostgreSQL, the lake's data, the corpus and the reports in S3 (moto's server)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import dagster as dg
import pytest
from conftest import REPO, cli_env, fixture_path, free_port, fresh_database
from dagster._core.events import DagsterEventType
from test_resume import write_project

from gd_assets.status import materialization_counts

pytestmark = pytest.mark.slow

BUCKET = "gd-shared"


@pytest.fixture
def s3_endpoint(tmp_path):
    """moto's S3 server on 127.0.0.1, with one bucket; its URL."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                            stdout=subprocess.DEVNULL, stderr=(tmp_path / "moto.log").open("w"))
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            urllib.request.urlopen(f"{url}/moto-api/", timeout=1).close()
            break
        except OSError:
            assert proc.poll() is None and time.monotonic() < deadline, (tmp_path / "moto.log").read_text()
            time.sleep(0.1)
    try:
        yield url
    finally:
        proc.terminate()
        proc.wait(30)


def cli(env: dict, *args: str, timeout: int = 600) -> subprocess.CompletedProcess:
    result = subprocess.run([sys.executable, "-m", "gd_assets.cli", *args], env=env, cwd=REPO, capture_output=True,
                            text=True, timeout=timeout, check=False)
    assert result.returncode == 0, f"gd-assets {' '.join(args)}: {result.stderr[-3000:]}"
    return result


def shared_env(home: Path, s3: str, postgres_url: str) -> dict[str, str]:
    """What every machine is told: the instance, the store, the object store; its own home."""
    env = {k: v for k, v in cli_env().items() if not k.startswith(("GD_ASSETS_", "AWS_"))}
    return {**env, "GD_ASSETS_HOME": str(home), "GD_ASSETS_POSTGRES_URL": postgres_url, "GD_ASSETS_STORE": "ducklake",
            "GD_ASSETS_OBJECT_STORE": f"s3://{BUCKET}/deployment", "AWS_ENDPOINT_URL": s3,
            "AWS_ACCESS_KEY_ID": "gd-assets", "AWS_SECRET_ACCESS_KEY": "gd-assets", "AWS_REGION": "us-east-1"}


@contextmanager
def workers_running(head: dict, tmp_path: Path, s3: str, postgres_url: str,
                    **settings: str) -> Iterator[list[subprocess.Popen]]:
    """The head's broker and published corpus, and two `gd-assets worker` processes (w1, w2), each in
    its own folder; stopped (and the broker) afterwards."""
    broker_url = json.loads(cli(head, "broker", "start", "--json").stdout)["broker"]
    workers = []
    try:
        cli(head, "corpus", "publish")
        for name in ("w1", "w2"):
            own = tmp_path / name
            own.mkdir()
            env = {**shared_env(own, s3, postgres_url), "GD_ASSETS_BROKER_URL": broker_url, **settings}
            workers.append(subprocess.Popen(
                [sys.executable, "-m", "gd_assets.cli", "worker", "--name", f"{name}@%h"], cwd=own, env=env,
                stdout=(own / "worker.log").open("w"), stderr=subprocess.STDOUT, start_new_session=True))
        yield workers
    finally:
        for proc in workers:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in workers:
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
        cli(head, "broker", "stop")


def create_bucket(s3: str) -> None:
    import boto3

    boto3.client("s3", endpoint_url=s3, region_name="us-east-1", aws_access_key_id="gd-assets",
                 aws_secret_access_key="gd-assets").create_bucket(Bucket=BUCKET)


def verdict_facts(doc: dict) -> tuple:
    return doc["verdict"], sorted((f["path"], f["start_line"], f["signal"], f["migration_needed"], f["rationale"])
                                  for f in doc["fragments"])


def test_two_workers_that_share_no_disk_give_the_embedded_defaults_results(
        corpus_home, postgres_server, s3_endpoint, tmp_path):
    import boto3

    create_bucket(s3_endpoint)
    crowd = tmp_path / "crowd"
    write_project(crowd, 8)
    projects = {"dodge": fixture_path("mini_dodge.dump.txt"), "crowd": crowd}

    # The embedded default, for comparison.
    default = {**cli_env(), "GD_ASSETS_HOME": str(tmp_path / "default"), "GD_ASSETS_CORPUS_HOME": str(corpus_home)}
    expected = {name: verdict_facts(json.loads(cli(default, "analyze", str(path), "--project", name, "--json").stdout))
                for name, path in projects.items()}

    url = fresh_database(postgres_server[0])
    head = {**shared_env(tmp_path / "head", s3_endpoint, url), "GD_ASSETS_CORPUS_HOME": str(corpus_home)}
    with workers_running(head, tmp_path, s3_endpoint, url) as workers:
        for name, path in projects.items():
            doc = json.loads(cli(head, "analyze", str(path), "--project", name, "--workers", "2", "--json").stdout)
            assert verdict_facts(doc) == expected[name], name
        for proc, name in zip(workers, ("w1", "w2")):
            assert proc.poll() is None, (tmp_path / name / "worker.log").read_text()[-3000:]

    # Every fragment step ran in a worker's process, not on the machine that asked for the analysis.
    instance = dg.DagsterInstance.from_config(str(tmp_path / "head" / "dagster"))
    runs = instance.get_runs()
    steps = [e for run in runs for e in instance.all_logs(run.run_id, of_type=dg.DagsterEventType.STEP_START)
             if e.step_key in ("fragment_evidence", "fragment_judgement")]
    assert steps
    engine = [e.message for run in runs for e in instance.all_logs(run.run_id, of_type=dg.DagsterEventType.ENGINE_EVENT)]
    assert sum("in celery worker" in m for m in engine) == len(steps)
    # Each worker fetched the published corpus into its own home; the lake's files are in the bucket only.
    for name in ("w1", "w2"):
        assert (tmp_path / name / "index" / "CURRENT").exists() and (tmp_path / name / "corpora.duckdb").exists()
    # Its steps opened the worker's own instance (its own URL and folders), not the one the head described.
    assert any(any((tmp_path / name / "dagster" / "storage").glob("*")) for name in ("w1", "w2"))
    assert not (tmp_path / "head" / "lake").exists()
    s3 = boto3.client("s3", endpoint_url=s3_endpoint, region_name="us-east-1", aws_access_key_id="gd-assets",
                      aws_secret_access_key="gd-assets")
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET, Prefix="deployment/").get("Contents", [])]
    assert any(k.startswith("deployment/lake/") and k.endswith(".parquet") for k in keys)
    assert {"deployment/projects/dodge/dodge.html", "deployment/projects/crowd/crowd.html"} <= set(keys)


def mid_step(instance: dg.DagsterInstance, worker: str, seconds: float = 300) -> dg.DagsterRun:
    """The first started run of `worker` that has recorded some of its fragments and not all."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for run in instance.get_runs(dg.RunsFilter(statuses=[dg.DagsterRunStatus.STARTED]), limit=20):
            if run.tags.get("gd_assets/celery_worker", "").startswith(worker + "@"):
                made = instance.get_records_for_run(run.run_id, of_type=DagsterEventType.ASSET_MATERIALIZATION,
                                                    limit=5000).records
                if made:
                    return run
        time.sleep(0.2)
    pytest.fail(f"{worker} never got to the middle of a step")


def test_a_worker_killed_mid_step_hands_it_on_losing_nothing_and_recording_nothing_twice(
        corpus_home, postgres_server, s3_endpoint, tmp_path):
    create_bucket(s3_endpoint)
    crowd = tmp_path / "crowd"
    write_project(crowd, 80)
    default = {**cli_env(), "GD_ASSETS_HOME": str(tmp_path / "default"), "GD_ASSETS_CORPUS_HOME": str(corpus_home)}
    expected = verdict_facts(json.loads(cli(default, "analyze", str(crowd), "--project", "crowd", "--json").stdout))

    url = fresh_database(postgres_server[0])
    head = {**shared_env(tmp_path / "head", s3_endpoint, url), "GD_ASSETS_CORPUS_HOME": str(corpus_home)}
    with workers_running(head, tmp_path, s3_endpoint, url, GD_ASSETS_STEP_LEASE="6") as (w1, w2):
        analysis = subprocess.Popen([sys.executable, "-m", "gd_assets.cli", "analyze", str(crowd), "--project", "crowd",
                                     "--workers", "2", "--json"], env=head, cwd=REPO, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True)
        while not (tmp_path / "head" / "dagster" / "dagster.yaml").exists():
            assert analysis.poll() is None, analysis.stderr.read()
            time.sleep(0.2)
        instance = dg.DagsterInstance.from_config(str(tmp_path / "head" / "dagster"))
        killed = mid_step(instance, "w1")
        w1.kill()   # kill -9 of the worker's main process; its pool process dies with it
        out, err = analysis.communicate(timeout=600)
        assert analysis.returncode == 0, err[-3000:]
        assert w2.poll() is None, (tmp_path / "w2" / "worker.log").read_text()[-3000:]
    assert verdict_facts(json.loads(out)) == expected

    # w2 took the step over and did only what w1 had not recorded: every fragment recorded once
    keys = [f["key"] for f in json.loads(cli(head, "status", "crowd", "--json").stdout)["fragments"]]
    for asset in ("fragment_evidence", "fragment_judgement"):
        assert set(materialization_counts(instance, asset, keys).values()) == {1}, asset
    taken = instance.get_run_by_id(killed.run_id)
    assert taken.status == dg.DagsterRunStatus.SUCCESS
    assert taken.tags["gd_assets/celery_worker"].startswith("w2@")
    assert taken.tags["gd_assets/celery_earlier"].startswith("w1@")
    notes = [e.user_message for e in instance.all_logs(killed.run_id) if "earlier attempt" in (e.user_message or "")]
    assert len(notes) == 1 and not notes[0].startswith("0 "), notes

    # status says which worker had what
    doc = json.loads(cli(head, "status", "crowd", "--json").stdout)
    workers = {name.split("@")[0]: w for name, w in doc["workers"].items()}
    assert workers["w1"]["lost"] == 1
    assert any(b["run_id"] == killed.run_id and b["status"] == "SUCCESS" for b in workers["w2"]["blocks"])
    printed = cli(head, "status", "crowd").stdout
    assert "worker w1@" in printed and "1 block(s) handed to another worker" in printed
