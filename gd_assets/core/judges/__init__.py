"""Judges: one small interface, several backends (evidence on CPU, vLLM in-process, OpenAI-compatible)."""

from gd_assets.core.judges.base import Judge, JudgeError, JudgeInput, Judgement

__all__ = ["Judge", "JudgeError", "JudgeInput", "Judgement", "get_judge"]


def get_judge(name: str, **options) -> Judge:
    """The judge backend called `name` (evidence | vllm | openai), built with backend options."""
    if name == "evidence":
        from gd_assets.core.judges.evidence import EvidenceJudge

        return EvidenceJudge(**options)
    if name == "vllm":
        from gd_assets.core.judges.vllm import VllmJudge

        return VllmJudge(**options)
    if name == "openai":
        from gd_assets.core.judges.openai import OpenAIJudge

        return OpenAIJudge(**options)
    raise ValueError(f"unknown judge {name!r}: use evidence, vllm or openai")
