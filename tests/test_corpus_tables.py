"""The corpus tables built from the real Godot sources (../shared/corpus/, else Debian's source packages)."""

from __future__ import annotations

import re
from collections import Counter

import pytest
from conftest import corpus_source, corpus_sources

from corpora_build.api_mapping import build_api_mapping, converter_vectors, syntax_rows
from corpora_build.bridges import build_bridges
from corpora_build.checks import scene_property_problems
from corpora_build.docs_chunks import build_docs_chunks, clean_bbcode
from corpora_build.schema import frame, upsert
from corpora_build.sources import Source
from corpora_build.sources.files import hash_files
from gd_assets.core.corpus.surface import load_surface
from gd_assets.core.duck import connect


@pytest.fixture(scope="module")
def sources() -> dict[str, Source]:
    return corpus_sources()


@pytest.fixture(scope="module")
def docs(sources) -> list[dict]:
    return build_docs_chunks(sources)


@pytest.fixture(scope="module")
def mappings(sources) -> dict[str, dict]:
    return {r["id"]: r for r in build_api_mapping(sources)}


def test_sources_record_exact_versions_and_hashes(sources):
    assert sources["godot3_classes"].version == "3.6.2-stable"
    assert sources["godot4_classes"].version == "4.6.3-stable"
    assert sources["rename_map"].version == "4.6.3-stable"
    assert all(re.fullmatch(r"[0-9a-f]{16}", s.content_hash) for s in sources.values())


def test_content_hash_ignores_packing():
    files = [("doc/classes/A.xml", b"<class/>"), ("version.py", b"major = 3")]
    assert hash_files(files) == hash_files(list(files))
    assert hash_files(files) != hash_files([("doc/classes/A.xml", b"<class />"), files[1]])


def test_both_versions_present_with_readme_counts(sources, docs):
    counts = Counter((r["godot_version"], r["member_kind"]) for r in docs)
    assert counts[("3", "class")] == 714 and counts[("4", "class")] == 1065
    assert counts[("3", "method")] == 5213 and counts[("4", "method")] == 10436
    assert counts[("3", "property")] == 3586 and counts[("4", "property")] == 6787
    assert counts[("3", "signal")] == 344 and counts[("4", "signal")] == 490
    assert counts[("4", "annotation")] == 36
    if "docs_pages" in sources:  # ../shared/corpus carries the docs pages; Debian's source packages do not
        assert counts[("3", "page_section")] > 50 and counts[("4", "page_section")] > 100
    else:
        assert counts[("3", "page_section")] == counts[("4", "page_section")] == 0
    assert len({r["id"] for r in docs}) == len(docs)


def test_docs_ids_are_stable_names(docs):
    by_id = {r["id"]: r for r in docs}
    row = by_id["docs:4:CharacterBody2D.method.move_and_slide"]
    assert row["signature"] == "bool move_and_slide()" and row["release"] == "4.6.3-stable"
    assert by_id["docs:3:KinematicBody2D.class"]["release"] == "3.6.2-stable"


def test_bbcode_is_cleaned_but_code_names_kept(docs):
    text = {r["id"]: r["text"] for r in docs}["docs:3:KinematicBody2D.class"]
    assert "move_and_slide" in text and "AnimationPlayer" in text
    assert "[method" not in text and "[b]" not in text and "[AnimationPlayer]" not in text
    assert clean_bbcode("Call [method foo] on [Node] with [code]x[/code] [param delta].") == "Call foo on Node with x delta."
    leftovers = [r["id"] for r in docs if r["member_kind"] != "page_section"
                 and re.search(r"\[/?(method|member|code|b|i|codeblock|param)[\] ]", r["text"])]
    assert leftovers == []


def test_rename_map_counts_per_table(mappings):
    rows = [r for r in mappings.values() if r["source"] == "rename_map"]
    live = Counter(r["category"] for r in rows if not r["ambiguous"])
    commented = Counter(r["category"] for r in rows if r["ambiguous"])
    assert sum(live.values()) == 1599 and sum(commented.values()) == 86
    assert live["function"] == 408 and commented["function"] == 51
    assert live["class"] == 198 and live["csharp_function"] == 392


def test_kinematicbody2d_renamed_characterbody2d(mappings):
    row = mappings["map:rename:class:KinematicBody2D"]
    assert row["new_name"] == "CharacterBody2D" and row["change_kind"] == "renamed"
    assert row["ambiguous"] is False
    assert row["title"] == "KinematicBody2D -> CharacterBody2D (class rename)"
    assert "KinematicBody2D is renamed CharacterBody2D in Godot 4" in row["text"]


def test_commented_out_pair_is_ambiguous_with_reason(mappings):
    row = mappings["map:rename:function:get_name"]
    assert row["ambiguous"] is True and row["new_name"] == "get_tracker_name"
    assert "receiver type" in row["ambiguous_reason"] and "Breaks OS, Node" in row["ambiguous_reason"]
    assert row["class_context"] == "XRPositionalTracker"


def test_move_and_slide_signature_change_resolves_class_rename(mappings):
    row = mappings["map:diff:method:KinematicBody2D.move_and_slide"]
    assert row["change_kind"] == "signature_changed" and row["source"] == "api_diff"
    assert row["class_context"] == "CharacterBody2D"
    assert "linear_velocity: Vector2" in row["old_signature"] and row["new_signature"] == "bool move_and_slide()"
    # A renamed class is compared, not reported removed.
    assert "map:diff:class:KinematicBody2D" not in mappings


def test_yield_becomes_await_syntax_row(mappings):
    rows = [r for r in mappings.values() if r["category"] == "syntax" and r["old_name"].startswith("yield(")]
    assert rows and rows[0]["new_name"] == "await this.timeout"
    assert rows[0]["source"] == "converter_rule" and rows[0]["change_kind"] == "syntax_changed"
    forms = {(r["old_name"], r["new_name"]) for r in mappings.values() if r["category"] == "syntax"}
    assert ("onready", "@onready") in forms and ("tool", "@tool") in forms


def test_converter_cpp_is_read_like_the_json(tmp_path):
    cpp = tmp_path / "project_converter_3_to_4.cpp"
    cpp.write_text(
        '\tvalid = valid && test_conversion_gdscript_builtin("yield(this, \\"timeout\\")", "await this.timeout", '
        '&ProjectConverter3To4::rename_gdscript_functions, "custom rename", reg_container, false);\n'
        '\tvalid = valid && test_conversion_with_regex("tool", "@tool", &ProjectConverter3To4::fix_tool_declaration, '
        '"gdscript keyword", reg_container);\n')
    vectors = converter_vectors(Source("converter_rules", "debian", "4.6.3-stable", str(cpp), "x"))
    assert [(v["godot3"], v["godot4"], v["rule"]) for v in vectors] == [
        ('yield(this, "timeout")', "await this.timeout", "rename_gdscript_functions"),
        ("tool", "@tool", "fix_tool_declaration"),
    ]
    assert len(syntax_rows(vectors)) == 2


def test_bridges_link_mappings_to_old_and_new_docs(docs, mappings):
    bridges = build_bridges(docs, list(mappings.values()), [])
    links = {(b["from_id"], b["relation"], b["to_id"]) for b in bridges}
    assert ("map:rename:class:KinematicBody2D", "old_doc", "docs:3:KinematicBody2D.class") in links
    assert ("map:rename:class:KinematicBody2D", "new_doc", "docs:4:CharacterBody2D.class") in links
    assert ("map:diff:method:KinematicBody2D.move_and_slide", "new_doc",
            "docs:4:CharacterBody2D.method.move_and_slide") in links
    bridged = {b["from_id"] for b in bridges}
    assert len(bridged) / len(mappings) > 0.9


def test_prototypes_bridge_to_the_mappings_they_illustrate(docs, mappings):
    protos = pytest.importorskip("corpora_build.label_prototypes")
    rows = protos.load_prototypes()
    bridges = build_bridges(docs, list(mappings.values()), rows)
    illustrated = {b["from_id"] for b in bridges if b["relation"] == "illustrates"}
    assert len(illustrated) / len(rows) > 0.9
    assert protos.example_parse_problems(rows) == []


def test_building_twice_leaves_identical_counts(gd_home, sources, docs, mappings):
    from gd_assets.core.duck import connect
    from gd_assets.home import corpora_db_path

    counts = []
    for _ in range(2):
        with connect(corpora_db_path()) as con:
            upsert(con, "docs_chunks", frame("docs_chunks", build_docs_chunks(sources)), replace_all=True)
            upsert(con, "api_mapping", frame("api_mapping", list(mappings.values())), replace_all=True)
            counts.append([con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("docs_chunks", "api_mapping")])
    assert counts[0] == counts[1] == [len(docs), len(mappings)]


def test_definitions_load():
    import dagster as dg

    from corpora_build.definitions import defs

    dg.Definitions.validate_loadable(defs)
    assert defs.resolve_job_def("corpus_refresh") is not None


@pytest.mark.slow
def test_dagster_materialises_table_assets_and_refresh_skips(gd_home):

    from corpora_build.stats import corpus_stats, corpus_version
    from gd_assets.home import corpora_db_path
    from gd_assets.orchestrate import build_corpus

    source = str(corpus_source())
    first = build_corpus(source, include_index=False)
    assert first.success
    checks = {e.check_name: e.passed for e in first.get_asset_check_evaluations()}
    assert checks["docs_chunks_unique_ids"] and checks["api_mapping_unique_ids"]
    assert checks["api_mapping_names_in_surfaces"] and checks["bridges_coverage"]
    stats = corpus_stats(corpora_db_path())
    version = corpus_version(corpora_db_path())

    second = build_corpus(source, include_index=False)
    assert second.success
    skipped = {m.asset_key.path[-1]: m.materialization.metadata.get("skipped")
               for m in second.get_asset_materialization_events()}
    assert skipped["docs_chunks"].value is True and skipped["api_mapping"].value is True
    assert corpus_stats(corpora_db_path())["tables"] == stats["tables"]
    assert corpus_version(corpora_db_path()) == version != "empty"


def test_scene_property_rows_name_real_properties_of_both_references(corpus_home):
    """Every curated scene-property row: its Godot 3 name is a property of its class in 3.x, its Godot 4
    name one of the class it becomes in 4.x (what the `scene_properties_in_surfaces` check asserts)."""
    db = corpus_home / "corpora.duckdb"
    with connect(db, read_only=True) as con:
        assert scene_property_problems(con, load_surface(str(db))) == []
        rows = dict(con.execute("SELECT id, title FROM api_mapping WHERE source = 'scene_property'").fetchall())
    assert rows["map:scene:Label.align"] == "Label.align -> horizontal_alignment (scene property)"
    assert rows["map:scene:Camera2D.zoom"] == "Camera2D.zoom -> zoom (value: reciprocal) (scene property)"
    assert rows["map:scene:DynamicFont"] == "DynamicFont -> FontVariation (scene node or resource class)"
