"""The answer to a Godot 3 name Godot 4 lacks, when no rule rewrote it: a curated answer (the `curated_answer`
rows of api_mapping: a rename, a move to another class, or what to do by hand), else the nearest members
Godot 4's class reference documents on the class, else only the fact that the name is gone.

The rewrite turns an answer that is not a rename or a move into a manual item, so a use of a gone name is
never left unsaid; `api_coverage` counts which kind of answer each name gets.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from fnmatch import fnmatchcase

from gd_assets.core.corpus.surface import Surface

# Manual item kinds, from the most to the least help: a curated answer, the reference's nearest names, nothing.
CURATED, HINT, GONE = "api_answer", "api_hint", "api_gone"
_WORDS = re.compile(r"[a-z0-9]+")
_COMMON = {"get", "set", "is", "has", "the", "to", "of", "2d", "3d"}


@dataclass(frozen=True)
class CuratedAnswer:
    id: str
    title: str
    cls: str         # a Godot 3 class, or a pattern (`VisualScript*`)
    name: str        # a member (or the class itself), or a pattern (`KEY_*`)
    kind: str        # renamed | moved | removed
    new: str | None  # the Godot 4 name (renamed) or `Class.member` (moved)
    text: str
    value: str = ""  # a setting's value rule: `true=3,false=0` (the values that change; others stay)

    def cite(self) -> dict:
        return {"table": "api_mapping", "id": self.id, "title": self.title}

    @property
    def specificity(self) -> tuple[int, int]:
        return ("*" not in self.cls, "*" not in self.name), (len(self.cls), len(self.name))


@dataclass
class Answers:
    entries: list[CuratedAnswer] = field(default_factory=list)
    # every member of every class is looked up on the way (a rename is asked before each member is kept), so
    # the answers are indexed by exact name and class, and each (class, name) is matched once
    _found: dict[tuple[str, str], list[CuratedAnswer]] = field(default_factory=dict, repr=False)

    def find(self, classes: list[str], name: str, kinds: tuple[str, ...] = ("renamed", "moved", "removed")
             ) -> CuratedAnswer | None:
        """The most specific curated answer for `name` on the first of `classes` (nearest first) that has one."""
        for cls in classes:
            found = [a for a in self._matching(cls, name) if a.kind in kinds]
            if found:
                return max(found, key=lambda a: a.specificity)
        return None

    def _matching(self, cls: str, name: str) -> list[CuratedAnswer]:
        key = (cls, name)
        if key not in self._found:
            if not hasattr(self, "_exact"):
                self._exact: dict[str, list[CuratedAnswer]] = {}
                self._patterns: list[CuratedAnswer] = []
                for a in self.entries:
                    if "*" in a.name:
                        self._patterns.append(a)
                    else:
                        self._exact.setdefault(a.name, []).append(a)
            candidates = [*self._exact.get(name, ()), *self._patterns]
            self._found[key] = [a for a in candidates if fnmatchcase(cls, a.cls) and fnmatchcase(name, a.name)]
        return self._found[key]


@dataclass(frozen=True)
class GoneAnswer:
    kind: str      # CURATED | HINT | GONE
    what: str
    why: str
    cites: tuple[dict, ...]


def _words(name: str) -> set[str]:
    return set(_WORDS.findall(name.lower().replace("_", " "))) - _COMMON


def nearest(surface: Surface, cls4: str, name: str, kind: str, limit: int = 3) -> list[str]:
    """Members of Godot 4's `cls4` (and its ancestors up to the first engine base it shares with many classes)
    whose names share most words with `name`: where a reader would look first."""
    wanted = _words(name)
    if not wanted:
        return []
    kinds = {"method": ("method", "property"), "property": ("property", "method"), "signal": ("signal",),
             "constant": ("constant", "enum")}[kind]
    scored = []
    for owner in surface.ancestors("4", cls4)[:3]:
        for member in surface.class_members.get(("4", owner), ()):
            if member.startswith("_") or not surface.kinds.get(("4", owner, member), {"method"}) & set(kinds):
                continue
            shared = len(wanted & _words(member))
            if shared and shared / len(wanted) >= 0.5:
                ratio = difflib.SequenceMatcher(a=name.lower(), b=member.lower()).ratio()
                scored.append((shared / len(wanted), ratio, f"{owner}.{member}"))
    return [m for _, _, m in sorted(scored, reverse=True)[:limit]]


def gone_answer(surface: Surface, answers: Answers, kind: str, cls3: str, name: str, gone_row: dict | None
                ) -> GoneAnswer:
    """What a manual item says of Godot 3 `cls3.name` (`kind`: class|method|property|signal|constant|global_*),
    gone from Godot 4: the curated answer, else the nearest documented names, else that it is gone."""
    label = name if kind == "class" else f"{name}()" if kind in ("method", "global_function") else name
    owner = "" if kind == "class" or cls3.startswith("@") else f"{cls3}."
    what = f"{owner}{label}: no Godot 4 counterpart under this name"
    cites = tuple(c for c in (gone_row,) if c)
    curated = answers.find(surface.ancestors("3", cls3) or [cls3], name, ("removed",))
    if curated is not None:
        return GoneAnswer(CURATED, what, curated.text, (curated.cite(), *cites))
    cls4 = surface.class4(cls3) if kind not in ("class", "global_function", "global_constant") else None
    close = nearest(surface, cls4, name, "property" if kind == "project_setting" else kind) if cls4 else []
    if kind in ("global_function", "global_constant"):
        close = [f"@GlobalScope.{m}" for m in difflib.get_close_matches(
            name, [m for m, owners in surface.members.get(("4", "method" if kind == "global_function" else "constant"),
                                                          {}).items() if owners & {"@GlobalScope", "@GDScript"}], 3, 0.75)]
    if close:
        docs = tuple({"table": "docs_chunks", "id": f"docs:4:{m.replace('.', '.' + _doc_kind(surface, m) + '.', 1)}",
                      "title": f"{m} (Godot 4)"} for m in close)
        return GoneAnswer(HINT, what, f"Godot 4's reference documents instead, nearest first: {', '.join(close)}; "
                                      "check which one does what this did.", (*cites, *docs))
    where = f"Godot 4's {cls4}" if cls4 else "Godot 4"
    return GoneAnswer(GONE, what, f"{where} documents nothing close: rewrite this with Godot 4's API by hand.", cites)


def _doc_kind(surface: Surface, qualified: str) -> str:
    cls, _, member = qualified.partition(".")
    kinds = surface.kinds.get(("4", cls, member), set())
    return next((k for k in ("method", "property", "signal", "constant") if k in kinds), "method")
