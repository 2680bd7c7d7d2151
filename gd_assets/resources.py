"""Resources of the code location. Each reads its settings from the environment when it is built
(a run, a command), never when its class is defined."""

from __future__ import annotations

import os
from pathlib import Path

import dagster as dg

from gd_assets import home, shared_corpus
from gd_assets.core.corpus.layout import read_manifest
from gd_assets.core.corpus.version import corpus_version
from gd_assets.core.judges import Judge, JudgeError, JudgeIdentity, build_judge, identity, judge_class
from gd_assets.core.retrieval import CorpusIndex

DEFAULT_JUDGE = "evidence"


class RetrievalIndex(dg.ConfigurableResource):
    """The corpus retrieval index (memory-mapped) and the corpus it was built from.

    Empty paths mean the corpus home's (`GD_ASSETS_CORPUS_HOME`, else `GD_ASSETS_HOME`). `threads`
    caps the embedder's threads (0: torch's default), so that workers sharing a machine share its cores.
    """

    index_dir: str = ""
    corpus_db: str = ""
    threads: int = 0

    def directory(self) -> Path:
        return Path(self.index_dir) if self.index_dir else home.index_dir()

    def load(self) -> CorpusIndex:
        if not self.index_dir:
            shared_corpus.sync()   # a worker fetches the published corpus (with GD_ASSETS_OBJECT_STORE)
        if self.threads > 0:
            import torch

            torch.set_num_threads(self.threads)
        try:
            return CorpusIndex.load(self.directory())
        except FileNotFoundError as error:
            raise dg.Failure(f"{error}. Build the corpora first: `gd-assets corpus build`.") from error

    def index_version(self) -> str | None:
        """The published build's version from its manifest alone (no index files opened); None before a build."""
        manifest = read_manifest(self.directory())
        return manifest["index_version"] if manifest else None

    def corpus_path(self) -> Path:
        return Path(self.corpus_db) if self.corpus_db else home.corpora_db_path()

    def corpus_version(self) -> str:
        return corpus_version(self.corpus_path())


class JudgeBackend(dg.ConfigurableResource):
    """Which judge decides, and its options (see `gd_assets.core.judges`).

    An empty `name` means GD_ASSETS_JUDGE, else `evidence`. Options come from the judge's own
    environment variables (GD_ASSETS_JUDGE_MODEL, GD_ASSETS_JUDGE_URL...), then from `options`,
    which win; the evidence judge reads the corpus home's tables.
    """

    name: str = ""
    options: dict[str, str] = {}

    def judge_name(self) -> str:
        return self.name or os.environ.get("GD_ASSETS_JUDGE") or DEFAULT_JUDGE

    def option_values(self) -> dict[str, str]:
        cls = judge_class(self.judge_name())
        values = {option: os.environ[var] for option, var in cls.env.items() if os.environ.get(var)}
        if "corpus_db" in cls.Options.model_fields:
            values["corpus_db"] = str(home.corpora_db_path())
        return {**values, **self.options}

    def identity(self) -> JudgeIdentity:
        """Who would judge now: what freshness compares with the judge recorded on each judgement."""
        return identity(self.judge_name(), self.option_values())

    def build(self) -> Judge:
        shared_corpus.sync()
        try:
            return build_judge(self.judge_name(), **self.option_values())
        except (JudgeError, ValueError) as error:
            raise dg.Failure(str(error)) from error
