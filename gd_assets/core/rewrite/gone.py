"""Godot 3 names Godot 4 lacks that no other rule rewrote: a property read through the accessors both
references document, a scene-property row applied to code, else a manual item with the name's answer
(answers.py), so that no use of a gone engine name is left unsaid."""

from __future__ import annotations

import tree_sitter as ts

from gd_assets.core.cues import shims_available
from gd_assets.core.rewrite.behaviour import SHIM_MEMBERS
from gd_assets.core.rewrite.tree import ATOMIC, args_of, receiver_start, text_of

# RigidBody's Godot 3 mode -> the Godot 4 properties that say the same ({c}: the body's Godot 4 class).
RIGID_MODES = {"MODE_RIGID": ("freeze = false",), "MODE_STATIC": ("freeze_mode = {c}.FREEZE_MODE_STATIC", "freeze = true"),
               "MODE_KINEMATIC": ("freeze_mode = {c}.FREEZE_MODE_KINEMATIC", "freeze = true"),
               "MODE_CHARACTER": ("lock_rotation = true", "freeze = false")}
# Viewport settings Godot 4 dropped with nothing to set in their place: it updates its worlds itself, sizes a
# viewport's buffers by what it draws and always renders to its texture. A statement that only writes or calls
# one goes (what the human port of Material Maker did by hand).
VIEWPORT_DROPPED = {"update_worlds", "usage", "render_direct_to_screen"}
# Writes of a literal that Godot 4 does with a call (`camera.current = true` -> `camera.make_current()`).
WRITE_CALLS = {("Camera2D", "current", "true"): "make_current()", ("Camera", "current", "true"): "make_current()"}


class GoneRules:
    """Answers for engine names Godot 4 lacks (see the module docstring)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.gone_seen: list[tuple[ts.Node, str, str, str, bool]] = []  # node, kind, Godot 3 class, name

    def gone_member(self, node: ts.Node, kind: str, name: str, receiver: str) -> None:
        """`name` of `kind` read on engine class `receiver`, with no rename: an accessor, a scene-property row,
        or a note for the manual item made once the fragment is walked."""
        if name in SHIM_MEMBERS.get(receiver, ()) and receiver in shims_available(self.scope):
            return  # the script's own class of that name has it
        surface = self.rules.surface
        owner3 = surface.gone(receiver, name, kind)
        if owner3 is None and kind == "property":  # `Environment.SSAO_BLUR_1x1`: a constant not in capitals
            kind, owner3 = "constant", surface.gone(receiver, name, "constant")
        if owner3 is None:
            return
        if owner3 == "Viewport" and self._viewport_setting(node, kind, name):
            return
        if kind == "property" and self._accessor(node, name, receiver, owner3):
            return
        base4 = surface.class4(owner3)
        if owner3 != receiver and base4 is not None and surface.kept(base4, name, kind):
            # `Tween.get_parent()`: Node's method is Godot 4's too, but Godot 4's Tween is no Node
            self.note_gone(node, "base_changed", f"{receiver}:{owner3}", name)
            return
        self.note_gone(node, kind, owner3, name)

    def _viewport_setting(self, node: ts.Node, kind: str, name: str) -> bool:
        """`hdr = true` -> `use_hdr_2d = true`: Godot 4's float framebuffer for a viewport's 2D, as
        `viewport_set_hdr` becomes (its 3D is HDR always); a statement that only writes or calls one of
        VIEWPORT_DROPPED goes. True when settled here."""
        if kind == "property" and name == "hdr":
            self.replace(node, "use_hdr_2d", "viewport_hdr",
                         self.rules.cite_member("4", "Viewport", "property", "use_hdr_2d"), 0.8)
            return True
        if name not in VIEWPORT_DROPPED or node.parent is None:
            return False
        if kind == "method":   # `update_worlds()`, `vp.update_worlds()`: the call is the whole statement
            call = node.parent
            statement = None if args_of(call) else \
                self._statement_of(call, call.parent if call.type == "attribute_call" else None)
        else:                  # `usage = ...`, `vp.usage = ...`
            written = self._assignment_of(node)
            statement = written.parent if written is not None else None
        if statement is None or statement.type != "expression_statement":
            return False
        self._drop_statement(statement, "viewport_setting_removed", f"map:answer:Viewport.{name}")
        return True

    def note_gone(self, node: ts.Node, kind: str, cls: str, name: str, inside_edit: bool = False) -> None:
        """Remember a gone name for `answer_gone`; `inside_edit`: an edit around it (a `connect` rewritten)
        keeps the name as it was, so the edit does not answer for it."""
        self.gone_seen.append((node, kind, cls, name, inside_edit))

    def answer_gone(self) -> None:
        """A manual item for each noted name that no edit of the fragment touched."""
        for node, kind, cls, name, inside_edit in self.gone_seen:
            a, b = node.start_point, node.end_point
            if not inside_edit and any(p.start < b and a < p.end or p.start == p.end and a <= p.start <= b
                                       for p in self.pending):
                continue
            if kind == "base_changed":
                receiver, owner3 = cls.split(":", 1)
                parent4 = self.rules.surface.parents.get(("4", self.rules.surface.class4(receiver) or receiver))
                self.manual_item(node, "base_changed", f"{receiver}.{name}: Godot 4's {receiver} is no {owner3}",
                                 f"{owner3}.{name} is still Godot 4's, but {receiver} derives from {parent4 or 'Object'} "
                                 f"there: this value (or script) needs a {owner3} of its own",
                                 self.rules.cite(f"map:diff:class:{receiver}"), self._class_doc(receiver))
                continue
            answer = self.rules.gone_answer(kind, cls, name)
            self.manual_item(node, answer.kind, answer.what, answer.why, *answer.cites)

    def _class_doc(self, cls: str) -> dict | None:
        """The Godot 4 class reference page of `cls` (what it derives from)."""
        if not self.rules.surface.has_class("4", cls):
            return None
        return {"table": "docs_chunks", "id": f"docs:4:{cls}.class", "title": f"{cls} (Godot 4 class)"}

    def call_get_simple_path(self, call: ts.Node, chain: ts.Node | None, owner: str) -> bool:
        """`nav.get_simple_path(a, b)` of a Navigation2D / Navigation node, which Godot 4 removed: the path
        from the world's navigation map, as the node's regions give it."""
        dim = {"Navigation2D": "2d", "Navigation": "3d"}.get(owner)
        args = args_of(call)
        if dim is None or len(args) < 2:
            return False
        base = self.render_until(chain, call) + "." if chain is not None else ""
        optimize = self.render(args[2]) if len(args) > 2 else "true"
        new = (f"NavigationServer{dim.upper()}.map_get_path({base}get_world_{dim}().navigation_map, "
               f"{self.render(args[0])}, {self.render(args[1])}, {optimize})")
        cite = self.rules.cite(f"map:diff:class:{owner}") or self.rules.cite(f"map:answer:{owner}.*")
        self.edit(receiver_start(chain) if chain is not None else call.start_point, call.end_point, new,
                  "navigation_path", cite, 0.85)
        return True

    def call_set_screen_stretch(self, call: ts.Node, chain: ts.Node | None, owner: str) -> bool:
        """`get_tree().set_screen_stretch(mode, aspect, size[, shrink])`: Godot 4 scales the root window's content."""
        args = args_of(call)
        statement = (chain or call).parent
        indent = self.indent_of(statement) if statement is not None else None
        if owner != "SceneTree" or len(args) < 3 or statement.type != "expression_statement" or indent is None:
            return False
        root = (self.render_until(chain, call) + "." if chain is not None else "") + "root"
        lines = [f"{root}.content_scale_mode = {self.render(args[0])}", f"{root}.content_scale_aspect = {self.render(args[1])}",
                 f"{root}.content_scale_size = Vector2i({self.render(args[2])})"]
        if len(args) > 3:  # Godot 3 divided the 2D size by the shrink, Godot 4 multiplies the content by the factor
            lines.append(f"{root}.content_scale_factor = {self.render(args[3])}")
        self.replace(statement, f"\n{indent}".join(lines), "screen_stretch",
                     self.rules.cite("map:answer:SceneTree.set_screen_stretch"), 0.85)
        return True

    def _rigid_mode(self, statement: ts.Node, prefix: str, owner3: str, value: ts.Node) -> bool:
        """`body.mode = RigidBody2D.MODE_STATIC` -> `body.freeze_mode = ...` and `body.freeze = true`."""
        words = RIGID_MODES.get(text_of(value).rpartition(".")[2])
        indent = self.indent_of(statement)
        if words is None or indent is None:
            return False
        cls4 = self.rules.in4(owner3)
        new = f"\n{indent}".join(prefix + w.format(c=cls4) for w in words)
        self.replace(statement, new, "rigid_mode", self.rules.cite(f"map:answer:{owner3}.mode"), 0.85)
        return True

    # -- properties ---------------------------------------------------------------------------------

    def _assignment_of(self, node: ts.Node) -> ts.Node | None:
        """The assignment whose target ends with `node` (`x.p = v`, `p = v`), if any."""
        target = node.parent if node.parent is not None and node.parent.type == "attribute" else node
        if target is not node and target.children[-1].id != node.id:
            return None
        statement = target.parent
        if statement is not None and statement.type in ("assignment", "augmented_assignment") and \
                statement.children[0].id == target.id:
            return statement
        return None

    # value rules of scene-property rows (corpora_build/scene_properties.yaml), applied to code: reads and writes
    VALUE_RULES = ("reciprocal", "not", "true_to:", "false_to:", "double")
    # what wraps a value written (Godot 4's from Godot 3's) and one read back (Godot 3's from Godot 4's)
    VALUE_WRAPS = {"reciprocal": (("1.0 / (", ")"), ("(1.0 / ", ")")), "not": (("not (", ")"), ("(not ", ")")),
                   "double": (("(", ") * 2"), ("(", " / 2)"))}
    # ... and written around an operand that needs no parentheses (`size = Vector2(9, 19) * 2`)
    ATOMIC_WRITES = {"reciprocal": ("1.0 / ", ""), "not": ("not ", ""), "double": ("", " * 2")}

    def written_wrap(self, rule: str, value: ts.Node) -> tuple[str, str]:
        """What goes before and after a value written under a value rule (`v * 2` needs no brackets after a
        product or quotient either: the operators group from the left)."""
        product = value.type == "binary_operator" and len(value.children) == 3 and \
            text_of(value.children[1]) in ("*", "/")
        return self.ATOMIC_WRITES[rule] if value.type in ATOMIC or rule == "double" and product else \
            self.VALUE_WRAPS[rule][0]

    def write_value(self, rule: str, value: ts.Node, edit_rule: str, cite, after_equals=None) -> None:
        """The value written under a value rule, converted in place; `v / 2` doubled is `v`. With `after_equals`
        (the end of an assignment's `=`), what goes before the value replaces the space there, so that a read of
        the same property at the value's start (`box.extents = box.extents * 2`) keeps its own edit."""
        parts = value.children
        if rule == "double" and value.type == "binary_operator" and len(parts) == 3 and text_of(parts[1]) == "/" \
                and text_of(parts[2]) in ("2", "2.0"):
            self.edit(parts[0].end_point, value.end_point, "", edit_rule, cite, 0.85)
            return
        before, after = self.written_wrap(rule, value)
        self._around(value, before, after, edit_rule, cite, after_equals)

    def _around(self, value: ts.Node, before: str, after: str, rule: str, cite, after_equals=None) -> None:
        """`before` and `after` around a value (see write_value for `after_equals`)."""
        self.edit(after_equals or value.start_point, value.start_point, (" " if after_equals else "") + before,
                  rule, cite, 0.85)
        self.edit(value.end_point, value.end_point, after, rule, cite, 0.85)

    def wrap_read(self, node: ts.Node, before: str, after: str, rule: str, cite) -> None:
        """`before` and `after` around a member read with its receiver (`(box.size / 2)`, `(box.get_size() / 2)`)."""
        chain = node.parent if node.parent is not None and node.parent.type == "attribute" else node
        self.edit(receiver_start(chain), receiver_start(chain), before, rule, cite, 0.85)
        self.edit(node.end_point, node.end_point, after, rule, cite, 0.85)

    def value_rule(self, node: ts.Node, row) -> bool:
        """The value edits of a property Godot 4 keeps with another meaning under `row.new` (the name itself is
        the caller's edit): `reciprocal` (OpenSimplexNoise's period is FastNoiseLite's frequency), `not`
        (Camera2D's `rotating` is `ignore_rotation`), `true_to:V` (TextureRect's `expand` became a mode),
        `false_to:V` (ScrollContainer's `scroll_vertical_enabled`: V when off, Godot 4's default mode when on),
        `double` (RectangleShape2D's `extents` is half of Godot 4's `size`).
        A write converts the value written, a read converts the value read back; True when handled."""
        rule = row.rule
        if not rule.startswith(self.VALUE_RULES):
            return False
        if rule.startswith("false_to:"):
            return self._false_to(node, row, rule.removeprefix("false_to:"))
        statement = self._assignment_of(node)
        cite, edit_rule = row.cite(), "property_" + rule.split(":")[0]
        if statement is not None and text_of(statement.children[1]) != "=":
            self.manual_item(statement, "property_value", f"`{text_of(statement)}`",
                             f"Godot 4 keeps this value with another meaning in `{row.new}` ({row.title}): "
                             f"compute the Godot 3 value, then convert it as the row says", cite)
            return True
        if statement is None:  # a read: the Godot 3 value from the Godot 4 one
            before, after = self.VALUE_WRAPS[rule][1] if rule in self.VALUE_WRAPS else \
                ("(", f" == {rule.removeprefix('true_to:')})")
            self.wrap_read(node, before, after, edit_rule, cite)
            return True
        value = statement.children[-1]
        literal = text_of(value)
        if rule == "not" and literal in ("true", "false"):
            self.replace(value, "false" if literal == "true" else "true", edit_rule, cite, 0.85)
            return True
        if rule.startswith("true_to:"):
            when_true = rule.removeprefix("true_to:")
            if literal in ("true", "false") and (literal == "true" or when_true != "0"):
                self.replace(value, when_true if literal == "true" else "0", edit_rule, cite, 0.85)
                return True
            if when_true == "0":  # false is a mode other than 0, which the row does not name
                self.manual_item(statement, "property_value", f"`{text_of(statement)}`",
                                 f"Godot 4 made `{row.new}` a mode: {when_true} where the Godot 3 flag was true; "
                                 f"pick the mode for false by hand", cite)
                return True
            before, after = f"{when_true} if (", ") else 0"
        else:
            self.write_value(rule, value, edit_rule, cite, statement.children[1].end_point)
            return True
        self._around(value, before, after, edit_rule, cite, statement.children[1].end_point)
        return True

    def _false_to(self, node: ts.Node, row, when_false: str) -> bool:
        """`sc.scroll_vertical_enabled = on` -> `sc.vertical_scroll_mode = 1 if (on) else 0` (1: Godot 4's default,
        the mode the flag left on); a read -> `(sc.vertical_scroll_mode != 0)`."""
        cls4 = self.rules.in4(row.cls)
        owner = self.rules.surface.owner_of("4", cls4, row.new, ("property",))
        when_true = self.rules.surface.defaults.get(("4", owner, row.new)) if owner else None
        statement = self._assignment_of(node)
        cite, edit_rule = row.cite(), "property_false_to"
        if when_true is None or when_true == when_false or statement is not None and \
                text_of(statement.children[1]) != "=":
            self.manual_item(statement or node, "property_value", f"`{text_of(statement or node)}`",
                             f"Godot 4 made `{row.new}` a mode: {when_false} where the Godot 3 flag was false; pick the "
                             f"mode for true by hand", cite)
            return True
        if statement is None:
            self.wrap_read(node, "(", f" != {when_false})", edit_rule, cite)
            return True
        value = statement.children[-1]
        if text_of(value) in ("true", "false"):
            self.replace(value, when_true if text_of(value) == "true" else when_false, edit_rule, cite, 0.85)
            return True
        self._around(statement.children[-1], f"{when_true} if (", f") else {when_false}", edit_rule, cite,
                     statement.children[1].end_point)
        return True

    def _accessor(self, node: ts.Node, name: str, receiver: str, owner3: str) -> bool:
        """`body.collider` -> `body.get_collider()`: Godot 4 kept the accessor the Godot 3 property documented
        (or a property with the same getter, under another name); else a scene-property row's new name."""
        surface = self.rules.surface
        cls4 = self.rules.in4(receiver)
        setter, getter = surface.accessors.get(("3", owner3, name), ("", ""))
        if surface.class_arity.get(("3", owner3, getter), (0, 0))[0] > 0:
            setter = getter = ""  # an indexed accessor (`get_param(PARAM_ANGLE)`): not the property alone
        cite = self.rules.cite(f"map:diff:property:{owner3}.{name}")
        statement = self._assignment_of(node)
        plain = statement is not None and text_of(statement.children[1]) == "="
        chain = node.parent if node.parent is not None and node.parent.type == "attribute" else node
        prefix = self.render_until(chain, node) + "." if chain is not node else ""
        if plain and name == "mode" and owner3 in ("RigidBody2D", "RigidBody") and \
                self._rigid_mode(statement, prefix, owner3, statement.children[-1]):
            return True
        if plain and (owner3, name, text_of(statement.children[-1])) in WRITE_CALLS:
            self.replace(statement, prefix + WRITE_CALLS[owner3, name, text_of(statement.children[-1])],
                         "property_accessor", cite, 0.85)
            return True
        renamed = surface.property_by_accessor(cls4, getter) if getter else None
        if renamed is not None:
            self.replace(node, renamed, "property_rename", cite, 0.85)
            return True
        if plain and self._callable4(cls4, setter, 1):  # the value keeps its own edits: only its ends change
            value = statement.children[-1]
            self.edit(statement.start_point, value.start_point, f"{prefix}{setter}(", "property_accessor", cite, 0.85)
            self.edit(value.end_point, value.end_point, ")", "property_accessor", cite, 0.85)
            return True
        if statement is None and self._callable4(cls4, getter, 0):
            self.replace(node, f"{getter}()", "property_accessor", cite, 0.85)
            return True
        row = self.rules.scene_property(receiver, name)
        if row is None or not row.new or row.new == name or not surface.kept(cls4, row.new, "property"):
            return False
        if row.rule and not row.rule.startswith(self.VALUE_RULES):
            return False
        self.replace(node, row.new, "property_rename", row.cite(), 0.85)
        self.value_rule(node, row)
        return True

    def _callable4(self, cls4: str, method: str, arguments: int) -> bool:
        """Whether Godot 4's `cls4` has `method` taking `arguments` arguments (no accessor starting with `_`)."""
        if not method or method.startswith("_"):
            return False
        owner = self.rules.surface.owner_of("4", cls4, method)
        low, high = self.rules.surface.class_arity.get(("4", owner or "", method), (-1, -1))
        return low <= arguments <= high
