"""Project names that Godot 4 took. Methods its engine classes took: a script's `func grab_focus()` on a Control, or
`func get_class()` on any Object, is a compile error there (NATIVE_METHOD_OVERRIDE: a script cannot
replace a native method). Godot 3 let a script's method hide a native one; Godot 4 needs it renamed
in the script, in every subclass that overrides it and at every call that reaches it. Members named
after an engine class: a script's `onready var RegEx = $RegEx`, or `const Logger = preload(...)` (Godot
4.5 added `Logger`), is a parse error in Godot 4 ("The member "RegEx" shadows a native class"),
renamed in the script and wherever it is read.

The names come from the project context and the Godot 4 class reference only, once per project, so
the cues, the judge and the rewrite agree on every fragment.
"""

from __future__ import annotations

from dataclasses import dataclass

from gd_assets.core.corpus.surface import VirtualRename
from gd_assets.core.project_context import ProjectContext
from gd_assets.core.receivers import ANY_PROJECT, PROJECT, Scope

SUFFIX = "_"  # `grab_focus` -> `grab_focus_`: the name people keep, marked as the project's own
SIGNAL_SUFFIX = "_signal"  # a signal named like a function of its script: `error_message` -> `error_message_signal`


@dataclass(frozen=True)
class Override:
    """A project method `name` Godot 4's `native` (an engine class of its chain) already has; or a member named
    after Godot 4's class `native`, or after its `member` (`property` or `signal`) of the same name; or, with
    `virtual_of` (the Godot 3 class), a method overriding a Godot 3 virtual that Godot 4's `native` calls `new`
    (taking the parameters `added` after the others)."""

    name: str
    new: str
    native: str
    member: str = ""
    virtual_of: str = ""
    added: tuple[str, ...] = ()


def native_overrides(context: ProjectContext, engine) -> dict[str, dict[str, Override]]:
    """Script scope -> {method name: Override} for every non-virtual method a project script declares
    that its Godot 4 engine class chain already has, and, in a Godot 3 project, every method overriding
    a Godot 3 virtual that Godot 4 calls by another name (kept on the context: computed once)."""
    cached = context.__dict__.get("_native_overrides")
    if cached is not None:
        return cached
    found: dict[str, dict[str, Override]] = {}
    if engine is not None:
        for scope_name, script in context.scripts.items():
            names = [n for n, (kind, _) in script.members.items() if kind == "func" and not n.startswith("_")]
            path = scope_name.split("::", 1)[0]
            virtuals = context.engine_version(path) != "4"
            # Godot 4 reports no GDScript warning under `addons/` by default: Godot 4 code there that loads
            # overrides alike (a Godot 3 addon is renamed still: an override whose signature differs fails)
            natives = script.root not in context.native_overrides_allowed and not context.warnings_silent(path)
            if not names or not (virtuals or natives):
                continue
            cls = Scope(context, scope_name, engine).engine_class_of(PROJECT + scope_name)
            cls4 = cls if cls and engine.has_class("4", cls) else engine.class_renames.get(cls or "", "")
            setters = _accessors4(engine, cls4) if cls4 and natives else {}
            for name in names:
                virtual = engine.virtual_renamed(cls, name) if virtuals and cls else None
                if virtual is not None:
                    if virtual.fits and virtual.new not in script.members:
                        found.setdefault(scope_name, {})[name] = Override(
                            name, virtual.new, virtual.owner4, virtual_of=virtual.owner3, added=virtual.added)
                    continue
                native = (engine.owner_of("4", cls4, name, ("method",)) or setters.get(name)) if cls4 and natives \
                    else None
                if native and name + SUFFIX not in script.members:
                    found.setdefault(scope_name, {})[name] = Override(name, name + SUFFIX, native)
    context.__dict__["_native_overrides"] = found
    return found


def _godot3_class(scope: Scope | None) -> str | None:
    """The engine class of this script, where its project may be Godot 3 code (its virtuals are read as Godot 3's)."""
    if scope is None or scope.engine is None or scope.context.engine_version(scope.path) == "4":
        return None
    return scope.engine_class_of(scope.self_type()) or None


def gone_virtual(scope: Scope | None, name: str) -> str | None:
    """The Godot 3 class of the virtual a method of this script overrides where Godot 4 dropped the virtual
    (`_get_configuration_warning`, MainLoop's `_idle`), in a Godot 3 project; Godot 4 never calls the method."""
    cls = _godot3_class(scope)
    return scope.engine.virtual_gone(cls, name) if cls else None


def unfit_virtual(scope: Scope | None, name: str) -> VirtualRename | None:
    """The VirtualRename of a method of this script overriding a Godot 3 virtual whose Godot 4 counterpart takes
    other parameters (`EditorImportPlugin.get_option_visibility(option, options)` -> `_get_option_visibility(path,
    option_name, options)`): left as it is, with a manual item, in a Godot 3 project."""
    cls = _godot3_class(scope)
    found = scope.engine.virtual_renamed(cls, name) if cls else None
    return found if found is not None and not found.fits else None


def _accessors4(engine, cls4: str) -> dict[str, str]:
    """The setters and getters of Godot 4's `cls4` and its ancestors (`set_pressed` of BaseButton's
    `button_pressed`), by name -> class: native methods too, though the reference lists them as properties."""
    return {accessor: cls for cls in reversed(engine.ancestors("4", cls4)) for prop in engine.class_members.get(("4", cls), ())
            for accessor in engine.accessors.get(("4", cls, prop), ()) if accessor}


def override_of(scope: Scope | None, owner: str, name: str) -> Override | None:
    """The Override a call of `name` reaches through `owner` (a receiver: `project:<scope>`), if any."""
    if scope is None or not owner.startswith(PROJECT):
        return None
    return native_overrides(scope.context, scope.engine).get(owner[len(PROJECT):], {}).get(name)


def overridden_anywhere(scope: Scope | None, name: str) -> Override | None:
    """An Override of `name` in some script of the project, for a call whose receiver is unknown: only
    for a name few engine classes have (`grab_focus`), not `clear()` or Object's `get_class()`, which
    an untyped receiver reaches on anything."""
    if scope is None:
        return None
    found = next((by_name[name] for by_name in native_overrides(scope.context, scope.engine).values()
                  if name in by_name and not by_name[name].virtual_of), None)
    if found is None or found.native == "Object" or len(scope.engine.member_classes("4", "method", name)) > 3:
        return None
    return found


def native_class_shadows(context: ProjectContext, engine) -> dict[str, dict[str, Override]]:
    """Script scope -> {member name: Override} for every member (constant, variable, function, enum,
    inner class) named after a class of the Godot 4 reference (kept on the context: computed once).
    Godot 3 let a member hide a class (`onready var RegEx = $RegEx`); `native` is that class. And every
    variable named after a property or signal Godot 4's class has and Godot 3's did not have as a property
    (`var scale` on a Control, `var confirmed` on a ConfirmationDialog: "Member redefined" in Godot 4),
    unless exported: a scene sets it by name, and would set the engine's property instead."""
    cached = context.__dict__.get("_native_class_shadows")
    if cached is not None:
        return cached
    found: dict[str, dict[str, Override]] = {}
    if engine is not None:
        for scope_name, script in context.scripts.items():
            cls3 = cls4 = None
            for name, (kind, _) in script.members.items():
                if name + SUFFIX in script.members:
                    continue
                if name[:1].isupper() and engine.has_class("4", name):
                    found.setdefault(scope_name, {})[name] = Override(name, name + SUFFIX, name)
                elif kind == "var" and name not in script.exported and not name.startswith("_"):
                    if cls3 is None:
                        cls3 = Scope(context, scope_name, engine).engine_class_of(PROJECT + scope_name) or ""
                        cls4 = cls3 if engine.has_class("4", cls3) else engine.class_renames.get(cls3, "")
                    native = engine.owner_of("4", cls4, name, ("property", "signal")) if cls4 else None
                    if name == "velocity" and native in ("CharacterBody2D", "CharacterBody3D"):
                        continue  # the body's own velocity, which move_and_slide() reads (SyntaxRules drops the var)
                    if native and not engine.owner_of("3", cls3, name, ("property", "method", "constant")):
                        member = "signal" if "signal" in engine.kinds.get(("4", native, name), ()) else "property"
                        found.setdefault(scope_name, {})[name] = Override(name, name + SUFFIX, native, member)
    context.__dict__["_native_class_shadows"] = found
    return found


def shadow_of(scope: Scope | None, name: str, owner: str | None = None) -> Override | None:
    """The Override of `name` read in `scope` (the script's chain owns it, or `owner`, the receiver of
    `x.name`), if the project member shadows a Godot 4 class or a member of its engine class."""
    if scope is None or (owner is None and name in scope.locals):
        return None
    owner = owner or scope.implicit_owner(name)
    if not owner.startswith(PROJECT) or owner == ANY_PROJECT:
        return None
    return native_class_shadows(scope.context, scope.engine).get(owner[len(PROJECT):], {}).get(name)
