"""The judge interface: a batch of fragments with their candidates in, one judgement each out.

Candidates are numbered (1), (2)... in rank order; a judge answers with those numbers (the
legend maps them back to table and row id), and an answer naming a number that was not offered
is rejected: a judge never invents evidence.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, Sequence

from gd_assets.core.cues import Cue
from gd_assets.core.retrieval import Candidate

SIGNALS = ("godot3", "godot4", "neutral")


class JudgeError(RuntimeError):
    """A judge could not answer (dead endpoint, malformed output after retries...)."""


@dataclass
class JudgeInput:
    key: str
    path: str            # tracking only: shown to a model as the location, never used to decide
    start_line: int
    end_line: int
    kind: str            # fragment kind (function, declaration, section, node...)
    file_kind: str       # gdscript | project | scene | resource | shader | config
    text: str
    cues: list[Cue]
    candidates: list[Candidate]   # in rank order; legend number = position + 1
    request: str
    file_functions: list[str] = field(default_factory=list)  # functions the same file defines (calls to them are local)

    def legend(self) -> dict[int, dict]:
        return {i + 1: {"table": c.table, "id": c.id, "title": c.title} for i, c in enumerate(self.candidates)}


@dataclass
class Judgement:
    key: str
    signal: str                      # godot3 | godot4 | neutral
    migration_needed: bool
    confidence: float                # 0..1
    rationale: str
    related: list[int] = field(default_factory=list)    # legend numbers of candidates that really relate
    evidence: list[int] = field(default_factory=list)   # legend numbers the migration rests on (mapping/prototype)

    def validate(self, item: JudgeInput) -> Judgement:
        """Raise JudgeError when the answer is malformed or names candidates that were not offered."""
        offered = set(range(1, len(item.candidates) + 1))
        if self.signal not in SIGNALS:
            raise JudgeError(f"{item.key}: signal {self.signal!r} is not one of {', '.join(SIGNALS)}")
        if not 0.0 <= self.confidence <= 1.0:
            raise JudgeError(f"{item.key}: confidence {self.confidence} is outside 0..1")
        invented = [n for n in [*self.related, *self.evidence] if n not in offered]
        if invented:
            raise JudgeError(f"{item.key}: the answer names candidates {invented} that were not offered "
                             f"(offered 1..{len(item.candidates)})")
        return self


class Judge(Protocol):
    name: str        # backend: evidence | vllm | openai
    model: str       # model name, or the rule set version for the evidence judge

    def judge(self, items: Sequence[JudgeInput]) -> list[Judgement]:
        """One judgement per item, in order; raises JudgeError rather than guessing."""
        ...
