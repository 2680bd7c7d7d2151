"""Judges as plugins: one registry resolves a judge's name, its options and its identity.

A judge class registers itself with `@register` and carries what the rest of the pipeline needs:
`name`, an `Options` model (validated once, when the judge is built), `env` (which option an
environment variable may set: read by whoever builds the judge, never here) and `identity(options)`
(judge, model and rules/prompt version: what freshness compares, known without loading a model).
Other packages add judges through the `gd_assets.judges` entry-point group, each entry naming a
module that registers its judges on import.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any

import pydantic

from gd_assets.core.judges.base import Judge, JudgeError, JudgeInput, Judgement

__all__ = ["Judge", "JudgeError", "JudgeIdentity", "JudgeInput", "Judgement", "build_judge", "get_judge",
           "identity", "judge_class", "judge_names", "parse_options", "register"]

BUILT_IN = ("gd_assets.core.judges.evidence", "gd_assets.core.judges.vllm", "gd_assets.core.judges.openai")
ENTRY_POINT_GROUP = "gd_assets.judges"

_REGISTRY: dict[str, type] = {}
_loaded = False


@dataclass(frozen=True)
class JudgeIdentity:
    """Who judged: the backend, its model (or rule set) and the rules/prompt version."""

    judge: str
    model: str
    version: str


def register(cls: type) -> type:
    """Class decorator: make a judge class resolvable by its `name`."""
    for attribute in ("name", "Options", "env", "identity"):
        if not hasattr(cls, attribute):
            raise TypeError(f"judge class {cls.__name__} has no `{attribute}`")
    _REGISTRY[cls.name] = cls
    return cls


def _load() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    for module in BUILT_IN:
        importlib.import_module(module)
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        entry.load()


def judge_names() -> list[str]:
    _load()
    return sorted(_REGISTRY)


def judge_class(name: str) -> type:
    _load()
    try:
        return _REGISTRY[name]
    except KeyError:
        raise JudgeError(f"unknown judge {name!r}: use one of {', '.join(judge_names())}") from None


def parse_options(name: str, values: Mapping[str, Any]) -> pydantic.BaseModel:
    """Validated options of judge `name`; a missing or wrong option names the variable that sets it."""
    cls = judge_class(name)
    try:
        return cls.Options(**dict(values))
    except pydantic.ValidationError as error:
        problems = []
        for e in error.errors():
            field = ".".join(str(p) for p in e["loc"])
            hint = f" (set {cls.env[field]})" if field in cls.env else ""
            problems.append(f"{field}: {e['msg'].lower()}{hint}")
        raise JudgeError(f"the {name} judge: " + "; ".join(problems)) from None


def identity(name: str, values: Mapping[str, Any]) -> JudgeIdentity:
    """The identity a judge built with these options would record, without building it."""
    return judge_class(name).identity(parse_options(name, values))


def build_judge(name: str, **values: Any) -> Judge:
    """The judge called `name`, built from its validated options; other keyword arguments (objects
    such as a prompt budget, or engine settings) go to its constructor as they are."""
    cls = judge_class(name)
    options = {k: v for k, v in values.items() if k in cls.Options.model_fields}
    extra = {k: v for k, v in values.items() if k not in options}
    return cls(**parse_options(name, options).model_dump(), **extra)


get_judge = build_judge
