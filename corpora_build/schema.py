"""The one place for the corpus tables: DuckDB DDL, polars schemas and the upsert every writer uses.

Every row has a stable `id` (same entity -> same id on every build) and a `content_hash` of what
was embedded, so a refresh re-embeds only changed rows and a retry never doubles a table.
"""

from __future__ import annotations

from typing import Iterable, Mapping

import duckdb
import polars as pl

from gd_assets.core.corpus.version import content_hash
from gd_assets.core.tables import TableSet

__all__ = ["KEYS", "POLARS", "TABLES", "content_hash", "create_tables", "frame", "unique_id", "upsert"]

TABLES: dict[str, str] = {
    "docs_chunks": """
        CREATE TABLE IF NOT EXISTS docs_chunks (
            id VARCHAR PRIMARY KEY,          -- e.g. docs:4:CharacterBody2D.method.move_and_slide
            godot_version VARCHAR NOT NULL,  -- '3' or '4'
            release VARCHAR NOT NULL,        -- e.g. 3.6.2-stable
            class_name VARCHAR,              -- owning class; NULL for doc pages
            member_kind VARCHAR NOT NULL,    -- class|method|property|signal|constant|enum|annotation|theme_item|operator|constructor|page_section
            member_name VARCHAR,             -- method/property/... name; NULL for class rows
            title VARCHAR NOT NULL,          -- e.g. 'CharacterBody2D.move_and_slide (Godot 4)'
            signature VARCHAR,               -- e.g. 'bool move_and_slide()'
            text VARCHAR NOT NULL,           -- BBCode-cleaned description, code names kept
            source VARCHAR NOT NULL,         -- file inside the source, e.g. doc/classes/Node.xml
            content_hash VARCHAR NOT NULL
        )""",
    "api_mapping": """
        CREATE TABLE IF NOT EXISTS api_mapping (
            id VARCHAR PRIMARY KEY,          -- e.g. map:rename:class:KinematicBody2D
            old_name VARCHAR,                -- Godot 3 name or form
            new_name VARCHAR,                -- Godot 4 name or form; NULL when removed
            change_kind VARCHAR NOT NULL,    -- renamed|removed|added|signature_changed|syntax_changed
            category VARCHAR NOT NULL,       -- class|function|property|signal|enum|builtin_type|project_setting|project_godot|input_map|shader|color|theme_override|csharp_*|syntax|member
            class_context VARCHAR,           -- owning class when known
            old_signature VARCHAR,
            new_signature VARCHAR,
            source VARCHAR NOT NULL,         -- rename_map|api_diff|converter_rule
            ambiguous BOOLEAN NOT NULL,      -- the converter cannot apply it blindly
            ambiguous_reason VARCHAR,
            title VARCHAR NOT NULL,          -- e.g. 'KinematicBody2D -> CharacterBody2D (class rename)'
            text VARCHAR NOT NULL,           -- one readable sentence or two
            content_hash VARCHAR NOT NULL
        )""",
    "label_prototypes": """
        CREATE TABLE IF NOT EXISTS label_prototypes (
            id VARCHAR PRIMARY KEY,          -- proto:<slug>
            label VARCHAR NOT NULL,          -- rename|syntax|call_shape|semantic|converter_pitfall|godot4_idiom
            category VARCHAR NOT NULL,
            title VARCHAR NOT NULL,
            godot3_example VARCHAR NOT NULL,
            godot4_example VARCHAR NOT NULL,
            explanation VARCHAR NOT NULL,
            cues VARCHAR[] NOT NULL,         -- symbols / call shapes it should match
            mappings VARCHAR[] NOT NULL,     -- api_mapping ids it illustrates (curated hints)
            text VARCHAR NOT NULL,           -- title + explanation + examples, what is searched
            content_hash VARCHAR NOT NULL
        )""",
    "bridges": """
        CREATE TABLE IF NOT EXISTS bridges (
            from_table VARCHAR NOT NULL,
            from_id VARCHAR NOT NULL,
            relation VARCHAR NOT NULL,       -- old_doc|new_doc|illustrates
            to_table VARCHAR NOT NULL,
            to_id VARCHAR NOT NULL,
            PRIMARY KEY (from_id, relation, to_id)
        )""",
    "api_coverage": """
        CREATE TABLE IF NOT EXISTS api_coverage (
            id VARCHAR PRIMARY KEY,          -- cov:<kind>:<Godot 3 class>.<name>, e.g. cov:method:OS.get_ticks_msec
            kind VARCHAR NOT NULL,           -- class|method|property|signal|constant|global_function|global_constant|project_setting
            class_name VARCHAR NOT NULL,     -- the Godot 3 class (@GlobalScope / @GDScript for globals)
            name VARCHAR NOT NULL,           -- the Godot 3 name Godot 4 lacks there
            godot4_class VARCHAR,            -- the class it became in Godot 4; NULL when the class is gone
            godot3_signature VARCHAR,
            gone_row VARCHAR NOT NULL,       -- the api_mapping row saying it is gone
            answer VARCHAR NOT NULL,         -- rename|moved|call_shape|behaviour|manual|none
            rule VARCHAR,                    -- the rewrite rule or manual item kind that answered
            godot4 VARCHAR,                  -- what the use became, or what the manual item says
            evidence VARCHAR                 -- the corpus row the answer cites
        )""",
    "corpus_sources": """
        CREATE TABLE IF NOT EXISTS corpus_sources (
            name VARCHAR PRIMARY KEY,        -- godot3_classes|godot4_classes|rename_map|converter_rules|docs_pages
            adapter VARCHAR NOT NULL,        -- archive|debian|github
            version VARCHAR NOT NULL,        -- e.g. 3.6.2-stable
            location VARCHAR NOT NULL,
            content_hash VARCHAR NOT NULL,
            fetched_at TIMESTAMP NOT NULL
        )""",
}

KEYS: dict[str, tuple[str, ...]] = {
    "docs_chunks": ("id",),
    "api_mapping": ("id",),
    "label_prototypes": ("id",),
    "bridges": ("from_id", "relation", "to_id"),
    "api_coverage": ("id",),
    "corpus_sources": ("name",),
}

POLARS: dict[str, dict[str, pl.DataType]] = {
    "docs_chunks": {
        "id": pl.String, "godot_version": pl.String, "release": pl.String, "class_name": pl.String,
        "member_kind": pl.String, "member_name": pl.String, "title": pl.String, "signature": pl.String,
        "text": pl.String, "source": pl.String, "content_hash": pl.String,
    },
    "api_mapping": {
        "id": pl.String, "old_name": pl.String, "new_name": pl.String, "change_kind": pl.String,
        "category": pl.String, "class_context": pl.String, "old_signature": pl.String,
        "new_signature": pl.String, "source": pl.String, "ambiguous": pl.Boolean,
        "ambiguous_reason": pl.String, "title": pl.String, "text": pl.String, "content_hash": pl.String,
    },
    "label_prototypes": {
        "id": pl.String, "label": pl.String, "category": pl.String, "title": pl.String,
        "godot3_example": pl.String, "godot4_example": pl.String, "explanation": pl.String,
        "cues": pl.List(pl.String), "mappings": pl.List(pl.String), "text": pl.String,
        "content_hash": pl.String,
    },
    "bridges": {
        "from_table": pl.String, "from_id": pl.String, "relation": pl.String, "to_table": pl.String,
        "to_id": pl.String,
    },
    "api_coverage": {
        "id": pl.String, "kind": pl.String, "class_name": pl.String, "name": pl.String, "godot4_class": pl.String,
        "godot3_signature": pl.String, "gone_row": pl.String, "answer": pl.String, "rule": pl.String,
        "godot4": pl.String, "evidence": pl.String,
    },
    "corpus_sources": {
        "name": pl.String, "adapter": pl.String, "version": pl.String, "location": pl.String,
        "content_hash": pl.String, "fetched_at": pl.Datetime,
    },
}


def unique_id(rid: str, seen: set[str], alternative: str | None = None) -> str:
    """The same id on every build: the first row keeps `rid`; a later collision takes `alternative`
    (a more specific id) when given, then `#2`, `#3`... in build order. Adds the result to `seen`."""
    if rid in seen and alternative is not None:
        rid = alternative
    base, n = rid, 2
    while rid in seen:
        rid, n = f"{base}#{n}", n + 1
    seen.add(rid)
    return rid


CORPUS_TABLES = TableSet(TABLES, KEYS, POLARS)


def create_tables(con: duckdb.DuckDBPyConnection) -> None:
    CORPUS_TABLES.create(con)


def frame(table: str, rows: Iterable[Mapping[str, object]]) -> pl.DataFrame:
    """Rows as a polars frame with the table's schema (missing columns become NULL)."""
    return CORPUS_TABLES.frame(table, rows)


def upsert(con: duckdb.DuckDBPyConnection, table: str, rows: pl.DataFrame, replace_all: bool = False) -> int:
    """Insert or replace rows by primary key; with `replace_all`, rows absent from `rows` are deleted.

    `replace_all` is how a full rebuild of a table drops entities that disappeared upstream
    without ever doubling the ones that stayed.
    """
    CORPUS_TABLES.ensure(con)
    return CORPUS_TABLES.upsert(con, [(table, rows)], replace_all=replace_all)
