"""Edits collected over a fragment's tree-sitter tree, rendered, checked by parsing again, and placed."""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

import tree_sitter as ts

from gd_assets.core.overrides import SIGNAL_SUFFIX
from gd_assets.core.receivers import (
    UNKNOWN,
    Scope,
    chain_receivers,
    chain_type,
    is_engine,
    is_project,
    value_type_in,
)
from gd_assets.core.rewrite.edits import Edit, Manual
from gd_assets.core.rewrite.rules import RewriteRules
from gd_assets.core.slicing import descendants, parse_gdscript, post_order

IDENT = re.compile(r"^[A-Za-z_]\w*$")
# Expressions that need no parentheses as an operand (`+ 1`, `* 2`, the left of `-`, after `not`)
ATOMIC = ("identifier", "integer", "float", "call", "attribute", "subscript", "parenthesized_expression",
          "get_node", "string", "true", "false", "null", "array", "dictionary")


@dataclass
class Pending:
    start: tuple[int, int]  # (row, byte column) in the parsed text
    end: tuple[int, int]
    new: str
    rule: str
    evidence: dict | None
    confidence: float


def text_of(node: ts.Node) -> str:
    return node.text.decode("utf-8", "replace")


def string_value(node: ts.Node | None) -> str | None:
    """The value of a plain one-line string literal (`"sig"`, `'sig'`), else None."""
    if node is None or node.type != "string":
        return None
    raw = text_of(node)
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "\"'" and "\\" not in raw and "\n" not in raw:
        return raw[1:-1]
    return None


def bare_reference(node: ts.Node) -> bool:
    """An identifier read on its own or at the head of a chain (`zoom`, `zoom.x`), not a member (`a.zoom`)."""
    parent = node.parent
    return parent is not None and (parent.type not in ("attribute", "attribute_call", "attribute_subscript") or
                                   parent.type == "attribute" and parent.children[0].id == node.id)


def args_of(node: ts.Node | None) -> list[ts.Node]:
    args = node.child_by_field_name("arguments") if node is not None else None
    if args is None and node is not None:
        args = next((c for c in node.children if c.type == "arguments"), None)
    return [] if args is None else [a for a in args.named_children if a.type not in ("comment", "line_continuation")]


class TreeEditor:
    """Collects edits over one parsed fragment; children are visited before their parents so an
    edit of a whole node can build on the edits made inside it. The rules are mixins (names,
    calls, syntax) that add `on_<node type>` and `call_<name>` handlers."""

    def __init__(self, text: str, parsed: str, offset_rows: int, scope: Scope | None, rules: RewriteRules):
        self.lines = parsed.split("\n")
        self.lines_b = [line.encode("utf-8") for line in self.lines]
        self.offset_rows = offset_rows
        self.scope = scope
        self.rules = rules
        self.pending: list[Pending] = []
        self.manual: list[Manual] = []
        self._chains: dict[int, dict[int, str]] = {}

    # -- text ---------------------------------------------------------------------------------------

    def slice(self, start: tuple[int, int], end: tuple[int, int]) -> str:
        if start[0] == end[0]:
            return self.lines_b[start[0]][start[1]:end[1]].decode("utf-8", "replace")
        parts = [self.lines_b[start[0]][start[1]:]] + self.lines_b[start[0] + 1:end[0]] + [
            self.lines_b[end[0]][:end[1]]]
        return b"\n".join(parts).decode("utf-8", "replace")

    @staticmethod
    def _receiver_parts(chain: ts.Node, member: ts.Node) -> list[ts.Node]:
        """The children of an attribute chain before `.member` (its dot left out)."""
        parts = list(itertools.takewhile(lambda c: c.id != member.id, chain.children))
        while parts and parts[-1].type in (".", "line_continuation"):
            parts.pop()
        return parts

    def dot_before(self, chain: ts.Node, member: ts.Node) -> tuple[int, int]:
        """Where the receiver of `.member` in an attribute chain ends (before its dot)."""
        parts = self._receiver_parts(chain, member)
        return parts[-1].end_point if parts else member.start_point

    def render_until(self, chain: ts.Node, member: ts.Node) -> str:
        """The text of an attribute chain up to (not including) `.member`."""
        parts = self._receiver_parts(chain, member)
        return self.render_span(receiver_start(chain), parts[-1].end_point) if parts else ""

    def wrap_vector2(self, chain: ts.Node, end: tuple[int, int], cite: dict, float_type: str = "Vector2") -> bool:
        """`Vector2(<receiver ... end>)`: a Godot 4 Vector2i (`Rect2(...)`: a Rect2i) read where Godot 3's code
        computed with floats (nothing when the chain is already inside that constructor)."""
        holder = chain.parent.parent if chain.parent is not None else None
        if holder is not None and holder.type == "call" and text_of(holder.children[0]) == float_type:
            return True
        start = receiver_start(chain)
        self.edit(start, start, f"{float_type}(", "vector2_result", cite, 0.85)
        self.edit(end, end, ")", "vector2_result", cite, 0.85)
        return True

    def render_span(self, start: tuple[int, int], end: tuple[int, int]) -> str:
        inner = sorted((p for p in self.pending if p.start >= start and p.end <= end), key=lambda p: p.start)
        out, cursor = [], start
        for p in inner:
            if p.start < cursor:
                continue
            out.append(self.slice(cursor, p.start))
            out.append(p.new)
            cursor = p.end
        out.append(self.slice(cursor, end))
        return "".join(out)

    def render(self, node: ts.Node) -> str:
        """The node's text with the edits already made inside it applied."""
        return self.render_span(node.start_point, node.end_point)

    def edit(self, start: ts.Node | tuple[int, int], end: ts.Node | tuple[int, int] | None, new: str, rule: str,
             evidence: dict | None, confidence: float = 0.9) -> None:
        """Replace from `start` to `end` (nodes or points); an edit of a whole range absorbs those inside it."""
        a = start.start_point if isinstance(start, ts.Node) else start
        b = (end if end is not None else start)
        b = b.end_point if isinstance(b, ts.Node) else b
        if any(p.start <= a and b <= p.end and (p.start, p.end) != (a, b) and p.start != p.end
               and not (a == b and a in (p.start, p.end)) for p in self.pending):
            return  # inside a range an earlier edit already rewrites (e.g. a statement it folded away)
        # a range absorbs the edits inside it; different insertions at one point all stay, in the order they came
        self.pending = [p for p in self.pending
                        if not (p.start >= a and p.end <= b) or (a == b == p.start == p.end and p.new != new)]
        self.pending.append(Pending(a, b, new, rule, evidence, confidence))

    def replace(self, node: ts.Node, new: str, rule: str, evidence: dict | None, confidence: float = 0.9) -> None:
        self.edit(node, node, new, rule, evidence, confidence)

    def keep_blocks(self, root: ts.Node) -> None:
        """A block whose every statement the rules removed keeps a `pass` (Godot 4 refuses an empty block): the
        last removal writes it, indented as the statement was (two rules may each drop one of two statements)."""
        if not any(not p.new.strip() for p in self.pending):
            return  # nothing removed
        for body in (n for n in descendants(root) if n.type == "body"):
            statements = [c for c in body.named_children if c.type != "comment"]
            holder = body.parent if body.parent is not None else body
            if not statements or any(not p.new.strip() and p.start <= holder.start_point and holder.end_point <= p.end
                                     for p in self.pending):
                continue  # the whole `if`/`while` goes: no block left to keep
            removals = []
            for statement in statements:
                found = next((p for p in self.pending if not p.new.strip() and p.start <= statement.start_point and
                              statement.end_point <= p.end), None)
                if found is None:
                    break
                removals.append(found)
            else:
                last, row = removals[-1], statements[-1].start_point[0]
                indent = self.lines[row][:len(self.lines[row]) - len(self.lines[row].lstrip())]
                if last.start[1] == 0 and last.start[0] == row:  # the whole line: a line of its own
                    last.new = f"{indent}pass" + ("\n" if last.end[1] == 0 else "")
                elif last.start[0] < row:  # from the end of the line before
                    last.new = f"\n{indent}pass"
                else:
                    last.new = "pass"

    def indent_of(self, node: ts.Node) -> str | None:
        """The indentation of the line a statement starts, or None when other code precedes it there."""
        before = self.lines[node.start_point[0]][:node.start_point[1]]
        return None if before.strip() else before

    def manual_item(self, node: ts.Node, kind: str, what: str, why: str, *cites: dict | None) -> None:
        first, last = node.start_point[0] - self.offset_rows, node.end_point[0] - self.offset_rows
        if any(m.start_line == first and m.what == what for m in self.manual):
            return
        self.manual.append(Manual(kind, first, last, what, why, [c for c in cites if c]))

    # -- receivers ----------------------------------------------------------------------------------

    def chain_owner(self, attribute: ts.Node, member: ts.Node) -> str:
        if self.scope is None:
            return UNKNOWN
        if attribute.id not in self._chains:
            self._chains[attribute.id] = chain_receivers(attribute, self.scope)
        return self._chains[attribute.id].get(member.id, UNKNOWN)

    def type_of(self, node: ts.Node) -> str:
        """The receiver type of a value node (UNKNOWN when nothing tells)."""
        if self.scope is None:
            return UNKNOWN
        if node.type == "identifier":
            return self.scope.identifier_type(text_of(node))
        if node.type == "get_node":
            return self.scope.node_owner_type(text_of(node))
        if node.type == "attribute":
            return chain_type(node, self.scope)
        if node.type == "call":
            found = value_type_in(node, self.scope)
            return self.scope.resolve(found) if found else UNKNOWN
        return UNKNOWN

    def engine_class(self, type_: str) -> str | None:
        """The engine class a value of `type_` is (a project script's: the engine class it extends)."""
        if is_engine(type_):
            return type_
        return self.scope.engine_class_of(type_) if self.scope is not None else None

    def signal_name(self, signal: str, holder: str) -> tuple[str, dict | None]:
        """A signal renamed on its engine class (`idle_frame` on SceneTree -> `process_frame`), or a project
        signal renamed because a function of its script has its name."""
        if self.scope is not None and (self.scope.signal_clash(holder, signal) or holder == UNKNOWN and
                                       not self.rules.surface.member_classes("3", "signal", signal) and
                                       self.scope.untyped_signal_clash(signal)):
            return signal + SIGNAL_SUFFIX, self.rules.cite_page("gdscript_basics#signals")
        cls = self.engine_class(holder)
        if cls is None and self.scope is not None and holder == UNKNOWN and \
                self.scope.owner(holder, signal) == UNKNOWN:  # an untyped value: no project signal has the name
            row = self.rules.member_rename("signal", signal, None)
            return (row.new, row.cite()) if row is not None else (signal, None)
        if cls is None or self.scope is None or self.scope.owner(holder, signal) != cls and \
                self.scope.owner(holder, signal) != UNKNOWN:
            return signal, None
        row = self.rules.member_rename("signal", signal, cls)
        return (row.new, row.cite()) if row is not None else (signal, None)

    def implicit_owner(self, name: str, called: bool = False) -> str:
        return self.scope.implicit_owner(name, called) if self.scope is not None else UNKNOWN

    def is_project_name(self, name: str) -> bool:
        """Whether a bare name is the project's (or the fragment's own local)."""
        if self.scope is None:
            return False
        if name in self.scope.locals:
            return True
        return is_project(self.scope.implicit_owner(name)) or is_project(self.scope.class_type(name) or "")

    def engine_receiver(self, owner: str) -> str | None | bool:
        """An engine class, None when unknown, False when the name is the project's or a module's."""
        if is_engine(owner):
            return owner
        return None if owner == UNKNOWN else False

    # -- the walk -----------------------------------------------------------------------------------

    SHAPES: dict[str, tuple[str, tuple]] = {}

    def call_rule(self, name: str):
        """The handler of calls named `name`, taking (call, chain, owner): a `call_<name>` method, or the
        handler `SHAPES` names (given the call name and the extra arguments), or None."""
        direct = getattr(self, "call_" + name, None)
        if direct is not None or name not in self.SHAPES:
            return direct
        method, extra = self.SHAPES[name]
        return lambda call, chain, owner: getattr(self, method)(call, chain, owner, name, *extra)

    def visit(self, root: ts.Node) -> None:
        for node in post_order(root):
            handler = getattr(self, "on_" + node.type, None)
            if handler is not None:
                handler(node)


def receiver_start(chain: ts.Node) -> tuple[int, int]:
    """Where a call chain's receiver really starts: tree-sitter-gdscript reads `a or b.c.f()` as
    `(a or b.c).f()` and `not b.c.f()` as `(not b.c).f()`, so the receiver is the operator's last operand."""
    if not chain.children:
        return chain.start_point
    first = chain.children[0]
    while first.type in ("binary_operator", "unary_operator") and first.children:
        first = first.children[-1]
    return first.start_point


def parse_errors(text: str) -> int:
    def count(node: ts.Node) -> int:
        return (node.type == "ERROR" or node.is_missing) + sum(count(c) for c in node.children)
    return count(parse_gdscript(text).root_node)


def safe_edits(text: str, pending: list[Pending], rewriter: TreeEditor) -> tuple[list[Pending], list[Manual]]:
    """The edits that leave the fragment parsing as well as before; the others become manual items."""
    if not pending:
        return [], []
    before = parse_errors(text)
    if parse_errors(apply_pending(text, pending)) <= before:
        return pending, []
    kept, manual = [], []
    for p in pending:
        if parse_errors(apply_pending(text, [*kept, p])) <= before:
            kept.append(p)
        else:
            line = p.start[0] - rewriter.offset_rows
            manual.append(Manual("not_parsed", line, p.end[0] - rewriter.offset_rows, f"{p.rule}: not applied",
                                 f"`{p.new.strip()[:80]}` would not parse here", [p.evidence] if p.evidence else []))
    return kept, manual


def apply_pending(text: str, pending: list[Pending]) -> str:
    lines = [line.encode("utf-8") for line in text.split("\n")]
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)
    data = b"\n".join(lines)
    # from the end back; insertions at one point land in the order they came (the last applied first)
    for _, p in sorted(enumerate(pending), key=lambda ip: (ip[1].start, ip[1].end, ip[0]), reverse=True):
        a = offsets[p.start[0]] + p.start[1]
        b = offsets[p.end[0]] + p.end[1]
        data = data[:a] + p.new.encode("utf-8") + data[b:]
    return data.decode("utf-8", "replace")


def placed(p: Pending, lines: list[str], offset: int, start_line: int, rewriter: TreeEditor) -> Edit:
    def col(point: tuple[int, int]) -> int:
        return len(lines[point[0]].encode("utf-8")[:point[1]].decode("utf-8", "replace")) + 1
    return Edit(start_line + p.start[0] - offset, col(p.start), start_line + p.end[0] - offset, col(p.end),
                rewriter.slice(p.start, p.end), p.new, p.rule, p.evidence, p.confidence)
