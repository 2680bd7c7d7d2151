"""The OpenAI-compatible judge: any `/chat/completions` endpoint (e.g. `vllm serve` on a GPU pod).

Standard library only. Requests go out on a few threads, each with a timeout; connection errors,
timeouts, 429 and 5xx answers, and answers that fail validation are retried with exponential
backoff. When the budget is spent the judge raises JudgeError naming the fragment and the URL: a
dead endpoint never turns into a default answer.
"""

from __future__ import annotations

import http.client
import json
import time
import urllib.error
import urllib.request
import zlib
from concurrent.futures import ThreadPoolExecutor
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

_TRANSIENT = (urllib.error.URLError, TimeoutError, ConnectionError, http.client.HTTPException)


class _Refused(JudgeError):
    """The endpoint rejected the request itself (wrong model, bad schema): retrying cannot help."""


@register
class OpenAIJudge:
    name = "openai"
    env = {"model": "GD_ASSETS_JUDGE_MODEL", "base_url": "GD_ASSETS_JUDGE_URL", "prompt_chars": "GD_ASSETS_JUDGE_PROMPT_CHARS"}

    class Options(pydantic.BaseModel):
        base_url: str = pydantic.Field(min_length=1, description="where the API starts, e.g. http://127.0.0.1:8000/v1")
        model: str = pydantic.Field(min_length=1)
        api_key: str = ""
        concurrency: int = pydantic.Field(4, gt=0)
        timeout: float = pydantic.Field(60.0, gt=0)
        max_tokens: int = pydantic.Field(256, gt=0)
        prompt_chars: int = pydantic.Field(PromptBudget().total, ge=1000, description="prompt size, for short contexts")

    @classmethod
    def identity(cls, options: Options) -> JudgeIdentity:
        return JudgeIdentity(cls.name, options.model, PromptBudget.sized(options.prompt_chars).version())

    def __init__(self, base_url: str, model: str, api_key: str = "", concurrency: int = 4, timeout: float = 60,
                 retries: int = 3, max_tokens: int = 256, backoff: float = 0.5,
                 budget: PromptBudget | None = None, prompt_chars: int = PromptBudget().total) -> None:
        """`base_url` ends where the API starts, e.g. http://gpu-pod:8000/v1."""
        self.base_url = base_url.rstrip("/")
        self.url = self.base_url + "/chat/completions"
        self.model = model
        self.api_key = api_key
        self.concurrency = max(concurrency, 1)
        self.timeout = timeout
        self.retries = retries
        self.max_tokens = max_tokens
        self.backoff = backoff
        self.budget = budget or PromptBudget.sized(prompt_chars)

    def judge(self, items: Sequence[JudgeInput]) -> list[Judgement]:
        """One judgement per item, in order; the first fragment that fails stops the batch."""
        with ThreadPoolExecutor(self.concurrency) as pool:
            futures = [pool.submit(self._judge_one, item) for item in items]
            try:
                return [f.result() for f in futures]
            except BaseException:
                for f in futures:
                    f.cancel()
                raise

    def _judge_one(self, item: JudgeInput) -> Judgement:
        messages = build_messages(item, self.budget)
        shown = shown_candidates(item, self.budget)
        last = ""
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(self.backoff * 2 ** (attempt - 1))
            try:
                return parse_answer(self._complete(item, messages, shown, attempt), item, shown)
            except _Refused:
                raise
            except _TRANSIENT as exc:
                last = f"{self.url} did not answer: {exc}"
            except JudgeError as exc:
                last = str(exc)
        raise JudgeError(f"{item.key}: no valid answer after {self.retries + 1} tries from {self.url}; "
                         f"last error: {last}")

    def _complete(self, item: JudgeInput, messages: list[dict], shown: int, attempt: int) -> str:
        body = {
            "model": self.model,
            "messages": messages,
            "max_tokens": self.max_tokens,
            "temperature": 0.0 if attempt == 0 else 0.7,
            "response_format": {"type": "json_schema",
                                "json_schema": {"name": "judgement", "schema": answer_schema(shown), "strict": True}},
        }
        if attempt:
            body["seed"] = zlib.crc32(item.key.encode()) + attempt
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        request = urllib.request.Request(self.url, data=json.dumps(body).encode(), headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                reply = json.loads(response.read().decode("utf-8", "replace"), strict=False)
        except urllib.error.HTTPError as exc:
            detail = exc.read().decode("utf-8", "replace")[:300]
            if exc.code in (408, 429) or exc.code >= 500:
                raise ConnectionError(f"HTTP {exc.code}: {detail}") from exc
            raise _Refused(f"{item.key}: {self.url} refused the request with HTTP {exc.code}: {detail}") from exc
        except json.JSONDecodeError as exc:
            raise JudgeError(f"{item.key}: {self.url} answered with something other than JSON") from exc
        try:
            return reply["choices"][0]["message"]["content"] or ""
        except (KeyError, IndexError, TypeError) as exc:
            raise JudgeError(f"{item.key}: {self.url} answered without choices[0].message.content") from exc
