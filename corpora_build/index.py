"""The retrieval index over all three corpus tables: BM25 (bm25s) + vectors (usearch), one build.

Every row of docs_chunks, api_mapping and label_prototypes becomes one index row, searched the same
way whatever its table. A build lives in its own folder `build-<version>/` under the index
directory and is published by atomically replacing the `CURRENT` pointer, so a reader never sees a
half-written index. The row-aligned vectors of a build double as the embedding cache of the next
one: a row whose (id, content_hash) is unchanged is never embedded again, and an unchanged corpus
is a no-op.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Callable

import numpy as np
import polars as pl

from gd_assets.core import embedding, tokens
from gd_assets.core.corpus.layout import (
    BM25_DIR,
    CURRENT,
    DENSE_FILE,
    EXACT_PREFIX,
    LINKS_FILE,
    MANIFEST,
    NAME_PREFIX,
    ROWS_FILE,
    VECTORS_FILE,
    current_build,
    read_manifest,
)
from gd_assets.core.duck import connect

log = logging.getLogger(__name__)

# Bump when the sparse texts, the file layout or the index parameters below change.
INDEX_FORMAT = "gd-index-4"
# Bump when DENSE_FIELDS change: cached vectors of an older dense text are never reused.
DENSE_FORMAT = "dense-1"
TABLE_ORDER: tuple[str, ...] = ("api_mapping", "docs_chunks", "label_prototypes")
# Sparse text: names and signatures next to the prose, so a code cue matches a row by its names.
SPARSE_FIELDS: dict[str, tuple[str, ...]] = {
    "docs_chunks": ("title", "class_name", "member_name", "signature", "text"),
    "api_mapping": ("title", "old_name", "new_name", "class_context", "old_signature", "new_signature", "text"),
    "label_prototypes": ("title", "cues", "text"),
}
# Names: the symbols a row is about (a class row: its class; a member row: its member and
# `Class.member`; a mapping: its old and new names; a prototype: its cues; plus the other-version
# names of a renamed symbol). Their tokens are indexed again as `n:<token>` (NAME_PREFIX), and each whole
# name as `x:<name>` (EXACT_PREFIX), so an exact symbol match (`KinematicBody2D`, `instance`, `yield(`) outweighs prose.
# Dense text: what the row means, in the order a reader would say it.
DENSE_FIELDS: dict[str, tuple[str, ...]] = {
    "docs_chunks": ("title", "signature", "text"),
    "api_mapping": ("title", "text"),
    "label_prototypes": ("title", "text"),
}
BM25_PARAMS = {"k1": 1.2, "b": 0.75, "method": "lucene"}
USEARCH_PARAMS = {"metric": "cos", "dtype": "f16", "connectivity": 16, "expansion_add": 128}

MAX_LINKS = 16

Progress = Callable[[int, int], None]


def _embed_signature() -> str:
    return f"{embedding.embedder_signature()}|{DENSE_FORMAT}"


def _index_version(rows: pl.DataFrame, links: list[tuple[str, str]]) -> str:
    """Stable over identical inputs: row keys and hashes, tokenizer, embedder and index parameters."""
    h = hashlib.sha256()
    h.update(json.dumps([INDEX_FORMAT, DENSE_FORMAT, tokens.TOKENIZER_VERSION, embedding.embedder_signature(),
                         BM25_PARAMS, USEARCH_PARAMS], sort_keys=True).encode())
    for table, rid, chash in zip(rows["table"], rows["id"], rows["content_hash"]):
        h.update(f"\n{table}\t{rid}\t{chash}".encode())
    for a, b in links:
        h.update(f"\n{a}>{b}".encode())
    return h.hexdigest()[:16]


def _join(values: list[object]) -> str:
    parts: list[str] = []
    for value in values:
        if value is None:
            continue
        if isinstance(value, (list, tuple)):
            parts.extend(str(v) for v in value if v)
        elif str(value):
            parts.append(str(value))
    return "\n".join(parts)


def _renames(con) -> dict[tuple[str, str], set[str]]:
    """Other names of a symbol across versions, from the rename rows of api_mapping.

    Keyed by (kind, name) with kind `class` or `member`, both directions: a Godot 4 row named
    CharacterBody2D also answers to KinematicBody2D, so one code cue reaches both versions' rows.
    """
    out: dict[tuple[str, str], set[str]] = {}
    try:
        pairs = con.execute(
            "SELECT category, old_name, new_name FROM api_mapping "
            "WHERE change_kind = 'renamed' AND old_name IS NOT NULL AND new_name IS NOT NULL").fetchall()
    except Exception:  # no api_mapping table yet
        return out
    for category, old, new in pairs:
        kind = "class" if category in ("class", "builtin_type") else "member"
        if old != new:
            out.setdefault((kind, new), set()).add(old)
            out.setdefault((kind, old), set()).add(new)
    return out


def _aliases(record: dict, renames: dict[tuple[str, str], set[str]]) -> list[str]:
    if record.get("member_kind") == "class" and record.get("class_name"):
        return sorted(renames.get(("class", record["class_name"]), ()))
    if record.get("member_name") and record.get("member_kind") != "page_section":
        return sorted(renames.get(("member", record["member_name"]), ()))
    return []


def _names(table: str, record: dict) -> list[str]:
    if table == "docs_chunks":
        kind, cls, member = record.get("member_kind"), record.get("class_name"), record.get("member_name")
        if kind == "class":
            return [cls] if cls else []
        if kind == "page_section" or not member:
            return []
        return [member, f"{cls}.{member}"] if cls else [member]
    if table == "api_mapping":
        return [n for n in (record.get("old_name"), record.get("new_name")) if n]
    return [c for c in (record.get("cues") or []) if c]


def exact_name(name: str) -> str | None:
    """The `x:` token of a whole name, or None for a code snippet (it could never equal one token)."""
    name = name.strip().lower().removesuffix("()")
    return None if not name or any(c.isspace() for c in name) else EXACT_PREFIX + name


def read_corpus(db_path: Path) -> tuple[pl.DataFrame, list[tuple[str, str]]]:
    """All rows of the three tables (table order, then id order) with their sparse and dense texts,
    and the bridges between rows as (from_id, to_id) pairs, sorted."""
    frames: list[pl.DataFrame] = []
    links: list[tuple[str, str]] = []
    with connect(db_path) as con:
        present = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables "
                                             "WHERE table_catalog = current_database()").fetchall()}
        if "bridges" in present:
            links = [(a, b) for a, b in con.execute(
                "SELECT from_id, to_id FROM bridges ORDER BY from_id, to_id").fetchall()]
        renames = _renames(con) if "api_mapping" in present else {}
        for table in TABLE_ORDER:
            if table not in present:
                log.warning("%s has no table %s yet: indexing without it", db_path, table)
                continue
            df = con.sql(f"SELECT * FROM {table} ORDER BY id").pl()
            if df.height == 0:
                continue
            records = df.to_dicts()
            names = ["\n".join(_names(table, r) + _aliases(r, renames)) for r in records]
            frames.append(pl.DataFrame({
                "table": [table] * df.height,
                "id": df["id"],
                "title": df["title"],
                "text": df["text"],
                "content_hash": df["content_hash"],
                "sparse_text": [_join([r.get(f) for f in SPARSE_FIELDS[table]]) for r in records],
                "name_text": names,
                "dense_text": [_join([r.get(f) for f in DENSE_FIELDS[table]]) for r in records],
            }, schema={"table": pl.String, "id": pl.String, "title": pl.String, "text": pl.String,
                       "content_hash": pl.String, "sparse_text": pl.String, "name_text": pl.String,
                       "dense_text": pl.String}))
    if not frames:
        raise ValueError(f"{db_path} has no rows in {', '.join(TABLE_ORDER)}: build the corpus tables first")
    return pl.concat(frames), links


def _write_links(path: Path, ids: list[str], links: list[tuple[str, str]]) -> int:
    """Bridges as a CSR over row positions, both directions, at most MAX_LINKS per row."""
    pos = {rid: i for i, rid in enumerate(ids)}
    neighbours: dict[int, list[int]] = {}
    for a, b in links:
        i, j = pos.get(a), pos.get(b)
        if i is None or j is None or i == j:
            continue
        for x, y in ((i, j), (j, i)):
            lst = neighbours.setdefault(x, [])
            if len(lst) < MAX_LINKS and y not in lst:
                lst.append(y)
    counts = np.zeros(len(ids) + 1, dtype=np.int64)
    for i, lst in neighbours.items():
        counts[i + 1] = len(lst)
    indptr = np.cumsum(counts)
    indices = np.zeros(int(indptr[-1]), dtype=np.int32)
    for i, lst in neighbours.items():
        indices[indptr[i]:indptr[i + 1]] = lst
    np.savez(path, indptr=indptr, indices=indices)
    return int(indptr[-1])


def _cached_vectors(index_dir: Path, rows: pl.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Vectors of the previous build for rows whose (id, content_hash) is unchanged, and a found mask."""
    found = np.zeros(rows.height, dtype=bool)
    vectors = np.zeros((rows.height, embedding.DIMENSIONS), dtype=np.float32)
    build = current_build(index_dir)
    if build is None:
        return vectors, found
    manifest = json.loads((build / MANIFEST).read_text())
    if manifest.get("embed_signature") != _embed_signature():
        log.info("embedder changed since the last build: every row is embedded again")
        return vectors, found
    old = pl.read_ipc(build / ROWS_FILE, columns=["table", "id", "content_hash"])
    old = old.with_row_index("old_pos")
    new = rows.select("table", "id", "content_hash").with_row_index("new_pos")
    hit = new.join(old, on=["table", "id", "content_hash"], how="inner")
    if hit.height:
        old_vectors = np.load(build / VECTORS_FILE, mmap_mode="r")
        new_pos = hit["new_pos"].to_numpy()
        vectors[new_pos] = old_vectors[hit["old_pos"].to_numpy()].astype(np.float32)
        found[new_pos] = True
    return vectors, found


def _write_bm25(folder: Path, sparse_texts: list[str], name_texts: list[str]) -> None:
    import bm25s

    corpus_tokens = []
    for text, names in zip(sparse_texts, name_texts):
        doc = tokens.tokenize(text) + [NAME_PREFIX + t for t in tokens.tokenize(names)]
        doc += [x for x in map(exact_name, names.split("\n")) if x]
        corpus_tokens.append(doc or [""])
    retriever = bm25s.BM25(**BM25_PARAMS)
    retriever.index(corpus_tokens, show_progress=False)
    retriever.save(str(folder), show_progress=False)


def _write_dense(path: Path, vectors: np.ndarray) -> None:
    from usearch.index import Index

    index = Index(ndim=vectors.shape[1], **USEARCH_PARAMS)
    index.add(np.arange(len(vectors), dtype=np.uint64), vectors, threads=os.cpu_count() or 1)
    index.save(str(path))


def _write_rows(path: Path, rows: pl.DataFrame) -> None:
    """Row metadata as an uncompressed Arrow IPC file (plain large strings), memory-mappable."""
    import pyarrow as pa

    table = rows.to_arrow()
    table = table.cast(pa.schema([pa.field(f.name, pa.large_string()) for f in table.schema]))
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)


def _folder_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def _publish(index_dir: Path, staging: Path, version: str) -> Path:
    """Move the finished build into place, then swap the pointer; older builds but one are removed."""
    final = index_dir / f"build-{version}"
    if final.exists():
        shutil.rmtree(final)
    os.replace(staging, final)
    fd, tmp = tempfile.mkstemp(dir=index_dir, prefix=".current-")
    with os.fdopen(fd, "w") as f:
        f.write(final.name + "\n")
        f.flush()
        os.fsync(f.fileno())
    previous = current_build(index_dir)
    os.replace(tmp, index_dir / CURRENT)
    # Keep the previous build: a reader that loaded it a moment ago may still be opening its files.
    keep = {final.name} | ({previous.name} if previous else set())
    for old in index_dir.glob("build-*"):
        if old.name not in keep:
            shutil.rmtree(old, ignore_errors=True)
    for stale in index_dir.glob(".staging-*"):
        if time.time() - stale.stat().st_mtime > 24 * 3600:
            shutil.rmtree(stale, ignore_errors=True)
    return final


def build_index(db_path: Path, index_dir: Path, progress: Progress | None = None, force: bool = False) -> dict:
    """Build (or refresh) the index of the corpus at `db_path` into `index_dir`; returns figures.

    Only rows whose (id, content_hash) is new are embedded; when every row and parameter is the
    same as in the published build nothing is written at all (`skipped: true`).
    """
    started = time.perf_counter()
    db_path, index_dir = Path(db_path), Path(index_dir)
    index_dir.mkdir(parents=True, exist_ok=True)
    rows, links = read_corpus(db_path)
    version = _index_version(rows, links)
    per_table = {t: int(n) for t, n in rows.group_by("table").len().iter_rows()}
    manifest = read_manifest(index_dir)
    if manifest and manifest.get("index_version") == version and not force:
        return {**manifest["stats"], "skipped": True, "embedded": 0, "reused": rows.height,
                "seconds": round(time.perf_counter() - started, 3)}

    vectors, found = _cached_vectors(index_dir, rows)
    missing = np.flatnonzero(~found)
    t_embed = time.perf_counter()
    if len(missing):
        dense_texts = rows["dense_text"].to_list()
        vectors[missing] = embedding.embed([dense_texts[i] for i in missing], progress=progress)
    embed_seconds = time.perf_counter() - t_embed

    staging = Path(tempfile.mkdtemp(dir=index_dir, prefix=".staging-"))
    try:
        t_sparse = time.perf_counter()
        _write_bm25(staging / BM25_DIR, rows["sparse_text"].to_list(), rows["name_text"].to_list())
        sparse_seconds = time.perf_counter() - t_sparse
        t_dense = time.perf_counter()
        np.save(staging / VECTORS_FILE, vectors.astype(np.float16))
        _write_dense(staging / DENSE_FILE, vectors)
        dense_seconds = time.perf_counter() - t_dense
        n_links = _write_links(staging / LINKS_FILE, rows["id"].to_list(), links)
        _write_rows(staging / ROWS_FILE, rows.select("table", "id", "title", "text", "content_hash"))
        starts = {}
        pos = 0
        for table in TABLE_ORDER:
            n = per_table.get(table, 0)
            starts[table] = [pos, pos + n]
            pos += n
        stats = {
            "index_version": version,
            "rows": rows.height,
            "rows_per_table": {t: per_table.get(t, 0) for t in TABLE_ORDER},
            "embedded": int(len(missing)),
            "reused": int(found.sum()),
            "links": n_links,
            "embed_rows_per_second": round(len(missing) / embed_seconds, 1) if len(missing) else None,
            "embed_seconds": round(embed_seconds, 2),
            "sparse_seconds": round(sparse_seconds, 2),
            "dense_seconds": round(dense_seconds, 2),
            "bytes": {
                "bm25": _folder_bytes(staging / BM25_DIR),
                "usearch": (staging / DENSE_FILE).stat().st_size,
                "vectors": (staging / VECTORS_FILE).stat().st_size,
                "rows": (staging / ROWS_FILE).stat().st_size,
                "links": (staging / LINKS_FILE).stat().st_size,
            },
        }
        stats["seconds"] = round(time.perf_counter() - started, 2)
        manifest = {
            "index_version": version,
            "format": INDEX_FORMAT,
            "tokenizer": tokens.TOKENIZER_VERSION,
            "embed_signature": _embed_signature(),
            "bm25": BM25_PARAMS,
            "usearch": USEARCH_PARAMS,
            "tables": starts,
            "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "source": str(db_path),
            "stats": stats,
        }
        (staging / MANIFEST).write_text(json.dumps(manifest, indent=2))
        _publish(index_dir, staging, version)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return {**stats, "skipped": False}
