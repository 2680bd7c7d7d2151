"""What a rewrite produces: edits in file coordinates, manual items, and how to apply and show them.

Positions are 1-based lines of the file and 1-based character columns, end exclusive.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass
class Edit:
    start_line: int
    start_col: int
    end_line: int
    end_col: int
    old: str
    new: str
    rule: str
    evidence: dict | None
    confidence: float


@dataclass
class Manual:
    kind: str  # tween | file_access | yield | signal_callable | move_and_slide | export | rpc | not_parsed
    start_line: int
    end_line: int
    what: str
    why: str
    evidence: list[dict] = field(default_factory=list)


@dataclass
class FragmentRewrite:
    edits: list[Edit] = field(default_factory=list)
    manual: list[Manual] = field(default_factory=list)
    text: str = ""

    def to_json(self) -> dict:
        """Edits and manual items as plain dicts, for `json.dumps` (shallow: `asdict` deep-copies every
        evidence dict, which cost more than the rewrite)."""
        return {"edits": [dict(vars(e)) for e in self.edits], "manual": [dict(vars(m)) for m in self.manual]}


def apply_edits(text: str, edits: list[Edit], first_line: int = 1) -> str:
    """`text` (whose first line is file line `first_line`) with the edits applied; an edit whose old
    text does not match raises ValueError (the file changed since it was analysed)."""
    lines = text.split("\n")
    # from the end back; insertions at one point land in the order they came (the last applied first)
    for _, e in sorted(enumerate(edits), key=lambda ie: (ie[1].start_line, ie[1].start_col, ie[1].end_line,
                                                          ie[1].end_col, ie[0]), reverse=True):
        a, b = e.start_line - first_line, e.end_line - first_line
        if not (0 <= a <= b < len(lines)):
            raise ValueError(f"edit at line {e.start_line} is outside the text")
        head, tail = lines[a][:e.start_col - 1], lines[b][e.end_col - 1:]
        old = "\n".join([lines[a][e.start_col - 1:]] + lines[a + 1:b] + [lines[b][:e.end_col - 1]]) if a != b \
            else lines[a][e.start_col - 1:e.end_col - 1]
        if old != e.old:
            raise ValueError(f"line {e.start_line}: expected {e.old!r}, found {old!r}")
        lines[a:b + 1] = (head + e.new + tail).split("\n")
    return "\n".join(lines)


_HUNK = re.compile(r"^@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@")


def fragment_diff(frag: Mapping, new_text: str) -> str:
    """A unified diff of one fragment, numbered as in its file (for the debug view and the report)."""
    shift = int(frag["start_line"]) - 1

    def renumber(line: str) -> str:
        m = _HUNK.match(line)
        if m is None:
            return line
        return f"@@ -{int(m.group(1)) + shift}{m.group(2) or ''} +{int(m.group(3)) + shift}{m.group(4) or ''} @@"
    lines = difflib.unified_diff(frag["text"].split("\n"), new_text.split("\n"), f"a/{frag['path']}",
                                 f"b/{frag['path']}", n=1, lineterm="")
    return "\n".join(renumber(line) for line in lines)
