"""Retrieval: code-aware tokens, the hybrid index over the three tables, incremental refresh."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from corpora_build import schema
from corpora_build.index import build_index, current_build, read_manifest
from gd_assets.core.duck import connect
from gd_assets.core.retrieval import CorpusIndex, Query, RetrievalParams, _best
from gd_assets.core.tokens import tokenize, tokenize_terms


# -- tokens ------------------------------------------------------------------------------------
def test_dotted_names_are_kept_whole_and_split():
    toks = tokenize('if Input.is_action_pressed("move_right"):')
    for t in ("input.is_action_pressed", "input", "is_action_pressed", "is", "action", "pressed"):
        assert t in toks
    assert "is_action_pressed(" in toks  # the call shape


def test_camel_case_is_split_and_kept_whole():
    assert tokenize("extends KinematicBody2D") == ["extends", "kinematicbody2d", "kinematic", "body", "2d"]
    assert {"httprequest", "http", "request"} <= set(tokenize("var r = HTTPRequest.new()"))


def test_version_syntax_keeps_its_markers():
    assert "yield(" in tokenize('yield(get_tree().create_timer(1.0), "timeout")')
    assert "export(" in tokenize("export(int) var speed = 400")
    assert "@export" in tokenize("@export var speed = 400")
    assert "@onready" in tokenize("@onready var sprite = $AnimatedSprite2D")
    assert "onready" in tokenize("onready var sprite = $AnimatedSprite2D")
    assert "$animatedsprite2d" in tokenize("onready var sprite = $AnimatedSprite2D")
    assert "setget" in tokenize("var health = 100 setget set_health")
    assert "instance(" in tokenize("var enemy = scene.instance()")


def test_no_stop_word_eats_short_api_words():
    assert tokenize("is and not in or as") == ["is", "and", "not", "in", "or", "as"]
    assert "is" in tokenize_terms(["is_on_floor()"])


def test_prose_with_a_parenthesis_is_not_a_call():
    assert "characterbody2d(" not in tokenize("KinematicBody2D -> CharacterBody2D (class rename)")


# -- a small corpus written the way the corpus builders write it ---------------------------------
DOCS = [
    ("docs:3:KinematicBody2D.class", "3", "KinematicBody2D", "class", None, "KinematicBody2D (Godot 3 class)",
     "class KinematicBody2D inherits PhysicsBody2D",
     "KinematicBody2D inherits PhysicsBody2D. Kinematic body 2D node. Kinematic bodies are special types of "
     "bodies that are meant to be user-controlled. They are not affected by physics at all."),
    ("docs:3:KinematicBody2D.method.move_and_slide", "3", "KinematicBody2D", "method", "move_and_slide",
     "KinematicBody2D.move_and_slide (Godot 3 method)",
     "Vector2 move_and_slide(linear_velocity: Vector2, up_direction: Vector2 = Vector2( 0, 0 ))",
     "KinematicBody2D.move_and_slide: Moves the body along a vector. If the body collides with another, it "
     "will slide along the other body. linear_velocity is the velocity vector in pixels per second. Returns "
     "the linear_velocity vector, rotated and/or scaled if a slide collision occurred."),
    ("docs:4:CharacterBody2D.class", "4", "CharacterBody2D", "class", None, "CharacterBody2D (Godot 4 class)",
     "class CharacterBody2D inherits PhysicsBody2D",
     "CharacterBody2D inherits PhysicsBody2D. A 2D physics body specialized for characters moved by script. "
     "CharacterBody2D is a specialized class for physics bodies that are meant to be user-controlled."),
    ("docs:4:CharacterBody2D.method.move_and_slide", "4", "CharacterBody2D", "method", "move_and_slide",
     "CharacterBody2D.move_and_slide (Godot 4 method)", "bool move_and_slide()",
     "CharacterBody2D.move_and_slide: Moves the body based on velocity. If the body collides with another, "
     "it will slide along the other body rather than stop immediately."),
    ("docs:4:CharacterBody2D.property.velocity", "4", "CharacterBody2D", "property", "velocity",
     "CharacterBody2D.velocity (Godot 4 property)", "Vector2 velocity = Vector2(0, 0)",
     "CharacterBody2D.velocity: Current velocity vector in pixels per second, used and modified during calls "
     "to move_and_slide."),
    ("docs:3:PackedScene.method.instance", "3", "PackedScene", "method", "instance",
     "PackedScene.instance (Godot 3 method)", "Node instance(edit_state: int = 0) const",
     "PackedScene.instance: Instantiates the scene's node hierarchy. Triggers child scene instantiation(s)."),
    ("docs:4:PackedScene.method.instantiate", "4", "PackedScene", "method", "instantiate",
     "PackedScene.instantiate (Godot 4 method)", "Node instantiate(edit_state: int = 0) const",
     "PackedScene.instantiate: Instantiates the scene's node hierarchy. Triggers child scene instantiation(s)."),
    ("docs:4:SceneTree.method.create_timer", "4", "SceneTree", "method", "create_timer",
     "SceneTree.create_timer (Godot 4 method)", "SceneTreeTimer create_timer(time_sec: float)",
     "SceneTree.create_timer: Returns a new SceneTreeTimer. After time_sec in seconds have passed the timer "
     "will emit SceneTreeTimer.timeout and will be automatically freed."),
    ("docs:4:Input.method.is_action_pressed", "4", "Input", "method", "is_action_pressed",
     "Input.is_action_pressed (Godot 4 method)", "bool is_action_pressed(action: StringName) const",
     "Input.is_action_pressed: Returns true if you are pressing the action event."),
    ("docs:4:Label.property.text", "4", "Label", "property", "text", "Label.text (Godot 4 property)",
     "String text = \"\"", "Label.text: The text to display on screen."),
    ("docs:4:AudioStreamPlayer.method.play", "4", "AudioStreamPlayer", "method", "play",
     "AudioStreamPlayer.play (Godot 4 method)", "void play(from_position: float = 0.0)",
     "AudioStreamPlayer.play: Plays a sound from the beginning, or the given from_position in seconds."),
    ("docs:4:Color.method.lerp", "4", "Color", "method", "lerp", "Color.lerp (Godot 4 method)",
     "Color lerp(to: Color, weight: float) const",
     "Color.lerp: Returns the linear interpolation between this color's components and to's components."),
    ("docs:4:page:tutorials/scripting/gdscript/gdscript_exports#introduction", "4", None, "page_section",
     "Introduction", "GDScript exported properties > Introduction (Godot 4 docs)", None,
     "In Godot, class members can be exported. This means their value gets saved along with the resource "
     "they're attached to. Exports are declared with the @export annotation: @export var number: int = 5"),
]
MAPPINGS = [
    ("map:rename:class:KinematicBody2D", "KinematicBody2D", "CharacterBody2D", "renamed", "class", "rename_map",
     "KinematicBody2D -> CharacterBody2D (class rename)",
     "The Godot 3 class KinematicBody2D is called CharacterBody2D in Godot 4."),
    ("map:rename:class:Spatial", "Spatial", "Node3D", "renamed", "class", "rename_map",
     "Spatial -> Node3D (class rename)", "The Godot 3 class Spatial is called Node3D in Godot 4."),
    ("map:rename:function:instance", "instance", "instantiate", "renamed", "function", "rename_map",
     "instance -> instantiate (function rename)",
     "The Godot 3 method instance (PackedScene.instance) is called instantiate in Godot 4."),
    ("map:syntax:yield", "yield(object, \"signal\")", "await object.signal", "syntax_changed", "syntax",
     "converter_rule", "yield(...) -> await (syntax change)",
     "GDScript 2.0 removed yield; waiting for a signal or a coroutine is written with the await keyword."),
    ("map:syntax:export", "export(Type) var", "@export var", "syntax_changed", "syntax", "converter_rule",
     "export -> @export (syntax change)",
     "The export keyword became the @export annotation family: export(int) var x becomes @export var x: int."),
    ("map:syntax:onready", "onready var", "@onready var", "syntax_changed", "syntax", "converter_rule",
     "onready -> @onready (syntax change)", "The onready keyword became the @onready annotation."),
]
PROTOTYPES = [
    ("proto:kinematicbody2d-movement", "rename", "class",
     "KinematicBody2D movement becomes CharacterBody2D `velocity` + `move_and_slide()`",
     "extends KinematicBody2D\nvar velocity = Vector2.ZERO\nfunc _physics_process(delta):\n"
     "    velocity = move_and_slide(velocity, Vector2.UP)\n",
     "extends CharacterBody2D\nfunc _physics_process(delta):\n    move_and_slide()\n",
     "KinematicBody2D was renamed CharacterBody2D, which owns a velocity property; move_and_slide() takes no "
     "arguments. `extends KinematicBody2D` is a strong Godot 3 signal.",
     ["extends KinematicBody2D", "move_and_slide(velocity"]),
    ("proto:yield-timer-to-await", "syntax", "coroutine",
     "`yield(get_tree().create_timer(t), \"timeout\")` becomes `await get_tree().create_timer(t).timeout`",
     "yield(get_tree().create_timer(1.0), \"timeout\")\n", "await get_tree().create_timer(1.0).timeout\n",
     "GDScript 2.0 removed yield; a timer wait is written with await on the timer's timeout signal.",
     ["yield(", "create_timer"]),
    ("proto:export-typed", "syntax", "annotation",
     "`export(Type) var` becomes a typed `@export var name: Type`",
     "export(int) var speed = 400\n", "@export var speed: int = 400\n",
     "The export keyword with a type hint becomes the @export annotation with a static type.",
     ["export(", "export var"]),
    ("proto:instance-to-instantiate", "rename", "method",
     "`scene.instance()` becomes `scene.instantiate()`",
     "var enemy = preload(\"res://enemy.tscn\").instance()\n",
     "var enemy = preload(\"res://enemy.tscn\").instantiate()\n",
     "PackedScene.instance() was renamed instantiate() in Godot 4.", [".instance()", "instance("]),
]


def _rows():
    docs = [dict(id=i, godot_version=v, release=f"{v}.x-stable", class_name=c, member_kind=k, member_name=m,
                 title=t, signature=s, text=x, source="doc/classes/x.xml",
                 content_hash=schema.content_hash(t, s, x)) for i, v, c, k, m, t, s, x in DOCS]
    maps = [dict(id=i, old_name=o, new_name=n, change_kind=ck, category=cat, source=src, ambiguous=False,
                 title=t, text=x, content_hash=schema.content_hash(t, x)) for i, o, n, ck, cat, src, t, x in MAPPINGS]
    protos = []
    for i, label, cat, title, g3, g4, expl, cues in PROTOTYPES:
        text = f"{title}\n{expl}\nGodot 3:\n{g3}\nGodot 4:\n{g4}"
        protos.append(dict(id=i, label=label, category=cat, title=title, godot3_example=g3, godot4_example=g4,
                           explanation=expl, cues=cues, mappings=[], text=text,
                           content_hash=schema.content_hash(text, cues)))
    return {"docs_chunks": docs, "api_mapping": maps, "label_prototypes": protos}


def _write_corpus(db: Path, rows: dict[str, list[dict]]) -> None:
    with connect(db) as con:
        for table, table_rows in rows.items():
            schema.upsert(con, table, schema.frame(table, table_rows), replace_all=True)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("retrieval")
    db, index_dir = root / "corpora.duckdb", root / "index"
    _write_corpus(db, _rows())
    calls: list[tuple[int, int]] = []
    stats = build_index(db, index_dir, progress=lambda d, t: calls.append((d, t)))
    return db, index_dir, stats, calls


def _ids(cands):
    return [c.id for c in cands]


def test_build_embeds_every_row_once_with_progress(built):
    _, index_dir, stats, calls = built
    assert stats["rows_per_table"] == {"api_mapping": len(MAPPINGS), "docs_chunks": len(DOCS),
                                       "label_prototypes": len(PROTOTYPES)}
    assert stats["embedded"] == stats["rows"] and stats["reused"] == 0
    assert calls and calls[-1] == (stats["rows"], stats["rows"])
    assert read_manifest(index_dir)["index_version"] == stats["index_version"]


def test_extends_kinematicbody2d_finds_evidence_in_all_three_tables(built):
    index = CorpusIndex.load(built[1])
    top5 = _ids(index.search_text("extends KinematicBody2D", k=5))
    assert "map:rename:class:KinematicBody2D" in top5
    assert "docs:4:CharacterBody2D.class" in top5 or "docs:3:KinematicBody2D.class" in top5
    assert "proto:kinematicbody2d-movement" in top5


@pytest.mark.parametrize("text, expected", [
    ('yield(get_tree().create_timer(1.0), "timeout")', {"map:syntax:yield", "proto:yield-timer-to-await"}),
    ("export(int) var speed = 400", {"map:syntax:export", "proto:export-typed"}),
    ("var enemy = scene.instance()", {"map:rename:function:instance", "proto:instance-to-instantiate"}),
])
def test_godot3_syntax_finds_its_mapping_and_prototype(built, text, expected):
    index = CorpusIndex.load(built[1])
    assert expected <= set(_ids(index.search_text(text, k=5)))


def test_candidates_are_ranked_and_every_table_is_represented(built):
    index = CorpusIndex.load(built[1])
    params = RetrievalParams(k_final=8, min_per_table=2)
    [cands] = index.search([Query(sparse_terms=["Input.is_action_pressed", "Vector2.ZERO"],
                                  dense_text="if Input.is_action_pressed(\"move_right\"):\n\tvelocity.x += 1")],
                           params)
    assert [c.rank for c in cands] == list(range(1, len(cands) + 1))
    assert [c.score for c in cands] == sorted((c.score for c in cands), reverse=True)
    by_table: dict[str, list[int]] = {}
    for c in cands:
        by_table.setdefault(c.table, []).append(c.table_rank)
    assert set(by_table) == {"docs_chunks", "api_mapping", "label_prototypes"}
    assert all(len(r) >= 2 and r == list(range(1, len(r) + 1)) for r in by_table.values())
    assert cands[0].id == "docs:4:Input.method.is_action_pressed" and cands[0].sparse_rank == 1


def test_search_batches_queries_and_can_restrict_to_one_table(built):
    index = CorpusIndex.load(built[1])
    queries = [Query(["extends KinematicBody2D"], "extends KinematicBody2D"),
               Query(["yield("], 'yield(get_tree().create_timer(1.0), "timeout")')] * 3
    results = index.search(queries, RetrievalParams(k_final=5))
    assert len(results) == 6 and _ids(results[0]) == _ids(results[2]) == _ids(results[4])
    only = index.search_text("extends KinematicBody2D", table="label_prototypes", k=3)
    assert only and {c.table for c in only} == {"label_prototypes"}


def test_a_query_asked_twice_is_searched_once_and_each_asker_gets_its_own_list(built, monkeypatch):
    index = CorpusIndex.load(built[1])
    searched: list[int] = []
    pools = CorpusIndex._pools
    monkeypatch.setattr(CorpusIndex, "_pools", lambda self, queries, *a: searched.append(len(queries)) or
                        pools(self, queries, *a))
    kinematic, timer = Query(["extends KinematicBody2D"], "extends KinematicBody2D"), Query(["yield("], "yield(")
    results = index.search([kinematic, timer, Query(["extends KinematicBody2D"], "extends KinematicBody2D"), timer])
    assert searched == [2]
    assert results[0] == results[2] and results[1] == results[3] and results[0] != results[1]
    assert results[0] is not results[2]   # a caller may extend its own list


def test_a_batch_finds_for_each_query_what_it_finds_alone(built):
    """Each block is scored as one set of arrays; no query's candidates depend on the others beside it."""
    index = CorpusIndex.load(built[1])
    texts = [t for _, _, _, _, _, t, _, _ in DOCS] + [t for *_, t, _ in MAPPINGS] + [p[3] for p in PROTOTYPES]
    queries = [Query([t], t) for t in texts] * 2 + [Query(["velocity", "move_and_slide"], "")]
    params = RetrievalParams(k_final=6, min_per_table=2, link_from=3)
    for table in (None, "api_mapping", "docs_chunks"):
        together = index.search(queries, params, table=table)
        assert together == [index.search([q], params, table=table)[0] for q in queries]


def _reference_top(part: np.ndarray, k: int) -> list[set[int]]:
    """The best `k` positive scores of each row, of those tied at the last place the lower positions."""
    out = []
    for values in part:
        order = sorted((i for i in range(len(values)) if values[i] > 0), key=lambda i: (-values[i], i))
        out.append(set(order[:k]))
    return out


@pytest.mark.parametrize("size, k", [(40, 50), (400, 10), (3000, 20), (5000, 200)])
def test_the_sampled_floor_keeps_exactly_the_best_rows_ties_to_the_lower(built, size, k):
    index = CorpusIndex.load(built[1])
    rng = np.random.default_rng(size)
    # few distinct values, many zeros and ties: the cases a floor from every stride-th row could get wrong
    scores = rng.choice([0.0, 0.0, 0.5, 1.0, 1.5, 2.0, 3.25], size=(5, size + 7))
    scores[1, :] = 0.0
    scores[2, size // 2:] = 9.0
    top = index._top(scores, k, 7, size + 7)
    found = [set((row[row >= 0] - 7).tolist()) for row in top]
    assert found == _reference_top(scores[:, 7:], k)
    best = index._top(scores, size + 7, 0, size + 7)
    picked = np.concatenate([best, np.full((5, 3), -1)], axis=1)
    kept = [set(row[row >= 0].tolist()) for row in _best(scores, picked, k)]
    assert kept == [set(sorted(r, key=lambda i: (-scores[q, i], i))[:k]) for q, r in
                    enumerate(_reference_top(scores, size + 7))]


def test_common_terms_score_as_their_postings_would(built):
    """A term in many rows is scored from a dense row of its weights; the scores are those of its postings."""
    index = CorpusIndex.load(built[1])
    common = {int(t) for t in index._common}
    assert common, "the test corpus has terms in a sixteenth of its rows"
    params = RetrievalParams()
    texts = ["extends KinematicBody2D", 'yield(get_tree().create_timer(1.0), "timeout")', "func _ready(): pass",
             "var enemy = scene.instance()"]
    terms = [index._query_terms([t], params) for t in texts]
    assert any(common & set(ids.tolist()) for ids, _ in terms)
    owner = np.repeat(np.arange(len(terms)), [len(t[0]) for t in terms])
    by_postings = index._postings_scores(np.concatenate([t[0] for t in terms]), np.concatenate([t[1] for t in terms]),
                                         owner, len(terms))
    assert np.allclose(index._sparse_block(terms), by_postings, rtol=1e-12, atol=1e-12)


def test_index_is_memory_mapped(built):
    index = CorpusIndex.load(built[1])
    # plain arrays over the mapped files (numpy's memmap subclass costs on every slice), nothing read in
    for mapped in (index._vectors, index._data, index._indices, index._indptr):
        assert not mapped.flags.owndata and isinstance(mapped.base, np.memmap)
    assert index._dense.size == built[2]["rows"]


def test_postings_are_read_as_bm25s_saved_them(built):
    """The index reads bm25s's files with numpy alone: the same vocabulary and score matrix bm25s loads."""
    import bm25s

    from gd_assets.core.corpus import layout
    from gd_assets.core.retrieval import Postings

    folder = current_build(built[1]) / layout.BM25_DIR
    ours, theirs = Postings.load(folder), bm25s.BM25.load(str(folder), mmap=True)
    assert ours.vocab == theirs.vocab_dict and ours.size == theirs.scores["num_docs"]
    for name in ("data", "indices", "indptr"):
        assert np.array_equal(getattr(ours, name), theirs.scores[name])


def test_searching_imports_neither_bm25s_nor_scipy(built):
    """Analysis opens and searches the index without the index builder's stack (a third of a second a process)."""
    import subprocess
    import sys

    code = ("import sys; from gd_assets.core.retrieval import CorpusIndex; "
            f"index = CorpusIndex.load({str(built[1])!r}); assert index.search_text('extends KinematicBody2D', k=3); "
            "print(sorted(m for m in ('bm25s', 'scipy', 'numba') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_postings_of_another_bm25_variant_are_refused(tmp_path, built):
    import json
    import shutil

    from gd_assets.core.corpus import layout
    from gd_assets.core.retrieval import Postings

    folder = tmp_path / "bm25"
    shutil.copytree(current_build(built[1]) / layout.BM25_DIR, folder)
    params = json.loads((folder / "params.index.json").read_text())
    (folder / "params.index.json").write_text(json.dumps(dict(params, method="bm25l")))
    with pytest.raises(ValueError, match="bm25l.*rebuild the index"):
        Postings.load(folder)


def test_unchanged_corpus_is_a_no_op(built):
    db, index_dir, stats, _ = built
    again = build_index(db, index_dir)
    assert again["skipped"] and again["embedded"] == 0
    assert again["index_version"] == stats["index_version"]


def test_refresh_re_embeds_only_the_changed_row_and_keeps_results(tmp_path):
    db, index_dir = tmp_path / "corpora.duckdb", tmp_path / "index"
    rows = _rows()
    _write_corpus(db, rows)
    first = build_index(db, index_dir)
    reader = CorpusIndex.load(index_dir)  # a reader holding the old build while the refresh runs
    before = reader.search_text("extends KinematicBody2D", k=5)

    label = next(r for r in rows["docs_chunks"] if r["id"] == "docs:4:Label.property.text")
    label["text"] = "Label.text: The text to display on screen, with BBCode when rich text is on."
    label["content_hash"] = schema.content_hash(label["title"], label["signature"], label["text"])
    _write_corpus(db, rows)
    second = build_index(db, index_dir)

    assert second["embedded"] == 1 and second["reused"] == first["rows"] - 1
    assert second["index_version"] != first["index_version"]
    after = CorpusIndex.load(index_dir)
    assert after.version == second["index_version"] and current_build(index_dir).name.endswith(after.version)
    got = after.search_text("extends KinematicBody2D", k=5)
    assert _ids(got) == _ids(before)
    assert [c.dense_score for c in got] == pytest.approx([c.dense_score for c in before], abs=1e-3)
    assert _ids(reader.search_text("extends KinematicBody2D", k=5)) == _ids(before)


# -- the real corpus -----------------------------------------------------------------------------
# Each query's top 5 must hold one row of every id set (the mapping, the docs, the prototype).
ACCEPTANCE: dict[str, list[set[str]]] = {
    "extends KinematicBody2D": [{"map:rename:class:KinematicBody2D"}, {"docs:4:CharacterBody2D.class"},
                                {"proto:kinematicbody2d-to-characterbody2d"}],
    'yield(get_tree().create_timer(1.0), "timeout")': [
        {"map:syntax:rename_gdscript_functions:yield_this_timeout", "map:diff:method:@GDScript.yield"},
        {"proto:yield-timer-to-await"}],
    "export(int) var speed": [{"map:syntax:rename_gdscript_keywords:export"},
                              {"proto:export-type-hint-to-typed-annotation", "proto:export-plain-to-annotation"}],
    ".instance()": [{"map:rename:function:instance"}, {"proto:instance-to-instantiate"}],
}


@pytest.mark.slow
def test_acceptance_queries_on_the_built_corpus(corpus_home):
    assert current_build(corpus_home / "index") is not None
    index = CorpusIndex.load(corpus_home / "index")
    for text, wanted in ACCEPTANCE.items():
        top5 = set(_ids(index.search_text(text, k=5)))
        missing = [sorted(ids) for ids in wanted if not ids & top5]
        assert not missing, f"{text!r}: top 5 {sorted(top5)} lacks one of {missing}"


# -- the embedders -------------------------------------------------------------------------------

def test_static_embedder_is_distilled_once_and_read_from_its_folder(tmp_path, monkeypatch):
    from gd_assets.core import embedding

    monkeypatch.setenv("GD_ASSETS_MODEL_CACHE", str(tmp_path / "models"))
    monkeypatch.setenv("GD_ASSETS_EMBEDDER", "static")
    embedding.load_embedder.cache_clear()
    try:
        texts = ["extends KinematicBody2D", "func _ready():\n\tpass", ""]
        first = embedding.embed(texts)
        [folder] = (tmp_path / "models").glob("static-minilm-*")
        stamp = (folder / "model.safetensors").stat().st_mtime_ns
        embedding.load_embedder.cache_clear()
        again = embedding.embed(texts)
        assert (folder / "model.safetensors").stat().st_mtime_ns == stamp   # read, not distilled again
        assert np.array_equal(first, again) and first.shape == (3, embedding.DIMENSIONS)
        assert np.allclose(np.linalg.norm(first[:2], axis=1), 1.0, atol=1e-5)
        assert not list((tmp_path / "models").glob(".static-minilm-*-*"))   # no staging folder left
        from model2vec import StaticModel  # read as model2vec's own loader reads it

        theirs = StaticModel.from_pretrained(folder, normalize=True, force_download=False)
        assert np.array_equal(embedding._encode(theirs, texts, 64, embedding.QUERY_MAX_TOKENS),
                              embedding._encode(embedding.load_embedder(), texts, 64, embedding.QUERY_MAX_TOKENS))
        hub = subprocess.run([sys.executable, "-c", "import sys; from gd_assets.core import embedding; "
                              "embedding.embed(['extends Node']); print('huggingface_hub' in sys.modules)"],
                             capture_output=True, text=True, check=True, env=dict(os.environ))
        assert hub.stdout.strip() == "False"   # the hub client is never imported to read a local folder
    finally:
        embedding.load_embedder.cache_clear()


def test_static_and_transformer_embedders_rank_the_same_rows_first(monkeypatch):
    """The distilled model stands in for the transformer: on Godot texts both put the same row first."""
    from gd_assets.core import embedding

    rows = [r["text"] for r in _rows()["api_mapping"]] + [r["text"] for r in _rows()["docs_chunks"]]
    queries = ["extends KinematicBody2D", "var enemy = scene.instance()", 'yield(get_tree().create_timer(1.0), "timeout")',
               "export(int) var speed = 400", "if Input.is_action_pressed(\"move_right\"):"]
    nearest = {}
    for kind in ("minilm", "static"):
        monkeypatch.setenv("GD_ASSETS_EMBEDDER", kind)
        embedding.load_embedder.cache_clear()
        scores = embedding.embed_queries(queries) @ embedding.embed(rows).T
        nearest[kind] = scores.argmax(axis=1).tolist()
    embedding.load_embedder.cache_clear()
    agree = sum(a == b for a, b in zip(nearest["minilm"], nearest["static"]))
    assert agree >= len(queries) - 1, (nearest, [rows[i][:60] for i in nearest["static"]])


def test_an_index_embedded_by_another_model_is_refused(built, monkeypatch):
    from gd_assets.core import embedding

    monkeypatch.setenv("GD_ASSETS_EMBEDDER", "minilm" if embedding.embedder_kind() == "static" else "static")
    with pytest.raises(ValueError, match="another model"):
        CorpusIndex.load(built[1])


def test_an_unknown_embedder_is_a_clear_error(monkeypatch):
    from gd_assets.core import embedding

    monkeypatch.setenv("GD_ASSETS_EMBEDDER", "word2vec")
    with pytest.raises(ValueError, match="static, minilm"):
        embedding.embedder_kind()
