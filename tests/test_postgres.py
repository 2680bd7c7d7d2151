"""`gd-assets db start|stop|status`: the Dagster instance in a local PostgreSQL cluster under the data
home, reached with pooled connections, and clear errors when it is down or cannot be set up."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
from conftest import REPO, cli_env, reachable_folder

pytestmark = pytest.mark.slow


def cli(env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "gd_assets.cli", *args], env=env, cwd=REPO, capture_output=True,
                          text=True, timeout=900, check=False)


@pytest.fixture
def reachable_home(corpus_home):
    """A data home in a folder the server's user can enter, reading the session's corpus."""
    folder = reachable_folder("gd-assets-db-")
    env = cli_env(GD_ASSETS_HOME=str(folder / "home"), GD_ASSETS_CORPUS_HOME=str(corpus_home))
    yield folder / "home", env
    cli(env, "db", "stop")
    shutil.rmtree(folder, ignore_errors=True)


def test_db_start_holds_the_instance_until_stop(reachable_home):
    import psycopg2

    home, env = reachable_home
    before = json.loads(cli(env, "db", "status", "--json").stdout)
    assert before["instance"] == "sqlite" and before["cluster"] is None

    started = cli(env, "db", "start", "--json")
    assert started.returncode == 0, started.stderr
    doc = json.loads(started.stdout)
    assert doc["instance"] == "postgres" and doc["running"] and doc["from"] == "db start"
    assert doc["url"].startswith("postgresql://gd_assets@127.0.0.1:")
    assert json.loads(cli(env, "db", "start", "--json").stdout)["url"] == doc["url"], "a second start changes nothing"

    analysed = cli(env, "analyze", str(REPO / "examples" / "dodge-godot3"), "--json")
    assert analysed.returncode == 0, analysed.stderr[-3000:]
    assert json.loads(analysed.stdout)["verdict"] == "godot3"
    with psycopg2.connect(doc["url"]) as con, con.cursor() as cur:
        cur.execute("SELECT count(*) FROM runs WHERE status = 'SUCCESS'")
        assert cur.fetchone()[0] >= 4   # sources+fragments, evidence, judgement, rewrite, verdict
        cur.execute("SELECT count(*) FROM event_logs WHERE dagster_event_type = 'ASSET_MATERIALIZATION'")
        assert cur.fetchone()[0] > 22
    assert not list((home / "dagster").rglob("runs.db")), "runs went to sqlite too"
    config = (home / "dagster" / "dagster.yaml").read_text()
    assert "PooledEventLogStorage" in config and "sqlite" not in config

    # Stopped behind the command line's back: a clear error, not a connection traceback.
    from gd_assets.postgres import SERVER_USER, binaries

    pg_ctl = [str(binaries() / "pg_ctl"), "-D", str(home / "postgres" / "data"), "-m", "fast", "-w", "stop"]
    if os.geteuid() == 0:
        pg_ctl = ["su", SERVER_USER, "-s", "/bin/sh", "-c", " ".join(pg_ctl)]
    subprocess.run(pg_ctl, check=True, capture_output=True)
    down = cli(env, "status", "dodge-godot3")
    assert down.returncode == 1 and "not running" in down.stderr and "Traceback" not in down.stderr

    again = json.loads(cli(env, "db", "start", "--json").stdout)
    assert again["running"] and again["url"] == doc["url"]
    status = json.loads(cli(env, "status", "dodge-godot3", "--json").stdout)
    assert status["counts"]["done"] == 22, "the runs recorded before the restart are still there"

    stopped = json.loads(cli(env, "db", "stop", "--json").stdout)
    assert stopped["instance"] == "sqlite" and not stopped["running"]
    assert cli(env, "status", "dodge-godot3").returncode == 0, "after db stop the home is on sqlite again"


def test_a_server_url_from_the_environment_wins(reachable_home, postgres_server):
    _, env = reachable_home
    url, _ = postgres_server
    doc = json.loads(cli({**env, "GD_ASSETS_POSTGRES_URL": url}, "db", "status", "--json").stdout)
    assert doc == {**doc, "instance": "postgres", "url": url, "from": "GD_ASSETS_POSTGRES_URL"}


@pytest.mark.skipif(os.geteuid() != 0, reason="only root hands the cluster to the postgres user")
def test_a_home_the_server_user_cannot_enter_is_refused_clearly(tmp_path, corpus_home):
    closed = tmp_path / "closed"
    closed.mkdir(mode=0o700)
    env = cli_env(GD_ASSETS_HOME=str(closed / "home"))
    result = cli(env, "db", "start")
    assert result.returncode == 1 and "cannot reach" in result.stderr and "Traceback" not in result.stderr
