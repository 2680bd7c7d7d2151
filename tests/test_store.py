"""The analysis store opens DuckDB per call or per session, and brings an older file's tables up to date."""

import subprocess
import sys

import duckdb
import pytest

from gd_assets import store


def fragment(key: str, project: str = "p") -> dict:
    return {"key": key, "project": project, "path": "a.gd", "ordinal": int(key[-1]), "start_line": 1,
            "end_line": 2, "kind": "function", "symbol": f"f{key[-1]}", "text": "func f():\n\tpass",
            "content_hash": "h" + key}


def test_an_older_store_gets_the_missing_tables_and_columns(gd_home):
    path = store.db_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect(str(path))
    # as the first release wrote it: no file_kind column, no project_contexts table
    con.execute("CREATE TABLE fragments (key VARCHAR PRIMARY KEY, project VARCHAR, path VARCHAR, ordinal INTEGER, "
                "start_line INTEGER, end_line INTEGER, dump_start_line INTEGER, dump_end_line INTEGER, kind VARCHAR, "
                "symbol VARCHAR, text VARCHAR, content_hash VARCHAR, reason VARCHAR)")
    con.execute("INSERT INTO fragments (key, project, path, ordinal) VALUES ('p/a.gd#0', 'p', 'a.gd', 0)")
    con.close()

    assert store.project_fragments("p")["key"].to_list() == ["p/a.gd#0"]
    assert store.project_fragments("p")["file_kind"].to_list() == [None]
    assert store.project_context_row("p") is None
    con = duckdb.connect(str(path), read_only=True)
    tables = {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
    con.close()
    assert set(store.TABLES) <= tables


def test_a_session_shares_one_connection_and_releases_the_file(gd_home):
    store.upsert("fragments", store.frame("fragments", [fragment("p/a.gd#1")]))
    with store.session():
        store.upsert("fragments", store.frame("fragments", [fragment("p/a.gd#2")]))
        with store.session():   # nested: the same connection
            assert store.fragments_by_key(["p/a.gd#2", "p/a.gd#1"])["key"].to_list() == ["p/a.gd#2", "p/a.gd#1"]
        assert store.project_fragments("p").height == 2
    # closed: another process can take the file's write lock
    opened = subprocess.run([sys.executable, "-c", "import duckdb, sys; duckdb.connect(sys.argv[1]).close()",
                             str(store.db_path())], capture_output=True, text=True, timeout=120)
    assert opened.returncode == 0, opened.stderr

    with pytest.raises(RuntimeError), store.session():
        store.project_fragments("p")
        raise RuntimeError("a failure inside")
    assert store.project_fragments("p").height == 2   # the next call opens its own connection
