"""Godot 3's Tween node as Godot 4's `create_tween()`: the same durations, transitions, eases, delays and
signals.

A Godot 3 Tween is a node: interpolations are queued on it and run together from `start()`, and its
`tween_completed`/`tween_all_completed` signals are connected once. A Godot 4 Tween is made per animation
and starts by itself. So the first interpolation on a tween in a function makes it there
(`tween = create_tween()`, parallel when the function queues several, as Godot 3 ran them), each
interpolation becomes a tweener with its own transition, ease and delay, `start()` goes, and the
connections the script or its scene made to the node are made on each new tween. The variable that held
the node becomes `var tween: Tween`; the node itself leaves the scene (`scenes.py`). What has no
equivalent (`seek`, `reset`, `follow_property`, the node's repeat) is left to people.
"""

from __future__ import annotations

import re

import tree_sitter as ts

from gd_assets.core.receivers import UNKNOWN
from gd_assets.core.rewrite.tree import IDENT, args_of, receiver_start, string_value, text_of

_PROPERTY, _METHOD, _CALLBACK = "interpolate_property", "interpolate_method", "interpolate_callback"
_LEFT = ("interpolate_deferred_callback", "follow_property", "follow_method", "targeting_property",
         "targeting_method", "seek", "reset", "reset_all", "set_active", "tell", "get_runtime", "set_speed_scale")
_STOPS = {"stop_all": "kill", "remove_all": "kill", "stop": "kill", "remove": "kill", "resume_all": "play",
          "resume": "play"}
_SIGNALS = ("tween_completed", "tween_all_completed")
_LOOPS = ("for_statement", "while_statement")
_ENUM_HOLDER = re.compile(r"^[A-Za-z_][\w.]*\.(?=(TRANS|EASE)_)")  # `tween.TRANS_QUAD` -> `Tween.TRANS_QUAD`


def _tween_cite() -> dict:
    return {"table": "docs_chunks", "id": "docs:4:Tween.method.tween_property",
            "title": "Tween.tween_property (Godot 4 method)"}


def local_name(path: str) -> str:
    """`$FloatingInventory/InventoryTween` -> `inventory_tween`: a variable for a tween node's tweens."""
    last = path.lstrip("$").strip('"').split("/")[-1]
    snake = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", last).lower()
    return snake if IDENT.match(snake) else "tween"


class TweenRules:
    """Godot 3's Tween node (interpolate_property, start, its signals) as Godot 4's create_tween() chains."""

    SHAPES: dict[str, tuple[str, tuple]] = {
        **{name: ("_tween_interpolate", ()) for name in (_PROPERTY, _METHOD, _CALLBACK)},
        **{name: ("_tween_stop", (new,)) for name, new in _STOPS.items()},
        "is_active": ("_tween_is_active", ()),
        **{name: ("_tween_left", ()) for name in _LEFT},
    }

    # -- which receivers -------------------------------------------------------------------------

    def _tween_receiver(self, call: ts.Node, chain: ts.Node | None, owner: str) -> str | None:
        """The receiver's text (`tween`, `$Tween`, `self.t`) of a call on a Godot 3 Tween node, else None."""
        if owner != "Tween" or chain is None or chain.children[-1].id != call.id or self._tween_godot4():
            return None
        return self.render_until(chain, call)

    def _tween_godot4(self) -> bool:
        return self.scope is not None and self.scope.engine_version() == "4"

    def _tween_made(self) -> dict[str, str]:
        """Receivers whose tween this fragment made: receiver text -> the variable holding it."""
        return self.__dict__.setdefault("_tweens_made", {})

    def _tween_variable(self, receiver: str) -> str:
        """The variable a receiver's tweens go in: itself, or a new local for a `$Path` node."""
        return local_name(receiver) if receiver.startswith(("$", "get_node(")) else receiver

    # -- interpolations --------------------------------------------------------------------------

    def _tween_interpolate(self, call: ts.Node, chain: ts.Node | None, owner: str, name: str) -> bool:
        receiver = self._tween_receiver(call, chain, owner)
        if receiver is None:
            if owner == UNKNOWN and not self._tween_godot4():
                self.manual_item(call, "tween", f"{name}() on a receiver not known to be a Tween",
                                 "a Godot 3 Tween node's interpolation: Godot 4 makes a tween with create_tween()",
                                 self.rules.cite("tween") or _tween_cite())
            return False
        statement = self._statement_of(call, chain)
        step = self._tween_tweener(call, name)
        if statement is None or step is None:
            self.manual_item(call, "tween", f"Tween.{name}() inside an expression",
                             "Godot 4 makes a tween with create_tween() and adds tween_property/tween_method steps",
                             _tween_cite())
            return True
        made = self._tween_made()
        variable = self._tween_variable(receiver)
        lines = []
        anchor = self._tween_anchor(statement)
        if receiver not in made:
            made[receiver] = variable
            several = self._tween_count(chain, receiver) > 1 or anchor.id != statement.id  # (a loop)
            parallel = ".set_parallel(true)" if several else ""
            declare = "var " if variable != receiver else ""
            # a script that is no Node (a Reference) makes its tweens on the tree
            maker = "create_tween()" if self._node_method(statement) else \
                "(Engine.get_main_loop() as SceneTree).create_tween()"
            lines.append(f"{declare}{variable} = {maker}{parallel}")
            lines += [f"{variable}.finished.connect({method})" for signal, method in self._tween_links(receiver)
                      if signal == "tween_all_completed"]
        link = next((m for s, m in self._tween_links(receiver) if s == "tween_completed"), None)
        if link and name == _PROPERTY:
            args = args_of(call)
            key = string_value(args[1])  # Godot 3 passed the property as a NodePath from the object: `:position`
            key = f'":{key.lstrip(":")}"' if key is not None and '"' not in key else f'":" + str({self.render(args[1])})'
            step += f".finished.connect({link}.bind({self.render(args[0])}, NodePath({key})))"
        lines.append(f"{variable}.{step}")
        indent = self.indent_of(statement)
        if indent is None:
            return False
        if anchor.id != statement.id and len(lines) > 1:  # made before the loop holding the interpolation
            outer = self.indent_of(anchor) or ""
            self.edit(anchor.start_point, anchor.start_point, ("\n" + outer).join(lines[:-1]) + "\n" + outer,
                      "tween_create", _tween_cite(), 0.85)
            lines = lines[-1:]
        self.replace(statement, ("\n" + indent).join(lines), "tween_create" if len(lines) > 1 else "tween_step",
                     _tween_cite(), 0.85)
        return True

    def _tween_tweener(self, call: ts.Node, name: str) -> str | None:
        """One Godot 3 interpolation as a Godot 4 tweener with its transition, ease and delay."""
        args = args_of(call)
        text = [self.render(a) for a in args]
        if name == _CALLBACK:
            if len(args) < 3 or string_value(args[2]) is None:
                return None
            return f"tween_callback({self.callable_of(args[0], args[2], args[3:])}).set_delay({text[1]})"
        if len(args) < 5 or len(args) > 8:
            return None
        if name == _PROPERTY:
            text[1] = self._tween_property_name(args[0], args[1], text[1])
            same = text[0] == "self" and string_value(args[1]) == text[2] and len(args) < 8
            step = f"tween_property({text[0]}, {text[1]}, {text[3]}, {text[4]})" + ("" if same else f".from({text[2]})")
        else:
            if string_value(args[1]) is None:
                return None
            step = f"tween_method({self.callable_of(args[0], args[1])}, {text[2]}, {text[3]}, {text[4]})"
        for value, setter in zip(text[5:], ("set_trans", "set_ease", "set_delay")):
            step += f".{setter}({_ENUM_HOLDER.sub('Tween.', value)})"
        return step

    def _tween_property_name(self, target: ts.Node, prop: ts.Node, text: str) -> str:
        """`"rect_position:x"` -> `"position:x"`: the property path in Godot 4's name on the target's class."""
        path = string_value(prop)
        if path is None:
            return text
        first, sep, rest = path.partition(":")
        cls = self.engine_class(self.type_of(target)) if text_of(target) != "self" or self.scope is None else \
            self.engine_class(self.scope.self_type())
        row = self.rules.member_rename("property", first, cls) if cls else None
        if row is None and cls is None:
            row = self.rules.member_rename("property", first, None)
        return text if row is None else text[0] + row.new + sep + rest + text[-1]

    def _tween_count(self, chain: ts.Node, receiver: str) -> int:
        """How many interpolations the function queues on `receiver` (Godot 3 ran them together)."""
        root = chain
        while root.parent is not None:
            root = root.parent
        count, stack = 0, [root]
        while stack:
            node = stack.pop()
            if node.type == "attribute" and node.children[-1].type == "attribute_call" and \
                    text_of(node.children[-1].children[0]) in (_PROPERTY, _METHOD, _CALLBACK) and \
                    text_of(node)[:len(receiver) + 1] == receiver + ".":
                count += 1
            stack.extend(node.children)
        return count

    def _tween_anchor(self, statement: ts.Node) -> ts.Node:
        """The statement a tween is made before: the interpolation's own, or the outermost loop holding it
        (Godot 3 queued a loop's interpolations on one tween)."""
        anchor, node = statement, statement
        while node.parent is not None:
            node = node.parent
            if node.type in _LOOPS:
                anchor = node
            if node.type in ("function_definition", "source"):
                break
        return anchor

    # -- signals ---------------------------------------------------------------------------------

    def _tween_links(self, receiver: str) -> list[tuple[str, str]]:
        """(signal, method) the script or its scene connected to this tween node, in Godot 4 form."""
        script = self.scope.script if self.scope is not None else None
        links = getattr(script, "tween_links", ()) if script is not None else ()
        out = []
        for held, signal, method in links:
            if held == receiver:
                out.append((signal, f"self.{self.overridden_name(self.scope.self_type(), method)}"))
        return out

    def call_connect(self, call: ts.Node, chain: ts.Node | None, owner: str) -> bool:
        """`tween.connect("tween_all_completed", self, "m")`: made on each new tween instead (see `_tween_links`)."""
        receiver = self._tween_receiver(call, chain, owner)
        args = args_of(call)
        signal = string_value(args[0]) if args else None
        statement = self._statement_of(call, chain)
        if receiver is not None and signal in _SIGNALS and len(args) == 3 and \
                text_of(args[1]) == "self" and string_value(args[2]) is not None:
            if statement is not None:
                self._drop_statement(statement, "tween_signal", "map:diff:method:Tween.interpolate_property")
            else:  # `var err = tween.connect(...)`: connected where each tween is made, so nothing fails here
                self.edit(receiver_start(chain), call.end_point, "OK", "tween_signal", _tween_cite(), 0.85)
            return True
        if receiver is not None and signal in ("tween_step", "tween_started"):
            self.manual_item(call, "tween", f"`{signal}` of a Tween node",
                             "Godot 4's Tween emits step_finished(idx) and loop_finished(n) on each tween made "
                             "with create_tween(); a tween_method() step can call back each frame instead",
                             _tween_cite())
            return True
        method, extra = self.SHAPES["connect"]
        return getattr(self, method)(call, chain, owner, "connect", *extra)

    def call_yield(self, call: ts.Node, chain: ts.Node | None, owner: str) -> bool:
        """`yield(tween, "tween_all_completed")` -> `await tween.finished` (Godot 4's Tween signal)."""
        args = args_of(call)
        signal = string_value(args[1]) if len(args) == 2 else None
        if chain is None and signal in _SIGNALS and self.type_of(args[0]) == "Tween" and not self._tween_godot4():
            receiver = self.render(args[0])
            variable = self._tween_made().get(receiver, receiver if not receiver.startswith("$") else None)
            if variable is not None:
                self.replace(call, f"await {variable}.finished", "tween_signal", _tween_cite(), 0.85)
                if signal == "tween_completed" and self._tween_count(call, receiver) > 1:
                    self.manual_item(call, "tween", "yield(tween, \"tween_completed\") after several interpolations",
                                     "Godot 3 resumed at the first interpolation to end; `finished` waits for all",
                                     _tween_cite())
                return True
        return super().call_yield(call, chain, owner)

    # -- start, stop, state ----------------------------------------------------------------------

    def call_start(self, call: ts.Node, chain: ts.Node | None, owner: str) -> bool:
        """`tween.start()`: a Godot 4 tween starts by itself; started elsewhere, it plays."""
        receiver = self._tween_receiver(call, chain, owner)
        if receiver is None:
            return super().call_start(call, chain, owner)
        statement = self._statement_of(call, chain)
        if statement is None:
            return False
        if receiver in self._tween_made():
            self._drop_statement(statement, "tween_start", "map:diff:method:Tween.interpolate_property")
        elif IDENT.match(receiver):
            self.replace(statement, f"if {receiver} and {receiver}.is_valid(): {receiver}.play()", "tween_start",
                         _tween_cite(), 0.8)
        else:
            self.manual_item(call, "tween", f"{receiver}.start() with no tween made here",
                             "Godot 4 tweens start by themselves when made with create_tween()", _tween_cite())
        return True

    def _tween_stop(self, call: ts.Node, chain: ts.Node | None, owner: str, name: str, new: str) -> bool:
        receiver = self._tween_receiver(call, chain, owner)
        statement = self._statement_of(call, chain) if receiver is not None else None
        if receiver is None:
            return False
        variable = self._tween_made().get(receiver, receiver if IDENT.match(receiver) else None)
        if statement is None or variable is None:
            return self._tween_left(call, chain, owner, name)
        guard = f"{variable}.is_valid()" if new == "play" else variable
        self.replace(statement, f"if {guard}: {variable}.{new}()", "tween_stop", _tween_cite(), 0.8)
        return True

    def _tween_is_active(self, call: ts.Node, chain: ts.Node | None, owner: str, name: str) -> bool:
        receiver = self._tween_receiver(call, chain, owner)
        if receiver is None:
            return False
        variable = self._tween_made().get(receiver, receiver if IDENT.match(receiver) else None)
        if variable is None:
            return self._tween_left(call, chain, owner, name)
        self.edit(receiver_start(chain), call.end_point, f"({variable} != null and {variable}.is_running())",
                  "tween_state", _tween_cite(), 0.85)
        return True

    def _tween_left(self, call: ts.Node, chain: ts.Node | None, owner: str, name: str) -> bool:
        if owner != "Tween" or self._tween_godot4():
            return False
        self.manual_item(call, "tween", f"Tween.{name}(): Godot 4's Tween has no such call here",
                         "Godot 4 makes a Tween per animation with create_tween(); see custom_step(), kill(), "
                         "set_loops(), set_speed_scale() on it", _tween_cite())
        return True

    # -- the variable that held the node ---------------------------------------------------------

    def on_onready_variable_statement(self, node: ts.Node) -> None:
        if not self._tween_declaration(node):
            super().on_onready_variable_statement(node)

    def on_variable_statement(self, node: ts.Node) -> None:
        if not self._tween_declaration(node):
            super().on_variable_statement(node)

    def _tween_declaration(self, node: ts.Node) -> bool:
        """`onready var tween = $Tween` / `var tween := Tween.new()` -> `var tween: Tween` (made later)."""
        name = node.child_by_field_name("name")
        value = node.named_children[-1] if node.named_children else None
        if name is None or value is None or value.id == name.id or self._tween_godot4():
            return False
        while value.type in ("cast", "as_pattern", "binary_operator") and value.named_children:
            value = value.named_children[0]  # `$Tween as Tween`
        text = text_of(value)
        node_value = value.type == "get_node" or text.startswith("get_node(")
        if not (node_value and self.type_of(value) == "Tween" or re.fullmatch(r"Tween\s*\.\s*new\(\s*\)", text)):
            return False
        self.replace(node, f"var {text_of(name)}: Tween", "tween_variable", _tween_cite(), 0.85)
        return True

    def call_add_child(self, call: ts.Node, chain: ts.Node | None, owner: str) -> bool:
        """`add_child(tween)` of a `Tween.new()`: a Godot 4 tween is no node."""
        args = args_of(call)
        statement = self._statement_of(call, chain)
        if args and statement is not None and self.type_of(args[0]) == "Tween" and not self._tween_godot4():
            self._drop_statement(statement, "tween_variable", "map:diff:method:Tween.interpolate_property")
            return True
        return False

    def call_queue_free(self, call: ts.Node, chain: ts.Node | None, owner: str) -> bool:
        receiver = self._tween_receiver(call, chain, owner)
        if receiver is None:
            return False
        return self._tween_stop(call, chain, owner, "queue_free", "kill")
