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
from pathlib import Path

import dagster as dg
import pytest
from conftest import REPO, cli_env, fixture_path, free_port, fresh_database
from test_resume import write_project

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


def verdict_facts(doc: dict) -> tuple:
    return doc["verdict"], sorted((f["path"], f["start_line"], f["signal"], f["migration_needed"], f["rationale"])
                                  for f in doc["fragments"])


def test_two_workers_that_share_no_disk_give_the_embedded_defaults_results(
        corpus_home, postgres_server, s3_endpoint, tmp_path):
    import boto3

    boto3.client("s3", endpoint_url=s3_endpoint, region_name="us-east-1", aws_access_key_id="gd-assets",
                 aws_secret_access_key="gd-assets").create_bucket(Bucket=BUCKET)
    crowd = tmp_path / "crowd"
    write_project(crowd, 8)
    projects = {"dodge": fixture_path("mini_dodge.dump.txt"), "crowd": crowd}

    # The embedded default, for comparison.
    default = {**cli_env(), "GD_ASSETS_HOME": str(tmp_path / "default"), "GD_ASSETS_CORPUS_HOME": str(corpus_home)}
    expected = {name: verdict_facts(json.loads(cli(default, "analyze", str(path), "--project", name, "--json").stdout))
                for name, path in projects.items()}

    url = fresh_database(postgres_server[0])
    head = {**shared_env(tmp_path / "head", s3_endpoint, url), "GD_ASSETS_CORPUS_HOME": str(corpus_home)}
    broker_url = json.loads(cli(head, "broker", "start", "--json").stdout)["broker"]
    workers = []
    try:
        cli(head, "corpus", "publish")
        for name in ("w1", "w2"):
            own = tmp_path / name
            own.mkdir()
            env = {**shared_env(own, s3_endpoint, url), "GD_ASSETS_BROKER_URL": broker_url}
            workers.append(subprocess.Popen(
                [sys.executable, "-m", "gd_assets.cli", "worker", "--name", f"{name}@%h"], cwd=own, env=env,
                stdout=(own / "worker.log").open("w"), stderr=subprocess.STDOUT, start_new_session=True))
        for name, path in projects.items():
            doc = json.loads(cli(head, "analyze", str(path), "--project", name, "--workers", "2", "--json").stdout)
            assert verdict_facts(doc) == expected[name], name
        for proc, name in zip(workers, ("w1", "w2")):
            assert proc.poll() is None, (tmp_path / name / "worker.log").read_text()[-3000:]
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
    assert not (tmp_path / "head" / "lake").exists()
    s3 = boto3.client("s3", endpoint_url=s3_endpoint, region_name="us-east-1", aws_access_key_id="gd-assets",
                      aws_secret_access_key="gd-assets")
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET, Prefix="deployment/").get("Contents", [])]
    assert any(k.startswith("deployment/lake/") and k.endswith(".parquet") for k in keys)
    assert {"deployment/projects/dodge/dodge.html", "deployment/projects/crowd/crowd.html"} <= set(keys)
