"""GDScript 1 -> 2 syntax: annotations, setget, parent calls, RPC keywords, constructors."""

from __future__ import annotations

import re

import tree_sitter as ts

from gd_assets.core.cues import (
    VARIANT_RESULTS,
    bare_typed_return,
    contradicted_coroutine_type,
    enum_missing_commas,
    is_of_value,
    mixed_dictionary,
    mixed_indents,
    narrowed_event,
    path_and_string,
    returned_nothing,
    stored_past_setter,
    var_parameters,
    variant_result_calls,
)
from gd_assets.core.overrides import shadow_of
from gd_assets.core.project_context import stored_name, unfolded_constant
from gd_assets.core.receivers import UNKNOWN, is_engine, member_level
from gd_assets.core.rewrite.rules import PAUSE_TO_PROCESS
from gd_assets.core.rewrite.tree import IDENT, args_of, string_value, text_of
from gd_assets.core.slicing import descendants

RPC = {"remote": '@rpc("any_peer")', "remotesync": '@rpc("any_peer", "call_local")',
       "sync": '@rpc("any_peer", "call_local")', "puppet": "@rpc", "slave": "@rpc",
       "puppetsync": '@rpc("call_local")', "master": "@rpc", "mastersync": '@rpc("call_local")'}
EXPORT_HINTS = {"FILE": "@export_file", "DIR": "@export_dir", "MULTILINE": "@export_multiline",
                "GLOBAL_FILE": "@export_global_file", "GLOBAL_DIR": "@export_global_dir",
                "EASE": "@export_exp_easing", "FLAGS": "@export_flags",
                "LAYERS_2D_PHYSICS": "@export_flags_2d_physics", "LAYERS_2D_RENDER": "@export_flags_2d_render",
                "LAYERS_3D_PHYSICS": "@export_flags_3d_physics", "LAYERS_3D_RENDER": "@export_flags_3d_render"}


# `!(r is GDScriptFunctionState)`, `not r is GDScriptFunctionState`: always true once coroutines are awaited
_NOT_FUNCTION_STATE = re.compile(r"^(?:!|not\b)\s*(\()?\s*[\w.]+\s+is\s+GDScriptFunctionState\s*(?(1)\))$")
TEXTURE_CLASSES3 = ("Texture", "ImageTexture", "StreamTexture", "ViewportTexture", "AtlasTexture", "ProxyTexture")
_SLASH_ESCAPE = re.compile(r"(?<!\\)((?:\\\\)*)\\/")  # a `\/` not itself escaped


def _is_check(statement: ts.Node) -> bool:
    """A statement a coroutine-state loop may hold besides its yield: `assert(...)`, `print(...)`, `pass`."""
    if statement.type == "pass_statement":
        return True
    call = statement.named_children[0] if statement.type == "expression_statement" and statement.named_children else None
    return call is not None and call.type == "call" and text_of(call.children[0]) in ("assert", "print", "push_warning")


def _function_state_test(test: ts.Node) -> tuple[ts.Node, str] | None:
    """(`r is GDScriptFunctionState`, `r`) in an `if`/`while` test, alone or with `and` (`... and r.is_valid()`)."""
    while test.type == "parenthesized_expression" and test.named_children:
        test = test.named_children[0]
    if test.type != "binary_operator" or len(test.children) != 3:
        return None
    op = text_of(test.children[1])
    if op == "is" and text_of(test.children[2]) == "GDScriptFunctionState" and test.children[0].type == "identifier":
        return test, text_of(test.children[0])
    if op in ("and", "&&"):
        return _function_state_test(test.children[0]) or _function_state_test(test.children[2])
    return None


def _unwrapped(text: str) -> str:
    """The text without the parentheses around all of it."""
    text = text.strip()
    while text.startswith("(") and text.endswith(")") and text.count("(") == 1:
        text = text[1:-1].strip()
    return text


def format_constant(node: ts.Node) -> tuple[ts.Node, list[ts.Node]] | None:
    """(format string, arguments) of `const K = "<format>" % [a, b]`; None otherwise. Godot 4.6 folds a
    format of one constant (`"%s/x" % ROOT`, `% ARGS` naming a constant array), not of an array literal."""
    value = node.child_by_field_name("value")
    parts = [c for c in value.children if c.type != "line_continuation"] if value is not None else []  # `% \`
    if value is None or value.type != "binary_operator" or len(parts) != 3 or \
            text_of(parts[1]) != "%" or parts[0].type != "string" or parts[2].type != "array":
        return None
    return parts[0], [c for c in parts[2].named_children if c.type != "comment"]


# what an exported Godot 3 variable of these types held when its default was `null`, as Godot 4 types it
EMPTY_VALUES = {"String": '""', "NodePath": "NodePath()", "Array": "[]", "Dictionary": "{}"}


class SyntaxRules:
    """GDScript 1 -> 2 syntax: annotations, setget, parent calls, RPC keywords, constructors."""

    def on_base_call(self, node: ts.Node) -> None:
        dot = node.children[0]
        if dot.type != "." or (node.prev_sibling is not None and node.prev_sibling.type == "line_continuation"):
            return
        script = self.scope.script if self.scope is not None else None
        if len(node.children) > 1 and node.children[1].type == "identifier" and script is not None:
            name = text_of(node.children[1])  # the parent's method: owned along the parent's chain
            parent = self.scope.resolve(script.extends) if script.extends else UNKNOWN
            owner = self.scope.owner(parent, name)
            if name == "add_child_below_node" and is_engine(owner) and self.call_add_child_below_node(node, None, owner):
                return  # the engine's `.add_child_below_node(node, child)` is `node.add_sibling(child)` in Godot 4
            self.replace(dot, "super.", "parent_call", self.rules.cite("super"))
            if not self.override_call(node.children[1], owner, name) and is_engine(owner):
                self._member(node.children[1], "method", name, owner)  # `.update()` -> `super.queue_redraw()`
            self.await_coroutine(node, owner, name)  # `return .run()` of a parent's coroutine
        else:
            self.replace(dot, "super.", "parent_call", self.rules.cite("super"))

    def on_string(self, node: ts.Node) -> None:
        """A path to a shader file by its Godot 3 extension: the migration renames the file `.gdshader`."""
        raw = text_of(node)
        if len(raw) > 8 and raw[0] == raw[-1] and raw[0] in "\"'" and raw[1:-1].endswith(".shader") and "\n" not in raw:
            self.replace(node, raw[:-len('.shader"')] + ".gdshader" + raw[-1], "shader_extension",
                         self.rules.cite_prototype("shader-file-extension"), 0.9)
            return
        escaped = _SLASH_ESCAPE.sub(lambda m: m.group(1) + "/", raw)
        if escaped != raw and not raw.startswith(("r\"", "r'")):  # Godot 3 read `\/` as `/`; Godot 4 rejects it
            self.replace(node, escaped, "slash_escape", self.rules.cite_page("gdscript_basics#literals"), 0.9)

    def on_node_path(self, node: ts.Node) -> None:
        raw = text_of(node)
        if raw.startswith("@"):
            self.edit(node.start_point, (node.start_point[0], node.start_point[1] + 1), "^", "node_path_literal",
                      self.rules.cite("node_path"), 0.95)

    def on_const_statement(self, node: ts.Node) -> None:
        """`const K = "%s/%s" % [ROOT, NAME]`: Godot 4 does not fold a format into a constant. With
        only `%s` of string constants it becomes their concatenation (still a constant, as people
        port it); otherwise, at the top of a script, a `static var` (still read as `Script.K`)."""
        name = node.child_by_field_name("name")
        value = node.child_by_field_name("value")
        script = self.scope.script if self.scope is not None else None
        member = node.parent is not None and node.parent.type in ("source", "class_body")
        if member and name is not None and script is not None and text_of(name) in script.static_constants:
            # a static var is shared as Godot 3's constant was, changeable, and holds what Godot 4 does not fold
            self.replace(node.children[0], "static var", "static_constant",
                         self.rules.cite_page("gdscript_basics#static-variables"), 0.85)
            return
        if not member and unfolded_constant(value):   # a function's own constant: a variable
            self.replace(node.children[0], "var", "static_constant", self.rules.cite_page("gdscript_basics#constants"),
                         0.85)
            return
        formatted = format_constant(node)
        if formatted is None:
            return
        fmt = self.render(formatted[0])  # with its own edits (`\/` -> `/`)
        args = formatted[1]
        strings = [text_of(a) if a.type == "string" else self._string_constant(text_of(a)) for a in args]
        pieces = re.split(r"(%%|%s)", fmt[1:-1])
        if all(strings) and sum(p == "%s" for p in pieces) == len(args) and "%" not in "".join(
                p for p in pieces if p not in ("%%", "%s")):
            quote, out, values = fmt[0], [], iter(text_of(a) for a in args)
            for piece in pieces:
                if piece == "%s":
                    out.append(next(values))
                elif piece:
                    out.append(quote + piece.replace("%%", "%") + quote)
            self.replace(value, " + ".join(out), "const_format", self.rules.cite_page("gdscript_basics#constants"), 0.85)
        elif node.parent is not None and node.parent.type == "source":
            self.replace(node.children[0], "static var", "const_format",
                         self.rules.cite_page("gdscript_basics#static-variables"), 0.8)

    def _string_constant(self, name: str) -> str | None:
        """`name` when the script's chain declares it a constant holding a string."""
        if self.scope is None:
            return None
        script = self.scope.context.scripts.get(self.scope.scope)
        member = script.members.get(name) if script is not None else None
        return name if member is not None and member == ("const", "String") else None

    def on_onready_variable_statement(self, node: ts.Node) -> None:
        keyword = node.children[0]
        if keyword.type == "onready":
            self.replace(keyword, "@onready", "onready", self.rules.cite("onready"), 0.98)

    def on_export_variable_statement(self, node: ts.Node) -> None:
        self._redefined_member(node)  # (an exported one keeps its name: a scene sets it)
        keyword = node.children[0]
        hints = next((c for c in node.children if c.type == "arguments"), None)
        if hints is None:
            self.replace(keyword, "@export", "export", self.rules.cite("export"), 0.98)
            return
        parts = hints.named_children
        annotation, type_ = self._export_annotation(parts)
        if annotation is None:
            self.manual_item(node, "export", "export() with hints the rewrite does not know",
                             "Godot 4 writes export hints as annotations (@export_range, @export_enum, ...)",
                             self.rules.cite("export"))
            return
        name = node.child_by_field_name("name") or next(c for c in node.children if c.type == "name")
        typed = next((c for c in node.children if c.type in ("type", "inferred_type")), None)
        after = self.lines_b[hints.end_point[0]][hints.end_point[1]:hints.end_point[1] + 1]
        spacer = "" if after in (b" ", b"\t") else " "  # `export (int)var x`
        self.edit(keyword, hints, annotation + spacer, "export_annotation", self.rules.cite("export_typed"), 0.9)
        has_value = any(c.type in ("=", ":=") for c in node.children)
        if type_ == "NodePath" and typed is None and not has_value and annotation == "@export":
            # Untyped with a NodePath default: the inspector still edits a path, and the common
            # `target = get_node(target)` keeps compiling (a `: NodePath` variable cannot hold the node).
            self.edit(name.end_point, name.end_point, " = NodePath()", "export_annotation",
                      self.rules.cite("export_typed"), 0.85)
        elif typed is not None and text_of(typed) == "Array" and type_ and type_.startswith("Array["):
            # `export(Array, String, MULTILINE) var a: Array`: Godot 4's hint wants the element type
            self.replace(typed, type_, "export_annotation", self.rules.cite("export_typed"), 0.9)
        elif typed is None and type_:
            self.edit(name.end_point, name.end_point, f": {type_}", "export_annotation",
                      self.rules.cite("export_typed"), 0.9)
            value = node.named_children[-1] if has_value else None
            if value is not None and value.type == "null" and type_ in EMPTY_VALUES:  # a typed `= null` fails
                self.replace(value, EMPTY_VALUES[type_], "export_annotation", self.rules.cite("export_typed"), 0.85)

    def _export_annotation(self, parts: list[ts.Node]) -> tuple[str | None, str | None]:
        if not parts:
            return "@export", None
        type_node, hints = parts[0], parts[1:]
        type_ = self.render(type_node) if type_node.type in ("identifier", "attribute", "type") else None
        if type_ is None:
            return None, None
        texts = [self.render(h) for h in hints]
        if not texts:
            return "@export", type_
        if type_ == "Array":  # `(Array, String, FILE, "*.json")`: the element's hints on a typed array
            annotation, inner = self._export_annotation(hints)
            return (annotation, f"Array[{inner}]") if annotation and inner and IDENT.match(inner) else (None, None)
        if type_ in ("int", "float") and all(h.type in ("integer", "float", "unary_operator") for h in hints):
            return f"@export_range({', '.join(texts)})", type_
        if texts[0] in EXPORT_HINTS:
            extra = texts[1:]
            if texts[0] == "FILE" and extra and all(h.type == "string" for h in hints[1:]) or not extra:
                # Godot 3's `"*.ogg,*.wav"` is one filter per argument in Godot 4 (a comma is refused)
                extra = [f'"{f.strip()}"' for t in extra for f in t[1:-1].split(",")] if all(
                    string_value(h) is not None for h in hints[1:]) else extra
                return EXPORT_HINTS[texts[0]] + (f"({', '.join(extra)})" if extra else ""), type_
            if texts[0] == "FLAGS" and all(h.type == "string" for h in hints[1:]):
                return f"@export_flags({', '.join(extra)})", type_
            return None, None
        if type_ in ("int", "String") and all(h.type == "string" for h in hints):
            return f"@export_enum({', '.join(texts)})", type_
        if type_ == "Color" and texts == ["RGB"]:
            return "@export_color_no_alpha", type_
        return None, None

    def on_class_name_statement(self, node: ts.Node) -> None:
        """`class_name Name, "res://icon.png"` -> `@icon("res://icon.png")` + `class_name Name`."""
        icon, name = node.child_by_field_name("icon_path"), node.child_by_field_name("name")
        indent = self.indent_of(node)
        if icon is None or name is None or indent is None:
            return
        cite = {"table": "docs_chunks", "id": "docs:4:@GDScript.annotation.@icon", "title": "@GDScript.@icon (Godot 4 annotation)"}
        extends = node.prev_named_sibling
        while extends is not None and extends.type not in ("extends_statement",):
            extends = extends.prev_named_sibling
        if extends is None:
            self.replace(node, f"@icon({text_of(icon)})\n{indent}class_name {text_of(name)}", "class_icon", cite, 0.95)
            return
        # annotations come before `extends` in Godot 4: the icon goes above it
        self.edit(extends.start_point, extends.start_point, f"@icon({text_of(icon)})\n{indent}", "class_icon", cite, 0.95)
        self.replace(node, f"class_name {text_of(name)}", "class_icon", cite, 0.95)

    def on_function_definition(self, node: ts.Node) -> None:
        self.narrowed_input_callback(node)
        kind = contradicted_coroutine_type(node)
        if kind is not None:  # `-> Array` over a coroutine returning a Dictionary: the type goes
            arrow = kind.prev_sibling if kind.prev_sibling is not None and text_of(kind.prev_sibling) == "->" else kind
            start = arrow.prev_sibling.end_point if arrow.prev_sibling is not None else arrow.start_point
            self.edit(start, kind.end_point, "", "coroutine_return_type",
                      self.rules.cite_page("static_typing#specify-the-return-type-of-a-function-with-the-arrow"), 0.8)

    def narrowed_input_callback(self, node: ts.Node) -> None:
        """`func _input(event: InputEventKey):` -> `func _input(event_: InputEvent):` that returns on other events
        and reads the narrowed one as before (Godot 3 called it with that type alone where the code relied on it)."""
        found = narrowed_event(node)
        body = node.child_by_field_name("body")
        statements = [c for c in body.named_children if c.type != "comment"] if body is not None else []
        if found is None or not statements or statements[0].start_point[0] == node.start_point[0]:
            return
        param, name, type_ = found
        indent = self.indent_of(statements[0])
        if indent is None or f"{name}_" in self.lines[node.start_point[0]]:
            return
        cite = {"table": "docs_chunks", "id": f"docs:4:Node.method.{text_of(node.child_by_field_name('name'))}",
                "title": f"Node.{text_of(node.child_by_field_name('name'))} (Godot 4 method)"}
        self.replace(param, f"{name}_: InputEvent", "input_callback_type", cite, 0.85)
        self.edit(statements[0].start_point, statements[0].start_point,
                  f"if not {name}_ is {type_}:\n{indent}\treturn\n{indent}var {name}: {type_} = {name}_\n{indent}",
                  "input_callback_type", cite, 0.85)

    def on_setget(self, node: ts.Node) -> None:
        if not any(c.type == "setget" and not c.is_named for c in node.children):
            return  # GDScript 2's `: set = f` parses as the same node
        setter = next((c for c in node.children if c.type == "setter"), None)
        getter = next((c for c in node.children if c.type == "getter"), None)
        own = self.scope.self_type() if self.scope is not None else ""
        parts = ([f"set = {self.overridden_name(own, text_of(setter))}"] if setter is not None else []) + (
            [f"get = {self.overridden_name(own, text_of(getter))}"] if getter is not None else [])
        if not parts:
            return
        start = node.prev_sibling.end_point if node.prev_sibling is not None else node.start_point
        if setter is not None and self._wide_setter(node, start, own, text_of(setter), getter):
            return
        self.edit(start, node.end_point, ": " + ", ".join(parts), "setget_property", self.rules.cite("setget"), 0.85)

    def _wide_setter(self, node: ts.Node, start: tuple[int, int], own: str, setter: str,
                     getter: ts.Node | None) -> bool:
        """`var x = 0 setget set_x` where `set_x(v, notify = true)`: Godot 4 takes a one-parameter setter only,
        so the property gets an inline `set` calling it; where set_x stores `x` itself, the value lives in a
        backing variable (set_x's own write would call the setter again) that the getter returns."""
        script = self.scope.script if self.scope is not None else None
        statement = node.parent
        name = statement.child_by_field_name("name") if statement is not None else None
        found = script.wide_setters.get(text_of(name)) if script is not None and name is not None else None
        indent = self.indent_of(statement) if statement is not None else None
        if found is None or found[0] != setter or indent is None:
            return False
        step, backing = script.indent, found[1]
        value = "new_value" if text_of(name) == "value" else "value"
        block = f":\n{indent}{step}set({value}):\n{indent}{step * 2}{self.overridden_name(own, setter)}({value})"
        if backing:
            declared = self.render_span(name.end_point, start).rstrip()  # its type and first value
            block += f"\n{indent}{step}get:\n{indent}{step * 2}return {backing}\n{indent}var {backing}{declared}"
        elif getter is not None:
            block += f"\n{indent}{step}get:\n{indent}{step * 2}return {self.overridden_name(own, text_of(getter))}()"
        self.edit(start, node.end_point, block, "setget_property", self.rules.cite("setget"), 0.85)
        return True

    def stored_past_setter(self, node: ts.Node) -> None:
        """`x = v` in a class whose wide setter keeps `x` in a backing variable (_wide_setter): Godot 3 stored a
        bare write of the class's own property without its setter, so it goes to the backing variable."""
        if stored_past_setter(node, self.scope):
            target = stored_name(node)
            self.replace(target, self.scope.script.wide_setters[text_of(target)][1], "setget_property",
                         self.rules.cite("setget"), 0.85)

    def on_remote_keyword(self, node: ts.Node) -> None:
        keyword = text_of(node).strip()
        if keyword not in RPC:
            return
        if node.parent is not None and node.parent.type != "function_definition":
            self.manual_item(node, "rpc", f"`{keyword} var`: rset is gone",
                             "Godot 4 synchronises properties with MultiplayerSynchronizer or an @rpc setter "
                             "function", self.rules.cite("rpc:" + keyword))
            return
        self.replace(node, RPC[keyword], "rpc_annotation", self.rules.cite("rpc:" + keyword), 0.9)
        if keyword.startswith("master"):
            self.manual_item(node, "rpc", f"`{keyword}`: no Godot 4 counterpart",
                             "check get_multiplayer().get_remote_sender_id() in the function",
                             self.rules.cite("rpc:" + keyword))

    def on_variable_statement(self, node: ts.Node) -> None:
        """A member Godot 4's engine class now has does not compile (`Member "velocity" redefined`). `var
        velocity` in a KinematicBody script goes (the body's own `velocity` is what move_and_slide()
        reads); any other such member is left to people, with the class that took its name."""
        self._variant_inference(node)
        self._redefined_member(node)

    def _redefined_member(self, node: ts.Node) -> None:
        if not member_level(node) or self.scope is None:
            return
        name = node.child_by_field_name("name") or next((c for c in node.children if c.type == "name"), None)
        base = self.engine_class(self.scope.self_type())
        if name is None or base is None:
            return
        member = text_of(name)
        surface = self.rules.surface
        owner4 = surface.owner_of("4", self.rules.in4(base), member, ("property", "signal"))
        if owner4 is None or surface.owner_of("3", base, member, ("property", "method", "constant")) or \
                member != "velocity" and shadow_of(self.scope, member) is not None:
            return  # renamed project-wide (OverrideRules), `velocity` on a body aside
        value = node.named_children[-1]
        trivial = (value.type == "call" and text_of(value.children[0]) in ("Vector2", "Vector3") and not args_of(value)) \
            or value.type in ("name", "type") or text_of(value) in ("Vector2.ZERO", "Vector3.ZERO")
        if member != "velocity" or base not in ("KinematicBody2D", "KinematicBody") or not trivial:
            kind = "signal" if "signal" in surface.kinds.get(("4", owner4, member), ()) else "property"
            how = "rename it here and in the scenes that set it (it is exported)" \
                if node.type == "export_variable_statement" else f"rename the member, or drop it and use {owner4}'s own {kind}"
            self.manual_item(node, "shadowed_member", f"`var {member}` redefines Godot 4's `{owner4}.{member}`", how,
                             {"table": "docs_chunks", "id": f"docs:4:{owner4}.{kind}.{member}",
                              "title": f"{owner4}.{member} (Godot 4 {kind})"})
            return
        end = (node.end_point[0] + 1, 0) if node.end_point[0] + 1 < len(self.lines) else node.end_point
        self.edit(node.start_point, end, "", "shadowed_member", self.rules.cite("move_and_slide"), 0.8)

    def _variant_inference(self, node: ts.Node) -> None:
        """`var x := max(a, b)` -> `var x := maxf(a, b)` (and `0.5 * abs(d)` -> `0.5 * absf(d)`): Godot 3's
        `max` gave a float, Godot 4's gives a Variant (no type to infer); its float version computes what
        Godot 3's did."""
        if not any(c.type == "inferred_type" for c in node.children):
            return
        for call in variant_result_calls(node.child_by_field_name("value")):
            callee = text_of(call.children[0])
            if self.is_project_name(callee):
                continue
            name4 = VARIANT_RESULTS[callee]
            self.replace(call.children[0], name4, "variant_inference", {
                "table": "docs_chunks", "id": f"docs:4:@GlobalScope.method.{name4}",
                "title": f"@GlobalScope.{name4} (Godot 4 method)"}, 0.85)

    def on_augmented_assignment(self, node: ts.Node) -> None:
        self._texture_flags(node)
        self.stored_past_setter(node)

    def on_assignment(self, node: ts.Node) -> None:
        """`pause_mode = 2` -> `process_mode = 3`: once the property is renamed, its values move too."""
        self.stored_past_setter(node)
        if self.window_assignment(node) or self._texture_flags(node):
            return
        left, right = node.named_children[0], node.named_children[-1]
        last = left.children[-1] if left.type == "attribute" else left
        renamed = any(p.start == last.start_point and p.end == last.end_point and p.new == "process_mode"
                      for p in self.pending)
        if renamed and right.type == "integer" and text_of(right) in PAUSE_TO_PROCESS:
            self.replace(right, PAUSE_TO_PROCESS[text_of(right)], "pause_mode_value", self.rules.cite("pause_mode"), 0.9)

    def _texture_flags(self, node: ts.Node) -> bool:
        """`texture.flags = Texture.FLAG_MIPMAPS | Texture.FLAG_FILTER` (or `flags |= ...`): Godot 4 textures
        have no flags (filter and repeat are set where the texture is drawn), so the statement goes and says
        where the setting now lives."""
        left, right = node.named_children[0], node.named_children[-1]
        last = left.children[-1] if left.type == "attribute" else left
        statement = node.parent
        if text_of(last) != "flags" or statement is None or statement.type != "expression_statement":
            return False
        leaves = [n for n in descendants(right) if n.type in ("identifier", "attribute", "integer")
                  and (n.parent is None or n.parent.type != "attribute")]
        flags = [n for n in leaves if n.type == "attribute" and text_of(n.children[0]) in TEXTURE_CLASSES3
                 and text_of(n.children[-1]).startswith("FLAG")]
        if not flags or any(n.type != "integer" and n not in flags for n in leaves):
            return False
        self._drop_statement(statement, "texture_flags", "texture_flags")
        self.manual_item(statement, "texture_flags", f"`{text_of(statement)}`: Godot 4 textures have no flags",
                         "set texture_filter / texture_repeat on the CanvasItem that draws it, or the material's "
                         "filter and repeat settings", self.rules.cite("texture_flags"))
        return True

    def on_constructor_definition(self, node: ts.Node) -> None:
        """`func _init(a).(b):` -> `func _init(a):` with `super(b)` as its first statement; `.()` goes."""
        dot = next((c for c in node.children if c.type == "."), None)
        base_args = next((c for c in node.children if c.type == "arguments"), None)
        body = next((c for c in node.children if c.type == "body"), None)
        if dot is None or base_args is None or body is None or not body.named_children:
            return
        if not base_args.named_children:  # `.()`: Godot 4 calls a parent's argument-free _init() itself,
            self.edit(dot, base_args, "", "init_super", self.rules.cite("init_super"))  # and super() fails without one
            return
        first = body.named_children[0]
        indent = self.indent_of(first)
        if indent is None:
            return
        self.edit(dot, base_args, "", "init_super", self.rules.cite("init_super"))
        self.edit(first.start_point, first.start_point, f"super{self.render(base_args)}\n{indent}", "init_super",
                  self.rules.cite("init_super"))

    def on_call(self, node: ts.Node) -> None:
        name = text_of(node.children[0])
        if name == "assert" and node.parent is not None and node.parent.type == "expression_statement":
            args = args_of(node)
            statement = node.parent
            if len(args) == 1 and _NOT_FUNCTION_STATE.match(_unwrapped(text_of(args[0]))):
                if statement.prev_sibling is None or statement.prev_named_sibling is None:
                    self._drop_statement(statement, "function_state", "map:diff:class:GDScriptFunctionState")
                else:  # the range a coroutine-state loop after it also drops (see _function_state)
                    self.edit(statement.prev_sibling.end_point, statement.end_point, "", "function_state",
                              self.rules.cite("map:diff:class:GDScriptFunctionState"), 0.85)

    def on_attribute_call(self, node: ts.Node) -> None:
        self.on_call(node)

    # -- GDScript 1 forms Godot 4's parser refuses ------------------------------------------------------

    def on_source(self, node: ts.Node) -> None:
        """Enum entries Godot 3 let a line break separate get their comma (the tree cannot hold them: a
        line scan finds them); a line indented with tabs and spaces gets one kind, as deep as Godot 3 read it."""
        cite = {"table": "docs_chunks", "id": "docs:4:page:tutorials/scripting/gdscript/gdscript_basics#enums",
                "title": "GDScript reference > Enums (Godot 4 docs)"}
        for row, col in enum_missing_commas(self.lines):
            self.edit((row, col), (row, col), ",", "enum_comma", cite, 0.95)
        for row, a, b in var_parameters(self.lines):  # `func f(var x)`: the `var` goes
            self.edit((row, len(self.lines[row][:a].encode("utf-8"))), (row, len(self.lines[row][:b].encode("utf-8"))),
                      "", "var_parameter", self.rules.cite_page("gdscript_basics#functions"), 0.95)
        for row, old, new in mixed_indents(self.lines, node):
            self.edit((row, 0), (row, len(old)), new, "indentation", self.rules.cite_page("gdscript_styleguide#indentation"),
                      0.95)

    def on_dictionary(self, node: ts.Node) -> None:
        """`{name="M", "size": 11}` -> `{"name": "M", "size": 11}`: one style per dictionary in Godot 4."""
        if not mixed_dictionary(node):
            return
        cite = {"table": "docs_chunks", "id": "docs:4:page:tutorials/scripting/gdscript/gdscript_basics#ref-dictionary-class-dictionary",
                "title": "GDScript reference > Dictionary (Godot 4 docs)"}
        for pair in node.named_children:
            if pair.type == "pair" and pair.child_count >= 3 and pair.children[1].type == "=" and \
                    pair.children[0].type == "identifier":
                self.edit(pair.children[0].start_point, pair.children[1].end_point, f'"{text_of(pair.children[0])}":',
                          "dictionary_style", cite, 0.95)

    # -- coroutines --------------------------------------------------------------------------------

    def on_return_statement(self, node: ts.Node) -> None:
        """`return` alone in a function typed `-> bool` -> `return false` (the type's empty value);
        `return node.accept_event()` of a method returning nothing -> the call, then `return`."""
        value = bare_typed_return(node)
        if value is not None:
            self.edit(node.end_point, node.end_point, f" {value}", "typed_return", self.rules.cite_page(
                "static_typing#specify-the-return-type-of-a-function-with-the-arrow"), 0.85)
        indent = self.indent_of(node)
        if indent is not None and returned_nothing(node, self.scope, self.chain_owner):
            cite = self.rules.cite_page("static_typing#specify-the-return-type-of-a-function-with-the-arrow")
            self.edit(node.start_point, node.named_children[0].start_point, "", "void_return", cite, 0.9)
            self.edit(node.end_point, node.end_point, f"\n{indent}return", "void_return", cite, 0.9)

    def on_binary_operator(self, node: ts.Node) -> None:
        """`a and !(r is GDScriptFunctionState)` -> `a`: Godot 4 has no function state (the caller awaits a
        coroutine, as the await rules make it), so the negated test always holds. `x is get_script()` ->
        `is_instance_of(x, get_script())`: Godot 4's `is` takes a type name only."""
        if is_of_value(node):
            self.replace(node, f"is_instance_of({self.render(node.children[0])}, {self.render(node.children[2])})",
                         "is_instance_of", self.rules.cite_member("4", "@GDScript", "method", "is_instance_of"), 0.9)
            return
        found = path_and_string(node, self.scope)
        if found is not None:   # `path == ""` -> `path == NodePath("")`; `"../" + path` -> `"../" + str(path)`
            path, literal = found
            cite = self.rules.cite_constructors("NodePath")
            if text_of(node.children[1]) == "+":
                self.replace(path, f"str({text_of(path)})", "node_path_operand", cite, 0.9)
            else:
                self.replace(literal, f"NodePath({text_of(literal)})", "node_path_operand", cite, 0.9)
            return
        if len(node.children) != 3 or text_of(node.children[1]) not in ("and", "&&"):
            return
        left, right = node.children[0], node.children[2]
        for keep, drop in ((left, right), (right, left)):
            if _NOT_FUNCTION_STATE.match(_unwrapped(text_of(drop))):
                self.replace(node, self.render(keep), "function_state",
                             self.rules.cite("map:diff:class:GDScriptFunctionState"), 0.85)
                return

    def on_while_statement(self, node: ts.Node) -> None:
        self._function_state(node)

    def on_if_statement(self, node: ts.Node) -> None:
        self._function_state(node)

    def _function_state(self, node: ts.Node) -> None:
        """`var r = f()` + `while r is GDScriptFunctionState: r = yield(r, "completed")` -> `var r = await f()`:
        Godot 4 has no function state (a coroutine called without `await` is an error there), so its caller
        awaits it. A test whose block does more than wait reads `false` (the wait happened at the call), and
        what that block did while the coroutine ran is left to people."""
        named = node.named_children
        found = _function_state_test(named[0]) if named else None
        if found is None:
            return
        fs_test, held = found
        cite = self.rules.cite("map:diff:class:GDScriptFunctionState") or self.rules.cite("yield")
        before, asserted = node.prev_named_sibling, []  # `assert(!(r is GDScriptFunctionState))` before the loop
        while before is not None and (before.type == "comment" or _is_check(before) and
                                      "GDScriptFunctionState" in text_of(before)):
            asserted += [before] if before.type != "comment" else []
            before = before.prev_named_sibling
        source = None
        while before is not None and source is None:  # the statement giving `held` its value, in this block
            source = self._assigned_value(before, held)
            before = before.prev_named_sibling
        if source is not None and source.type in ("call", "attribute") and not text_of(source).startswith("await"):
            self.edit(source.start_point, source.start_point, "await ", "await_coroutine", cite, 0.85)
        elif source is not None and not text_of(source).startswith("await"):
            source = None
        if source is not None and self._only_waits(node, held):
            for statement in [*asserted, node]:
                self.edit(statement.prev_sibling.end_point if statement.prev_sibling is not None else
                          statement.start_point, statement.end_point, "", "await_coroutine", cite, 0.85)
            return
        self.replace(fs_test, "false", "function_state", cite, 0.8)
        self.manual_item(node, "coroutine", f"`{held} is GDScriptFunctionState`: Godot 4 has none",
                         ("the call is awaited where it is made now, so this block, which ran while the coroutine "
                          "waited, never runs: move what it did around that await") if source is not None else
                         f"Godot 4 has no GDScriptFunctionState (a coroutine called without `await` is an error "
                         f"there): await the call that gives `{held}` its value; this test reads false", cite)

    @staticmethod
    def _only_waits(node: ts.Node, held: str) -> bool:
        """Whether the block under the test only waits for `held` (`r = yield(r, "completed")`, with checks)."""
        body = next((c for c in node.children if c.type == "body"), None)
        statements = [c for c in body.named_children if c.type != "comment"] if body is not None else []
        if not statements or any(c.type in ("elif_clause", "else_clause") for c in node.children) or not all(
                _is_check(c) for c in statements[:-1]):
            return False
        step = statements[-1].named_children[0] if statements[-1].named_children else statements[-1]
        value = step.named_children[-1] if step.type == "assignment" else step
        call = value.children[0] if value is not None and value.type == "call" else None
        args = args_of(value) if call is not None else []
        return (step.type != "assignment" or text_of(step.named_children[0]) == held) and call is not None and \
            text_of(call) == "yield" and len(args) == 2 and text_of(args[0]) == held and \
            string_value(args[1]) == "completed"

    @staticmethod
    def _assigned_value(statement: ts.Node | None, name: str) -> ts.Node | None:
        """The value `statement` gives `name` (`var name = v`, `name = v`), else None."""
        if statement is None:
            return None
        if statement.type == "variable_statement":
            named = statement.child_by_field_name("name")
            value = statement.child_by_field_name("value")
            return value if named is not None and text_of(named) == name else None
        inner = statement.named_children[0] if statement.type == "expression_statement" and \
            statement.named_children else None
        if inner is not None and inner.type == "assignment" and text_of(inner.named_children[0]) == name and \
                text_of(inner.children[1]) == "=":
            return inner.named_children[-1]
        return None
