"""docs_chunks: one searchable row per class and per member of the 3.x and 4.x class reference,
plus section chunks of the docs pages.

Text is cleaned of BBCode but keeps the code names ([method foo] -> foo, [Node] -> Node), because
those names are exactly what a fragment's cues will match.
"""

from __future__ import annotations

import re

from corpora_build.schema import content_hash, unique_id
from corpora_build.sources import Source
from corpora_build.sources.classref import ClassDoc, Member, read_classes
from corpora_build.sources.files import iter_files

_DROP_BLOCKS = re.compile(r"\[csharp[^\]]*\].*?\[/csharp\]", re.S)
_REFS = re.compile(r"\[(?:method|member|signal|constant|enum|theme_item|annotation|param|operator|constructor)\s+([^\]]+)\]")
_TAGS = re.compile(r"\[/?(?:b|i|u|s|code|kbd|codeblocks?|gdscript|text|center|font|color|url|img|lb_|br_)(?:[= ][^\]]*)?\]")
_CLASS = re.compile(r"\[([A-Z@][A-Za-z0-9_@.]*|int|float|bool)\]")
PAGE_CHUNK_CHARS = 2500


def clean_bbcode(text: str) -> str:
    """Class-reference BBCode to plain text that keeps every code name."""
    text = _DROP_BLOCKS.sub("", text)
    text = _REFS.sub(r"\1", text)
    text = _TAGS.sub("", text)
    text = _CLASS.sub(r"\1", text)
    text = text.replace("[br]", "\n").replace("[lb]", "[").replace("[rb]", "]")
    text = text.replace("$DOCS_URL", "https://docs.godotengine.org")
    lines = [line.strip() for line in text.splitlines()]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


def _row(**row: str | None) -> dict:
    row["content_hash"] = content_hash(row["title"], row["signature"], row["text"])
    return row


def _unique(rid: str, seen: set[str], member: Member | None = None) -> str:
    """Overloads (3.x constructors, 4.x operators) share a name: tell them apart by parameter types."""
    return unique_id(rid, seen, f"{rid}({','.join(member.params)})" if member is not None else None)


def class_rows(classes: dict[str, ClassDoc], source: Source) -> list[dict]:
    major = source.version[0]
    rows: list[dict] = []
    seen: set[str] = set()
    for cls in sorted(classes.values(), key=lambda c: c.name):
        inherits = f" inherits {cls.inherits}" if cls.inherits else ""
        rows.append(_row(
            id=_unique(f"docs:{major}:{cls.name}.class", seen), godot_version=major, release=source.version,
            class_name=cls.name, member_kind="class", member_name=None,
            title=f"{cls.name} (Godot {major} class)", signature=f"class {cls.name}{inherits}",
            text=clean_bbcode(f"{cls.name}{inherits}. {cls.brief}\n{cls.description}"), source=cls.path,
        ))
        for m in cls.members:
            description = clean_bbcode(m.description) or "(no description)"
            rows.append(_row(
                id=_unique(f"docs:{major}:{cls.name}.{m.kind}.{m.name}", seen, m), godot_version=major,
                release=source.version, class_name=cls.name, member_kind=m.kind, member_name=m.name,
                title=f"{cls.name}.{m.name} (Godot {major} {m.kind.replace('_', ' ')})", signature=m.signature,
                text=f"{cls.name}.{m.name}: {description}", source=cls.path,
            ))
    return rows


_HEADING = re.compile(r"^([=\-~^\"'`#*+])\1{2,}\s*$")
_ROLE = re.compile(r":[\w:]+:`([^`<]*?)\s*(?:<[^>]*>)?`")


def clean_rst(text: str) -> str:
    """Drop link targets and roles' markup; keep literal code as is."""
    text = re.sub(r"^\.\. _[^:]+:\s*$", "", text, flags=re.M)
    text = re.sub(r"^\.\. (\w[\w-]*)::\s*", lambda m: m.group(1).capitalize() + ": ", text, flags=re.M)
    text = _ROLE.sub(r"\1", text).replace("``", "")
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def rst_sections(text: str) -> list[tuple[str, str]]:
    """(heading, body) per section; a heading is a line underlined with repeated punctuation."""
    lines = text.splitlines()
    sections: list[tuple[str, list[str]]] = [("", [])]
    i = 0
    while i < len(lines):
        line = lines[i]
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if line.strip() and not _HEADING.match(line) and _HEADING.match(nxt) and len(nxt.strip()) >= len(line.strip()):
            if sections[-1][1] and _HEADING.match(sections[-1][1][-1]):
                sections[-1][1].pop()  # overline
            sections.append((line.strip(), []))
            i += 2
            continue
        sections[-1][1].append(line)
        i += 1
    return [(h, clean_rst("\n".join(body))) for h, body in sections if "\n".join(body).strip()]


def _split(text: str, limit: int = PAGE_CHUNK_CHARS) -> list[str]:
    """Cut at paragraphs, and at lines inside a paragraph (an rst table) that alone passes the limit."""
    pieces: list[tuple[str, str]] = []
    for para in text.split("\n\n"):
        lines = para.splitlines() if len(para) > limit else [para]
        pieces.extend(("\n\n" if i == 0 else "\n", line) for i, line in enumerate(lines))
    parts, current = [], ""
    for sep, piece in pieces:
        if current and len(current) + len(piece) > limit:
            parts.append(current)
            current = ""
        current = f"{current}{sep}{piece}" if current else piece
    return parts + ([current] if current else [])


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "intro"


def page_rows(source: Source) -> list[dict]:
    """Section chunks of the `.rst` pages; a page under a `*3.*` folder is Godot 3, the rest Godot 4."""
    rows: list[dict] = []
    seen: set[str] = set()
    for rel, data in iter_files(source.location, ("*.rst",), strip_top=False):
        top, _, page = rel.partition("/") if "/" in rel else ("", "", rel)
        major = "3" if re.search(r"3\.\d", top) else "4"
        sections = rst_sections(data.decode("utf-8", "replace"))
        page_title = next((h for h, _ in sections if h), page)
        for heading, body in sections:
            for n, part in enumerate(_split(body), start=1):
                suffix = f"-{n}" if n > 1 else ""
                rid = _unique(f"docs:{major}:page:{page.removesuffix('.rst')}#{_slug(heading)}{suffix}", seen)
                title = page_title if heading in ("", page_title) else f"{page_title} > {heading}"
                rows.append(_row(
                    id=rid, godot_version=major, release=top or source.version, class_name=None,
                    member_kind="page_section", member_name=heading or None,
                    title=f"{title} (Godot {major} docs)", signature=None, text=part, source=rel,
                ))
    return rows


def build_docs_chunks(sources: dict[str, Source]) -> list[dict]:
    """All docs rows for the given sources (class reference of both versions, pages when present)."""
    rows: list[dict] = []
    for name in ("godot3_classes", "godot4_classes"):
        rows.extend(class_rows(read_classes(sources[name]), sources[name]))
    if "docs_pages" in sources:
        rows.extend(page_rows(sources["docs_pages"]))
    return rows
