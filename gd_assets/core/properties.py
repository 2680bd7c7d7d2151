"""Which properties written in a scene or resource Godot 4 still reads, class by class.

Godot 4 loads a Godot 3 `.tscn`/`.tres` and sets each property by name; a name its class no longer
has is dropped without a word. The judge (is this block Godot 3?) and the rewrite (what does it
become?) ask the same question here, so they agree by construction. The answer comes from the two
class references (a property, or a theme item, of the class or an ancestor) and from the dynamic
names each version reads:

- `kept`: Godot 4's class (renamed) documents it, it is a dynamic name Godot 4 reads
  (`theme_override_colors/x`, `metadata/x`, ...), or the node's script declares it;
- `godot3`: only Godot 3 reads it: its class documents it and Godot 4's does not, or it is a dynamic
  form Godot 4 dropped (`custom_fonts/x`, `shader_param/x`, `__meta__`, ...);
- `unknown`: neither reference says (a module's class, a name neither documents): left alone.
"""

from __future__ import annotations

from dataclasses import dataclass

from gd_assets.core.corpus.surface import Surface

# Godot 3 dynamic prefixes -> their Godot 4 form (the theme groups as the rename map's
# `theme_override_renames` say; shader uniforms and surface materials as the class references say).
GODOT3_PREFIXES = {
    "custom_colors/": "theme_override_colors/", "custom_constants/": "theme_override_constants/",
    "custom_fonts/": "theme_override_fonts/", "custom_icons/": "theme_override_icons/",
    "custom_styles/": "theme_override_styles/", "shader_param/": "shader_parameter/",
    "material/": "surface_material_override/",
}
# The theme item kind of each override group, as the class references write it (`theme color x`).
THEME_GROUPS = {"theme_override_colors/": "color", "theme_override_constants/": "constant",
                "theme_override_fonts/": "font", "theme_override_font_sizes/": "font_size",
                "theme_override_icons/": "icon", "theme_override_styles/": "style"}
GODOT4_PREFIXES = (*THEME_GROUPS, "metadata/", "shader_parameter/", "surface_material_override/")
# Dynamic names both versions read, per family (animation tracks, tree parameters, bones, ...): not judged.
SHARED_PREFIXES = ("tracks/", "parameters/", "bones/", "blend_shapes/", "states/", "nodes/", "transitions",
                   "libraries", "anims/", "script", "editor_description", "_data", "surfaces", "_bundled",
                   "layer_", "blend_point_", "input_", "item_", "popup/", "tab_", "frames/", "points/")
EDITOR_META = "__meta__"


@dataclass(frozen=True)
class Status:
    state: str              # kept | godot3 | unknown
    reason: str = ""        # why, for a rationale or a manual item


KEPT = Status("kept")
UNKNOWN = Status("unknown")


def theme_prefix(name: str) -> tuple[str, str] | None:
    """(`theme_override_colors/`, `font_color`) for a Godot 4 override name."""
    for prefix in THEME_GROUPS:
        if name.startswith(prefix):
            return prefix, name[len(prefix):]
    return None


def has_property(surface: Surface, version: str, cls: str, name: str) -> bool:
    return surface.owner_of(version, cls, name, ("property",)) is not None


def has_theme_item(surface: Surface, version: str, cls: str, group: str, item: str) -> bool:
    kind = THEME_GROUPS[group]
    return any(surface.theme_items.get((version, c), {}).get(item) == kind for c in surface.ancestors(version, cls))


def status(surface: Surface, cls: str | None, name: str, script_members: frozenset[str] = frozenset()) -> Status:
    """How Godot 4 reads property `name` of a node or resource of Godot 3 class `cls` (None: unknown)."""
    if name in script_members or name == "script":
        return KEPT
    if name == EDITOR_META:
        return Status("godot3", "`__meta__` (the Godot 3 editor's metadata; Godot 4 writes `metadata/...`)")
    known = cls is not None and surface.is_class(cls)
    cls4 = surface.scene_class(cls) if known else None
    if known and surface.has_class("4", cls4) and (has_property(surface, "4", cls4, name) or
                                                    surface.still_stored(cls, name)):
        return KEPT
    if known and has_property(surface, "3", cls, name):
        return Status("godot3", f"`{cls}.{name}` is a Godot 3 property; Godot 4's `{cls4}` has none of that name")
    prefix = next((p for p in GODOT3_PREFIXES if name.startswith(p)), None)
    if prefix == "material/" and not (known and is_mesh_instance(surface, cls)):
        prefix = None
    if prefix is not None:
        return Status("godot3", f"`{prefix}...` (Godot 4: `{GODOT3_PREFIXES[prefix]}...`)")
    if name.startswith(GODOT4_PREFIXES):
        return KEPT
    return UNKNOWN


def is_mesh_instance(surface: Surface, cls: str) -> bool:
    """`material/0` is a surface material only on a Godot 3 MeshInstance (elsewhere it is not a form Godot 3 wrote)."""
    return "MeshInstance" in surface.ancestors("3", cls)
