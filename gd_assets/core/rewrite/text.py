"""Edits on the text of a non-GDScript fragment (scene, resource, project.godot, shader), by character
offsets, placed in file coordinates as `Edit`s; overlapping edits keep the first one made."""

from __future__ import annotations

import bisect

from gd_assets.core.rewrite.edits import Edit, FragmentRewrite, Manual, apply_edits


class TextEdits:
    def __init__(self, text: str, start_line: int):
        self.text = text
        self.start_line = start_line
        self.starts = [0]
        for i, ch in enumerate(text):
            if ch == "\n":
                self.starts.append(i + 1)
        self._edits: list[tuple[int, int, str, str, dict | None, float]] = []
        self.manual: list[Manual] = []

    def point(self, offset: int) -> tuple[int, int]:
        """(file line, 1-based column) of a character offset of the fragment."""
        row = bisect.bisect_right(self.starts, offset) - 1
        return self.start_line + row, offset - self.starts[row] + 1

    def line_of(self, offset: int) -> int:
        return self.point(offset)[0]

    def replace(self, a: int, b: int, new: str, rule: str, evidence: dict | None, confidence: float = 0.9) -> bool:
        """Replace text[a:b] with `new`; refused (False) when it overlaps an edit already made."""
        if self.text[a:b] == new:
            return True
        for i, (x, y, old_new, *rest) in enumerate(self._edits):
            if a == b == x == y:  # a second insertion at one point follows the first
                self._edits[i] = (x, y, old_new + new, *rest)
                return True
            if a < y and x < b or (a == b and x < a < y) or (x == y and a < x < b):
                return False
        self._edits.append((a, b, new, rule, evidence, confidence))
        return True

    def insert(self, at: int, new: str, rule: str, evidence: dict | None, confidence: float = 0.9) -> bool:
        return self.replace(at, at, new, rule, evidence, confidence)

    def delete_lines(self, a: int, b: int, rule: str, evidence: dict | None, confidence: float = 0.9) -> bool:
        """Delete the whole lines holding text[a:b], with one of their line breaks."""
        row_a = bisect.bisect_right(self.starts, a) - 1
        row_b = bisect.bisect_right(self.starts, max(a, b - 1)) - 1
        start = self.starts[row_a]
        end = self.starts[row_b + 1] if row_b + 1 < len(self.starts) else len(self.text)
        for i, (x, y, new, *rest) in enumerate(self._edits):
            if y == start and new == "":  # the lines just above go too: one deletion
                self._edits[i] = (x, end, new, *rest)
                return True
        if end == len(self.text) and start > 0:
            start -= 1  # the last line: take the break before it
        return self.replace(start, end, "", rule, evidence, confidence)

    def manual_item(self, a: int, b: int, kind: str, what: str, why: str, evidence: list[dict] | None = None) -> None:
        self.manual.append(Manual(kind, self.line_of(a), self.line_of(max(a, b - 1)), what, why,
                                  [e for e in evidence or [] if e]))

    def result(self) -> FragmentRewrite:
        edits = []
        for a, b, new, rule, evidence, confidence in sorted(self._edits):
            (la, ca), (lb, cb) = self.point(a), self.point(b)
            edits.append(Edit(la, ca, lb, cb, self.text[a:b], new, rule, evidence, confidence))
        return FragmentRewrite(edits, self.manual, apply_edits(self.text, edits, self.start_line))
