"""Calls that compile in Godot 4 but do something else: rewritten to keep what the Godot 3 code did.

Each rule rests on the class reference row (or the upgrade guide's section) that documents the Godot 3
behaviour, and runs only outside a Godot 4 project (where such a call is already written for Godot 4).
Where the behaviour cannot be kept by a local rewrite, a manual item says what differs.
"""

from __future__ import annotations

import re

import tree_sitter as ts

from gd_assets.core.cues import (
    PARENT_AFTER_CALLBACKS,
    PARENT_FIRST_CALLBACKS,
    parent_callback,
    popup_hide_host,
    seed_anchor,
    shims_of,
)
from gd_assets.core.receivers import UNKNOWN
from gd_assets.core.rewrite.tree import ATOMIC, args_of, receiver_start, text_of
from gd_assets.core.slicing import descendants

UPGRADE_CHANGES = "docs:4:page:tutorials/migrating/upgrading_to_godot_4#updating-scripts-to-take-backwards-incompatible-changes-into-account"
INT_MAX = "2147483647"  # Godot 4's default `end` of slice(): to the end of the array
# Godot 3's global functions that returned a float for any argument -> Godot 4's float versions (Godot 4's
# plain ones return an int for an int argument, so `floor(7 / 2) / 2` divides as integers there)
_FLOAT_RESULTS = {"stepify": "snappedf", "floor": "floorf", "ceil": "ceilf", "round": "roundf"}
# Values an expression visibly holds as an int: calls returning one
_INT_CALLS = ("int", "len", "randi")
_INT_METHODS = ("size", "length")
_GROUP_CALLS = {"call_group": "call_group_flags", "set_group": "set_group_flags", "notify_group": "notify_group_flags"}
# SceneTree's group call flags by value: Godot 3's 2 (REALTIME) called at once, Godot 4's 2 (DEFERRED) defers
_GROUP_FLAGS3 = {"GROUP_CALL_DEFAULT": 0, "GROUP_CALL_REVERSE": 1, "GROUP_CALL_REALTIME": 2, "GROUP_CALL_UNIQUE": 4}
_GROUP_FLAGS4 = (("GROUP_CALL_REVERSE", 1), ("GROUP_CALL_DEFERRED", 2), ("GROUP_CALL_UNIQUE", 4))
_KINEMATIC = ("KinematicBody2D", "KinematicBody")
# Godot 3's global random generator started from RandomPCG's default seed 12047754176567800795 (as GDScript's
# signed int): seeding Godot 4's with it gives the same randi(), randf(), rand_range() and shuffle()
GODOT3_RANDOM_SEED = -6398989897141750821
# Godot 3 classes Godot 4 removed, written over Godot 4's API as an inner class of the script that uses them
# (a tab is one level of the script's own indentation)
SHIMS = {"ResourceInteractiveLoader": """\
class ResourceInteractiveLoader:
	# Godot 3's interactive loading over Godot 4's threaded loading: poll() is OK until the resource is loaded,
	# then ERR_FILE_EOF; the stages are its progress in hundredths
	var path: String
	var _progress := [0.0]
	var _resource: Resource = null

	func _init(resource_path: String, type_hint: String = "") -> void:
		path = resource_path
		ResourceLoader.load_threaded_request(resource_path, type_hint)

	func poll() -> int:
		if _resource != null:
			return ERR_FILE_EOF
		var status := ResourceLoader.load_threaded_get_status(path, _progress)
		if status == ResourceLoader.THREAD_LOAD_LOADED:
			_resource = ResourceLoader.load_threaded_get(path)
			return ERR_FILE_EOF
		return OK if status == ResourceLoader.THREAD_LOAD_IN_PROGRESS else ERR_CANT_ACQUIRE_RESOURCE

	func wait() -> int:
		if _resource == null:
			_resource = ResourceLoader.load_threaded_get(path)
		return ERR_FILE_EOF if _resource != null else ERR_CANT_ACQUIRE_RESOURCE

	func get_resource() -> Resource:
		return _resource

	func get_stage() -> int:
		return 100 if _resource != null else int(_progress[0] * 100)

	func get_stage_count() -> int:
		return 100
"""}
# each shim's members, as its class declares them (a member it lacks is answered as any gone one)
SHIM_MEMBERS = {name: set(re.findall(r"^\t(?:func|var) (\w+)", text, re.M)) for name, text in SHIMS.items()}
_POPUP_HIDE = ("signal popup_hide  # Godot 3's dialogs were Popups with this signal; Godot 4's are Windows\n"
               "func _notification(what: int) -> void:\n"
               "{i}if what == NOTIFICATION_VISIBILITY_CHANGED and not visible:\n{i}{i}popup_hide.emit()")
_SEED_NOTE = "# Godot 3 started the global random generator from one fixed seed; Godot 4 randomizes it at start"


def _int_literal(node: ts.Node) -> int | None:
    """The value of `3` or `-3`, else None."""
    text = text_of(node).replace(" ", "")
    return int(text) if re.fullmatch(r"-?\d+", text) and node.type in ("integer", "unary_operator") else None


class BehaviourRules:
    """Calls that compile in Godot 4 but do something else: rewritten to keep what the Godot 3 code did."""

    SHAPES: dict[str, tuple[str, tuple]] = {
        "slice": ("_inclusive_slice", ()),
        "right": ("_string_right", ()),
        "angle_to_point": ("_angle_to_point", ()),
        **{name: ("_float_result", (new,)) for name, new in _FLOAT_RESULTS.items()},
        "erase": ("_string_erase", ()),
        "translated": ("_translated_local", ()),
        **{name: ("_group_deferred", ()) for name in _GROUP_CALLS},
        **{name: ("_group_flags", ()) for name in _GROUP_CALLS.values()},
        "move_and_collide": ("_kinematic_args", (1, 3)), "test_move": ("_kinematic_args", (2, None)),
        "to_html": ("_color_html", ()),
    }

    # -- helpers ----------------------------------------------------------------------------------------

    def _godot3_code(self) -> bool:
        """Whether the fragment is Godot 3 code: outside a Godot 4 project."""
        return self.scope is None or self.scope.engine_version() != "4"

    def _doc_cite(self, version: str, cls: str, name: str, kind: str = "method") -> dict | None:
        """The class reference row of `cls.name` where the corpus documents it."""
        if not self.rules.surface.class_member(version, cls, name):
            return None
        return self.rules.cite_member(version, cls, kind, name)

    def _upgrade_cite(self) -> dict:
        return {"table": "docs_chunks", "id": UPGRADE_CHANGES, "title": "Should I upgrade to Godot 4? > Updating "
                "scripts to take backwards-incompatible changes into account (Godot 4 docs)"}

    def _atomic(self, node: ts.Node) -> str:
        """The node's text, in parentheses unless it reads as one operand."""
        text = self.render(node)
        return text if node.type in ATOMIC else f"({text})"

    def _visibly_int(self, node: ts.Node) -> bool:
        """Whether an expression is an int by its form: a literal, `int()`/`len()`, `.size()`, a local typed int,
        or arithmetic of those (Godot's `/` of two ints is an int)."""
        kind = node.type
        if kind == "integer":
            return True
        if kind == "parenthesized_expression" or kind == "unary_operator":
            inner = [c for c in node.named_children if c.type != "comment"]
            return len(inner) == 1 and self._visibly_int(inner[0])
        if kind == "binary_operator" and len(node.children) == 3:
            return text_of(node.children[1]) in ("+", "-", "*", "/", "%") and \
                self._visibly_int(node.children[0]) and self._visibly_int(node.children[2])
        if kind == "call":
            return text_of(node.children[0]) in _INT_CALLS and not self.is_project_name(text_of(node.children[0]))
        if kind == "attribute" and node.children[-1].type == "attribute_call":
            last = node.children[-1]
            return text_of(last.children[0]) in _INT_METHODS and not args_of(last)
        if kind == "identifier":
            return self.type_of(node) == "int"
        return False

    # -- Array.slice: the end was inclusive ---------------------------------------------------------

    def _inclusive_slice(self, call: ts.Node, chain: ts.Node | None, owner: str, name: str) -> bool:
        """`a.slice(1, 3)` -> `a.slice(1, 4)`: Godot 3's end was inclusive, Godot 4's is exclusive (a literal
        end folds: `-1`, the last element, becomes no end); a step and `deep` keep their places."""
        args = args_of(call)
        if chain is None or owner not in ("Array", UNKNOWN) or not 2 <= len(args) <= 4 or not self._godot3_code():
            return False
        cite = self._doc_cite("3", "Array", "slice")
        step = _int_literal(args[2]) if len(args) > 2 else 1
        end = args[1]
        value = _int_literal(end)
        if step is None or step == 0 or step < 0 and value is None:
            self.manual_item(call, "array_slice", "Array.slice(begin, end, step): Godot 4's end is exclusive",
                             "Godot 3 included the end: pass one past it (one before it for a negative step; no end "
                             "at all for -1)", cite)
            return True
        if step < 0:
            new_end = str(value - 1) if value != 0 else f"-{INT_MAX}"
        elif value == -1:
            new_end = None if len(args) == 2 else INT_MAX
        elif value is not None:
            new_end = str(value + 1)
        else:
            new_end = self._plus_one(end)
        parts = [self.render(args[0])] + ([new_end] if new_end is not None else []) + \
            [self.render(a) for a in args[2:]]
        self.replace(call, f"slice({', '.join(parts)})", "array_slice_end", cite, 0.85 if value is not None else 0.8)
        return True

    def _plus_one(self, end: ts.Node) -> str:
        """`e + 1`, folded where `e` ends in a literal: `n - 1` -> `n`, `n - 3` -> `n - 2`, `i + 2` -> `i + 3`."""
        if end.type == "binary_operator" and len(end.children) == 3 and text_of(end.children[1]) in ("+", "-"):
            amount = _int_literal(end.children[2])
            if amount is not None and amount >= 0:
                left = self.render(end.children[0])
                shifted = amount + 1 if text_of(end.children[1]) == "+" else amount - 1
                if shifted == 0:
                    return left
                return f"{left} - {shifted}" if text_of(end.children[1]) == "-" and shifted > 0 else \
                    f"{left} + {abs(shifted)}"
        text = self.render(end)
        if end.type in ATOMIC or end.type == "binary_operator" and text_of(end.children[1]) in ("+", "-", "*", "/", "%"):
            return f"{text} + 1"
        return f"({text}) + 1"

    # -- String -------------------------------------------------------------------------------------

    def _string_right(self, call: ts.Node, chain: ts.Node | None, owner: str, name: str) -> bool:
        """`s.right(n)` -> `s.substr(n)`: Godot 3's right() was the string from position n; Godot 4's is its
        last n characters."""
        args = args_of(call)
        if chain is None or owner not in ("String", UNKNOWN) or len(args) != 1 or not self._godot3_code():
            return False
        self.replace(call, f"substr({self.render(args[0])})", "string_right_substr",
                     self._doc_cite("3", "String", "right"), 0.85)
        return True

    def _string_erase(self, call: ts.Node, chain: ts.Node | None, owner: str, name: str) -> bool:
        """`s.erase(i, n)` (a statement) -> `s = s.erase(i, n)`: Godot 3 erased in place; Godot 4 returns the
        new string and leaves `s` as it was. Only Godot 3's String.erase takes two arguments."""
        if self._enum_mutation(call, chain, owner):
            return True
        args = args_of(call)
        statement = self._statement_of(call, chain)
        if chain is None or statement is None or owner not in ("String", UNKNOWN) or len(args) != 2 or \
                not self._godot3_code():
            return False
        head = [c for c in chain.children if c.id != call.id]
        if any(c.type not in ("identifier", ".") for c in head):
            return False  # not a variable or a member that can be assigned
        base = self.render_until(chain, call)
        self.replace(chain, f"{base} = {base}.{name}({', '.join(self.render(a) for a in args)})", "string_erase_assign",
                     self._doc_cite("3", "String", "erase"), 0.85)
        return True

    # -- math ---------------------------------------------------------------------------------------

    def _angle_to_point(self, call: ts.Node, chain: ts.Node | None, owner: str, name: str) -> bool:
        """`a.angle_to_point(b)` -> `(a - b).angle()`: Godot 4's angle_to_point is `(b - a).angle()`, the
        opposite direction."""
        args = args_of(call)
        if chain is None or len(chain.children) < 3 or owner not in ("Vector2", UNKNOWN) or len(args) != 1 or \
                not self._godot3_code():
            return False
        base = self.render_until(chain, call)
        self.edit(receiver_start(chain), call.end_point, f"({base} - {self._atomic(args[0])}).angle()", "angle_to_point",
                  self._doc_cite("4", "Vector2", "angle_to_point"), 0.9)
        return True

    def _float_result(self, call: ts.Node, chain: ts.Node | None, owner: str, name: str, new: str) -> bool:
        """`stepify(x, s)` -> `snappedf(x, s)`; `floor(7 / 2)` (an int, visibly) -> `floorf(7 / 2)`: Godot 3's
        returned a float, Godot 4's plain ones an int for ints (and `snapped` for an int step)."""
        args = args_of(call)
        if chain is not None or self.is_project_name(name) or not self._godot3_code():
            return False
        if name == "stepify" and len(args) != 2 or name != "stepify" and (len(args) != 1 or not self._visibly_int(args[0])):
            return False
        cite = self._doc_cite("3", "@GDScript", name)
        self.replace(call.children[0], new, "float_result", cite, 0.9)
        return True

    def _translated_local(self, call: ts.Node, chain: ts.Node | None, owner: str, name: str) -> bool:
        """`t.translated(v)` -> `t.translated_local(v)`: Godot 3 moved along the transform's own axes; Godot 4's
        translated() moves in the parent's frame."""
        args = args_of(call)
        if chain is None or owner not in ("Transform", "Transform2D", UNKNOWN) or len(args) != 1 or \
                not self._godot3_code():
            return False
        cls = owner if owner != UNKNOWN else "Transform2D"
        self.replace(call.children[0], "translated_local", "translated_local", self._doc_cite("3", cls, name), 0.85)
        return True

    # -- SceneTree groups: Godot 3 called them on idle --------------------------------------------------

    def _group_deferred(self, call: ts.Node, chain: ts.Node | None, owner: str, name: str) -> bool:
        """`get_tree().call_group(g, "m")` -> `call_group_flags(SceneTree.GROUP_CALL_DEFERRED, g, "m")`: Godot 3
        made group calls (and sets, notifications) on idle, Godot 4 makes them at once."""
        args = args_of(call)
        if owner not in ("SceneTree",) and not (owner == UNKNOWN and chain is not None) or len(args) < 2 or \
                not self._godot3_code():
            return False
        parts = ["SceneTree.GROUP_CALL_DEFERRED", *(self.render(a) for a in args)]
        self.replace(call, f"{_GROUP_CALLS[name]}({', '.join(parts)})", "group_call_deferred",
                     self._doc_cite("3", "SceneTree", "GROUP_CALL_REALTIME", "constant") or self._upgrade_cite(), 0.85)
        return True

    def _group_flags(self, call: ts.Node, chain: ts.Node | None, owner: str, name: str) -> bool:
        """`call_group_flags(flags, ...)`: Godot 3's calls without GROUP_CALL_REALTIME waited for idle; Godot 4's
        flag of that value (2) is GROUP_CALL_DEFERRED, so the flags become Godot 3's with that bit turned over."""
        args = args_of(call)
        if owner not in ("SceneTree",) and not (owner == UNKNOWN and chain is not None) or len(args) < 3 or \
                not self._godot3_code():
            return False
        cite = self._doc_cite("3", "SceneTree", "GROUP_CALL_REALTIME", "constant") or self._upgrade_cite()
        value = 0
        for term in re.split(r"\|", text_of(args[0])):
            term = term.strip().removeprefix("SceneTree.")
            if term.isdigit() or term in _GROUP_FLAGS3:
                value |= int(term) if term.isdigit() else _GROUP_FLAGS3[term]
            else:
                self.manual_item(call, "group_call", f"{name}(): Godot 3 called without GROUP_CALL_REALTIME on idle",
                                 "Godot 4 calls at once unless the flags hold SceneTree.GROUP_CALL_DEFERRED (and has "
                                 "no GROUP_CALL_REALTIME): turn that flag over", cite)
                return True
        value ^= 2
        flags = " | ".join(f"SceneTree.{flag}" for flag, bit in _GROUP_FLAGS4 if value & bit) or \
            "SceneTree.GROUP_CALL_DEFAULT"
        self.replace(args[0], flags, "group_call_deferred", cite, 0.85)
        return True

    # -- KinematicBody ------------------------------------------------------------------------------

    def _kinematic_args(self, call: ts.Node, chain: ts.Node | None, owner: str, name: str, keep: int,
                        test_only: int | None) -> bool:
        """`move_and_collide(v, infinite_inertia, exclude_raycast_shapes, test_only)` -> `move_and_collide(v,
        test_only)`: Godot 4's second argument is test_only, so `move_and_collide(v, true)` stopped moving
        the body. `test_move(from, v, infinite_inertia)` -> `test_move(from, v)`. (The first `keep` arguments
        stay; Godot 3's argument `test_only` follows them.)"""
        args = args_of(call)
        if owner not in (*_KINEMATIC, UNKNOWN) or owner == UNKNOWN and chain is not None or \
                len(args) <= keep or not self._godot3_code():
            return False
        last = args[test_only] if test_only is not None and len(args) > test_only else None
        kept = args[:keep] + ([last] if last is not None and text_of(last) != "false" else [])
        cls = owner if owner != UNKNOWN else "KinematicBody2D"
        self.replace(call, f"{name}({', '.join(self.render(a) for a in kept)})", "kinematic_arguments",
                     self._doc_cite("3", cls, name), 0.85)
        return True

    # -- Color --------------------------------------------------------------------------------------

    def _color_html(self, call: ts.Node, chain: ts.Node | None, owner: str, name: str) -> bool:
        """`c.to_html()` wrote ARGB in Godot 3 and writes RGBA in Godot 4: a text read back by Color() stays
        right, one compared with or stored as Godot 3's does not. Left to people."""
        args = args_of(call)
        if chain is None or owner not in ("Color", UNKNOWN) or len(args) > 1 or args and text_of(args[0]) == "false" \
                or not self._godot3_code():
            return False
        self.manual_item(call, "color_html", "Color.to_html(): Godot 4 writes RRGGBBAA where Godot 3 wrote AARRGGBB",
                         "Color() reads either engine's own text back; a string compared with, or saved as, Godot 3's "
                         "needs the alpha moved to the front", self._doc_cite("3", "Color", name))
        return True

    # -- lifecycle callbacks: Godot 3 called every level of the script's chain --------------------------

    def on_function_definition(self, node: ts.Node) -> None:
        name = node.child_by_field_name("name")
        if name is not None and self.scope is not None and self._godot3_code():
            self._chained_callback(node, text_of(name))
        super().on_function_definition(node)
        self._seed_around(node)  # after the rules that rewrite the whole definition (an insertion before it stays)

    def on_constructor_definition(self, node: ts.Node) -> None:
        """`func _init():` without `.(args)`: Godot 3 ran the parent script's `_init()` first; Godot 4 does not."""
        if seed_anchor(node, self.scope) and self._godot3_code():
            self._seed_in_init(node)
        passes = node.child_by_field_name("arguments") is not None or any(c.type == "arguments" for c in node.children)
        if not passes and self.scope is not None and self._godot3_code():
            self._chained_callback(node, "_init")
        super().on_constructor_definition(node)

    def _chained_callback(self, node: ts.Node, name: str) -> None:
        """`func _ready():` in a script whose parent script also has `_ready`: Godot 3 called both (the parent's
        first for _init, _enter_tree, _ready and _draw; after for the others), Godot 4 only this one unless
        it calls super(). The call goes where Godot 3 made it, unless the body already calls the parent's."""
        if name == "_notification" and parent_callback(self.scope, name):
            self.manual_item(node, "notification_order", "_notification(): Godot 4 runs the parent script's first",
                             "both engines call _notification at every level of the script's chain, Godot 3 this "
                             "script's before its parent's; reorder the work if it depends on that",
                             self._doc_cite("3", "Object", "_notification"))
            return
        if name not in PARENT_FIRST_CALLBACKS + PARENT_AFTER_CALLBACKS or not parent_callback(self.scope, name):
            return
        body = node.child_by_field_name("body")
        statements = [c for c in body.named_children if c.type != "comment"] if body is not None else []
        if not statements or self._calls_parent(body, name):
            return
        params = node.child_by_field_name("parameters")
        names = [text_of(p if p.type == "identifier" else p.named_children[0]) for p in
                 (params.named_children if params is not None else []) if p.type != "comment"]
        call = f"super({', '.join(names)})" if name != "_init" else "super()"
        cite = self._doc_cite("3", "Node", name) or self._doc_cite("3", "Object", name) or self._upgrade_cite()
        same_line = statements[0].start_point[0] == node.start_point[0]
        indent = None if same_line else self.indent_of(statements[0])
        if name in PARENT_FIRST_CALLBACKS:
            first = statements[0]
            self.edit(first.start_point, first.start_point, f"{call}; " if same_line else f"{call}\n{indent}",
                      "parent_callback", cite, 0.85)
            return
        stops = [d for d in descendants(body) if d.type in ("return_statement", "lambda") or
                 d.type == "call" and text_of(d.children[0]) == "yield"]
        if stops or "@" in self.scope.symbol or not same_line and indent is None:
            self.manual_item(node, "parent_callback", f"{name}(): Godot 3 also ran the parent script's {name} after "
                             "this one", f"Godot 4 runs only this one: call `{call}` where the body ends (Godot 3 ran "
                             "it after a `return` or a yield too)", cite)
            return
        last = statements[-1]
        self.edit(last.end_point, last.end_point, f"; {call}" if same_line else f"\n{indent}{call}",
                  "parent_callback", cite, 0.85)

    # -- the global random generator: Godot 4 randomizes it at start ------------------------------------

    def _seed_cite(self) -> dict:
        return self._doc_cite("4", "@GlobalScope", "randomize") or self._doc_cite("3", "@GDScript", "randomize") \
            or self._upgrade_cite()

    def _seed_in_init(self, node: ts.Node) -> None:
        """`seed(<Godot 3's start>)` first in the `_init()` of the script that runs first."""
        body = node.child_by_field_name("body")
        statements = [c for c in body.named_children if c.type != "comment"] if body is not None else []
        indent = self.indent_of(statements[0]) if statements else None
        if not statements or indent is None or statements[0].start_point[0] == node.start_point[0]:
            self.manual_item(node, "random_seed", "the game's random numbers: Godot 4 randomizes them at start",
                             f"Godot 3 gave this project the same numbers at every run (it never calls randomize()): "
                             f"call seed({GODOT3_RANDOM_SEED}) first here to keep them", self._seed_cite())
            return
        self.edit(statements[0].start_point, statements[0].start_point,
                  f"{_SEED_NOTE}\n{indent}seed({GODOT3_RANDOM_SEED})\n{indent}", "random_seed", self._seed_cite(), 0.85)

    def _seed_around(self, node: ts.Node) -> None:
        """The script that runs first, without an `_init()`, gets one that seeds the generator as Godot 3 did,
        on one line (no indentation to match): before its first function, else after its last header line."""
        if not seed_anchor(node, self.scope) or not self._godot3_code():
            return
        init = f"{_SEED_NOTE}\nfunc _init() -> void: seed({GODOT3_RANDOM_SEED})"
        if node.type == "function_definition":
            self.edit(node.start_point, node.start_point, f"{init}\n\n\n", "random_seed", self._seed_cite(), 0.85)
        else:
            self.edit(node.end_point, node.end_point, f"\n\n\n{init}", "random_seed", self._seed_cite(), 0.85)

    # -- a Godot 3 dialog's `popup_hide`: Godot 4's dialogs are Windows without it ------------------------

    def _after_headers(self, node: ts.Node) -> None:
        """What a script gets after its last header line (`extends`, `class_name`): its dialog's `popup_hide`, the
        Godot 3 classes it uses that Godot 4 removed, as inner classes of its own."""
        if node.parent is None or node.parent.type != "source" or not self._godot3_code():
            return
        later = node.next_named_sibling
        while later is not None:
            if later.type in ("extends_statement", "class_name_statement"):
                return  # the last header line takes it
            later = later.next_named_sibling
        self._popup_hide_after(node)
        for shim in shims_of(self.scope):
            body = SHIMS[shim].replace("\t", self.scope.script.indent)
            self.edit(node.end_point, node.end_point, "\n\n\n" + body.rstrip("\n"), "godot3_class_shim",
                      self.rules.cite_member("4", "ResourceLoader", "method", "load_threaded_request"), 0.8)

    def _popup_hide_after(self, node: ts.Node) -> None:
        """`signal popup_hide` and a `_notification` that emits it when the dialog hides, as Godot 3's Popup did
        (its connections, tests and scene links then work as they did)."""
        if not popup_hide_host(self.scope):
            return
        cite = self.rules.cite_member("3", "Popup", "signal", "popup_hide")
        if "_notification" in self.scope.script.members:
            self.manual_item(node, "popup_hide", "popup_hide: Godot 4's dialogs are Windows, without this signal",
                             "declare `signal popup_hide` and emit it from _notification() on "
                             "NOTIFICATION_VISIBILITY_CHANGED when the dialog is no longer visible", cite)
            return
        self.edit(node.end_point, node.end_point, "\n\n" + _POPUP_HIDE.format(i=self.scope.script.indent),
                  "popup_hide_signal", cite, 0.85)

    def on_extends_statement(self, node: ts.Node) -> None:
        self._seed_around(node)
        if node.parent is not None and node.parent.type == "source":
            self._after_headers(node)
        target = node.named_children[0] if node.named_children else None
        if target is not None and text_of(target) == "Tween" and self._godot3_code():
            self.manual_item(node, "tween", "`extends Tween`: Godot 4's Tween is no node",
                             "Godot 4 makes a Tween per animation with create_tween() (a RefCounted, never in the "
                             "tree): this script becomes a Node's (`extends Node`, its Tween node a Node) whose "
                             "interpolations are tweeners of a tween it makes (tween_property() with the same "
                             "duration, transition, ease and delay), its start() gone",
                             {"table": "docs_chunks", "id": "docs:4:Tween.class", "title": "Tween (Godot 4 class)"})

    def on_class_name_statement(self, node: ts.Node) -> None:
        super().on_class_name_statement(node)
        self._seed_around(node)
        self._after_headers(node)

    def _calls_parent(self, body: ts.Node, name: str) -> bool:
        """Whether the body calls the parent's method already: Godot 3's `.name()`, Godot 4's `super`."""
        for node in descendants(body):
            if node.type == "base_call" and len(node.children) > 1 and text_of(node.children[1]) == name:
                return True
            if node.type in ("call", "identifier") and text_of(node.children[0] if node.type == "call" else node) \
                    == "super":
                return True
        return False
