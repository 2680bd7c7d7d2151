"""Resources of the code location, configured from the environment (GD_ASSETS_HOME)."""


from pathlib import Path

import dagster as dg

from gd_assets import home


class AnalysisStore(dg.ConfigurableResource):
    """The DuckDB file of the project-analysis tables; empty means `<GD_ASSETS_HOME>/projects.duckdb`."""

    path: str = ""

    def db(self) -> Path:
        return Path(self.path) if self.path else home.projects_db_path()


class RetrievalIndex(dg.ConfigurableResource):
    """The corpus retrieval index (memory-mapped) and the corpus it was built from.

    Empty paths mean `<GD_ASSETS_HOME>/index` and `<GD_ASSETS_HOME>/corpora.duckdb`.
    """

    index_dir: str = ""
    corpus_db: str = ""

    def load(self):
        from gd_assets.core.retrieval import CorpusIndex

        directory = Path(self.index_dir) if self.index_dir else home.index_dir()
        try:
            return CorpusIndex.load(directory)
        except FileNotFoundError as error:
            raise dg.Failure(f"{error}. Build the corpora first: `gd-assets corpus build`.") from error

    def corpus_version(self) -> str:
        from corpora_build.stats import corpus_version

        return corpus_version(Path(self.corpus_db) if self.corpus_db else home.corpora_db_path())


class JudgeBackend(dg.ConfigurableResource):
    """Which judge decides: `evidence` (CPU, default), `vllm` (in-process) or `openai` (any compatible server).

    Defaults come from GD_ASSETS_JUDGE, GD_ASSETS_JUDGE_MODEL and GD_ASSETS_JUDGE_URL.
    """

    backend: str = dg.EnvVar("GD_ASSETS_JUDGE").get_value("evidence") or "evidence"
    model: str = dg.EnvVar("GD_ASSETS_JUDGE_MODEL").get_value("") or ""
    base_url: str = dg.EnvVar("GD_ASSETS_JUDGE_URL").get_value("") or ""
    api_key: str = ""
    dtype: str = "auto"
    max_tokens: int = 256
    concurrency: int = 4
    timeout: float = 60.0
    corpus_db: str = ""

    def build(self):
        from gd_assets.core.judges import get_judge

        if self.backend == "evidence":
            return get_judge("evidence", corpus_db=self.corpus_db or None)
        if not self.model:
            raise dg.Failure(f"the {self.backend} judge needs a model: set GD_ASSETS_JUDGE_MODEL or the resource's model")
        if self.backend == "vllm":
            return get_judge("vllm", model=self.model, dtype=self.dtype, max_tokens=self.max_tokens)
        if self.backend == "openai":
            if not self.base_url:
                raise dg.Failure("the openai judge needs base_url (GD_ASSETS_JUDGE_URL), e.g. http://127.0.0.1:8000/v1")
            return get_judge("openai", base_url=self.base_url, model=self.model, api_key=self.api_key,
                             concurrency=self.concurrency, timeout=self.timeout, max_tokens=self.max_tokens)
        raise dg.Failure(f"unknown judge backend {self.backend!r}: use evidence, vllm or openai")
