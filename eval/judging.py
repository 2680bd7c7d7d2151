"""Run a judge in-process over many fragments: cues -> retrieval -> judge, batched, no Dagster.

The same core calls as the pipeline's assets (fragment rows, evidence, the row codec, the judge
registry), without the store and the instance, so an evaluation can judge thousands of fragments
in one process. Retrieval results are cached on disk
(keyed by the index version, the retrieval parameters, the request and the source of the cue and
retrieval modules), so re-scoring an evolving judge does not re-run the embedder.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from gd_assets import home as data_home
from gd_assets.core import cues as cues_module
from gd_assets.core import evidence as evidence_module
from gd_assets.core import retrieval as retrieval_module
from gd_assets.core.codec import judge_input
from gd_assets.core.corpus.surface import load_surface
from gd_assets.core.cues import DEFAULT_REQUEST, extract_cues
from gd_assets.core.fragments import FUNCTION_KINDS, file_functions, fragment_rows
from gd_assets.core.judges import build_judge
from gd_assets.core.judges.base import JudgeInput, Judgement
from gd_assets.core.project_context import ProjectContext, build_context
from gd_assets.core.receivers import Scope

__all__ = ["FUNCTION_KINDS", "EvidenceSource", "Item", "attach_scopes", "items_of_file", "load_judge", "run_judge"]
_EVIDENCE_BATCH = 512
_JUDGE_BATCH = 256


@dataclass
class Item:
    """One fragment to judge, with its location (tracking only) and its file's kind."""

    key: str
    path: str
    start_line: int
    end_line: int
    kind: str
    symbol: str
    file_kind: str
    text: str
    file_functions: tuple[str, ...] = ()
    scope: Scope | None = None  # the fragment's place in its project (attach_scopes), for receivers


def items_of_file(key_prefix: str, path: str, file_kind: str, text: str) -> list[Item]:
    """The fragments of one file as items (the pipeline's fragment rows); keys read `<prefix>/<path>::<symbol>`."""
    rows = fragment_rows(key_prefix, [{"path": path, "kind": file_kind, "text": text}])
    functions = tuple(file_functions(rows).get(path, ()))
    return [Item(r["key"], path, r["start_line"], r["end_line"], r["kind"], r["symbol"], file_kind, r["text"],
                 functions) for r in rows]


_CONTEXT_SUFFIXES = (".gd", ".tscn", ".godot")


def attach_scopes(root: Path, items: Sequence[Item], home: str | None = None) -> ProjectContext:
    """Read the project context of the tree at `root` (scripts, scenes, project.godot files) and give
    each item (paths relative to `root`) its scope; returns the context."""
    files = []
    for file in sorted(root.rglob("*")):
        if file.is_file() and file.suffix in _CONTEXT_SUFFIXES:
            text = file.read_bytes().decode("utf-8", "replace").replace("\r\n", "\n").replace("\r", "\n")
            kind = {".gd": "gdscript", ".tscn": "scene", ".godot": "project"}[file.suffix]
            files.append({"path": file.relative_to(root).as_posix(), "kind": kind, "text": text})
    context = build_context(files)
    corpus_db = Path(home) / "corpora.duckdb" if home else data_home.corpora_db_path()
    engine = load_surface(str(corpus_db)) if corpus_db.exists() else None
    for item in items:
        item.scope = Scope.of(context, item.path, item.symbol, engine)
    return context


def load_judge(name: str, home: str | None = None, corpus_dir: str | None = None, **options):
    """The judge called `name`: `baseline` (eval/baseline.py) or a registered judge, built like the pipeline's
    (the evidence judge reads `<home>/corpora.duckdb`; model judges take `options` such as model, base_url)."""
    corpus_db = Path(home) / "corpora.duckdb" if home else data_home.corpora_db_path()
    if name == "baseline":
        from baseline import BaselineJudge

        return BaselineJudge(corpus_dir=corpus_dir, store=corpus_db if home else None)
    if name == "evidence":
        options.setdefault("corpus_db", str(corpus_db))
    return build_judge(name, **options)


def _progress(label: str, done: int, total: int, started: float) -> None:
    """A progress line on stderr: rewritten in place on a terminal, one line per step otherwise."""
    text = f"{label}: {done}/{total} ({time.monotonic() - started:.0f}s)"
    if sys.stderr.isatty():
        print("\r" + text, end="\n" if done == total else "", file=sys.stderr, flush=True)
    else:
        print(text, file=sys.stderr, flush=True)


class EvidenceSource:
    """Cues and candidates for items: a loaded index with an on-disk cache, or cues only."""

    def __init__(self, home: str | None, cache_dir: Path, request: str = DEFAULT_REQUEST,
                 retrieval: bool = True) -> None:
        self.request = request
        self.index = None
        self.params = retrieval_module.RetrievalParams()
        if retrieval and home:
            index_dir = Path(home) / "index"
            try:
                self.index = retrieval_module.CorpusIndex.load(index_dir)
            except (FileNotFoundError, ValueError) as error:
                print(f"warning: {error}; judging with cues only, no candidates", file=sys.stderr)
        self.cache_path = None
        self.cache: dict[str, tuple] = {}
        if self.index is not None:
            code = hashlib.sha256()
            for module in (cues_module, evidence_module, retrieval_module):
                code.update(Path(module.__file__).read_bytes())
            version = hashlib.sha256(
                f"{self.index.version}|{self.params.version()}|{request}|{code.hexdigest()}".encode()
            ).hexdigest()[:16]
            self.cache_path = cache_dir / "evidence" / f"{version}.pickle"
            if self.cache_path.exists():
                with open(self.cache_path, "rb") as fh:
                    self.cache = pickle.load(fh)

    @property
    def description(self) -> str:
        if self.index is None:
            return "cues only (no index)"
        return f"index {self.index.version}, {self.params.version()}"

    @staticmethod
    def _key(item: Item) -> str:
        return hashlib.sha256(f"{item.kind}\0{item.file_kind}\0{item.text}".encode()).hexdigest()

    def inputs(self, items: Sequence[Item], context: bool = True) -> list[JudgeInput]:
        """One JudgeInput per item; retrieval runs in batches only for texts not cached yet. With
        `context`, an item's cues are read in its scope (candidates depend on the text alone)."""
        if self.index is None:
            return [self._input(item, self._cues(item, context), []) for item in items]
        todo = {}
        for item in items:
            key = self._key(item)
            if key not in self.cache and key not in todo:
                todo[key] = item
        if todo:
            pending = list(todo.items())
            started = time.monotonic()
            for b in range(0, len(pending), _EVIDENCE_BATCH):
                batch = pending[b : b + _EVIDENCE_BATCH]
                frags = [{"key": k, "kind": it.kind, "text": it.text, "file_kind": it.file_kind} for k, it in batch]
                for ev in evidence_module.gather_evidence(frags, self.index, self.params, self.request):
                    self.cache[ev.key] = (ev.cues, ev.candidates)
                _progress("retrieval", min(b + _EVIDENCE_BATCH, len(pending)), len(pending), started)
            self._save()
        out = []
        for item in items:
            cues, candidates = self.cache[self._key(item)]
            if context and item.scope is not None:
                cues = self._cues(item, context)
            out.append(self._input(item, cues, candidates))
        return out

    def _cues(self, item: Item, context: bool):
        return extract_cues(item.kind, item.text, self.request, file_kind=item.file_kind,
                            scope=item.scope if context else None)

    def _input(self, item: Item, cues, candidates) -> JudgeInput:
        return judge_input(vars(item), cues, candidates, self.request, item.file_functions)

    def _save(self) -> None:
        assert self.cache_path is not None
        self.cache_path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.cache_path.with_suffix(f".{os.getpid()}.tmp")
        with open(tmp, "wb") as fh:
            pickle.dump(self.cache, fh, protocol=pickle.HIGHEST_PROTOCOL)
        tmp.replace(self.cache_path)


def run_judge(judge, items: Sequence[Item], evidence: EvidenceSource | None,
              context: bool = True) -> dict[str, Judgement]:
    """Judgements by item key; a judge that reads no evidence (the baseline) skips retrieval.
    `context=False` judges by bare names (no receivers), as before project context existed."""
    needs = getattr(judge, "needs_evidence", True)
    if needs and evidence is not None:
        inputs = evidence.inputs(items, context)
    else:
        inputs = [judge_input(vars(i), [], [], DEFAULT_REQUEST, i.file_functions) for i in items]
    out: dict[str, Judgement] = {}
    started = time.monotonic()
    for b in range(0, len(inputs), _JUDGE_BATCH):
        for judgement in judge.judge(inputs[b : b + _JUDGE_BATCH]):
            out[judgement.key] = judgement
        done = min(b + _JUDGE_BATCH, len(inputs))
        if done == len(inputs) or (b // _JUDGE_BATCH) % 20 == 19:
            _progress(f"judge {judge.name}", done, len(inputs), started)
    return out
