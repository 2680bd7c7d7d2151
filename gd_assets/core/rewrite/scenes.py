"""Scenes and resources for Godot 4, block by block: the text format, class and property names, and
values whose meaning changed.

`format=2` becomes `format=3` with string resource ids (`ExtResource("1")`); node and resource types
take their Godot 4 class; each property is read on its class through inheritance (`core/properties.py`).
One Godot 4 still reads stays; one it would drop is renamed or converted by the corpus row that says
how (the rename map, the scene-property rows of `api_mapping`, `label_prototypes`); what no row covers
is left to people with the node path and the reason. Input events, `Pool*Array` values and shader code
inside a block are converted as in project.godot and `.gdshader` files.
"""

from __future__ import annotations

import math
import re

from gd_assets.core import properties
from gd_assets.core.cues import emitter_class
from gd_assets.core.overrides import SIGNAL_SUFFIX, override_of
from gd_assets.core.receivers import PROJECT, Scope, is_project
from gd_assets.core.rewrite.edits import FragmentRewrite
from gd_assets.core.rewrite.input_events import JOY_BUTTONS, convert_events
from gd_assets.core.rewrite.native_overrides import cite_native
from gd_assets.core.rewrite.rules import PAUSE_TO_PROCESS, RewriteRules, SceneProperty
from gd_assets.core.rewrite.shaders import convert_shader_code
from gd_assets.core.rewrite.text import TextEdits
from gd_assets.core.scene_text import Entry, bracket_scan, code_spans, parse_block

_REF = re.compile(r"\b(ExtResource|SubResource)\(\s*(\d+)\s*\)")
_FRAMES = re.compile(r'"frames"\s*:\s*\[([^\]]*)\]')
_NULL = re.compile(r"\bnull\b")
_BUILTIN = re.compile(r"\b(PoolByteArray|PoolColorArray|PoolIntArray|PoolRealArray|PoolStringArray|PoolVector2Array|"
                      r"PoolVector3Array|Transform|Quat)\(")
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d*)?(?:e[-+]?\d+)?")
_TRACK = re.compile(r"^tracks/(\d+)/(\w+)$")
_THEME_FONT = re.compile(r"^(\w+)/fonts/(\w+)$")
_SHADER_PATH = re.compile(r'(res://[^"]*?|[^"/:]+?)\.shader(?=")')
# Classes whose Godot 4 successor needs a property to behave as they did (the class rename row's comment).
_CLASS_EXTRAS = {"YSort": "y_sort_enabled = true", "ToolButton": "flat = true"}
# Godot 3 defaults a renamed resource class does not share, written out where the block leaves them unset:
# (Godot 3 property, its value in Godot 4's terms). FastNoiseLite's are 5 octaves and a frequency of 0.01.
_RESOURCE_DEFAULTS = {"OpenSimplexNoise": (("octaves", "fractal_octaves = 3"), ("period", "frequency = 0.015625"))}
_NO_RENAME = ("File", "Directory", "Tween")
_TWEEN_DEFAULTS = ("repeat=false", "playback/repeat=false", "playback_speed=1.0", "playback_speed=1",
                   "playback/speed=1.0", "playback_process_mode=1", "playback/active=false", "active=false")


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _fmt(x: float) -> str:
    return str(int(x)) if x == int(x) and abs(x) < 1e15 else repr(round(x, 6))


class SceneRewriter:
    """One block of a `.tscn`/`.tres`."""

    def __init__(self, text: str, start_line: int, rules: RewriteRules, scope: Scope | None):
        self.block = parse_block(text)
        self.ed = TextEdits(text, start_line)
        self.rules = rules
        self.surface = rules.surface
        self.scope = scope
        self.cls: str | None = None
        # a value that means something else in Godot 4 is converted only in a Godot 3 project
        self.godot3 = scope is None or scope.engine_version() != "4"

    # -- where ------------------------------------------------------------------------------------

    def where(self) -> str:
        b = self.block
        if b.tag == "node":
            return f"node `{b.node_path}`"
        if b.tag == "sub_resource":
            return f"sub-resource {b.attr('id')}"
        return f"`[{b.tag}]`" if b.tag else "this block"

    def _context_type(self) -> str | None:
        if self.scope is None:
            return None
        ctx, path = self.scope.context, self.scope.path
        if self.block.tag == "node":
            return ctx.node_type_in_scene(path, self.block.node_path or ".")
        if self.block.tag == "resource":
            return ctx.node_type_in_scene(path, "[resource]")
        return None

    def _script_members(self) -> frozenset[str]:
        if self.scope is None or self.block.tag != "node":
            return frozenset()
        script = self.scope.context.scene_scripts.get((self.scope.path, self.block.node_path or "."))
        return self.scope.script_members(script) if script else frozenset()

    # -- the header -------------------------------------------------------------------------------

    def header(self) -> None:
        b, ed = self.block, self.ed
        if b.header is None:
            return
        if b.tag in ("gd_scene", "gd_resource") and b.attr("format") in ("1", "2"):
            _, a, z = b.attrs["format"]
            ed.replace(a, z, "3", "scene_format", self.rules.cite_prototype("tscn-format-2-to-3"), 0.95)
        if "id" in b.attrs and b.tag in ("ext_resource", "sub_resource"):
            raw, a, z = b.attrs["id"]
            if raw.isdigit():
                ed.replace(a, z, f'"{raw}"', "resource_id", self.rules.cite_prototype("tscn-format-2-to-3"), 0.95)
        if "instance" in b.attrs:
            self._refs(b.attrs["instance"][1], b.attrs["instance"][2])
        if "path" in b.attrs:
            raw, a, z = b.attrs["path"]
            if raw.endswith('.shader"'):
                ed.replace(z - len('.shader"'), z, '.gdshader"', "shader_extension",
                           self.rules.cite_prototype("shader-file-extension"), 0.95)
        typed = b.attr("type")
        if typed and b.tag in ("node", "sub_resource", "ext_resource", "gd_resource"):
            self._class(typed)
        if b.tag in ("node", "sub_resource"):
            self.cls = typed or self._context_type()
        elif b.tag == "resource":
            self.cls = self._context_type()
        if b.tag == "connection":
            self._connection()

    def _class(self, name: str) -> None:
        b, ed = self.block, self.ed
        row = self.rules.scene_class_rename(name)
        if row is None or name in _NO_RENAME or (self.scope is not None and is_project(self.scope.class_type(name) or "")):
            if name == "Tween" and b.tag == "node":
                self._tween_node()
            elif (row is None and b.tag != "ext_resource" and self.surface.has_class("3", name)
                  and not self.surface.has_class("4", name)):
                what = f"node `{b.node_path}`" if b.tag == "node" else f"{b.tag} `{name}`"
                effect = ("Godot 4 loads the node as a `MissingNode` placeholder that does nothing" if b.tag == "node" else
                          "this file fails to load, and every scene using it")
                ed.manual_item(*b.header, "class_removed", f"`{name}` ({what})",
                               f"Godot 4 has no class `{name}` and no rename for it: {effect}, until it is replaced",
                               [self.rules.cite_removed(name)])
            return
        _, a, z = b.attrs["type"]
        ed.replace(a + 1, z - 1, row.new, "class_rename", row.cite(), 0.95)
        extra = _CLASS_EXTRAS.get(name)
        if extra and b.tag == "node" and not b.entry(extra.split(" ")[0]):
            ed.insert(b.header[1], "\n" + extra, "class_rename", row.cite(), 0.9)
        defaults = [line for old, line in _RESOURCE_DEFAULTS.get(name, ()) if not b.entry(old)]
        if defaults and b.tag == "sub_resource":
            ed.insert(b.header[1], "\n" + "\n".join(defaults), "class_rename", row.cite(), 0.9)

    def _tween_node(self) -> None:
        """A Tween node goes: its scripts make a tween per animation with `create_tween()` (tweens.py), and
        connect its signals there. One with a script, or settings a tween takes per animation, stays to people."""
        b, ed = self.block, self.ed
        cite = {"table": "docs_chunks", "id": "docs:4:Tween.method.tween_property",
                "title": "Tween.tween_property (Godot 4 method)"}
        if self.scope is not None and self.scope.engine_version() == "4" or b.entry("script"):
            ed.manual_item(*b.header, "tween", f"Tween node `{b.node_path}`",
                           "Godot 4 has no Tween node (a Tween is made with `create_tween()`): the scripts "
                           "using it and this node need rewriting together", [cite])
            return
        # Godot 3's defaults (idle processing, no repeat, speed 1) are Godot 4's; other settings go per tween
        settings = [text for e in b.entries if (text := b.text[e.start:e.end].strip()).replace(" ", "") not in
                    _TWEEN_DEFAULTS]
        if settings:
            ed.manual_item(*b.header, "tween", f"Tween node `{b.node_path}` ({', '.join(settings)})",
                           "the node goes: call set_loops(), set_speed_scale() or "
                           "set_process_mode(Tween.TWEEN_PROCESS_PHYSICS) on each tween its scripts make", [cite])
        ed.delete_lines(0, len(ed.text), "tween_node", cite, 0.85)

    def _connection(self) -> None:
        b = self.block
        self._connection_method()
        signal, origin = b.attr("signal"), b.attr("from")
        if not signal or origin is None or self.scope is None:
            return
        if signal in ("tween_completed", "tween_all_completed", "tween_started", "tween_step") and \
                self.scope.context.node_type_in_scene(self.scope.path, origin) == "Tween" and \
                self.scope.engine_version() != "4":
            self._tween_connection()
            return
        script = self.scope.context.scene_scripts.get((self.scope.path, origin))
        if script and self.scope.signal_clash(PROJECT + script, signal):  # its script's signal is renamed
            _, a, z = b.attrs["signal"]
            self.ed.replace(a + 1, z - 1, signal + SIGNAL_SUFFIX, "signal_clash",
                            self.rules.cite_page("gdscript_basics#signals"), 0.85)
            return
        cls = emitter_class({k: raw for k, (raw, _a, _z) in b.attrs.items()}, self.scope)
        if not cls:
            return
        row = self.rules.member_rename("signal", signal, cls)
        if row is not None:
            _, a, z = b.attrs["signal"]
            self.ed.replace(a + 1, z - 1, row.new, "signal_rename", row.cite(), 0.9)
            return
        owner3 = self.surface.owner_of("3", cls, signal, ("signal",))
        if owner3 is not None and self.surface.owner_of("4", self.rules.in4(cls), signal, ("signal",)) is None:
            self.ed.manual_item(*b.header, "signal_removed", f"connection of `{signal}` from `{origin}` ({cls})",
                                f"Godot 4's `{self.rules.in4(cls)}` has no `{signal}` signal and no signal took its "
                                "place: the connection fails when the scene loads; connect what replaces it, or "
                                "declare and emit the signal in the node's script",
                                [self.rules.cite_member("3", owner3, "signal", signal)])

    def _tween_connection(self) -> None:
        """A connection from a Tween node: made on each tween its script creates (tweens.py)."""
        b = self.block
        cite = {"table": "docs_chunks", "id": "docs:4:Tween.signal.finished", "title": "Tween.finished (Godot 4 signal)"}
        if b.attr("signal") in ("tween_completed", "tween_all_completed") and b.attr("to") is not None:
            self.ed.delete_lines(0, len(self.ed.text), "tween_signal", cite, 0.85)
        else:
            self.ed.manual_item(*b.header, "tween", f"connection of `{b.attr('signal')}` from a Tween node",
                                "Godot 4's Tween has `step_finished` and `finished`, on each tween made", [cite])

    def _connection_method(self) -> None:
        """`method="grab_focus"` on a node whose script's `grab_focus` Godot 4 renames: the new name."""
        b, scope = self.block, self.scope
        target, method = b.attr("to"), b.attr("method")
        script = scope.context.scene_scripts.get((scope.path, target)) if scope is not None and target else None
        if not script or not method:
            return
        found = override_of(scope, scope.owner(PROJECT + script, method), method)
        if found is not None:
            _, a, z = b.attrs["method"]
            self.ed.replace(a + 1, z - 1, found.new, "native_override", cite_native(found), 0.85)

    # -- values -----------------------------------------------------------------------------------

    def _refs(self, start: int, end: int) -> None:
        text = self.block.text
        for a, z in code_spans(text, start, end):
            for m in _REF.finditer(text, a, z):
                self.ed.replace(m.start(), m.end(), f'{m.group(1)}("{m.group(2)}")', "resource_id",
                                self.rules.cite_prototype("tscn-format-2-to-3"), 0.95)
            for m in _BUILTIN.finditer(text, a, z):
                row = self.rules.class_rename(m.group(1))
                if row is not None:
                    self.ed.replace(m.start(1), m.end(1), row.new, "builtin_type_rename", row.cite(), 0.95)

    def values(self, entry: Entry) -> None:
        text = self.block.text
        self._refs(entry.value_start, entry.end)
        for a, z, new, rule, cite in convert_events(text, entry.value_start, entry.end, self.rules, self.godot3):
            self.ed.replace(a, z, new, rule, cite, 0.9)
        if entry.name == "animations" and self.cls == "SpriteFrames" and self.godot3:
            self._blank_frames(entry)
        if entry.name == "code" and self.cls in ("Shader", "VisualShader") and text[entry.value_start] == '"':
            for a, z, new, rule, cite in convert_shader_code(text, entry.value_start + 1, entry.end - 1, self.rules):
                self.ed.replace(a, z, new, rule, cite, 0.9)
        if entry.name in ("resource_path", "path") and '.shader"' in self.block.value(entry):
            m = _SHADER_PATH.search(text, entry.value_start, entry.end)
            if m:
                self.ed.replace(m.end(1), m.end(), ".gdshader", "shader_extension",
                                self.rules.cite_prototype("shader-file-extension"), 0.9)

    def _blank_frames(self, entry: Entry) -> None:
        """A `null` frame of a Godot 3 animation showed nothing for one frame (a blink); Godot 4 drops it when
        loading ("Condition !f.has("texture")"), and the animation loses its beat: a frame without a texture."""
        text = self.block.text
        for m in _FRAMES.finditer(text, entry.value_start, entry.end):
            for blank in _NULL.finditer(text, m.start(1), m.end(1)):
                self.ed.replace(blank.start(), blank.end(), '{"duration": 1.0, "texture": null}', "blank_frame",
                                self.rules.cite_member("4", "SpriteFrames", "method", "add_frame"), 0.9)

    # -- properties -------------------------------------------------------------------------------

    def property(self, entry: Entry, members: frozenset[str]) -> None:
        cls, name = self.cls, entry.name
        if cls == "Theme":
            self._theme_font(entry)
        found = properties.status(self.surface, cls, name, members)
        row = self.rules.scene_property(cls, name) if cls else None
        if found.state == "kept":
            if row is not None and row.rule and row.new == name and self.godot3:  # Godot 4 reads the value otherwise
                self.convert(entry, row)
            return
        if found.state != "godot3":
            return
        if row is not None:
            self.convert(entry, row)
        elif name == properties.EDITOR_META:
            self._meta(entry)
        elif name.startswith(tuple(properties.GODOT3_PREFIXES)):
            self._dynamic(entry)
        else:
            renamed = self.rules.member_rename("property", name, cls)
            cls4 = self.surface.scene_class(cls) if cls else None
            if renamed is not None and cls4 and properties.has_property(self.surface, "4", cls4, renamed.new):
                self.ed.replace(entry.start, entry.start + len(name), renamed.new, "property_rename", renamed.cite())
                if name == "pause_mode":
                    self._pause_mode(entry)
            else:
                self.dropped(entry, found.reason)

    def dropped(self, entry: Entry, why: str) -> None:
        value = self.block.value(entry).strip()
        self.ed.manual_item(entry.start, entry.end, "scene_property",
                            f"`{entry.name} = {value[:60]}` of {self.where()} ({self.cls})",
                            f"Godot 4 drops it when loading the scene: {why}; no corpus row says what it becomes",
                            [self.rules.cite_doc(self.cls, entry.name)])

    def _pause_mode(self, entry: Entry) -> None:
        value = self.block.value(entry).strip()
        new = PAUSE_TO_PROCESS.get(value)
        if new is not None:
            self.ed.replace(entry.value_start, entry.end, new, "pause_mode_value", self.rules.cite("pause_mode"))

    def _dynamic(self, entry: Entry) -> None:
        name = entry.name
        prefix = next(p for p in properties.GODOT3_PREFIXES if name.startswith(p))
        new = properties.GODOT3_PREFIXES[prefix] + name[len(prefix):]
        if prefix.startswith("custom_"):
            row = next(iter(self.rules.renames.get(("theme_override", prefix), [])), None)
            renamed = next(iter(self.rules.renames.get(("theme_override", new), [])), None)
            if renamed is not None:
                new, row = renamed.new, renamed
            group, item = properties.theme_prefix(new)
            if renamed is None:  # a theme item the map renames as a Theme property (`hseparation`)
                item_row = next(iter(self.rules.renames.get(("property", item), [])), None)
                if item_row is not None and "Theme" in item_row.classes:
                    new, row = group + item_row.new, item_row
                    item = item_row.new
            cls4 = self.surface.scene_class(self.cls) if self.cls else None
            if cls4 is None or not properties.has_theme_item(self.surface, "4", cls4, group, item):
                self.dropped(entry, f"Godot 4's `{cls4}` has no theme item `{item}` to override")
                return
            cite = row.cite() if row else self.rules.cite_prototype("tscn-custom-overrides-to-theme-overrides")
            if prefix == "custom_fonts/" and properties.has_theme_item(self.surface, "4", cls4,
                                                                       "theme_override_font_sizes/", f"{item}_size"):
                self._font_size(entry, f"theme_override_font_sizes/{item}_size")
        else:
            cite = self.rules.cite_prototype("tscn-dynamic-properties")
        self.ed.replace(entry.start, entry.start + len(name), new, "property_rename", cite, 0.9)

    def _font_size(self, entry: Entry, size_property: str) -> None:
        """A Godot 3 DynamicFont carried its size; Godot 4 sizes a font where it is used: the font's size is
        written beside the use (`theme_override_font_sizes/font_size`, a theme's `default_font_size`)."""
        ref = _REF.search(self.block.value(entry))
        font = self.scope.context.fonts.get((self.scope.path, f"{ref.group(1)}:{ref.group(2)}")) \
            if ref and self.scope is not None and self.godot3 else None
        size = _number((font or {}).get("size", ""))
        row = self.rules.scene_property("DynamicFont", "size")
        if size is None or row is None:
            return
        self.ed.insert(entry.end, f"\n{size_property} = {_fmt(size)}", "font_size", row.cite(), 0.9)

    def _theme_font(self, entry: Entry) -> None:
        """A Theme's fonts: `default_font` gets `default_font_size`, `Label/fonts/font` gets `Label/font_sizes/font_size`."""
        if entry.name == "default_font":
            self._font_size(entry, "default_font_size")
        elif (m := _THEME_FONT.match(entry.name)) is not None:
            self._font_size(entry, f"{m.group(1)}/font_sizes/{m.group(2)}_size")

    def _font_carried(self) -> bool:
        """Whether this block is a DynamicFont whose every use got its size (rewrite/scenes.py `_font_size`)."""
        if self.scope is None:
            return False
        b = self.block
        key = (self.scope.path, f"SubResource:{b.attr('id')}") if b.tag == "sub_resource" else \
            (self.scope.path, "") if b.tag == "resource" else None
        return key in self.scope.context.fonts_carried

    def _meta(self, entry: Entry) -> None:
        """`__meta__ = { "_edit_lock_": true }` -> `metadata/_edit_lock_ = true`, one line a key."""
        pairs = _dict_pairs(self.block.value(entry).strip())
        if not pairs:
            self.ed.delete_lines(entry.start, entry.end, "editor_metadata", self.rules.cite_prototype("tscn-dynamic-properties"))
            return
        new = "\n".join(f"metadata/{k} = {v}" for k, v in pairs)
        self.ed.replace(entry.start, entry.end, new, "editor_metadata", self.rules.cite_prototype("tscn-dynamic-properties"))

    # -- converting a value by its row --------------------------------------------------------------

    def convert(self, entry: Entry, row: SceneProperty) -> None:
        b, ed = self.block, self.ed
        value = b.value(entry).strip()
        rule, arg = row.rule.partition(":")[::2]
        cite = row.cite()

        def rename() -> None:
            if row.new and row.new != entry.name:
                ed.replace(entry.start, entry.start + len(entry.name), row.new, "property_rename", cite)

        def set_value(new: str) -> None:
            ed.replace(entry.value_start, entry.end, new, "property_value", cite, 0.85)

        if rule == "":
            rename()
        elif rule == "drop":
            ed.delete_lines(entry.start, entry.end, "property_dropped", cite, 0.9)
        elif rule == "manual" and self.cls == "DynamicFont" and entry.name == "size" and self._font_carried():
            ed.delete_lines(entry.start, entry.end, "font_size_moved", cite, 0.9)
        elif rule == "manual":
            ed.manual_item(entry.start, entry.end, "scene_property", f"`{entry.name} = {value[:60]}` of {self.where()} "
                           f"({self.cls})", arg or row.title, [cite])
        elif rule in ("double", "reciprocal"):
            numbers = list(_NUMBER.finditer(value))
            if not numbers or (rule == "reciprocal" and any(_number(m.group()) == 0 for m in numbers)):
                self.dropped(entry, row.title)
                return
            scale = (lambda x: 2 * x) if rule == "double" else (lambda x: 1 / x)
            new = _NUMBER.sub(lambda m: _fmt(scale(float(m.group()))), value)
            rename()
            set_value(new)
        elif rule == "not":
            if value not in ("true", "false"):
                self.dropped(entry, row.title)
                return
            rename()
            set_value("false" if value == "true" else "true")
        elif rule == "true_to":
            if value == "true":
                rename()
                set_value(arg)
            else:
                ed.delete_lines(entry.start, entry.end, "property_value", cite, 0.9)
        elif rule == "enum":
            mapping = dict(pair.split("=") for pair in arg.split(",") if "=" in pair)
            if value not in mapping:
                self.dropped(entry, f"{row.title}; value {value} has no Godot 4 equivalent")
                return
            rename()
            set_value(mapping[value])
        elif rule == "plus_radius":
            radius_entry = b.entry("radius")
            radius = _number(b.value(radius_entry).strip()) if radius_entry else _number(arg)
            height = _number(value)
            if radius is None or height is None:
                self.dropped(entry, row.title)
                return
            rename()
            set_value(_fmt(height + 2 * radius))
        elif rule == "min_max":
            random_entry = b.entry(arg) if arg else None
            r = _number(b.value(random_entry).strip()) if random_entry else 0.0
            v = _number(value)
            if v is None or r is None:
                self.dropped(entry, row.title)
                return
            ed.replace(entry.start, entry.end, f"{row.new}_min = {_fmt(v * (1 - r))}\n{row.new}_max = {_fmt(v)}",
                       "property_value", cite, 0.8)
        elif rule == "merged":  # folded into another property's conversion (`*_random` into `*_min`)
            ed.delete_lines(entry.start, entry.end, "property_value", cite, 0.8)
        elif rule == "autoplay":
            if value == "true":
                animation = b.entry("animation")
                name = b.value(animation).strip() if animation else '"default"'
                ed.replace(entry.start, entry.end, f"autoplay = {name}", "property_value", cite, 0.85)
            else:
                ed.delete_lines(entry.start, entry.end, "property_value", cite, 0.9)
        elif rule == "rigid_mode":
            new = {"0": "", "1": "freeze = true\nfreeze_mode = 0", "2": "lock_rotation = true",
                   "3": "freeze = true\nfreeze_mode = 1"}.get(value)
            if new is None:
                self.dropped(entry, row.title)
            elif new:
                ed.replace(entry.start, entry.end, new, "property_value", cite, 0.85)
            else:
                ed.delete_lines(entry.start, entry.end, "property_value", cite, 0.9)
        elif rule == "array":
            rename()
            set_value(f"[{value}]")
        elif rule == "false_to":
            if value == "false":
                rename()
                set_value(arg)
            else:
                ed.delete_lines(entry.start, entry.end, "property_value", cite, 0.9)
        elif rule in ("radians", "one_minus"):
            number = _number(value)
            if number is None:
                self.dropped(entry, row.title)
                return
            rename()
            set_value(_fmt(math.radians(number) if rule == "radians" else 1 - number))
        elif rule == "drop_zero":
            if _number(value) == 0:
                ed.delete_lines(entry.start, entry.end, "property_dropped", cite, 0.9)
            else:
                self.dropped(entry, row.title)
        elif rule == "texture_flags":
            ed.delete_lines(entry.start, entry.end, "property_dropped", cite, 0.85)
            flags = _number(value)
            if flags is None or not int(flags) & 4:  # Godot 3's FLAG_FILTER off: drawn nearest
                ed.manual_item(entry.start, entry.end, "texture_flags", f"`flags = {value}` of {self.where()} "
                               f"({self.cls}): nearest filtering", "Godot 4 filters a texture where it is drawn: set "
                               "`texture_filter` to nearest on the CanvasItem (or the project's "
                               "`rendering/textures/canvas_textures/default_texture_filter` to 0)", [cite])
        elif rule == "window_rect":
            self._window_rect(entry, row)
        elif rule == "key_code":
            if not value.isdigit():
                self.dropped(entry, row.title)
                return
            rename()
            set_value(str(self.rules.key_code(int(value))))
        elif rule == "joy_button" and not self.godot3:
            return
        elif rule == "joy_button":
            if not value.isdigit() or int(value) >= len(JOY_BUTTONS) or JOY_BUTTONS[int(value)] < 0:
                self.dropped(entry, f"{row.title}; Godot 3 button {value} is a trigger axis in Godot 4")
                return
            set_value(str(JOY_BUTTONS[int(value)]))
        elif rule == "bbcode":
            rename()
            plain = b.entry("text")
            if plain is not None:
                ed.delete_lines(plain.start, plain.end, "property_value", cite, 0.9)
        else:
            self.dropped(entry, row.title)

    def _window_rect(self, entry: Entry, row: SceneProperty) -> None:
        """A Godot 3 Popup's margins as the Godot 4 Window's `position` and `size` (with anchors at 0, the
        margins are the rectangle); written at the first margin, the others go."""
        b, ed, cite = self.block, self.ed, row.cite()
        margins = {side: b.entry(f"margin_{side}") for side in ("left", "top", "right", "bottom")}
        anchored = any(_number(b.value(e).strip()) not in (0, None) for name in ("left", "top", "right", "bottom")
                       if (e := b.entry(f"anchor_{name}")) is not None)
        values = {side: _number(b.value(e).strip()) if e else 0.0 for side, e in margins.items()}
        if anchored or None in values.values():
            self.dropped(entry, f"{row.title}; with anchors the rectangle depends on the parent")
            return
        if entry is not next(e for e in margins.values() if e is not None):
            ed.delete_lines(entry.start, entry.end, "window_rect", cite, 0.85)
            return
        width, height = values["right"] - values["left"], values["bottom"] - values["top"]
        lines = []
        if values["left"] or values["top"]:
            lines.append(f"position = Vector2i({_fmt(round(values['left']))}, {_fmt(round(values['top']))})")
        if width > 0 and height > 0:
            lines.append(f"size = Vector2i({_fmt(round(width))}, {_fmt(round(height))})")
        if lines:
            ed.replace(entry.start, entry.end, "\n".join(lines), "window_rect", cite, 0.85)
        else:
            ed.delete_lines(entry.start, entry.end, "window_rect", cite, 0.85)

    def godot4_value(self, value: str) -> str:
        """A value's text with Godot 4's resource ids and built-in type names (strings left as they are)."""
        def builtin(m: re.Match) -> str:
            row = self.rules.class_rename(m.group(1))
            return f"{row.new if row else m.group(1)}("

        out, at = [], 0
        for a, z in code_spans(value, 0, len(value)):
            part = _BUILTIN.sub(builtin, _REF.sub(lambda m: f'{m.group(1)}("{m.group(2)}")', value[a:z]))
            out += [value[at:a], part]
            at = z
        return "".join(out) + value[at:]

    def transform_tracks(self) -> set[int]:
        """An Animation's Godot 3 `transform` tracks as Godot 4's position, rotation and scale tracks
        (a key was time, transition, location, rotation quaternion, scale: 12 numbers), every track
        renumbered; Godot 4 loads no track of an animation that has a transform track. Returns the
        offsets of the entries it rewrote."""
        b = self.block
        tracks: dict[int, dict[str, Entry]] = {}
        for e in b.entries:
            m = _TRACK.match(e.name)
            if m:
                tracks.setdefault(int(m.group(1)), {})[m.group(2)] = e
        if not any(b.value(t["type"]).strip() == '"transform"' for t in tracks.values() if "type" in t):
            return set()
        entries = [e for t in tracks.values() for e in t.values()]
        first, last = min(e.start for e in entries), max(e.end for e in entries)
        cite = self.rules.cite_prototype("animation-transform-tracks")
        if any(first <= e.start < last and not _TRACK.match(e.name) for e in b.entries):
            self.ed.manual_item(first, last, "animation", f"transform tracks of {self.where()}",
                                "the tracks are interleaved with other properties: convert them by hand", [cite])
            return set()
        lines, n = [], 0
        for index in sorted(tracks):
            t = {k: b.value(e).strip() for k, e in tracks[index].items()}
            if t.get("type") != '"transform"':
                lines += [f"tracks/{n}/{k} = {self.godot4_value(v)}" for k, v in t.items()]
                n += 1
                continue
            numbers = re.findall(r"[-+\d.eE]+(?:e[-+]?\d+)?", t.get("keys", "").split("(", 1)[-1]) if "(" in \
                t.get("keys", "") else []
            if not numbers or len(numbers) % 12:
                self.ed.manual_item(first, last, "animation", f"transform track {index} of {self.where()}",
                                    "its keys are not the 12 numbers a Godot 3 transform key has", [cite])
                return set()
            keys = [numbers[i:i + 12] for i in range(0, len(numbers), 12)]
            for kind, part in (("position_3d", slice(2, 5)), ("rotation_3d", slice(5, 9)), ("scale_3d", slice(9, 12))):
                values = ", ".join(", ".join([k[0], k[1], *k[part]]) for k in keys)
                lines += [f'tracks/{n}/type = "{kind}"'] + [
                    f"tracks/{n}/{field} = {t[field]}" for field in ("imported", "enabled", "path", "interp", "loop_wrap")
                    if field in t] + [f"tracks/{n}/keys = PackedFloat32Array({values})"]
                n += 1
        self.ed.replace(first, last, "\n".join(lines), "animation_tracks", cite, 0.85)
        return {e.start for e in entries}

    def run(self, kind: str) -> FragmentRewrite:
        self.header()
        members = self._script_members()
        done = self.transform_tracks() if self.cls == "Animation" else set()
        for entry in self.block.entries:
            if entry.start in done:
                continue
            self.values(entry)
            self.property(entry, members)
        return self.ed.result()


def _dict_pairs(text: str) -> list[tuple[str, str]]:
    """The `"key": value` pairs of a `{ ... }` literal whose keys are plain strings, split at its own
    commas only (not those inside a value's brackets or strings); [] when it is not one."""
    if not (text.startswith("{") and text.endswith("}")):
        return []
    items, start = [], 1
    for i, ch, depth in bracket_scan(text, 1, len(text) - 1):
        if ch == "," and depth == 0:
            items.append(text[start:i])
            start = i + 1
    items.append(text[start:len(text) - 1])
    pairs = []
    for item in (i.strip() for i in items):
        match = re.match(r'"([^"\\]+)"\s*:\s*(.+)$', item, re.S)
        if item and match is None:
            return []
        if match:
            pairs.append((match.group(1), match.group(2).strip()))
    return pairs


def rewrite_scene(kind: str, text: str, start_line: int, rules: RewriteRules, scope: Scope | None) -> FragmentRewrite:
    """The Godot 4 text of one `.tscn`/`.tres` block starting at file line `start_line`."""
    return SceneRewriter(text, start_line, rules, scope).run(kind)
