"""`gd-assets mcp`: the analyses as a Model Context Protocol server, the front door for coding agents.

Each tool is a thin call into what the command line calls (`orchestrate`, `views`) and returns the
document its `--json` prints. Only local sources under the server's roots are analysed, every write
stays in the data home, and a failure comes back as a one-line tool error, never a traceback.
Nothing in a project is executed: analysing reads its text.
"""

from __future__ import annotations

import functools
import ipaddress
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp.types import Resource, ToolAnnotations

from gd_assets import home, orchestrate, store, views
from gd_assets.assets.migration import default_paths
from gd_assets.core.ingest import IngestError
from gd_assets.core.judges import JudgeError
from gd_assets.progress import AnalysisProgress

INSTRUCTIONS = """Tells, fragment by fragment and with evidence from Godot's own 3.x and 4.x sources, whether a
Godot project is Godot 3 or Godot 4 code, where it needs migration, and what the Godot 4 code would be.
Start with `analyze` on a project folder (a path under the server's roots); then `fragments` to page
through what needs migration, `show` for one fragment's evidence and rewrite, `migrate` for the patch."""
KNOWN_ERRORS = (orchestrate.PipelineError, views.NotFound, views.BadArgument, IngestError, JudgeError)
PATCH_LIMIT = 200_000  # characters of patch a `migrate` result carries; the resource has all of it
PROGRESS_EVERY_S = 1.0
READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)
RUNS_GODOT = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=True)
WRITES_HOME = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True,
                              open_world_hint=False)
REPORT_URI, PATCH_URI = "gd-assets://projects/{project}/report.md", "gd-assets://projects/{project}/migration.patch"


class Roots:
    """The folders whose files may be analysed; a path is taken only when it resolves (symlinks
    followed) inside one of them."""

    def __init__(self, folders: Sequence[str | Path]):
        self.folders = []
        for folder in folders:
            path = Path(folder).expanduser().resolve()
            if not path.is_dir():
                raise orchestrate.PipelineError(f"--root {folder}: not a folder")
            self.folders.append(path)

    def source(self, path: str) -> str:
        """The absolute source for `path` (relative paths start at the first root), or a tool error."""
        if "://" in path or path.startswith("git@"):
            raise ToolError(f"{path}: only local paths under the roots can be analysed ({self.describe()})")
        given = Path(path).expanduser()
        resolved = (given if given.is_absolute() else self.folders[0] / given).resolve()
        if not any(resolved == root or root in resolved.parents for root in self.folders):
            raise ToolError(f"{path}: outside the roots this server may analyse ({self.describe()}); "
                            "start it with --root FOLDER to allow another folder")
        if not resolved.exists():
            raise ToolError(f"{path}: no such file or folder")
        return str(resolved)

    def describe(self) -> str:
        return ", ".join(str(f) for f in self.folders)


def tool_errors(fn: Callable) -> Callable:
    """The pipeline's own errors become tool errors that keep their message (one line, what to do)."""
    @functools.wraps(fn)
    async def wrapper(*args, **kwargs):
        try:
            return await fn(*args, **kwargs)
        except KNOWN_ERRORS as error:
            raise ToolError(str(error)) from error
    return wrapper


class ProjectsServer(MCPServer):
    """An MCP server whose resource list names each analysed project's report and patch."""

    async def list_resources(self) -> list[Resource]:
        listed = await super().list_resources()
        rows = await anyio.to_thread.run_sync(lambda: store.query("SELECT project FROM verdicts ORDER BY project"))
        for project in rows["project"].to_list():
            listed.append(Resource(uri=REPORT_URI.format(project=project), name=f"{project} report",
                                   description=f"The Markdown report of {project}: verdict, folders, fragments, diffs",
                                   mime_type="text/markdown"))
            if default_paths(project)[1].exists():
                listed.append(Resource(uri=PATCH_URI.format(project=project), name=f"{project} migration patch",
                                       description=f"The unified diff that turns {project} into its Godot 4 copy",
                                       mime_type="text/x-diff"))
        return listed


def build_server(roots: Roots, allow_verify: bool = False) -> MCPServer:
    """The server with its tools and resources; one pipeline run at a time, reads alongside. The
    `verify` tool (Godot runs the migrated copy's tool scripts and autoloads) only with `allow_verify`."""
    server = ProjectsServer("gd-assets", instructions=INSTRUCTIONS)
    running = threading.Lock()

    def exclusively(fn: Callable, *args) -> Any:
        with running:
            return fn(*args)

    async def in_thread(fn: Callable, *args) -> Any:
        return await anyio.to_thread.run_sync(functools.partial(fn, *args))

    async def with_progress(ctx: Context, request: str | None, work: Callable[[AnalysisProgress], Any]) -> Any:
        """Run `work` in a thread while progress notifications report the fragment steps done; the
        last one is measured after the work, so a finished analysis never reads as stopped short."""
        progress = await in_thread(AnalysisProgress, request)
        finished = anyio.Event()

        async def report() -> None:
            while not finished.is_set():
                await ctx.report_progress(*await in_thread(progress.measure))
                with anyio.move_on_after(PROGRESS_EVERY_S):
                    await finished.wait()

        async with anyio.create_task_group() as group:
            group.start_soon(report)
            try:
                result = await in_thread(exclusively, work, progress)
            finally:
                finished.set()
        await ctx.report_progress(*await in_thread(progress.measure))
        return result

    def recorded_source(project: str) -> str:
        row = store.project_row(project)
        if row is None:
            raise ToolError(f"no project {project!r}: analyse it first with the analyze tool")
        return roots.source(row["source"])

    @server.tool(annotations=WRITES_HOME)
    @tool_errors
    async def analyze(path: str, ctx: Context, project: str | None = None, request: str | None = None) -> dict[str, Any]:
        """Analyse a Godot project (a folder, .zip, git checkout or '# <path>' dump under the server's roots;
        relative paths start at the first root), redoing only what changed, and return its verdict:
        godot3 / godot4 / mixed / unknown, per folder, file and fragment, with evidence. Sends progress."""
        source = roots.source(path)
        name = await with_progress(ctx, request, lambda p: orchestrate.analyze(source, project, request,
                                                                              on_stage=p.on_stage))
        return await in_thread(views.verdict_document, name)

    @server.tool(annotations=READ_ONLY)
    @tool_errors
    async def verdict(project: str) -> dict[str, Any]:
        """The last verdict of an analysed project (as `analyze` returns it)."""
        return await in_thread(views.verdict_document, project)

    @server.tool(annotations=READ_ONLY)
    @tool_errors
    async def status(project: str) -> dict[str, Any]:
        """Per fragment: done, failed, stopped, running or waiting; counts, stale judgements, project symbols."""
        return await in_thread(views.status_document, project)

    @server.tool(annotations=READ_ONLY)
    @tool_errors
    async def fragments(project: str, migration_needed: bool | None = None, signal: str | None = None,
                        path_prefix: str | None = None, limit: int = 50, offset: int = 0) -> dict[str, Any]:
        """One page of a project's fragments with their judgement, in file order. Filters: migration_needed,
        signal (godot3, godot4, neutral), path_prefix (e.g. 'player/'). Follow next_offset for the next page."""
        return await in_thread(views.fragments_page, project, migration_needed, signal, path_prefix, limit, offset)

    @server.tool(annotations=READ_ONLY)
    @tool_errors
    async def show(project: str, key: str) -> dict[str, Any]:
        """One fragment in full: where it is, its text, the cues searched (with receivers), the corpus
        candidates, the judgement with its evidence, and its Godot 4 rewrite (edits, manual items)."""
        return await in_thread(views.show_document, project, key)

    @server.tool(annotations=READ_ONLY)
    @tool_errors
    async def search(query: str, table: str | None = None, k: int = 10) -> dict[str, Any]:
        """Search the Godot 3/4 reference corpora (docs_chunks, api_mapping, label_prototypes) for a text,
        e.g. 'extends KinematicBody2D', with the hybrid retrieval the evidence uses."""
        return {"query": query, "table": table, "hits": await in_thread(views.search_corpus, query, table, k)}

    @server.tool(annotations=WRITES_HOME)
    @tool_errors
    async def migrate(project: str, ctx: Context) -> dict[str, Any]:
        """Write the Godot 4 copy of an analysed project into the data home (the source is never written)
        and return the summary, the patch (cut at 200,000 characters; the patch resource has it all) and
        every edit and manual item with its evidence. Re-analyses first what changed."""
        source = await in_thread(recorded_source, project)
        name, facts = await with_progress(ctx, None, lambda p: orchestrate.migrate(source, project,
                                                                                  on_stage=p.on_stage))
        doc = await in_thread(views.migration_document, name, facts)
        patch = Path(facts["patch"]).read_text(encoding="utf-8", errors="replace")
        return {**doc, "patch_text": patch[:PATCH_LIMIT], "patch_truncated": len(patch) > PATCH_LIMIT,
                "patch_resource": PATCH_URI.format(project=name)}

    if allow_verify:
        @server.tool(annotations=RUNS_GODOT)
        @tool_errors
        async def verify(project: str, run: bool = False) -> dict[str, Any]:
            """Run Godot 4 headless on a scratch copy of the project's migrated copy (migrate it first) and
            return what Godot said: scripts failing, scenes failing to load, properties dropped, input
            actions without a key, each problem traced to its fragment and edit. With `run`, the game
            itself runs (its main scene for 600 frames, then each scene with a script alone) beside the
            original in Godot 3.6: runtime errors, crashes and hangs, the original's nodes the copy kept.
            Godot runs the copy's code, in a sandbox (no network, writable only its scratch copy); the
            server was started with --allow-verify."""
            row = await in_thread(exclusively, orchestrate.verify, project, None, run)
            return await in_thread(views.verification_document, row)

    @server.resource(REPORT_URI, mime_type="text/markdown")
    def report(project: str) -> str:
        """A project's Markdown report: verdict, folders, files, each fragment's evidence and diff."""
        return _read(home.reports_dir() / f"{project}.md", f"project {project!r} has no report: analyse it first")

    @server.resource(PATCH_URI, mime_type="text/x-diff")
    def migration_patch(project: str) -> str:
        """The unified diff from a project to its Godot 4 copy (`git apply -p1`)."""
        return _read(default_paths(project)[1], f"project {project!r} has no patch: run the migrate tool first")

    return server


def _read(path: Path, missing: str) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ResourceError(missing) from None


def loopback(address: str) -> tuple[str, int]:
    """HOST:PORT (or PORT) on a loopback address: the server has no authentication, so it never listens wider."""
    host, _, port = address.rpartition(":")
    host = (host or "127.0.0.1").strip("[]")
    if not port.isdigit():
        raise orchestrate.PipelineError(f"--http {address}: expected HOST:PORT, e.g. 127.0.0.1:8765")
    try:
        is_loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        is_loopback = False
    if not is_loopback:
        raise orchestrate.PipelineError(f"--http {address}: only loopback addresses (127.0.0.1, ::1, localhost); "
                                        "the server has no authentication")
    return host, int(port)


def serve(roots: Sequence[str], http: str | None = None, allow_verify: bool = False) -> None:
    """Serve over stdio (the default) or streamable HTTP at `http` (HOST:PORT, loopback only)."""
    server = build_server(Roots(roots), allow_verify)
    home.ensure_dagster_home()
    if http is None:
        server.run("stdio")
    else:
        host, port = loopback(http)
        server.run("streamable-http", host=host, port=port)
