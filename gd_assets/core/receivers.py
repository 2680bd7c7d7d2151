"""Who a name in a fragment belongs to: the receiver of each call and attribute, best effort.

A receiver is written as the class that owns the member: an engine class (`Tween`), a project
class (`project:Logger`, `project:player/player.gd`), `project:*` when the receiver is unknown
but the project itself defines a member of that name, `other:VoxelTool` for a class neither
class reference documents (an engine module's or an extension's), or `?` when nothing tells. Nothing is
guessed silently: what cannot be resolved stays `?`.

Resolution order: implicit `self` -> the script's own chain (its members, then its project
ancestors', then the engine class at the end of the chain); an identifier -> a local or member
variable's type, a project class, an autoload, or an engine class; `$Path` / `get_node("Path")` ->
the node type the project's scenes give from the node the script is attached to; `T.new()`,
`preload(...)`; engine return types from the class reference. `Scope` answers for names;
`fragment_locals` and `chain_receivers` read a fragment's tree (its locals, its attribute chains).
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from typing import Protocol

import tree_sitter as ts

from gd_assets.core.project_context import (
    ProjectContext,
    Script,
    declared_type,
    node_path,
    parameter_names,
    res_file,
    value_type,
)
from gd_assets.core.slicing import descendants, function_name

UNKNOWN = "?"
PROJECT = "project:"
ANY_PROJECT = "project:*"
OTHER = "other:"  # a class neither reference documents nor the project defines: a module's or an extension's


class EngineTypes(Protocol):
    """What receiver resolution needs from the class reference (see corpus/surface.py)."""

    def parent_class(self, name: str) -> str | None: ...

    def member_type(self, cls: str, name: str) -> str | None: ...

    def is_class(self, name: str) -> bool: ...

    def only_subclass(self, cls: str, name: str) -> str | None: ...


def is_project(receiver: str | None) -> bool:
    return bool(receiver) and receiver.startswith(PROJECT)


def is_engine(receiver: str | None) -> bool:
    return bool(receiver) and receiver != UNKNOWN and not receiver.startswith((PROJECT, OTHER))


@dataclass
class Scope:
    """A fragment's place in its project: its script (or inner class) and the project context."""

    context: ProjectContext
    scope: str                                  # script path, or `path::Inner`
    engine: EngineTypes | None = None
    locals: dict[str, str | None] = field(default_factory=dict)  # fragment-local name -> type expression
    assigned: dict[str, str] = field(default_factory=dict)  # other names the fragment assigns -> obvious type
    symbol: str = ""                            # the fragment's symbol (`_process`, `node.Player/Sprite`)

    @classmethod
    def of(cls, context: ProjectContext, path: str, symbol: str = "", engine: EngineTypes | None = None) -> Scope:
        """The scope of a fragment of `path` whose symbol is `symbol` (`Inner.method` is in `Inner`, and so is
        `class.Inner`, the class's header with the members declared first)."""
        named = symbol[len("class."):] if symbol.startswith("class.") else symbol
        first = named.split(".", 1)[0] if "." in named else named
        inner = f"{path}::{first}"
        return cls(context, inner if first and inner in context.scripts else path, engine, symbol=symbol)

    @property
    def path(self) -> str:
        return self.scope.split("::", 1)[0]

    @property
    def root(self) -> str:
        return self.context.root_of(self.path)

    @property
    def script(self) -> Script | None:
        return self.context.scripts.get(self.scope) or self.context.scripts.get(self.path)

    def engine_version(self) -> str | None:
        return self.context.engine_version(self.path)

    # -- types ------------------------------------------------------------------------------------

    def self_type(self) -> str:
        return PROJECT + self.scope if self.script is not None else UNKNOWN

    def resolve(self, expr: str | None, seen: frozenset = frozenset()) -> str:
        """A type expression (as recorded in the context) as a receiver type."""
        if not expr:
            return UNKNOWN
        expr = expr.strip()
        if expr.startswith("="):  # already a receiver type (a fragment's local, typed from its value)
            return expr[1:]
        if expr == "node:..":  # `get_parent()`: the parent the scenes give, else what the reference says
            found = self.node_type("..")
            return found if found != UNKNOWN else "Node"
        if expr.startswith("node:"):
            return self.node_type(expr[5:])
        if expr.startswith("subnode:"):
            path = self.node_path_of(expr)
            return self.node_type(path) if path else UNKNOWN
        if expr.startswith("script:"):
            target = res_file(self.root, posixpath.dirname(self.path), expr[7:])
            return PROJECT + target if target in self.context.scripts else UNKNOWN
        if expr.startswith("scene:"):  # `preload("x.tscn").instance()`: the scene's root node
            target = res_file(self.root, posixpath.dirname(self.path), expr[6:])
            type_, script = self.context.scene_roots.get(target, (None, None))
            if script and script in self.context.scripts:
                return PROJECT + script
            return type_ or UNKNOWN
        if expr.startswith('"'):
            target = res_file(self.root, posixpath.dirname(self.path), expr.split('"')[1])
            return PROJECT + target if target in self.context.scripts else UNKNOWN
        name = expr.split(".")[0].split("[")[0].strip()
        return self.class_type(name) or UNKNOWN

    def class_type(self, name: str) -> str | None:
        """A class name as a receiver type: the project's (class_name, inner class, autoload) first."""
        scope = self.context.class_scope(self.root, name)
        if scope is not None:
            return PROJECT + scope
        script = self.script
        if script is not None:
            inner = f"{self.path}::{name}"
            if inner in self.context.scripts:
                return PROJECT + inner
        target = self.context.autoload(self.root, name)
        if target is not None:
            return PROJECT + target
        if self.engine is not None and self.engine.is_class(name):
            return name
        if self.engine is None and name[:1].isupper():
            return name
        if name[:1].isupper() and any(c.islower() for c in name):
            return OTHER + name
        return None

    def node_path_of(self, expr: str | None, depth: int = 0) -> str | None:
        """The node path a type expression stands for: `node:A/B`, or `subnode:var/C` below what
        the member variable `var` holds."""
        if not expr or depth > 8:
            return None
        if expr.startswith("node:"):
            return expr[5:]
        if expr.startswith("subnode:"):
            var, _, sub = expr[len("subnode:"):].partition("/")
            held = self.locals.get(var) if var in self.locals else self._member_expr(var)
            base = self.node_path_of(held, depth + 1)
            return f"{base}/{sub}" if base is not None else None
        return None

    def _member_expr(self, name: str) -> str | None:
        for script, _ in self._chain(self.self_type()):
            if script is not None and name in script.members:
                return script.members[name][1]
        return None

    def node_type(self, path: str) -> str:
        script = self.context.scripts.get(self.path)
        if script is None:
            return UNKNOWN
        found = script.nodes.get(path.strip("/"))
        if found is None:
            return UNKNOWN
        type_, attached = found
        if attached and attached in self.context.scripts:
            return PROJECT + attached
        return type_ or UNKNOWN

    def _chain(self, type_: str, seen: set[str] | None = None):
        """(project script or None, engine class or None) along a type's extends chain."""
        seen = seen if seen is not None else set()
        while type_.startswith(PROJECT) and type_ not in seen:
            seen.add(type_)
            script = self.context.scripts.get(type_[len(PROJECT):])
            if script is None:
                return
            yield script, None
            if not script.extends:
                # A script without `extends` extends RefCounted/Reference; an inner class too.
                return
            owner = Scope(self.context, script.scope, self.engine)
            type_ = owner.resolve(script.extends)
        if type_ != UNKNOWN and not type_.startswith(PROJECT):
            yield None, type_  # an engine class, or one of a module (OTHER)

    def script_chain(self) -> list[Script]:
        """The fragment's script and its project ancestors, nearest first."""
        return [found for found, _ in self._chain(self.self_type()) if found is not None]

    def script_members(self, script: str) -> frozenset[str]:
        """The members that script `script` (a path of the project) and its project ancestors declare."""
        return frozenset(name for found, _ in self._chain(PROJECT + script) if found is not None
                         for name in found.members)

    def engine_class_of(self, type_: str) -> str | None:
        """The engine class at the end of a type's extends chain (itself for an engine class)."""
        if is_engine(type_):
            return type_
        return next((cls for _, cls in self._chain(type_) if cls is not None and is_engine(cls)), None)

    def owner(self, type_: str, member: str, called: bool = False) -> str:
        """The receiver owning `member` on a value of `type_`; `called` (`member()`): only a function of a
        script owns it, not a variable named like an engine method (`export var update` beside CanvasItem's
        `update()`: Godot 3 called the method, Godot 4 refuses the call)."""
        if type_ == UNKNOWN:
            return ANY_PROJECT if self.context.defines(self.root, member) else UNKNOWN
        if type_.startswith(OTHER):
            return type_
        for script, engine_class in self._chain(type_):
            if script is not None and member in script.members and (not called or script.members[member][0] == "func"):
                return PROJECT + script.scope
            if engine_class is not None:
                return engine_class
        return ANY_PROJECT if self.context.defines(self.root, member) else UNKNOWN

    def narrowed(self, owner: str, member: str) -> str:
        """`owner`, or the one engine subclass of it that had `member` (`$Button.pressed` on a value typed Control
        is a BaseButton's), unless a project script declares a member of that name (the value may be its)."""
        if self.engine is None or not is_engine(owner) or self.context.defines(self.root, member):
            return owner
        return self.engine.only_subclass(owner, member) or owner

    def script_of(self, owner: str) -> Script | None:
        """The project script a receiver names (`project:<scope>`); None for an engine class or any script."""
        return self.context.scripts.get(owner[len(PROJECT):]) if owner.startswith(PROJECT) else None

    def member_type(self, type_: str, member: str) -> str:
        """The type of `value.member` (or of calling it)."""
        owner = self.owner(type_, member)
        if owner.startswith(PROJECT) and owner != ANY_PROJECT:
            script = self.context.scripts.get(owner[len(PROJECT):])
            kind_type = script.members.get(member) if script is not None else None
            if kind_type is None:
                return UNKNOWN
            kind, expr = kind_type
            if kind == "class":
                return PROJECT + f"{script.scope.split('::', 1)[0]}::{member}"
            holder = Scope(self.context, script.scope, self.engine)
            return holder.resolve(expr)
        if is_engine(owner) and self.engine is not None:
            found = self.engine.member_type(owner, member)
            return self.resolve(found) if found else UNKNOWN
        return UNKNOWN

    def identifier_type(self, name: str) -> str:
        """The type of a bare identifier used as a value or receiver."""
        if name == "self":
            return self.self_type()
        if name in self.locals:
            return self.resolve(self.locals[name])
        owner = self.owner(self.self_type(), name) if self.script is not None else UNKNOWN
        declared = self.member_type(self.self_type(), name) if owner.startswith(PROJECT) and owner != ANY_PROJECT \
            else UNKNOWN
        if name in self.assigned and declared == UNKNOWN:  # a member's declared type wins (`warnings = []`)
            return self.resolve(self.assigned[name])
        if owner.startswith(PROJECT) and owner != ANY_PROJECT:
            return declared
        found = self.class_type(name)
        return found or UNKNOWN

    def signal_clash(self, holder: str, name: str) -> bool:
        """Whether signal `name` of a value of `holder` shares its name with a function of the same script."""
        owner = self.owner(holder, name)
        script = self.script_of(owner)
        return script is not None and name in script.signal_clashes

    def untyped_signal_clash(self, name: str) -> bool:
        """Whether every script of the project declaring signal `name` also has a function of that name (so
        each renames it): a `connect("name", ...)` on a value of unknown type can only mean that signal."""
        scripts = [s for s in self.context.scripts.values() if s.root == self.root and
                   (name in s.signal_clashes or s.members.get(name, ("",))[0] == "signal")]
        return bool(scripts) and all(name in s.signal_clashes for s in scripts)

    def is_coroutine(self, owner: str, name: str) -> bool:
        """Whether `name` reached through `owner` (`project:<scope>`) is a project function that yields."""
        script = self.script_of(owner)
        return script is not None and name in script.coroutines

    def implicit_owner(self, member: str, called: bool = False) -> str:
        """The receiver of a bare call or name (`rect_position`, `get_tree()`): the script's chain."""
        if member in self.locals:
            return UNKNOWN
        return self.owner(self.self_type(), member, called)

    def node_owner_type(self, text: str) -> str:
        return self.node_type(node_path(text))


# --- on a fragment's tree ------------------------------------------------------------------------


def _text(node: ts.Node) -> str:
    return node.text.decode("utf-8", "replace")


def member_level(statement: ts.Node) -> bool:
    """A statement declaring a member of its class: at the top of the file or of a class body, or at the top
    of an indented fragment (an inner class's members), which is parsed inside `func __fragment__():`."""
    parent = statement.parent
    holder = parent.parent if parent is not None else None
    if parent is None or parent.type in ("source", "class_body"):
        return parent is not None
    return parent.type == "body" and holder is not None and holder.type == "function_definition" and \
        holder.parent is not None and holder.parent.type == "source" and \
        _text(holder.child_by_field_name("name")) == "__fragment__"


def fragment_locals(root: ts.Node, scope: Scope) -> tuple[dict[str, str | None], dict[str, str]]:
    """Names a fragment declares (variables, parameters, loop variables) with their types (declared,
    or read from the value: `var col = move_and_collide(...)` is a KinematicCollision), and the
    obvious types of other names it assigns (`_thread = Thread.new()`)."""
    script = scope.script if "@" in scope.symbol else None  # a part of a long function: its whole function's
    found: dict[str, str | None] = dict(script.part_locals.get(function_name(scope.symbol), {})) if script else {}
    assigned: dict[str, str] = {}
    for node in descendants(root):
        if node.type == "variable_statement" and node.parent is not None and node.parent.type == "body":
            name = node.child_by_field_name("name")
            if name is None or "@" not in scope.symbol and member_level(node):
                continue  # (an inner class's member, in its indented fragment: not a local)
            type_node = next((c for c in node.named_children if c.type == "type"), None)
            value = node.child_by_field_name("value") or next(
                (c for c in reversed(node.named_children) if c.type not in ("name", "type", "inferred_type")), None)
            found[_text(name)] = declared_type(node, type_node, value) or value_type_in(
                value, Scope(scope.context, scope.scope, scope.engine, dict(found)))
        elif parameter_names(node, found):
            continue
        elif node.type == "assignment" and node.named_children and node.named_children[0].type == "identifier":
            obvious = value_type(node.named_children[-1])  # `_thread = Thread.new()`: typed, not declared
            if obvious is not None and obvious != "String":
                assigned.setdefault(_text(node.named_children[0]), obvious)
        elif node.type == "for_statement":
            ident = next((c for c in node.named_children if c.type == "identifier"), None)
            if ident is not None:
                found.setdefault(_text(ident), None)
    return found, {k: v for k, v in assigned.items() if k not in found}


def value_type_in(value: ts.Node | None, scope: Scope) -> str | None:
    """A value's type expression: the obvious one, else what a call of the script's chain or an
    attribute chain returns (as `=Type`); None when nothing tells."""
    obvious = value_type(value)
    if obvious is not None or value is None:
        return obvious
    found = UNKNOWN
    if value.type == "call" and not _text(value.children[0])[:1].isupper():  # `_make()` too, not `Type()`
        found = scope.member_type(scope.self_type(), _text(value.children[0]))
    elif value.type == "attribute":
        found = chain_type(value, scope)
    return None if found == UNKNOWN else "=" + found


def chain_type(node: ts.Node, scope: Scope) -> str:
    """The type an attribute chain ends with."""
    before: dict[int, str] = {}
    owners = chain_receivers(node, scope, before)
    last = next((c for c in reversed(node.children) if c.id in owners), None)
    if last is None:
        return UNKNOWN
    name = _text(last.children[0]) if last.type in ("attribute_call", "attribute_subscript") else _text(last)
    if last.type == "attribute_subscript":
        return UNKNOWN
    return before[last.id] if name == "new" else scope.member_type(before[last.id], name)


def chain_receivers(node: ts.Node, scope: Scope, before: dict[int, str] | None = None) -> dict[int, str]:
    """Node id of each member of an attribute chain -> the receiver owning it, left to right
    (`before`, when given, gets the type each member is read on)."""
    out: dict[int, str] = {}
    type_ = None
    for child in node.children:
        if child.type in (".", "line_continuation", "comment"):
            continue
        if type_ is None:  # the base
            while child.type in ("binary_operator", "unary_operator") and child.children:
                child = child.children[-1]  # tree-sitter reads `not a.b.f()` as `(not a.b).f()`
            if child.type == "attribute":
                type_ = chain_type(child, scope)
            elif child.type == "identifier":
                type_ = scope.identifier_type(_text(child))
            elif child.type == "get_node":
                type_ = scope.node_owner_type(_text(child))
            elif child.type == "call":
                name = _text(child.children[0])
                obvious = value_type(child)
                if obvious is not None:
                    type_ = scope.resolve(obvious)
                elif not name[:1].isupper():  # `_helper().x` too
                    type_ = scope.member_type(scope.self_type(), name)
                else:
                    type_ = UNKNOWN
            else:
                type_ = UNKNOWN
            continue
        name = _text(child.children[0]) if child.type in ("attribute_call", "attribute_subscript") else _text(child)
        out[child.id] = type_ if name == "new" and type_ != UNKNOWN else scope.narrowed(scope.owner(type_, name), name)
        if before is not None:
            before[child.id] = type_
        if name == "new" or child.type == "attribute_subscript":
            type_ = type_ if name == "new" else UNKNOWN
        else:
            type_ = scope.member_type(type_, name)
    return out
