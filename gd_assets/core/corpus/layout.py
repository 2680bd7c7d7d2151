"""File names inside an index directory: the published builds and what each build holds.

An index build lives in its own folder under the index directory and is published by replacing
the `CURRENT` pointer, so a reader never sees a half-written index.
"""

from __future__ import annotations

import json
from pathlib import Path

CURRENT = "CURRENT"
MANIFEST = "manifest.json"
ROWS_FILE = "rows.arrow"
VECTORS_FILE = "vectors.f16.npy"
DENSE_FILE = "dense.usearch"
BM25_DIR = "bm25"
LINKS_FILE = "links.npz"  # row -> linked rows (CSR), from the bridges table, both directions

# Name-field tokens and whole-name tokens of the index: `n:<token>` and `x:<name>`.
NAME_PREFIX = "n:"
EXACT_PREFIX = "x:"


def current_build(index_dir: Path) -> Path | None:
    """The folder of the published build, or None when nothing was built yet."""
    pointer = Path(index_dir) / CURRENT
    if not pointer.exists():
        return None
    build = Path(index_dir) / pointer.read_text().strip()
    return build if (build / MANIFEST).exists() else None


def read_manifest(index_dir: Path) -> dict | None:
    build = current_build(index_dir)
    return json.loads((build / MANIFEST).read_text()) if build else None
