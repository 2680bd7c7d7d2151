"""Renames of engine names: classes, globals, members by receiver (the api_mapping rows)."""

from __future__ import annotations

import tree_sitter as ts

from gd_assets.core.cues import WHOLE_RENAMED, shims_available, signal_use, value_used, variable_hides_method
from gd_assets.core.receivers import is_engine, is_project
from gd_assets.core.rewrite.behaviour import SHIM_MEMBERS
from gd_assets.core.rewrite.rules import MOVED_SETTERS
from gd_assets.core.rewrite.tree import args_of, bare_reference, receiver_start, text_of

# Godot 3 flags that became enums in Godot 4, by the Godot 4 name: (the value for true, for false)
BOOL_TO_ENUM = {"autowrap_mode": ("TextServer.AUTOWRAP_WORD_SMART", "TextServer.AUTOWRAP_OFF"),
                "set_autowrap_mode": ("TextServer.AUTOWRAP_WORD_SMART", "TextServer.AUTOWRAP_OFF")}


class NameRules:
    """Renames of engine names: classes, globals, members by receiver (the api_mapping rows)."""

    def on_identifier(self, node: ts.Node) -> None:
        parent = node.parent
        name = text_of(node)
        if name[:1].isupper() and (parent is None or parent.type not in ("attribute", "attribute_call") or
                                   parent.children[0].id == node.id) and self.shadowing_name(node):
            return
        if parent is None or parent.type in ("attribute", "attribute_call", "attribute_subscript"):
            if parent is not None and parent.type == "attribute" and parent.children[0].id == node.id:
                if not self._class_name(node, name) and not name[:1].isupper() and not signal_use(parent):
                    self._implicit_property(node, name)  # `rect_size.x` on the script's own Control
            return
        if parent.type == "call" and parent.children[0].id == node.id:
            return  # on_call, once the arguments' own edits are made
        if parent.type in ("parameters", "typed_parameter", "name", "enumerator") or \
                parent.type in ("default_parameter", "typed_default_parameter") and parent.children[0].id == node.id or \
                parent.type == "for_statement" and parent.child_by_field_name("right") != node:
            return  # a name being declared (a default value or a loop's list is read: `button = BUTTON_LEFT`)
        if parent.type == "expression_statement" and name == "tool" and node.start_point[1] == 0:
            first = parent
            while first.prev_named_sibling is not None and first.prev_named_sibling.type in (
                    "extends_statement", "class_name_statement", "comment"):
                first = first.prev_named_sibling
            while first.type == "comment" and first.next_named_sibling is not None:
                first = first.next_named_sibling
            if first.id == parent.id:
                self.replace(node, "@tool", "tool", self.rules.cite("tool"))
            else:  # `extends X` then `tool`: Godot 4 wants its annotations first
                there = next((p for p in self.pending if p.start == p.end == first.start_point), None)
                if there is not None:
                    self.pending.remove(there)
                self.edit(first.start_point, first.start_point, "@tool\n" + (there.new if there else ""), "tool",
                          self.rules.cite("tool"))  # with an `@icon` already moved there
                self.edit(parent.prev_sibling.end_point, parent.end_point, "", "tool", self.rules.cite("tool"))
            return
        if name[:1].isupper():
            if self._class_name(node, name):
                return
            if not self._global_constant(node, name) and name.isupper() and self.scope is not None:
                owner = self.implicit_owner(name)  # `NOTIFICATION_WM_QUIT_REQUEST`: a constant of its own class
                if is_engine(owner) and not self._moved_constant(node, name, owner) and \
                        not self._inherited_constant(node, name, owner):
                    self._member(node, "constant", name, owner)
        else:
            self._implicit_property(node, name)

    def _popup_type(self, node: ts.Node) -> bool:
        """`dialog: Popup`, `x as Popup`, `x is Popup` -> `Window`: Godot 3's dialogs were Popups, Godot 4's
        are Windows (only PopupMenu and PopupPanel are still Popups), so a value typed Popup took them all."""
        parent = node.parent
        typed = parent.type == "type" and parent.parent is not None and parent.parent.type != "extends_statement"
        tested = parent.type == "binary_operator" and parent.children[-1].id == node.id and \
            text_of(parent.children[1]) in ("is", "as")
        if not (typed or tested) or self.is_project_name("Popup"):
            return False
        self.replace(node, "Window", "popup_type", {"table": "docs_chunks", "id": "docs:4:AcceptDialog.class",
                                                   "title": "AcceptDialog (Godot 4 class, a Window)"}, 0.85)
        return True

    def _implicit_property(self, node: ts.Node, name: str) -> None:
        """`rect_position` in a Control script: a property of its own class, renamed on it. A name its
        class does not document in Godot 3 is not the class's (a local the fragment does not show)."""
        if self.scope is not None and name not in self.scope.locals and name != "self":
            if self.shadowing_name(node) or self.window_self_property(node, name):
                return  # `scale` the script's own variable, which Godot 4's Control took
            owner = self.implicit_owner(name)
            if is_engine(owner) and self.rules.surface.owner_of("3", owner, name) is not None:
                self._member(node, "property", name, owner)

    def _class_name(self, node: ts.Node, name: str) -> bool:
        if name in SHIM_MEMBERS and name in shims_available(self.scope):
            return True  # the script's own class of that name (behaviour.SHIMS)
        if name == "Popup" and self._popup_type(node):
            return True
        if name in ("File", "Directory", "Tween") and node.parent is not None and node.parent.type == "attribute":
            return self._special_class(node, name)
        if name in ("File", "Directory") and node.parent is not None and node.parent.type == "type" and \
                not self.is_project_name(name):  # `f: File` -> `f: FileAccess`
            self.replace(node, "FileAccess" if name == "File" else "DirAccess", "class_rename",
                         self.rules.cite("file" if name == "File" else "directory"), 0.9)
            return True
        extends = node.parent is not None and node.parent.type == "type" and node.parent.parent is not None and \
            node.parent.parent.type == "extends_statement"
        row = self.rules.class_rename(name)
        if row is None and (not self.rules.surface.has_class("4", name) or extends and name == "Viewport"):
            row = self.rules.scene_class_rename(name) or self.rules.curated_class(name)  # `NoiseTexture2D`, `Callable`
        if row is not None and self._constructed_subclass(node, name, row.new):
            self.replace(node, row.new, "class_rename", row.cite(), 0.9)  # `Light2D.new()` -> `PointLight2D.new()`
            return True
        if row is None and not self.is_project_name(name) and self.rules.surface.has_class("3", name) and \
                self.rules.surface.class4(name) is None and (self.scope is None or self.scope.class_type(name) in (None, name)):
            self.note_gone(node, "class", name, name)
            return True
        if row is not None and name in WHOLE_RENAMED and self._type_position(node) and not self.is_project_name(name) \
                and (self.scope is None or self.scope.class_type(name) in (None, name)):
            self.replace(node, row.new, "class_rename", row.cite(), 0.9)  # `t: Texture` -> `t: Texture2D`
            return True
        if row is None or self.is_project_name(name) or name in ("File", "Directory", "Tween") or (
                self.rules.surface.has_class("4", name) and not (extends and name == "Viewport")):
            # `Viewport`, `Texture`: Godot 4 still has the class (a base of the renamed one); a script that
            # extends Viewport goes with its node, which the scene rewrite makes a SubViewport
            return False
        if self.scope is not None and self.scope.class_type(name) not in (None, name):
            return False
        self.replace(node, row.new, "class_rename", row.cite(), 0.95)
        return True

    @staticmethod
    def _type_position(node: ts.Node) -> bool:
        """`x: T`, `-> T`, `extends T`, `x is T`, `x as T`, `export(T)`: where a name stands for a type."""
        parent = node.parent
        if parent is None:
            return False
        if parent.type == "type":
            return True
        if parent.type == "binary_operator":
            return parent.children[-1].id == node.id and text_of(parent.children[1]) in ("is", "as")
        return parent.type == "arguments" and parent.parent is not None and \
            parent.parent.type == "export_variable_statement" and parent.named_children[0].id == node.id

    def _constructed_subclass(self, node: ts.Node, name: str, new: str) -> bool:
        """`Light2D.new()`: Godot 4 kept the name for an abstract base of the class the map renames it to, so
        what Godot 3 made is the subclass (types and `is` checks keep the base)."""
        parent = node.parent
        if parent is None or parent.type != "attribute" or parent.children[0].id != node.id or new == name:
            return False
        nxt = next((c for c in parent.children[1:] if c.type not in (".", "line_continuation")), None)
        return nxt is not None and nxt.type == "attribute_call" and text_of(nxt.children[0]) == "new" and \
            self.rules.surface.has_class("4", name) and name in self.rules.surface.ancestors("4", new)[1:]

    def _special_class(self, node: ts.Node, name: str) -> bool:
        """`File.READ` -> `FileAccess.READ`; `File.new()`/`Directory.new()`/`Tween.new()` are handled by
        their statement (or left to people)."""
        parent = node.parent
        nxt = next((c for c in parent.children[1:] if c.type not in (".", "line_continuation")), None)
        if nxt is None or self.is_project_name(name):
            return False
        if nxt.type == "identifier" and text_of(nxt).isupper() and name != "Tween":
            self.replace(node, "FileAccess" if name == "File" else "DirAccess", "class_rename",
                         self.rules.cite("file" if name == "File" else "directory"), 0.9)
            return True
        if nxt.type == "attribute_call" and text_of(nxt.children[0]) == "new":
            declared = parent.parent is not None and parent.parent.type in ("variable_statement",
                                                                             "onready_variable_statement")
            if name == "Tween":
                if declared:  # see tweens.py
                    return False
                self.manual_item(node, "tween", "Tween.new(): Tween is no longer a node",
                                 "Godot 4 creates tweens with create_tween() and chains tween_property steps; "
                                 "the timing calls must be rewritten by hand", self.rules.cite("tween"))
            elif not self.file_new(node, name):
                self.manual_item(node, "file_access", f"{name}.new(): use {'FileAccess' if name == 'File' else 'DirAccess'}.open()",
                                 "Godot 4 opens files and folders with a static open() that returns the object "
                                 "(null on failure; get_open_error() tells why)",
                                 self.rules.cite("file" if name == "File" else "directory"))
        return False

    def _global_constant(self, node: ts.Node, name: str) -> bool:
        if self.is_project_name(name):
            return True
        row = self.rules.global_rename("constant", name)
        if row is not None:
            self.replace(node, row.new, "global_rename", row.cite(), 0.95)
        elif self.rules.surface.is_global_constant("3", name) and not self.rules.surface.is_global_constant("4", name):
            self.note_gone(node, "global_constant", "@GlobalScope", name)
            return True
        return row is not None

    def on_call(self, node: ts.Node) -> None:
        """A bare call (`draw_string(...)`), after its arguments: a rule rewriting the whole call
        renders them with their own edits."""
        callee = node.children[0]
        if node.type == "call" and callee.type == "identifier":  # (SyntaxRules sends attribute calls here too)
            self._bare_call(callee, node, text_of(callee))
        super().on_call(node)

    def _bare_call(self, node: ts.Node, call: ts.Node, name: str) -> None:
        special = self.call_rule(name)
        owner = self.implicit_owner(name, called=True)
        self.await_coroutine(call, owner, name)
        if self.override_call(node, owner, name) or self.window_self_call(node, call, name):
            return
        if special is not None and not is_project(owner) and special(call, None, owner):
            return
        if is_project(owner) or (self.scope is not None and name in self.scope.locals):
            return
        receiver = self.engine_receiver(owner)
        if receiver is False:
            return
        if name[:1].isupper():
            self._class_name(node, name)
            return
        row = self.rules.member_rename("method", name, receiver) if receiver else None
        if row is None and receiver is None:
            row = self.rules.global_rename("function", name) or self.rules.member_rename("method", name, None)
        if row is not None:
            self.replace(node, row.new, "method_rename" if receiver else "global_rename", row.cite(),
                         0.95 if receiver or not row.classes else 0.75)
        elif receiver and self._accessor_call(node, name, receiver):
            return
        elif receiver and self.rules.surface.gone(receiver, name, "method"):
            self.gone_member(node, "method", name, receiver)
        elif self.rules.surface.is_global_function("3", name) and not self.rules.surface.is_global_function("4", name):
            self.note_gone(node, "global_function", "@GDScript", name)
        elif variable_hides_method(name, owner, self.scope):   # `var translate` beside Node2D's translate()
            native = self.rules.surface.owner_of("4", self.rules.in4(owner), name, ("method",))
            if native:
                self.replace(node, "super." + name, "hidden_method", self.rules.cite_member("4", native, "method", name),
                             0.85)

    # attribute chains ------------------------------------------------------------------------------

    def on_attribute(self, node: ts.Node) -> None:
        if self.os_window(node):
            return
        base = node.children[0]
        members = [c for c in node.children[1:] if c.type not in (".", "line_continuation", "comment")]
        if members and base.type == "identifier" and self._moved(node, base, members[0]):
            if members[0].type == "attribute_call":  # `JavaScript.create_callback(self, "m")`: its arguments too
                self._callable_pair(members[0], text_of(base), text_of(members[0].children[0]))
            members = members[1:]
        for member in members:
            owner = self.chain_owner(node, member)
            if member.type == "attribute_call":
                name = text_of(member.children[0])
                if member is node.children[-1]:
                    self.await_coroutine(node, owner, name)
                if self.override_call(member.children[0], owner, name):
                    continue
                special = self.call_rule(name)
                if special is not None and not is_project(owner) and special(member, node, owner):
                    continue
                self._member(member.children[0], "method", name, owner)
            elif member.type == "identifier":
                name = text_of(member)
                if is_project(owner) and self.shadowing_name(member, owner):
                    continue
                if base.type == "identifier" and text_of(base) == "Color" and member is members[0]:
                    row = next(iter(self.rules.renames.get(("color", name), [])), None)
                    if row is not None and not self.is_project_name("Color"):
                        self.replace(member, f"{row.new}", "color_rename", row.cite(), 0.95)
                        continue
                following = members[members.index(member) + 1] if member is not members[-1] else None
                if following is not None and following.type == "attribute_call" and \
                        text_of(following.children[0]) in ("connect", "disconnect", "is_connected", "emit"):
                    continue  # `button.pressed.connect(...)`: a signal, not the Godot 3 property
                if name == "size" and owner == "Viewport" and self.viewport_size(node, member):
                    continue
                kind = "constant" if name.isupper() else "property"
                self._member(member, kind, name, owner)

    def _moved(self, chain: ts.Node, base: ts.Node, first: ts.Node) -> bool:
        """`OS.get_ticks_msec()` -> `Time.get_ticks_msec()`: a member Godot 4 moved to another class."""
        cls = text_of(base)
        name = text_of(first.children[0]) if first.type == "attribute_call" else \
            text_of(first) if first.type == "identifier" else None
        if name is None or not cls[:1].isupper() or self.is_project_name(cls):
            return False
        found = self.rules.moved_member(cls, name)
        if found is None:
            return False
        target, cite = found
        parent = chain.parent
        written = parent is not None and parent.type in ("assignment", "augmented_assignment") and \
            parent.children[0].id == chain.id
        if target.endswith("()") and first.type == "identifier" and written and first is chain.children[-1] and \
                text_of(parent.children[1]) == "=" and (cls, name) in MOVED_SETTERS:
            value = parent.children[-1]   # `OS.clipboard = t` -> `DisplayServer.clipboard_set(t)`: two edits, so
            self.edit(receiver_start(chain), value.start_point, f"{MOVED_SETTERS[cls, name]}(", "member_moved", cite, 0.9)
            self.edit(value.end_point, value.end_point, ")", "member_moved", cite, 0.9)  # the value keeps its own
            return True
        if target.endswith("()") and (first.type != "identifier" or written):
            return False  # a write, or a call of what became a method
        end = first.children[0].end_point if first.type == "attribute_call" else first.end_point
        self.edit(base.start_point, end, target, "member_moved", cite, 0.9)
        return True

    def await_coroutine(self, call: ts.Node, owner: str, name: str) -> None:
        """`var code = get_code()` where the project's `get_code` yields -> `var code = await get_code()`."""
        if self.scope is not None and self.scope.is_coroutine(owner, name) and value_used(call):
            self.edit(call.start_point, call.start_point, "await ", "await_coroutine",
                      self.rules.cite("map:diff:class:GDScriptFunctionState") or self.rules.cite("yield"), 0.85)

    def _moved_constant(self, node: ts.Node, name: str, owner: str) -> bool:
        """`ALIGN_LEFT` in a Button script: a constant of its own class that Godot 4 moved elsewhere
        (`HORIZONTAL_ALIGNMENT_LEFT`), as `Button.ALIGN_LEFT` is."""
        owner3 = self.rules.surface.owner_of("3", owner, name, ("constant", "enum"))
        found = self.rules.moved_member(owner3, name) if owner3 is not None else None
        if found is None:
            return False
        self.replace(node, found[0], "member_moved", found[1], 0.9)
        return True

    def _inherited_constant(self, node: ts.Node, name: str, owner: str) -> bool:
        """`SIZE_EXPAND_FILL` in a WindowDialog script: Godot 3's class had it through Control; Godot 4's
        (a Window) does not, so the constant is read on the class that still documents it."""
        surface = self.rules.surface
        owner3 = surface.owner_of("3", owner, name, ("constant", "enum"))
        cls4 = self.rules.in4(owner)
        if owner3 is None or surface.owner_of("4", cls4, name, ("constant", "enum")) is not None:
            return False
        holder = self.rules.in4(owner3)
        if surface.owner_of("4", holder, name, ("constant", "enum")) != holder:
            return False
        self.replace(node, f"{holder}.{name}", "inherited_constant", {
            "table": "docs_chunks", "id": f"docs:4:{holder}.constant.{name}", "title": f"{holder}.{name} (Godot 4 constant)"},
            0.85)
        return True

    def _accessor_call(self, node: ts.Node, name: str, receiver: str) -> bool:
        """`Engine.set_target_fps(30)` -> `Engine.set_max_fps(30)`: the accessor of the renamed property."""
        found = self.rules.accessor_rename(receiver, name)
        if found is not None:
            self.replace(node, found[0], "method_rename", found[1], 0.9)
            return True
        return self._scaled_accessor_call(node, name, receiver)

    def _scaled_accessor_call(self, node: ts.Node, name: str, receiver: str) -> bool:
        """`shape.set_extents(v)` -> `shape.set_size(v * 2)`, `shape.get_extents()` -> `(shape.get_size() / 2)`:
        the accessor of the property a scene-property row renames with a value rule, the value converted."""
        surface = self.rules.surface
        found = surface.accessor_of(receiver, name)
        row = self.rules.scene_property(found[0], found[1]) if found is not None else None
        call = node.parent if node.parent is not None and node.parent.type == "attribute_call" else None
        if row is None or row.rule not in ("double", "reciprocal") or call is None:
            return False
        owner4 = surface.owner_of("4", self.rules.in4(row.cls), row.new, ("property",))
        accessor = surface.accessors.get(("4", owner4, row.new), ("", ""))[found[2]] if owner4 else ""
        args = args_of(call)
        if not accessor or len(args) != (1 if found[2] == 0 else 0):
            return False
        self.replace(node, accessor, "property_" + row.rule, row.cite(), 0.85)
        if found[2] == 0:  # a setter writes
            self.write_value(row.rule, args[0], "property_" + row.rule, row.cite())
            return True
        self.wrap_read(call, *self.VALUE_WRAPS[row.rule][1], "property_" + row.rule, row.cite())  # a getter reads
        return True

    def _member(self, node: ts.Node, kind: str, name: str, owner: str) -> None:
        receiver = self.engine_receiver(owner)
        if receiver is False:
            return
        if kind == "property" and name == "playing" and receiver in ("AnimatedSprite", "AnimatedSprite3D") and \
                self._sprite_playing(node, receiver):
            return
        row = self.rules.member_rename(kind, name, receiver or None)
        if row is None:
            if receiver and not (kind == "method" and self._accessor_call(node, name, receiver)):
                self.gone_member(node, kind, name, receiver)
            return
        # `rect_size.y` beside a parameter named `size`: the renamed member is read through self
        hidden = kind == "property" and self.scope is not None and row.new in self.scope.locals and \
            node.type == "identifier" and bare_reference(node)
        self.replace(node, "self." + row.new if hidden else row.new, "member_rename", row.cite(),
                     0.95 if receiver else 0.7)
        if row.new in BOOL_TO_ENUM:
            self._bool_to_enum(node, row)
        elif kind == "property" and receiver:  # `text_edit.wrap_enabled = on`: the name and the meaning changed
            scene_row = self.rules.scene_property(receiver, name)
            if scene_row is not None and scene_row.new == row.new:
                self.value_rule(node, scene_row)

    def _sprite_playing(self, node: ts.Node, cls: str) -> bool:
        """`sprite.playing = true` -> `sprite.play()` (`false`: `pause()`, which keeps the frame as Godot 3 did);
        a read -> `sprite.is_playing()`: Godot 4's AnimatedSprite2D has no `playing` property."""
        chain = node.parent if node.parent is not None and node.parent.type == "attribute" else None
        if chain is not None and chain.children[-1].id != node.id:
            return False
        prefix = self.render_until(chain, node) + "." if chain is not None else ""
        whole = chain if chain is not None else node
        cls4 = "AnimatedSprite2D" if cls == "AnimatedSprite" else cls
        cite = lambda m: {"table": "docs_chunks", "id": f"docs:4:{cls4}.method.{m}",  # noqa: E731
                          "title": f"{cls4}.{m} (Godot 4 method)"}
        statement = self._assignment_of(node)
        if statement is None:
            self.edit(receiver_start(whole) if chain is not None else whole.start_point, whole.end_point,
                      f"{prefix}is_playing()", "sprite_playing", cite("is_playing"), 0.85)
            return True
        if statement.type != "assignment" or text_of(statement.children[1]) != "=" or \
                statement.parent is None or statement.parent.type != "expression_statement":
            return False
        value = text_of(statement.children[-1]).strip()
        new = {"true": f"{prefix}play()", "false": f"{prefix}pause()"}.get(
            value, f"{prefix}play() if ({self.render(statement.children[-1])}) else {prefix}pause()")
        self.edit(receiver_start(whole) if chain is not None else whole.start_point, statement.end_point, new,
                  "sprite_playing", cite("play" if value != "false" else "pause"), 0.85)
        return True

    def _bool_to_enum(self, node: ts.Node, row) -> None:
        """`label.autowrap = on` -> `label.autowrap_mode = <mode> if on`: Godot 4 turned the flag into an enum."""
        when_true, when_false = BOOL_TO_ENUM[row.new]
        parent = node.parent
        if parent is not None and parent.type == "attribute" and parent.children[-1].id == node.id:
            statement = parent.parent
            value = statement.named_children[-1] if statement is not None and statement.type == "assignment" and \
                statement.named_children[0].id == parent.id and text_of(statement.children[1]) == "=" else None
        elif parent is not None and parent.type == "attribute_call" and len(args_of(parent)) == 1:
            value = args_of(parent)[0]
        else:
            value = None
        if value is None:
            return
        text = text_of(value)
        new = {"true": when_true, "false": when_false}.get(text, f"{when_true} if ({text}) else {when_false}")
        self.replace(value, new, "member_rename", row.cite(), 0.85)
