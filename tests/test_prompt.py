"""The judge prompt keeps to its budgets, numbers candidates like the legend, and parses answers strictly."""

from __future__ import annotations

import json

import pytest

from gd_assets.core.cues import Cue
from gd_assets.core.judges import JudgeError, JudgeInput
from gd_assets.core.judges.prompt import (
    JSON_SCHEMA,
    PROMPT_VERSION,
    SYSTEM,
    TRUNCATED,
    PromptBudget,
    answer_schema,
    build_messages,
    parse_answer,
    shown_candidates,
)
from gd_assets.core.retrieval import Candidate

PROCESS = """func _process(delta):
\tvar velocity = Vector2.ZERO
\tif Input.is_action_pressed(&"move_right"):
\t\tvelocity.x += 1
\tif velocity.length() > 0:
\t\tvelocity = velocity.normalized() * speed
\t\t$AnimatedSprite2D.play()
\tposition += velocity * delta
\tposition = position.clamp(Vector2.ZERO, screen_size)
"""

ROWS = [
    ("api_mapping", "map:KinematicBody2D", "KinematicBody2D -> CharacterBody2D",
     "renamed: the class KinematicBody2D is CharacterBody2D in Godot 4."),
    ("label_prototypes", "proto:move-and-slide", "KinematicBody2D movement -> CharacterBody2D velocity",
     "Godot 3: velocity = move_and_slide(velocity). Godot 4: set velocity, then call move_and_slide()."),
    ("docs_chunks", "docs:4:AnimatedSprite2D", "AnimatedSprite2D (Godot 4)",
     "Sprite node that contains multiple textures as frames to play for animation."),
    ("docs_chunks", "docs:4:Vector2.clamp", "Vector2.clamp (Godot 4)",
     "Returns a new vector with all components clamped between the components of min and max."),
]


def candidates(n: int, text_len: int = 400) -> list[Candidate]:
    out = []
    for i in range(n):
        table, rid, title, text = ROWS[i % len(ROWS)]
        body = (text + " ") * (text_len // len(text) + 1)
        out.append(Candidate(rank=i + 1, table=table, id=f"{rid}#{i}", title=title, text=body[:text_len],
                             sparse_score=1.0, sparse_rank=i + 1, dense_score=0.5, score=1.0 - i / 100,
                             table_rank=i // len(ROWS) + 1))
    return out


def item(n_candidates: int = 4, text: str = PROCESS, request: str = "Is this Godot 3 or Godot 4?") -> JudgeInput:
    return JudgeInput(key="player.gd::_process", path="player.gd", start_line=12, end_line=26, kind="function",
                      file_kind="gdscript", text=text, cues=[Cue("Vector2.ZERO", "attribute")],
                      candidates=candidates(n_candidates), request=request)


def user_text(it: JudgeInput, budget: PromptBudget | None = None) -> str:
    messages = build_messages(it, budget or PromptBudget())
    assert [m["role"] for m in messages] == ["system", "user"]
    assert messages[0]["content"] == SYSTEM
    return messages[1]["content"]


def answer(**fields) -> str:
    base = {"related": [1, 2], "signal": "godot3", "migration_needed": True, "confidence": 0.9,
            "rationale": "KinematicBody2D is Godot 3.", "evidence": [1]}
    return json.dumps(base | fields)


def test_long_fragment_keeps_its_location_header_and_is_cut_with_the_marker():
    text = PROCESS + "\n".join(f"\tprint({i})" for i in range(2000))
    user = user_text(item(text=text), PromptBudget(fragment=1000))
    assert "## Fragment: player.gd lines 12-26 (function in a gdscript file" in user
    assert user.endswith(TRUNCATED)
    body = user.split("location for tracking only)\n", 1)[1]
    assert len(body) == 1000
    assert body.startswith("func _process(delta):")


def test_short_fragment_is_shown_whole_without_marker():
    user = user_text(item())
    assert PROCESS.rstrip() in user
    assert TRUNCATED not in user


def test_whole_prompt_stays_within_the_total_budget_and_cuts_the_fragment_first():
    budget = PromptBudget(total=3000, candidates=800, per_candidate_floor=200, fragment=4000)
    it = item(n_candidates=10, text=PROCESS * 50)
    user = user_text(it, budget)
    assert len(SYSTEM) + len(user) <= budget.total
    assert "(4) [" in user and user.endswith(TRUNCATED)
    assert "## Fragment: player.gd lines 12-26" in user


def test_request_is_cut_to_its_budget():
    user = user_text(item(request="Please check " * 200), PromptBudget(request=100))
    request = user.split("\n\n## Candidates", 1)[0].removeprefix("## Request\n")
    assert len(request) == 100 and request.endswith(TRUNCATED)


def test_candidates_header_counts_all_and_shown():
    budget = PromptBudget(candidates=1000, per_candidate_floor=250)
    it = item(n_candidates=12)
    assert shown_candidates(it, budget) == 4
    user = user_text(it, budget)
    assert "## Candidates (12 candidates, 4 shown)" in user
    assert "(4) [" in user and "(5) [" not in user


def test_candidate_budget_is_split_by_count_with_a_floor_per_candidate():
    few = user_text(item(n_candidates=2), PromptBudget(candidates=1000, per_candidate_floor=100))
    assert "(2) [" in few and TRUNCATED not in few  # 500 characters each: the 400-character rows fit whole
    many = user_text(item(n_candidates=8), PromptBudget(candidates=1000, per_candidate_floor=300))
    blocks = many.split("\n\n## Fragment")[0].split("\n\n")[2:]
    assert len(blocks) == 3
    assert all(len(b) == 333 and b.endswith(TRUNCATED) for b in blocks)


def test_candidates_are_numbered_in_rank_order_as_the_legend():
    it = item(n_candidates=4)
    user = user_text(it)
    legend = it.legend()
    for number, row in legend.items():
        assert f"({number}) [{row['table']}] {row['title']}" in user
    assert user.index("(1) [") < user.index("(2) [") < user.index("(3) [") < user.index("(4) [")
    assert legend[1]["id"] == "map:KinematicBody2D#0" and legend[2]["table"] == "label_prototypes"


def test_prompt_is_built_from_the_item_alone():
    it = item()
    assert build_messages(it) == build_messages(it)
    assert all(m["role"] != "assistant" for m in build_messages(it))


def test_schema_bounds_every_number_and_array():
    props = JSON_SCHEMA["properties"]
    assert set(JSON_SCHEMA["required"]) == set(props) and JSON_SCHEMA["additionalProperties"] is False
    for name in ("related", "evidence"):
        assert props[name]["maxItems"] and props[name]["items"]["maximum"]
    assert props["confidence"]["minimum"] == 0 and props["confidence"]["maximum"] == 1
    assert props["rationale"]["maxLength"]


def test_schema_of_an_item_stops_legend_numbers_at_the_shown_count():
    numbers = answer_schema(3)["properties"]["related"]
    assert numbers["maxItems"] == 3 and numbers["items"]["maximum"] == 3
    assert answer_schema(0)["properties"]["evidence"]["maxItems"] == 0


def test_parse_answer_is_lenient_about_wrapping_and_control_characters():
    raw = '```json\n{"related": [1, "(2)", 2.0], "signal": "godot3", "migration_needed": true, "confidence": 0.8, ' \
          '"rationale": "line one\nline\ttwo", "evidence": [2]}\n```'
    j = parse_answer(raw, item())
    assert (j.key, j.signal, j.migration_needed, j.related, j.evidence) == ("player.gd::_process", "godot3",
                                                                             True, [1, 2], [2])
    assert j.rationale == "line one line two"


def test_budget_version_names_the_prompt_version_and_changes_with_the_budget():
    assert PromptBudget().version().startswith(PROMPT_VERSION)
    assert PromptBudget().version() != PromptBudget(fragment=100).version()


def test_parse_answer_rejects_candidates_not_offered():
    with pytest.raises(JudgeError, match=r"player.gd::_process.*\[7\].*not offered"):
        parse_answer(answer(related=[1, 7]), item(n_candidates=4))


def test_parse_answer_rejects_candidates_not_shown():
    with pytest.raises(JudgeError, match="not shown"):
        parse_answer(answer(evidence=[3]), item(n_candidates=4), shown=2)


@pytest.mark.parametrize("text, reason", [
    ("no json here", "no JSON object"),
    ('{"related": [1], "signal": "godot3"', "no JSON object"),
    ('{"related": [1], "signal": "godot3"}', "lacks"),
    (answer(signal="godot5"), "signal"),
    (answer(confidence=3), "outside 0..1"),
    (answer(related=[1.5]), "not a candidate number"),
])
def test_parse_answer_rejects_malformed_answers_naming_the_fragment(text, reason):
    with pytest.raises(JudgeError, match=f"player.gd::_process.*{reason}"):
        parse_answer(text, item())
