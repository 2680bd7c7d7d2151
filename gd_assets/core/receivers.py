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
`preload(...)`; engine return types from the class reference.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from typing import Protocol

from gd_assets.core.project_context import ProjectContext, Script, node_path, res_file

UNKNOWN = "?"
PROJECT = "project:"
ANY_PROJECT = "project:*"
OTHER = "other:"  # a class neither reference documents nor the project defines: a module's or an extension's


class EngineTypes(Protocol):
    """What receiver resolution needs from the class reference (see corpus/surface.py)."""

    def parent_class(self, name: str) -> str | None: ...

    def member_type(self, cls: str, name: str) -> str | None: ...

    def is_class(self, name: str) -> bool: ...


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

    @classmethod
    def of(cls, context: ProjectContext, path: str, symbol: str = "", engine: EngineTypes | None = None) -> Scope:
        """The scope of a fragment of `path` whose symbol is `symbol` (`Inner.method` is in `Inner`)."""
        first = symbol.split(".", 1)[0] if "." in symbol else symbol
        inner = f"{path}::{first}"
        return cls(context, inner if first and inner in context.scripts else path, engine)

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

    def owner(self, type_: str, member: str) -> str:
        """The receiver owning `member` on a value of `type_`."""
        if type_ == UNKNOWN:
            return ANY_PROJECT if self.context.defines(self.root, member) else UNKNOWN
        if type_.startswith(OTHER):
            return type_
        for script, engine_class in self._chain(type_):
            if script is not None and member in script.members:
                return PROJECT + script.scope
            if engine_class is not None:
                return engine_class
        return ANY_PROJECT if self.context.defines(self.root, member) else UNKNOWN

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
        if name in self.assigned:
            return self.resolve(self.assigned[name])
        owner = self.owner(self.self_type(), name) if self.script is not None else UNKNOWN
        if owner.startswith(PROJECT) and owner != ANY_PROJECT:
            return self.member_type(self.self_type(), name)
        found = self.class_type(name)
        return found or UNKNOWN

    def implicit_owner(self, member: str) -> str:
        """The receiver of a bare call or name (`rect_position`, `get_tree()`): the script's chain."""
        if member in self.locals:
            return UNKNOWN
        return self.owner(self.self_type(), member)

    def node_owner_type(self, text: str) -> str:
        return self.node_type(node_path(text))
