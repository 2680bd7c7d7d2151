"""The LLM judges answer every fragment of a batch with a valid judgement, or fail loudly.

The model is a tiny one trained by the test session itself (tests/tinymodel.py), so answers are
checked for structure only. Tests that run vLLM are skipped when it is not installed; the
endpoint failure cases use a closed port and a small stub server and run anywhere.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from conftest import free_port, needs_vllm
from tinymodel import BUDGET, sample_inputs

from gd_assets.core.judges import JudgeError, get_judge
from gd_assets.core.judges.base import SIGNALS
from gd_assets.core.judges.openai import OpenAIJudge
from gd_assets.core.judges.prompt import MAX_RATIONALE, shown_candidates


def assert_valid(judgements, items) -> None:
    assert [j.key for j in judgements] == [i.key for i in items]
    for j, item in zip(judgements, items):
        shown = shown_candidates(item, BUDGET)
        assert j.signal in SIGNALS
        assert isinstance(j.migration_needed, bool)
        assert 0.0 <= j.confidence <= 1.0
        assert isinstance(j.rationale, str) and len(j.rationale) <= MAX_RATIONALE
        assert all(1 <= n <= shown for n in [*j.related, *j.evidence])


class _Stub(BaseHTTPRequestHandler):
    """A chat-completions endpoint that answers `content` (or `status`) and counts calls."""

    content = ""
    status = 200
    calls = 0

    def do_POST(self):  # noqa: N802 (the handler API)
        type(self).calls += 1
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        body = json.dumps({"choices": [{"message": {"role": "assistant", "content": self.content}}]}).encode()
        self.send_response(self.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def stub():
    handler = type("Stub", (_Stub,), {})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield handler, f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


@needs_vllm
def test_vllm_judge_answers_every_fragment_of_a_batch_with_one_engine(vllm_env, tiny_model):
    import bm25s  # noqa: F401 - as in a process that built the corpus index: numba and llvmlite are loaded

    judge = get_judge("vllm", model=str(tiny_model), budget=BUDGET, max_model_len=2048, enforce_eager=True)
    assert judge._llm is None   # nothing loads until the first batch
    items = sample_inputs(20, seed=1)
    assert_valid(judge.judge(items), items)
    engine = judge._llm
    more = sample_inputs(5, seed=2)
    assert_valid(judge.judge(more), more)
    assert judge._llm is engine


@needs_vllm
def test_openai_judge_answers_a_batch_from_a_vllm_server(vllm_server):
    judge = get_judge("openai", base_url=vllm_server, model="tiny", concurrency=4, timeout=30, budget=BUDGET)
    items = sample_inputs(12, seed=3)
    assert_valid(judge.judge(items), items)


def test_dead_endpoint_raises_quickly_naming_the_url():
    url = f"http://127.0.0.1:{free_port()}/v1"   # the port was just closed again
    judge = OpenAIJudge(url, "tiny", retries=2, backoff=0.05, timeout=2)
    started = time.monotonic()
    with pytest.raises(JudgeError, match=f"{url}/chat/completions"):
        judge.judge(sample_inputs(3))
    assert time.monotonic() - started < 5


def test_answer_naming_an_unoffered_candidate_is_rejected(stub):
    handler, url = stub
    handler.content = json.dumps({"related": [1, 42], "signal": "godot3", "migration_needed": True,
                                  "confidence": 0.9, "rationale": "made up", "evidence": [42]})
    item = sample_inputs(1)[0]
    with pytest.raises(JudgeError, match=rf"{item.key}.*42.*not offered"):
        OpenAIJudge(url, "tiny", retries=1, backoff=0.01, budget=BUDGET).judge([item])
    assert handler.calls == 2


def test_malformed_answers_fail_after_the_retry_budget_naming_the_fragment(stub):
    handler, url = stub
    handler.content = '{"related": [1], "signal": '
    item = sample_inputs(1)[0]
    with pytest.raises(JudgeError, match=f"{item.key}: no valid answer after 3 tries"):
        OpenAIJudge(url, "tiny", retries=2, backoff=0.01, budget=BUDGET).judge([item])
    assert handler.calls == 3


def test_answers_with_control_characters_in_strings_are_accepted(stub):
    handler, url = stub
    handler.content = '{"related": [1], "signal": "godot3", "migration_needed": true, "confidence": 0.8, ' \
                      '"rationale": "yield(\n) is Godot 3", "evidence": [1]}'
    [judgement] = OpenAIJudge(url, "tiny", budget=BUDGET).judge(sample_inputs(1))
    assert judgement.rationale == "yield( ) is Godot 3" and judgement.related == [1]


def test_a_refused_request_is_not_retried(stub):
    handler, url = stub
    handler.status = 404
    with pytest.raises(JudgeError, match="HTTP 404"):
        OpenAIJudge(url, "no-such-model", retries=3, backoff=0.01, budget=BUDGET).judge(sample_inputs(1))
    assert handler.calls == 1
