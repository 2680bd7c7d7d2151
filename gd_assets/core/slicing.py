"""Cut included text files into fragments, keeping exact file line ranges.

`.gd` files go through tree-sitter-gdscript and are cut into declaration and function fragments;
`project.godot` and `.cfg` by `[section]`; `.tscn`/`.tres` by `[header]` blocks; other text by
blank-line blocks. The invariant every slicer keeps: each non-blank line of a file is in exactly
one fragment (a safety net turns anything left over into an `unparsed` fragment).
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field
from functools import lru_cache

import tree_sitter as ts
import tree_sitter_gdscript as tsg

MAX_FUNCTION_LINES = 80
MAX_BLOCK_LINES = 60


@dataclass
class Fragment:
    """A line range of one file; lines are 1-based and inclusive, as an editor shows them."""

    path: str
    start_line: int
    end_line: int
    kind: str
    symbol: str
    text: str = ""
    reason: str | None = None
    ordinal: int = 0


@dataclass
class _Unit:
    """A top-level statement (or a merged run of statements sharing lines), 0-based rows."""

    start: int
    end: int
    role: str  # function | class | attachable | decl | error
    symbol: str
    node: ts.Node | None = None
    nodes: list[ts.Node] = field(default_factory=list)


_parsers = threading.local()


def gdscript_parser() -> ts.Parser:
    """This thread's parser: a tree-sitter parser is not to be used by two threads at once (the
    evidence step searches one batch in a thread while the next is read in)."""
    parser = getattr(_parsers, "parser", None)
    if parser is None:
        parser = _parsers.parser = ts.Parser(_language())
    return parser


@lru_cache(maxsize=1)
def _language() -> ts.Language:
    return ts.Language(tsg.language())


def descendants(node: ts.Node, include_self: bool = True):
    """Every node under `node` in source order (pre-order), without recursion: an expression nested
    thousands of parentheses deep is walked like any other."""
    stack = [node] if include_self else list(reversed(node.children))
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children))


def value_used(call: ts.Node) -> bool:
    """Whether a call's value is used (Godot 4 wants `await` on a coroutine's value, not on a bare statement)."""
    parent = call.parent
    return parent is not None and parent.type not in ("expression_statement", "await_expression") and not (
        parent.type == "arguments" and parent.parent is not None and parent.parent.children[0].text == b"yield")


def post_order(node: ts.Node):
    """Every node under `node`, children before their parent (left to right), without recursion."""
    stack: list[tuple[ts.Node, bool]] = [(node, False)]
    while stack:
        current, expanded = stack.pop()
        if expanded:
            yield current
            continue
        stack.append((current, True))
        stack.extend((child, False) for child in reversed(current.children))


def parse_gdscript(text: str) -> ts.Tree:
    """Parse GDScript as Godot reads it: a comment line's indentation means nothing. The grammar
    lets a column-0 comment end a function body, so each comment line is given the indentation of
    the code line after it (rows stay as they are; only comment lines change)."""
    return gdscript_parser().parse(_comments_aligned(text).encode("utf-8"))


def _comments_aligned(text: str) -> str:
    lines = text.split("\n")
    indent = ""
    for i in range(len(lines) - 1, -1, -1):
        code = lines[i].lstrip(" \t")
        if code.startswith("#"):
            lines[i] = indent + code
        elif code:
            indent = lines[i][: len(lines[i]) - len(code)]
    return "\n".join(lines)


def slice_file(path: str, kind: str, text: str) -> list[Fragment]:
    """Fragments of one included file, in file order, with text and ordinals filled in."""
    lines = text.split("\n")
    if kind == "gdscript":
        frags = _slice_gdscript(path, text, lines)
    elif kind in ("project", "config"):
        frags = _slice_sections(path, lines)
    elif kind in ("scene", "resource"):
        frags = _slice_headers(path, lines)
    elif kind == "shader":
        frags = _slice_shader(path, text, lines)
    else:
        frags = _slice_blocks(path, lines)
    frags = _cover_leftovers(path, lines, frags)
    for i, frag in enumerate(frags):
        frag.ordinal = i
        frag.text = "\n".join(lines[frag.start_line - 1 : frag.end_line])
    _dedupe_symbols(frags)
    return frags


# --- GDScript -------------------------------------------------------------------------------------

_NAMED_DECLS = {
    "signal_statement": "signal",
    "variable_statement": "var",
    "export_variable_statement": "var",
    "onready_variable_statement": "var",
    "const_statement": "const",
    "enum_definition": "enum",
}


def _end_row(node: ts.Node) -> int:
    end = node.end_point
    if end.column == 0 and end.row > node.start_point.row:
        return end.row - 1
    return end.row


def _node_name(node: ts.Node) -> str | None:
    name = node.child_by_field_name("name")
    return name.text.decode("utf-8", "replace") if name is not None else None


def _decl_symbol(node: ts.Node) -> str:
    kind = node.type
    if kind == "extends_statement":
        return "extends"
    if kind == "class_name_statement":
        return "class_name"
    if kind in _NAMED_DECLS:
        name = _node_name(node)
        return f"{_NAMED_DECLS[kind]}.{name}" if name else _NAMED_DECLS[kind]
    if kind == "expression_statement" and node.text.strip() == b"tool":
        return "tool"
    if kind == "annotation":
        ident = node.named_children[0].text.decode() if node.named_children else "annotation"
        return "tool" if ident == "tool" else f"@{ident}"
    return kind


def _enum_close(children: list[ts.Node], at: int) -> int | None:
    """The index of the `}` that really closes the enum at `at`, when the parser closed it early: Godot 3
    let a line break separate two entries, tree-sitter reads the rest as statements up to an ERROR `}`."""
    node = children[at]
    if node.type != "enum_definition" or not node.has_error:
        return None
    for i in range(at + 1, min(at + 200, len(children))):
        text = children[i].text.strip()
        if children[i].type == "ERROR" and text.startswith(b"}"):
            return i
        if children[i].type not in ("expression_statement", "comment") and not (
                children[i].type == "ERROR" and text in (b",", b"")):
            return None
    return None


def _units(children: list[ts.Node], prefix: str) -> list[_Unit]:
    units: list[_Unit] = []
    skip_until = -1
    for i, node in enumerate(children):
        if i <= skip_until or not node.is_named and node.type == ";":
            continue
        start, end = node.start_point.row, _end_row(node)
        close = _enum_close(children, i)
        if close is not None:  # the enum with the entries the parser read past it: one declaration
            skip_until, end = close, _end_row(children[close])
        if node.type in ("function_definition", "constructor_definition"):
            name = _node_name(node) or "_init"
            unit = _Unit(start, end, "function", prefix + name, node)
        elif node.type == "class_definition":
            unit = _Unit(start, end, "class", prefix + (_node_name(node) or "class"), node)
        elif node.type == "ERROR":
            unit = _Unit(start, end, "error", "unparsed", node)
        elif node.type in ("comment", "annotation") and not (
            node.type == "annotation" and _decl_symbol(node) == "tool"
        ):
            unit = _Unit(start, end, "attachable", prefix + _decl_symbol(node), node)
        else:
            unit = _Unit(start, end, "decl", prefix + _decl_symbol(node), node)
        unit.nodes = [node]
        if units and start <= units[-1].end:  # statements sharing a line stay together
            last = units[-1]
            last.end = max(last.end, end)
            last.nodes.append(node)
            if unit.role in ("function", "class", "error") or last.role == "attachable":
                last.role, last.symbol, last.node = unit.role, unit.symbol, unit.node
            continue
        units.append(unit)
    return units


def _slice_gdscript(path: str, text: str, lines: list[str]) -> list[Fragment]:
    tree = parse_gdscript(text)
    return _slice_scope(path, list(tree.root_node.children), "", lines)


def _slice_scope(path: str, children: list[ts.Node], prefix: str, lines: list[str],
                 header: _Unit | None = None) -> list[Fragment]:
    frags: list[Fragment] = []
    pending: list[_Unit] = [header] if header else []

    def flush(group: list[_Unit]) -> None:
        if not group:
            return
        named = [u for u in group if u.role != "attachable"]
        kind, symbol = ("declaration", named[0].symbol) if named else ("comment", prefix + "comment")
        frags.append(Fragment(path, group[0].start + 1, group[-1].end + 1, kind, symbol))

    for unit in _units(children, prefix):
        if unit.role in ("function", "class"):
            chain: list[_Unit] = []
            while pending and pending[-1].role == "attachable" and pending[-1].end + 1 == (
                chain[0].start if chain else unit.start
            ):
                chain.insert(0, pending.pop())
            flush(pending)
            pending = []
            start = chain[0].start if chain else unit.start
            if unit.role == "function":
                frags.extend(_function_fragments(path, unit, start, lines))
            else:
                frags.extend(_class_fragments(path, unit, start, lines))
        elif unit.role == "error":
            flush(pending)
            pending = []
            frags.append(Fragment(path, unit.start + 1, unit.end + 1, "unparsed", prefix + "unparsed",
                                  reason=_error_reason(unit.node, "tree-sitter-gdscript could not parse")))
        else:
            if pending and pending[-1].end + 1 != unit.start:
                flush(pending)
                pending = []
            pending.append(unit)
    flush(pending)
    return frags


def _class_fragments(path: str, unit: _Unit, start: int, lines: list[str]) -> list[Fragment]:
    node = unit.node
    body = node.child_by_field_name("body") if node is not None else None
    members = list(body.named_children) if body is not None else []
    first_member_row = members[0].start_point.row if members else unit.end + 1
    header_end = max(start, min(first_member_row - 1, unit.end))
    if members and members[0].start_point.row == node.start_point.row:
        header_end = unit.end  # `class A: pass` on one line
        members = []
    header = _Unit(start, header_end, "decl", "class." + unit.symbol, node)
    qualified = unit.symbol + "."
    frags = _slice_scope(path, members, qualified, lines, header=header)
    for frag in frags:
        if frag.symbol == "class." + unit.symbol:
            frag.kind = "class"
    return frags


def _function_fragments(path: str, unit: _Unit, start: int, lines: list[str]) -> list[Fragment]:
    reason = None
    if unit.node is not None and unit.node.has_error:
        reason = _error_reason(unit.node, "parsed with a syntax error")
    end = unit.end
    if end - start + 1 <= MAX_FUNCTION_LINES:
        return [Fragment(path, start + 1, end + 1, "function", unit.symbol, reason=reason)]
    body = unit.node.child_by_field_name("body") if unit.node is not None else None
    statements = [c.start_point.row for c in body.named_children] if body is not None else []
    bounds = statements + [end + 1]
    cuts = [start]
    for i, row in enumerate(statements):
        if row > cuts[-1] and bounds[i + 1] - cuts[-1] > MAX_FUNCTION_LINES:
            cuts.append(row)
    parts = []
    for i, cut in enumerate(cuts):
        stop = cuts[i + 1] - 1 if i + 1 < len(cuts) else end
        while stop > cut and not lines[stop].strip():
            stop -= 1
        parts.append((cut, stop))
    if len(parts) == 1:
        return [Fragment(path, start + 1, end + 1, "function", unit.symbol, reason=reason)]
    return [
        Fragment(path, a + 1, b + 1, "function_part", f"{unit.symbol}@{i + 1}", reason=reason)
        for i, (a, b) in enumerate(parts)
    ]


def _error_reason(node: ts.Node | None, what: str) -> str:
    if node is None:
        return what
    error = _first_error(node)
    row = (error or node).start_point.row + 1
    return f"{what} (first error at line {row})"


def _first_error(node: ts.Node) -> ts.Node | None:
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type == "ERROR" or current.is_missing:
            return current
        stack.extend(c for c in reversed(current.children) if c.has_error or c.is_missing)
    return None


# --- project.godot, .cfg, .tscn, .tres, other text -----------------------------------------------

_SECTION = re.compile(r"^\[([^\]\s]+)\]\s*$")
_SCENE_HEADER = re.compile(
    r"^\[(gd_scene|gd_resource|ext_resource|sub_resource|node|connection|editable|resource)\b(.*)\]\s*$"
)
_ATTR = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|[^\s\]]+)')


def _trim(lines: list[str], start: int, stop: int) -> tuple[int, int] | None:
    """First and last non-blank rows within [start, stop), or None when all are blank."""
    rows = [r for r in range(start, stop) if lines[r].strip()]
    return (rows[0], rows[-1]) if rows else None


def _cut(path: str, lines: list[str], starts: list[tuple[int, str, str]]) -> list[Fragment]:
    """Fragments from (row, kind, symbol) block starts; each block runs to the next start."""
    frags = []
    for i, (row, kind, symbol) in enumerate(starts):
        stop = starts[i + 1][0] if i + 1 < len(starts) else len(lines)
        span = _trim(lines, row, stop)
        if span:
            frags.append(Fragment(path, span[0] + 1, span[1] + 1, kind, symbol))
    return frags


def _slice_sections(path: str, lines: list[str]) -> list[Fragment]:
    starts = [(0, "preamble", "preamble")]
    for row, line in enumerate(lines):
        match = _SECTION.match(line)
        if match:
            starts.append((row, "section", "section." + match.group(1)))
    return _cut(path, lines, starts)


def _slice_headers(path: str, lines: list[str]) -> list[Fragment]:
    starts = [(0, "preamble", "preamble")]
    for row, line in enumerate(lines):
        match = _SCENE_HEADER.match(line)
        if match:
            tag = match.group(1)
            starts.append((row, tag, _header_symbol(tag, dict(_ATTR.findall(match.group(2))))))
    return _cut(path, lines, starts)


def _header_symbol(tag: str, attrs: dict[str, str]) -> str:
    def attr(name: str) -> str:
        return attrs.get(name, "").strip('"')

    if tag in ("ext_resource", "sub_resource"):
        return f"{tag}.{attr('id')}"
    if tag == "node":
        parent, name = attr("parent"), attr("name")
        return "node." + (name if parent in ("", ".") else f"{parent}/{name}")
    if tag == "connection":
        return f"connection.{attr('signal')}.{attr('from')}.{attr('method')}"
    if tag == "editable":
        return f"editable.{attr('path')}"
    return tag


# --- shaders ---------------------------------------------------------------------------------------

_SHADER_NAME = re.compile(r"^\s*(?:(?:uniform|varying|const|global|instance)\s+)?(?:\w+\s+)*?(\w+)\s*(?:[:=;\[(]|$)")
_SHADER_KEYWORD = re.compile(r"^\s*(shader_type|render_mode|group_uniforms|#\w+)")


def _shader_items(text: str) -> list[tuple[int, int, bool]] | None:
    """(first offset, last offset, is a function) of each top-level item of a shader: a statement up to
    its `;`, a preprocessor line, or a function up to its closing brace; None when the braces do not
    balance (the file is then cut into blocks)."""
    items, i, n = [], 0, len(text)
    depth, start, paren_before_brace = 0, None, False
    while i < n:
        ch = text[i]
        if text.startswith("//", i):
            i = text.find("\n", i)
            i = n if i < 0 else i
            continue
        if text.startswith("/*", i):
            close = text.find("*/", i + 2)
            i = n if close < 0 else close + 2
            continue
        if ch == '"':
            close = text.find('"', i + 1)
            i = n if close < 0 else close + 1
            continue
        if start is None and not ch.isspace():
            start, paren_before_brace = i, False
            if ch == "#" and depth == 0:
                end = text.find("\n", i)
                end = n if end < 0 else end
                items.append((start, end - 1, False))
                start, i = None, end
                continue
        if ch == "(" and depth == 0:
            paren_before_brace = True
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth < 0:
                return None
            if depth == 0 and paren_before_brace and start is not None:
                items.append((start, i, True))
                start = None
        elif ch == ";" and depth == 0 and start is not None:
            items.append((start, i, False))
            start = None
        i += 1
    if depth != 0:
        return None
    return items


def _slice_shader(path: str, text: str, lines: list[str]) -> list[Fragment]:
    """Functions one fragment each (symbol: the function's name); adjacent top-level statements
    (`shader_type`, `render_mode`, uniforms, constants) one declaration fragment, as in GDScript;
    comments directly above belong to what follows."""
    items = _shader_items(text)
    if items is None:
        return _slice_blocks(path, lines)
    starts = [0]
    for i, ch in enumerate(text):
        if ch == "\n":
            starts.append(i + 1)

    def row(offset: int) -> int:
        lo, hi = 0, len(starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if starts[mid] <= offset:
                lo = mid
            else:
                hi = mid - 1
        return lo

    frags: list[Fragment] = []
    for a, b, is_function in items:
        first, last = row(a), row(b)
        while first > 0 and lines[first - 1].lstrip().startswith("//") and (not frags or frags[-1].end_line < first):
            first -= 1
        symbol = _shader_symbol(text[a:b + 1], is_function)
        if is_function:
            frags.append(Fragment(path, first + 1, last + 1, "function", symbol))
        elif frags and frags[-1].kind == "declaration" and all(line.strip() for line in lines[frags[-1].end_line:first]):
            frags[-1].end_line = last + 1  # adjacent statements, no blank line between: one declaration
        else:
            frags.append(Fragment(path, first + 1, last + 1, "declaration", symbol))
    return frags


def _shader_symbol(item: str, is_function: bool) -> str:
    """`fragment` for `void fragment() {...}`, `uniform.color`, `shader_type`, `define` for `#define`."""
    if is_function:
        words = item.split("(", 1)[0].split()
        return words[-1] if words else "function"
    keyword = _SHADER_KEYWORD.match(item)
    if keyword:
        return keyword.group(1).lstrip("#")
    first = item.split(None, 1)[0] if item.split() else ""
    named = _SHADER_NAME.match(item)
    name = named.group(1) if named else "declaration"
    return f"{first}.{name}" if first in ("uniform", "varying", "const", "struct", "global", "instance") else name


def _slice_blocks(path: str, lines: list[str]) -> list[Fragment]:
    """Blank-line separated blocks, merged while the result stays under MAX_BLOCK_LINES."""
    frags: list[Fragment] = []
    row = 0
    while row < len(lines):
        if not lines[row].strip():
            row += 1
            continue
        end = row
        while end + 1 < len(lines) and lines[end + 1].strip():
            end += 1
        if frags and end + 1 - frags[-1].start_line < MAX_BLOCK_LINES and frags[-1].end_line >= row - 1:
            frags[-1].end_line = end + 1
        else:
            frags.append(Fragment(path, row + 1, end + 1, "block", "block"))
        row = end + 1
    for i, frag in enumerate(frags):
        frag.symbol = f"block.{i + 1}"
    return frags


# --- the invariant -------------------------------------------------------------------------------


def _cover_leftovers(path: str, lines: list[str], frags: list[Fragment]) -> list[Fragment]:
    """Give every uncovered non-blank line to an `unparsed` fragment; trim overlaps defensively."""
    owner = [False] * len(lines)
    kept: list[Fragment] = []
    for frag in sorted(frags, key=lambda f: (f.start_line, f.end_line)):
        rows = [r for r in range(frag.start_line - 1, frag.end_line) if not owner[r]]
        if not rows:
            continue
        for r in rows:
            owner[r] = True
        if len(rows) != frag.end_line - frag.start_line + 1:
            frag.start_line, frag.end_line = rows[0] + 1, rows[-1] + 1
        kept.append(frag)
    row = 0
    while row < len(lines):
        if owner[row] or not lines[row].strip():
            row += 1
            continue
        end = row
        while end + 1 < len(lines) and not owner[end + 1]:
            end += 1
        span = _trim(lines, row, end + 1)
        kept.append(Fragment(path, span[0] + 1, span[1] + 1, "unparsed", "unparsed",
                             reason="not claimed by any parsed statement"))
        row = end + 1
    return sorted(kept, key=lambda f: f.start_line)


def _dedupe_symbols(frags: list[Fragment]) -> None:
    seen: dict[str, int] = {}
    for frag in frags:
        count = seen.get(frag.symbol, 0) + 1
        seen[frag.symbol] = count
        if count > 1:
            frag.symbol = f"{frag.symbol}~{count}"


def function_name(symbol: str) -> str:
    """The plain name a function fragment defines: `Inner.method@2` -> `method`."""
    return symbol.rsplit(".", 1)[-1].split("@", 1)[0].split("~", 1)[0]


def uncovered_lines(text: str, frags: list[Fragment]) -> tuple[list[int], list[int]]:
    """(non-blank lines in no fragment, lines in more than one fragment), 1-based: both must be empty."""
    lines = text.split("\n")
    counts = [0] * (len(lines) + 1)
    for frag in frags:
        for line in range(frag.start_line, frag.end_line + 1):
            if 1 <= line <= len(lines):
                counts[line] += 1
    missing = [i for i in range(1, len(lines) + 1) if lines[i - 1].strip() and counts[i] == 0]
    doubled = [i for i in range(1, len(lines) + 1) if counts[i] > 1]
    return missing, doubled
