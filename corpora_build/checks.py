"""Asset checks of the corpus: they run with every refresh and fail loudly (ERROR) with the offending rows.

Thresholds are module constants so a failing check names exactly which bar was missed.
"""


import dagster as dg

from corpora_build.assets import (
    api_coverage,
    api_mapping,
    bridges,
    docs_chunks,
    label_prototypes,
    load_prototype_rows,
)
from corpora_build.bridges import DOC_KINDS, DocsIndex, _name, bridge_shares
from gd_assets.core.corpus.surface import load_surface
from gd_assets.core.duck import connect
from gd_assets.home import corpora_db_path

MIN_NAMES_FOUND = 0.9           # non-ambiguous renames whose old name is in 3.x and new name in 4.x
MIN_BRIDGED = {"api_mapping": 0.85, "label_prototypes": 0.9}
SHOWN = 25                      # offending rows listed in the metadata
SURFACE_CATEGORIES = ("class", "builtin_type", "function", "property", "signal", "enum", "color", "theme_override")


def _result(passed: bool, **metadata) -> dg.AssetCheckResult:
    return dg.AssetCheckResult(passed=passed, severity=dg.AssetCheckSeverity.ERROR, metadata=metadata)


def _table_md(rows: list[tuple], header: tuple[str, ...]) -> dg.MetadataValue:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(v) for v in r) + " |" for r in rows[:SHOWN]]
    return dg.MetadataValue.md("\n".join(lines))


def _duplicates(table: str) -> dg.AssetCheckResult:
    with connect(corpora_db_path(), read_only=True) as con:
        dups = con.execute(f"SELECT id, count(*) FROM {table} GROUP BY id HAVING count(*) > 1 ORDER BY id").fetchall()
        total = con.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
    return _result(not dups, rows=total, duplicate_ids=len(dups), offending=_table_md(dups, ("id", "copies")))


def _unique_ids_check(asset: dg.AssetsDefinition, table: str) -> dg.AssetChecksDefinition:
    @dg.asset_check(asset=asset, name=f"{table}_unique_ids", description=f"No id appears twice in {table}.")
    def check() -> dg.AssetCheckResult:
        return _duplicates(table)

    return check


def missing_names(con) -> tuple[int, list[tuple]]:
    """Non-ambiguous renames whose old name is absent from the 3.x surface or new name from the 4.x one."""
    docs = con.sql("SELECT id, godot_version, class_name, member_kind, member_name, signature FROM docs_chunks").pl()
    index = DocsIndex(docs.iter_rows(named=True), {})
    rows = con.execute(
        "SELECT id, category, old_name, new_name FROM api_mapping WHERE source = 'rename_map' AND NOT ambiguous "
        f"AND category IN ({', '.join(repr(c) for c in SURFACE_CATEGORIES)}) ORDER BY id").fetchall()
    checked, missing = 0, []
    for rid, category, old, new in rows:
        kinds = DOC_KINDS[category]
        if _name(category, old) is None:
            continue  # a generic prefix such as `custom_icons/`
        checked += 1
        lost = [side for side, version, name in (("old", "3", old), ("new", "4", new))
                if not index.exists(version, kinds, _name(category, name))]
        if lost:
            missing.append((rid, old, new, "+".join(lost)))
    return checked, missing


@dg.asset_check(asset=api_mapping, description=(
    f"At least {MIN_NAMES_FOUND:.0%} of the non-ambiguous renames name a 3.x member that exists in the 3.x "
    "class reference and a 4.x member that exists in the 4.x one."))
def api_mapping_names_in_surfaces() -> dg.AssetCheckResult:
    with connect(corpora_db_path(), read_only=True) as con:
        total, missing = missing_names(con)
    share = 1 - len(missing) / total if total else 0.0
    return _result(share >= MIN_NAMES_FOUND, checked=total, found_share=round(share, 4),
                   threshold=MIN_NAMES_FOUND, missing=len(missing),
                   offending=_table_md(missing, ("id", "old", "new", "not found")))


def scene_property_problems(con, surface) -> list[tuple]:
    """Scene-property rows whose Godot 3 name is not a property of their class (or an ancestor) in the 3.x
    reference, or whose Godot 4 name (or its `_min`/`_max` range) is not one of the 4.x class."""
    rows = con.execute("SELECT id, class_context, old_name, new_name FROM api_mapping WHERE source = "
                       "'scene_property' AND category = 'property' AND new_signature IS DISTINCT FROM 'stored' "
                       "ORDER BY id").fetchall()
    classes = con.execute("SELECT id, old_name, new_name FROM api_mapping WHERE source = 'scene_property' "
                          "AND category = 'class' ORDER BY id").fetchall()
    problems = [(rid, f"{old} -> {new}", "", "not a class of both references") for rid, old, new in classes
                if not (surface.has_class("3", old) and surface.has_class("4", new))]
    for rid, cls, old, new in rows:
        cls4 = surface.scene_class(cls)
        if surface.owner_of("3", cls, old, ("property",)) is None:
            problems.append((rid, cls, old, "not a Godot 3 property"))
        elif new and not any(surface.owner_of("4", cls4, name, ("property",)) for name in (new, f"{new}_min")):
            problems.append((rid, cls4, new, "not a Godot 4 property"))
    return problems


@dg.asset_check(asset=api_mapping, description=(
    "Every scene-property row names a property of its Godot 3 class and one of the class Godot 4 renamed it to."))
def scene_properties_in_surfaces() -> dg.AssetCheckResult:
    with connect(corpora_db_path(), read_only=True) as con:
        problems = scene_property_problems(con, load_surface(str(corpora_db_path())))
    return _result(not problems, problems=len(problems), offending=_table_md(problems, ("id", "class", "name", "problem")))


@dg.asset_check(asset=label_prototypes, description="Every prototype's examples parse with tree-sitter-gdscript.")
def label_prototypes_parse() -> dg.AssetCheckResult:
    rows = load_prototype_rows()
    if rows is None:
        return _result(False, problem="corpora_build.label_prototypes is absent: no prototypes to check")
    from corpora_build.label_prototypes import example_parse_problems

    problems = example_parse_problems(rows)
    shown = [tuple(str(v) for v in p.values()) for p in problems]
    header = tuple(problems[0]) if problems else ("problem",)
    return _result(not problems, prototypes=len(rows), problems=len(problems), offending=_table_md(shown, header))


@dg.asset_check(asset=bridges, description=(
    "Enough rows are bridged (api_mapping and label_prototypes above their thresholds) and no bridge dangles."))
def bridges_coverage() -> dg.AssetCheckResult:
    with connect(corpora_db_path(), read_only=True) as con:
        shares = bridge_shares(con)
        dangling = con.execute(
            "SELECT from_id, relation, to_id FROM bridges WHERE to_id NOT IN "
            "(SELECT id FROM docs_chunks UNION ALL SELECT id FROM api_mapping) ORDER BY ALL").fetchall()
        prototypes = con.execute("SELECT count(*) FROM label_prototypes").fetchone()[0]
        unbridged = con.execute(
            "SELECT id, category, old_name, new_name FROM api_mapping WHERE id NOT IN (SELECT from_id FROM bridges) "
            "ORDER BY category, id").fetchall()
    low = {t: s for t, s in shares.items() if t in MIN_BRIDGED and s < MIN_BRIDGED[t]
           and (t != "label_prototypes" or prototypes)}
    return _result(not low and not dangling, **{f"share_{t}": s for t, s in shares.items()},
                   thresholds=dg.MetadataValue.json(MIN_BRIDGED), below_threshold=dg.MetadataValue.json(low),
                   dangling=len(dangling), dangling_rows=_table_md(dangling, ("from", "relation", "to")),
                   unbridged_mappings=_table_md(unbridged, ("id", "category", "old", "new")))


# Settings the engines read without documenting them (their editors write them): curated answers may name them.
UNDOCUMENTED_SETTINGS = ("internationalization/locale/translations", "internationalization/locale/translation_remaps",
                         "locale/translations", "locale/translation_remaps", "locale/locale_filter")


def answer_problems(con, surface) -> list[tuple]:
    """Curated answers whose Godot 3 class or name the 3.x reference does not document, or whose Godot 4 name
    (a rename on the class it became, a `Class.member` it moved to, a project setting) the 4.x one does not."""
    import fnmatch

    rows = con.execute("SELECT id, class_context, old_name, change_kind, new_name FROM api_mapping "
                       "WHERE source = 'curated_answer' ORDER BY id").fetchall()
    problems = []
    for rid, cls, name, kind, new in rows:
        classes = fnmatch.filter(sorted(surface.classes["3"]), cls)
        if not classes:
            problems.append((rid, cls, name, "no Godot 3 class matches"))
            continue
        if "*" not in name and name != cls and name not in UNDOCUMENTED_SETTINGS and \
                not any(surface.owner_of("3", c, name) for c in classes):
            problems.append((rid, cls, name, "not a Godot 3 member of the class"))
        if kind == "renamed" and cls == "ProjectSettings":
            if surface.owner_of("4", cls, new) is None and new not in UNDOCUMENTED_SETTINGS:
                problems.append((rid, cls, new, "not a Godot 4 project setting"))
        elif kind == "renamed" and name == cls:
            if not surface.has_class("4", new):
                problems.append((rid, cls, new, "not a Godot 4 class"))
        elif kind == "renamed":
            target = surface.class4(classes[0]) or "@GlobalScope"
            *through, last = new.split(".")
            for step in through:
                owner = surface.owner_of("4", target, step.removesuffix("()")) or ""
                target = surface.types.get(("4", owner, step.removesuffix("()")), "")
            if surface.owner_of("4", target, last) is None and not surface.is_global_constant("4", last) and \
                    not surface.is_global_function("4", last):
                problems.append((rid, cls, new, "not a Godot 4 member of the class it became"))
        elif kind == "moved":
            cls4, _, member = new.partition(".")
            if not surface.class_member("4", cls4, member):
                problems.append((rid, cls, new, "not a Godot 4 member"))
    return problems


@dg.asset_check(asset=api_mapping, description=(
    "Every curated answer names a Godot 3 class and member, and every rename or move a Godot 4 one."))
def api_answers_in_surfaces() -> dg.AssetCheckResult:
    with connect(corpora_db_path(), read_only=True) as con:
        problems = answer_problems(con, load_surface(str(corpora_db_path())))
    return _result(not problems, problems=len(problems), offending=_table_md(problems, ("id", "class", "name", "problem")))


@dg.asset_check(asset=api_coverage, description=(
    "Every Godot 3 name Godot 4 lacks gets an answer: a rename, a move, a call-shape or behaviour rule, or a manual "
    "item saying what to do (a manual item saying only that the name is gone does not count)."))
def api_coverage_every_name_answered() -> dg.AssetCheckResult:
    with connect(corpora_db_path(), read_only=True) as con:
        total = con.execute("SELECT count(*) FROM api_coverage").fetchone()[0]
        unanswered = con.execute("SELECT id, coalesce(rule, ''), godot3_signature FROM api_coverage "
                                 "WHERE answer = 'none' ORDER BY id").fetchall()
    return _result(not unanswered and total > 0, names=total, unanswered=len(unanswered),
                   offending=_table_md([(i, r or "nothing written", s) for i, r, s in unanswered],
                                       ("name", "what the pipeline did", "Godot 3 signature")))


CHECKS = [
    _unique_ids_check(docs_chunks, "docs_chunks"),
    _unique_ids_check(api_mapping, "api_mapping"),
    _unique_ids_check(label_prototypes, "label_prototypes"),
    api_mapping_names_in_surfaces,
    scene_properties_in_surfaces,
    label_prototypes_parse,
    bridges_coverage,
    api_answers_in_surfaces,
    api_coverage_every_name_answered,
]
