"""Roll-up: verdicts from judgement counts, explained by folder and file, never by names."""

from __future__ import annotations

from gd_assets.core.aggregate import decide, roll_up


def rows(path: str, signal: str, n: int, migration: bool = False) -> list[dict]:
    return [{"path": path, "signal": signal, "migration_needed": migration} for _ in range(n)]


def test_decide_thresholds():
    assert decide({"godot3": 0, "godot4": 0, "neutral": 5})[0] == "unknown"
    assert decide({"godot3": 10, "godot4": 0, "neutral": 5})[0] == "godot3"
    assert decide({"godot3": 0, "godot4": 9, "neutral": 5})[0] == "godot4"
    assert decide({"godot3": 1, "godot4": 40, "neutral": 5})[0] == "godot4"  # a lone stray signal is not "mixed"
    assert decide({"godot3": 2, "godot4": 4, "neutral": 5})[0] == "mixed"


def test_mixed_verdict_says_where_the_minority_is():
    judged = (rows("addons/old_plugin/a.gd", "godot3", 8, True) + rows("addons/old_plugin/b.gd", "godot3", 6, True)
              + rows("player.gd", "godot4", 30) + rows("ui/hud.gd", "godot4", 20) + rows("ui/hud.gd", "neutral", 10))
    summary = roll_up("game", judged)
    assert summary["verdict"] == "mixed"
    assert "addons/old_plugin: 14 Godot 3 fragments" in summary["explanation"]
    folders = {f["path"]: f for f in summary["folders"]}
    assert folders["addons/old_plugin"]["verdict"] == "godot3" and folders["ui"]["verdict"] == "godot4"
    files = {f["path"]: f for f in summary["files"]}
    assert files["addons/old_plugin/a.gd"]["migration_needed"] == 8
    assert summary["counts"] == {"fragments": 74, "godot3": 14, "godot4": 50, "neutral": 10, "migration_needed": 14}


def test_verdict_ignores_file_names():
    judged = rows("godot3_stuff/old.gd", "godot4", 5) + rows("v4/new.gd", "neutral", 3)
    assert roll_up("p", judged)["verdict"] == "godot4"
