"""The text dump: a whole project as one text, each file introduced by a `# <relative path>` line.

A header is only a boundary marker, never part of a file body. Every body line keeps its own dump
line number, so a fragment can be traced back to the dump a person is looking at.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import PurePosixPath
from typing import Protocol


class DumpedFile(Protocol):
    """What a dump needs of a file (an ingested `SourceFile` is one)."""

    path: str
    included: bool
    text: str | None

# Extensions a header may name: the text kinds of a Godot project and the documents.
SOURCE_SUFFIXES = {
    ".gd": "gdscript",
    ".tscn": "scene",
    ".escn": "scene",
    ".tres": "resource",
    ".gdshader": "shader",
    ".shader": "shader",
    ".gdshaderinc": "shader",
    ".cfg": "config",
    ".gdns": "config",
    ".gdnlib": "config",
    ".gdextension": "config",
}
DOCUMENT_SUFFIXES = {
    ".md", ".markdown", ".rst", ".txt", ".adoc", ".asciidoc", ".org", ".pdf", ".html", ".htm",
    ".rtf", ".doc", ".docx", ".odt",
}
# Document names that usually carry no extension (matched on the part before the first dot).
DOCUMENT_NAMES = {
    "README", "LICENSE", "LICENCE", "COPYING", "CHANGELOG", "CHANGES", "AUTHORS", "CONTRIBUTORS",
    "CONTRIBUTING", "NOTICE", "CREDITS", "HISTORY",
}
PROJECT_FILE = "project.godot"

_HEADER = re.compile(r"# (\S+)[ \t]*")


class DumpError(ValueError):
    """A dump text that cannot be split into files; the message names the dump line."""


def header_path(line: str) -> str | None:
    """The path a header line names, or None when the line is body text.

    `# player.gd` is a header; `# TODO move this`, `# player.gd is great` and
    `# see res://player.gd` are comments.
    """
    match = _HEADER.fullmatch(line)
    if match is None:
        return None
    token = match.group(1)
    if "://" in token or token.endswith("/"):
        return None
    name = PurePosixPath(token.replace("\\", "/")).name
    if name == PROJECT_FILE:
        return token
    suffix = PurePosixPath(name).suffix.lower()
    if suffix in SOURCE_SUFFIXES or suffix in DOCUMENT_SUFFIXES:
        return token
    if "." not in name and name.upper() in DOCUMENT_NAMES:
        return token
    return None


def _body_lines(text: str) -> list[str]:
    """Lines of a file text as an editor shows them: a final newline does not add a line."""
    if not text:
        return []
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    return lines


def to_dump(files: Iterable[DumpedFile]) -> str:
    """The dump of the included files, in the order given: `# <path>`, the body, a blank line.

    A body line that itself looks like a header (see `header_path`) cannot round-trip.
    """
    chunks = []
    for file in files:
        if not file.included or file.text is None:
            continue
        lines = _body_lines(file.text)
        chunks.append("".join(f"{line}\n" for line in [f"# {file.path}", *lines]))
    return "\n".join(chunks)


def parse_dump(text: str) -> list[tuple[str, int, str]]:
    """Split a dump into `(path, dump line of the file's line 1, body)`, in dump order.

    Body line i is dump line `start + i - 1`. Trailing blank lines of a body (the separator) are
    dropped; a non-empty body ends with one newline, like a file on disk.
    Raises DumpError when there is no header, when text comes before the first header, or when a
    path appears twice.
    """
    text = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    lines = _body_lines(text)
    starts: list[tuple[int, str]] = []  # (0-based row of the header, path)
    first_row: dict[str, int] = {}
    for row, line in enumerate(lines):
        path = header_path(line)
        if path is None:
            continue
        if path in first_row:
            raise DumpError(
                f"'{path}' appears twice, in the headers at dump lines {first_row[path] + 1} and {row + 1}; "
                "each file may appear once: merge or rename one of them"
            )
        first_row[path] = row
        starts.append((row, path))
    if not starts:
        raise DumpError(
            "has no '# <relative path>' headers (such as '# player.gd' at the start of a line): "
            "put one before each file's text"
        )
    stray = next((row for row in range(starts[0][0]) if lines[row].strip()), None)
    if stray is not None:
        raise DumpError(
            f"dump line {stray + 1} comes before the first '# <relative path>' header and belongs to no "
            "file: remove it or put a header above it"
        )
    result = []
    for i, (row, path) in enumerate(starts):
        stop = starts[i + 1][0] if i + 1 < len(starts) else len(lines)
        body = lines[row + 1 : stop]
        while body and not body[-1].strip():
            body.pop()
        result.append((path, row + 2, "".join(f"{line}\n" for line in body)))
    return result
