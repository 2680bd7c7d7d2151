"""Project ingestion: every file is listed, included or excluded with its reason; nothing is ever run."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest
from conftest import fixture_path

from gd_assets.core.ingest import (
    DOCUMENTS_REASON,
    IngestError,
    IngestOptions,
    Project,
    SourceFile,
    default_project_name,
    ingest,
    project_slug,
    raw_files,
)

PLAYER_GD = "extends Area2D\n\nsignal hit\n\nfunc _ready():\n\thide()\n"


def by_path(project: Project) -> dict[str, SourceFile]:
    return {f.path: f for f in project.files}


# ------------------------------------------------------------------------------------------ dumps


def test_mini_dodge_dump_keeps_dump_line_numbers():
    source = fixture_path("mini_dodge.dump.txt")
    project = ingest(source)
    assert (project.name, project.source_kind, project.source) == ("mini-dodge", "dump", str(source.resolve()))
    files = by_path(project)
    assert [f.path for f in project.files] == ["player.gd", "player.tscn", "project.godot"]
    assert {p: (f.kind, f.dump_start_line, f.line_count) for p, f in files.items()} == {
        "project.godot": ("project", 2, 5),
        "player.gd": ("gdscript", 9, 31),
        "player.tscn": ("scene", 42, 6),
    }
    dump_lines = source.read_text(encoding="utf-8").split("\n")
    player = files["player.gd"]
    assert all(f.included and f.reason is None for f in project.files)
    # player.gd line 8 (`func _ready():`) is dump line E016; line 31 is E039.
    assert player.lines()[7] == dump_lines[16 - 1] == "func _ready():"
    assert player.dump_line(8) == 16 and player.dump_line(31) == 39
    assert player.content_hash == hashlib.sha256(player.text.encode()).hexdigest()[:16]


def test_enemy_dump():
    project = ingest(fixture_path("enemy.dump.txt"))
    [enemy] = project.files
    assert (project.name, enemy.path, enemy.kind, enemy.dump_start_line) == ("enemy", "enemy.gd", "gdscript", 2)
    assert enemy.lines()[0] == "extends KinematicBody2D"


def test_dump_without_headers_is_an_ingest_error(tmp_path):
    dump = tmp_path / "notes.dump.txt"
    dump.write_text("extends Node\n# TODO move this\n")
    with pytest.raises(IngestError, match=r"notes\.dump\.txt has no '# <relative path>' headers"):
        ingest(dump)


def test_dump_with_a_path_twice_names_both_lines(tmp_path):
    dump = tmp_path / "twice.dump.txt"
    dump.write_text("# a.gd\nvar x\n\n# ./a.gd\nvar y\n")
    with pytest.raises(IngestError, match=r"'a.gd' appears twice.*dump lines 1 and 4"):
        ingest(dump)


def test_dump_entries_escaping_the_project_are_excluded(tmp_path):
    dump = tmp_path / "escape.dump.txt"
    dump.write_text("# ../evil.gd\nvar x\n\n# /abs.gd\nvar y\n\n# ok.gd\nvar z\n")
    files = by_path(ingest(dump))
    assert files["ok.gd"].included
    for path in ("../evil.gd", "/abs.gd"):
        assert not files[path].included
        assert files[path].reason == "dump entry escapes the project folder"
        assert files[path].text is None


def test_dump_documents_are_excluded_unless_asked(tmp_path):
    dump = tmp_path / "docs.dump.txt"
    dump.write_text("# README.md\nHello\n\n# main.gd\n# TODO move this\nextends Node\n")
    files = by_path(ingest(dump))
    assert (files["README.md"].kind, files["README.md"].included) == ("document", False)
    assert files["README.md"].reason == DOCUMENTS_REASON
    assert files["main.gd"].text == "# TODO move this\nextends Node\n"
    assert files["main.gd"].dump_start_line == 5
    assert ingest(dump, options=IngestOptions(include_documents=True)).files[0].included


def test_a_txt_file_is_a_dump_only_when_it_starts_with_a_header(tmp_path):
    dump = tmp_path / "project.txt"
    dump.write_text("\n# main.gd\nextends Node\n")
    project = ingest(dump)
    assert (project.source_kind, project.name, project.files[0].dump_start_line) == ("dump", "project", 3)
    notes = tmp_path / "notes.txt"
    notes.write_text("just some notes\n")
    with pytest.raises(IngestError, match="neither a .zip nor a text dump"):
        ingest(notes)


# ------------------------------------------------------------------------------------------ folders


@pytest.fixture
def messy_project(tmp_path) -> Path:
    root = tmp_path / "Mini Dodge"
    root.mkdir()
    (root / "project.godot").write_text('config_version=5\n\n[application]\nconfig/name="Mini Dodge"\n')
    (root / "player.gd").write_text(PLAYER_GD)
    (root / "README.md").write_text("# Mini Dodge\n\nA game.\n")
    (root / "LICENSE").write_text("MIT\n")
    (root / "icon.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    (root / "icon.png.import").write_text('[remap]\nimporter="texture"\n')
    (root / "nul.gd").write_bytes(b"extends Node\x00\x01\n")
    (root / "latin1.gd").write_bytes("extends Node # caf\xe9\n".encode("latin-1"))
    (root / "wide.gd").write_bytes("extends Node\n# \u00e9t\u00e9\n".encode("utf-16"))
    (root / "bom.gd").write_bytes(b"\xef\xbb\xbfextends Node\n")
    (root / "crlf.gd").write_bytes(b"extends Node\r\n\r\nfunc f():\r\n\tpass")
    (root / "old_mac.gd").write_bytes(b"extends Node\rvar a\r")
    (root / "Main.cs").write_text("class Main {}\n")
    with open(root / "big.gd", "wb") as big:  # sparse: 50 MB without writing them
        big.truncate(50_000_000)
    outside = tmp_path / "outside.gd"
    outside.write_text("extends Node\n")
    os.symlink(outside, root / "linked_out.gd")
    os.symlink("player.gd", root / "alias.gd")
    os.symlink("loop_b.gd", root / "loop_a.gd")
    os.symlink("loop_a.gd", root / "loop_b.gd")
    os.symlink(tmp_path, root / "linked_dir")
    (root / ".godot" / "imported").mkdir(parents=True)
    (root / ".godot" / "imported" / "icon.png-123.ctex").write_bytes(b"GST2\x00")
    (root / ".godot" / "global_script_class_cache.cfg").write_text("list=[]\n")
    (root / ".import").mkdir()
    (root / ".import" / "icon.png-abc.stex").write_bytes(b"GDST\x00")
    (root / "addons" / "old").mkdir(parents=True)
    (root / "addons" / "old" / "plugin.cfg").write_text('[plugin]\nname="old"\n')
    (root / "addons" / "old" / "water.shader").write_text("shader_type canvas_item;\n")
    (root / "scenes").mkdir()
    (root / "scenes" / "main.tscn").write_text("[gd_scene format=3]\n")
    (root / "scenes" / "theme.tres").write_text('[gd_resource type="Theme" format=3]\n')
    os.mkfifo(root / "pipe.gd")
    return root


def test_folder_files_have_the_right_kind_and_reason(messy_project):
    project = ingest(messy_project)
    assert (project.name, project.source_kind, project.revision) == ("mini-dodge", "folder", None)
    assert project.source == str(messy_project.resolve())
    files = by_path(project)
    assert [f.path for f in project.files] == sorted(files)
    expected = {
        "project.godot": ("project", True, None),
        "player.gd": ("gdscript", True, None),
        "alias.gd": ("gdscript", True, None),
        "bom.gd": ("gdscript", True, None),
        "wide.gd": ("gdscript", True, None),
        "crlf.gd": ("gdscript", True, None),
        "old_mac.gd": ("gdscript", True, None),
        "addons/old/plugin.cfg": ("config", True, None),
        "addons/old/water.shader": ("shader", True, None),
        "scenes/main.tscn": ("scene", True, None),
        "scenes/theme.tres": ("resource", True, None),
        "README.md": ("document", False, "documents are excluded by default in source-analysis mode"),
        "LICENSE": ("document", False, "documents are excluded by default in source-analysis mode"),
        "icon.png": ("binary", False, "binary file (.png)"),
        "nul.gd": ("binary", False, "binary file (NUL byte at offset 12)"),
        "latin1.gd": (
            "gdscript", False,
            "not UTF-8 (invalid byte 0xe9 at offset 18); also tried UTF-8 with BOM and UTF-16",
        ),
        "big.gd": ("gdscript", False, "too large: 50000000 bytes (limit 5000000)"),
        "linked_out.gd": ("gdscript", False, "symlink points outside the project"),
        "linked_dir": ("other", False, "symlink points outside the project"),
        "pipe.gd": ("gdscript", False, "not a regular file (device, socket or pipe)"),
    }
    for path, (kind, included, reason) in expected.items():
        assert (files[path].kind, files[path].included, files[path].reason) == (kind, included, reason), path
    assert files["Main.cs"].kind == "other"
    assert files["Main.cs"].reason.startswith("unsupported file type (.cs): ")
    for path in ("loop_a.gd", "loop_b.gd"):
        assert not files[path].included and files[path].reason.startswith("broken symlink")
    for path in ("icon.png.import", ".godot/imported/icon.png-123.ctex",
                 ".godot/global_script_class_cache.cfg", ".import/icon.png-abc.stex"):
        assert not files[path].included and "editor-generated" in files[path].reason, path
    for file in project.files:
        assert (file.text is not None) == file.included
        assert file.dump_start_line is None
    assert files["icon.png"].size == 16
    assert files["icon.png"].content_hash == hashlib.sha256((messy_project / "icon.png").read_bytes()).hexdigest()[:16]
    assert files["big.gd"].content_hash == ""  # past the size limit nothing is read


def test_included_text_is_normalised_to_editor_lines(messy_project):
    files = by_path(ingest(messy_project))
    assert files["crlf.gd"].text == "extends Node\n\nfunc f():\n\tpass"
    assert files["crlf.gd"].line_count == 4  # the last line has no newline and still counts
    assert files["old_mac.gd"].text == "extends Node\nvar a\n"
    assert files["old_mac.gd"].line_count == 2  # a final newline adds no line
    assert files["player.gd"].line_count == 6 and files["player.gd"].lines()[4] == "func _ready():"
    assert (files["bom.gd"].encoding, files["bom.gd"].text) == ("utf-8-sig", "extends Node\n")
    assert (files["wide.gd"].encoding, files["wide.gd"].text) == ("utf-16", "extends Node\n# \u00e9t\u00e9\n")
    assert files["player.gd"].encoding == "utf-8"
    raw = PLAYER_GD.encode()
    assert files["player.gd"].size == len(raw)
    assert files["player.gd"].content_hash == hashlib.sha256(raw).hexdigest()[:16]
    assert files["alias.gd"].text == PLAYER_GD  # a link inside the project reads its target


def test_options_include_documents_and_raise_the_size_limit(messy_project):
    files = by_path(ingest(messy_project, options=IngestOptions(include_documents=True)))
    assert files["README.md"].included and files["README.md"].text.startswith("# Mini Dodge")
    assert files["LICENSE"].included and files["LICENSE"].text == "MIT\n"
    files = by_path(ingest(messy_project, options=IngestOptions(max_file_bytes=10)))
    assert files["player.gd"].reason == f"too large: {len(PLAYER_GD)} bytes (limit 10)"


def test_project_name_can_be_given(messy_project):
    assert ingest(messy_project, name="My Game 2").name == "my-game-2"
    with pytest.raises(IngestError, match="empty project name"):
        ingest(messy_project, name="???")


def test_missing_path_is_an_error(tmp_path):
    with pytest.raises(IngestError, match="does not exist"):
        ingest(tmp_path / "nowhere")


def test_empty_folder_is_an_error(tmp_path):
    (tmp_path / "empty" / "sub").mkdir(parents=True)
    with pytest.raises(IngestError, match="contains no files"):
        ingest(tmp_path / "empty")


def test_a_project_with_nothing_included_is_returned_with_reasons(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "README.md").write_text("hello\n")
    project = ingest(tmp_path / "docs")
    assert [(f.path, f.included, f.reason) for f in project.files] == [("README.md", False, DOCUMENTS_REASON)]


# ------------------------------------------------------------------------------------------ zips


def test_zip_is_read_in_memory_and_escaping_entries_are_excluded(tmp_path):
    archive = tmp_path / "work" / "Space_Game.zip"
    archive.parent.mkdir()
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("space/", "")
        zf.writestr("space/project.godot", "config_version=4\r\n")
        zf.writestr("space/player.gd", PLAYER_GD)
        zf.writestr("space/art/ship.png", b"\x89PNG\x00")
        zf.writestr(zipfile.ZipInfo("../evil.gd"), "extends Node\n")
        zf.writestr(zipfile.ZipInfo("/abs.gd"), "extends Node\n")
        zf.writestr(zipfile.ZipInfo("C:/drive.gd"), "extends Node\n")
        zf.writestr(zipfile.ZipInfo("space/../../up.gd"), "extends Node\n")
    project = ingest(archive)
    assert (project.name, project.source_kind) == ("space-game", "zip")
    files = by_path(project)
    # The single folder wrapping the project is not part of the paths; directory entries are ignored.
    assert files["player.gd"].text == PLAYER_GD and files["player.gd"].included
    assert files["project.godot"].text == "config_version=4\n"
    assert files["art/ship.png"].reason == "binary file (.png)"
    for path in ("../evil.gd", "/abs.gd", "C:/drive.gd", "space/../../up.gd"):
        assert (files[path].included, files[path].reason) == (False, "zip entry escapes the project folder")
        assert files[path].text is None and files[path].content_hash == ""
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["Space_Game.zip", "work"]


def test_raw_files_of_a_zip_are_its_safe_entries_without_the_wrapper(tmp_path):
    archive = tmp_path / "game.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("game/project.godot", "config_version=4\n")
        zf.writestr("game/art/ship.png", b"\x89PNG\x00")
        zf.writestr(zipfile.ZipInfo("game/../../up.gd"), "extends Node\n")
    files = {path: read() for path, read in raw_files(str(archive), "zip")}
    assert files == {"project.godot": b"config_version=4\n", "art/ship.png": b"\x89PNG\x00"}


def test_raw_files_of_a_folder_skip_git_and_links_leaving_it(tmp_path):
    root = tmp_path / "game"
    (root / ".git").mkdir(parents=True)
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (root / "player.gd").write_text(PLAYER_GD)
    (tmp_path / "secret.txt").write_text("outside")
    (root / "leak.txt").symlink_to(tmp_path / "secret.txt")
    (root / "inside.gd").symlink_to(root / "player.gd")
    files = {path: read() for path, read in raw_files(str(root), "folder")}
    assert files == {"inside.gd": PLAYER_GD.encode(), "player.gd": PLAYER_GD.encode()}
    assert list(raw_files(str(root), "dump")) == []


def test_zip_folder_is_kept_when_it_is_not_a_project_wrapper(tmp_path):
    archive = tmp_path / "plugin.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("addons/old/plugin.cfg", '[plugin]\nname="old"\n')
        zf.writestr("addons/old/plugin.gd", "tool\nextends EditorPlugin\n")
    assert [f.path for f in ingest(archive).files] == ["addons/old/plugin.cfg", "addons/old/plugin.gd"]


def test_zip_entries_past_the_size_limit_are_not_read(tmp_path):
    archive = tmp_path / "bomb.zip"
    with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("big.gd", b"#" * 2_000_000)
        zf.writestr("art.png", b"\x00" * 2_000_000)
    [art, big] = ingest(archive, options=IngestOptions(max_file_bytes=1000)).files
    assert big.reason == "too large: 2000000 bytes (limit 1000)" and big.content_hash == ""
    assert art.reason == "binary file (.png)" and art.content_hash == ""


def test_broken_zip_is_an_error(tmp_path):
    archive = tmp_path / "bad.zip"
    archive.write_bytes(b"not a zip")
    with pytest.raises(IngestError, match="not a readable zip archive"):
        ingest(archive)


# ------------------------------------------------------------------------------------------ git

HOOK = "#!/bin/sh\ntouch '{marker}'\n"


def _git(*args: str, cwd: Path | None = None) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def hostile_repo(tmp_path, monkeypatch) -> tuple[Path, Path, Path]:
    """A repository whose hooks, template and LFS filter would each leave a marker file if run."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    marker = tmp_path / "hook-ran"
    filter_marker = tmp_path / "filter-ran"
    hooks = tmp_path / "hooks"
    template = tmp_path / "template"
    for folder in (hooks, template / "hooks"):
        folder.mkdir(parents=True)
        script = folder / "post-checkout"
        script.write_text(HOOK.format(marker=marker))
        script.chmod(0o755)
    config = tmp_path / "gitconfig"
    config.write_text(
        "[user]\n\tname = Test\n\temail = test@example.com\n"
        f"[init]\n\ttemplateDir = {template}\n\tdefaultBranch = main\n"
        f"[core]\n\thooksPath = {hooks}\n"
        f"[filter \"lfs\"]\n\tsmudge = touch '{filter_marker}'; cat\n\tclean = cat\n"
    )
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    repo = tmp_path / "Hostile Game"
    repo.mkdir()
    _git("init", "--quiet", cwd=repo)
    (repo / "player.gd").write_text(PLAYER_GD)
    (repo / ".gitattributes").write_text("*.gd filter=lfs\n")
    (repo / "project.godot").write_text("config_version=5\n")
    _git("add", ".", cwd=repo)
    _git("commit", "--quiet", "-m", "init", cwd=repo)
    for path in (marker, filter_marker):
        path.unlink(missing_ok=True)
    # A plain clone of this repository does run the hook and the filter.
    _git("clone", "--quiet", repo.as_uri(), str(tmp_path / "control"))
    assert marker.exists() and filter_marker.exists()
    marker.unlink()
    filter_marker.unlink()
    return repo, marker, filter_marker


def test_git_url_is_cloned_without_hooks_or_filters(hostile_repo):
    repo, marker, filter_marker = hostile_repo
    project = ingest(repo.as_uri())
    assert not marker.exists(), "a git hook ran during the clone"
    assert not filter_marker.exists(), "a smudge filter ran during the clone"
    assert (project.source_kind, project.source, project.name) == ("git", repo.as_uri(), "hostile-game")
    assert project.revision == _git("rev-parse", "HEAD", cwd=repo)
    files = by_path(project)
    assert sorted(files) == [".gitattributes", "player.gd", "project.godot"]
    assert files["player.gd"].text == PLAYER_GD


def test_raw_files_of_a_git_source_come_from_a_fresh_safe_clone(hostile_repo):
    repo, marker, filter_marker = hostile_repo
    files = {path: read() for path, read in raw_files(repo.as_uri(), "git")}
    assert not marker.exists() and not filter_marker.exists()
    assert sorted(files) == [".gitattributes", "player.gd", "project.godot"]
    assert files["player.gd"] == PLAYER_GD.encode()


def test_bare_repository_path_is_cloned(hostile_repo, tmp_path):
    repo, marker, _ = hostile_repo
    bare = tmp_path / "game.git"
    _git("clone", "--quiet", "--bare", "--template=", str(repo), str(bare))
    project = ingest(bare)
    assert not marker.exists()
    assert (project.source_kind, project.name) == ("git", "game")
    assert project.revision == _git("rev-parse", "HEAD", cwd=repo)


def test_working_tree_is_read_as_a_folder_without_running_git(hostile_repo):
    repo, marker, _ = hostile_repo
    (repo / "player.gd").write_text(PLAYER_GD + "# edited\n")  # uncommitted work is what is read
    project = ingest(repo)
    assert not marker.exists()
    assert (project.source_kind, project.name) == ("folder", "hostile-game")
    assert project.revision == _git("rev-parse", "HEAD", cwd=repo)
    assert not any(f.path == ".git" or f.path.startswith(".git/") for f in project.files)
    assert by_path(project)["player.gd"].text.endswith("# edited\n")


def test_command_running_git_transports_are_refused(tmp_path):
    marker = tmp_path / "ext-ran"
    with pytest.raises(IngestError, match="refused"):
        ingest(f"ext::sh -c touch% {marker}")
    assert not marker.exists()


def test_unreachable_git_url_is_an_error(tmp_path):
    with pytest.raises(IngestError, match="cannot clone"):
        ingest((tmp_path / "no-such-repo.git").as_uri())


# ------------------------------------------------------------------------------------------ names


@pytest.mark.parametrize(
    "text, slug",
    [
        ("Mini Dodge", "mini-dodge"),
        ("mini_dodge", "mini-dodge"),
        ("  Café  Racer!! ", "cafe-racer"),
        ("game.v2", "game.v2"),
        ("..hidden..", "hidden"),
    ],
)
def test_project_slug(text, slug):
    assert project_slug(text) == slug


@pytest.mark.parametrize(
    "source, name",
    [
        ("/games/Mini Dodge/", "mini-dodge"),
        ("/dumps/mini_dodge.dump.txt", "mini-dodge"),
        ("/zips/Space_Game.zip", "space-game"),
        ("https://github.com/someone/My-Game.git", "my-game"),
        ("git@github.com:someone/old_game.git", "old-game"),
        ("file:///srv/Hostile%20Game", "hostile-game"),
    ],
)
def test_default_project_name_comes_from_the_source_name(source, name):
    assert default_project_name(source) == name


def test_project_slug_rejects_names_without_letters_or_digits():
    with pytest.raises(ValueError, match="empty project name"):
        project_slug("!!!")
