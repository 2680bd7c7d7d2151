"""The analysis store opens DuckDB per call or per session, and brings an older file's tables up to date."""

import subprocess
import sys

import duckdb
import pytest

from gd_assets import store
from gd_assets.core import duck


def fragment(key: str, project: str = "p") -> dict:
    return {"key": key, "project": project, "path": "a.gd", "ordinal": int(key[-1]), "start_line": 1,
            "end_line": 2, "kind": "function", "symbol": f"f{key[-1]}", "text": "func f():\n\tpass",
            "content_hash": "h" + key}


def test_an_older_store_gets_the_missing_tables_and_columns_and_loses_its_keys(gd_home):
    path = store.db_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect(str(path))
    # as the first release wrote it: no file_kind column, no project_contexts table
    con.execute("CREATE TABLE fragments (key VARCHAR PRIMARY KEY, project VARCHAR, path VARCHAR, ordinal INTEGER, "
                "start_line INTEGER, end_line INTEGER, dump_start_line INTEGER, dump_end_line INTEGER, kind VARCHAR, "
                "symbol VARCHAR, text VARCHAR, content_hash VARCHAR, reason VARCHAR)")
    con.execute("INSERT INTO fragments VALUES ('p/a.gd#0', 'p', 'a.gd', 0, 1, 2, NULL, NULL, 'function', 'f0', "
                "'func f():\n\tpass', 'h0', NULL)")
    con.close()

    assert store.project_fragments("p")["key"].to_list() == ["p/a.gd#0"]
    assert store.project_fragments("p")["file_kind"].to_list() == [None]
    assert store.project_context_row("p") is None
    con = duckdb.connect(str(path), read_only=True)
    tables = {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
    keys = con.execute("SELECT count(*) FROM duckdb_constraints() WHERE constraint_type = 'PRIMARY KEY'").fetchone()[0]
    con.close()
    assert set(store.TABLES) == tables, "the keyed table was rebuilt in place, nothing left beside it"
    assert keys == 0, "rebuilt without its primary key: checkpoints no longer rewrite a key index"

    store.upsert("fragments", store.frame("fragments", [{**fragment("p/a.gd#0"), "text": "func g():\n\tpass"},
                                                        fragment("p/a.gd#1")]))
    rows = store.project_fragments("p")
    assert rows["key"].to_list() == ["p/a.gd#0", "p/a.gd#1"], "an upsert still replaces by key"
    assert rows["text"].to_list()[0].startswith("func g")


def test_a_keyed_store_whose_rows_todays_tables_refuse_is_kept_as_it_was(gd_home, caplog):
    path = store.db_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE verdicts (project VARCHAR PRIMARY KEY, verdict VARCHAR, confidence DOUBLE, "
                "explanation VARCHAR, summary VARCHAR, judged INTEGER, unjudged INTEGER, computed_at TIMESTAMP)")
    con.execute("INSERT INTO verdicts (project) VALUES ('p')")   # no verdict: today's table says NOT NULL
    con.close()

    assert store.query("SELECT project FROM verdicts")["project"].to_list() == ["p"]
    assert "keeps its primary keys" in caplog.text
    row = {"project": "p", "verdict": "godot3", "confidence": 0.9, "explanation": "e", "summary": "{}",
           "judged": 1, "unjudged": 0}
    store.upsert("verdicts", store.frame("verdicts", [row]))
    store.upsert("verdicts", store.frame("verdicts", [row]))
    assert store.query("SELECT verdict FROM verdicts")["verdict"].to_list() == ["godot3"], "replaced, not doubled"


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


def test_connections_to_a_file_share_it_and_the_last_to_close_releases_it(tmp_path):
    """Connections of a process to one file share it, as DuckDB's own per-path databases do (a
    nested one sees the outer one's rows); once the last closes, another process can open it."""
    path = tmp_path / "shared.duckdb"
    with duck.connect(path) as outer:
        outer.execute("CREATE TABLE t (n INTEGER)")
        outer.execute("INSERT INTO t VALUES (1)")
        with duck.connect(path, read_only=True) as inner:
            assert inner.execute("SELECT n FROM t").fetchall() == [(1,)]
            assert inner.execute("SELECT current_database()").fetchone() == outer.execute(
                "SELECT current_database()").fetchone()
        outer.execute("INSERT INTO t VALUES (2)")
    opened = subprocess.run([sys.executable, "-c", f"import duckdb; print(duckdb.connect({str(path)!r})"
                             ".execute('SELECT sum(n) FROM t').fetchone()[0])"], capture_output=True, text=True)
    assert opened.stdout.strip() == "3", opened.stderr


def _raw_open(path, sql: str = "SELECT sum(n) FROM t") -> subprocess.CompletedProcess:
    """Another process opening `path` once, without waiting for its lock."""
    return subprocess.run([sys.executable, "-c", f"import duckdb; print(duckdb.connect({str(path)!r})"
                           f".execute({sql!r}).fetchone()[0])"], capture_output=True, text=True, timeout=120)


def test_a_sole_writer_keeps_its_file_attached_and_lets_a_waiting_process_in(tmp_path):
    """Inside `lingering` the file stays attached between connections (no checkpoint per transaction),
    yet another process that waits for it gets in before the scope ends and sees every committed row;
    the writer's next transaction then waits its turn, and nothing is lost."""
    path = tmp_path / "store.duckdb"
    with duck.lingering(path):
        with duck.connect(path) as con:
            con.execute("CREATE TABLE t (n INTEGER)")
            con.execute("INSERT INTO t VALUES (1)")
        refused = _raw_open(path)   # still attached: a plain open fails on the lock
        assert refused.returncode != 0 and "lock" in refused.stderr.lower(), refused.stdout
        waiter = subprocess.Popen(
            [sys.executable, "-c", "import sys; from gd_assets.core import duck\n"
             "with duck.connect(sys.argv[1]) as con:\n"
             "    con.execute('INSERT INTO t VALUES (10)')\n"
             "    print(con.execute('SELECT sum(n) FROM t').fetchone()[0])", str(path)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        written = 1
        while waiter.poll() is None and written < 20_000:   # this process goes on writing; the waiter gets in between
            with duck.connect(path) as con:
                con.execute("INSERT INTO t VALUES (1)")
            written += 1
        out, err = waiter.communicate(timeout=120)
        assert waiter.returncode == 0, err
        assert int(out) >= 11   # it saw the rows committed before it
        with duck.connect(path) as con:
            con.execute("INSERT INTO t VALUES (1)")
        written += 1
        assert not duck._wanted(str(path.resolve())).exists()
    opened = _raw_open(path)   # the scope ended: detached, checkpointed, the lock released
    assert opened.returncode == 0, opened.stderr
    assert int(opened.stdout) == written + 10
