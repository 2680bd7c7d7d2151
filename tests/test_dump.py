"""The dump format: `# <relative path>` headers are boundaries, every body line keeps its dump line."""

from __future__ import annotations

import pytest
from conftest import fixture_path

from gd_assets.core.dump import DumpError, header_path, parse_dump, to_dump
from gd_assets.core.ingest import SourceFile


def _file(path: str, text: str, included: bool = True) -> SourceFile:
    return SourceFile(path, "gdscript", len(text), None, "", included, None if included else "x", text, "utf-8")


def test_mini_dodge_files_start_at_their_dump_lines():
    text = fixture_path("mini_dodge.dump.txt").read_text(encoding="utf-8")
    entries = parse_dump(text)
    assert [(path, start) for path, start, _ in entries] == [
        ("project.godot", 2), ("player.gd", 9), ("player.tscn", 42),
    ]
    dump_lines = text.split("\n")
    for _path, start, body in entries:
        for i, line in enumerate(body.split("\n")[:-1], start=1):
            assert line == dump_lines[start + i - 2]  # body line i is dump line start + i - 1


def test_mini_dodge_bodies_drop_the_separator_and_never_include_a_header():
    text = fixture_path("mini_dodge.dump.txt").read_text(encoding="utf-8")
    bodies = {path: body for path, _, body in parse_dump(text)}
    assert bodies["project.godot"].startswith("config_version=5\n")
    assert bodies["project.godot"].endswith('run/main_scene="res://player.tscn"\n')
    assert bodies["player.gd"].startswith("extends Area2D\n")
    assert bodies["player.gd"].endswith("\t$CollisionShape2D.disabled = false\n")
    assert len(bodies["player.gd"].split("\n")) - 1 == 31  # player.gd lines 1..31 are E009..E039
    assert bodies["player.tscn"].endswith('script = ExtResource("1")\n')
    assert not any(line.startswith("# ") for body in bodies.values() for line in body.split("\n"))


def test_enemy_gd_starts_at_dump_line_2():
    text = fixture_path("enemy.dump.txt").read_text(encoding="utf-8")
    [(path, start, body)] = parse_dump(text)
    assert (path, start) == ("enemy.gd", 2)
    assert body.split("\n")[0] == "extends KinematicBody2D"
    assert body.split("\n")[5] == "\tvelocity = move_and_slide(velocity)"


@pytest.mark.parametrize(
    "line, path",
    [
        ("# player.gd", "player.gd"),
        ("# project.godot", "project.godot"),
        ("# addons/old_plugin/plugin.cfg", "addons/old_plugin/plugin.cfg"),
        ("# shaders/water.gdshader", "shaders/water.gdshader"),
        ("# docs/README.md", "docs/README.md"),
        ("# README", "README"),
        ("# player.gd  ", "player.gd"),
        ("# TODO move this", None),
        ("# player.gd is great", None),
        ("# TODO", None),
        ("# see res://player.gd", None),
        ("# https://docs.godotengine.org/en/stable/index.html", None),
        ("#player.gd", None),
        ("  # player.gd", None),
        ("## player.gd", None),
        ("# icon.png", None),
        ("# version 1.0", None),
        ("# notes.cs", None),
    ],
)
def test_header_is_a_path_with_a_known_extension_alone_on_its_line(line, path):
    assert header_path(line) == path


def test_gdscript_comments_stay_in_the_body():
    text = "# enemy.gd\n# TODO move this\nextends Node\n# player.gd is great\nvar x = 1\n"
    [(path, start, body)] = parse_dump(text)
    assert (path, start) == ("enemy.gd", 2)
    assert body == "# TODO move this\nextends Node\n# player.gd is great\nvar x = 1\n"


def test_leading_blank_lines_stay_and_trailing_blank_lines_go():
    text = "# a.gd\n\nextends Node\n\n\n\n# b.gd\nextends Node2D\n   \n"
    assert parse_dump(text) == [("a.gd", 2, "\nextends Node\n"), ("b.gd", 8, "extends Node2D\n")]


def test_a_header_with_no_body_gives_an_empty_file():
    assert parse_dump("# a.gd\n# b.gd\nvar x\n") == [("a.gd", 2, ""), ("b.gd", 3, "var x\n")]


def test_crlf_dump_keeps_line_numbers():
    text = "# a.gd\r\nextends Node\r\n\r\n# b.gd\r\nvar y\r\n"
    assert parse_dump(text) == [("a.gd", 2, "extends Node\n"), ("b.gd", 5, "var y\n")]


def test_dump_without_headers_is_an_error():
    with pytest.raises(DumpError, match=r"has no '# <relative path>' headers"):
        parse_dump("extends Node\n\nfunc _ready():\n\tpass\n")
    with pytest.raises(DumpError, match=r"has no '# <relative path>' headers"):
        parse_dump("")


def test_text_before_the_first_header_is_an_error_naming_its_line():
    with pytest.raises(DumpError, match="dump line 2 comes before the first"):
        parse_dump("\nextends Node\n# a.gd\nvar x\n")


def test_a_path_appearing_twice_names_both_header_lines():
    with pytest.raises(DumpError, match=r"'a.gd' appears twice.*dump lines 1 and 4"):
        parse_dump("# a.gd\nvar x\n\n# a.gd\nvar y\n")


def test_to_dump_reproduces_the_fixture():
    text = fixture_path("mini_dodge.dump.txt").read_text(encoding="utf-8")
    files = [_file(path, body) for path, _, body in parse_dump(text)]
    expected = text if text.endswith("\n") else text + "\n"
    assert to_dump(files) == expected


def test_to_dump_then_parse_dump_round_trips_paths_and_bodies():
    files = [
        _file("player.gd", "extends Area2D\n\n# TODO move this\nsignal hit\n"),
        _file("addons/x/a.gd", "\nextends Node"),  # leading blank line, no final newline
        _file("empty.gd", ""),
        _file("project.godot", "config_version=5\n"),
    ]
    entries = parse_dump(to_dump(files))
    assert [path for path, _, _ in entries] == [f.path for f in files]
    assert [body for _, _, body in entries] == [
        "extends Area2D\n\n# TODO move this\nsignal hit\n", "\nextends Node\n", "", "config_version=5\n",
    ]


def test_to_dump_leaves_out_excluded_files():
    dump = to_dump([_file("a.gd", "var a\n"), _file("README.md", "hello\n", included=False)])
    assert dump == "# a.gd\nvar a\n"
