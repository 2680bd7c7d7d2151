"""What the rewrite may rename, read from the corpus: the api_mapping rows, and the class references.

Every edit the rewrite makes rests on a row of `api_mapping` (a rename-map row, a syntax rule of
Godot's converter, or an api_diff row saying the Godot 3 name is gone), cited as `{table, id, title}`.
A rename applies by receiver: a row whose `class_context` names classes applies to a receiver of one
of them (or a class deriving from one, in either version's naming); an ambiguous row never applies
without a known receiver.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from gd_assets.core import duck
from gd_assets.core.corpus.surface import MOVED_CLASSES, Surface, load_surface
from gd_assets.core.rewrite.answers import Answers, CuratedAnswer, GoneAnswer, gone_answer

# Node.pause_mode (inherit, stop, process) -> process_mode (inherit, pausable, always)
PAUSE_TO_PROCESS = {"0": "0", "1": "1", "2": "3"}

MEMBER_CATEGORIES = {"method": ("function",), "property": ("property",), "signal": ("signal",),
                     "constant": ("constant", "enum")}

# Syntax rules -> the converter's rule row they rest on (present in every corpus built from its sources).
SYNTAX_ROWS = {
    "texture_flags": "map:diff:property:Texture.flags",
    "polar2cartesian": "map:diff:method:@GDScript.polar2cartesian",
    "os_execute": "map:diff:method:OS.execute",
    "intersect_ray_3d": "map:diff:method:PhysicsDirectSpaceState.intersect_ray",
    "intersect_ray_2d": "map:diff:method:Physics2DDirectSpaceState.intersect_ray",
    "export": "map:syntax:rename_gdscript_keywords:export",
    "export_typed": "map:syntax:rename_gdscript_functions:export_PackedScene_var_mob_scene",
    "onready": "map:syntax:rename_gdscript_keywords:onready",
    "tool": "map:syntax:fix_tool_declaration:tool",
    "setget": "map:syntax:rename_gdscript_functions:var_size_Vector2_Vector2_setget_set_function_get",
    "yield": "map:syntax:rename_gdscript_functions:yield_this_timeout",
    "connect": "map:syntax:rename_gdscript_functions:connect_A_B_C",
    "connect_binds": "map:syntax:rename_gdscript_functions:connect_A_B_C_D_E_OK",
    "disconnect": "map:syntax:rename_gdscript_functions:disconnect_A_B_C_OK",
    "is_connected": "map:syntax:rename_gdscript_functions:is_connected_A_B_C",
    "super": "map:syntax:rename_gdscript_functions:.roman",
    "init_super": "map:syntax:rename_gdscript_functions:func__init_a_b_c_._d_e_f",
    "node_path": "map:syntax:rename_gdscript_functions:get_node_@",
    "move_and_slide": "map:syntax:rename_gdscript_functions:move_and_slide_a_b_c_d_e_f_Roman",
    "move_and_slide_with_snap": "map:syntax:rename_gdscript_functions:move_and_slide_with_snap_a_g_b_c_d_e_f_Roman",
    "rpc:remote": "map:syntax:rename_gdscript_keywords:remote_func",
    "rpc:remotesync": "map:syntax:rename_gdscript_keywords:remotesync_func",
    "rpc:sync": "map:syntax:rename_gdscript_keywords:sync_func",
    "rpc:puppet": "map:syntax:rename_gdscript_keywords:puppet_func",
    "rpc:slave": "map:syntax:rename_gdscript_keywords:slave_func",
    "rpc:puppetsync": "map:syntax:rename_gdscript_keywords:puppetsync_func",
    "rpc:master": "map:syntax:rename_gdscript_keywords:master_func",
    "rpc:mastersync": "map:syntax:rename_gdscript_keywords:mastersync_func",
    "tween": "map:diff:method:Tween.interpolate_property",
    "undo_redo": "map:diff:method:UndoRedo.add_do_method",
    "funcref": "map:diff:method:@GDScript.funcref",
    "file": "map:diff:class:File",
    "xform": "map:syntax:rename_gdscript_functions:Transform.xform_Vector3_a_b_c_Vector3.UP",
    "xform_inv": "map:syntax:rename_gdscript_functions:Transform.xform_inv_Vector3_a_b_c_Vector3.UP",
    "to_json": "map:syntax:rename_gdscript_functions:to_json_AA_szon",
    "parse_json": "map:syntax:rename_gdscript_functions:var_d_parse_json_roman_sfs",
    "thread_start": "map:syntax:rename_gdscript_functions:start_A_B_OK",
    "sort_custom": "map:syntax:rename_gdscript_functions:sort_custom_a_b",
    "tween_callback": "map:syntax:rename_gdscript_functions:tween_callback_A_B_.foo",
    "tween_method": "map:syntax:rename_gdscript_functions:tween_method_A_B_C_D_E_.foo",
    "image_lock": "map:syntax:rename_gdscript_functions:image.lock",
    "create_from_image": "map:syntax:rename_gdscript_functions:create_from_image_aa_bb",
    "gridmap_cell": "map:syntax:rename_gdscript_functions:get_cell_item_a_b_c",
    "string_join": "map:syntax:rename_gdscript_functions:PackedStringArray_req_godot_.join_.",
    "apply_impulse": "map:syntax:rename_gdscript_functions:apply_impulse_position_impulse",
    "apply_force": "map:syntax:rename_gdscript_functions:apply_force_position_impulse",
    "focus_owner": "map:syntax:rename_gdscript_functions:get_focus_owner",
    "pause_mode": "map:syntax:fix_pause_mode:pause_mode_2",
    "list_dir_begin": "map:syntax:rename_gdscript_functions:list_dir_begin_a_b",
    "image_size": "map:diff:method:Image.get_size",  # a Vector2i in Godot 4
    "bitmap_size": "map:diff:method:BitMap.get_size",
    "hex_color": "map:syntax:convert_hexadecimal_colors:Color_ff478cbf",
    "os_window": "map:syntax:rename_gdscript_functions:OS.window_fullscreen_Settings.fullscreen",
    "json_parse": "map:syntax:rename_gdscript_functions:var_rr_JSON.parse_a",
    "basis_euler": "map:diff:method:Basis.xform",
    "directory": "map:diff:method:Directory.open",
    "has_area": "map:diff:method:Rect2.has_no_area",
    "resource_saver": "map:diff:method:ResourceSaver.save",
    "color_n": "map:diff:method:@GDScript.ColorN",
    "draw_string": "map:diff:method:CanvasItem.draw_string",
}

# Renames Godot's map leaves out (it keeps them as regex rules or not at all), on the class that
# documents the Godot 3 name; each cites the api_diff row that says the name is gone.
EXTRA_RENAMES = {
    ("CanvasItem", "update"): ("queue_redraw", "map:diff:method:CanvasItem.update"),
    ("String", "plus_file"): ("path_join", "map:diff:method:String.plus_file"),
    ("String", "empty"): ("is_empty", "map:diff:method:String.empty"),
    ("Array", "empty"): ("is_empty", "map:diff:method:Array.empty"),
    ("Dictionary", "empty"): ("is_empty", "map:diff:method:Dictionary.empty"),
    ("PackedScene", "instance"): ("instantiate", "map:diff:method:PackedScene.instance"),
    ("FuncRef", "call_func"): ("call", "map:diff:class:FuncRef"),
    ("FuncRef", "call_funcv"): ("callv", "map:diff:class:FuncRef"),   # the arguments in one array, as before
    ("Node", "raise"): ("move_to_front", "map:diff:method:Node.raise"),
    ("Engine", "target_fps"): ("max_fps", "map:diff:property:Engine.target_fps"),
    ("BitMap", "get_bit"): ("get_bitv", "map:diff:method:BitMap.get_bit"),   # Godot 3's took a Vector2
    ("BitMap", "set_bit"): ("set_bitv", "map:diff:method:BitMap.set_bit"),
    ("TreeItem", "get_children"): ("get_first_child", "map:diff:method:TreeItem.get_children"),  # it was the first
    ("FileDialog", "mode"): ("file_mode", "map:diff:property:FileDialog.mode"),  # `mode` is now the Window's
    ("String", "is_rel_path"): ("is_relative_path", "map:diff:method:String.is_rel_path"),
    ("Rect2", "clip"): ("intersection", "map:diff:method:Rect2.clip"),  # Godot 3's clip was the intersection
    ("Camera2D", "get_camera_screen_center"): ("get_screen_center_position",
                                               "map:diff:method:Camera2D.get_camera_screen_center"),
    ("Image", "get_rect"): ("get_region", "map:diff:method:Image.get_rect"),  # a copy of the region, as before
    ("TextureButton", "expand"): ("ignore_texture_size", "map:diff:property:TextureButton.expand"),
    ("Button", "align"): ("alignment", "map:diff:property:Button.align"),
    ("LineEdit", "align"): ("alignment", "map:diff:property:LineEdit.align"),
    ("Label", "align"): ("horizontal_alignment", "map:diff:property:Label.align"),
    ("Label", "valign"): ("vertical_alignment", "map:diff:property:Label.valign"),
    ("GraphEdit", "use_snap"): ("snapping_enabled", "map:diff:property:GraphEdit.use_snap"),
    ("GraphEdit", "snap_distance"): ("snapping_distance", "map:diff:property:GraphEdit.snap_distance"),
    ("GraphNode", "offset"): ("position_offset", "map:diff:property:GraphNode.offset"),  # now GraphElement's
    ("Node", "get_position_in_parent"): ("get_index", "map:diff:method:Node.get_position_in_parent"),
    **{(cls, "remove"): ("remove_at", "map:diff:method:Array.remove")  # by index, as Godot 3's was
       for cls in ("Array", *(f"Pool{t}Array" for t in ("Byte", "Int", "Real", "String", "Vector2", "Vector3", "Color")))},
    **{("Control", f"{verb}_{item}"): (f"{verb}_theme_{item}", f"map:diff:method:Control.{verb}_{item}")
       for verb in ("get", "has") for item in ("icon", "font", "color", "constant", "stylebox", "font_size")},
    ("SceneTree", "idle_frame"): ("process_frame", "map:diff:signal:SceneTree.idle_frame"),
    **{("Node", f"NOTIFICATION_WM_FOCUS_{way}"): (f"NOTIFICATION_APPLICATION_FOCUS_{way}",  # MainLoop's row;
                                                  f"map:rename:enum:NOTIFICATION_WM_FOCUS_{way}")  # Node has both
       for way in ("IN", "OUT")},
    **{("GraphNode", f"get_connection_{side}_{what}"): (f"get_{side}_port_{what}",  # GraphNode's ports (Godot 4.2)
                                                        f"map:diff:method:GraphNode.get_connection_{side}_{what}")
       for side in ("input", "output") for what in ("color", "count", "position", "type")},
    ("Node", "NOTIFICATION_WM_QUIT_REQUEST"): ("NOTIFICATION_WM_CLOSE_REQUEST",
                                               "map:diff:constant:Node.NOTIFICATION_WM_QUIT_REQUEST"),
    ("MainLoop", "NOTIFICATION_WM_QUIT_REQUEST"): ("NOTIFICATION_WM_CLOSE_REQUEST",
                                                   "map:diff:constant:MainLoop.NOTIFICATION_WM_QUIT_REQUEST"),
    **{(f"Pool{t}Array", "empty"): ("is_empty", "map:diff:method:Array.empty")
       for t in ("Byte", "Int", "Real", "String", "Vector2", "Vector3", "Color")},
}


# Members Godot 4 moved to another class, read as `Class.member` on the engine class itself: the Godot 3
# member is gone (its api_diff row, else the Godot 4 reference row of the target, is the evidence).
# A target ending in `()` turns a property read into a call (never applied to an assignment).
MOVED_MEMBERS = {
    **{("OS", old): f"Time.{new}" for old, new in (
        ("get_ticks_msec", "get_ticks_msec"), ("get_ticks_usec", "get_ticks_usec"),
        ("get_unix_time", "get_unix_time_from_system"), ("get_datetime", "get_datetime_dict_from_system"),
        ("get_date", "get_date_dict_from_system"), ("get_time", "get_time_dict_from_system"),
        ("get_datetime_from_unix_time", "get_datetime_dict_from_unix_time"),
        ("get_unix_time_from_datetime", "get_unix_time_from_datetime_dict"),
        ("get_time_zone_info", "get_time_zone_from_system"))},
    **{("OS", old): f"DisplayServer.{new}" for old, new in (
        ("get_screen_size", "screen_get_size"), ("get_screen_dpi", "screen_get_dpi"),
        ("get_screen_scale", "screen_get_scale"), ("get_screen_position", "screen_get_position"),
        ("get_screen_count", "get_screen_count"), ("get_window_safe_area", "get_display_safe_area"),
        ("set_window_title", "window_set_title"), ("show_virtual_keyboard", "virtual_keyboard_show"),
        ("hide_virtual_keyboard", "virtual_keyboard_hide"), ("get_virtual_keyboard_height", "virtual_keyboard_get_height"),
        ("keyboard_get_layout_count", "keyboard_get_layout_count"), ("set_icon", "set_icon"),
        ("set_ime_active", "window_set_ime_active"), ("clipboard", "clipboard_get()"))},
    ("Engine", "editor_hint"): "Engine.is_editor_hint()",
    ("JSON", "print"): "JSON.stringify",
    **{("Viewport", c): f"SubViewport.{c}" for c in (
        "UPDATE_DISABLED", "UPDATE_ONCE", "UPDATE_WHEN_VISIBLE", "UPDATE_ALWAYS", "UPDATE_WHEN_PARENT_VISIBLE",
        "CLEAR_MODE_ALWAYS", "CLEAR_MODE_NEVER")},
    ("Viewport", "CLEAR_MODE_ONLY_NEXT_FRAME"): "SubViewport.CLEAR_MODE_ONCE",
    ("MainLoop", "NOTIFICATION_WM_QUIT_REQUEST"): "Node.NOTIFICATION_WM_CLOSE_REQUEST",  # Node's alone in Godot 4
    ("OS", "set_clipboard"): "DisplayServer.clipboard_set", ("OS", "get_clipboard"): "DisplayServer.clipboard_get",
    # the alignment enums of Label, Button and LineEdit became global ones
    **{(cls, f"ALIGN_{side}"): f"HORIZONTAL_ALIGNMENT_{side}" for cls in ("Label", "Button", "LineEdit")
       for side in ("LEFT", "CENTER", "RIGHT", "FILL")},
    **{("Label", f"VALIGN_{side}"): f"VERTICAL_ALIGNMENT_{side}" for side in ("TOP", "CENTER", "BOTTOM", "FILL")},
}
# What an assignment to a moved property becomes: `OS.clipboard = t` -> `DisplayServer.clipboard_set(t)`.
MOVED_SETTERS = {("OS", "clipboard"): "DisplayServer.clipboard_set"}
# Classes Godot 4 split or renamed without a map row: each member goes to the one that documents it.


# Godot 3's joypad constants -> Godot 4's (buttons by their position, as the input map converts them);
# JOY_L2/JOY_R2 were buttons and are axes now: no rename.
_JOY = {**{f"JOY_BUTTON_{i}": b for i, b in enumerate("ABXY")},
        **{f"JOY_XBOX_{b}": b for b in "ABXY"},
        "JOY_SONY_X": "A", "JOY_SONY_CIRCLE": "B", "JOY_SONY_SQUARE": "X", "JOY_SONY_TRIANGLE": "Y",
        "JOY_DS_B": "A", "JOY_DS_A": "B", "JOY_DS_Y": "X", "JOY_DS_X": "Y",
        "JOY_L": "LEFT_SHOULDER", "JOY_R": "RIGHT_SHOULDER", "JOY_L3": "LEFT_STICK", "JOY_R3": "RIGHT_STICK",
        "JOY_SELECT": "BACK", "JOY_START": "START", "JOY_GUIDE": "GUIDE",
        **{f"JOY_DPAD_{d}": f"DPAD_{d}" for d in ("UP", "DOWN", "LEFT", "RIGHT")}}
GLOBAL_CONSTANTS = {**{old: f"JOY_BUTTON_{new}" for old, new in _JOY.items()},
                    **{f"JOY_ANALOG_{a}": f"JOY_AXIS_{b}" for a, b in (
                        ("LX", "LEFT_X"), ("LY", "LEFT_Y"), ("RX", "RIGHT_X"), ("RY", "RIGHT_Y"),
                        ("L2", "TRIGGER_LEFT"), ("R2", "TRIGGER_RIGHT"))},
                    **{f"JOY_AXIS_{i}": f"JOY_AXIS_{b}" for i, b in (
                        (0, "LEFT_X"), (1, "LEFT_Y"), (2, "RIGHT_X"), (3, "RIGHT_Y"), (6, "TRIGGER_LEFT"),
                        (7, "TRIGGER_RIGHT"))},
                    **{f"MARGIN_{side}": f"SIDE_{side}" for side in ("LEFT", "TOP", "RIGHT", "BOTTOM")}}


@dataclass(frozen=True)
class Rename:
    """One rename row: `old` -> `new` on `classes` (empty: any receiver, or a global)."""

    id: str
    title: str
    new: str
    classes: tuple[str, ...]
    ambiguous: bool

    def cite(self) -> dict:
        return {"table": "api_mapping", "id": self.id, "title": self.title}


@dataclass(frozen=True)
class SceneProperty:
    """A scene-property row: `old` on Godot 3 class `cls` becomes `new` by value rule `rule`
    (`double`, `not`, `min_max:<random sibling>`, `enum:0=1,...`; see rewrite/scenes.py)."""

    id: str
    title: str
    cls: str
    new: str
    rule: str

    def cite(self) -> dict:
        return {"table": "api_mapping", "id": self.id, "title": self.title}


@dataclass
class RewriteRules:
    surface: Surface
    renames: dict[tuple[str, str], list[Rename]] = field(default_factory=lambda: defaultdict(list))
    titles: dict[str, str] = field(default_factory=dict)
    class_names4: dict[str, str] = field(default_factory=dict)  # Godot 3 class -> Godot 4 class
    scene_properties: dict[tuple[str, str], SceneProperty] = field(default_factory=dict)  # (class, old) -> row
    prototypes: dict[str, str] = field(default_factory=dict)  # prototype slug -> title
    scene_classes: dict[str, Rename] = field(default_factory=dict)  # a scene's Godot 3 class -> its row
    godot4_release: str = "4.6"  # the Godot 4 the corpus documents (`config/features`)
    answers: Answers = field(default_factory=Answers)  # the curated answers (api_answers.yaml)

    def cite_prototype(self, slug: str) -> dict | None:
        """The label_prototypes row `proto:<slug>`, or None if the corpus lacks it."""
        title = self.prototypes.get(slug)
        return {"table": "label_prototypes", "id": f"proto:{slug}", "title": title} if title is not None else None

    def cite_doc(self, cls: str | None, name: str, version: str = "3") -> dict | None:
        """The class reference row documenting `name` on `cls` (or its ancestor) in `version`."""
        owner = self.surface.owner_of(version, cls, name) if cls else None
        if owner is None:
            return None
        return {"table": "docs_chunks", "id": f"docs:{version}:{owner}.property.{name}",
                "title": f"{owner}.{name} (Godot {version} property)"}

    @staticmethod
    def cite_member(version: str, cls: str, kind: str, name: str) -> dict:
        """The class reference row of `cls.name` (a `method`, `property`, `signal`...) in `version`."""
        return {"table": "docs_chunks", "id": f"docs:{version}:{cls}.{kind}.{name}",
                "title": f"{cls}.{name} (Godot {version} {kind})"}

    def cite_page(self, section: str) -> dict:
        """A section of Godot 4's GDScript reference page (`gdscript_basics#constants`)."""
        anchor = section.partition("#")[2]
        return {"table": "docs_chunks", "id": f"docs:4:page:tutorials/scripting/gdscript/{section}",
                "title": f"GDScript reference > {anchor.replace('-', ' ').capitalize()} (Godot 4 docs)"}

    def cite_constructors(self, cls: str, version: str = "4") -> dict:
        """The class reference row listing `cls`'s constructors in `version` (what they accept)."""
        return {"table": "docs_chunks", "id": f"docs:{version}:{cls}.constructor.{cls}",
                "title": f"{cls}.{cls} (Godot {version} constructor)"}

    def scene_property(self, cls: str, name: str) -> SceneProperty | None:
        """The scene-property row of `name` on `cls` or the nearest Godot 3 ancestor that has one."""
        for c in self.surface.ancestors("3", cls) or [cls]:
            row = self.scene_properties.get((c, name))
            if row is not None:
                return row
        return None

    def key_code(self, code: int) -> int:
        """A Godot 3 key code as Godot 4 numbers it: the constant of the same name (renamed as the map
        says) in each class reference; special keys moved from bit 24 to bit 22 (`KEY_ESCAPE`)."""
        return self.key_codes.get(code, code)

    key_codes: dict[int, int] = field(default_factory=dict)  # Godot 3 key code -> Godot 4 key code

    def cite(self, key: str) -> dict | None:
        """The corpus row a syntax rule (a SYNTAX_ROWS key) or a row id rests on; None if the corpus lacks it."""
        row_id = SYNTAX_ROWS.get(key, key)
        title = self.titles.get(row_id)
        return {"table": "api_mapping", "id": row_id, "title": title} if title is not None else None

    def moved_member(self, cls: str, name: str) -> tuple[str, dict | None] | None:
        """Where Godot 4 moved `cls.name` (`OS.get_ticks_msec` -> `Time.get_ticks_msec`), with its evidence."""
        target = MOVED_MEMBERS.get((cls, name))
        curated = self.answers.find(self.surface.ancestors("3", cls) or [cls], name, ("moved",)) \
            if target is None else None
        if curated is not None and curated.new and "*" not in curated.name:
            cls4, _, name4 = curated.new.partition(".")
            if self.surface.class_member("4", cls4, name4):
                return curated.new, curated.cite()
        for cls4 in MOVED_CLASSES.get(cls, ()) if target is None else ():
            row = self.member_rename("method", name, cls4)
            name4 = row.new if row is not None and row.classes else name
            if self.surface.class_member("4", cls4, name4):
                target = f"{cls4}.{name4}"
                break
        if target is None:
            return None
        cls4, _, name4 = target.rstrip("()").rpartition(".")
        cls4 = cls4 or "@GlobalScope"
        if not (self.surface.class_member("4", cls4, name4) or self.surface.is_global_constant("4", name4)):
            return None  # the corpus's Godot 4 reference does not document the target: no evidence
        kinds = ("method", "property", "constant")
        cite = next((self.cite(f"map:diff:{k}:{cls}.{name}") for k in kinds if self.cite(f"map:diff:{k}:{cls}.{name}")),
                    None) or self.cite(f"map:diff:class:{cls}")
        if cite is None:
            kind = "constant" if name4.isupper() else "method"
            cite = {"table": "docs_chunks", "id": f"docs:4:{cls4}.{kind}.{name4}",
                    "title": f"{cls4}.{name4} (Godot 4 {kind})"}
        return target, cite

    def cite_removed(self, cls: str) -> dict | None:
        """The api_diff row saying Godot 4 has no class `cls`."""
        return self.cite(f"map:diff:class:{cls}")

    def scene_class_rename(self, name: str) -> Rename | None:
        """The class a scene's node or resource of Godot 3 class `name` becomes: a scene row, else the map's."""
        return self.scene_classes.get(name) or self.class_rename(name)

    def scene_class4(self, name: str) -> str:
        """The Godot 4 name of a scene's Godot 3 class (the name itself where no row renames it)."""
        row = self.scene_class_rename(name)
        return row.new if row is not None else name

    def class_rename(self, name: str) -> Rename | None:
        return next(iter(self.renames.get(("class", name), [])), None) or next(
            iter(self.renames.get(("builtin_type", name), [])), None)

    def in4(self, cls: str) -> str:
        return self.class_names4.get(cls, cls)

    def accessor_rename(self, receiver: str, name: str) -> tuple[str, dict] | None:
        """`Engine.set_target_fps` (a Godot 3 property's setter, gone from Godot 4) -> (`set_max_fps`, the Godot 4
        property's row): the accessor in the same place of the property the Godot 3 one was renamed to."""
        found = self.surface.accessor_of(receiver, name)
        cls4 = self.in4(receiver)
        if found is None or self.surface.owner_of("4", cls4, name) is not None:
            return None
        owner3, prop, place = found
        if any(self.surface.scene_properties.get((c, prop), ("", ""))[1] not in ("", "stored")
               for c in self.surface.ancestors("3", owner3)):
            return None  # `set_readonly(x)` is `set_editable(not x)`: the value changes too (left to the answers)
        row = self.member_rename("property", prop, receiver)
        new = row.new if row is not None else prop
        owner4 = self.surface.owner_of("4", cls4, new, ("property",))
        accessor = self.surface.accessors.get(("4", owner4, new), ("", ""))[place] if owner4 else ""
        if not accessor or accessor == name:
            return None
        return accessor, {"table": "docs_chunks", "id": f"docs:4:{owner4}.property.{new}",
                          "title": f"{owner4}.{new} (Godot 4 property; Godot 3's {owner3}.{prop})"}

    def member_rename(self, kind: str, name: str, receiver: str | None) -> Rename | None:
        """The rename of member `name` (method|property|signal|constant) read on `receiver` (an engine
        class, or None when unknown). A known receiver takes the row of its own ancestry, ambiguous or
        not; an unknown one only a non-ambiguous row of a name no Godot 4 class documents."""
        rows = [r for c in MEMBER_CATEGORIES[kind] for r in self.renames.get((c, name), [])]
        if receiver is not None and self.surface.is_class(receiver) and \
                self.surface.owner_of("3", receiver, name) is None and self.surface.owner_of("4", receiver, name) is None:
            receiver = None  # a value typed by its base class (`Node`) holding a subclass: read by name
        kinds = {"constant": ("constant", "enum")}.get(kind, (kind,))
        lineage = (self.surface.ancestors("3", receiver) + self.surface.ancestors("4", self.in4(receiver))
                   if receiver is not None else [])
        extra = next((EXTRA_RENAMES[(c, name)] for c in lineage if (c, name) in EXTRA_RENAMES), None)
        if extra is not None and self.titles.get(extra[1]) is not None:  # also a name Godot 4 kept with another shape
            return Rename(extra[1], self.titles[extra[1]], extra[0], (), False)
        curated = self.curated_rename(kind, name, receiver) if receiver is not None else None
        if curated is not None or receiver is not None and self.curated_veto(name, receiver):
            return curated
        if receiver is not None and self.surface.owner_of("4", self.in4(receiver), name, kinds) is not None:
            return None  # Godot 4 still documents the name on this class (`Camera2D.make_current`): it stays
        if receiver is not None:
            names = set(lineage) | {self.in4(c) for c in lineage}
            owner = self.surface.owner_of("3", receiver, name)
            for row in rows:
                if row.classes and names & set(row.classes):
                    return row
            for row in rows:
                if not row.classes and not row.ambiguous and owner is not None:
                    return row
            for row in rows:  # `PoolStringArray.empty`: the class had the old name, its Godot 4 class has the new
                if owner is not None and self.surface.owner_of("4", self.in4(receiver), row.new, kinds) is not None:
                    return row
            return None
        if self.surface.any_member("4", name):
            return None
        plain = [r for r in rows if not r.ambiguous]
        if len({r.new for r in plain}) == 1:
            return plain[0]
        # Every Godot 3 class documenting the name renames it the same way: the receiver does not matter.
        owners = self.surface.member_classes("3", kind, name)
        found = {self.member_rename(kind, name, cls) for cls in owners} if owners else {None}
        news = {r.new for r in found if r is not None}
        return sorted(found, key=lambda r: r.id)[0] if None not in found and len(news) == 1 else None

    def curated_rename(self, kind: str, name: str, receiver: str) -> Rename | None:
        """A curated rename of `name` on `receiver`'s Godot 3 class, when Godot 4's class has the new name."""
        found = self.answers.find(self.surface.ancestors("3", receiver) or [receiver], name, ("renamed",))
        if found is None or not found.new or "*" in found.name:
            return None
        cls4, *through, last = [self.in4(receiver), *found.new.split(".")]
        for step in through:  # `root.set_input_as_handled`: reached through the Godot 4 class's members
            owner = self.surface.owner_of("4", cls4, step.removesuffix("()")) or ""
            cls4 = self.surface.types.get(("4", owner, step.removesuffix("()")), "")
        kinds = ("property", "constant") if kind in ("property", "constant") else (kind,)  # `Color.cornflower`
        if not any(self.surface.kept(cls4, last, k) for k in kinds) and not self.surface.is_global_constant("4", last) \
                and not self.surface.is_global_function("4", last):
            return None  # a signal and a method of one name (`minimum_size_changed`): only the kind renamed
        return Rename(found.id, found.title, found.new, (), False)

    def curated_veto(self, name: str, receiver: str) -> bool:
        """Whether a curated answer says what to do by hand with `name` on `receiver` (exactly that name): it
        outranks a rename the map gives by name alone (`load_interactive` is not `load_threaded_request`)."""
        found = self.answers.find(self.surface.ancestors("3", receiver) or [receiver], name, ("removed",))
        return found is not None and found.name == name

    def curated_class(self, name: str) -> Rename | None:
        """A curated rename of a Godot 3 class Godot 4 removed (`FuncRef` -> `Callable`)."""
        found = self.answers.find([name], name, ("renamed",))
        if found is None or found.name != name or not found.new or not self.surface.has_class("4", found.new):
            return None
        return Rename(found.id, found.title, found.new, (), False)

    def setting_answer(self, key: str) -> CuratedAnswer | None:
        """The curated answer for project setting `key` (`locale/translations`), if any."""
        return self.answers.find(["ProjectSettings"], key)

    def gone_answer(self, kind: str, cls: str, name: str) -> GoneAnswer:
        """What to say of Godot 3 `cls.name`, which Godot 4 lacks and no rule rewrote (see answers.py)."""
        row = f"map:diff:class:{name}" if kind == "class" else \
            f"map:diff:{ {'global_function': 'method', 'global_constant': 'constant', 'project_setting': 'property'}.get(kind, kind)}:{cls}.{name}"
        return gone_answer(self.surface, self.answers, kind, cls, name, self.cite(row))

    def global_rename(self, kind: str, name: str) -> Rename | None:
        """A global function or constant of Godot 3 (`deg2rad`, `BUTTON_LEFT`) renamed in Godot 4."""
        if kind == "function" and not self.surface.is_global_function("3", name):
            return None
        if kind == "constant" and not self.surface.is_global_constant("3", name):
            return None
        if kind == "constant" and self.surface.is_global_constant("4", name):
            return None
        row_id = f"map:diff:constant:@GlobalScope.{name}"
        if kind == "constant" and name in GLOBAL_CONSTANTS and self.titles.get(row_id):
            return Rename(row_id, self.titles[row_id], GLOBAL_CONSTANTS[name], (), False)
        rows = [r for c in (("function",) if kind == "function" else ("constant", "enum"))
                for r in self.renames.get((c, name), []) if not r.ambiguous]
        if rows:
            return rows[0]
        found = self.answers.find(["@GlobalScope", "@GDScript"], name, ("renamed",))
        if found is not None and found.new and (self.surface.is_global_constant("4", found.new) if kind == "constant"
                                                else self.surface.is_global_function("4", found.new)):
            return Rename(found.id, found.title, found.new, (), False)
        return None


def _classes(context: str | None) -> tuple[str, ...]:
    return tuple(c.strip() for c in (context or "").split(",") if c.strip())


@lru_cache(maxsize=4)
def load_rules(corpus_db: str, version: str = "") -> RewriteRules:
    """The rename rows and rule citations of a corpus file (cached per file and corpus version)."""
    rules = RewriteRules(load_surface(corpus_db))
    with duck.connect(Path(corpus_db), read_only=True) as con:
        rows = con.execute(
            "SELECT id, category, old_name, new_name, class_context, ambiguous, title FROM api_mapping "
            "WHERE source = 'rename_map' AND old_name IS NOT NULL AND new_name IS NOT NULL ORDER BY ambiguous, id"
        ).fetchall()
        wanted = sorted(set(SYNTAX_ROWS.values()) | {v[1] for v in EXTRA_RENAMES.values()} |
                        {f"map:diff:{k}:{c}.{n}" for c, n in MOVED_MEMBERS for k in ("method", "property", "constant")} |
                        {f"map:diff:constant:@GlobalScope.{n}" for n in GLOBAL_CONSTANTS} |
                        {pair.row for pair in rules.surface.callable_pairs.values()})
        cited = con.execute(f"SELECT id, title FROM api_mapping WHERE id IN ({', '.join('?' * len(wanted))})",
                            wanted).fetchall()
        scene = con.execute("SELECT id, title, class_context, old_name, new_name, new_signature FROM api_mapping "
                            "WHERE source = 'scene_property' AND category = 'property' ORDER BY id").fetchall()
        scene_classes = con.execute("SELECT id, title, old_name, new_name FROM api_mapping WHERE source = "
                                    "'scene_property' AND category = 'class' ORDER BY id").fetchall()
        removed = con.execute("SELECT id, title FROM api_mapping WHERE source = 'api_diff' AND change_kind = 'removed'"
                              ).fetchall()  # what the rewrite cites for a name Godot 4 lacks
        prototypes = con.execute("SELECT id, title FROM label_prototypes").fetchall()
        answers = con.execute("SELECT id, title, class_context, old_name, change_kind, new_name, text, "
                              "coalesce(new_signature, '') FROM api_mapping WHERE source = 'curated_answer' ORDER BY id"
                              ).fetchall()
        keys = con.execute("SELECT godot_version, member_name, signature FROM docs_chunks WHERE class_name = "
                           "'@GlobalScope' AND member_kind = 'constant' AND member_name LIKE 'KEY\\_%' ESCAPE '\\'"
                           ).fetchall()
        release = con.execute("SELECT max(release) FROM docs_chunks WHERE godot_version = '4' AND release LIKE '4.%'"
                              ).fetchone()[0]
    for row_id, category, old, new, context, ambiguous, title in rows:
        rules.renames[(category, old)].append(Rename(row_id, title, new, _classes(context), bool(ambiguous)))
        rules.titles[row_id] = title
        if category in ("class", "builtin_type") and not ambiguous:  # PoolStringArray -> PackedStringArray too
            rules.class_names4.setdefault(old, new)
    rules.titles.update(dict(cited))
    rules.titles.update(dict(removed))
    for row_id, title, cls, old, new, rule in scene:
        rule = "" if rule == "stored" else (rule or "").removeprefix("value=")
        rules.scene_properties[(cls, old)] = SceneProperty(row_id, title, cls, new or "", rule)
    rules.scene_classes = {old: Rename(row_id, title, new, (), False) for row_id, title, old, new in scene_classes}
    rules.prototypes = {row_id.removeprefix("proto:"): title for row_id, title in prototypes}
    rules.answers = Answers([CuratedAnswer(*row) for row in answers])
    rules.key_codes = _key_codes(keys, rules.renames)
    if release:
        rules.godot4_release = ".".join(release.split(".")[:2])
    rules.renames = dict(rules.renames)
    return rules


def _key_codes(rows, renames) -> dict[int, int]:
    """Godot 3 key code -> Godot 4 key code, through the constants of the same (renamed) name."""
    values: dict[str, dict[str, int]] = {"3": {}, "4": {}}
    for version, name, signature in rows:
        value = signature.split("=", 1)[1].split("#", 1)[0].strip() if "=" in (signature or "") else ""
        if value.lstrip("-").isdigit():
            values[version][name] = int(value)
    out = {}
    for name, code in values["3"].items():
        renamed = next(iter(renames.get(("enum", name), [])), None)
        new = values["4"].get(renamed.new if renamed else name)
        if new is not None and new != code:
            out[code] = new
    return out
