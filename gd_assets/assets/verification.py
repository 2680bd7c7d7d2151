"""`project_verification`: what Godot 4 itself says about a project's migrated copy, and, with `run`, what the
copy does when it runs beside the original in Godot 3.6.

Explicit only: neither `analyze` nor `migrate` materialises it, and the MCP server reaches it only
when started with `--allow-verify`, since Godot runs the copy's tool scripts and autoloads as the
editor would (and, with `run`, all of the game's code). Every engine runs in a sandbox (no network,
nothing writable but its scratch copy and home, time and memory limits) on a scratch copy, never on
the copy or the source; each error Godot reports is traced to its fragment and the edit (or untouched
line) it comes from.
"""

import base64
import datetime as dt
import io
import json
import shutil
import tempfile
from pathlib import Path

import dagster as dg
from PIL import Image

from gd_assets import home, store
from gd_assets.assets.metadata import md_table
from gd_assets.assets.migration import project_migration
from gd_assets.core.display import DisplayUnavailable, find_display
from gd_assets.core.engines import GodotNotFound, find_godot, find_renderer3
from gd_assets.core.frames import attach_manual, seen_figures
from gd_assets.core.game_run import (
    FPS,
    FRAMES,
    PLAYS,
    RUN_TIMEOUT,
    SCENE_FRAMES,
    SHOT_EVERY,
    PlaySettings,
    RunSettings,
    compare,
    run_figure_lines,
    run_figures,
)
from gd_assets.core.ingest import IngestError, raw_files
from gd_assets.core.migration import migrated_path
from gd_assets.core.play import PlayScriptError, policy, read_script
from gd_assets.core.report import verification_markdown, with_verification
from gd_assets.core.rewrite.rules import load_rules
from gd_assets.core.sandbox import SandboxUnavailable, find_sandbox
from gd_assets.core.verify import (
    CHECK_TIMEOUT,
    FIGURES,
    IMPORT_TIMEOUT,
    Problem,
    Watch,
    attribute,
    causes,
    figure_lines,
    input_actions,
    verify,
)
from gd_assets.partitions import projects_partitions

RUN_LIMITS = 5000  # nodes and printed lines kept per run in the stored report


class VerificationConfig(dg.Config):
    """`godot`: a Godot 4 executable (empty: $GODOT4, $GODOT, `godot4` or `godot` on PATH); `run`: also run
    the game (the main scene `frames` frames at `fps`, then each scene with a script `scene_frames` frames),
    and the original beside it in `godot3` (empty: $GODOT3, `godot3`, `godot3-server` or `godot` on PATH); with
    `watch` (and a display), both also played rendered for `frames` frames with the same input (`play`, an
    input script, or a seeded player), a frame kept every `shot_every`, each engine `plays` times."""

    godot: str = ""
    godot3: str = ""
    run: bool = False
    frames: int = FRAMES
    scene_frames: int = SCENE_FRAMES
    fps: int = FPS
    watch: bool = True      # with `run`: also play both rendered, with input, and compare frames and traces
    play: str = ""          # an input script (play.py) instead of the seeded player
    shot_every: int = SHOT_EVERY
    plays: int = PLAYS
    run_timeout: float = RUN_TIMEOUT
    import_timeout: float = IMPORT_TIMEOUT
    check_timeout: float = CHECK_TIMEOUT


def _texts(root: Path, paths: list[str]) -> dict[str, str]:
    out = {}
    for path in paths:
        try:
            out[path] = (root / path).read_bytes().decode("utf-8", "replace").replace("\r\n", "\n")
        except OSError:
            continue
    return out


def write_original(project: str, dest: Path) -> str:
    """The project's source as it was analysed, into `dest` (binary files too, for folder, zip and git
    sources); returns why it could not be written whole ("" when it was)."""
    row = store.project_row(project)
    texts = {f["path"]: f for f in store.project_files(project).to_dicts() if f["included"] and f["text"] is not None}
    written = 0
    try:
        for path, read in raw_files(row["source"], row["source_kind"]):
            target = dest / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(read())
            written += 1
    except (IngestError, OSError) as error:
        return f"the source {row['source']} cannot be read again ({error}): the original was not run"
    if not written:  # a dump: its text files only
        for path, f in texts.items():
            (dest / path).parent.mkdir(parents=True, exist_ok=True)
            (dest / path).write_text(f["text"], encoding="utf-8")
    if not (dest / "project.godot").is_file():
        return "the source has no project.godot at its top: the original was not run"
    return ""


def _trimmed(run) -> dict | None:
    if run is None:
        return None
    doc = run.to_json()
    for part in ("main", "scenes"):
        doc[part]["tree"] = doc[part]["tree"][:RUN_LIMITS]
        doc[part]["printed"] = doc[part]["printed"][:RUN_LIMITS]
    return doc


@dg.asset(
    partitions_def=projects_partitions,
    deps=[project_migration],
    group_name="projects",
    code_version="verification-3",
    kinds={"godot"},
    description="Godot 4 on a scratch copy of the migrated project: scripts failing, scenes failing to load, "
                "properties dropped, input actions without a key, each traced to its fragment and edit; with `run`, "
                "the game run in a sandbox beside the original in Godot 3.6: runtime errors, crashes, the nodes kept.",
)
def project_verification(context: dg.AssetExecutionContext, config: VerificationConfig) -> dg.MaterializeResult:
    project = context.partition_key
    migration = store.one_row("migrations", project)
    if migration is None or not Path(migration["out"]).is_dir():
        raise dg.Failure(f"project {project!r} has no migrated copy: run `gd-assets migrate` first")
    try:
        godot = find_godot(config.godot or None)
        sandbox = find_sandbox()
    except (GodotNotFound, SandboxUnavailable) as error:
        raise dg.Failure(str(error)) from error
    godot3, why = None, ""
    if config.run:
        try:
            godot3 = find_godot(config.godot3 or None, major="3")
        except GodotNotFound as error:
            why = str(error)
    copy = Path(migration["out"])
    context.log.info(f"{project}: Godot {godot.version} on a scratch copy of {copy}, {sandbox.describe()}")
    settings = RunSettings(config.frames, config.scene_frames, config.fps, timeout=config.run_timeout) \
        if config.run else None
    pictures = home.reports_dir() / f"{project}.frames"
    with tempfile.TemporaryDirectory(prefix="gd-original-") as tmp:
        original = Path(tmp) / "original"
        if godot3 is not None:
            original.mkdir()
            why = write_original(project, original)
        watch, unseen = _watch(config, copy, original if godot3 is not None and not why else None, godot3, pictures)
        if unseen:
            context.log.warning(f"{project}: {unseen}")
        report, runs = verify(copy, godot, config.import_timeout, config.check_timeout, sandbox, settings,
                              original if godot3 is not None and not why else None, godot3, why, watch)
    originals = {f["path"]: f["text"] for f in store.project_files(project, included_only=True).to_dicts()
                 if f["text"] is not None}
    renamed = json.loads(migration["renamed"])
    run_errors = runs.copy.errors() if runs else []
    wanted = sorted({p.path for p in report.problems if p.path} | {e.path for e in run_errors if e.path})
    fragments = store.project_fragments(project).to_dicts()
    rewrites = {r["key"]: {"edits": json.loads(r["edits"]), "manual": json.loads(r["manual"])}
                for r in store.project_rewrites(project).to_dicts()}
    judged = {j["key"]: j for j in store.query(
        "SELECT key, signal, migration_needed FROM judgements WHERE project = ?", [project]).to_dicts()}
    migrated = _texts(copy, wanted)
    problems = attribute(report.problems, originals, migrated, renamed, fragments, rewrites, judged)
    figures = {**report.figures(), "causes": causes(problems), "failing": report.failing, "through": report.through,
               "asset_only": report.asset_only}
    run_doc = None
    if runs is not None:
        traced = attribute([Problem(e.path, e.line, e.message, "runtime") for e in run_errors], originals, migrated,
                           renamed, fragments, rewrites, judged)
        for doc, error in zip(traced, run_errors):
            doc.update(scene=error.scene, error_kind=error.kind, own=False)
        comparison = None
        if runs.original is not None:
            rules = load_rules(str(home.corpora_db_path()))
            scripts = {p: migrated_path(p) for p in originals}
            comparison = compare(runs.original, runs.copy, traced, rules.scene_class4, scripts)
            for doc in comparison["errors_own"]:
                doc["own"] = True
            comparison.pop("errors_own"), comparison.pop("errors_new")
        figures["run"] = run_figures(runs.copy, runs.original, comparison, traced)
        if config.watch:
            if runs.seen:
                manual = {}
                for fragment in fragments:
                    for item in rewrites.get(fragment["key"], {}).get("manual", []):
                        manual.setdefault(fragment["path"], []).append(item["what"])
                attach_manual(runs.seen, manual, renamed)
            figures["run"]["seen"] = seen_figures(runs.seen, runs.plays, unseen or runs.seen_missing)
        run_doc = {"sandbox": sandbox.describe(), "copy": _trimmed(runs.copy), "original": _trimmed(runs.original),
                   "original_missing": runs.original_missing, "errors": traced, "comparison": comparison,
                   "plays": {side: [p.to_json() for p in plays] for side, plays in runs.plays.items()},
                   "seen": runs.seen}
    store.upsert("verifications", store.frame("verifications", [{
        "project": project, "copy": str(copy), "godot": godot.version, "figures": json.dumps(figures),
        "problems": json.dumps(problems, ensure_ascii=False),
        "run": json.dumps(run_doc, ensure_ascii=False) if run_doc is not None else None,
        "verified_at": dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)}]))
    md_path = home.reports_dir() / f"{project}.verify.md"
    md_path.write_text(verification_markdown(project, figures, figure_lines(figures), problems, run_doc))
    seen = run_doc.get("seen") if run_doc else None
    for page, is_html in ((home.reports_dir() / f"{project}.md", False), (home.reports_dir() / f"{project}.html", True)):
        if page.exists():  # the project's report gets the figures too
            page.write_text(with_verification(page.read_text(), godot.version, figure_lines(figures), is_html, seen,
                                              pictures.name))
    context.log.info(f"{project}: " + "; ".join(figure_lines(figures)))
    return dg.MaterializeResult(metadata={
        "godot": godot.version,
        **{label: report.figures()[key] for label, key, _ in FIGURES},
        "config_version": report.config_version or "",
        "timed out": report.timed_out,
        "causes": dg.MetadataValue.md(md_table(["cause", "problems"], figures["causes"].items())),
        "failing files": dg.MetadataValue.md(md_table(["file", "first error"], [
            (path, f"fails through {report.through[path]}" if path in report.through else error)
            for path, error in list(report.failing.items())[:200]])),
        "problems": dg.MetadataValue.md(md_table(
            ["file", "line", "problem", "fragment", "cause"],
            [(p["path"], p["line"] or "", p["message"][:160], p["fragment"] or "", p["cause"]) for p in problems[:300]])),
        **({"game run": dg.MetadataValue.md("\n".join(f"- {line}" for line in run_figure_lines(figures["run"]))),
            "runtime errors": figures["run"]["runtime_errors"],
            "nodes kept": figures["run"]["nodes_matched_share"] if figures["run"]["nodes_matched_share"] is not None
            else "", "sandbox": sandbox.describe()} if run_doc is not None else {}),
        **(_seen_metadata(seen, figures["run"]["seen"]) if seen else {}),
        "report": dg.MetadataValue.path(str(md_path)),
    })


def _watch(config: VerificationConfig, copy: Path, original: Path | None, godot3, pictures: Path) -> tuple[Watch | None, str]:
    """What the played run needs, or why it cannot be had (no display: the run goes on headless, without frames)."""
    if not (config.run and config.watch):
        return None, ""
    try:
        display = find_display()
    except DisplayUnavailable as error:
        return None, str(error)
    try:
        events = read_script(Path(config.play)) if config.play else \
            policy(input_actions(((original or copy) / "project.godot").read_text(encoding="utf-8", errors="replace")),
                   config.frames)
    except PlayScriptError as error:
        raise dg.Failure(str(error)) from error
    renderer3, missing = None, ""
    if original is not None:
        try:
            renderer3 = find_renderer3(godot3)
        except GodotNotFound as error:
            missing = str(error)
    shutil.rmtree(pictures, ignore_errors=True)
    settings = PlaySettings(config.frames, config.fps, events=tuple(events), shot_every=config.shot_every,
                            plays=max(1, config.plays))
    surface = load_rules(str(home.corpora_db_path())).surface
    return Watch(settings, display, renderer3, home.plays_dir(), pictures, missing,
                 lambda cls: "Control" in surface.ancestors("3", cls)), ""


def _seen_metadata(seen: dict, f: dict) -> dict:
    """The played run in the asset's metadata: its figures, the worst frames (small pictures) and the trace."""
    rows = [(x["frame"], x["scene"], x["ssim"], x["worst"], "; ".join(d["what"] for d in x["findings"][:4])[:300])
            for x in seen["frames"] if not x["matches"]][:12]
    pictures = []
    for x in [x for x in seen["frames"] if x["image"]][:3]:
        with Image.open(x["image"]) as image:
            image.thumbnail((720, 200))
            buffer = io.BytesIO()
            image.convert("RGB").save(buffer, "JPEG", quality=70)
        pictures.append(f"**frame {x['frame']}** (original | copy | difference)\n\n"
                        f"![frame {x['frame']}](data:image/jpeg;base64,{base64.b64encode(buffer.getvalue()).decode()})")
    return {
        "frames matching": f"{f['frames_matching']} of {f['frames_compared']}",
        "first divergence": f["first_divergence"] if f["first_divergence"] is not None else "none",
        "worst frames": dg.MetadataValue.md(md_table(["frame", "scene", "SSIM", "worst region", "differs"], rows)),
        **({"worst frame pictures": dg.MetadataValue.md("\n\n".join(pictures))} if pictures else {}),
        "play trace": dg.MetadataValue.md(md_table(["frame", "node", "class", "differs"], [
            (d["frame"], d["node"], d["class"], d["differs"][:200]) for d in seen["trace"]["diverging"]])),
    }
