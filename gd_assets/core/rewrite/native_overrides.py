"""Project methods Godot 4's engine classes took (`func grab_focus()` on a Control), and overrides of Godot 3
virtuals Godot 4 calls by another name (`func get_drag_data(position)` -> `func _get_drag_data(position)`), renamed
project-wide: the declaration in the script and its subclasses, and every call the project context says reaches it.
A call whose receiver is unknown is left to people: it may reach the engine's method or the project's."""

from __future__ import annotations

import tree_sitter as ts

from gd_assets.core.overrides import (
    SIGNAL_SUFFIX,
    Override,
    gone_virtual,
    overridden_anywhere,
    override_of,
    shadow_of,
    unfit_virtual,
)
from gd_assets.core.receivers import ANY_PROJECT, UNKNOWN, member_level
from gd_assets.core.rewrite.tree import text_of

# Godot 3 virtuals Godot 4 dropped for one of another shape, by (Godot 3 class, name): the Godot 4 virtual, its
# return type and its body calling the kept method (`{name}`), added after it, so what the method returned still counts.
WRAPPED_VIRTUALS = {("Node", "_get_configuration_warning"): (
    "_get_configuration_warnings", "PackedStringArray",
    "var warning = {name}()\n{indent}return PackedStringArray([warning] if warning else [])")}


def cite_native(found: Override) -> dict:
    """The Godot 4 class reference row of the native method the project's one collides with (or of the virtual
    Godot 4 calls instead of Godot 3's)."""
    name = found.new if found.virtual_of else found.name
    return {"table": "docs_chunks", "id": f"docs:4:{found.native}.method.{name}",
            "title": f"{found.native}.{name} (Godot 4 {'virtual ' if found.virtual_of else ''}method)"}


def cite_class(found: Override) -> dict:
    """The Godot 4 class reference row of the class (or the class's member) a project member is named after."""
    if found.member:
        return {"table": "docs_chunks", "id": f"docs:4:{found.native}.{found.member}.{found.name}",
                "title": f"{found.native}.{found.name} (Godot 4 {found.member})"}
    return {"table": "docs_chunks", "id": f"docs:4:{found.native}.class", "title": f"{found.native} (Godot 4 class)"}


class OverrideRules:
    """Renames of project names Godot 4 took: methods that override a native Godot 4 method, members
    named after a Godot 4 class (see gd_assets.core.overrides)."""

    def on_name(self, node: ts.Node) -> None:
        """`const Logger = preload(...)` -> `const Logger_ = ...` where Godot 4 has a class `Logger`."""
        parent = node.parent
        if parent is None or not member_level(parent):
            return
        found = shadow_of(self.scope, text_of(node))
        if found is not None:
            self.replace(node, found.new, "native_class_shadow", cite_class(found), 0.85)

    def on_signal_statement(self, node: ts.Node) -> None:
        """`signal error_message(m)` beside `func error_message(...)`: Godot 4 refuses the pair; the signal
        is renamed (its emits and connections follow, `signal_name`)."""
        name = node.child_by_field_name("name")
        if name is not None and self.scope is not None and self.scope.signal_clash(self.scope.self_type(), text_of(name)):
            self.replace(name, text_of(name) + SIGNAL_SUFFIX, "signal_clash",
                         self.rules.cite_page("gdscript_basics#signals"), 0.85)

    def shadowing_name(self, node: ts.Node, owner: str | None = None) -> bool:
        """Rename a read of a project member named after a Godot 4 class (bare, or `x.Name` on the
        receiver `owner`); True when it is one."""
        found = shadow_of(self.scope, text_of(node), owner)
        if found is not None:
            self.replace(node, found.new, "native_class_shadow", cite_class(found), 0.85)
        return found is not None

    def on_function_definition(self, node: ts.Node) -> None:
        name = node.child_by_field_name("name")
        found = override_of(self.scope, self.scope.self_type(), text_of(name)) \
            if name is not None and self.scope is not None else None
        if found is not None and found.virtual_of:
            self.virtual_override(node, name, found)
        elif found is not None:
            self.replace(name, found.new, "native_override", cite_native(found), 0.85)
        elif name is not None and (unfit := unfit_virtual(self.scope, text_of(name))) is not None:
            cite = cite_native(Override(text_of(name), unfit.new, unfit.owner4, virtual_of=unfit.owner3))
            self.manual_item(name, "virtual_renamed", f"`{text_of(name)}()` overrides Godot 3's virtual "
                             f"`{unfit.owner3}.{text_of(name)}`, which Godot 4 never calls",
                             f"Godot 4 calls `{unfit.new}()` with other parameters: rename it and take the parameters "
                             "the reference gives", cite)
        elif name is not None and (gone := gone_virtual(self.scope, text_of(name))) is not None:
            if not self.wrap_virtual(node, gone, text_of(name)):
                self.gone_member(name, "method", text_of(name), gone)   # the curated answer, as for a call of it
        super().on_function_definition(node)

    def virtual_override(self, node: ts.Node, name: ts.Node, found: Override) -> None:
        """`func get_drag_data(position) -> Variant:` -> `func _get_drag_data(position) -> Variant:`, with the
        parameters Godot 4 passes after Godot 3's (unused: `_wide`) and without a return type Godot 4's differs from."""
        cite = cite_native(found)
        self.replace(name, found.new, "virtual_renamed", cite, 0.9)
        params = node.child_by_field_name("parameters")
        if found.added and params is not None and params.children and params.children[-1].type == ")":
            extra = ", ".join("_" + p for p in found.added)
            self.edit(params.children[-1].start_point, params.children[-1].start_point,
                      (", " if params.named_children else "") + extra, "virtual_renamed", cite, 0.9)
        returned = node.child_by_field_name("return_type")
        want = self.scope.engine.virtuals.get(("4", found.native, found.new), ((), ""))[1] if self.scope else ""
        written = text_of(returned) if returned is not None else ""
        if want not in ("", "Variant") and written and (self.scope.engine.class4(written) or written) != want:
            arrow = returned.prev_sibling
            start = arrow.start_point if arrow is not None and arrow.type == "->" else returned.start_point
            self.edit((start[0], start[1] - 1) if start[1] > 0 and self.lines[start[0]][start[1] - 1] == " " else start,
                      returned.end_point, "", "virtual_renamed", cite, 0.85)

    def wrap_virtual(self, node: ts.Node, owner3: str, name: str) -> bool:
        """`func _get_configuration_warning():` kept, and after it `func _get_configuration_warnings() ->
        PackedStringArray:` returning its text as Godot 4's list (none for ""): the editor shows the same warnings.
        False where the script already has the Godot 4 virtual."""
        found = WRAPPED_VIRTUALS.get((owner3, name))
        body = node.child_by_field_name("body")
        indent = self.indent_of(node)
        script = self.scope.script if self.scope is not None else None
        if found is None or body is None or not body.named_children or indent is None or script is None or \
                found[0] in script.members:
            return False
        inner = self.indent_of(body.named_children[0])
        inner = inner[len(indent):] if inner and inner.startswith(indent) and inner != indent else "\t"
        new, returned, text = found
        lines = text.format(name=name, indent=indent + inner)
        cite = cite_native(Override(name, new, owner3, virtual_of=owner3))
        self.edit(node.end_point, node.end_point, f"\n\n\n{indent}func {new}() -> {returned}:\n{indent}{inner}{lines}",
                  "virtual_wrapped", cite, 0.85)
        return True

    def override_call(self, name_node: ts.Node, owner: str, name: str) -> bool:
        """Rename a call of `name` reaching a renamed project method through `owner`; an unknown
        receiver calling a renamed name is a manual item. True when the call is settled here."""
        found = override_of(self.scope, owner, name)
        if found is not None:
            self.replace(name_node, found.new, "native_override", cite_native(found), 0.85)
            return True
        if owner in (UNKNOWN, ANY_PROJECT):
            found = overridden_anywhere(self.scope, name)
            if found is not None:
                self.manual_item(name_node, "native_override", f"`{name}()` on a receiver the project context does "
                                 "not type", f"the project's `{name}` is renamed `{found.new}` (Godot 4's "
                                 f"`{found.native}.{name}` is native): call `{found.new}` if this receiver is that "
                                 "script", cite_native(found))
        return False

    def overridden_name(self, type_: str, name: str) -> str:
        """`name` as the project calls it on a value of `type_` once renamed (for `"method"` strings)."""
        if self.scope is None:
            return name
        found = override_of(self.scope, self.scope.owner(type_, name), name)
        return found.new if found is not None else name
