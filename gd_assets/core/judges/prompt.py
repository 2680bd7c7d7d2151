"""The judge prompt: fixed instructions first, then request, candidates and fragment, each within a budget.

Sections are built freely and cut at the end with an explicit `…(truncated)` marker. Candidates are
numbered (1), (2)... in rank order so the model answers with numbers and the legend
(`JudgeInput.legend()`) maps them back without drift. Only the item itself goes in: no earlier
judgement is ever fed back as evidence.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from gd_assets.core.judges.base import SIGNALS, JudgeError, JudgeInput, Judgement

PROMPT_VERSION = "judge-prompt-1"
TRUNCATED = "\n…(truncated)"
MAX_CANDIDATES = 50      # the schema's bound on a legend number (retrieval keeps ~20)
MAX_RATIONALE = 300


def answer_schema(shown: int = MAX_CANDIDATES) -> dict:
    """The answer's JSON schema, every number and array bounded; legend numbers stop at `shown`."""
    numbers = {"type": "array", "maxItems": shown,
               "items": {"type": "integer", "minimum": 1, "maximum": max(shown, 1)}}
    return {
        "type": "object",
        "properties": {
            "related": numbers,
            "signal": {"type": "string", "enum": list(SIGNALS)},
            "migration_needed": {"type": "boolean"},
            "confidence": {"type": "number", "minimum": 0, "maximum": 1},
            "rationale": {"type": "string", "maxLength": MAX_RATIONALE},
            "evidence": numbers,
        },
        "required": ["related", "signal", "migration_needed", "confidence", "rationale", "evidence"],
        "additionalProperties": False,
    }


JSON_SCHEMA = answer_schema()

SYSTEM = """You judge one fragment of a Godot game project: is it Godot 3 code or Godot 4 code, and does it need migration to Godot 4?

You get the user's request, numbered candidates retrieved from the Godot class reference (docs_chunks), the 3->4 API changes (api_mapping) and curated migration patterns (label_prototypes), and the fragment with its file and line range. The location is shown for tracking only: judge the code, never the file name. Candidates are possible evidence, not answers.

Answer with one JSON object and nothing else:
- "related": numbers of the candidates that really relate to this fragment
- "signal": "godot3" when the code uses Godot 3-only API or syntax, "godot4" when it uses Godot 4-only API or syntax, "neutral" when it is valid in both
- "migration_needed": true when the fragment must change to run on Godot 4
- "confidence": from 0 to 1
- "rationale": one or two short sentences
- "evidence": when migration is needed, numbers of the api_mapping or label_prototypes candidates the migration rests on; otherwise []
Use only numbers of candidates that are shown."""


@dataclass(frozen=True)
class PromptBudget:
    """Character budgets: the whole prompt, and each section within it."""

    total: int = 12000
    request: int = 500
    candidates: int = 6000
    per_candidate_floor: int = 250   # a candidate gets at least this much; fewer are shown instead
    fragment: int = 4000

    @classmethod
    def sized(cls, total: int) -> PromptBudget:
        """The default proportions for a prompt of `total` characters (a model with a short context)."""
        base = cls()
        if total == base.total:
            return base
        scale = total / base.total
        return cls(total=total, request=int(base.request * scale), candidates=int(base.candidates * scale),
                   per_candidate_floor=min(base.per_candidate_floor, max(80, int(base.per_candidate_floor * scale))),
                   fragment=int(base.fragment * scale))

    def version(self) -> str:
        """The prompt version with these budgets: what a judgement records as its prompt version."""
        return f"{PROMPT_VERSION}-{self.total}-{self.request}-{self.candidates}-{self.per_candidate_floor}-{self.fragment}"


def clip(text: str, limit: int) -> str:
    """`text` cut to at most `limit` characters, ending with the truncation marker when cut."""
    if len(text) <= limit:
        return text
    return text[: max(limit - len(TRUNCATED), 0)] + TRUNCATED


def shown_candidates(item: JudgeInput, budget: PromptBudget) -> int:
    """How many candidates fit: the budget split by count, but never below the floor per candidate."""
    fit = budget.candidates // max(budget.per_candidate_floor, 1)
    return min(len(item.candidates), fit, MAX_CANDIDATES)


def _candidates_section(item: JudgeInput, budget: PromptBudget) -> str:
    shown = shown_candidates(item, budget)
    lines = [f"## Candidates ({len(item.candidates)} candidates, {shown} shown)"]
    if shown:
        each = max(budget.candidates // shown, budget.per_candidate_floor)
        for number, cand in enumerate(item.candidates[:shown], start=1):
            head = f"({number}) [{cand.table}] {cand.title}"
            lines.append(clip(f"{head}\n{cand.text.strip()}", each))
    return "\n\n".join(lines)


def _fragment_header(item: JudgeInput) -> str:
    return (f"## Fragment: {item.path} lines {item.start_line}-{item.end_line} "
            f"({item.kind} in a {item.file_kind} file; location for tracking only)")


def build_messages(item: JudgeInput, budget: PromptBudget = PromptBudget()) -> list[dict]:
    """System and user messages for one item; the fragment body is what gets cut last."""
    request = "## Request\n" + clip(item.request.strip(), budget.request)
    candidates = _candidates_section(item, budget)
    header = _fragment_header(item)
    used = len(SYSTEM) + len(request) + len(candidates) + len(header) + 6   # the "\n\n" joins
    room = max(min(budget.fragment, budget.total - used), len(TRUNCATED))
    body = clip(item.text.rstrip(), room)
    user = "\n\n".join([request, candidates, f"{header}\n{body}"])
    return [{"role": "system", "content": SYSTEM},
            {"role": "user", "content": clip(user, budget.total - len(SYSTEM))}]


def _numbers(value: object, field: str, key: str) -> list[int]:
    if not isinstance(value, list):
        raise JudgeError(f"{key}: {field!r} is not a list of candidate numbers: {value!r}")
    out: list[int] = []
    for v in value:
        text = str(v).strip().strip("()")
        if isinstance(v, float) and v.is_integer():
            text = str(int(v))
        if isinstance(v, bool) or not isinstance(v, (int, float, str)) or not text.isdigit():
            raise JudgeError(f"{key}: {field!r} holds {v!r}, not a candidate number")
        n = int(text)
        if n not in out:
            out.append(n)
    return out


def parse_answer(text: str, item: JudgeInput, shown: int | None = None) -> Judgement:
    """The model's answer as a validated Judgement; raises JudgeError naming the fragment key.

    Lenient about the wrapping (code fences, text around the object) and about raw control
    characters inside strings; strict about the fields and about candidate numbers: a number that
    was not offered (or, given `shown`, not shown) is rejected.
    """
    match = re.search(r"\{.*\}", text, re.DOTALL)
    if not match:
        raise JudgeError(f"{item.key}: the answer holds no JSON object: {text[:200]!r}")
    try:
        data = json.loads(match.group(0), strict=False)
    except json.JSONDecodeError as exc:
        raise JudgeError(f"{item.key}: the answer is not valid JSON ({exc}): {text[:200]!r}") from exc
    missing = [f for f in JSON_SCHEMA["required"] if f not in data]
    if missing:
        raise JudgeError(f"{item.key}: the answer lacks {', '.join(missing)}")
    try:
        confidence = float(data["confidence"])
    except (TypeError, ValueError) as exc:
        raise JudgeError(f"{item.key}: confidence {data['confidence']!r} is not a number") from exc
    migration = data["migration_needed"]
    if isinstance(migration, str):
        migration = migration.strip().lower() == "true"
    judgement = Judgement(
        key=item.key,
        signal=str(data["signal"]).strip().lower(),
        migration_needed=bool(migration),
        confidence=confidence,
        rationale=" ".join(str(data["rationale"]).split())[:MAX_RATIONALE],
        related=_numbers(data["related"], "related", item.key),
        evidence=_numbers(data["evidence"], "evidence", item.key),
    ).validate(item)
    unseen = [n for n in [*judgement.related, *judgement.evidence] if shown is not None and n > shown]
    if unseen:
        raise JudgeError(f"{item.key}: the answer names candidates {unseen} that were not shown (shown 1..{shown})")
    return judgement
