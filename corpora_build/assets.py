"""The corpus as Dagster assets (group `corpora`): sources -> tables -> bridges -> retrieval index.

Thin shell: the builders are plain functions; each asset reads its inputs from the corpus DuckDB,
writes its table with a full-table upsert, and records figures as metadata. A table whose inputs
(source content hashes + builder version) are unchanged since its last materialisation is left as
is, so a weekly refresh with nothing new costs seconds.
"""


import os
from datetime import datetime, timezone

import dagster as dg
from pydantic import Field

from corpora_build import api_mapping as api_mapping_builder
from corpora_build import docs_chunks as docs_builder
from corpora_build.bridges import bridge_shares, build_bridges
from corpora_build.schema import content_hash, frame, upsert
from corpora_build.sources import Source, resolve
from corpora_build.stats import version_of
from gd_assets.core.duck import connect
from gd_assets.home import corpora_db_path, index_dir

GROUP = "corpora"
# Bump when a builder changes what it writes, so the next refresh rebuilds that table.
BUILDER_VERSION = {"docs_chunks": "docs-1", "api_mapping": "map-2"}


class CorpusSource(dg.ConfigurableResource):
    """Where the corpus comes from: auto|debian|github, or paths (joined by ':' or ',') to local archives."""

    source: str = Field(default_factory=lambda: os.environ.get("GD_ASSETS_CORPUS_SOURCE", "auto"))

    def resolve(self) -> list[Source]:
        return resolve(self.source)


def curated_sources() -> list[Source]:
    """The tables curated in this repository, recorded as sources so that the corpus version (which
    judgements and rewrites carry) changes with them, and api_mapping is rebuilt when its table does."""
    from corpora_build.label_prototypes import PROTOTYPES_DIR

    files = {"scene_properties": [api_mapping_builder.SCENE_PROPERTIES], "api_answers": [api_mapping_builder.API_ANSWERS],
             "prototypes": sorted(PROTOTYPES_DIR.glob("*.yaml"))}
    return [Source(name, "curated", "repository", str(paths[0]),
                   content_hash(*[(p.name, p.read_text(encoding="utf-8")) for p in paths]))
            for name, paths in files.items()]


def read_sources() -> dict[str, Source]:
    with connect(corpora_db_path(), read_only=True) as con:
        rows = con.execute("SELECT name, adapter, version, location, content_hash FROM corpus_sources").fetchall()
    return {r[0]: Source(*r) for r in rows}


def _count(table: str) -> int:
    with connect(corpora_db_path()) as con:
        exists = con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = ? "
                             "AND table_catalog = current_database()", [table]).fetchone()[0]
        return con.execute(f"SELECT count(*) FROM {table}").fetchone()[0] if exists else 0


def _unchanged(context: dg.AssetExecutionContext, input_hash: str) -> int | None:
    """Row count of the table when its last materialisation had the same inputs and the rows are still there."""
    event = context.instance.get_latest_materialization_event(context.asset_key)
    if event is None or event.asset_materialization is None:
        return None
    metadata = event.asset_materialization.metadata
    previous = metadata.get("input_hash")
    rows = metadata.get("rows")
    if previous is None or previous.value != input_hash or rows is None:
        return None
    return rows.value if _count(context.asset_key.path[-1]) == rows.value else None


def _write(table: str, rows: list[dict]) -> int:
    with connect(corpora_db_path()) as con:
        return upsert(con, table, frame(table, rows), replace_all=True)


def _counts(rows: list[dict], *keys: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for r in rows:
        key = "/".join(str(r[k]) for k in keys)
        out[key] = out.get(key, 0) + 1
    return dict(sorted(out.items()))


def _table_asset(context: dg.AssetExecutionContext, table: str, names: tuple[str, ...], build, *keys: str):
    sources = read_sources()
    input_hash = content_hash(BUILDER_VERSION[table], [sources[n].content_hash for n in names if n in sources])
    kept = _unchanged(context, input_hash)
    if kept is not None:
        context.log.info(f"{table}: sources unchanged, {kept} rows kept")
        return dg.MaterializeResult(metadata={"rows": kept, "input_hash": input_hash, "skipped": True})
    rows = build(sources)
    written = _write(table, rows)
    context.log.info(f"{table}: {written} rows written")
    return dg.MaterializeResult(metadata={
        "rows": written, "input_hash": input_hash, "skipped": False,
        "counts": dg.MetadataValue.json(_counts(rows, *keys)),
    })


@dg.asset(group_name=GROUP, description="The Godot sources the corpus is built from, with versions and hashes.")
def corpus_sources(context: dg.AssetExecutionContext, corpus_source: CorpusSource) -> dg.MaterializeResult:
    sources = [*corpus_source.resolve(), *curated_sources()]
    now = datetime.now(timezone.utc).replace(tzinfo=None)
    rows = [{**vars(s), "fetched_at": now} for s in sources]
    with connect(corpora_db_path()) as con:
        upsert(con, "corpus_sources", frame("corpus_sources", rows), replace_all=True)
        version = version_of(con)
    return dg.MaterializeResult(metadata={
        "corpus_version": version,
        "sources": dg.MetadataValue.md("\n".join(
            f"| {s.name} | {s.adapter} | {s.version} | `{s.content_hash}` |" for s in sources)),
        "versions": dg.MetadataValue.json({s.name: s.version for s in sources}),
    })


@dg.asset(group_name=GROUP, deps=[corpus_sources],
          description="Class reference of Godot 3.x and 4.x (and docs pages): one row per class and member.")
def docs_chunks(context: dg.AssetExecutionContext) -> dg.MaterializeResult:
    return _table_asset(context, "docs_chunks", ("godot3_classes", "godot4_classes", "docs_pages"),
                        docs_builder.build_docs_chunks, "godot_version", "member_kind")


@dg.asset(group_name=GROUP, deps=[corpus_sources],
          description="Godot 3 -> 4 changes: official rename map, API surface diff, converter syntax rules.")
def api_mapping(context: dg.AssetExecutionContext) -> dg.MaterializeResult:
    return _table_asset(context, "api_mapping", ("godot3_classes", "godot4_classes", "rename_map", "converter_rules",
                                                 "scene_properties", "api_answers"),
                        api_mapping_builder.build_api_mapping, "source", "category")


def load_prototype_rows() -> list[dict] | None:
    """Rows of the curated prototypes, or None while their module is not installed."""
    try:
        from corpora_build.label_prototypes import load_prototypes
    except ImportError:
        return None
    return load_prototypes()


@dg.asset(group_name=GROUP, description="Curated migration patterns: Godot 3 example, Godot 4 form, label.")
def label_prototypes(context: dg.AssetExecutionContext) -> dg.MaterializeResult:
    rows = load_prototype_rows()
    if rows is None:
        context.log.warning("corpora_build.label_prototypes is absent: no prototypes written")
        rows = []
    written = _write("label_prototypes", rows)
    return dg.MaterializeResult(metadata={"rows": written, "counts": dg.MetadataValue.json(_counts(rows, "label"))})


@dg.asset(group_name=GROUP, deps=[docs_chunks, api_mapping, label_prototypes],
          description="Links between rows about the same entity: mapping -> old/new docs, prototype -> mappings.")
def bridges(context: dg.AssetExecutionContext) -> dg.MaterializeResult:
    with connect(corpora_db_path(), read_only=True) as con:
        docs = con.sql("SELECT id, godot_version, class_name, member_kind, member_name, signature FROM docs_chunks").pl()
        mappings = con.sql("SELECT * FROM api_mapping").pl().to_dicts()
        prototypes = con.sql("SELECT id, cues, mappings FROM label_prototypes").pl().to_dicts()
    rows = build_bridges(docs.iter_rows(named=True), mappings, prototypes)
    written = _write("bridges", rows)
    with connect(corpora_db_path(), read_only=True) as con:
        shares = bridge_shares(con)
    return dg.MaterializeResult(metadata={
        "rows": written, "counts": dg.MetadataValue.json(_counts(rows, "relation")),
        **{f"bridged_share_{t}": v for t, v in shares.items()},
    })


@dg.asset(group_name=GROUP, deps=[docs_chunks, api_mapping, label_prototypes],
          description="BM25 + vector index over the three tables; re-embeds only rows whose content changed.")
def corpus_index(context: dg.AssetExecutionContext) -> dg.MaterializeResult:
    from corpora_build.index import build_index

    logged = [0]

    def progress(done: int, total: int) -> None:
        if done == total or done - logged[0] >= max(total // 20, 1):  # about every 5%
            logged[0] = done
            context.log.info(f"embedded {done}/{total} rows")

    stats = build_index(corpora_db_path(), index_dir(), progress=progress)
    flat = {k: v for k, v in stats.items() if isinstance(v, (int, float, str, bool)) and v is not None}
    # The index version is the data version: fragment evidence made from another one shows as stale.
    return dg.MaterializeResult(metadata={**flat, "stats": dg.MetadataValue.json(stats)},
                                data_version=dg.DataVersion(stats["index_version"]))


@dg.asset(group_name=GROUP, deps=[docs_chunks, api_mapping, label_prototypes],
          description="Every Godot 3 name Godot 4 lacks where Godot 3 had it, with the answer the judge and the "
                      "rewrite give a use of it (rebuilt each time: it depends on the code too).")
def api_coverage(context: dg.AssetExecutionContext) -> dg.MaterializeResult:
    from corpora_build.api_coverage import build_api_coverage, coverage_counts, coverage_markdown

    with connect(corpora_db_path(), read_only=True) as con:
        version = version_of(con)
    rows = build_api_coverage(corpora_db_path(), version)
    written = _write("api_coverage", rows)
    counts = coverage_counts(rows)
    context.log.info(f"api_coverage: {counts['all']['answered']} of {counts['all']['total']} Godot 3 names answered")
    return dg.MaterializeResult(metadata={
        "rows": written, "answered": counts["all"]["answered"], "unanswered": counts["all"].get("none", 0),
        "answered_share": round(counts["all"]["answered"] / max(counts["all"]["total"], 1), 4),
        "by_kind": dg.MetadataValue.md(coverage_markdown(counts)), "counts": dg.MetadataValue.json(counts),
    })


TABLE_ASSETS = [corpus_sources, docs_chunks, api_mapping, label_prototypes, bridges]
ASSETS = [*TABLE_ASSETS, corpus_index, api_coverage]
