"""The hand-curated migration patterns: enough of them, well-formed, parseable and grounded in the official sources."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import pytest
from conftest import corpus_sources

from corpora_build import schema
from corpora_build.api_mapping import converter_vectors
from corpora_build.label_prototypes import LABELS, example_parse_problems, load_prototypes
from corpora_build.sources import CLASS_PATTERNS
from corpora_build.sources.files import iter_files

# Topics the upgrade guide and the issue require; each must appear inside some prototype's cues.
MUST_HAVE_CUES = [
    "super(", "super.", "create_tween()", "tween_property(", "FileAccess", "DirAccess", "DisplayServer",
    "get_window()", "slice(", "zoom", "ResourceSaver.save(", "yield(", "await", "setget", "rand_range(",
    "randf_range(", ".instance()", ".instantiate()", "PoolStringArray", "PackedStringArray", "connect(\"",
    ".connect(", "emit_signal(", ".emit(", "funcref(", "Callable", "change_scene(", "change_scene_to_file(",
    "KinematicBody2D", "CharacterBody2D", "move_and_slide(velocity", "move_and_slide()", "is_network_master()",
    "@rpc", "remote func", "puppet func", "master func", "BUTTON_LEFT", "MOUSE_BUTTON_LEFT", "format=2",
    "format=3", "config_version=4", "config_version=5", "[gd_resource", "hint_color", "source_color",
    "tool", "@tool", "export(", "export var", "@export", "onready var", "@onready", "Spatial", "Node3D",
    "Input.get_vector(", "&\"", "func(x):", "start(", "func get_speed(",
]

GODOT3_MARKERS = re.compile(
    r"\byield\(|\bsetget\b|^\s*onready\s+var\b|^\s*export\b|^\s*tool\s*$|\.instance\(\)|\bKinematicBody2?D?\b"
    r"|\brand_range\(|\bPool\w+Array\b|^\s*(remote|remotesync|puppet|puppetsync|master|sync)\s+func\b",
    re.MULTILINE,
)


@pytest.fixture(scope="module")
def rows() -> list[dict]:
    return load_prototypes()


def test_there_are_at_least_eighty_prototypes(rows):
    assert len(rows) >= 80


def test_ids_are_unique_and_prefixed(rows):
    ids = [r["id"] for r in rows]
    assert len(ids) == len(set(ids))
    assert all(i.startswith("proto:") for i in ids)


def test_every_label_is_in_the_vocabulary_and_every_label_is_used(rows):
    labels = Counter(r["label"] for r in rows)
    assert set(labels) <= LABELS
    assert set(labels) == LABELS, f"unused labels: {LABELS - set(labels)}"


def test_there_is_a_set_of_godot4_idioms(rows):
    idioms = [r for r in rows if r["label"] == "godot4_idiom"]
    assert len(idioms) >= 10


def test_rows_fit_the_table_schema(rows):
    frame = schema.frame("label_prototypes", rows)
    assert frame.height == len(rows)
    assert frame.null_count().row(0) == (0,) * frame.width
    for row in rows:
        assert row["cues"], row["id"]
        for part in (row["title"], row["explanation"], row["godot3_example"], row["godot4_example"], *row["cues"]):
            assert part.strip() in row["text"], (row["id"], part)


def test_content_hash_is_stable_and_changes_with_content(rows):
    again = {r["id"]: r["content_hash"] for r in load_prototypes()}
    assert all(again[r["id"]] == r["content_hash"] for r in rows)
    assert len({r["content_hash"] for r in rows}) == len(rows)


def test_the_required_migration_topics_are_present(rows):
    cues = [c for r in rows for c in r["cues"]]
    missing = [want for want in MUST_HAVE_CUES if not any(want in cue for cue in cues)]
    assert not missing, f"no prototype has a cue containing: {missing}"


def test_every_gdscript_example_parses_without_error_nodes(rows):
    assert example_parse_problems(rows) == []


def test_parse_check_reports_broken_gdscript_and_skips_other_languages():
    broken = {"id": "proto:x", "godot3_example": "func c(var a, var b):\n    pass\n", "godot4_example": "pass\n"}
    shader = {**broken, "id": "proto:y", "language": "shader"}
    problems = example_parse_problems([broken, shader])
    assert [(p["id"], p["side"], p["line"]) for p in problems] == [("proto:x", "godot3", 1)]
    assert problems[0]["snippet"] == "func c(var a, var b):"


def test_godot4_examples_carry_no_godot3_markers(rows):
    offenders = [
        (r["id"], m.group(0))
        for r in rows
        if r["language"] == "gdscript"
        for m in [GODOT3_MARKERS.search(r["godot4_example"])]
        if m
    ]
    assert not offenders


def test_migration_prototypes_show_a_change(rows):
    same = [r["id"] for r in rows if r["godot3_example"] == r["godot4_example"]]
    assert not same


def test_every_converter_rule_category_is_covered_with_matching_cues(rows):
    texts: dict[str, list[str]] = {}
    for vector in converter_vectors(corpus_sources()["converter_rules"]):
        texts.setdefault(vector["category"], []).append(vector["godot3"] + "\n" + vector["godot4"])
    claimed = {c for r in rows for c in r["converter_categories"]}
    assert claimed <= set(texts), f"unknown converter categories: {claimed - set(texts)}"
    uncovered = []
    for category, vectors in texts.items():
        grounded = [
            r["id"]
            for r in rows
            if category in r["converter_categories"] and any(cue in t for cue in r["cues"] for t in vectors)
        ]
        if not grounded:
            uncovered.append(category)
    assert not uncovered, f"no prototype covers converter categories {uncovered} with a cue seen in their vectors"


def test_mappings_name_godot3_api_or_rename_map_entries(rows):
    sources = corpus_sources()
    (_, rename_map), = iter_files(sources["rename_map"].location, ("*",))
    old_names = set(re.findall(r'\{\s*"((?:[^"\\]|\\.)*)"\s*,', rename_map.decode()))
    api = _godot3_api(sources["godot3_classes"].location)
    unknown = [
        (r["id"], m)
        for r in rows
        for m in r["mappings"]
        for category, _, name in [m.partition(":")]
        if category in api and name not in api[category] and name not in old_names
    ]
    assert not unknown, f"mappings that are neither Godot 3.6 API names nor rename-map entries: {unknown}"


def test_a_malformed_entry_is_rejected_naming_file_and_id(tmp_path: Path):
    (tmp_path / "broken.yaml").write_text(
        "- id: bad-label\n"
        "  label: guesswork\n"
        "  category: syntax\n"
        "  title: t\n"
        "  godot3: 'tool'\n"
        "  godot4: '@tool'\n"
        "  explanation: e\n"
        "  cues: ['tool']\n"
        "  mappings: []\n",
        encoding="utf-8",
    )
    with pytest.raises(ValueError, match=r"broken\.yaml.*bad-label.*label"):
        load_prototypes(tmp_path)


def test_empty_cues_and_duplicate_ids_are_rejected(tmp_path: Path):
    entry = (
        "- id: {id}\n  label: syntax\n  category: syntax\n  title: t\n  godot3: 'tool'\n  godot4: '@tool'\n"
        "  explanation: e\n  cues: {cues}\n  mappings: ['syntax:tool']\n"
    )
    (tmp_path / "a.yaml").write_text(entry.format(id="no-cues", cues="[]"), encoding="utf-8")
    with pytest.raises(ValueError, match=r"a\.yaml.*no-cues.*cues"):
        load_prototypes(tmp_path)
    (tmp_path / "a.yaml").write_text(entry.format(id="twice", cues="['tool']"), encoding="utf-8")
    (tmp_path / "b.yaml").write_text(entry.format(id="twice", cues="['tool']"), encoding="utf-8")
    with pytest.raises(ValueError, match=r"b\.yaml.*twice"):
        load_prototypes(tmp_path)


def _godot3_api(location: str) -> dict[str, set[str]]:
    """Class, method (with property accessors), property, signal and constant names of the Godot 3.6 reference."""
    api: dict[str, set[str]] = {k: set() for k in ("class", "function", "property", "signal", "enum")}
    for _, data in iter_files(location, CLASS_PATTERNS):
        root = ET.fromstring(data)
        if root.tag != "class":
            continue
        api["class"].add(root.get("name"))
        api["function"].update(m.get("name") for m in root.iter("method"))
        for prop in root.iter("member"):
            api["property"].add(prop.get("name"))
            api["function"].update(a for a in (prop.get("setter"), prop.get("getter")) if a)
        api["signal"].update(s.get("name") for s in root.iter("signal"))
        api["enum"].update(c.get("name") for c in root.iter("constant"))
    return api
