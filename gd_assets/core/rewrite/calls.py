"""Calls whose shape changed: yield, connect and other Callables, move_and_slide, JSON, xform."""

from __future__ import annotations

import re

import tree_sitter as ts

from gd_assets.core.cues import (
    cyclic_preload,
    emulated_popup_hide,
    mutated_enum,
    node_name_argument,
    shims_available,
)
from gd_assets.core.platforms import GONE, platform_tests
from gd_assets.core.receivers import OTHER, PROJECT, UNKNOWN, is_engine
from gd_assets.core.rewrite.tree import IDENT, args_of, receiver_start, string_value, text_of
from gd_assets.core.rewrite.window import VIEWPORT_SIZE_CITE
from gd_assets.core.slicing import descendants

MOVE_ARGS = ("velocity", "up_direction", "floor_stop_on_slope", "max_slides", "floor_max_angle")
# Godot 4's defaults for the same properties: an argument equal to one is not set again.
MOVE_DEFAULTS = {"up_direction": ("Vector2.UP", "Vector3.UP", "Vector2(0, -1)", "Vector3(0, 1, 0)"),
                 "floor_stop_on_slope": ("true",), "max_slides": ("4",), "floor_max_angle": ("0.785398", "deg2rad(45)")}


# Where a value needs no parentheses around `not x` (a condition, a returned or assigned value).
_BARE_VALUE_PARENTS = ("if_statement", "elif_clause", "while_statement", "return_statement", "variable_statement",
                       "assignment", "expression_statement")


class CallRules:
    """Calls whose shape changed: yield, connect and other Callables, move_and_slide, JSON, xform.
    A `call_<name>` method handles one name; `SHAPES` sends several names to one handler."""

    # call name -> (handler, its extra arguments after the call name)
    SHAPES = {
        **{name: ("_signal_call", ()) for name in ("connect", "disconnect", "is_connected")},
        **{name: ("_undo_method", ()) for name in ("add_do_method", "add_undo_method")},
        **{name: ("_move_and_slide", ()) for name in ("move_and_slide", "move_and_slide_with_snap")},
        **{name: ("_xform", ()) for name in ("xform", "xform_inv")},
        "tween_callback": ("_tween_step", (2,)), "tween_method": ("_tween_step", (5,)),
        **{name: ("_image_lock", ()) for name in ("lock", "unlock")},
        **{name: ("_grid_cell", ()) for name in ("get_cell_item", "set_cell_item", "get_cell_item_orientation")},
        "map_to_world": ("_grid_cell", ("map_to_local",)),
        "apply_impulse": ("_swap_position", ("apply_impulse",)), "add_force": ("_swap_position", ("apply_force",)),
    }

    def call_rule(self, name: str):
        """The rule of `name` (TreeEditor.call_rule), else, for a method whose target and method name became one
        Callable in Godot 4 (RewriteRules.callable_pairs, read from the class references' signatures), that."""
        found = super().call_rule(name)
        if found is not None or not any(n == name for _, n in self.rules.surface.callable_pairs):
            return found
        return lambda call, chain, owner: self._callable_pair(call, owner, name)

    def _callable_pair(self, call: ts.Node, owner: str, name: str) -> bool:
        """`PhysicsServer2D.area_set_monitor_callback(area, self, "_on_body")` -> `(area, self._on_body)`; a Godot 3
        `userdata`/`binds` argument Godot 4 no longer takes is bound to the Callable (Godot 3 passed it to the
        method). Only the arguments change (False: the method's own renames still apply)."""
        cls3 = self.rules.surface.owner_of("3", owner, name) if is_engine(owner) else None
        pair = self.rules.surface.callable_pairs.get((cls3, name)) if cls3 else None
        args = args_of(call)
        if pair is None or len(args) < pair.index + 2 or string_value(args[pair.index + 1]) is None:
            return False
        kept, binds = [], []
        for arg, param in zip(args[pair.index + 2:], pair.after3):
            if not binds and pair.after4[len(kept):len(kept) + 1] == (param,):  # the same parameter, in place
                kept.append(self.render(arg))
            elif param in ("userdata", "ud") and param not in pair.after4:
                binds.append(arg)
            else:
                return False  # (`binds` arrays and the rest: the specific rules, or left as they are)
        target, method = args[pair.index], args[pair.index + 1]
        new = ", ".join([self.callable_of(target, method, binds), *kept])
        cite = self.rules.cite(pair.row) if pair.row.startswith("map:") else {
            "table": "docs_chunks", "id": pair.row, "title": f"{pair.row.split(':')[2].replace('.method.', '.')} "
                                                             "(Godot 4 method)"}
        self.edit(target.start_point, args[-1].end_point, new, "callable_argument", cite, 0.85)
        return False

    def call_yield(self, call: ts.Node, chain: ts.Node | None, owner: str) -> bool:
        if chain is not None:
            return False
        args = args_of(call)
        signal = string_value(args[1]) if len(args) == 2 else None
        if signal is None or not IDENT.match(signal):
            self.manual_item(call, "yield", "yield without an object and a signal name",
                             "Godot 4 awaits a signal or a coroutine: `await obj.signal` / `await f()`",
                             self.rules.cite("yield"))
            return True
        target = self.render(args[0])
        if args[0].type not in ("identifier", "attribute", "call", "get_node", "parenthesized_expression"):
            target = f"({target})"
        if signal == "completed" and args[0].type in ("call", "attribute"):
            new = f"await {target}"
        else:
            signal, _ = self.signal_name(signal, self.type_of(args[0]))
            new = f"await {target}.{signal}"
        self.replace(call, new, "yield_to_await", self.rules.cite("yield"))
        return True

    def callable_of(self, target: ts.Node, method: ts.Node, binds: list[ts.Node] | ts.Node | None = None) -> str:
        """`target, "m"` as a Godot 4 Callable: `self.m`, `obj.m`, else `Callable(target, m)`; binds
        (a list of values, an array literal, or an array expression) as `.bind(...)` / `.bindv(...)`."""
        name = string_value(method)
        target_text = self.render(target)
        if name is not None and IDENT.match(name):  # a project method renamed for Godot 4 keeps being reached
            type_ = self.scope.self_type() if target_text == "self" and self.scope is not None else self.type_of(target)
            name = self._engine_method_name(type_, self.overridden_name(type_, name))
        if name is not None and IDENT.match(name) and target_text == "self":
            out = f"self.{name}"
        elif name is not None and IDENT.match(name) and target.type in ("identifier", "attribute", "get_node"):
            out = f"{target_text}.{name}"
        else:
            out = f"Callable({target_text}, {self.render(method)})"
        if isinstance(binds, list):
            return out + (f".bind({', '.join(self.render(b) for b in binds)})" if binds else "")
        if binds is not None and binds.type == "array":
            values = [c for c in binds.named_children if c.type != "comment"]
            return out + (f".bind({', '.join(self.render(b) for b in values)})" if values else "")
        if binds is not None:
            return out + f".bindv({self.render(binds)})"
        return out

    def _engine_method_name(self, type_: str, name: str) -> str:
        """An engine method named by a string (`"minimum_size_changed"`) as Godot 4 names it (`update_minimum_size`):
        `self.minimum_size_changed` would be Godot 4's signal of that name."""
        owner = self.scope.owner(type_, name) if self.scope is not None else UNKNOWN
        row = self.rules.member_rename("method", name, owner) if is_engine(owner) else None
        return row.new if row is not None and IDENT.match(row.new) else name

    def _function_of(self, holder: str, name: str) -> bool:
        """Whether the project's script of `holder` (or one it extends) declares a function `name`: Godot 4 then
        reads `obj.name` as that method, so a native signal of the name is reached by its string."""
        owner = self.scope.owner(holder, name) if self.scope is not None else UNKNOWN
        script = self.scope.context.scripts.get(owner[len(PROJECT):]) if owner.startswith(PROJECT) else None
        return script is not None and script.members.get(name, ("",))[0] == "func"

    def _signal_call(self, call: ts.Node, chain: ts.Node | None, owner: str, method: str) -> bool:
        """`connect("sig", target, "m", [binds], flags)` -> `sig.connect(target.m.bind(binds), flags)`."""
        args = args_of(call)
        if len(args) < 3 or self.engine_receiver(owner) is False and not owner.startswith(OTHER):
            return False  # the project's own `connect`; a module's class still connects as an Object
        signal = string_value(args[0])
        callable_ = self.callable_of(args[1], args[2], args[3] if len(args) > 3 else None)
        rest = [self.render(a) for a in args[4:]] if method == "connect" else []
        rule = "connect_binds" if len(args) > 3 else method
        if signal is not None and IDENT.match(signal):
            holder = self.scope.self_type() if chain is None and self.scope is not None else (
                self.type_of(chain.children[0]) if chain is not None and len(chain.children) == 3 else UNKNOWN)
            renamed, _ = self.signal_name(signal, holder)
            cls = self.engine_class(holder) if renamed == signal else None
            owner3 = self.rules.surface.gone(cls, signal, "signal") if cls else None
            if cls is None and renamed == signal and holder == UNKNOWN and self.scope is not None and \
                    self.scope.owner(holder, signal) == UNKNOWN and not self.rules.surface.any_member("4", signal):
                owners = sorted(self.rules.surface.member_classes("3", "signal", signal))  # only Godot 3's classes
                owner3 = owners[0] if owners else None                                   # had it: none took it
            if owner3 is not None and not (signal == "popup_hide" and emulated_popup_hide(self.scope) and
                                          holder == self.scope.self_type()):
                self.note_gone(args[0], "signal", owner3, signal, inside_edit=True)  # (the script declares that one)
            new = f"{renamed}.{method}({', '.join([callable_, *rest])})"
            if self._function_of(holder, renamed):  # `func mouse_exited()` beside Area2D's signal
                quoted = '"' + renamed + '"'
                new = f"{method}({', '.join([quoted, callable_, *rest])})"
        else:
            new = f"{method}({', '.join([self.render(args[0]), callable_, *rest])})"
        self.replace(call, new, "signal_callable", self.rules.cite(rule))
        return True

    def call_add_child_below_node(self, call: ts.Node, chain: ts.Node | None, owner: str) -> bool:
        """`parent.add_child_below_node(node, child)` -> `node.add_sibling(child)`: Godot 4 asks the node, not
        its parent (the map renames the method only)."""
        args = args_of(call)
        if len(args) not in (2, 3) or owner.startswith(("project", OTHER)):
            return False
        target = self.render(args[0])
        if args[0].type not in ("identifier", "attribute", "call", "get_node", "subscript"):
            target = f"({target})"
        rest = ", ".join(self.render(a) for a in args[1:])
        self.edit(receiver_start(chain) if chain is not None else call.start_point, call.end_point,
                  f"{target}.add_sibling({rest})", "add_sibling",
                  self.rules.cite("map:rename:function:add_child_below_node"), 0.9)
        return True

    def call_funcref(self, call: ts.Node, chain: ts.Node | None, owner: str) -> bool:
        args = args_of(call)
        if chain is not None or len(args) != 2:
            return False
        self.replace(call, self.callable_of(args[0], args[1]), "funcref_callable", self.rules.cite("funcref"))
        return True

    def _undo_method(self, call: ts.Node, chain: ts.Node | None, owner: str, name: str) -> bool:
        """`undo_redo.add_do_method(obj, "m", a, b)` -> `add_do_method(obj.m.bind(a, b))`."""
        args = args_of(call)
        if chain is None or len(args) < 2 or string_value(args[1]) is None or owner not in ("UndoRedo", UNKNOWN):
            return False
        new = f"{name}({self.callable_of(args[0], args[1], args[2:])})"
        self.replace(call, new, "undo_redo_callable", self.rules.cite("undo_redo"), 0.85)
        return True

    def call_to_json(self, call: ts.Node, chain: ts.Node | None, owner: str) -> bool:
        if chain is not None or len(args_of(call)) != 1:
            return False
        self.replace(call.children[0], "JSON.stringify", "json_static", self.rules.cite("to_json"))
        return True

    def call_parse_json(self, call: ts.Node, chain: ts.Node | None, owner: str) -> bool:
        if chain is not None or len(args_of(call)) != 1:
            return False
        self.replace(call.children[0], "JSON.parse_string", "json_static", self.rules.cite("parse_json"))
        return True

    def _xform(self, call: ts.Node, chain: ts.Node | None, owner: str, name: str) -> bool:
        """`t.xform(v)` -> `t * v`; `t.xform_inv(v)` -> `v * t` (Transform, Transform2D, Basis)."""
        args = args_of(call)
        if chain is None or len(chain.children) < 3 or len(args) != 1 or \
                owner not in ("Transform", "Transform2D", "Basis", UNKNOWN):
            return False
        base = self.render_until(chain, call)
        value = self.render(args[0])
        if args[0].type not in ("identifier", "attribute", "call", "get_node"):
            value = f"({value})"
        inverse = name == "xform_inv"
        start = receiver_start(chain)
        if start != chain.start_point:  # `a * t.b.xform(v)`, which tree-sitter reads as `(a * t.b).xform(v)`
            base = self.render_span(start, self.dot_before(chain, call))
        new = f"{value} * {base}" if inverse else f"{base} * {value}"
        cite = self.rules.cite("xform_inv" if inverse else "xform")
        if start != chain.start_point:
            self.edit(start, call.end_point, f"({new})", "xform_operator", cite, 0.85)
            return True
        if chain.children[-1].id != call.id:  # `t.xform(v).x`: the product, read on
            self.edit(chain.start_point, call.end_point, f"({new})", "xform_operator", cite, 0.85)
            return True
        if chain.parent is not None and chain.parent.type not in ("expression_statement", "variable_statement",
                                                                   "assignment", "return_statement",
                                                                   "arguments", "augmented_assignment"):
            new = f"({new})"
        self.replace(chain, new, "xform_operator", cite, 0.85)
        return True

    def call_Basis(self, call: ts.Node, chain: ts.Node | None, owner: str) -> bool:
        """`Basis(Vector3(x, y, z))` (Euler angles in Godot 3) -> `Basis.from_euler(Vector3(x, y, z))`."""
        args = args_of(call)
        euler = len(args) == 1 and (args[0].type == "call" and text_of(args[0].children[0]) == "Vector3" or
                                    text_of(args[0]).endswith(".get_euler()") or self.type_of(args[0]) == "Vector3")
        if chain is not None or not euler:
            return False
        self.replace(call.children[0], "Basis.from_euler", "basis_from_euler", self.rules.cite("basis_euler"), 0.85)
        return True

    def call_start(self, call: ts.Node, chain: ts.Node | None, owner: str) -> bool:
        """`thread.start(self, "m", data, priority)` -> `thread.start(self.m.bind(data), priority)` on a Thread."""
        args = args_of(call)
        if chain is None or owner != "Thread" or len(args) < 2:
            return False
        callable_ = self.callable_of(args[0], args[1], args[2:3])
        rest = [self.render(a) for a in args[3:]]
        self.replace(call, f"start({', '.join([callable_, *rest])})", "thread_callable",
                     self.rules.cite("thread_start"), 0.85)
        return True

    def call_sort_custom(self, call: ts.Node, chain: ts.Node | None, owner: str) -> bool:
        """`array.sort_custom(obj, "cmp")` -> `array.sort_custom(obj.cmp)`."""
        args = args_of(call)
        if len(args) != 2 or owner not in ("Array", UNKNOWN):
            return False
        self.replace(call, f"sort_custom({self.callable_of(args[0], args[1])})", "sort_custom_callable",
                     self.rules.cite("sort_custom"), 0.85)
        return True

    def _tween_step(self, call: ts.Node, chain: ts.Node | None, owner: str, name: str, width: int) -> bool:
        """Godot 3.5's SceneTreeTween `tween_callback(obj, "m", binds)` / `tween_method(obj, "m", from, to,
        duration, binds)` -> the Callable forms of Godot 4's Tween."""
        args = args_of(call)
        if len(args) < width or owner not in ("SceneTreeTween", UNKNOWN):
            return False  # Godot 4's forms take fewer arguments: the count tells the two apart
        rest = args[2:width]
        binds = args[width] if len(args) > width else None
        parts = [self.callable_of(args[0], args[1], binds), *(self.render(a) for a in rest)]
        self.replace(call, f"{name}({', '.join(parts)})", "tween_callable", self.rules.cite("tween_" + name[6:]), 0.85)
        return True

    def hoist(self, node: ts.Node, setup: list[str], value: str, rule: str, cite: str, confidence: float) -> bool:
        """Run `setup` (statements) before the statement holding `node`, and read `value` where `node`
        was; a node that is the whole statement is replaced by the setup alone. False where no statement
        can go first (a loop condition, an elif, a one-line block)."""
        anchor = node
        while anchor.parent is not None and anchor.parent.type not in ("body", "source"):
            anchor = anchor.parent
        condition = anchor.named_children[0] if anchor.type == "if_statement" and anchor.named_children else None
        inside_condition = condition is not None and condition.start_byte <= node.start_byte < condition.end_byte
        indent = self.indent_of(anchor)
        if indent is None or anchor.type not in ("expression_statement", "variable_statement", "return_statement") \
                and not inside_condition:
            return False
        if node.parent is not None and node.parent.id == anchor.id and anchor.type == "expression_statement":
            self.replace(anchor, ("\n" + indent).join(setup), rule, self.rules.cite(cite), confidence)
            return True
        self.edit(anchor.start_point, anchor.start_point, ("\n" + indent).join(setup) + "\n" + indent, rule,
                  self.rules.cite(cite), confidence)
        self.replace(node, value, rule, self.rules.cite(cite), confidence)
        return True

    def _statement_of(self, call: ts.Node, chain: ts.Node | None) -> ts.Node | None:
        """The expression statement that is exactly this call (`x.f()` alone on its line), if it is one."""
        whole = chain if chain is not None else call
        if chain is not None and chain.children[-1].id != call.id:
            return None
        parent = whole.parent
        return parent if parent is not None and parent.type == "expression_statement" else None

    def _receiver_prefix(self, call: ts.Node, chain: ts.Node | None) -> str | None:
        """`obj.` of `obj.f()` (empty for a bare call); None for a longer chain read in the middle."""
        if chain is None:
            return ""
        if chain.children[-1].id != call.id:
            return None
        return self.render_until(chain, call) + "."

    def _drop_statement(self, statement: ts.Node, rule: str, cite: str) -> None:
        """Remove a statement; the only statement of its block becomes `pass`."""
        siblings = [c for c in statement.parent.named_children if c.type != "comment"] if statement.parent else []
        if len(siblings) <= 1:
            self.replace(statement, "pass", rule, self.rules.cite(cite), 0.9)
            return
        row = statement.start_point[0]
        line = self.lines[row]
        if line[:statement.start_point[1]].strip() or line[len(line.rstrip()):] != "" or \
                self.lines_b[row][statement.end_point[1]:].strip() or statement.end_point[0] != row:
            self.replace(statement, "pass", rule, self.rules.cite(cite), 0.9)
            return
        end = (row + 1, 0) if row + 1 < len(self.lines) else statement.end_point
        self.edit((row, 0), end, "", rule, self.rules.cite(cite), 0.9)

    def _image_lock(self, call: ts.Node, chain: ts.Node | None, owner: str, name: str) -> bool:
        statement = self._statement_of(call, chain)
        if owner != "Image" or statement is None or args_of(call):
            return False
        self._drop_statement(statement, "image_lock_removed", "image_lock")
        return True

    def call_viewport_set_usage(self, call: ts.Node, chain: ts.Node | None, owner: str) -> bool:
        """`VisualServer.viewport_set_usage(vp, usage)` goes: Godot 3's GLES3 hint (2D only, no HDR) has no Godot 4
        counterpart; Godot 4's renderer sets up a viewport for what it draws. `viewport_set_vflip(vp, true)` goes
        too: Godot 3 flipped a render target so that its read-back came out upright, which Godot 4's is."""
        statement = self._statement_of(call, chain)
        if owner != "VisualServer" or statement is None:
            return False
        name = text_of(call.children[0])
        self._drop_statement(statement, name.replace("viewport_set_", "viewport_") + "_removed",
                             f"map:diff:method:VisualServer.{name}")
        return True

    call_viewport_set_vflip = call_viewport_set_usage

    def call_viewport_set_hdr(self, call: ts.Node, chain: ts.Node | None, owner: str) -> bool:
        """`VisualServer.viewport_set_hdr(vp, on)` -> `RenderingServer.viewport_set_use_hdr_2d(vp, on)`: Godot 4's
        HDR switch of a viewport (a float framebuffer, as Godot 3's was)."""
        if owner != "VisualServer" or len(args_of(call)) != 2:
            return False
        self.replace(call.children[0], "viewport_set_use_hdr_2d", "member_rename",
                     self.rules.cite_member("4", "RenderingServer", "method", "viewport_set_use_hdr_2d"), 0.8)
        return True

    def call_texture_get_data(self, call: ts.Node, chain: ts.Node | None, owner: str) -> bool:
        """`VisualServer.texture_get_data(t)` -> `RenderingServer.texture_2d_get(t)`, and
        `texture_create_from_image(image, flags)` -> `texture_2d_create(image)`: Godot 4 names the 2D texture
        calls apart and dropped the flags (filtering and repeat belong to the material now)."""
        args = args_of(call)
        if owner != "VisualServer" or chain is None or not args:
            return False
        new = {"texture_get_data": "texture_2d_get", "texture_create_from_image": "texture_2d_create"}[
            text_of(call.children[0])]
        self.replace(call, f"{new}({self.render(args[0])})", "texture_2d_call",
                     self.rules.cite_member("4", "RenderingServer", "method", new), 0.85)
        return True

    call_texture_create_from_image = call_texture_get_data

    def call_parse(self, call: ts.Node, chain: ts.Node | None, owner: str) -> bool:
        if owner != "JSON" or chain is None or text_of(chain.children[0]) != "JSON":
            return False
        parts = [c for c in chain.children if c.type not in (".", "line_continuation")]
        if len(parts) == 3 and parts[1].id == call.id and parts[2].type == "identifier" and \
                text_of(parts[2]) == "result" and len(args_of(call)) == 1:  # `JSON.parse(text).result`
            self.replace(chain, f"JSON.parse_string({self.render(args_of(call)[0])})", "json_static",
                         self.rules.cite("json_parse"), 0.9)
            return True
        if len(parts) == 2 and parts[1].id == call.id and len(args_of(call)) == 1 and self._json_instance(chain, call):
            return True
        self.manual_item(call, "json", "JSON.parse() returns an Error in Godot 4",
                         "use JSON.parse_string(text) for the data, or a JSON instance's parse() and get_data() "
                         "(the JSONParseResult's .result and .error are gone)", self.rules.cite("json_parse"))
        return True

    def _json_instance(self, chain: ts.Node, call: ts.Node) -> bool:
        """`var r = JSON.parse(t)` read as `r.result`/`r.error`/`r.error_string`/`r.error_line` only ->
        a JSON instance: `var r = JSON.new()` + `var r_error = r.parse(t)`, `r.data`, `r_error`,
        `r.get_error_message()`, `r.get_error_line()`."""
        statement = chain.parent
        value = statement.child_by_field_name("value") if statement is not None else None
        if value is None and statement is not None:  # `var r := JSON.parse(t)`
            value = next((c for c in reversed(statement.named_children) if c.type not in ("name", "type", "inferred_type")),
                         None)
        if statement is None or statement.type != "variable_statement" or value is None or value.id != chain.id:
            return False
        name_node = statement.child_by_field_name("name")
        indent = self.indent_of(statement)
        body = statement.parent
        if name_node is None or indent is None or body is None:
            return False
        held = text_of(name_node)
        reads = {"result": "data", "error": held + "_error", "error_string": "get_error_message()",
                 "error_line": "get_error_line()"}
        reads.update({f"get_{k}": v for k, v in reads.items()})  # the getters: `r.get_result()`
        uses = []
        for node in descendants(body, include_self=False):
            if node.type == "identifier" and text_of(node) == held and node.id != name_node.id and \
                    node.start_point > statement.end_point:
                parent = node.parent
                if parent is not None and parent.type == "attribute" and parent.children[0].id != node.id:
                    continue  # `r.result`'s member, not the variable
                if parent is not None and parent.type == "binary_operator" and len(parent.children) == 3 and \
                        parent.children[2].type == "null" and text_of(parent.children[1]) in ("==", "!="):
                    continue  # `r == null`: an instance is no more null than the result was
                after = parent.children[2] if parent is not None and parent.type == "attribute" and \
                    len(parent.children) >= 3 and parent.children[0].id == node.id else None
                getter = after is not None and after.type == "attribute_call" and not args_of(after) and \
                    text_of(after.children[0]).startswith("get_")
                if after is None or not (after.type == "identifier" or getter) or \
                        text_of(after.children[0] if getter else after) not in reads:
                    return False  # passed on, or read another way: left to people
                uses.append((node, after))
        cite = self.rules.cite("json_parse")
        self.edit(statement.start_point, statement.end_point,
                  f"var {held} = JSON.new()\n{indent}var {held}_error = {held}.parse({self.render(args_of(call)[0])})",
                  "json_instance", cite, 0.85)
        for head, member in uses:
            new = reads[text_of(member.children[0] if member.type == "attribute_call" else member)]
            if new == held + "_error":
                self.edit(head.start_point, member.end_point, new, "json_instance", cite, 0.85)
            else:
                self.replace(member, new, "json_instance", cite, 0.85)
        return True

    def call_save(self, call: ts.Node, chain: ts.Node | None, owner: str) -> bool:
        """`ResourceSaver.save(path, resource)` -> `ResourceSaver.save(resource, path)`."""
        args = args_of(call)
        if chain is None or owner != "ResourceSaver" or text_of(chain.children[0]) != "ResourceSaver" or len(args) < 2:
            return False
        swapped = [self.render(args[1]), self.render(args[0]), *(self.render(a) for a in args[2:])]
        self.replace(call, f"save({', '.join(swapped)})", "resource_saver", self.rules.cite("resource_saver"), 0.9)
        return True

    def call_has_no_area(self, call: ts.Node, chain: ts.Node | None, owner: str) -> bool:
        """`rect.has_no_area()` -> `not rect.has_area()` (Godot 4 kept only the positive test)."""
        if chain is None or owner not in ("Rect2", "Rect2i") or call is not chain.children[-1] or args_of(call) or \
                chain.children[0].type in ("binary_operator", "unary_operator"):
            return self._inverted_test(call, chain, owner)
        base = f"{self.render_until(chain, call)}.has_area()"
        cite = self.rules.cite("has_area")
        parent = chain.parent
        if parent is not None and parent.type == "unary_operator" and text_of(parent.children[0]) in ("not", "!"):
            self.replace(parent, base, "has_area", cite, 0.95)
        elif parent is not None and parent.type in _BARE_VALUE_PARENTS:
            self.replace(chain, f"not {base}", "has_area", cite, 0.95)
        else:
            self.replace(chain, f"(not {base})", "has_area", cite, 0.95)
        return True

    def call_create_from_image(self, call: ts.Node, chain: ts.Node | None, owner: str) -> bool:
        """`texture.create_from_image(image, flags)` -> `texture.set_image(image)` (flags are import settings now)."""
        args = args_of(call)
        if chain is None or owner != "ImageTexture" or not args or text_of(chain.children[0]) == "ImageTexture":
            return False
        self.replace(call, f"set_image({self.render(args[0])})", "image_texture", self.rules.cite("create_from_image"),
                     0.85)
        if len(args) > 1:
            self.manual_item(call, "texture_flags", "texture flags are gone",
                             "filtering and repeat are set on the CanvasItem or the material in Godot 4",
                             self.rules.cite("create_from_image"))
        return True

    def _grid_cell(self, call: ts.Node, chain: ts.Node | None, owner: str, name: str, new: str | None = None) -> bool:
        """GridMap's `get_cell_item(x, y, z)` -> `get_cell_item(Vector3i(x, y, z))` (and set_cell_item, map_to_world)."""
        args = args_of(call)
        if owner != "GridMap" or len(args) < 3:
            return False
        rest = [self.render(a) for a in args[3:]]
        packed = f"Vector3i({', '.join(self.render(a) for a in args[:3])})"
        self.replace(call, f"{new or name}({', '.join([packed, *rest])})", "gridmap_vector3i",
                     self.rules.cite("gridmap_cell"), 0.9)
        return True

    def call_join(self, call: ts.Node, chain: ts.Node | None, owner: str) -> bool:
        """`PoolStringArray(parts).join(", ")` -> `", ".join(PackedStringArray(parts))`."""
        args = args_of(call)
        if chain is None or owner not in ("PoolStringArray", "PackedStringArray") or len(args) != 1 or \
                chain.children[-1].id != call.id:
            return False
        base = self.render_until(chain, call)
        separator = self.render(args[0])
        if args[0].type not in ("string", "identifier"):
            separator = f"({separator})"
        self.replace(chain, f"{separator}.join({base})", "string_join", self.rules.cite("string_join"), 0.9)
        return True

    def _swap_position(self, call: ts.Node, chain: ts.Node | None, owner: str, name: str, new: str) -> bool:
        """Godot 3's `apply_impulse(offset, impulse)` -> Godot 4's `apply_impulse(impulse, offset)` on rigid bodies."""
        args = args_of(call)
        bodies = ("RigidBody2D", "RigidBody", "PhysicsDirectBodyState2D", "PhysicsDirectBodyState",
                  "Physics2DDirectBodyState")
        if len(args) != 2 or owner not in bodies:
            return False
        self.replace(call, f"{new}({self.render(args[1])}, {self.render(args[0])})", "position_last",
                     self.rules.cite(new), 0.9)
        return True

    def call_get_size(self, call: ts.Node, chain: ts.Node | None, owner: str) -> bool:
        """`image.get_size()` (or a BitMap's) -> `Vector2(image.get_size())`: Godot 4 returns a Vector2i, so `(size / 2).floor()`
        and `size + Vector2(...)` no longer compile (and `/` would divide as integers); Godot 3's was a Vector2.
        A coordinate read at once (`image.get_size().x`) stays, unless it is divided."""
        if owner not in ("Image", "BitMap", "Viewport") or chain is None or args_of(call):
            return False
        rest = [c for c in chain.children[chain.children.index(call) + 1:] if c.type != "."] \
            if call in chain.children else []
        parent = chain.parent
        divided = parent is not None and parent.type == "binary_operator" and parent.children[0] == chain and \
            text_of(parent.children[1]) == "/"
        if len(rest) == 1 and text_of(rest[0]) in ("x", "y") and not divided:
            return False  # `image.get_size().x`: an int mixes with floats; only its division would truncate
        cite = VIEWPORT_SIZE_CITE if owner == "Viewport" else self.rules.cite("image_size" if owner == "Image" else
                                                                              "bitmap_size")
        return self.wrap_vector2(chain, call.end_point, cite)  # (nothing when already `Vector2(image.get_size())`)

    def call_get_used_rect(self, call: ts.Node, chain: ts.Node | None, owner: str) -> bool:
        """`image.get_used_rect()` -> `Rect2(image.get_used_rect())`: Godot 4 returns a Rect2i, whose size no longer
        compares with `Vector2.ZERO` nor divides as floats; Godot 3's was a Rect2."""
        if owner != "Image" or chain is None or args_of(call):
            return False
        cite = self.rules.cite_member("4", "Image", "method", "get_used_rect")
        return self.wrap_vector2(chain, call.end_point, cite, "Rect2")

    def call_subarray(self, call: ts.Node, chain: ts.Node | None, owner: str) -> bool:
        """`data.subarray(a, b)` -> `data.slice(a, b + 1)`: Godot 3's end was inclusive (-1: to the end),
        Godot 4's `slice` excludes it. Only where the end's value is plain: `n - 1`, a literal."""
        args = args_of(call)
        if not (owner.startswith("Pool") and owner.endswith("Array") or owner == UNKNOWN and chain is not None) or \
                len(args) != 2:
            return False  # an unknown receiver: only Godot 3's pool arrays had `subarray`
        end = args[1]
        text = text_of(end).replace(" ", "")
        if text == "-1":
            new_end = None
        elif end.type == "integer" and text.isdigit():
            new_end = str(int(text) + 1)
        elif end.type == "binary_operator" and len(end.children) == 3 and text_of(end.children[1]) == "-" and \
                text_of(end.children[2]) == "1":
            new_end = self.render(end.children[0])
        else:
            self.manual_item(call, "array", "subarray(from, to): Godot 4's slice(begin, end) excludes its end",
                             "pass the end plus one (to the end of the array: leave it out)",
                             self.rules.cite(f"map:diff:class:{owner if owner != UNKNOWN else 'PoolByteArray'}"))
            return True
        new_args = self.render(args[0]) + (f", {new_end}" if new_end is not None else "")
        self.replace(call, f"slice({new_args})", "subarray_slice", {
            "table": "docs_chunks", "id": "docs:4:PackedByteArray.method.slice", "title": "PackedByteArray.slice (Godot 4 method)"},
            0.9)
        return True

    def call_has_node(self, call: ts.Node, chain: ts.Node | None, owner: str) -> bool:
        """`has_node(child.name)` -> `has_node(NodePath(child.name))`: Godot 4's `name` is a StringName, which
        `has_node`/`get_node` take only as a NodePath; Godot 3's was a String."""
        found = node_name_argument(call, scope=self.scope)
        if found is None:
            return False
        self.edit(found.start_point, found.start_point, "NodePath(", "node_path_argument", self._node_path_cite(), 0.9)
        self.edit(found.end_point, found.end_point, ")", "node_path_argument", self._node_path_cite(), 0.9)
        return False  # the call's own renames still apply

    call_get_node = call_get_node_or_null = call_has_node

    def call_has_feature(self, call: ts.Node, chain: ts.Node | None, owner: str) -> bool:
        """`OS.has_feature("HTML5")` -> `OS.has_feature("web")`, and `OS.get_name() == "X11"` -> `== "Linux"` (also
        as a `match` pattern): Godot 4 renamed the platforms, and Godot 3's names are never true there."""
        for test in platform_tests(call, text_of(call.children[0]), owner):
            cite = self.rules.cite_member("4", "OS", "method", test.method)
            if test.new:
                quote = text_of(test.literal)[0]
                self.replace(test.literal, f"{quote}{test.new}{quote}", "platform_name", cite, 0.9)
            else:
                self.manual_item(test.literal, "platform_name", f'platform "{test.old}" tested', GONE[test.old], cite)
        return False

    call_get_name = call_has_feature

    def _node_path_cite(self) -> dict:
        return self.rules.cite_member("4", "Node", "property", "name")

    def call_remove(self, call: ts.Node, chain: ts.Node | None, owner: str) -> bool:
        """`a.remove(i)` of an index, on a receiver nothing resolves -> `a.remove_at(i)`: Godot 3's arrays removed
        by position with `remove`; Godot 4's `remove` is only DirAccess's, of a path (never an int)."""
        args = args_of(call)
        if owner != UNKNOWN or chain is None or len(args) != 1 or not self._visibly_int(args[0]):
            return False
        self.replace(call.children[0], "remove_at", "member_rename", {
            "table": "docs_chunks", "id": "docs:4:Array.method.remove_at", "title": "Array.remove_at (Godot 4 method)"}, 0.8)
        return True

    def _inverted_test(self, call: ts.Node, chain: ts.Node | None, owner: str) -> bool:
        """`r.has_no_area()` -> `!r.has_area()` on an AABB or a receiver nothing resolves (`has_no_surface` of an
        AABB likewise): Godot 4 turned the test over, and no Godot 4 class has the Godot 3 name."""
        if owner not in ("Rect2", "AABB", UNKNOWN) or chain is None or args_of(call):
            return False
        name = text_of(call.children[0])
        new = {"has_no_area": "has_area", "has_no_surface": "has_surface"}[name]
        cls = owner if owner != UNKNOWN else ("AABB" if name == "has_no_surface" else "Rect2")
        cite = self.rules.cite_member("4", cls, "method", new)
        self.edit(receiver_start(chain), receiver_start(chain), "!", "inverted_test", cite, 0.9)
        self.replace(call.children[0], new, "inverted_test", cite, 0.9)
        return True

    call_has_no_surface = _inverted_test

    def call_get_focus_owner(self, call: ts.Node, chain: ts.Node | None, owner: str) -> bool:
        prefix = self._receiver_prefix(call, chain)
        if "Control" not in (self.rules.surface.ancestors("3", owner) or [owner]) or prefix is None or args_of(call):
            return False
        target = chain if chain is not None else call
        self.replace(target, f"{prefix}get_viewport().gui_get_focus_owner()", "focus_owner",
                     self.rules.cite("focus_owner"), 0.9)
        return True

    def call_list_dir_begin(self, call: ts.Node, chain: ts.Node | None, owner: str) -> bool:
        """`dir.list_dir_begin(true, true)` -> `dir.list_dir_begin()`; `false` arguments become the
        `include_navigational` / `include_hidden` properties set before the call."""
        args = args_of(call)
        statement = self._statement_of(call, chain)
        prefix = self._receiver_prefix(call, chain)
        if prefix is None or not (owner == "Directory" or (owner == UNKNOWN and args)):
            return False
        lines = []
        values = [self.render(a) for a in args] + ["false"] * (2 - len(args))  # Godot 3 skipped nothing by default
        for prop, value in zip(("include_navigational", "include_hidden"), values):
            if value != "true":
                lines.append(f"{prefix}{prop} = {'true' if value == 'false' else f'not ({value})'}")
        if statement is None:  # read as a value (`if not dir.list_dir_begin(true):`): the properties go first
            whole = chain if chain is not None else call
            if not lines:
                self.replace(call, "list_dir_begin()", "list_dir_begin", self.rules.cite("list_dir_begin"), 0.9)
                return True
            if prefix:  # the condition may have just opened it: a failed open leaves null, which Godot 3 never touched
                lines = [f"if {prefix[:-1]}: {line}" for line in lines]
            if not self.hoist(whole, lines, f"{prefix}list_dir_begin()", "list_dir_begin", "list_dir_begin", 0.85):
                self.manual_item(call, "file_access", "list_dir_begin() arguments are properties in Godot 4",
                                 "set include_navigational / include_hidden before calling list_dir_begin()",
                                 self.rules.cite("list_dir_begin"))
            return True
        indent = self.indent_of(statement)
        if indent is None:
            return False
        lines.append(f"{prefix}list_dir_begin()")
        self.replace(statement, ("\n" + indent).join(lines), "list_dir_begin", self.rules.cite("list_dir_begin"), 0.85)
        return True

    def call_emit_signal(self, call: ts.Node, chain: ts.Node | None, owner: str) -> bool:
        """`emit_signal("error_message", m)` of a signal renamed for Godot 4 (see `signal_name`)."""
        args = args_of(call)
        signal = string_value(args[0]) if args else None
        if signal is None or not IDENT.match(signal):
            return False
        holder = self.scope.self_type() if chain is None and self.scope is not None else (
            self.type_of(chain.children[0]) if chain is not None and len(chain.children) == 3 else UNKNOWN)
        new, cite = self.signal_name(signal, holder)
        if new == signal or cite is None:
            return False
        quote = text_of(args[0])[0]
        self.replace(args[0], f"{quote}{new}{quote}", "signal_rename", cite, 0.85)
        return True

    def call_draw_char(self, call: ts.Node, chain: ts.Node | None, owner: str) -> bool:
        """`draw_char(font, pos, char, next[, color])` -> `draw_char(font, pos, char[, 16, color])`: Godot 4 dropped the
        next character (kerning is the font's) and put the font size (16, the default) before the color."""
        args = args_of(call)
        if len(args) not in (4, 5) or args[3].type != "string" and string_value(args[3]) is None or \
                (owner != UNKNOWN and not self.rules.surface.owner_of("3", owner, "draw_char")):
            return False
        head = ", ".join(self.render(a) for a in args[:3])
        tail = f", 16, {self.render(args[4])}" if len(args) == 5 else ""
        self.replace(args[0].parent, f"({head}{tail})", "draw_char_arguments",
                     self.rules.cite_member("4", "CanvasItem", "method", "draw_char"), 0.8)
        return True

    def call_set_drag_forwarding(self, call: ts.Node, chain: ts.Node | None, owner: str) -> bool:
        """`control.set_drag_forwarding(self)` -> `control.set_drag_forwarding(self.get_drag_data_fw.bind(control),
        ...)`: Godot 3 called the target's `*_fw` methods with the control last; Godot 4 takes the three callables.
        A method the script does not have is `Callable()`. Only a target of `self` (its methods are known)."""
        args = args_of(call)
        if len(args) != 1 or text_of(args[0]) != "self" or self.scope is None or self.scope.script is None:
            return False
        members = {name for script in self.scope.script_chain() for name in script.members}
        control = self.render_until(chain, call) if chain is not None else "self"
        parts = [f"self.{m}.bind({control})" if m in members else "Callable()"
                 for m in ("get_drag_data_fw", "can_drop_data_fw", "drop_data_fw")]
        self.replace(args[0].parent, f"({', '.join(parts)})", "drag_forwarding",
                     self.rules.cite_member("4", "Control", "method", "set_drag_forwarding"), 0.85)
        return True

    def call_draw_string(self, call: ts.Node, chain: ts.Node | None, owner: str) -> bool:
        """`draw_string(font, pos, text, color[, clip_w])` -> `draw_string(font, pos, text,
        HORIZONTAL_ALIGNMENT_LEFT, clip_w, 16, color)`: Godot 4 put alignment, width and font size
        (16, the default font size) before the color."""
        args = args_of(call)
        if len(args) not in (4, 5) or re.match(r"(HORIZONTAL_ALIGNMENT_|\d)", text_of(args[3])) or \
                (owner != UNKNOWN and not self.rules.surface.owner_of("3", owner, "draw_string")):
            return False
        width = self.render(args[4]) if len(args) == 5 else "-1"
        head = ", ".join(self.render(a) for a in args[:3])
        self.replace(args[0].parent, f"({head}, HORIZONTAL_ALIGNMENT_LEFT, {width}, 16, {self.render(args[3])})",
                     "draw_string_arguments", self.rules.cite("draw_string"), 0.8)
        return True

    def call_execute(self, call: ts.Node, chain: ts.Node | None, owner: str) -> bool:
        """`OS.execute(path, args, true, out)` -> `OS.execute(path, args, out)`: Godot 4's execute always
        blocks; a non-blocking one (`false`) is `OS.create_process(path, args)`, which returns the PID."""
        args = args_of(call)
        if owner != "OS" or len(args) < 3 or text_of(args[2]) not in ("true", "false"):
            return False
        if text_of(args[2]) == "true":
            kept = [args[0], args[1], *args[3:]]
            self.replace(call, f"execute({', '.join(self.render(a) for a in kept)})", "os_execute",
                         self.rules.cite("os_execute"), 0.9)
        else:  # Godot 3 ignored the output and read_stderr of a non-blocking call; open_console stays
            kept = [args[0], args[1], *args[5:6]]
            self.replace(call, f"create_process({', '.join(self.render(a) for a in kept)})", "os_execute",
                         self.rules.cite("os_execute"), 0.85)
        return True

    def call_intersect_ray(self, call: ts.Node, chain: ts.Node | None, owner: str) -> bool:
        """`space.intersect_ray(from, to, [body], mask)` -> `space.intersect_ray(
        PhysicsRayQueryParameters3D.create(from, to, mask, [body.get_rid()]))`: Godot 4 takes one query
        object, which excludes RIDs. The body/area switches have no place in create(), and exclusions held in
        a variable may be objects or RIDs: those calls are left as they are."""
        dims = {"PhysicsDirectSpaceState": "3D", "Physics2DDirectSpaceState": "2D"}.get(owner)
        args = args_of(call)
        if dims is None or not 2 <= len(args) <= 4 or len(args) > 2 and args[2].type != "array":
            return False
        parts = [self.render(a) for a in args[:2]]
        items = args[2].named_children if len(args) > 2 else []
        if any("rid" in text_of(e).lower() and not text_of(e).endswith("get_rid()") for e in items):
            return False  # maybe RIDs already, maybe not
        excluded = [self.render(e) if text_of(e).endswith("get_rid()") else f"{self.render(e)}.get_rid()" for e in items]
        if len(args) == 4 or excluded:  # Godot 4 excludes RIDs; Godot 3 also took the objects
            parts.append(self.render(args[3]) if len(args) == 4 else "2147483647")  # Godot 3's default mask
        if excluded:
            parts.append(f"[{', '.join(excluded)}]")
        self.replace(call, f"intersect_ray(PhysicsRayQueryParameters{dims}.create({', '.join(parts)}))",
                     "intersect_ray_query", self.rules.cite(f"intersect_ray_{dims.lower()}"), 0.85)
        return True

    def call_intersect_point(self, call: ts.Node, chain: ts.Node | None, owner: str) -> bool:
        """`space.intersect_point(p, max, exclude, mask, bodies, areas)` -> a PhysicsPointQueryParameters2D/3D made
        just before the statement (Godot 4 takes one query object, which excludes RIDs) and
        `space.intersect_point(query, max)`. Exclusions in a variable may be objects or RIDs: each is read as a RID."""
        dims = {"PhysicsDirectSpaceState": "3D", "Physics2DDirectSpaceState": "2D"}.get(owner)
        args = args_of(call)
        statement = call
        while statement is not None and (statement.parent is None or statement.parent.type != "body"):
            statement = statement.parent
        indent = self.indent_of(statement) if statement is not None else None
        if dims is None or not 2 <= len(args) <= 6 or indent is None:
            return False
        used = set(re.findall(r"\w+", "\n".join([*self.lines, *(p.new for p in self.pending)])))
        query = next(f"point_query{n or ''}" for n in range(len(used) + 1) if f"point_query{n or ''}" not in used)
        lines = [f"var {query} := PhysicsPointQueryParameters{dims}.new()", f"{query}.position = {self.render(args[0])}"]
        if len(args) > 2 and not (args[2].type == "array" and not args[2].named_children):
            items = args[2].named_children if args[2].type == "array" else None
            rid = lambda t: t if t.endswith("get_rid()") else f"{t}.get_rid()"  # noqa: E731
            lines.append(f"{query}.exclude = [{', '.join(rid(self.render(e)) for e in items)}]" if items is not None
                         else f"{query}.exclude = {self.render(args[2])}.map(func(e): return e if e is RID else "
                              "e.get_rid())")
        for arg, prop in zip(args[3:], ("collision_mask", "collide_with_bodies", "collide_with_areas")):
            lines.append(f"{query}.{prop} = {self.render(arg)}")
        cite = {"table": "docs_chunks", "id": f"docs:4:PhysicsPointQueryParameters{dims}.class",
                "title": f"PhysicsPointQueryParameters{dims} (Godot 4 class)"}
        self.edit(statement.start_point, statement.start_point, "".join(f"{line}\n{indent}" for line in lines),
                  "intersect_point_query", cite, 0.85)
        self.replace(call, f"intersect_point({query}{', ' + self.render(args[1]) if len(args) > 1 else ''})",
                     "intersect_point_query", cite, 0.85)
        return True

    def call_polar2cartesian(self, call: ts.Node, chain: ts.Node | None, owner: str) -> bool:
        """`polar2cartesian(r, th)` -> `Vector2.from_angle(th) * r`: Godot 4 dropped the global; the vector of
        length r at angle th is what it gave."""
        args = args_of(call)
        if chain is not None or len(args) != 2 or self.is_project_name("polar2cartesian"):
            return False
        new = f"Vector2.from_angle({self.render(args[1])}) * {self.render(args[0])}"
        bare = call.parent is not None and call.parent.type in _BARE_VALUE_PARENTS
        self.replace(call, new if bare else f"({new})", "polar2cartesian", self.rules.cite("polar2cartesian"), 0.9)
        return True

    def call_load_interactive(self, call: ts.Node, chain: ts.Node | None, owner: str) -> bool:
        """`ResourceLoader.load_interactive(path)` -> `ResourceInteractiveLoader.new(path)`: the script's own class of
        Godot 3's name over Godot 4's threaded loading (behaviour.SHIMS), with the same poll()/get_resource()."""
        args = args_of(call)
        if owner != "ResourceLoader" or chain is None or not args or len(args) > 2 or \
                "ResourceInteractiveLoader" not in shims_available(self.scope):
            return False
        self.replace(chain, f"ResourceInteractiveLoader.new({', '.join(self.render(a) for a in args)})",
                     "interactive_loader",
                     self.rules.cite_member("4", "ResourceLoader", "method", "load_threaded_request"), 0.8)
        return True

    def _enum_mutation(self, call: ts.Node, chain: ts.Node | None, owner: str) -> bool:
        """`FileFormat.merge({name: id})` on a project enum: Godot 4's enums are constant, so the statement stays
        as a comment after a `pass` and the names it added are left to people (as the ports of such games did)."""
        statement = self._statement_of(call, chain)
        if chain is None or statement is None or statement.start_point[0] != statement.end_point[0] or \
                not mutated_enum(call, self.scope):
            return False
        cite = self.rules.cite_page("gdscript_basics#enums")
        self.replace(statement, f"pass  # Godot 4's enums are constant: {text_of(statement)}", "enum_constant", cite,
                     0.8)
        self.manual_item(statement, "enum_constant", f"`{text_of(statement)[:60]}`: Godot 4's enums are constant",
                         "Godot 3 let a script add or remove an enum's names at run time; keep those in a Dictionary "
                         "of your own (`var formats := FileFormat.duplicate()`) and look them up there", cite)
        return True

    call_merge = call_clear = _enum_mutation  # (`erase` first asks it too: behaviour._string_erase)

    def call_preload(self, call: ts.Node, chain: ts.Node | None, owner: str) -> bool:
        """`preload("x.tscn")` of a scene whose scripts need this script to compile -> `load("x.tscn")` (typed
        PackedScene where `:=` infers from it): Godot 4 resolves preloads while compiling and refuses the cycle."""
        if chain is not None or not cyclic_preload(call, self.scope):
            return False
        cite = self.rules.cite_member("4", "@GDScript", "method", "preload")
        holder = call.parent
        if holder is not None and holder.type == "const_statement":
            self.manual_item(call, "cyclic_preload", "a preloaded scene whose scripts need this script to compile",
                             "Godot 4 resolves preloads while compiling and refuses the cycle: load it at run time "
                             "(a `var` holding `load(...)`)", cite)
            return True
        inferred = holder is not None and holder.type == "variable_statement" and \
            any(c.type == "inferred_type" for c in holder.children)
        args = args_of(call)
        self.replace(call, f"load({self.render(args[0])})" + (" as PackedScene" if inferred else ""), "cyclic_preload",
                     cite, 0.85)
        return True

    def call_validate_json(self, call: ts.Node, chain: ts.Node | None, owner: str) -> bool:
        """`validate_json(text)` -> `("" if JSON.new().parse(text) == OK else "Invalid JSON")`: Godot 3's global
        returned "" for valid JSON and an error message otherwise; Godot 4 asks a JSON instance (`parse()` is an
        Error). Only the message's wording differs (Godot 4's: `JSON.get_error_message()`)."""
        args = args_of(call)
        if chain is not None or len(args) != 1 or self.is_project_name("validate_json"):
            return False
        self.replace(call, f'("" if JSON.new().parse({self.render(args[0])}) == OK else "Invalid JSON")',
                     "validate_json", self.rules.cite_member("4", "JSON", "method", "parse"), 0.85)
        return True

    def call_ColorN(self, call: ts.Node, chain: ts.Node | None, owner: str) -> bool:
        """`ColorN("red", 0.5)` -> `Color("red", 0.5)`: Godot 4's Color reads a color name (and an alpha) itself."""
        if chain is not None or len(args_of(call)) not in (1, 2):
            return False
        self.replace(call.children[0], "Color", "color_name", self.rules.cite("color_n"))
        return True

    def call_String(self, call: ts.Node, chain: ts.Node | None, owner: str) -> bool:
        """`String(42)` -> `str(42)`: Godot 4's String() constructs only from a String, StringName or
        NodePath, and str() gives what Godot 3's String() gave for any value (those three included)."""
        args = args_of(call)
        if chain is not None or len(args) != 1 or string_value(args[0]) is not None:
            return False
        self.replace(call.children[0], "str", "string_of_value", self.rules.cite_constructors("String"))
        return True

    def call_Color(self, call: ts.Node, chain: ts.Node | None, owner: str) -> bool:
        """`Color("#ff478cbf")` (ARGB in Godot 3) -> `Color("#478cbfff")` (RGBA in Godot 4)."""
        args = args_of(call)
        value = string_value(args[0]) if len(args) == 1 and chain is None else None
        digits = value[1:] if value and value.startswith("#") else value
        if digits is None or len(digits) not in (4, 8) or any(c not in "0123456789abcdefABCDEF" for c in digits):
            return False
        cut = len(digits) // 4
        quote = text_of(args[0])[0]
        rotated = ("#" if value.startswith("#") else "") + digits[cut:] + digits[:cut]
        self.replace(args[0], f"{quote}{rotated}{quote}", "hex_color_rgba", self.rules.cite("hex_color"), 0.9)
        return True

    def _move_and_slide(self, call: ts.Node, chain: ts.Node | None, owner: str, name: str) -> bool:
        """`v = move_and_slide(v, UP)` -> `velocity = v`, `move_and_slide()`, `v = velocity`: the arguments
        become properties set before the call, and the value the call returned is `velocity`."""
        args = args_of(call)
        if not args or owner not in ("KinematicBody2D", "KinematicBody", UNKNOWN) or \
                (owner == UNKNOWN and chain is not None):
            return False
        if chain is not None and (len(chain.children) != 3 or chain.children[-1].id != call.id):
            return False
        whole = chain if chain is not None else call
        prefix = self.render(chain.children[0]) + "." if chain is not None else ""
        values = [self.render(a) for a in args]
        snap = values.pop(1) if name == "move_and_slide_with_snap" and len(values) > 1 else None
        setup = [f"{prefix}{prop} = {value}" for prop, value in zip(MOVE_ARGS, values)
                 if not (prop == "velocity" and value == f"{prefix}velocity") and value not in MOVE_DEFAULTS.get(prop, ())]
        if snap is not None:
            setup.append(f"{prefix}floor_snap_length = ({snap}).length()")
        setup.append(f"{prefix}move_and_slide()")
        assignment = whole.parent if whole.parent is not None and whole.parent.type == "assignment" else None
        if assignment is not None and assignment.children[1].type == "=" and \
                self.render(assignment.named_children[0]) == f"{prefix}velocity":
            whole = assignment  # `velocity = move_and_slide(velocity)`: the setup is the whole statement
        if not self.hoist(whole, setup, f"{prefix}velocity", "move_and_slide_velocity", name, 0.8):
            self.manual_item(call, "move_and_slide", f"{name}() inside a loop condition, an elif or a one-line block",
                             "Godot 4 moves with the `velocity` property: set it, call move_and_slide(), then "
                             "read `velocity`", self.rules.cite(name))
            return True
        if len(values) > 5:
            self.manual_item(call, "move_and_slide", f"{name}(): infinite_inertia has no Godot 4 counterpart",
                             "the argument was dropped; check how bodies push rigid bodies", self.rules.cite(name))
        return True
