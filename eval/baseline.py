"""A converter-style baseline judge: flag a fragment when the official converter would touch it.

It flags a fragment whenever one of the 3->4 rename map's live pairs matches as a whole word, or
one of the converter's syntax rules matches, outside comments (a comment never needs migration).
It reads no evidence: it is the bar an evidence judge must beat (more recall, far fewer false alarms). Rename pairs come from `renames_map_3_to_4.cpp`
(or, when only a built store is at hand, from `api_mapping` rows with source 'rename_map' and
ambiguous = false); syntax rules are the converter's named regexes of `converter_rules_3_to_4.json`
plus the keyword and call-shape rules its test vectors show.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from gd_assets.core.judges.base import JudgeInput, Judgement

REPO = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS_DIR = REPO.parent / "shared" / "corpus"
RENAME_FILE = "renames_map_3_to_4.cpp"
RULES_FILE = "converter_rules_3_to_4.json"

# Rename tables the converter applies to GDScript (C#, shader and project.godot tables are not).
GDSCRIPT_TABLES = {
    "enum_renames": "enum", "gdscript_function_renames": "function", "gdscript_properties_renames": "property",
    "gdscript_signals_renames": "signal", "builtin_types_renames": "builtin_type", "class_renames": "class",
    "color_renames": "color", "theme_override_renames": "theme_override",
    "project_settings_renames": "project_setting",
}

# Rules the converter's test vectors show beyond its named regexes (Godot 3 forms only).
KEYWORD_RULES = {
    "onready": r"^[ \t]*onready\b",
    "export": r"^[ \t]*export\b(?!_)",
    "tool": r"^tool\b",
    "rpc_keyword": r"^[ \t]*(?:remote|remotesync|sync|puppet|puppetsync|master|mastersync|slave)[ \t]+func\b",
    "yield": r"\byield\s*\(",
    "setget": r"\bsetget\b",
    "init_super_args": r"\bfunc\s+_init\s*\([^)]*\)\s*\.\s*\(",
    "var_parameter": r"\bfunc\s+\w+\s*\([^)]*\bvar\s+\w",
    "list_dir_begin_args": r"\blist_dir_begin\s*\(\s*[^)\s]",
    "get_node_at": r"\bget_node\s*\(\s*@",
    "xform": r"\.xform(?:_inv)?\s*\(",
    "move_and_slide_args": r"\bmove_and_slide(?:_with_snap)?\s*\(\s*[^)\s]",
    "get_focus_owner": r"\bget_focus_owner\s*\(",
    "thread_start_args": r"\.start\s*\(\s*[\w.]+\s*,\s*[\"']",
    "os_window": r"\bOS\.(?:(?:set_|is_|get_)?window_(?:resizable|fullscreen|maximized|minimized|always_on_top)"
                 r"|is_vsync_enabled|vsync_enabled|set_use_vsync|set_borderless_window)\b",
}
# Calls whose Godot 3 form has at least this many top-level arguments (Godot 4 takes a Callable).
ARG_COUNT_RULES = {
    "connect": 3, "disconnect": 3, "is_connected": 3, "tween_method": 5, "tween_callback": 2,
    "sort_custom": 2, "create_from_image": 2, "set_cell_item": 5, "get_cell_item": 3,
    "get_cell_item_orientation": 3, "map_to_world": 3,
}

_PAIR = re.compile(r'\{\s*"((?:[^"\\]|\\.)*)"\s*,\s*"((?:[^"\\]|\\.)*)"\s*\}')
_TABLE = re.compile(r"RenamesMap3To4::(\w+)\[\]\[2\]\s*=\s*\{(.*?)\n\};", re.S)
_IDENT = re.compile(r"[A-Za-z_]\w*")


@dataclass(frozen=True)
class Rule:
    name: str
    pattern: re.Pattern


def live_pairs_from_cpp(path: Path) -> list[tuple[str, str, str]]:
    """(category, old, new) of every live pair of the GDScript tables (commented-out pairs are left out)."""
    pairs = []
    for table, body in _TABLE.findall(path.read_text(encoding="utf-8")):
        if table not in GDSCRIPT_TABLES:
            continue
        for line in body.splitlines():
            match = _PAIR.match(line.strip())  # a commented-out pair starts with // and does not match
            if match and match.group(1) != match.group(2):
                pairs.append((GDSCRIPT_TABLES[table], match.group(1), match.group(2)))
    return pairs


def live_pairs_from_store(db_path: Path) -> list[tuple[str, str, str]]:
    """The same pairs from a built store's api_mapping table."""
    import duckdb

    with duckdb.connect(str(db_path), read_only=True) as con:
        rows = con.execute(
            "select category, old_name, new_name from api_mapping "
            "where source = 'rename_map' and not ambiguous and category in "
            f"({', '.join('?' for _ in GDSCRIPT_TABLES)})",
            list(GDSCRIPT_TABLES.values()),
        ).fetchall()
    return [(c, o, n) for c, o, n in rows if o and n and o != n]


def syntax_rules(rules_path: Path) -> list[Rule]:
    """The converter's named regexes plus the keyword rules of its test vectors."""
    named = json.loads(rules_path.read_text(encoding="utf-8"))["named_regexes"]
    rules = [Rule(r["name"], re.compile(r["pattern"], re.M)) for r in named]
    rules += [Rule(name, re.compile(p, re.M)) for name, p in KEYWORD_RULES.items()]
    return rules


def strip_comments(text: str) -> str:
    """The text with every `#` comment blanked out (strings are kept: signal names and paths live there)."""
    out = []
    for line in text.split("\n"):
        quote, cut = "", len(line)
        i = 0
        while i < len(line):
            ch = line[i]
            if quote:
                if ch == "\\":
                    i += 1
                elif ch == quote:
                    quote = ""
            elif ch in "\"'":
                quote = ch
            elif ch == "#":
                cut = i
                break
            i += 1
        out.append(line[:cut])
    return "\n".join(out)


def _top_level_args(text: str, open_at: int) -> int:
    """How many top-level arguments the call whose '(' is at `open_at` has (0 for an empty call)."""
    depth, count, seen = 0, 0, False
    quote = ""
    for ch in text[open_at:]:
        if quote:
            if ch == quote:
                quote = ""
            continue
        if ch in "\"'":
            quote = ch
            seen = True
        elif ch in "([{":
            depth += 1
            if depth > 1:
                seen = True
        elif ch in ")]}":
            depth -= 1
            if depth == 0:
                return count + (1 if seen else 0)
        elif ch == "," and depth == 1:
            count += 1
        elif not ch.isspace() and depth >= 1:
            seen = True
    return count + (1 if seen else 0)


class BaselineJudge:
    """Flags what the converter would rewrite; `signal` is godot3 when it flags, neutral otherwise."""

    name = "baseline"
    needs_evidence = False

    def __init__(self, corpus_dir: Path | str | None = None, store: Path | str | None = None,
                 comments: bool = False) -> None:
        self.comments = comments  # match inside comments too (the converter rewrites them as well)
        corpus_dir = Path(corpus_dir) if corpus_dir else DEFAULT_CORPUS_DIR
        if (corpus_dir / RENAME_FILE).exists():
            pairs = live_pairs_from_cpp(corpus_dir / RENAME_FILE)
        elif store and Path(store).exists():
            pairs = live_pairs_from_store(Path(store))
        else:
            raise FileNotFoundError(f"{corpus_dir / RENAME_FILE} is missing and no store was given: "
                                    "pass --corpus-dir (the folder of the rename map) or --home")
        rules_path = corpus_dir / RULES_FILE
        if not rules_path.exists():
            raise FileNotFoundError(f"{rules_path} is missing: pass --corpus-dir (the folder of {RULES_FILE})")
        self.words: dict[str, tuple[str, str]] = {}   # identifier-shaped old names
        other: dict[str, tuple[str, str]] = {}        # names with '/' or '.' (settings, theme paths)
        colors: dict[str, str] = {}
        for category, old, new in pairs:
            if category == "color":
                colors[old] = new
            elif _IDENT.fullmatch(old):
                self.words.setdefault(old, (category, new))
            else:
                other.setdefault(old, (category, new))
        self.other = other
        self._other_re = re.compile(
            r"(?<![\w/.])(" + "|".join(re.escape(o) for o in sorted(other, key=len, reverse=True)) + r")(?![\w/])"
        ) if other else None
        self._color_re = re.compile(r"\bColor\.(" + "|".join(sorted(colors, key=len, reverse=True)) + r")\b")
        self.colors = colors
        self.rules = syntax_rules(rules_path)
        self._calls = re.compile(r"\b(" + "|".join(ARG_COUNT_RULES) + r")\s*\(")
        self.model = f"converter-style-{len(pairs)}-pairs-{len(self.rules) + len(ARG_COUNT_RULES)}-rules"

    def reasons(self, text: str) -> list[str]:
        """Why the converter would touch this text: one entry per matching pair or rule."""
        if not self.comments:
            text = strip_comments(text)
        found: list[str] = []
        for word in dict.fromkeys(_IDENT.findall(text)):
            if word in self.words:
                category, new = self.words[word]
                found.append(f"{category} rename {word} -> {new}")
        if self._other_re is not None:
            for old in dict.fromkeys(m.group(1) for m in self._other_re.finditer(text)):
                category, new = self.other[old]
                found.append(f"{category} rename {old} -> {new}")
        for old in dict.fromkeys(m.group(1) for m in self._color_re.finditer(text)):
            found.append(f"color rename Color.{old} -> Color.{self.colors[old]}")
        for rule in self.rules:
            if rule.pattern.search(text):
                found.append(f"syntax rule {rule.name}")
        for match in self._calls.finditer(text):
            name = match.group(1)
            if _top_level_args(text, match.end() - 1) >= ARG_COUNT_RULES[name]:
                found.append(f"syntax rule {name}_args")
        return list(dict.fromkeys(found))

    def judge(self, items: Sequence[JudgeInput]) -> list[Judgement]:
        out = []
        for item in items:
            why = self.reasons(item.text)
            out.append(Judgement(
                key=item.key, signal="godot3" if why else "neutral", migration_needed=bool(why),
                confidence=1.0 if why else 0.5,
                rationale="; ".join(why) if why else "no rename pair or converter rule matches",
            ))
        return out
