"""The `label_prototypes` corpus: hand-curated Godot 3 -> Godot 4 migration patterns kept as YAML.

Each YAML entry is one pattern: a Godot 3 example, its Godot 4 form, a label, an explanation, the
cues it should match and the rename-map / API-diff entries it illustrates. `load_prototypes` turns
the files into rows of the `label_prototypes` table; `example_parse_problems` checks that every
GDScript example really parses with the pinned tree-sitter grammar.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Iterable, Mapping

import yaml

from corpora_build import schema

PROTOTYPES_DIR = Path(__file__).resolve().parent / "prototypes"

LABELS: frozenset[str] = frozenset(
    {"rename", "syntax", "call_shape", "semantic", "converter_pitfall", "godot4_idiom"}
)
MAPPING_CATEGORIES: frozenset[str] = frozenset(
    {
        "enum", "function", "property", "signal", "project_setting", "project_godot", "input_map",
        "builtin_type", "shader", "class", "color", "theme_override", "syntax",
    }
)
LANGUAGES: frozenset[str] = frozenset({"gdscript", "tscn", "project_godot", "shader", "csharp"})

REQUIRED_TEXT_FIELDS = ("id", "label", "category", "title", "godot3", "godot4", "explanation")
LIST_FIELDS = ("cues", "mappings")
OPTIONAL_FIELDS = ("language", "converter_categories")
KNOWN_FIELDS = frozenset(REQUIRED_TEXT_FIELDS + LIST_FIELDS + OPTIONAL_FIELDS)

_SLUG = re.compile(r"^[a-z0-9][a-z0-9_-]*$")


def load_prototypes(folder: Path | None = None) -> list[dict[str, Any]]:
    """Every prototype in `folder` (default: the package's prototypes/) as a `label_prototypes` row.

    Rows carry the table's columns plus `language` and `converter_categories`, which
    `schema.frame` drops; they are kept for checks such as `example_parse_problems`.
    Raises ValueError naming the file and the entry id when an entry is malformed.
    """
    folder = Path(folder) if folder is not None else PROTOTYPES_DIR
    files = sorted(folder.glob("*.yaml")) + sorted(folder.glob("*.yml"))
    if not files:
        raise ValueError(f"{folder}: no prototype YAML files found (expected *.yaml)")
    rows: list[dict[str, Any]] = []
    seen: dict[str, Path] = {}
    for path in files:
        for index, entry in enumerate(_read_entries(path)):
            _validate(entry, path, index)
            slug = entry["id"]
            if slug in seen:
                raise ValueError(
                    f"{path.name}: prototype id {slug!r} is already used in {seen[slug].name}; ids must be unique"
                )
            seen[slug] = path
            rows.append(_row(entry))
    return rows


def example_parse_problems(rows: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One dict (id, side, line, snippet) per GDScript example whose parse tree has an ERROR or MISSING node.

    Examples whose `language` is not `gdscript` (scene, project, shader or C# text) are skipped.
    """
    parser = _gdscript_parser()
    problems: list[dict[str, Any]] = []
    for row in rows:
        if row.get("language", "gdscript") != "gdscript":
            continue
        for side, column in (("godot3", "godot3_example"), ("godot4", "godot4_example")):
            source = str(row[column])
            node = _first_bad_node(parser.parse(source.encode("utf-8")).root_node)
            if node is None:
                continue
            line = node.start_point[0]
            lines = source.splitlines()
            problems.append(
                {
                    "id": row["id"],
                    "side": side,
                    "line": line + 1,
                    "snippet": lines[line] if line < len(lines) else "",
                    "node": "MISSING " + node.type if node.is_missing else node.type,
                }
            )
    return problems


def _read_entries(path: Path) -> list[Any]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise ValueError(f"{path.name}: not valid YAML: {exc}") from exc
    if data is None:
        return []
    if not isinstance(data, list):
        raise ValueError(f"{path.name}: expected a list of prototype entries at the top level")
    return data


def _validate(entry: Any, path: Path, index: int) -> None:
    if not isinstance(entry, dict):
        raise ValueError(f"{path.name}: entry #{index + 1} is not a mapping")
    slug = entry.get("id")
    where = f"{path.name}: prototype {slug!r}" if slug else f"{path.name}: entry #{index + 1} (no id)"

    def fail(problem: str) -> None:
        raise ValueError(f"{where}: {problem}")

    for field in REQUIRED_TEXT_FIELDS:
        value = entry.get(field)
        if not isinstance(value, str) or not value.strip():
            fail(f"field {field!r} is missing or empty")
    if not _SLUG.match(slug):
        fail("id must be a lowercase slug (letters, digits, '-' or '_')")
    unknown = set(entry) - KNOWN_FIELDS
    if unknown:
        fail(f"unknown field(s) {sorted(unknown)}; allowed: {sorted(KNOWN_FIELDS)}")
    if entry["label"] not in LABELS:
        fail(f"label {entry['label']!r} is not one of {sorted(LABELS)}")
    if not _SLUG.match(entry["category"]):
        fail(f"category {entry['category']!r} must be a lowercase slug")
    for field in LIST_FIELDS:
        value = entry.get(field)
        if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
            fail(f"field {field!r} must be a list of non-empty strings")
    if not entry["cues"]:
        fail("cues must not be empty: they are what retrieval matches")
    for mapping in entry["mappings"]:
        category, sep, name = mapping.partition(":")
        if not sep or not name or category not in MAPPING_CATEGORIES:
            fail(f"mapping {mapping!r} must be 'category:old_name' with category in {sorted(MAPPING_CATEGORIES)}")
    language = entry.get("language", "gdscript")
    if language not in LANGUAGES:
        fail(f"language {language!r} is not one of {sorted(LANGUAGES)}")
    converter = entry.get("converter_categories", [])
    if not isinstance(converter, list) or not all(isinstance(v, str) and v for v in converter):
        fail("converter_categories must be a list of converter rule category names")


def _row(entry: Mapping[str, Any]) -> dict[str, Any]:
    godot3 = entry["godot3"].rstrip("\n") + "\n"
    godot4 = entry["godot4"].rstrip("\n") + "\n"
    title = entry["title"].strip()
    explanation = " ".join(entry["explanation"].split())
    cues = list(entry["cues"])
    mappings = list(entry["mappings"])
    text = "\n\n".join(
        [
            title,
            explanation,
            "Cues: " + ", ".join(cues),
            "Godot 3:\n" + godot3.rstrip("\n"),
            "Godot 4:\n" + godot4.rstrip("\n"),
        ]
    )
    row = {
        "id": "proto:" + entry["id"],
        "label": entry["label"],
        "category": entry["category"],
        "title": title,
        "godot3_example": godot3,
        "godot4_example": godot4,
        "explanation": explanation,
        "cues": cues,
        "mappings": mappings,
        "text": text,
    }
    row["content_hash"] = schema.content_hash(*(row[c] for c in schema.POLARS["label_prototypes"] if c != "content_hash"))
    row["language"] = entry.get("language", "gdscript")
    row["converter_categories"] = list(entry.get("converter_categories", []))
    return row


def _gdscript_parser():
    import tree_sitter as ts
    import tree_sitter_gdscript as tsg

    return ts.Parser(ts.Language(tsg.language()))


def _first_bad_node(node):
    if node.type == "ERROR" or node.is_missing:
        return node
    if not node.has_error:
        return None
    for child in node.children:
        found = _first_bad_node(child)
        if found is not None:
            return found
    return None
