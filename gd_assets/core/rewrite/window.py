"""Godot 3's `OS.window_*` and friends: the window is a `Window` node (or DisplayServer) in Godot 4."""

from __future__ import annotations

import tree_sitter as ts

from gd_assets.core.receivers import is_project
from gd_assets.core.rewrite.tree import args_of, text_of

VIEWPORT_SIZE_CITE = {"table": "docs_chunks", "id": "docs:4:SubViewport.property.size",
                      "title": "SubViewport.size (Godot 4 property)"}

# property -> the value read in Godot 4
WINDOW = {
    "window_fullscreen": "((get_window().mode == Window.MODE_EXCLUSIVE_FULLSCREEN) or "
                         "(get_window().mode == Window.MODE_FULLSCREEN))",
    "window_maximized": "(get_window().mode == Window.MODE_MAXIMIZED)",
    "window_minimized": "(get_window().mode == Window.MODE_MINIMIZED)",
    "window_resizable": "(not get_window().unresizable)",
    "vsync_enabled": "(DisplayServer.window_get_vsync_mode() != DisplayServer.VSYNC_DISABLED)",
    "window_borderless": "get_window().borderless",
    "window_always_on_top": "get_window().always_on_top",
    "window_size": "Vector2(get_window().size)",  # a Vector2i in Godot 4: Godot 3's arithmetic wants a Vector2
    "window_position": "Vector2(get_window().position)",
    "min_window_size": "Vector2(get_window().min_size)",
    "max_window_size": "Vector2(get_window().max_size)",
    "screen_orientation": "DisplayServer.screen_get_orientation()",
    "window_title": "get_window().title",
    "current_screen": "get_window().current_screen",
    "window_per_pixel_transparency_enabled": "get_window().transparent",
}
# property -> the statement setting it, from the value {v}
SETTERS = {
    "window_resizable": "get_window().unresizable = not ({v})",
    "window_borderless": "get_window().borderless = ({v})",
    "window_always_on_top": "get_window().always_on_top = ({v})",
    "window_size": "get_window().size = {v}",
    "window_position": "get_window().position = {v}",
    "min_window_size": "get_window().min_size = {v}",
    "max_window_size": "get_window().max_size = {v}",
    "screen_orientation": "DisplayServer.screen_set_orientation({v})",
    "window_title": "get_window().title = {v}",
    "current_screen": "get_window().current_screen = {v}",
    "window_per_pixel_transparency_enabled": "get_window().transparent = {v}",
}
# property -> (the statement setting it from {c}, the choice for true, the choice for false)
CHOICES = {
    "window_fullscreen": ("get_window().mode = {c}", "Window.MODE_EXCLUSIVE_FULLSCREEN", "Window.MODE_WINDOWED"),
    "window_maximized": ("get_window().mode = {c}", "Window.MODE_MAXIMIZED", "Window.MODE_WINDOWED"),
    "window_minimized": ("get_window().mode = {c}", "Window.MODE_MINIMIZED", "Window.MODE_WINDOWED"),
    "vsync_enabled": ("DisplayServer.window_set_vsync_mode({c})", "DisplayServer.VSYNC_ENABLED",
                      "DisplayServer.VSYNC_DISABLED"),
}
# accessor method -> (property, is it the setter)
ACCESSORS = {
    **{f"set_{p}": (p, True) for p in WINDOW},
    **{f"is_{p}": (p, False) for p in WINDOW},
    **{f"get_{p}": (p, False) for p in WINDOW},
    "set_use_vsync": ("vsync_enabled", True), "get_borderless_window": ("window_borderless", False),
    "set_borderless_window": ("window_borderless", True),
}
CALLS = {"get_screen_size": "Vector2(DisplayServer.screen_get_size())", "get_screen_count": "DisplayServer.get_screen_count()",
         "get_screen_dpi": "DisplayServer.screen_get_dpi()", "get_current_screen": "get_window().current_screen",
         "center_window": "get_window().move_to_center()",
         # Godot 3's two renderers by number (GLES3 0, GLES2 1); Godot 4's Compatibility renderer is the GLES2 one
         "get_current_video_driver": '(1 if RenderingServer.get_current_rendering_method() == "gl_compatibility" else 0)',
         "get_video_driver_count": "2"}
VIDEO_DRIVERS = {"VIDEO_DRIVER_GLES3": "0", "VIDEO_DRIVER_GLES2": "1"}

# Control calls a popup made on itself -> what its Godot 4 Window answers (the Viewport's or Window's row)
SELF_CALLS = {
    "get_global_mouse_position": ("get_mouse_position()", "docs:4:Viewport.method.get_mouse_position"),
    "get_local_mouse_position": ("get_mouse_position()", "docs:4:Viewport.method.get_mouse_position"),
    "get_focus_owner": ("gui_get_focus_owner()", "docs:4:Viewport.method.gui_get_focus_owner"),
    "get_rect": ("Rect2(position, size)", "docs:4:Window.property.size"),
    "get_minimum_size": ("get_contents_minimum_size()", "docs:4:Window.method.get_contents_minimum_size"),
    "accept_event": ("set_input_as_handled()", "docs:4:Viewport.method.set_input_as_handled"),
}
# a popup's own Control property -> its Window's (a Vector2i, read back as the Vector2 Godot 3 code computes with)
SELF_PROPERTIES = {"rect_min_size": "min_size", "rect_size": "size", "rect_position": "position",
                   "rect_global_position": "position"}


def setter(prop: str, value: str) -> str:
    """The Godot 4 statement setting `prop` to `value` (a literal true/false picks its choice)."""
    if prop in CHOICES:
        statement, when_true, when_false = CHOICES[prop]
        choice = {"true": when_true, "false": when_false}.get(value, f"{when_true} if ({value}) else {when_false}")
        return statement.format(c=choice)
    if prop == "window_resizable" and value in ("true", "false"):
        return f"get_window().unresizable = {'false' if value == 'true' else 'true'}"
    return SETTERS[prop].format(v=value)


class WindowRules:
    """`OS.window_fullscreen = x`, `OS.set_window_size(s)`, `if OS.is_window_maximized():` ...
    In a Node's method the window is `get_window()`; elsewhere (a Resource, an Object, a static
    function) the scene tree's root, which is the main window."""

    def in_window(self, node: ts.Node, text: str) -> str:
        """`text` with its `get_window()` read from where `node` is."""
        return text if self._node_method(node) else text.replace("get_window()", "(Engine.get_main_loop() as SceneTree).root")

    def _node_method(self, node: ts.Node) -> bool:
        function = node.parent
        while function is not None and function.type not in ("function_definition", "lambda"):
            function = function.parent
        if function is not None and any(c.type == "static_keyword" for c in function.children):
            return False
        if self.scope is None:
            return True  # without a project context: as Godot's converter writes it
        # a script without `extends` (or one no class reference resolves) is a Reference, not a Node
        engine = self.scope.engine_class_of(self.scope.self_type())
        surface = self.rules.surface
        return engine is not None and "Node" in surface.ancestors("3", engine) + surface.ancestors("4", engine)

    def window_cite(self, prop: str) -> dict | None:
        for key in (f"map:diff:property:OS.{prop}", f"map:diff:method:OS.set_{prop}", f"map:diff:method:OS.is_{prop}",
                    f"map:diff:method:OS.get_{prop}"):
            found = self.rules.cite(key)
            if found is not None:
                return found
        return self.rules.cite("os_window")

    @staticmethod
    def _assigned(node: ts.Node) -> bool:
        parent = node.parent
        return parent is not None and parent.type == "assignment" and parent.named_children[0].id == node.id and \
            parent.parent is not None and parent.parent.type == "expression_statement" and parent.children[1].type == "="

    def window_assignment(self, assignment: ts.Node) -> bool:
        """`OS.window_fullscreen = x` -> the statement that sets it in Godot 4."""
        left = assignment.named_children[0]
        parts = [c for c in left.children if c.type not in (".", "line_continuation")] if left.type == "attribute" else []
        if len(parts) != 2 or text_of(parts[0]) != "OS" or text_of(parts[1]) not in WINDOW or not self._assigned(left) \
                or self.is_project_name("OS"):
            return False
        prop = text_of(parts[1])
        value = self.render(assignment.named_children[-1])
        self.replace(assignment, self.in_window(assignment, setter(prop, value)), "os_window", self.window_cite(prop),
                     0.85)
        return True

    def os_window(self, node: ts.Node) -> bool:
        """Rewrite `OS.<window member>` chains of exactly two parts; True when handled."""
        parts = [c for c in node.children if c.type not in (".", "line_continuation")]
        if len(parts) != 2 or parts[0].type != "identifier" or text_of(parts[0]) != "OS" or \
                self.is_project_name("OS"):
            return False
        member = parts[1]
        parent = node.parent
        if member.type == "identifier" and text_of(member) in VIDEO_DRIVERS:
            self.replace(node, VIDEO_DRIVERS[text_of(member)], "os_video_driver",
                         self.rules.cite(f"map:diff:constant:OS.{text_of(member)}"), 0.8)
            return True
        if member.type == "attribute_call" and text_of(member.children[0]) == "get_video_driver_name" and \
                len(args_of(member)) == 1:
            self.replace(node, f'str(["GLES3", "GLES2"][{self.render(args_of(member)[0])}])', "os_video_driver",
                         self.rules.cite("map:diff:method:OS.get_video_driver_name"), 0.8)
            return True
        if member.type == "identifier" and text_of(member) in WINDOW:
            prop = text_of(member)
            getter = WINDOW[prop]
            if self._assigned(node):
                return True  # the assignment as a whole, once its value is rewritten (window_assignment)
            self.replace(node, self.in_window(node, getter), "os_window", self.window_cite(prop), 0.85)
            return True
        if member.type != "attribute_call":
            return False
        name = text_of(member.children[0])
        args = args_of(member)
        if name in CALLS and not args:
            self.replace(node, self.in_window(node, CALLS[name]), "os_window", self.rules.cite(f"map:diff:method:OS.{name}")
                         or self.rules.cite("os_window"), 0.85)
            return True
        if name not in ACCESSORS:
            return False
        prop, sets = ACCESSORS[name]
        if sets and len(args) == 1 and parent is not None and parent.type == "expression_statement":
            self.replace(node, self.in_window(node, setter(prop, self.render(args[0]))), "os_window",
                         self.window_cite(prop), 0.85)
            return True
        if not sets and not args:
            self.replace(node, self.in_window(node, WINDOW[prop]), "os_window", self.window_cite(prop), 0.85)
            return True
        return False

    # -- a popup or dialog script, whose class is a Window in Godot 4 --------------------------------

    def window_self_call(self, callee: ts.Node, call: ts.Node, name: str) -> bool:
        """`get_global_mouse_position()` in a Popup or WindowDialog script: Godot 3's class was a Control,
        Godot 4's is a Window, a Viewport that answers for itself (`get_mouse_position()`, `gui_get_focus_owner()`,
        its `position` and `size`). `update()` has no Window counterpart: a Window draws its own panel, so the
        request goes where the script draws nothing of its own (no `_draw`); else it is left to people."""
        if name not in SELF_CALLS and name != "update" or args_of(call) or not self._window_script():
            return False
        statement = call.parent if call.parent is not None and call.parent.type == "expression_statement" else None
        if name == "update" and statement is not None and \
                not is_project(self.scope.owner(self.scope.self_type(), "_draw")):
            self._drop_statement(statement, "window_update_removed", "map:diff:method:CanvasItem.update")
            return True
        if name == "update":
            self.manual_item(call, "window", "update() in a script whose class is a Window in Godot 4",
                             "a Window does not draw: redraw the Control inside it (queue_redraw())",
                             self.rules.cite("map:diff:method:CanvasItem.update"))
            return True
        new, cite = SELF_CALLS[name]
        cls, kind, member = cite[len("docs:4:"):].split(".")
        self.replace(call, new, "window_self", {"table": "docs_chunks", "id": cite,
                                                "title": f"{cls}.{member} (Godot 4 {kind})"}, 0.85)
        return True

    def window_self_property(self, node: ts.Node, name: str) -> bool:
        """`rect_min_size = s` in a Popup or WindowDialog script -> `min_size = s`: Godot 4's Window keeps its
        size and position in pixels (Vector2i); a read is made a Vector2 again, as the Godot 3 code computed with."""
        if name not in SELF_PROPERTIES or not self._window_script():
            return False
        new = SELF_PROPERTIES[name]
        parent = node.parent
        written = self._assignment_of(node) is not None or parent is not None and parent.type == "attribute" and \
            self._assignment_of(parent.children[-1]) is not None  # `rect_size.x = 4`: a part written
        self.replace(node, new if written else f"Vector2({new})", "window_self",
                     self.rules.cite_member("4", "Window", "property", new), 0.85)
        return True

    def viewport_size(self, chain: ts.Node, member: ts.Node) -> bool:
        """`get_viewport().size` (read) -> `Vector2(get_viewport().size)`: Godot 4's viewports (the root Window, a
        SubViewport) keep their size in pixels as a Vector2i, so Godot 3's Vector2 arithmetic (`size / 2`)
        would divide as integers and `:=` infer another type."""
        if self.scope is not None and self.scope.engine_version() == "4" or self._assignment_of(member) is not None:
            return False
        return self.wrap_vector2(chain, member.end_point, VIEWPORT_SIZE_CITE)

    def _window_script(self) -> bool:
        if self.scope is None:
            return False
        base = self.scope.engine_class_of(self.scope.self_type())
        surface = self.rules.surface
        return base is not None and "Control" in surface.ancestors("3", base) and \
            "Window" in surface.ancestors("4", self.rules.in4(base))
