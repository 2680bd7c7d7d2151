"""`verify --run`, seen and played: the original in Godot 3.6 and its copy in Godot 4.6 rendered with the same input,
their frames compared node by node and tile by tile against the engines' noise, their play traces frame by frame."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import FIXTURES
from PIL import Image, ImageDraw
from test_godot4_migration import run_cli

from gd_assets import home, orchestrate
from gd_assets.core import frames, game_run, play, verify
from gd_assets.core.verify import input_actions

GAME = FIXTURES / "frames-game"
FONTS = (Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"),)


# --- traces and frames, on hand-made data ------------------------------------------------------------------------


def _trace(path: Path, snapshots: dict[int, list[tuple]]) -> Path:
    """A trace.tsv as the run tools write it: per frame, (path, class, visible, x,y, rect, text, font)."""
    lines = []
    for frame, nodes in snapshots.items():
        lines.append(f"F\t{frame}\tres://Main.tscn\t200.0,100.0")
        for node, cls, visible, where, rect, text, font in nodes:
            lines.append("\t".join(["N", node, cls, visible, where, "0", "1,1", rect, text, font, "", "", ""]))
    path.mkdir(parents=True, exist_ok=True)
    (path / "trace.tsv").write_text("\n".join(lines) + "\n")
    return path


def test_the_play_trace_names_the_first_frame_and_the_nodes_that_leave_the_original_beyond_its_noise(tmp_path):
    crate = lambda y: ("Main/Crate", "RigidBody2D", "1", f"300,{y}", "", "", "")  # noqa: E731
    pile = lambda y: ("Main/Pile", "RigidBody2D", "1", f"100,{y}", "", "", "")  # noqa: E731
    title = lambda text: ("Main/Title", "Label", "1", "20,10", "20,10,100,20", text, "size:44")  # noqa: E731
    scroll = ("Main/List/_v_scroll", "VScrollBar", "1", "0,0", "", "", "")  # Godot 3's own child: Godot 4 hides it
    # the original's two runs agree but for the pile, whose rigid bodies drift from frame 20 (run-to-run noise)
    original = [_trace(tmp_path / f"o{n}", {10: [crate(61), pile(50), title("Go"), scroll],
                                           20: [crate(65), pile(70 + n * 3), title("Go"), scroll],
                                           30: [crate(72), pile(90 + n * 3), title("Go!"), scroll]}) for n in (1, 2)]
    copy = [_trace(tmp_path / f"c{n}", {10: [crate(61.5), pile(50), title("Go")],
                                       20: [crate(65), pile(74), title("Go")],
                                       30: [crate(172), pile(96), title("Gone")]}) for n in (1, 2)]
    compared = frames.compare_traces([frames.read_trace(p / "trace.tsv") for p in original],
                                     [frames.read_trace(p / "trace.tsv") for p in copy])
    assert compared["first_divergence"] == 30 and compared["within_noise_until"] == 20
    assert [(d["node"], d["frame"]) for d in compared["nodes_at_first"]] == [("Main/Crate", 30), ("Main/Title", 30)]
    assert "at (300, 172) where the original is at (300, 72)" in compared["nodes_at_first"][0]["differs"]
    assert "text 'Gone' where the original has 'Go!'" in compared["nodes_at_first"][1]["differs"]
    # the pile is off by 3 and 1 px: within what the original's own runs differ by
    assert compared["nodes_diverging"] == 2

    same = frames.compare_traces([frames.read_trace(p / "trace.tsv") for p in original],
                                 [frames.read_trace(p / "trace.tsv") for p in original])
    assert same["first_divergence"] is None and same["within_noise_until"] == 30


def test_a_control_laid_out_elsewhere_is_left_to_the_frames_and_a_body_is_not(tmp_path):
    """Godot 4's default theme draws widgets larger, so containers place their Controls elsewhere in any port:
    the trace judges bodies and sprites by position, Controls by text and visibility only."""
    menu = lambda y: ("Main/Menu/Start", "Button", "1", f"20,{y}", "20,40,80,20", "Start", "default:14")  # noqa: E731
    ship = lambda x: ("Main/Ship", "Sprite", "1", f"{x},50", "", "", "")  # noqa: E731
    original = [frames.read_trace(_trace(tmp_path / "o", {10: [menu(40), ship(100)], 20: [menu(40), ship(110)]})
                                  / "trace.tsv")]
    copy = [frames.read_trace(_trace(tmp_path / "c", {10: [menu(52), ship(100)], 20: [menu(52), ship(130)]})
                              / "trace.tsv")]
    laid_out = lambda cls: cls == "Button"  # noqa: E731
    compared = frames.compare_traces(original, copy, laid_out=laid_out)
    assert compared["first_divergence"] == 20 and [d["node"] for d in compared["nodes_at_first"]] == ["Main/Ship"]
    assert frames.compare_traces(original, copy)["nodes_at_first"][0]["node"] == "Main/Menu/Start"


def _frame(path: Path, title_size: int = 40, ship: tuple[int, int] = (150, 60), noise: bool = False) -> Path:
    image = Image.new("RGB", (200, 100), (30, 40, 70))
    draw = ImageDraw.Draw(image)
    draw.text((10, 5), "Frames", fill=(255, 255, 255), font_size=title_size)
    draw.rectangle([ship[0], ship[1], ship[0] + 15, ship[1] + 15], fill=(200, 60, 60))
    draw.line([ship[0] + 2, ship[1] + 2, ship[0] + 13, ship[1] + 13], fill=(255, 255, 255), width=2)
    if noise:  # a corner where the engine's own runs differ
        draw.rectangle([0, 80, 30, 99], fill=(90, 200, 90))
    path.parent.mkdir(parents=True, exist_ok=True)
    image.save(path)
    return path


def _snapshot_nodes(title_font: str, ship: tuple[int, int]) -> list[tuple]:
    return [("Main/Title", "Label", "1", "10,5", "10.0,5.0,150.0,45.0", "Frames", title_font),
            ("Main/Ship", "Sprite", "1", f"{ship[0] + 8},{ship[1] + 8}", f"{ship[0]}.0,{ship[1]}.0,16.0,16.0", "", "")]


def test_a_lost_font_size_and_a_moved_sprite_are_found_and_the_same_frame_matches(tmp_path):
    original = _frame(tmp_path / "o" / "f000060.png")
    trace_o = frames.read_trace(_trace(tmp_path / "o", {60: _snapshot_nodes("size:44", (150, 60))}) / "trace.tsv")

    same = frames.compare_frame(60, original, _frame(tmp_path / "same.png"), trace_o, trace_o)
    assert same.matches and same.worst > 0.99

    small = _frame(tmp_path / "small.png", title_size=14)
    trace_small = frames.read_trace(_trace(tmp_path / "s", {60: _snapshot_nodes("default:16", (150, 60))}) / "trace.tsv")
    found = frames.compare_frame(60, original, small, trace_o, trace_small)
    assert [(f["kind"], f["node"]) for f in found.findings] == [("font", "Main/Title")]
    assert found.findings[0]["what"] == "font size 16 for 44 (the engine's default)"

    moved = _frame(tmp_path / "moved.png", ship=(150, 30))
    trace_moved = frames.read_trace(_trace(tmp_path / "m", {60: _snapshot_nodes("size:44", (150, 30))}) / "trace.tsv")
    found = frames.compare_frame(60, original, moved, trace_o, trace_moved)
    kinds = {(f["kind"], f["node"]) for f in found.findings}
    assert kinds == {("moved", "Main/Ship"), ("pixels", "Main/Ship")}, found.findings
    assert not any(f["kind"] == "tile" for f in found.findings)   # the ship's tiles are the ship's difference


def test_pixels_where_the_engines_own_runs_differ_are_not_judged(tmp_path):
    original = _frame(tmp_path / "o.png")
    twin = _frame(tmp_path / "twin.png", noise=True)     # the original's second run drew that corner otherwise
    trace = frames.read_trace(_trace(tmp_path / "t", {60: _snapshot_nodes("size:44", (150, 60))}) / "trace.tsv")
    copy = _frame(tmp_path / "c.png", noise=True)
    assert not frames.compare_frame(60, original, copy, trace, trace, twin).findings
    found = frames.compare_frame(60, original, copy, trace, trace)
    assert [f["kind"] for f in found.findings] == ["tile"] * len(found.findings) and found.findings


def test_a_difference_names_the_manual_items_left_in_what_draws_it():
    seen = {"frames": [{"scene": "Main.tscn", "findings": [
        {"kind": "font", "node": "Main/Title", "script": ""},
        {"kind": "moved", "node": "Main/Ship", "script": "ship.gd"},
        {"kind": "moved", "node": "Main/Crate", "script": ""}]}],
        "trace": {"diverging": [{"node": "Main/Ship", "script": "ship.gd"}]}}
    manual = {"Main.tscn": ["`size = 44` of sub-resource 1 (DynamicFont)", '`mode = 2` of node "Crate" (RigidBody2D)'],
              "Ship.gd": ["`OS.window_size`: set the Window's size"]}
    frames.attach_manual(seen, manual, {"Ship.gd": "ship.gd"})
    font, ship, crate = seen["frames"][0]["findings"]
    assert [b["what"] for b in font["behind"]] == ["`size = 44` of sub-resource 1 (DynamicFont)"]
    assert ship["behind"] == [{"path": "Ship.gd", "what": "`OS.window_size`: set the Window's size"}]
    assert [b["what"] for b in crate["behind"]] == ['`mode = 2` of node "Crate" (RigidBody2D)']
    assert seen["trace"]["diverging"][0]["behind"] == ship["behind"]


# --- the input script ---------------------------------------------------------------------------------------------


def test_an_input_script_is_read_and_a_bad_line_names_its_file_and_line(tmp_path):
    script = tmp_path / "play.txt"
    script.write_text("# walk, then press the second button\n30 move_right pressed\n90 move_right released\n"
                      "100 click:1 pressed\n103 click:1 released\n")
    events = play.read_script(script)
    assert [e.request() for e in events] == ["event\t30\tpress\tmove_right", "event\t90\trelease\tmove_right",
                                             "event\t100\tclick\t1", "event\t103\tunclick\t1"]
    script.write_text("30 move_right pressed\nsoon jump pressed\n")
    with pytest.raises(play.PlayScriptError, match=r"play.txt:2: expected `FRAME ACTION pressed\|released`"):
        play.read_script(script)


def test_the_seeded_player_plays_the_games_own_actions_the_same_way_each_time():
    first, again = play.policy(["move_right", "jump"], 600), play.policy(["move_right", "jump"], 600)
    assert first == again and len(first) >= 8
    names = [e.name for e in first if e.pressed]
    assert {"move_right", "jump"} & set(names) and any(n.startswith("click:") for n in names)
    down: set[str] = set()
    for e in first:   # every press is released before the script ends, one action at a time
        assert e.frame < 600 and (e.name not in down if e.pressed else e.name in down)
        down = (down | {e.name}) if e.pressed else (down - {e.name})
        assert len(down) <= 1
    assert not down


def test_the_godot_3_that_draws_is_found_beside_a_server_build(tmp_path, monkeypatch):
    """Debian's godot3-server draws nothing (its one video driver is 'Dummy'): the runner beside it draws."""
    from gd_assets.core import engines

    def fake(name: str, drivers: str) -> Path:
        path = tmp_path / name
        path.write_text(f"#!/bin/sh\ncase \"$1\" in --version) echo 3.6.2.stable;; "
                        f"--help) echo \"  --video-driver <driver>  Video driver ({drivers}).\";; esac\n")
        path.chmod(0o755)
        return path

    server = engines.Godot([str(fake("godot3", "'Dummy'"))], "3.6.2.stable")
    monkeypatch.delenv("GODOT3_RUNNER", raising=False)
    with pytest.raises(engines.GodotNotFound, match="godot3-runner"):
        engines.find_renderer3(server, env={"PATH": ""})
    runner = fake("godot3-runner", "'GLES3', 'GLES2'")
    assert engines.find_renderer3(server, env={"PATH": ""}).command == [str(runner)]
    assert engines.find_renderer3(engines.Godot([str(runner)], "3.6.2.stable")).command == [str(runner)]


# --- both engines, for real ---------------------------------------------------------------------------------------


def _game(tmp_path: Path, godot4) -> Path:
    """The fixture game with a TrueType font beside it (the DejaVu the engines' root or the system carries)."""
    game = Path(shutil.copytree(GAME, tmp_path / "frames-game"))
    root = Path(godot4.command[0]).parent / "godot-sid" / "usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
    font = next((f for f in (*FONTS, root) if f.is_file()), None)
    assert font is not None, f"no DejaVuSans.ttf at {FONTS[0]} or {root}: install fonts-dejavu-core"
    shutil.copyfile(font, game / "font.ttf")
    return game


def _play(godot, folder: Path, sandbox, display, settings, cache: Path, godot3=None) -> list[Path]:
    return [Path(p.folder) for p in verify.played(godot, folder, settings, display, sandbox, cache, godot3)]


@pytest.mark.slow
def test_a_lost_font_size_an_unpinned_gravity_and_a_moved_node_show_and_the_copy_shows_none(
        analysis_home, godot4, godot3, godot3_renderer, sandbox, display, tmp_path):
    game = _game(tmp_path, godot4)
    _name, facts = orchestrate.migrate(str(game))
    migrated = Path(facts["out"])
    # the copy keeps Godot 3's gravity and the font's size where Godot 4 keeps it (the rewrite's rules); each
    # variant takes one of them back, or moves a sprite
    settings_text, scene = (migrated / "project.godot").read_text(), (migrated / "Main.tscn").read_text()
    assert "[physics]\n\n2d/default_gravity=98.0\n\n" in settings_text
    assert "theme_override_font_sizes/font_size = 44\n" in scene
    variants = {"unpinned": ("project.godot", settings_text.replace("[physics]\n\n2d/default_gravity=98.0\n\n", "")),
                "lost-font": ("Main.tscn", scene.replace("theme_override_font_sizes/font_size = 44\n", "")),
                "moved": ("Main.tscn", scene.replace("Vector2( 400, 200 )", "Vector2( 400, 150 )"))}
    folders = {"copy": migrated}
    for name, (path, text) in variants.items():
        folders[name] = Path(shutil.copytree(migrated, tmp_path / name))
        (folders[name] / path).write_text(text)
    events = play.policy(input_actions((game / "project.godot").read_text()), 240) + \
        [play.Event(100, "move_right", True), play.Event(140, "move_right", False),
         play.Event(150, "click:0", True), play.Event(153, "click:0", False)]
    settings = game_run.PlaySettings(frames=240, events=tuple(sorted(events, key=lambda e: e.frame)))
    cache = tmp_path / "plays"
    original = _play(godot3_renderer, game, sandbox, display, settings, cache, godot3)
    plays = {name: _play(godot4, folder, sandbox, display, settings, cache) for name, folder in folders.items()}
    seen = {name: frames.compare_plays(original, played, tmp_path / f"pictures-{name}") for name, played in plays.items()}

    def found(name: str) -> set[tuple]:
        return {(f["kind"], f.get("node")) for x in seen[name]["frames"] for f in x["findings"]}

    # the copy: every frame matches and the play stays within the engines' noise; what both engines draw from
    # the same content stays above the noise floor wherever it is judged
    copy = seen["copy"]
    assert copy["frames_matching"] == copy["frames_compared"] >= 4, copy["frames"]
    assert copy["trace"]["first_divergence"] is None and copy["trace"]["last_frame"] == 240
    assert min(x["worst"] for x in copy["frames"]) >= max(frames.PIXEL_FLOOR, frames.TILE_FLOOR)

    assert found("lost-font") == {("font", "Main/Title")} and seen["lost-font"]["frames_matching"] == 0
    assert seen["lost-font"]["trace"]["first_divergence"] is None
    assert any(x["image"] and Path(x["image"]).is_file() for x in seen["lost-font"]["frames"])

    fallen = seen["unpinned"]["trace"]
    assert fallen["first_divergence"] == 10
    assert {d["node"] for d in fallen["nodes_at_first"]} == {"Main/Crate", "Main/Crate/Box", "Main/Crate/Shape"}
    assert ("moved", "Main/Crate/Box") in found("unpinned")

    assert found("moved") == {("moved", "Main/Ship"), ("pixels", "Main/Ship")}
    assert [d["node"] for d in seen["moved"]["trace"]["nodes_at_first"]] == ["Main/Ship"]

    # the same input reached both engines at the same physics frame: the player walked as far in each, and the
    # click on the first button changed the title in both
    traces = [frames.read_trace(p / "trace.tsv") for p in (original[0], plays["copy"][0])]
    walked = [t[240].nodes["Main/Player"].where[0] - t[10].nodes["Main/Player"].where[0] for t in traces]
    assert walked[0] > 70 and abs(walked[0] - walked[1]) < 1.0, walked
    assert [t[240].nodes["Main/Title"].text for t in traces] == ["Started", "Started"]


@pytest.mark.slow
def test_verify_run_shows_the_worst_frames_beside_the_original_and_replays_nothing_the_second_time(
        analysis_home, godot4, godot3, godot3_renderer, display, sandbox, tmp_path):
    game = _game(tmp_path, godot4)
    name, facts = orchestrate.migrate(str(game))
    scene = Path(facts["out"]) / "Main.tscn"   # the copy as a person left it: the title's size taken out
    scene.write_text(scene.read_text().replace("theme_override_font_sizes/font_size = 44\n", ""))
    script = tmp_path / "play.txt"
    script.write_text("20 move_right pressed\n80 move_right released\n100 click pressed\n103 click released\n")
    args = ("verify", name, "--run", "--frames", "120", "--scene-frames", "5", "--play", str(script), "--json")
    env = {"GODOT4": godot4.command[0], "GODOT3": godot3.command[0]}
    result = run_cli(*args, **env)
    assert result.returncode == 0, result.stderr[-3000:]
    doc = json.loads(result.stdout)
    seen, f = doc["run"]["seen"], doc["figures"]["run"]["seen"]
    assert f["plays"] == {"copy": 2, "original": 2} and f["plays_cached"] == 0 and f["frames_compared"] == 3
    assert f["frames_matching"] == 0 and f["first_divergence"] is None   # the crate falls as it did
    font = next(x for frame in seen["frames"] for x in frame["findings"] if x["kind"] == "font")
    assert font["node"] == "Main/Title" and font["what"] == "font size 16 for 44"
    assert any(line.startswith("frames matching the original") for line in doc["lines"])
    report = (home.reports_dir() / f"{name}.verify.md").read_text()
    assert "## Seen and played beside the original" in report and f"]({name}.frames/f0000" in report
    page = (home.reports_dir() / f"{name}.html").read_text()
    assert f'<img alt="original | copy | difference" src="{name}.frames/f0000' in page
    assert list((home.reports_dir() / f"{name}.frames").glob("f*.png"))

    again = json.loads(run_cli(*args, **env).stdout)
    assert again["figures"]["run"]["seen"]["plays_cached"] == 4
    assert again["run"]["seen"]["frames"] == seen["frames"]
