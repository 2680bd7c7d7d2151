"""The analysis tables in DuckLake (GD_ASSETS_STORE=ducklake): the same upserts without primary keys,
many writing processes at once, maintenance that merges small files, and clear errors for bad settings."""

import subprocess
import sys
import time

import duckdb
import pytest
from conftest import REPO, CuttableProxy, fresh_database
from test_store import fragment

from gd_assets import home, lake, store
from gd_assets.core.duck import StoreError

pytestmark = pytest.mark.slow


@pytest.fixture
def lake_home(gd_home, postgres_server, monkeypatch):
    url, _ = postgres_server
    monkeypatch.setenv("GD_ASSETS_POSTGRES_URL", fresh_database(url))
    monkeypatch.setenv("GD_ASSETS_STORE", "ducklake")
    monkeypatch.delenv("GD_ASSETS_LAKE_PATH", raising=False)
    return gd_home


def parquet_files() -> int:
    return len(list(home.lake_path().rglob("*.parquet")))


def test_upserts_replace_rows_without_primary_keys(lake_home):
    assert store.backend() == "ducklake"
    store.upsert("fragments", store.frame("fragments", [fragment("p/a.gd#1"), fragment("p/a.gd#2")]))
    changed = {**fragment("p/a.gd#2"), "text": "func f():\n\treturn 2"}
    store.upsert("fragments", store.frame("fragments", [changed, fragment("p/a.gd#3")]))   # a retry, an edit
    rows = store.project_fragments("p")
    assert rows["key"].to_list() == ["p/a.gd#1", "p/a.gd#2", "p/a.gd#3"]
    assert rows.filter(rows["key"] == "p/a.gd#2")["text"].item().endswith("return 2")

    store.upsert("fragments", store.frame("fragments", [fragment("p/a.gd#3")]), replace_project="p")
    assert store.project_fragments("p")["key"].to_list() == ["p/a.gd#3"]
    store.upsert("fragments", store.frame("fragments", [fragment("q/b.gd#1", project="q")]))
    store.delete_project("p")
    assert store.project_fragments("p").height == 0 and store.project_fragments("q").height == 1

    assert not (lake_home / home.PROJECTS_DB).exists(), "nothing went to the DuckDB file"
    assert parquet_files() > 0, "the rows lie as Parquet under the lake folder"
    with store._connection() as con:
        constraints = con.execute("SELECT count(*) FROM duckdb_constraints() WHERE database_name = 'lake' "
                                  "AND constraint_type = 'PRIMARY KEY'").fetchone()[0]
    assert constraints == 0


WRITER = """
import logging, sys
from gd_assets import store
from test_store import fragment
logging.basicConfig(level=logging.DEBUG, format="%(name)s %(message)s")
worker, batches = int(sys.argv[1]), int(sys.argv[2])
for b in range(batches):
    rows = [fragment(f"w{worker}/a.gd#{b}{i}", project="crowd") for i in range(5)]
    store.upsert("fragments", store.frame("fragments", rows))
    store.upsert("fragments", store.frame("fragments", rows[:2]))   # a retried batch rewrites its rows
"""


def test_four_processes_writing_one_table_lose_and_double_nothing(lake_home):
    # every worker's first keys start in one shared data file, so their deletes meet in it
    batches = 12
    store.upsert("fragments", store.frame("fragments", [fragment(f"w{w}/a.gd#0{i}", project="crowd")
                                                        for w in range(4) for i in range(5)]))
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(w), str(batches)], cwd=REPO / "tests",
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for w in range(4)]
    conflicts = 0
    for proc in procs:
        output, _ = proc.communicate(timeout=600)
        assert proc.returncode == 0, output[-3000:]
        conflicts += output.count("commit conflict, retrying")
    print(f"{conflicts} lost commit races retried")
    keys = store.project_fragments("crowd")["key"].to_list()
    assert len(keys) == len(set(keys)) == 4 * batches * 5

    files = parquet_files()
    done = store.maintain("0 seconds")
    assert done["store"] == "ducklake" and done["files_before"] == files
    assert done["files_after"] < files, "maintenance merged the small files each commit wrote"
    assert sorted(store.project_fragments("crowd")["key"].to_list()) == sorted(keys), "and kept every row"


ATTACHER = """
import sys, time
from gd_assets import store
start = float(sys.argv[1])
time.sleep(max(0.0, start - time.time()))
print(store.project_fragments("p").height)
"""


def test_processes_attaching_a_new_lake_at_once_all_get_it(lake_home):
    # the first attach creates DuckLake's catalog tables: processes arriving together must wait, not fail
    start = time.time() + 4
    procs = [subprocess.Popen([sys.executable, "-c", ATTACHER, str(start)], cwd=REPO / "tests",
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for _ in range(6)]
    for proc in procs:
        output, _ = proc.communicate(timeout=300)
        assert proc.returncode == 0, output[-3000:]
        assert output.strip().splitlines()[-1] == "0"


def test_bad_store_settings_are_refused_clearly(gd_home, monkeypatch):
    monkeypatch.delenv("GD_ASSETS_POSTGRES_URL", raising=False)
    monkeypatch.setenv("GD_ASSETS_STORE", "parquet")
    with pytest.raises(StoreError, match="use one of duckdb, ducklake"):
        store.query("SELECT 1")
    monkeypatch.setenv("GD_ASSETS_STORE", "ducklake")
    result = subprocess.run([sys.executable, "-m", "gd_assets.cli", "analyze", "examples/dodge-godot3"], cwd=REPO,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 1 and "gd-assets db start" in result.stderr and "Traceback" not in result.stderr


def test_a_file_from_a_newer_duckdb_is_refused_with_what_to_do(gd_home):
    store.upsert("fragments", store.frame("fragments", [fragment("p/a.gd#1")]))
    data = bytearray(store.db_path().read_bytes())
    assert data[8:12] == b"DUCK"
    words = slice(8, 24)   # the header's checksum is a xor over its 8-byte words: patch it with them
    old = [int.from_bytes(data[i:i + 8], "little") for i in range(words.start, words.stop, 8)]
    data[12:20] = (999).to_bytes(8, "little")   # the storage version DuckDB 2.x writes
    new = [int.from_bytes(data[i:i + 8], "little") for i in range(words.start, words.stop, 8)]
    checksum = int.from_bytes(data[0:8], "little")
    for word in old + new:
        checksum ^= (word * 0xBF58476D1CE4E5B9) % 2**64
    data[0:8] = checksum.to_bytes(8, "little")
    store.db_path().write_bytes(bytes(data))
    with pytest.raises(StoreError, match="newer DuckDB.*move it aside"):
        store.project_fragments("p")


def test_the_extensions_come_from_the_installed_packages(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    folder = lake.extension_directory()
    con = duckdb.connect(config={"autoinstall_known_extensions": False})
    con.execute(f"SET extension_directory = '{folder}'")
    con.execute("LOAD ducklake")
    con.execute("LOAD postgres")
    loaded = {r[0] for r in con.execute("SELECT extension_name FROM duckdb_extensions() WHERE loaded").fetchall()}
    assert {"ducklake", "postgres_scanner"} <= loaded


def test_the_store_and_the_instance_wait_for_a_database_cut_off_for_a_while(gd_home, postgres_server, monkeypatch,
                                                                          caplog, tmp_path):
    """A worker that loses its PostgreSQL for a few seconds pauses: its lake writes and reads and its
    instance's events go through once the server answers again, each written once."""
    import dagster as dg

    url = fresh_database(postgres_server[0])
    proxy = CuttableProxy(int(url.rsplit(":", 1)[1].split("/")[0]), tmp_path)
    monkeypatch.setenv("GD_ASSETS_POSTGRES_URL", url.replace(f":{proxy.target}/", f":{proxy.port}/"))
    monkeypatch.setenv("GD_ASSETS_STORE", "ducklake")
    monkeypatch.delenv("GD_ASSETS_LAKE_PATH", raising=False)
    try:
        store.upsert("fragments", store.frame("fragments", [fragment("p/a.gd#1")]))
        instance = home.dagster_instance()
        instance.report_runless_asset_event(dg.AssetMaterialization("cut_probe"))

        def through_a_cut(call):
            proxy.cut(3)
            started = time.monotonic()
            result = call()
            assert time.monotonic() - started >= 2.3, "it went through the cut: nothing was tested"
            return result

        through_a_cut(lambda: store.upsert("fragments", store.frame("fragments", [fragment("p/a.gd#2"),
                                                                                  fragment("p/a.gd#3")])))
        assert through_a_cut(lambda: store.project_fragments("p"))["key"].to_list() == ["p/a.gd#1", "p/a.gd#2",
                                                                                        "p/a.gd#3"]
        def report_and_read():   # a reported materialisation waits in this process until the next read
            instance.report_runless_asset_event(dg.AssetMaterialization("cut_probe"))
            return instance.fetch_materializations(dg.AssetKey("cut_probe"), limit=10).records
        assert len(through_a_cut(report_and_read)) == 2
    finally:
        proxy.close()
    waited = [r.getMessage() for r in caplog.records if "unreachable" in r.getMessage()]
    assert any("DuckLake catalog" in m for m in waited) and any("instance's PostgreSQL" in m for m in waited), waited
