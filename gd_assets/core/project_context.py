"""What a project defines, so its own names are never read as the engine's.

Built from the whole project without running anything: each script's `class_name`, `extends`,
functions, variables (with declared or obvious types), constants, enums, signals and inner classes
(tree-sitter); autoload singletons (`project.godot`); and, for every script attached to a scene
node, what `$Path`, `get_node("Path")` and `%Unique` reach from that node (the `.tscn` files).
A folder can hold several Godot projects: names resolve within the project (the folder of the
nearest `project.godot`) a file belongs to.

The context travels as flat rows (the `project_symbols` table) and is rebuilt from them.
"""

from __future__ import annotations

import hashlib
import json
import posixpath
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import tree_sitter as ts

from gd_assets.core.shading import shader_textures
from gd_assets.core.slicing import MAX_FUNCTION_LINES, descendants, parse_gdscript, slice_file, value_used

# Row kinds: per script (scope = script path, or `path::Inner` for an inner class) ...
SCRIPT_KINDS = ("class_name", "extends", "func", "var", "const", "signal", "enum", "class")
# ... per project root (scope = the folder of project.godot): autoloads and the config version;
# per script attached to a node (scope = script path): `node` rows, name = path from that node;
# per scene (scope = scene path): its root's type and script (`scene_root`), and the engine type of
# each node whose header names none (an instance, or a child of one) or that a connection starts
# from (`scene_node`, name = node path); per project root, the renderer of `project.godot`
# (`renderer`, name = its `quality/driver/driver_name`).


@dataclass
class Script:
    """One script or inner class: what it declares, and what it extends."""

    scope: str                         # "a/b.gd" or "a/b.gd::Inner"
    root: str                          # its project root folder ("" at the top)
    class_name: str | None = None
    extends: str | None = None         # engine class, class_name, or a res:// path (quoted)
    members: dict[str, tuple[str, str | None]] = field(default_factory=dict)  # name -> (kind, type expression)
    nodes: dict[str, tuple[str | None, str | None]] = field(default_factory=dict)  # node path -> (type, script)
    coroutines: set[str] = field(default_factory=set)  # its functions that yield: Godot 4 callers must await them
    # function -> the script's own functions it calls and uses the value of (`.f` a parent's): one that awaits
    # a coroutine is a coroutine too (found once the project is read; not kept in the context's rows)
    own_calls: dict[str, set[str]] = field(default_factory=dict, repr=False, compare=False)
    signal_clashes: set[str] = field(default_factory=set)  # names both a signal and a function (Godot 4 refuses)
    exported: set[str] = field(default_factory=set)  # its exported variables (scenes set them by name)
    # a function long enough to be sliced into parts -> its parameters and variables: a later part does not
    # show them, and a bare name there is not the script's member
    part_locals: dict[str, dict[str, str | None]] = field(default_factory=dict)
    # (receiver as written, signal, method) connected to a Godot 3 Tween node by the script or its scene:
    # Godot 4 makes a tween per animation, so each new one is connected where it is made
    tween_links: list[tuple[str, str, str]] = field(default_factory=list)
    # signals the script connects, tests or emits on itself by name (`connect("popup_hide", self, "m")`): a
    # Godot 3 dialog's `popup_hide`, which Godot 4's (a Window) lacks, is then declared and emitted by the script
    self_signals: set[str] = field(default_factory=set)
    # Godot 3 classes the script uses that the rewrite gives it as an inner class of the same name, over Godot 4's
    # API (`ResourceInteractiveLoader`, over threaded loading)
    shims: set[str] = field(default_factory=set)
    indent: str = "\t"  # one level of the file's indentation (Godot 4 refuses a file that mixes tabs and spaces)
    # a `setget` whose setter takes more than one parameter (the others defaulted), which Godot 4 refuses as a
    # setter: property -> (setter, backing variable). The property gets an inline `set` calling it; where the
    # setter writes the property itself (Godot 3 stored the value), the value lives in the backing variable,
    # which the class's own bare writes then store to as Godot 3's did ("" when none is needed)
    wide_setters: dict[str, tuple[str, str]] = field(default_factory=dict)
    # its constants Godot 4 cannot keep as constants, each with why (a `static var` keeps them shared, and read as
    # `Script.K`): "changed" (an Array or Dictionary literal its own functions change, `K[k] = v`, `K.append(v)`:
    # Godot 3's were changeable, Godot 4's are read-only), "packed" (a Pool array constructor, which Godot 4 does
    # not fold into a constant), or "reads X" (its value reads another such constant)
    static_constants: dict[str, str] = field(default_factory=dict)


@dataclass
class ProjectContext:
    scripts: dict[str, Script] = field(default_factory=dict)
    autoloads: dict[tuple[str, str], str] = field(default_factory=dict)   # (root, name) -> res path
    config_versions: dict[str, str] = field(default_factory=dict)         # root -> config_version
    scene_roots: dict[str, tuple[str | None, str | None]] = field(default_factory=dict)  # scene -> (type, script)
    scene_nodes: dict[tuple[str, str], str] = field(default_factory=dict)  # (scene, node path) -> engine type
    scene_scripts: dict[tuple[str, str], str] = field(default_factory=dict)  # (scene, node path) -> its script
    renderers: dict[str, str] = field(default_factory=dict)               # root -> GLES2 | GLES3
    # roots whose project.godot lowers GDScript's NATIVE_METHOD_OVERRIDE from an error (0 ignore, 1 warn)
    native_overrides_allowed: set[str] = field(default_factory=set)
    # Godot 4 projects whose project.godot turns GDScript's warnings on under `addons/` (off by default)
    addons_warned: set[str] = field(default_factory=set)
    shader_textures: dict[tuple[str, str], str] = field(default_factory=dict)  # (shader, texture) -> function
    class_names: dict[tuple[str, str], str] = field(default_factory=dict)  # (root, class_name) -> scope
    names: dict[str, set[str]] = field(default_factory=dict)               # root -> every name the project defines
    # Godot 3 projects that draw from the global random generator and never seed it (the same numbers at every
    # run; Godot 4 randomizes at start): root -> (the script that runs first, where the rewrite seeds it as
    # Godot 3 started: its `_init`, else before its first function `func:name`, else after its last header
    # statement `extends` / `class_name`)
    random_seed_hosts: dict[str, tuple[str, str]] = field(default_factory=dict)
    # (script, scene) where the script preloads a scene whose scripts need the script itself to compile: Godot 3
    # loaded preloads lazily, Godot 4 resolves them while compiling and fails on the cycle (load() breaks it)
    cyclic_preloads: set[tuple[str, str]] = field(default_factory=set)
    # each Godot 3 project's settings as project.godot writes them (`physics/2d/default_gravity`) and its
    # sections (`[physics]`): where it relies on a default Godot 4 changed, the rewrite pins Godot 3's
    settings: dict[str, set[str]] = field(default_factory=dict)
    # Godot 3 DynamicFonts by the reference a scene or resource uses them through: (file, `SubResource:1` or
    # `ExtResource:3`) -> their `size`, `outline_size`, `outline_color` as written (Godot 4 keeps a font's size
    # where the font is used); and the fonts whose every use is a scene's or theme's ((file, `SubResource:1`),
    # or (a DynamicFont `.tres`, "")): their own size line can go, its value written at each use
    fonts: dict[tuple[str, str], dict[str, str]] = field(default_factory=dict)
    fonts_carried: set[tuple[str, str]] = field(default_factory=set)
    _roots: dict[str, str] = field(default_factory=dict, repr=False, compare=False)  # path -> root_of(path)

    # -- lookups ---------------------------------------------------------------------------------

    def root_of(self, path: str) -> str:
        """The folder of the nearest `project.godot` above `path` (asked for every name: kept per path)."""
        if path not in self._roots:
            best = None
            for root in self.config_versions:
                if (root == "" or path.startswith(root + "/")) and (best is None or len(root) > len(best)):
                    best = root
            self._roots[path] = best if best is not None else ""
        return self._roots[path]

    def warnings_silent(self, path: str) -> bool:
        """Whether Godot 4 reports no GDScript warning for `path`, those set to errors included: a script
        under `addons/` of a Godot 4 project that leaves `debug/gdscript/warnings/exclude_addons` on (the default)."""
        root = self.root_of(path)
        return self.config_versions.get(root) == "5" and root not in self.addons_warned and \
            (path[len(root) + 1:] if root else path).startswith("addons/")

    def engine_version(self, path: str) -> str | None:
        """"3" or "4" from the `config_version` of the project the file belongs to, when known."""
        version = self.config_versions.get(self.root_of(path))
        if version in ("3", "4"):
            return "3"
        if version == "5":
            return "4"
        return None

    def defines(self, root: str, name: str) -> bool:
        return name in self.names.get(root, ())

    def script_at(self, root: str, res_path: str) -> Script | None:
        return self.scripts.get(res_file(root, "", res_path))

    def node_type_in_scene(self, scene: str, node: str) -> str | None:
        """The engine type of node `node` ("." or "A/B") of `scene` when its header does not say it."""
        return self.scene_nodes.get((scene, node))

    def class_scope(self, root: str, name: str) -> str | None:
        return self.class_names.get((root, name))

    def autoload(self, root: str, name: str) -> str | None:
        return self.autoloads.get((root, name))

    # -- rows --------------------------------------------------------------------------------------

    def rows(self) -> list[dict]:
        out = []
        for root, version in self.config_versions.items():
            out.append(_row(root, "config_version", "config_version", version, None))
        for (root, name), target in self.autoloads.items():
            out.append(_row(root, "autoload", name, target, None))
        for scene, (type_, script) in self.scene_roots.items():
            out.append(_row(scene, "scene_root", ".", type_, script))
        for key in sorted(set(self.scene_nodes) | set(self.scene_scripts)):
            out.append(_row(key[0], "scene_node", key[1], self.scene_nodes.get(key), self.scene_scripts.get(key)))
        for root, renderer in self.renderers.items():
            out.append(_row(root, "renderer", renderer, None, None))
        for root in sorted(self.native_overrides_allowed):
            out.append(_row(root, "native_override_allowed", "native_method_override", None, None))
        for root in sorted(self.addons_warned):
            out.append(_row(root, "addons_warned", "exclude_addons", None, None))
        for root, keys in sorted(self.settings.items()):
            out += [_row(root, "setting", key, None, None) for key in sorted(keys)]
        for (path, ref), settings in sorted(self.fonts.items()):
            out.append(_row(path, "font", ref, None, json.dumps(settings, sort_keys=True)))
        for path, ref in sorted(self.fonts_carried):
            out.append(_row(path, "font_carried", ref, None, None))
        for (shader, texture), function in self.shader_textures.items():
            out.append(_row(shader, "shader_texture", texture, None, function))
        for root, (host, anchor) in self.random_seed_hosts.items():
            out.append(_row(host, "random_seed", root, None, anchor))
        for script, scene in sorted(self.cyclic_preloads):
            out.append(_row(script, "cyclic_preload", scene, None, None))
        for script in self.scripts.values():
            out.append(_row(script.scope, "script", script.root, None, None))
            if script.class_name:
                out.append(_row(script.scope, "class_name", script.class_name, None, None))
            if script.extends:
                out.append(_row(script.scope, "extends", script.extends, None, None))
            for name, (kind, type_) in script.members.items():
                out.append(_row(script.scope, kind, name, type_, None))
            for path, (type_, attached) in script.nodes.items():
                out.append(_row(script.scope, "node", path, type_, attached))
            for name in sorted(script.coroutines):
                out.append(_row(script.scope, "coroutine", name, None, None))
            for name in sorted(script.signal_clashes):
                out.append(_row(script.scope, "signal_clash", name, None, None))
            for name in sorted(script.exported):
                out.append(_row(script.scope, "exported", name, None, None))
            for name in sorted(script.self_signals):
                out.append(_row(script.scope, "self_signal", name, None, None))
            for name in sorted(script.shims):
                out.append(_row(script.scope, "shim", name, None, None))
            if script.indent != "\t":
                out.append(_row(script.scope, "indent", script.indent, None, None))
            for name, why in sorted(script.static_constants.items()):
                out.append(_row(script.scope, "static_constant", name, why, None))
            for name, (setter, backing) in sorted(script.wide_setters.items()):
                out.append(_row(script.scope, "wide_setter", name, setter, backing))
            for function, names in script.part_locals.items():
                for name, type_ in names.items():
                    out.append(_row(script.scope, "part_local", f"{function}.{name}", type_, None))
        return out

    @classmethod
    def from_rows(cls, rows: Iterable[Mapping]) -> ProjectContext:
        ctx = cls()
        rows = list(rows)
        for row in rows:
            if row["kind"] == "config_version":
                ctx.config_versions[row["scope"]] = row["type"]
            elif row["kind"] == "autoload":
                ctx.autoloads[(row["scope"], row["name"])] = row["type"]
            elif row["kind"] == "scene_root":
                ctx.scene_roots[row["scope"]] = (row["type"], row["detail"])
            elif row["kind"] == "scene_node":
                if row["type"]:
                    ctx.scene_nodes[(row["scope"], row["name"])] = row["type"]
                if row["detail"]:
                    ctx.scene_scripts[(row["scope"], row["name"])] = row["detail"]
            elif row["kind"] == "renderer":
                ctx.renderers[row["scope"]] = row["name"]
            elif row["kind"] == "native_override_allowed":
                ctx.native_overrides_allowed.add(row["scope"])
            elif row["kind"] == "addons_warned":
                ctx.addons_warned.add(row["scope"])
            elif row["kind"] == "setting":
                ctx.settings.setdefault(row["scope"], set()).add(row["name"])
            elif row["kind"] == "font":
                ctx.fonts[(row["scope"], row["name"])] = json.loads(row["detail"])
            elif row["kind"] == "font_carried":
                ctx.fonts_carried.add((row["scope"], row["name"]))
            elif row["kind"] == "shader_texture":
                ctx.shader_textures[(row["scope"], row["name"])] = row["detail"]
            elif row["kind"] == "random_seed":
                ctx.random_seed_hosts[row["name"]] = (row["scope"], row["detail"])
            elif row["kind"] == "cyclic_preload":
                ctx.cyclic_preloads.add((row["scope"], row["name"]))
            elif row["kind"] == "script":
                ctx.scripts[row["scope"]] = Script(row["scope"], row["name"])
        for row in rows:
            script = ctx.scripts.get(row["scope"])
            if script is None:
                continue
            kind = row["kind"]
            if kind == "class_name":
                script.class_name = row["name"]
            elif kind == "extends":
                script.extends = row["name"]
            elif kind == "node":
                script.nodes[row["name"]] = (row["type"], row["detail"])
            elif kind == "coroutine":
                script.coroutines.add(row["name"])
            elif kind == "signal_clash":
                script.signal_clashes.add(row["name"])
            elif kind == "exported":
                script.exported.add(row["name"])
            elif kind == "self_signal":
                script.self_signals.add(row["name"])
            elif kind == "shim":
                script.shims.add(row["name"])
            elif kind == "indent":
                script.indent = row["name"]
            elif kind == "wide_setter":
                script.wide_setters[row["name"]] = (row["type"], row["detail"] or "")
            elif kind == "static_constant":
                script.static_constants[row["name"]] = row["type"]
            elif kind == "part_local":
                function, _, name = row["name"].partition(".")
                script.part_locals.setdefault(function, {})[name] = row["type"]
            elif kind in SCRIPT_KINDS:
                script.members[row["name"]] = (kind, row["type"])
        ctx._index()
        return ctx

    def version(self) -> str:
        """Changes whenever anything a fragment's reading depends on changes."""
        payload = sorted((r["scope"], r["kind"], r["name"], r["type"] or "", r["detail"] or "") for r in self.rows())
        return hashlib.sha256(json.dumps(payload).encode()).hexdigest()[:16]

    def counts(self) -> dict[str, int]:
        rows = self.rows()
        out: dict[str, int] = {}
        for row in rows:
            out[row["kind"]] = out.get(row["kind"], 0) + 1
        return dict(sorted(out.items()))

    def _index(self) -> None:
        self.class_names = {}
        self.names = {}
        for script in self.scripts.values():
            names = self.names.setdefault(script.root, set())
            if script.class_name:
                self.class_names.setdefault((script.root, script.class_name), script.scope)
                names.add(script.class_name)
            names.update(script.members)
        for (root, name) in self.autoloads:
            self.names.setdefault(root, set()).add(name)


def _row(scope: str, kind: str, name: str, type_: str | None, detail: str | None) -> dict:
    return {"scope": scope, "kind": kind, "name": name, "type": type_, "detail": detail}


def res_file(root: str, base_dir: str, ref: str) -> str:
    """A `res://` (or script-relative) reference as a path of the ingested tree."""
    ref = ref.strip().strip("\"'")
    if ref.startswith("res://"):
        rel = ref[len("res://"):]
        return posixpath.normpath(posixpath.join(root, rel)) if root else posixpath.normpath(rel)
    return posixpath.normpath(posixpath.join(base_dir, ref))


# --- building ---------------------------------------------------------------------------------------


_NATIVE_OVERRIDE_ALLOWED = re.compile(r"^gdscript/warnings/native_method_override\s*=\s*(0|1|false)\s*$", re.M)
_SETTING_LINE = re.compile(r"^(?:\[([^\]]+)\]|([A-Za-z0-9_][^=\n]*?)\s*=)", re.M)


def _settings(text: str) -> set[str]:
    """The full keys a project.godot sets (`display/window/size/width`) and its sections (`[display]`)."""
    out, section = set(), ""
    for m in _SETTING_LINE.finditer(text):
        if m.group(1) is not None:
            section = m.group(1)
            out.add(f"[{section}]")
        elif not m.group(2).startswith('"'):
            out.add(f"{section}/{m.group(2).strip()}" if section else m.group(2).strip())
    return out


_ADDONS_WARNED = re.compile(r"^gdscript/warnings/exclude_addons\s*=\s*false\s*$", re.M)


def build_context(files: Iterable[Mapping]) -> ProjectContext:
    """The context of a project from its included files (`path`, `kind`, `text`)."""
    files = [f for f in files if f.get("text") is not None]
    ctx = ProjectContext()
    main_scenes: dict[str, str] = {}
    for f in files:
        if posixpath.basename(f["path"]) == "project.godot":
            root = posixpath.dirname(f["path"])
            version, autoloads, renderer, main_scene = _read_project_godot(f["text"])
            if main_scene:
                main_scenes[root] = res_file(root, "", main_scene)
            ctx.config_versions[root] = version or ""
            if renderer:
                ctx.renderers[root] = renderer
            if _NATIVE_OVERRIDE_ALLOWED.search(f["text"]):
                ctx.native_overrides_allowed.add(root)
            if version == "5" and _ADDONS_WARNED.search(f["text"]):  # Godot 4.6 reads no Godot 3 key for it
                ctx.addons_warned.add(root)
            if version in ("3", "4"):
                ctx.settings[root] = _settings(f["text"])
            for name, target in autoloads.items():
                ctx.autoloads[(root, name)] = res_file(root, "", target)
    for f in files:
        if f["kind"] == "gdscript":
            root = ctx.root_of(f["path"])
            for script in _read_script(f["path"], root, f["text"]):
                ctx.scripts[script.scope] = script
    scenes = {f["path"]: _read_scene(f["path"], ctx.root_of(f["path"]), f["text"])
              for f in files if f["kind"] == "scene" or f["path"].endswith(".tscn")}
    _attach_nodes(ctx, scenes)
    for scene in scenes:  # what `preload("x.tscn").instance()` gives
        root_type, root_script = _scene_root(scenes, scene)
        if root_type or root_script:
            ctx.scene_roots[scene] = (root_type, root_script)
        for node in scenes[scene]:
            if node.type is None or node.path in scenes[scene].connected:
                type_ = _node_type(scenes, scene, node.path)
                if type_:
                    ctx.scene_nodes[(scene, node.path)] = type_
            if node.script:
                ctx.scene_scripts[(scene, node.path)] = node.script
        for origin, _to, signal, _method in scenes[scene].connections:  # a dialog's `popup_hide` connected
            emitter = ctx.scripts.get(ctx.scene_scripts.get((scene, origin), ""))  # in its scene: its script's own
            if signal == "popup_hide" and emitter is not None:
                emitter.self_signals.add(signal)
    for f in files:  # the function of each shader that declares the uniform of a built-in texture
        if f["kind"] == "shader":
            for frag in slice_file(f["path"], "shader", f["text"]):
                for texture in shader_textures(frag.text) if frag.kind == "function" else ():
                    ctx.shader_textures.setdefault((f["path"], texture), frag.symbol)
    for f in files:  # a resource file's own type, for its `[resource]` block
        head = _HEADER.match(f["text"].split("\n", 1)[0].strip()) if f["path"].endswith(".tres") else None
        found = re.search(r'\btype="(\w+)"', head.group(2)) if head and head.group(1) == "gd_resource" else None
        if found:
            ctx.scene_nodes[(f["path"], "[resource]")] = found.group(1)
    _dynamic_fonts(ctx, files)
    _tween_links(ctx, files, scenes)
    for key, target in ctx.autoloads.items():  # an autoloaded scene is its root node: its script
        if target in scenes:
            ctx.autoloads[key] = _scene_root(scenes, target)[1] or target
    ctx._index()
    _awaiting_coroutines(ctx)
    _random_seed_hosts(ctx, files, main_scenes)
    _cyclic_preloads(ctx, files, scenes)
    return ctx


_FONT_SETTINGS = ("size", "outline_size", "outline_color")
_FONT_USE = re.compile(r'^(?:custom_fonts/\w+|default_font|\w+/fonts/\w+)\s*=\s*(ExtResource|SubResource)\(\s*"?(\w+)"?\s*\)',
                       re.M)


def _dynamic_fonts(ctx: ProjectContext, files: list[Mapping]) -> None:
    """The settings of every Godot 3 DynamicFont (a sub-resource, or a `.tres` of its own) by the reference each
    scene or resource uses it through, and the fonts no script names (every use of theirs gets the size)."""
    own: dict[str, dict[str, str]] = {}
    found: dict[str, tuple[dict[str, str], dict[str, dict[str, str]]]] = {}
    for f in files:
        path = f["path"]
        if not path.endswith((".tscn", ".tres")):
            continue
        root, base = ctx.root_of(path), posixpath.dirname(path)
        ext: dict[str, str] = {}
        subs: dict[str, dict[str, str]] = {}
        settings, whole = None, False
        for line in f["text"].split("\n"):
            head = _HEADER.match(line.strip())
            if head:
                tag, attrs = head.group(1), {k: v.strip('"') for k, v in _ATTR.findall(head.group(2))}
                settings = None
                if tag == "ext_resource" and "id" in attrs and "path" in attrs:
                    ext[attrs["id"]] = res_file(root, base, attrs["path"])
                elif tag == "sub_resource" and attrs.get("type") == "DynamicFont":
                    settings = subs.setdefault(attrs.get("id", ""), {})
                elif tag == "gd_resource":
                    whole = attrs.get("type") == "DynamicFont"
                elif tag == "resource" and whole:
                    settings = own.setdefault(path, {})
                continue
            key = _KEY.match(line.strip())
            if settings is not None and key and key.group(1) in _FONT_SETTINGS:
                settings[key.group(1)] = key.group(2).strip()
        found[path] = (ext, subs)
    code = "\n".join(f["text"] for f in files if f["kind"] == "gdscript")
    for f in files:
        if f["path"] not in found:
            continue
        ext, subs = found[f["path"]]
        for kind, ref in _FONT_USE.findall(f["text"]):
            settings = subs.get(ref) if kind == "SubResource" else own.get(ext.get(ref, ""))
            if settings is None:
                continue
            if settings:
                ctx.fonts[(f["path"], f"{kind}:{ref}")] = settings
            if kind == "SubResource":
                ctx.fonts_carried.add((f["path"], f"SubResource:{ref}"))
            elif posixpath.basename(ext[ref]) not in code:  # a font a script loads gets no size from a scene
                ctx.fonts_carried.add((ext[ref], ""))


_PRELOAD_PATH = re.compile(r"""\bpreload\(\s*["']([^"'\n]+)["']\s*\)""")
_CAPITALISED = re.compile(r"(?<![.\w])[A-Z]\w*")


def _cyclic_preloads(ctx: ProjectContext, files: list[Mapping], scenes: dict[str, _Nodes]) -> None:
    """Scenes a script preloads whose scripts (through the scenes they instance, the scripts those extend,
    preload, or name by class_name or autoload) need that script to compile: Godot 4 refuses the cycle."""
    texts = {f["path"]: f["text"] for f in files if f["kind"] == "gdscript"}
    codes: dict[str, str] = {}  # the code without comments, read where the search goes

    def code_of(path: str) -> str:
        if path not in codes:
            codes[path] = "\n".join(line.split("#", 1)[0] for line in texts[path].split("\n"))
        return codes[path]

    edges: dict[str, set[str]] = {}

    def after(node: str) -> set[str]:
        if node not in edges:
            if node in scenes:
                edges[node] = {n.script for n in scenes[node] if n.script} | \
                              {n.instance for n in scenes[node] if n.instance}
            elif node in texts:
                root, base = ctx.root_of(node), posixpath.dirname(node)
                found = {res_file(root, base, p) for p in _PRELOAD_PATH.findall(code_of(node))}
                script = ctx.scripts.get(node)
                ext = (script.extends or "").strip() if script is not None else ""
                if ext[:1] in "\"'" and ext:
                    found.add(res_file(root, base, ext.strip("\"'")))
                for word in set(_CAPITALISED.findall(code_of(node))):
                    target = ctx.class_names.get((root, word)) or ctx.autoloads.get((root, word))
                    if target:
                        found.add(target)
                edges[node] = found - {node}
            else:
                edges[node] = set()
        return edges[node]

    for path, text in texts.items():
        if "preload" not in text or ".tscn" not in text and ".scn" not in text:
            continue
        root, base = ctx.root_of(path), posixpath.dirname(path)
        for ref in set(_PRELOAD_PATH.findall(code_of(path))):
            scene = res_file(root, base, ref)
            if not scene.endswith((".tscn", ".scn")) or scene not in scenes:
                continue
            seen, todo = {scene}, [scene]
            while todo and path not in seen:
                for nxt in after(todo.pop()):
                    if nxt not in seen:
                        seen.add(nxt)
                        todo.append(nxt)
            if path in seen:
                ctx.cyclic_preloads.add((path, scene))


def _own_calls(function: ts.Node) -> set[str]:
    """The calls of `function` to its script's own functions (`f()`, `self.f()`; `.f()` a parent's, as `.f`)
    whose value it uses."""
    out = set()
    for node in descendants(function, include_self=False):
        if node.type == "call" and node.children[0].type == "identifier" and value_used(node):
            out.add(_text(node.children[0]))
        elif node.type == "base_call" and len(node.children) > 1 and value_used(node):
            out.add("." + _text(node.children[1]))
        elif node.type == "attribute" and len(node.children) == 3 and _text(node.children[0]) == "self" and \
                node.children[2].type == "attribute_call" and value_used(node):
            out.add(_text(node.children[2].children[0]))
    return out


def _awaiting_coroutines(ctx: ProjectContext) -> None:
    """A function that uses the value of a coroutine gets `await` there in Godot 4, so it is a coroutine too
    (its own callers must await it): the scripts' coroutines closed over their own and parents' calls."""
    def chains(script: Script) -> list[Script]:
        line: list[Script] = []
        while script is not None and script not in line:
            line.append(script)
            ext = (script.extends or "").strip()
            if ext[:1] in "\"'" and ext:
                base = posixpath.dirname(script.scope.split("::", 1)[0])
                script = ctx.scripts.get(res_file(script.root, base, ext))
            else:
                script = ctx.scripts.get(ctx.class_names.get((script.root, ext), ""))
        return line

    lineage = [chains(script) for script in ctx.scripts.values() if script.own_calls]
    changed = True
    while changed:
        changed = False
        for line in lineage:
            script = line[0]
            for function, calls in script.own_calls.items():
                if function in script.coroutines:
                    continue
                for call in calls:
                    above = line[1:] if call.startswith(".") else line
                    name = call.lstrip(".")
                    owner = next((s for s in above if name in s.members), None)
                    if owner is not None and name in owner.coroutines:
                        script.coroutines.add(function)
                        changed = True
                        break


_TWEEN_SIGNALS = ("tween_completed", "tween_all_completed")
_TWEEN_CONNECT = re.compile(r'(\$[\w/]+|\$"[^"]+"|[A-Za-z_]\w*)\.connect\(\s*"(tween_all_completed|tween_completed)"\s*,'
                            r'\s*self\s*,\s*"(\w+)"')
_NODE_MEMBER = re.compile(r'^onready\s+var\s+(\w+)[^=\n]*=\s*(?:\$([\w/]+)|\$"([^"]+)"|get_node\(\s*"([^"]+)"\s*\))',
                          re.M)


def _tween_links(ctx: ProjectContext, files: list[Mapping], scenes: dict[str, _Nodes]) -> None:
    """Each script's connections to its Tween nodes: made in its code, or in a scene on the node it runs on."""
    members: dict[str, dict[str, list[str]]] = {}  # script -> node path -> the onready members holding it
    for f in files:
        script = ctx.scripts.get(f["path"]) if f["kind"] == "gdscript" else None
        if script is None:
            continue
        for found in _TWEEN_CONNECT.finditer(f["text"]):
            script.tween_links.append(found.groups())
        for found in _NODE_MEMBER.finditer(f["text"]):
            path = next(g for g in found.groups()[1:] if g)
            members.setdefault(f["path"], {}).setdefault(path, []).append(found.group(1))
    for nodes in scenes.values():
        by_path = {n.path: n for n in nodes}
        for origin, target, signal, method in nodes.connections:
            source, holder = by_path.get(origin), by_path.get(target)
            if signal not in _TWEEN_SIGNALS or source is None or source.type != "Tween" or holder is None or \
                    not holder.script or holder.script not in ctx.scripts:
                continue
            if target == ".":
                rel = origin
            elif origin.startswith(target + "/"):
                rel = origin[len(target) + 1:]
            else:
                continue
            links = ctx.scripts[holder.script].tween_links
            for receiver in ["$" + rel, *members.get(holder.script, {}).get(rel, [])]:
                if (receiver, signal, method) not in links:
                    links.append((receiver, signal, method))


_SECTION = re.compile(r"^\[([^\]]+)\]\s*$")
_KEY = re.compile(r"^([A-Za-z_][\w/.\-]*)\s*=\s*(.*)$")


_GLOBAL_RANDOM = re.compile(r"(?<![\w.])(randi|randf|rand_range|randf_range|randi_range)\s*\(|\.shuffle\(\s*\)")
_SEEDS = re.compile(r"(?<![\w.])(randomize|seed)\s*\(")
_TOP_FUNC = re.compile(r"^(?:static\s+|remote\s+|remotesync\s+|master\s+|puppet\s+|puppetsync\s+|mastersync\s+|"
                       r"sync\s+|slave\s+)*func\s+(\w+)", re.M)
_HEADER_LINE = re.compile(r"^(extends|class_name)\b", re.M)


def _random_seed_hosts(ctx: ProjectContext, files: list[Mapping], main_scenes: dict[str, str]) -> None:
    """Godot 3 projects whose scripts draw from the global random generator and never call `randomize()` or
    `seed()`: Godot 3 started that generator from one fixed seed, Godot 4 randomizes it at start. The
    script that runs first (the first autoload with a script, else the main scene's root script) hosts the seed."""
    uses: set[str] = set()
    seeded: set[str] = set()
    texts = {f["path"]: f["text"] for f in files if f["kind"] == "gdscript"}
    for f in files:
        if f["kind"] == "gdscript":
            code = "\n".join(line.split("#", 1)[0] for line in f["text"].split("\n"))
            root = ctx.root_of(f["path"])
            if _SEEDS.search(code):
                seeded.add(root)
            elif _GLOBAL_RANDOM.search(code):
                uses.add(root)
    for root in sorted(uses - seeded):
        if ctx.config_versions.get(root) not in ("3", "4"):
            continue
        candidates = [target for (r, _name), target in ctx.autoloads.items() if r == root]
        if root in main_scenes:
            candidates.append(ctx.scene_roots.get(main_scenes[root], (None, None))[1] or "")
        host = next((c for c in candidates if c.endswith(".gd") and c in ctx.scripts and c in texts), None)
        if host is None:
            continue
        functions = _TOP_FUNC.findall(texts[host])
        headers = _HEADER_LINE.findall(texts[host])
        if "_init" in functions:
            ctx.random_seed_hosts[root] = (host, "_init")
        elif functions:
            ctx.random_seed_hosts[root] = (host, f"func:{functions[0]}")
        elif headers:
            ctx.random_seed_hosts[root] = (host, headers[-1])


def _read_project_godot(text: str) -> tuple[str | None, dict[str, str], str | None, str | None]:
    version, autoloads, section, renderer, main_scene = None, {}, "", None, None
    for line in text.split("\n"):
        head = _SECTION.match(line.strip())
        if head:
            section = head.group(1)
            continue
        match = _KEY.match(line.strip())
        if not match:
            continue
        key, value = match.groups()
        if section == "" and key == "config_version":
            version = value.strip()
        elif section == "autoload":
            autoloads[key] = value.strip().strip('"').lstrip("*")
        elif section == "rendering" and key == "quality/driver/driver_name":
            renderer = value.strip().strip('"')
        elif section == "application" and key == "run/main_scene":
            main_scene = value.strip().strip('"')
    return version, autoloads, renderer, main_scene


def _text(node: ts.Node) -> str:
    return node.text.decode("utf-8", "replace")


_LITERAL_TYPES = {"dictionary": "Dictionary", "array": "Array", "string": "String"}


def declared_type(statement: ts.Node, type_node: ts.Node | None, value: ts.Node | None) -> str | None:
    """A variable's type: the written one, else its value's obvious one; `var r := Rect2()` is a Rect2 even
    though a plain `var r = Rect2()` may later hold anything (so value_type leaves those constructors out)."""
    if type_node is not None:
        return _text(type_node)
    if value is not None and value.type == "call" and any(c.type == "inferred_type" for c in statement.children) \
            and _text(value.children[0]) in _BUILTIN_CONSTRUCTORS:
        return _text(value.children[0])
    return value_type(value)


_BUILTIN_CONSTRUCTORS = ("Vector2", "Vector3", "Color", "Rect2", "AABB", "Transform2D", "Basis")


def value_type(node: ts.Node | None) -> str | None:
    """The obvious type of a value: `T.new()` -> T, `$Path` -> node:Path, `preload("x.gd").new()` ->
    script:x.gd, `preload("x.tscn").instance()` -> scene:x.tscn; None when not obvious."""
    if node is None:
        return None
    if node.type in _LITERAL_TYPES:
        return _LITERAL_TYPES[node.type]
    if node.type == "binary_operator" and node.child_count == 3 and node.children[1].type == "as":
        return _text(node.children[2]).strip() or None  # `get_node(p) as Player`
    if node.type == "get_node":
        return "node:" + node_path(_text(node))
    if node.type == "call":
        name = _text(node.children[0])
        args = node.child_by_field_name("arguments")
        first = args.named_children[0] if args is not None and args.named_children else None
        if name == "get_parent" and first is None:
            return "node:.."
        if name == "get_node" and first is not None and first.type in ("string", "node_path"):
            return "node:" + _text(first).lstrip("@^").strip("\"'")
        if name in ("preload", "load") and first is not None and first.type == "string" and \
                _text(first).strip("\"'").endswith((".tscn", ".scn")):
            return "PackedScene"
        if name in ("preload", "load") and first is not None and first.type == "string" and \
                _text(first).strip("\"'").endswith(".gd"):
            return "script:" + _text(first).strip("\"'")  # `const Logger = preload("logger.gd")`: the class
        if name[:1].isupper() and name not in ("Vector2", "Vector3", "Color", "Rect2"):
            return name
        return None
    if node.type == "attribute":
        parts = [c for c in node.children if c.type not in (".", "line_continuation")]
        if len(parts) == 2 and parts[1].type == "attribute_call":
            method = _text(parts[1].children[0])
            base = parts[0]
            if base.type == "identifier" and method == "new":
                return _text(base)
            args = parts[1].child_by_field_name("arguments")
            first = args.named_children[0] if args is not None and args.named_children else None
            if base.type == "identifier" and method == "get_node" and first is not None and \
                    first.type in ("string", "node_path"):  # `gi_menu.get_node(@"High")`: a path below gi_menu's
                return f"subnode:{_text(base)}/" + _text(first).lstrip("@^").strip("\"'")
            if base.type == "call" and _text(base.children[0]) in ("preload", "load"):
                args = base.child_by_field_name("arguments")
                first = args.named_children[0] if args is not None and args.named_children else None
                if first is not None and first.type == "string":
                    target = _text(first).strip("\"'")
                    if method == "new" and target.endswith(".gd"):
                        return "script:" + target
                    if method in ("instance", "instantiate") and target.endswith((".tscn", ".scn")):
                        return "scene:" + target
    return None


def node_path(text: str) -> str:
    """`$A/B`, `$"A/B"`, `%U` -> `A/B`, `A/B`, `%U`."""
    text = text.strip()
    if text.startswith("$"):
        text = text[1:]
    return text.strip("\"'")


_INTERACTIVE_LOADING = re.compile(r"\bload_interactive\s*\(|\bResourceInteractiveLoader\b")
_FIRST_BLOCK = re.compile(r"^(?:static )?func [^\n]*:[ \t]*(?:#[^\n]*)?\n(?:[ \t]*(?:#[^\n]*)?\n)*([ \t]+)\S", re.M)


def _read_script(path: str, root: str, text: str) -> list[Script]:
    tree = parse_gdscript(text)
    top = Script(path, root)
    first = _FIRST_BLOCK.search(text)  # the first line under a `func ...:` at the top: one level of indentation
    top.indent = first.group(1) if first else "\t"
    if _INTERACTIVE_LOADING.search(text):
        top.shims.add("ResourceInteractiveLoader")
    out = [top]
    _read_body(tree.root_node.children, top, path, root, out)
    return out


def _wide_setters(children: list[ts.Node], script: Script) -> None:
    """The class's `setget` setters that take more than one parameter (Script.wide_setters)."""
    functions = {_text(n.child_by_field_name("name")): n for n in children
                 if n.type == "function_definition" and n.child_by_field_name("name") is not None}
    for node in children:
        setget = next((c for c in node.children if c.type == "setget"), None)
        name = node.child_by_field_name("name") if node.type in ("variable_statement", "export_variable_statement") \
            else None
        setter = next((c for c in setget.children if c.type == "setter"), None) if setget is not None else None
        function = functions.get(_text(setter)) if setter is not None else None
        params = function.child_by_field_name("parameters") if function is not None else None
        listed = [c for c in params.named_children if c.type != "comment"] if params is not None else []
        if name is None or len(listed) < 2 or any(p.type not in ("default_parameter", "typed_default_parameter")
                                                  for p in listed[1:]):
            continue
        prop = _text(name)
        getter = next((c for c in setget.children if c.type == "getter"), None)
        if getter is not None and functions.get(_text(getter)) is not None and \
                _writes_or_reads(functions[_text(getter)], prop, writes=False):
            continue  # a getter reading the stored value too: left as it is
        backing = ""
        if _writes_or_reads(function, prop, writes=True):
            backing = "_" + prop
            while backing in script.members or backing in functions:
                backing = "_" + backing
        script.wide_setters[prop] = (_text(setter), backing)


# Array and Dictionary methods that change the container (Godot 3 and Godot 4 names)
CONTAINER_MUTATORS = frozenset((
    "append", "append_array", "push_back", "push_front", "pop_back", "pop_front", "pop_at", "insert", "erase",
    "remove", "remove_at", "clear", "resize", "sort", "sort_custom", "shuffle", "invert", "reverse", "fill", "merge"))


_POOL_ARRAY = re.compile(r"\bPool(Byte|Int|Real|String|Vector2|Vector3|Color)Array\s*\(")


def unfolded_constant(value: ts.Node | None) -> bool:
    """A constant's value that Godot 4 does not fold: a Pool array constructor (Godot 4.6.3: "Assigned value
    for constant ... isn't a constant expression" for `PackedStringArray([...])`, checked; Godot 3 folded it)."""
    return value is not None and b"Pool" in value.text and any(
        n.type == "call" and _POOL_ARRAY.match(_text(n)) for n in descendants(value))


def _static_constants(children: list[ts.Node], script: Script) -> dict[str, str]:
    """The class's constants Godot 4 cannot keep as constants, with why (Script.static_constants)."""
    values = {_text(n.child_by_field_name("name")): n.child_by_field_name("value") for n in children
              if n.type == "const_statement" and n.child_by_field_name("name") is not None}
    found = {name: "packed" for name, value in values.items() if unfolded_constant(value)}
    found.update((name, "changed") for name in _mutated_constants(children, script) if name not in found)
    grown = True
    while grown:   # a constant expression cannot read a variable
        grown = False
        for name, value in values.items():
            read = next((_text(n) for n in descendants(value) if n.type == "identifier" and _text(n) in found),
                        None) if value is not None and name not in found else None
            if read is not None:
                found[name], grown = f"reads {read}", True
    return found


def _mutated_constants(children: list[ts.Node], script: Script) -> set[str]:
    """The class's constants holding an Array or Dictionary literal that its functions change through the bare
    name (`K[k] = v`, `K.a.b = v`, `K.append(v)`, `K[i].erase(x)`)."""
    names = {name for name, (kind, type_) in script.members.items() if kind == "const" and type_ in ("Array", "Dictionary")}
    found: set[str] = set()
    if not names:
        return found
    for function in children:
        if function.type not in ("function_definition", "constructor_definition") or \
                not any(name.encode() in function.text for name in names - found):
            continue
        shadowed = function_locals(function)
        for node in descendants(function, include_self=False):
            name = _text(node) if node.type == "identifier" else ""
            if name in names and name not in shadowed and _changes_container(node):
                found.add(name)
    return found


def _changes_container(node: ts.Node) -> bool:
    """Whether a bare name heads an assignment's target (`K[k] = v`, `K.a.b = v`) or a chain calling a mutating
    method (`K.append(v)`, `K[i].erase(x)`)."""
    links = [node.parent] if node.parent is not None and node.parent.type in ("attribute", "subscript") and \
        node.parent.children[0].id == node.id else []
    while links and links[-1].parent is not None and links[-1].parent.type in ("attribute", "subscript") and \
            links[-1].parent.children[0].id == links[-1].id:
        links.append(links[-1].parent)
    if not links:
        return False
    statement = links[-1].parent
    if statement is not None and statement.type in ("assignment", "augmented_assignment") and \
            statement.named_children[0].id == links[-1].id:
        return True
    return any(p.type == "attribute_call" and p.children and _text(p.children[0]) in CONTAINER_MUTATORS
               for link in links if link.type == "attribute" for p in link.children[1:])


def _writes_or_reads(function: ts.Node, name: str, writes: bool) -> bool:
    """Whether `function` assigns (`name = v`, `name.x += v`) or, with writes=False, reads its script's bare
    `name`, not shadowed by a parameter or local of the same name."""
    if name in function_locals(function):
        return False
    for node in descendants(function, include_self=False):
        if node.type != "identifier" or _text(node) != name or \
                node.parent is not None and node.parent.type == "attribute" and node.parent.children[0].id != node.id:
            continue  # `other.name` is not this script's
        target = stored_name(node.parent) if node.parent is not None else None
        if writes == (target is not None and target.id == node.id):
            return True
    return False


def stored_name(statement: ts.Node) -> ts.Node | None:
    """The bare name an assignment stores to, through its members (`a = v`, `a.x += v` -> `a`); None otherwise."""
    if statement.type not in ("assignment", "augmented_assignment", "attribute"):
        return None
    while statement.type == "attribute" and statement.parent is not None:
        statement = statement.parent
    if statement.type not in ("assignment", "augmented_assignment"):
        return None
    left = statement.named_children[0]
    while left.type in ("attribute", "subscript") and left.named_children:
        left = left.named_children[0]
    return left if left.type == "identifier" else None


def _read_body(children: list[ts.Node], script: Script, path: str, root: str, out: list[Script]) -> None:
    for node in children:
        kind = node.type
        if kind == "class_name_statement":
            name = node.child_by_field_name("name")
            if name is not None:
                script.class_name = _text(name)
            ext = next((c for c in node.named_children if c.type == "extends_statement"), None)
            if ext is not None:
                script.extends = _extends_target(ext)
        elif kind == "extends_statement":
            script.extends = _extends_target(node)
        elif kind in ("function_definition", "constructor_definition"):
            name = node.child_by_field_name("name")
            ret = node.child_by_field_name("return_type") or next(
                (c for c in node.named_children if c.type == "type"), None)
            if name is not None and script.members.get(_text(name), ("",))[0] == "signal":
                script.signal_clashes.add(_text(name))
            script.members[_text(name) if name is not None else "_init"] = ("func", _text(ret) if ret else None)
            if name is not None and any(c.type == "call" and _text(c.children[0]) == "yield"
                                        for c in descendants(node, include_self=False)):
                script.coroutines.add(_text(name))
            if name is not None:
                script.own_calls[_text(name)] = _own_calls(node)
            if b"connect(" in node.text or b"emit_signal(" in node.text:  # (a tree walk only where one may be)
                script.self_signals.update(_self_signals(node))
            if name is not None and node.end_point[0] - node.start_point[0] + 1 > MAX_FUNCTION_LINES:
                script.part_locals[_text(name)] = function_locals(node)
        elif kind in ("variable_statement", "onready_variable_statement", "export_variable_statement"):
            name = node.child_by_field_name("name")
            if name is None:
                continue
            type_node = next((c for c in node.named_children if c.type == "type"), None)
            if type_node is None and kind == "export_variable_statement":  # `export(PackedScene) var x`
                hint = node.child_by_field_name("arguments") or next(
                    (c for c in node.named_children if c.type == "arguments"), None)
                first = hint.named_children[0] if hint is not None and hint.named_children else None
                type_node = first if first is not None and first.type == "identifier" and \
                    _text(first)[:1].isupper() else None
            value = node.child_by_field_name("value") or _last_value(node)
            script.members[_text(name)] = ("var", declared_type(node, type_node, value))
            if kind == "export_variable_statement":
                script.exported.add(_text(name))
        elif kind == "const_statement":
            name = node.child_by_field_name("name")
            if name is not None:
                script.members[_text(name)] = ("const", value_type(node.child_by_field_name("value")))
        elif kind == "signal_statement":
            name = node.child_by_field_name("name")
            if name is not None and script.members.get(_text(name), ("",))[0] == "func":
                script.signal_clashes.add(_text(name))  # the function keeps the name's member entry
            elif name is not None:
                script.members[_text(name)] = ("signal", None)
        elif kind == "enum_definition":
            name = node.child_by_field_name("name")
            if name is not None:
                script.members[_text(name)] = ("enum", None)
            for enumerator in (c for c in descendants(node, include_self=False) if c.type == "enumerator"):
                if enumerator.named_children:
                    script.members.setdefault(_text(enumerator.named_children[0]), ("const", None))
        elif kind == "class_definition":
            name = node.child_by_field_name("name")
            if name is None:
                continue
            inner = Script(f"{path}::{_text(name)}", root)
            ext = next((c for c in node.named_children if c.type == "extends_statement"), None)
            inner.extends = _extends_target(ext) if ext is not None else None
            script.members[_text(name)] = ("class", None)
            out.append(inner)
            body = node.child_by_field_name("body") or next(
                (c for c in node.named_children if c.type == "class_body"), None)
            if body is not None:
                _read_body(body.children, inner, path, root, out)
    if any(c.type == "setget" for node in children for c in node.children):
        _wide_setters(children, script)
    if any(kind == "const" for kind, _ in script.members.values()):
        script.static_constants = _static_constants(children, script)


_SIGNAL_BY_NAME = ("connect", "disconnect", "is_connected", "emit_signal")


def _self_signals(function: ts.Node) -> set[str]:
    """Signals a function names on its own object: `connect("popup_hide", ...)`, `self.emit_signal("x")`."""
    out = set()
    for node in descendants(function, include_self=False):
        if node.type == "call" and _text(node.children[0]) in _SIGNAL_BY_NAME:
            call = node
        elif node.type == "attribute" and len(node.children) == 3 and _text(node.children[0]) == "self" and \
                node.children[2].type == "attribute_call" and _text(node.children[2].children[0]) in _SIGNAL_BY_NAME:
            call = node.children[2]
        else:
            continue
        args = call.child_by_field_name("arguments") or next((c for c in call.children if c.type == "arguments"), None)
        first = args.named_children[0] if args is not None and args.named_children else None
        if first is not None and first.type == "string":
            out.add(_text(first).strip("\"'"))
    return out


def parameter_names(node: ts.Node, found: dict[str, str | None]) -> bool:
    """Add the parameters `node` declares (a typed or defaulted one, or the plain names of a parameter
    list) to `found` with their written types; False when `node` declares none."""
    if node.type in ("typed_parameter", "typed_default_parameter", "default_parameter"):
        ident = next((c for c in node.named_children if c.type == "identifier"), None)
        type_node = next((c for c in node.named_children if c.type == "type"), None)
        if ident is not None:
            inferred = type_node is None and any(c.type == "inferred_type" for c in node.named_children)
            found[_text(ident)] = _text(type_node) if type_node is not None else \
                value_type(node.child_by_field_name("value")) if inferred else None  # `indices := []`
        return True
    if node.type == "parameters":
        for ident in (c for c in node.named_children if c.type == "identifier"):
            found.setdefault(_text(ident), None)
        return True
    return False


def function_locals(function: ts.Node) -> dict[str, str | None]:
    """A function's parameters and the variables its body declares, with their declared types."""
    found: dict[str, str | None] = {}
    for node in descendants(function, include_self=False):
        if parameter_names(node, found):
            continue
        if node.type == "variable_statement" and node.child_by_field_name("name") is not None:
            type_node = next((c for c in node.named_children if c.type == "type"), None)
            found.setdefault(_text(node.child_by_field_name("name")), _text(type_node) if type_node else None)
        elif node.type == "for_statement":
            ident = next((c for c in node.named_children if c.type == "identifier"), None)
            if ident is not None:
                found.setdefault(_text(ident), None)
    return found


def _last_value(node: ts.Node) -> ts.Node | None:
    named = [c for c in node.named_children if c.type not in ("name", "type", "inferred_type", "annotations",
                                                               "setget", "arguments")]
    return named[-1] if named else None


def _extends_target(node: ts.Node) -> str | None:
    target = _text(node).strip()
    target = re.sub(r"^extends\s+", "", target).strip()
    return target or None


# --- scenes -------------------------------------------------------------------------------------------


@dataclass
class _Node:
    path: str                          # "." for the root, "A/B" below it
    type: str | None
    script: str | None                 # tree path of the attached script
    instance: str | None               # tree path of the instanced scene
    unique: bool = False


_HEADER = re.compile(r"^\[(\w+)\s*(.*)\]\s*$")
MAX_FAMILY = 60  # nodes under a scripted node's parent beyond which `../` paths are not listed
_ATTR = re.compile(r'(\w+)\s*=\s*("(?:[^"\\]|\\.)*"|\w+\(\s*[^)]*\)|[^\s\]]+)')
_RESOURCE_REF = re.compile(r'ExtResource\(\s*"?([^")\s]+)"?\s*\)')


class _Nodes(list):
    """A scene's nodes in file order, and the paths its connections start from."""

    connected: set[str]
    connections: list[tuple[str, str, str, str]]  # (from, to, signal, method)

    def __init__(self) -> None:
        super().__init__()
        self.connected = set()
        self.connections = []


def _read_scene(path: str, root: str, text: str) -> _Nodes:
    resources: dict[str, str] = {}
    nodes = _Nodes()
    current: _Node | None = None
    for line in text.split("\n"):
        head = _HEADER.match(line.strip())
        if head:
            tag, attrs = head.group(1), dict((k, v.strip('"')) for k, v in _ATTR.findall(head.group(2)))
            current = None
            if tag == "ext_resource" and "id" in attrs and "path" in attrs:
                resources[attrs["id"]] = res_file(root, posixpath.dirname(path), attrs["path"])
            elif tag == "node" and "name" in attrs:
                parent = attrs.get("parent")
                name = attrs["name"]
                node_path_ = "." if parent is None else (name if parent == "." else f"{parent}/{name}")
                instance = _RESOURCE_REF.search(attrs.get("instance", ""))
                current = _Node(node_path_, attrs.get("type"), None,
                                resources.get(instance.group(1)) if instance else None)
                nodes.append(current)
            elif tag == "connection" and "from" in attrs:
                nodes.connected.add("." if attrs["from"] == "." else attrs["from"])
                nodes.connections.append((attrs["from"], attrs.get("to", ""), attrs.get("signal", ""),
                                          attrs.get("method", "")))
            continue
        if current is None:
            continue
        match = _KEY.match(line.strip())
        if not match:
            continue
        key, value = match.groups()
        ref = _RESOURCE_REF.search(value)
        if key == "script" and ref:
            current.script = resources.get(ref.group(1))
        elif key == "unique_name_in_owner" and value.strip() == "true":
            current.unique = True
    return nodes


def _scene_root(scenes: dict[str, list[_Node]], scene: str, seen: frozenset = frozenset()) -> tuple[str | None, str | None]:
    """(type, script) of a scene's root node, following instanced and inherited scenes."""
    nodes = scenes.get(scene) or []
    root = next((n for n in nodes if n.path == "."), None)
    if root is None or scene in seen:
        return None, None
    type_, script = root.type, root.script
    if root.instance and (type_ is None or script is None):
        base_type, base_script = _scene_root(scenes, root.instance, seen | {scene})
        type_, script = type_ or base_type, script or base_script
    return type_, script


def _node_type(scenes: dict[str, _Nodes], scene: str, path: str, depth: int = 0) -> str | None:
    """The engine type of node `path` of `scene`: its header's, else that of the scene it instances,
    else the type the instanced scene above it gives that node."""
    nodes = {n.path: n for n in scenes.get(scene) or ()}
    node = nodes.get(path)
    if depth > 16:
        return None
    if node is not None and node.type:
        return node.type
    if node is not None and node.instance:
        return _scene_root(scenes, node.instance)[0]
    parts = [] if path == "." else path.split("/")
    for cut in range(len(parts) - 1, -1, -1):  # the nearest instanced ancestor, the root last
        above = "/".join(parts[:cut]) or "."
        owner = nodes.get(above)
        if owner is not None and owner.instance:
            return _node_type(scenes, owner.instance, "/".join(parts[cut:]) or ".", depth + 1)
    return None


def _attach_nodes(ctx: ProjectContext, scenes: dict[str, list[_Node]]) -> None:
    for nodes in scenes.values():
        resolved = {}
        for node in nodes:
            type_, script = node.type, node.script
            if node.instance:
                base_type, base_script = _scene_root(scenes, node.instance)
                type_, script = type_ or base_type, script or base_script
            resolved[node.path] = (type_, script)
        for node in nodes:
            attached = resolved[node.path][1]
            owner = ctx.scripts.get(attached) if attached else None
            if owner is None:
                continue
            prefix = "" if node.path == "." else node.path + "/"
            owner.nodes.setdefault(".", resolved[node.path])
            parent = None if node.path == "." else (posixpath.dirname(node.path) or ".")
            up = "" if parent in (None, ".") else parent + "/"
            family = [o for o in nodes if parent is not None and (up == "" or o.path.startswith(up))]
            if parent is not None and len(family) <= MAX_FAMILY:  # `$"../Sibling"`, `get_parent()`
                owner.nodes.setdefault("..", resolved.get(parent, (None, None)))
                for other in family:
                    if other is not node and other.path != ".":
                        owner.nodes.setdefault("../" + other.path[len(up):], resolved[other.path])
            for other in nodes:
                if other is node:
                    continue
                if prefix == "" or other.path.startswith(prefix):
                    rel = other.path if prefix == "" else other.path[len(prefix):]
                    owner.nodes.setdefault(rel, resolved[other.path])
                if other.unique:
                    owner.nodes.setdefault("%" + other.path.rsplit("/", 1)[-1], resolved[other.path])
