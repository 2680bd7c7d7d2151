"""Code-aware tokens for BM25: one function for corpus rows and for queries alike.

A dotted name is kept whole and split (`Input.is_action_pressed` -> `input.is_action_pressed`,
`input`, `is_action_pressed`, `is`, `action`, `pressed`); CamelCase is split and kept whole
(`KinematicBody2D` -> `kinematicbody2d`, `kinematic`, `body`, `2d`); call shapes and version syntax
keep a marker (`yield(`, `export(`, `@export`, `@onready`, `$player`). There are no stop-words:
`is`, `and`, `in`, `not` are parts of the GDScript API and BM25's IDF already weighs them down.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Iterable

# Bump when the output of `tokenize` changes: it is part of the index version.
TOKENIZER_VERSION = "code-tokens-1"

# An identifier chain with an optional `@`/`$` prefix and an optional call parenthesis.
_WORD = re.compile(r"[@$]?[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*\(?")
# CamelCase parts: `HTTPRequest` -> HTTP, Request; `KinematicBody2D` -> Kinematic, Body, 2D.
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+[A-Za-z]?")


def _identifier(name: str) -> list[str]:
    """One identifier: itself lowercased, then its snake_case and CamelCase parts."""
    out = [name.lower()]
    parts: list[str] = []
    for piece in name.split("_"):
        if piece:
            parts.extend(_CAMEL.findall(piece))
    if len(parts) > 1 or (parts and parts[0].lower() != out[0]):
        out.extend(p.lower() for p in parts)
    return out


@lru_cache(maxsize=262_144)
def _expand(match: str) -> tuple[str, ...]:
    call = match.endswith("(")
    word = match.rstrip("(")
    prefix = word[0] if word[0] in "@$" else ""
    body = word[len(prefix):]
    segments = body.split(".")
    out: list[str] = []
    if prefix:
        out.append(word.lower())  # `@export`, `@onready`, `$sprite`: the version/syntax marker
    if len(segments) > 1:
        out.append(body.lower())  # the dotted name whole
    for segment in segments:
        out.extend(_identifier(segment))
    if call and not prefix:
        out.append(segments[-1].lower() + "(")  # call shape: `yield(`, `export(`, `instance(`
    return tuple(out)


def tokenize(text: str) -> list[str]:
    """The BM25 tokens of a text (code or prose), lowercased, in order, repeats kept."""
    out: list[str] = []
    for match in _WORD.findall(text or ""):
        out.extend(_expand(match))
    return out


def tokenize_terms(terms: Iterable[str]) -> list[str]:
    """Tokens of a query given as cue terms (`Input.is_action_pressed`, `yield(`, ...)."""
    out: list[str] = []
    for term in terms:
        out.extend(tokenize(term))
    return out


def tokenize_many(texts: Iterable[str]) -> list[list[str]]:
    return [tokenize(t) for t in texts]
