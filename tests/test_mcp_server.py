"""`gd-assets mcp`: a real MCP client from the SDK drives the server over stdio and over streamable
HTTP: tools, progress, paging, the debug view, corpus search, migration, resources, and clean errors
for paths outside the roots, unknown projects and keys."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import REPO, free_port
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.server.mcpserver.exceptions import ToolError

from gd_assets import orchestrate
from gd_assets.mcp_server import Roots, build_server, loopback

pytestmark = pytest.mark.slow
TOOLS = {"analyze", "verdict", "status", "fragments", "show", "search", "migrate"}


def server_env() -> dict[str, str]:
    keep = ("PATH", "HOME", "GD_ASSETS_HOME", "GD_ASSETS_CORPUS_HOME", "GD_ASSETS_JUDGE")
    return {k: os.environ[k] for k in keep if k in os.environ}


def tree_digest(folder: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(folder)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


@pytest.fixture
def roots(tmp_path) -> tuple[Path, Path]:
    """A root holding a copy of the Godot 3 example and a symlink that leads out of it, and a folder outside."""
    root, outside = tmp_path / "root", tmp_path / "outside"
    shutil.copytree(REPO / "examples" / "dodge-godot3", root / "dodge-godot3")
    shutil.copytree(REPO / "examples" / "dodge-godot3", outside / "elsewhere")
    (root / "escape").symlink_to(outside / "elsewhere")
    return root, outside


async def exchange(client: Client, root: Path, outside: Path, home: Path) -> None:
    """What an agent does first: list, analyse with progress, page, open one, search, migrate, read, fail cleanly."""
    assert {t.name for t in (await client.list_tools()).tools} == TOOLS

    progress: list[tuple[float, float | None, str | None]] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append((done, total, message))

    before = tree_digest(root / "dodge-godot3")
    result = await client.call_tool("analyze", {"path": "dodge-godot3"}, progress_callback=on_progress)
    assert not result.is_error, result.content
    verdict = result.structured_content
    assert verdict["project"] == "dodge-godot3" and verdict["verdict"] == "godot3"
    assert verdict["counts"]["migration_needed"] > 0
    assert progress, "no progress notification arrived"
    done = [p[0] for p in progress]
    assert done == sorted(done) and progress[-1][0] == progress[-1][1] == 3 * len(verdict["fragments"])

    again = await client.call_tool("verdict", {"project": "dodge-godot3"})
    assert again.structured_content == verdict

    # Paging: every fragment once, in file order, and the filter holds on every page.
    keys, offset = [], 0
    while offset is not None:
        page = (await client.call_tool("fragments", {"project": "dodge-godot3", "limit": 5, "offset": offset}))
        page = page.structured_content
        assert len(page["fragments"]) <= 5 and page["total"] == len(verdict["fragments"])
        keys += [f["key"] for f in page["fragments"]]
        offset = page["next_offset"]
    assert keys == [f["key"] for f in verdict["fragments"]]
    needing = (await client.call_tool("fragments", {"project": "dodge-godot3", "migration_needed": True,
                                                     "signal": "godot3", "limit": 500})).structured_content
    assert needing["total"] == verdict["counts"]["migration_needed"]
    assert all(f["migration_needed"] and f["signal"] == "godot3" for f in needing["fragments"])

    script = next(f for f in needing["fragments"] if f["path"].endswith(".gd") and f["kind"] == "function")
    shown = (await client.call_tool("show", {"project": "dodge-godot3", "key": script["key"]})).structured_content
    assert shown["key"] == script["key"] and shown["text"] and shown["cues"] and shown["candidates"]
    assert shown["judgement"]["migration_needed"] and shown["judgement"]["evidence"]
    assert shown["rewrite"]["new_text"] != shown["text"]

    status = (await client.call_tool("status", {"project": "dodge-godot3"})).structured_content
    assert status["counts"]["done"] == len(verdict["fragments"]) and status["counts"]["stale"] == 0

    hits = (await client.call_tool("search", {"query": "extends KinematicBody2D", "k": 5})).structured_content
    assert hits["hits"] and any("CharacterBody2D" in h["title"] + h["text"] for h in hits["hits"])
    cli = subprocess.run([sys.executable, "-m", "gd_assets.cli", "search", "extends KinematicBody2D", "-k", "5",
                          "--json"], capture_output=True, text=True, env=server_env(), check=True)
    assert [h["id"] for h in json.loads(cli.stdout)] == [h["id"] for h in hits["hits"]]

    migrated = (await client.call_tool("migrate", {"project": "dodge-godot3"})).structured_content
    assert "+extends CharacterBody2D" in migrated["patch_text"] and not migrated["patch_truncated"]
    assert migrated["edits"] and all(e["evidence"] for e in migrated["edits"])
    assert Path(migrated["out"]).resolve().is_relative_to(home.resolve())
    assert tree_digest(root / "dodge-godot3") == before, "the source was written to"

    uris = {str(r.uri) for r in (await client.list_resources()).resources}
    assert {"gd-assets://projects/dodge-godot3/report.md", "gd-assets://projects/dodge-godot3/migration.patch"} <= uris
    report = await client.read_resource("gd-assets://projects/dodge-godot3/report.md")
    assert report.contents[0].text.startswith("# Migration report: dodge-godot3")
    patch = await client.read_resource("gd-assets://projects/dodge-godot3/migration.patch")
    assert patch.contents[0].text == migrated["patch_text"]

    # Clean errors: one line that says what is wrong, never a traceback.
    for args, says in ((("analyze", {"path": str(outside / "elsewhere")}), "outside the roots"),
                       (("analyze", {"path": "escape"}), "outside the roots"),
                       (("analyze", {"path": "https://example.com/game.git"}), "only local paths"),
                       (("analyze", {"path": "missing-folder"}), "no such file"),
                       (("verdict", {"project": "nothing-here"}), "no verdict"),
                       (("show", {"project": "dodge-godot3", "key": "dodge-godot3/none.gd::x"}), "no fragment"),
                       (("fragments", {"project": "dodge-godot3", "signal": "godot5"}), "not one of"),
                       (("search", {"query": "x", "table": "nope"}), "not one of"),
                       (("migrate", {"project": "nothing-here"}), "no project")):
        failed = await client.call_tool(*args)
        text = failed.content[0].text
        assert failed.is_error and says in text and "Traceback" not in text, (args, text)
    assert not (outside / "elsewhere" / ".gd-assets-migration").exists()


def test_an_agent_over_stdio(analysis_home, roots):
    root, outside = roots
    params = StdioServerParameters(command=sys.executable, args=["-m", "gd_assets.cli", "mcp", "--root", str(root)],
                                   env=server_env(), cwd=str(outside))

    async def run() -> None:
        async with Client(params, read_timeout_seconds=600) as client:
            await exchange(client, root, outside, analysis_home)

    asyncio.run(run())


def wait_for_port(port: int, process: subprocess.Popen, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert process.poll() is None, process.stderr.read() if process.stderr else "the server exited"
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.3)
    raise AssertionError(f"nothing listened on {port} in {seconds} s")


def test_an_agent_over_streamable_http(analysis_home, roots, tmp_path):
    root, outside = roots
    port = free_port()
    log = (tmp_path / "server.log").open("w")
    server = subprocess.Popen([sys.executable, "-m", "gd_assets.cli", "mcp", "--http", f"127.0.0.1:{port}",
                               "--root", str(root)], env=server_env(), stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_for_port(port, server)

        async def run() -> None:
            async with Client(f"http://127.0.0.1:{port}/mcp", read_timeout_seconds=600) as client:
                await exchange(client, root, outside, analysis_home)

        asyncio.run(run())
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()


def test_only_loopback_addresses_are_served():
    assert loopback("127.0.0.1:8765") == ("127.0.0.1", 8765)
    assert loopback("[::1]:9000") == ("::1", 9000)
    assert loopback("8765") == ("127.0.0.1", 8765)
    for wide in ("0.0.0.0:8765", "192.168.1.5:80", "example.com:80"):
        with pytest.raises(orchestrate.PipelineError, match="loopback|HOST:PORT"):
            loopback(wide)
    result = subprocess.run([sys.executable, "-m", "gd_assets.cli", "mcp", "--http", "0.0.0.0:8765"],
                            capture_output=True, text=True, env=server_env(), timeout=120)
    assert result.returncode == 1 and "only loopback" in result.stderr and "Traceback" not in result.stderr


def test_roots_resolve_relative_paths_and_refuse_what_leads_out(roots):
    root, outside = roots
    allowed = Roots([root])
    assert allowed.source("dodge-godot3") == str(root / "dodge-godot3")
    assert allowed.source(str(root / "dodge-godot3" / "..")) == str(root)
    for path in (str(outside), "escape", "../outside/elsewhere", "git@github.com:a/b.git"):
        with pytest.raises(ToolError):
            allowed.source(path)
    assert Roots([root, outside]).source(str(outside / "elsewhere")) == str(outside / "elsewhere")
    with pytest.raises(orchestrate.PipelineError, match="not a folder"):
        Roots([root / "dodge-godot3" / "Player.gd"])


def test_verify_is_a_tool_only_when_the_server_is_started_to_allow_it(tmp_path):
    """Godot runs a migrated copy's tool scripts and autoloads: an agent gets `verify` only by the user's word."""
    async def tools(allow: bool) -> set[str]:
        return {t.name for t in await build_server(Roots([tmp_path]), allow_verify=allow).list_tools()}

    assert asyncio.run(tools(False)) == TOOLS
    assert asyncio.run(tools(True)) == TOOLS | {"verify"}

    async def verify_parameters() -> dict:
        [tool] = [t for t in await build_server(Roots([tmp_path]), allow_verify=True).list_tools() if t.name == "verify"]
        return tool.input_schema["properties"]

    parameters = asyncio.run(verify_parameters())   # running the game itself is asked for, never the default
    assert parameters["run"]["default"] is False and "project" in parameters
