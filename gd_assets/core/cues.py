"""Retriever input: symbol cues taken from a fragment's body, never from its path.

GDScript cues come from the tree-sitter tree (called names, attribute chains, call shapes with
their arguments, `extends` targets, node paths, annotations and version-specific syntax); other
text (project.godot, scenes, resources, shaders) gives section keys, header attributes, resource
and node types. The analysis request adds `Godot 3`, `Godot 4`, `migration` when it asks for them.
"""

from __future__ import annotations

import itertools
import posixpath
import re
from dataclasses import dataclass

import tree_sitter as ts

from gd_assets.core.overrides import (
    Override,
    gone_virtual,
    overridden_anywhere,
    override_of,
    shadow_of,
    unfit_virtual,
)
from gd_assets.core.platforms import platform_tests
from gd_assets.core.project_context import function_locals, res_file, stored_name, unfolded_constant
from gd_assets.core.receivers import (
    ANY_PROJECT,
    PROJECT,
    UNKNOWN,
    Scope,
    chain_receivers,
    fragment_locals,
    is_engine,
    member_level,
)
from gd_assets.core.slicing import descendants, parse_gdscript, value_used

DEFAULT_REQUEST = (
    "Check whether this project is Godot 3 or Godot 4 and, where needed, find evidence for converting it"
)
MAX_SHAPE = 80
# cue sources the judge reads and the retriever does not
JUDGE_ONLY = ("name", "property", "named_member", "project_context", "declared_member", "native_override",
              "native_class_shadow", "analysis_limit", "coroutine_call", "signal_clash", "parent_callback",
              "random_seed")


@dataclass(frozen=True)
class Cue:
    cue: str
    source: str  # where in the body it came from: call, call_shape, attribute, extends, syntax, ...
    receiver: str | None = None  # who owns the name (receivers.py); None when read without project context


class _Cues:
    """An ordered, de-duplicated cue list (a name with two receivers is two cues)."""

    def __init__(self, scope: Scope | None = None) -> None:
        self.items: dict[tuple[str, str | None], Cue] = {}
        self.texts: set[str] = set()
        self.scope = scope
        self._chains: dict[int, tuple[dict[int, str], dict[int, str]]] = {}

    def chain(self, node: ts.Node) -> tuple[dict[int, str], dict[int, str]]:
        """(owner, type read on) of each member of the attribute chain `node`, resolved once per chain."""
        if node.id not in self._chains:
            before: dict[int, str] = {}
            self._chains[node.id] = (chain_receivers(node, self.scope, before), before)
        return self._chains[node.id]

    def add(self, cue: str, source: str, receiver: str | None = None) -> None:
        cue = cue.strip()
        if self.scope is None:
            receiver = None
        key = (cue, receiver)
        if cue and key not in self.items and not (receiver is None and cue in self.texts):
            self.items[key] = Cue(cue, source, receiver)
            self.texts.add(cue)


def request_cues(request: str) -> list[Cue]:
    """`Godot 3`, `Godot 4`, `migration` when the request asks about versions or migration."""
    text = request.lower()
    if re.search(r"godot\s*[34]|version|migrat|convert|upgrad|port", text):
        return [Cue("Godot 3", "request"), Cue("Godot 4", "request"), Cue("migration", "request")]
    return []


def extract_cues(kind: str, text: str, request: str = DEFAULT_REQUEST, file_kind: str | None = None,
                 scope: Scope | None = None) -> list[Cue]:
    """Cues of one fragment body; `kind` is the fragment kind, `file_kind` the file's kind. With a
    `scope` (the fragment's place in its project) each name carries its receiver."""
    cues = _Cues(scope)
    if file_kind == "gdscript" or (file_kind is None and kind in _GD_KINDS):
        _gdscript_cues(text, cues)
    elif file_kind in ("project", "config") or kind in ("preamble", "section"):
        _ini_cues(text, cues)
    elif file_kind in ("scene", "resource") or kind in _SCENE_KINDS:
        _scene_cues(text, cues)
    else:
        _word_cues(text, cues)
    if scope is not None and file_kind in ("scene", "resource", "project", "shader", "gdscript"):
        version = scope.context.config_versions.get(scope.root)
        if version:  # the project's format: a Godot 3 scene in a Godot 4 project is loaded as it is
            cues.add(f"config_version={version}", "project_context", "project")
    for cue in request_cues(request):
        cues.add(cue.cue, cue.source)
    return list(cues.items.values())


# Godot 3 classes whose every value is one of the class Godot 4 renamed them to: Godot 4 kept the old name for
# a wider base (Texture: 2D, 3D and layered; Light2D: point and directional), so a Godot 3 type `Texture` is
# Godot 4's `Texture2D` (a Texture-typed value loses `get_size`). Not Viewport: Godot 3's root was one, Godot 4's
# is a Window, which only the base covers.
WHOLE_RENAMED = ("Texture", "Light2D")

# Godot 3's Popups that Godot 4 makes Windows (only PopupMenu and PopupPanel stay Popups): their `popup_hide`
# signal is gone there, so a script that names it on itself declares it and emits it when hidden, as Godot 3 did.
WINDOW_DIALOGS3 = ("WindowDialog", "AcceptDialog", "ConfirmationDialog", "FileDialog")


def is_of_value(node: ts.Node) -> bool:
    """`x is get_script()`, `x is script` of a local variable: a type test against a value (a call, a subscript, a
    variable or parameter of the function), which Godot 4's `is` refuses ("Local variable "type" cannot be used as
    a type")."""
    if len(node.children) != 3 or _text(node.children[1]) != "is":
        return False
    right = node.children[2]
    if right.type == "identifier":
        if _text(right)[:1].isupper() or _text(right) in ("int", "float", "bool"):
            return False  # a type's name (a variable named like one is left as it is)
        function = node.parent
        while function is not None and function.type not in ("function_definition", "constructor_definition"):
            function = function.parent
        return function is not None and _text(right) in function_locals(function)
    return right.type in ("call", "subscript", "parenthesized_expression") or right.type == "attribute" and \
        right.children[-1].type in ("attribute_call", "attribute_subscript")


def returned_nothing(statement: ts.Node, scope: Scope | None, owners=None) -> bool:
    """`return node.accept_event()` of an engine method returning nothing, or of a project function typed
    `-> void`: Godot 3 returned null, Godot 4 refuses the value ("Cannot get return value of call ... because it
    returns "void""). `owners(chain, member)` resolves a chain's member (the caller's cache of chain_receivers)."""
    if scope is None or scope.engine is None or statement.type != "return_statement" or not statement.named_children:
        return False
    value = statement.named_children[0]
    if value.type == "call" and value.children[0].type == "identifier":
        name, owner = _text(value.children[0]), scope.implicit_owner(_text(value.children[0]), called=True)
    elif value.type == "attribute" and value.children[-1].type == "attribute_call" and value.children[-1].children:
        call = value.children[-1]
        name = _text(call.children[0])
        owner = owners(value, call) if owners is not None else chain_receivers(value, scope).get(call.id, UNKNOWN)
    else:
        return False
    if owner.startswith(PROJECT):
        script = scope.script_of(scope.owner(owner, name, called=True))
        return script is not None and script.members.get(name) == ("func", "void")
    return is_engine(owner) and scope.engine.returns_nothing(owner, name)


def path_and_string(node: ts.Node, scope: Scope | None) -> tuple[ts.Node, ts.Node] | None:
    """(the NodePath operand, the string literal) of `path == ""` or `"../" + path` on a value typed NodePath:
    Godot 3 converted between the two, Godot 4's compiler refuses the operands ("Invalid operands")."""
    if scope is None or len(node.children) != 3 or _text(node.children[1]) not in ("==", "!=", "+"):
        return None
    left, right = node.children[0], node.children[2]
    for path, literal in ((left, right), (right, left)):
        if literal.type == "string" and path.type == "identifier" and \
                scope.identifier_type(_text(path)) == "NodePath":
            return path, literal
    return None


def shims_of(scope: Scope | None) -> list[str]:
    """The Godot 3 classes the fragment's script gets as inner classes of its own (see project_context); a parent
    script's are inherited (declaring one again is an error)."""
    if scope is None or "::" in scope.scope or scope.script is None:
        return []
    inherited = {name for script in scope.script_chain()[1:] for name in script.shims}
    return sorted(scope.script.shims - inherited)


def shims_available(scope: Scope | None) -> set[str]:
    """The Godot 3 classes the fragment's script has as inner classes, its own or a parent script's."""
    return {name for script in scope.script_chain() for name in script.shims} if scope is not None else set()


_ENUM_MUTATORS = ("merge", "erase", "clear")


def mutated_enum(call: ts.Node, scope: Scope | None) -> bool:
    """`FileFormat.merge({...})`, `Export.FileFormat.erase(k)`: a project enum grown or shrunk at run time.
    Godot 3's enums were Dictionaries a script could change; Godot 4's are constant."""
    chain = call.parent
    if scope is None or call.type != "attribute_call" or chain is None or chain.type != "attribute" or \
            _text(call.children[0]) not in _ENUM_MUTATORS:
        return False
    parts = [c for c in chain.children if c.type not in (".", "line_continuation", "comment")]
    at = next((i for i, c in enumerate(parts) if c.id == call.id), 0)
    if at == 0 or parts[at - 1].type != "identifier":
        return False
    name = _text(parts[at - 1])
    if at == 1:
        holder = scope.owner(scope.self_type(), name)
    else:
        holder = chain_receivers(chain, scope).get(parts[at - 1].id, UNKNOWN)
    script = scope.script_of(holder)
    return script is not None and script.members.get(name, ("",))[0] == "enum"


def variable_hides_method(name: str, receiver: str | None, scope: Scope | None) -> bool:
    """A bare call of an engine method (`translate(v)`) in a script whose chain declares a variable of that name
    (`var translate = false`): Godot 3 called the method, Godot 4 reads the variable and refuses the call."""
    if scope is None or receiver is None or not is_engine(receiver) or name in scope.locals or \
            not scope.context.defines(scope.root, name):
        return False
    script = scope.script_of(scope.implicit_owner(name))
    return script is not None and script.members.get(name, ("",))[0] == "var"


# A typed function's empty value by its return type: Godot 3 let `return` alone end one (the caller got null),
# Godot 4 refuses it; the type's own empty value is what a test or a sum of it read
EMPTY_VALUES = {"bool": "false", "int": "0", "float": "0.0", "String": '""', "Array": "[]", "Dictionary": "{}",
                "Vector2": "Vector2.ZERO", "Vector3": "Vector3.ZERO", "Color": "Color()", "Rect2": "Rect2()"}


def bare_typed_return(node: ts.Node) -> str | None:
    """The value a bare `return` in a function typed `-> bool` (etc.) must give in Godot 4, else None."""
    if node.type != "return_statement" or node.named_children:
        return None
    function = node.parent
    while function is not None and function.type not in ("function_definition", "lambda"):
        function = function.parent
    kind = function.child_by_field_name("return_type") if function is not None else None
    return EMPTY_VALUES.get(_text(kind).strip()) if kind is not None else None


def stored_past_setter(statement: ts.Node, scope: Scope | None) -> bool:
    """A bare write of the class's own property whose Godot 3 setter takes more than one parameter and stores
    it (project_context.Script.wide_setters): Godot 3 stored it, Godot 4 would call the setter."""
    script = scope.script if scope is not None else None
    if script is None or not script.wide_setters:
        return False
    target = stored_name(statement)
    name = _text(target) if target is not None else ""
    return bool(script.wide_setters.get(name, ("", ""))[1]) and name not in scope.locals


def cyclic_preload(call: ts.Node, scope: Scope | None) -> bool:
    """`preload("x.tscn")` of a scene whose scripts need this script to compile (project_context). Not in a
    Godot 4 project: Godot 4.6 loads such a cycle when every script in it compiles (the ports that have one)."""
    if scope is None or not scope.context.cyclic_preloads or call.type != "call" or \
            _text(call.children[0]) != "preload" or scope.engine_version() == "4":
        return False
    args = call.child_by_field_name("arguments") or next((c for c in call.children if c.type == "arguments"), None)
    first = args.named_children[0] if args is not None and args.named_children else None
    if first is None or first.type != "string":
        return False
    scene = res_file(scope.root, posixpath.dirname(scope.path), _text(first).strip("\"'"))
    return (scope.path, scene) in scope.context.cyclic_preloads


_LITERAL_OF = {"dictionary": "Dictionary", "array": "Array", "string": "String", "true": "bool", "false": "bool"}


def contradicted_coroutine_type(function: ts.Node) -> ts.Node | None:
    """The `-> T` of a coroutine (it yields) that returns a literal of another type, or any value where T is
    `void`: Godot 3 never checked it (its callers got a function state first, and the value once it
    completed; checked in 3.6.2), Godot 4 refuses it ("A void function cannot return a value"). None otherwise."""
    kind = function.child_by_field_name("return_type")
    if kind is None or _text(kind).strip() == "Variant" or b"yield" not in function.text:
        return None
    declared = _text(kind).strip()
    if not any(n.type == "call" and _text(n.children[0]) == "yield" for n in descendants(function)):
        return None
    for node in descendants(function):
        if node.type == "return_statement" and node.named_children and (
                declared == "void" or _LITERAL_OF.get(node.named_children[0].type, declared) != declared):
            return kind
    return None


def popup_hide_host(scope: Scope | None) -> bool:
    """Whether the fragment's script is a Godot 3 dialog (a Window in Godot 4) that uses its own `popup_hide`."""
    if scope is None or scope.script is None or "popup_hide" not in scope.script.self_signals:
        return False
    if any("popup_hide" in script.members or script is not scope.script and "popup_hide" in script.self_signals
           for script in scope.script_chain()):
        return False  # declared here already, or by a parent script that uses it too
    return scope.engine_class_of(scope.self_type()) in WINDOW_DIALOGS3


def emulated_popup_hide(scope: Scope | None) -> bool:
    """Whether the script or a parent script declares Godot 3's `popup_hide` for Godot 4 (see popup_hide_host)."""
    if scope is None or scope.script is None or scope.engine_class_of(scope.self_type()) not in WINDOW_DIALOGS3:
        return False
    return any("popup_hide" in script.self_signals and "popup_hide" not in script.members
               for script in scope.script_chain())


# Global functions that returned a float in Godot 3 and return a Variant in Godot 4 (the two class
# references), with Godot 4's float version: `var x := max(a, b)` infers from a Variant there (an
# error by default); `maxf(a, b)` is what Godot 3's `max` computed.
VARIANT_RESULTS = {"abs": "absf", "ceil": "ceilf", "clamp": "clampf", "floor": "floorf", "max": "maxf", "min": "minf",
                   "round": "roundf", "sign": "signf", "stepify": "snappedf"}

_ARITHMETIC = {"+", "-", "*", "/", "%"}


def variant_result_calls(value: ts.Node | None) -> list[ts.Node]:
    """The calls of `max`, `abs`, ... that make an inferred value a Variant in Godot 4: the value itself, or
    an operand of its arithmetic (`0.5 * abs(d)`); not those inside another call's arguments."""
    found, todo = [], [value] if value is not None else []
    while todo:
        node = todo.pop()
        if node.type == "call" and _text(node.children[0]) in VARIANT_RESULTS:
            found.append(node)
        elif node.type == "parenthesized_expression" or (node.type in ("binary_operator", "unary_operator") and any(
                _text(c) in _ARITHMETIC for c in node.children if not c.is_named)):
            todo.extend(reversed(node.named_children))
    return found


_GD_KINDS = {"declaration", "function", "function_part", "class", "comment", "unparsed"}
_SCENE_KINDS = {"gd_scene", "gd_resource", "ext_resource", "sub_resource", "node", "connection", "editable",
                "resource"}


# --- GDScript -------------------------------------------------------------------------------------

def _parse(text: str) -> ts.Node:
    """Parse a fragment; a part of a long function starts indented, so it is wrapped in a function."""
    first = next((line for line in text.split("\n") if line.strip()), "")
    if first[:1] in (" ", "\t"):
        text = "func __fragment__():\n" + text
    return parse_gdscript(text).root_node


def _text(node: ts.Node) -> str:
    return node.text.decode("utf-8", "replace")


def _arg_shape(node: ts.Node) -> str:
    if node.type in ("identifier", "string", "integer", "float", "true", "false", "null", "string_name",
                     "node_path", "get_node") or (node.type == "attribute" and node.child_count <= 3
                                                   and all(c.type in ("identifier", ".") for c in node.children)):
        shape = _text(node)
        if len(shape) > 30:  # a long string still reads as a string (`connect("sig", self, "…")`)
            return '"…"' if node.type == "string" else "…"
        return shape
    if node.type == "identifier" or _text(node) == "self":
        return _text(node)
    return "…"


def _call_shape(name: str, arguments: ts.Node | None) -> str:
    args = [] if arguments is None else [_arg_shape(a) for a in arguments.named_children]
    shape = f"{name}({', '.join(args)})"
    return shape if len(shape) <= MAX_SHAPE else f"{name}(…)"


_ENUM_START = re.compile(r"^\s*enum\b[^{#]*\{\s*(#.*)?$")
_ENUM_ENTRY = re.compile(r"^\s*[A-Za-z_]\w*(\s*=\s*[^,#{}]+?)?\s*(,)?\s*(#.*)?$")


_FUNC_HEAD = re.compile(r"^[ \t]*(?:static\s+)?func\s+\w+\s*\(")
_VAR_PARAM = re.compile(r"(?<![\w.])var\s+(?=[A-Za-z_])")


def var_parameters(lines: list[str]) -> list[tuple[int, int, int]]:
    """(row, start, end) of each `var ` before a parameter (`func f(var x: int)`): Godot 3 accepted it, Godot 4
    (and the parser here) do not. Parameters on the `func` line only, up to its closing parenthesis."""
    out = []
    for row, line in enumerate(lines):
        head = _FUNC_HEAD.match(line)
        if head is None or "var" not in line:
            continue
        end = line.find(")", head.end())
        for m in _VAR_PARAM.finditer(line, head.end(), end if end >= 0 else len(line)):
            out.append((row, m.start(), m.end()))
    return out


def enum_missing_commas(lines: list[str]) -> list[tuple[int, int]]:
    """(row, column) after each enum entry that Godot 3 let a line break end instead of a comma
    (`A` then `B` on the next line); Godot 4 expects the comma there. One entry per line only."""
    out, row = [], 0
    while row < len(lines):
        if not _ENUM_START.match(lines[row]):
            row += 1
            continue
        last = None  # (row, end of its code) of the previous entry lacking a comma
        row += 1
        while row < len(lines) and "}" not in lines[row].split("#", 1)[0]:
            line = lines[row]
            code = line.split("#", 1)[0].rstrip()
            found = _ENUM_ENTRY.match(line) if code.strip() else None
            if found is not None:
                if last is not None:
                    out.append(last)
                last = None if found.group(2) else (row, len(code.encode("utf-8")))
            elif code.strip():
                break  # not an enum of one entry per line: left alone
            row += 1
        if row < len(lines) and last is not None and lines[row].split("#", 1)[0].strip().rstrip("}").strip():
            out.append(last)  # `A` then `B }` on the closing line
        row += 1
    return out


# Nodes whose later lines are no statement's: a multi-line string's text, a bracket's continued lines
_CONTINUED = ("string", "arguments", "array", "dictionary", "parenthesized_expression", "parameters")


def mixed_indents(lines: list[str], root: ts.Node) -> list[tuple[int, str, str]]:
    """(row, indentation, its replacement) of each code line indented with both tabs and spaces, which
    Godot 4 rejects. Godot 3 counted each as one column, so as many of the line's first character keep
    its depth. Lines inside a multi-line string are its text, and continued lines (in brackets, after a
    backslash) are read without indentation by both engines."""
    inside = {row for node in descendants(root) if node.type in _CONTINUED and node.end_point[0] > node.start_point[0]
              for row in range(node.start_point[0] + 1, node.end_point[0] + 1)}
    out = []
    for row, line in enumerate(lines):
        body = line.lstrip(" \t")
        indent = line[:len(line) - len(body)]
        if row > 0 and lines[row - 1].rstrip().endswith("\\"):
            continue  # a continued line: Godot 4 reads no indentation there (nor inside brackets)
        if " " in indent and "\t" in indent and body.strip() and not body.startswith("#") and row not in inside:
            out.append((row, indent, indent[0] * len(indent)))
    return out


def mixed_dictionary(node: ts.Node) -> bool:
    """A dictionary literal with both `key = value` and `"key": value` pairs (Godot 3 read both; Godot 4
    rejects the mix)."""
    styles = {pair.children[1].type for pair in node.named_children if pair.type == "pair" and pair.child_count >= 3}
    return {"=", ":"} <= styles


def _gdscript_cues(text: str, cues: _Cues) -> None:
    root = _parse(text)
    if "func" in text and var_parameters(text.split("\n")):
        cues.add("var parameter", "syntax")
    if "enum" in text and enum_missing_commas(text.split("\n")):  # (after the comments a declaration carries)
        cues.add("enum without commas", "syntax")
    if "\t " in text and mixed_indents(text.split("\n"), root):
        cues.add("mixed indentation", "syntax")
    if cues.scope is not None:
        declared, assigned = fragment_locals(root, cues.scope)
        cues.scope = Scope(cues.scope.context, cues.scope.scope, cues.scope.engine, declared, assigned)
    for node in descendants(root):
        _node_cues(node, cues)
    for line in text.split("\n"):
        stripped = line.strip()
        if stripped.startswith("#") and "TODOConverter" in stripped:
            cues.add("TODOConverter", "converter_leftover")
            cues.add(stripped.lstrip("#").strip()[:MAX_SHAPE], "converter_leftover")


_MEMBER_KINDS = ("variable_statement", "export_variable_statement", "onready_variable_statement")


def _node_cues(node: ts.Node, cues: _Cues) -> None:
    kind = node.type
    if not node.is_named:
        return
    if kind == "const_statement":
        value = node.child_by_field_name("value")
        parts = [c for c in value.children if c.type != "line_continuation"] if value is not None else []
        if value is not None and value.type == "binary_operator" and len(parts) == 3 and \
                _text(parts[1]) == "%" and parts[0].type == "string" and parts[2].type == "array":
            cues.add('const = "…" % […]', "syntax")  # Godot 4 folds `"%s" % K`, not a format of an array literal
        name = node.child_by_field_name("name")
        script = cues.scope.script if cues.scope is not None else None
        why = script.static_constants.get(_text(name)) if name is not None and script is not None else None
        if why == "changed":
            cues.add("constant changed at run time", "syntax")  # Godot 4's container constants are read-only
        elif why is not None or unfolded_constant(value):
            cues.add("constant Godot 4 cannot fold", "syntax")
    if kind == "variable_statement" and any(c.type == "inferred_type" for c in node.children) and \
            not (cues.scope is not None and cues.scope.context.warnings_silent(cues.scope.path)):
        for call in variant_result_calls(node.child_by_field_name("value")):
            callee = _text(call.children[0])  # `var x := max(a, b)`: a float in Godot 3, a Variant in Godot 4
            if not (cues.scope is not None and cues.scope.implicit_owner(callee).startswith(PROJECT)):
                cues.add(f":= {callee}()", "syntax")
    if kind in _MEMBER_KINDS and cues.scope is not None and member_level(node):
        name = node.child_by_field_name("name") or next((c for c in node.children if c.type == "name"), None)
        engine = cues.scope.engine_class_of(cues.scope.self_type())
        if name is not None and engine is not None:  # a member a Godot 4 engine class may have taken
            cues.add(_text(name), "declared_member", engine)
    if kind == "call" and cyclic_preload(node, cues.scope):
        cues.add("cyclic preload", "syntax")
    if kind in ("assignment", "augmented_assignment") and stored_past_setter(node, cues.scope):
        cues.add("write past a wide setter", "syntax")
    if kind == "return_statement" and bare_typed_return(node) is not None:
        cues.add("return without a value", "syntax")
    if kind == "return_statement" and returned_nothing(node, cues.scope,
                                                       lambda chain, member: cues.chain(chain)[0].get(member.id, UNKNOWN)):
        cues.add("return of a call returning nothing", "syntax")
    if kind == "attribute_call" and mutated_enum(node, cues.scope):
        cues.add("enum changed at run time", "syntax")
    if kind == "binary_operator" and is_of_value(node):
        cues.add("is <expression>", "syntax")
    if kind == "binary_operator" and path_and_string(node, cues.scope) is not None:
        cues.add("NodePath <op> String", "syntax")
    if kind == "dictionary" and mixed_dictionary(node):
        cues.add("mixed dictionary styles", "syntax")
    if kind == "string" and _text(node).startswith(("r\"", "r'")):
        cues.add('r""', "syntax")  # a raw string: GDScript 2 (it keeps `\/` as two characters)
    elif kind == "string" and re.search(r"(?<!\\)(?:\\\\)*\\/", _text(node)):
        cues.add("\\/ escape", "syntax")  # Godot 3 read `\/` as `/`; Godot 4 rejects the escape
    if kind == "string" and re.match(r"""^["'][^"'\n]*\.shader["']$""", _text(node)):
        cues.add(".shader", "resource_path")  # a path to a shader file by its Godot 3 extension
    if seed_anchor(node, cues.scope):
        cues.add("seed", "random_seed", cues.scope.self_type())
    if kind == "extends_statement":
        for child in node.named_children:
            target = _text(child).strip()
            receiver = cues.scope.resolve(target) if cues.scope is not None else None
            cues.add(target.split(".")[-1] if not target.startswith('"') else target, "extends", receiver)
        if popup_hide_host(cues.scope):
            cues.add("popup_hide", "emulated_signal", cues.scope.self_type())
        for shim in shims_of(cues.scope):
            cues.add(shim, "shim", cues.scope.self_type())
    elif kind == "function_definition":
        name = node.child_by_field_name("name")
        if name is not None and _text(name) != "__fragment__":
            cues.add(_text(name), "function")
            found = override_of(cues.scope, cues.scope.self_type(), _text(name)) if cues.scope is not None else None
            if found is not None:
                cues.add(found.name, *_override_source(found))
            elif (unfit := unfit_virtual(cues.scope, _text(name))) is not None:
                cues.add(_text(name), "virtual_renamed", unfit.owner3)
            elif (gone := gone_virtual(cues.scope, _text(name))) is not None:
                cues.add(_text(name), "virtual_gone", gone)
            _parent_callback_cue(_text(name), cues)
            if narrowed_event(node) is not None:
                cues.add("narrowed input callback", "syntax")
        if contradicted_coroutine_type(node) is not None:
            cues.add("coroutine returning another type", "syntax")
        for child in node.children:
            if child.type == "remote_keyword":
                cues.add(_text(child), "syntax")
            elif child.type == "static_keyword":
                cues.add("static func", "syntax")
    elif kind == "constructor_definition":
        if node.child_by_field_name("arguments") is not None or any(c.type == "arguments" for c in node.children):
            cues.add("_init().(…)", "syntax")
        else:
            _parent_callback_cue("_init", cues)
    elif kind == "call":
        name = _text(node.children[0])
        if name in _NODE_PATH_CALLS and node_name_argument(node, cues) is not None:
            cues.add("node name as NodePath", "syntax")
        receiver = _call_receiver(name, cues.scope)
        _coroutine_cue(node, name, receiver, cues)  # first: a cue of the same name and receiver is kept once
        cues.add(name, "call", receiver)
        if variable_hides_method(name, receiver, cues.scope):
            cues.add("method hidden by a variable", "syntax")
        _override_cue(name, receiver, cues)
        cues.add(_call_shape(name, node.child_by_field_name("arguments")), "call_shape", receiver)
        if name in ("yield", "super", "preload", "load"):
            cues.add(name + "(", "syntax")
        arguments = node.child_by_field_name("arguments")
        args = [a for a in arguments.named_children if a.type != "comment"] if arguments is not None else []
        if name == "String" and len(args) == 1 and args[0].type != "string" and \
                not re.search(r"(?i)(name|path)(\(\))?$", _text(args[0])):
            cues.add("String(value)", "syntax")
        if name == "add_child" and args and args[0].type == "identifier" and cues.scope is not None and \
                cues.scope.identifier_type(_text(args[0])) == "Tween":
            cues.add("add_child(Tween)", "syntax")  # a Godot 3 Tween node (Godot 4's Tween is no node)
        if name == "connect" and arguments is not None and arguments.named_children[:1] and \
                arguments.named_children[0].type == "string":
            cues.add('connect("signal", …) string', "syntax")
        if cues.scope is not None:
            _named_member_cues(name, arguments, cues.scope.self_type(), cues)
    elif kind == "attribute":
        _attribute_cues(node, cues)
    elif kind == "base_call":
        if _continues_previous_line(node):  # `a.b(x)\ <newline> .c(y)`: a chained call, not a parent call
            name = _text(node.children[0])
            receiver = cues.scope.owner(UNKNOWN, name) if cues.scope is not None else None
            cues.add("." + name, "call", receiver)
            cues.add(_call_shape(name, node.child_by_field_name("arguments")), "call_shape", receiver)
        else:
            cues.add("." + _text(node.children[1]) + "(", "syntax")
    elif kind == "get_node":
        path = _text(node)
        receiver = cues.scope.node_owner_type(path) if cues.scope is not None else None
        cues.add(path, "node_path", receiver)
        cues.add(re.split(r"[/.]", path.lstrip("$%").strip('"'))[-1], "node_path", receiver)
    elif kind == "string_name":
        cues.add("&\"\"", "syntax")
    elif kind == "node_path":  # `^"A/B"` is GDScript 2's NodePath literal, `@"A/B"` GDScript 1's
        cues.add("@\"\"" if _text(node).startswith("@") else "^\"\"", "syntax")
    elif kind == "annotation":
        ident = node.named_children[0] if node.named_children else None
        if ident is not None:
            cues.add("@" + _text(ident), "annotation")
    elif kind == "export_variable_statement":
        arguments = node.child_by_field_name("arguments")
        cues.add("export(" if arguments is not None else "export", "syntax")
        if arguments is not None:
            cues.add(_call_shape("export", arguments), "call_shape")
    elif kind == "onready_variable_statement":
        cues.add("onready", "syntax")
    elif kind == "class_name_statement" and node.child_by_field_name("icon_path") is not None:
        cues.add('class_name, "icon"', "syntax")
    elif kind == "setget" and node.is_named:
        if any(c.type == "setget" and not c.is_named for c in node.children):
            cues.add("setget", "syntax")
        else:
            cues.add("set(value):", "syntax")
    elif kind == "remote_keyword":
        cues.add(_text(node), "syntax")
    elif kind == "await_expression":
        cues.add("await", "syntax")
    elif kind == "lambda":
        cues.add("func() lambda", "syntax")
    elif kind == "expression_statement" and _text(node).strip() == "tool":
        cues.add("tool", "syntax")
    elif kind == "signal_statement":
        cues.add("signal", "syntax")
        name = node.child_by_field_name("name")
        if cues.scope is not None and name is not None and cues.scope.signal_clash(cues.scope.self_type(), _text(name)):
            cues.add(_text(name), "signal_clash", cues.scope.self_type())
    elif kind == "type":
        _type_cues(node, cues)
    elif kind == "identifier" and node.parent is not None and node.parent.type not in ("attribute_call",):
        name = _text(node)
        scope = cues.scope
        if re.fullmatch(r"[A-Z][A-Za-z0-9]*[a-z][A-Za-z0-9]*", name) or re.fullmatch(r"[A-Z][A-Z0-9]*_[A-Z0-9_]+", name) \
                or _gone_global_constant(name, scope):
            receiver = None
            parent = node.parent
            if scope is not None and parent is not None and parent.type == "attribute" and parent.children[0] != node:
                receiver = cues.chain(parent)[0].get(node.id, UNKNOWN)  # `VoxelTool.MODE_ADD`
            elif scope is not None and "_" in name:  # a constant: the script's chain, then the globals
                receiver = scope.implicit_owner(name)
            elif scope is not None:  # the script's own `const Logger = preload(...)` before any class
                own = scope.implicit_owner(name)
                receiver = own if own.startswith("project:") and own != "project:*" else \
                    scope.class_type(name) or scope.owner(UNKNOWN, name)
            if name in WHOLE_RENAMED and parent is not None and parent.type == "binary_operator" and \
                    parent.children[-1].id == node.id and _text(parent.children[1]) in ("is", "as"):
                cues.add(name, "type", receiver)  # `x is Texture`: a type, as in `x: Texture`
            cues.add(name, "identifier", receiver)
            _shadow_cue(name, cues)
        elif _is_bare_name(node) and not (scope is not None and name in scope.locals):
            cues.add(name, "name", scope.implicit_owner(name) if scope is not None else None)
            _shadow_cue(name, cues)  # `scale` the script's variable, named after Godot 4's Control.scale
    elif kind == "comment" and "TODOConverter" in _text(node):
        cues.add("TODOConverter", "converter_leftover")
    elif kind == "name" and node.parent is not None and node.parent.type in _DECLARATIONS and \
            node.parent.parent is not None and node.parent.parent.type in ("source", "class_body"):
        _shadow_cue(_text(node), cues)


# Callbacks Godot 3 called at every level of a script's extends chain (call_multilevel): the parent script's
# first for these, after the script's own for the others. Godot 4 calls the last one only, unless it calls
# super(). `_notification` runs at every level in both (in another order).
PARENT_FIRST_CALLBACKS = ("_init", "_enter_tree", "_ready", "_draw")
PARENT_AFTER_CALLBACKS = ("_exit_tree", "_process", "_physics_process", "_input", "_unhandled_input",
                          "_unhandled_key_input", "_gui_input")
_CHAINED = PARENT_FIRST_CALLBACKS + PARENT_AFTER_CALLBACKS + ("_notification",)


def parent_callback(scope: Scope | None, name: str) -> str | None:
    """The project script up the extends chain that defines the callback `name` too (`project:<scope>`)."""
    script = scope.script if scope is not None and name in _CHAINED else None
    if script is None or not script.extends:
        return None
    owner = scope.owner(scope.resolve(script.extends), name)
    return owner if owner.startswith(PROJECT) and owner != ANY_PROJECT else None


_ANCHORS = {"constructor_definition": "_init", "extends_statement": "extends", "class_name_statement": "class_name"}
_ANCHOR_TYPES = frozenset((*_ANCHORS, "function_definition"))
INPUT_CALLBACKS = ("_input", "_unhandled_input", "_unhandled_key_input", "_gui_input", "_shortcut_input")


def narrowed_event(function: ts.Node) -> tuple[ts.Node, str, str] | None:
    """(parameter, its name, its type) of `func _input(event: InputEventKey)`: Godot 3 let an input callback
    type its event narrower; Godot 4 wants the parent's signature, `event: InputEvent`."""
    name = function.child_by_field_name("name")
    params = function.child_by_field_name("parameters")
    if name is None or _text(name) not in INPUT_CALLBACKS or params is None:
        return None
    named = [p for p in params.named_children if p.type != "comment"]
    if len(named) != 1 or named[0].type != "typed_parameter":
        return None
    type_ = named[0].child_by_field_name("type")
    ident = named[0].named_children[0]
    if type_ is None or _text(type_) in ("InputEvent", "Variant") or ident.type != "identifier":
        return None
    return named[0], _text(ident), _text(type_)


_NODE_PATH_CALLS = ("has_node", "get_node", "get_node_or_null")


def node_name_argument(call: ts.Node, cues: _Cues | None = None, scope: Scope | None = None) -> ts.Node | None:
    """The argument of `has_node(child.name)` (or `get_node`, `get_node_or_null`) when it is a Node's `name` read
    on a typed value: a StringName in Godot 4, which these take only as a NodePath (a parse error there)."""
    args = next((c for c in call.children if c.type == "arguments"), None)
    named = [a for a in args.named_children if a.type != "comment"] if args is not None else []
    if len(named) != 1 or named[0].type != "attribute" or named[0].children[-1].type != "identifier" or \
            _text(named[0].children[-1]) != "name":
        return None
    if cues is not None:
        owners = cues.chain(named[0])[0] if cues.scope is not None else {}
    else:
        owners = chain_receivers(named[0], scope) if scope is not None else {}
    return named[0] if owners.get(named[0].children[-1].id) == "Node" else None


def seed_anchor(node: ts.Node, scope: Scope | None) -> bool:
    """Whether `node` is where the global random generator gets Godot 3's seed, in a project that never seeds
    it (project_context._random_seed_hosts): Godot 3 started it from one fixed seed, Godot 4 at random. The
    host script's `_init`, else its first function, else its last header statement."""
    if node.type not in _ANCHOR_TYPES or scope is None or "::" in scope.scope or node.parent is None or \
            node.parent.type != "source":
        return False  # (asked of every node: the cheapest test first)
    host, anchor = scope.context.random_seed_hosts.get(scope.root, ("", ""))
    if host != scope.path:
        return False
    if node.type == "function_definition":
        name = node.child_by_field_name("name")
        return name is not None and anchor == f"func:{_text(name)}"
    return anchor == _ANCHORS[node.type]


def _parent_callback_cue(name: str, cues: _Cues) -> None:
    """`func _ready():` in a script whose parent script has `_ready` too (judge only)."""
    found = parent_callback(cues.scope, name)
    if found is not None:
        cues.add(name, "parent_callback", found)


_DECLARATIONS = ("const_statement", "variable_statement", "export_variable_statement", "onready_variable_statement",
                 "enum_definition", "class_definition", "function_definition", "signal_statement")


def _shadow_cue(name: str, cues: _Cues) -> None:
    """A project member named after a class Godot 4 added (`const Logger`), declared or read here."""
    found = shadow_of(cues.scope, name)
    if found is not None:
        cues.add(name, "native_class_shadow", found.native)


_NOT_BARE_PARENTS = {"attribute", "attribute_call", "call", "parameters", "typed_parameter", "default_parameter",
                     "typed_default_parameter", "for_statement", "type", "subscript_arguments", "pattern_section",
                     "lambda", "setter", "getter", "enumerator", "signal_statement", "get_node", "base_call"}


SIGNAL_METHODS = ("connect", "disconnect", "is_connected", "emit")


def signal_use(chain: ts.Node) -> bool:
    """`pressed.connect(...)`: the chain's head is a signal (Godot 4), not a property read."""
    after = next((c for c in chain.children[1:] if c.type not in (".", "line_continuation", "comment")), None)
    return after is not None and after.type == "attribute_call" and _text(after.children[0]) in SIGNAL_METHODS


def _is_bare_name(node: ts.Node) -> bool:
    """A member read or written without a receiver (`rect_position = ...`): an implicit `self.` access."""
    parent = node.parent
    head = parent is not None and parent.type == "attribute" and parent.children[0] == node and \
        not signal_use(parent)  # `rect_size.x`, not `pressed.connect(...)`
    if parent is None or parent.type in _NOT_BARE_PARENTS and not head:
        return False
    if parent.type == "pair" and parent.children[0] == node:  # a Lua-style dictionary key `{position = 1}`
        return False
    name = _text(node)
    return len(name) > 3 and name[:1].islower() and name not in ("self", "true", "false", "null")


def _gone_global_constant(name: str, scope) -> bool:
    """`SPKEY`: a Godot 3 global constant without an underscore that Godot 4 lacks (other capitalised names are
    the project's constants, no cue)."""
    engine = scope.engine if scope is not None else None
    return engine is not None and name.isupper() and engine.is_global_constant("3", name) and \
        not engine.is_global_constant("4", name)


def _type_cues(node: ts.Node, cues: _Cues) -> None:
    """Class names in a type; `Outer.Inner` is read on what `Outer` is (a project enum stays the project's)."""
    scope, prev, prev_end, dotted_type = cues.scope, None, -1, UNKNOWN
    for ident in (c for c in descendants(node) if c.type == "identifier"):
        name = _text(ident)
        at = ident.start_byte - node.start_byte
        dotted = prev is not None and ident.start_byte == prev_end + 1 and node.text[at - 1:at] == b"."
        prev, prev_end = None, ident.end_byte
        if not name[:1].isupper():
            continue
        receiver = None
        if scope is not None and dotted:
            receiver = scope.owner(dotted_type, name)
        elif scope is not None:
            own = scope.implicit_owner(name)
            receiver = own if own.startswith("project:") and own != "project:*" else scope.class_type(name) or UNKNOWN
        cues.add(name, "type", receiver)
        if scope is not None:
            prev = name
            dotted_type = scope.member_type(dotted_type, name) if dotted else \
                (receiver if receiver and not receiver.startswith("project:") else scope.identifier_type(name))


# Calls whose first string argument names a member of the receiver: a signal or a method.
_NAMES_A_SIGNAL = ("connect", "disconnect", "is_connected", "emit_signal")
_NAMES_A_METHOD = ("call", "call_deferred", "callv", "has_method", "rpc", "rpc_unreliable", "rpc_id")


def _named_member_cues(name: str, arguments: ts.Node | None, type_: str, cues: _Cues) -> None:
    """`connect("text_entered", …)`, `call_deferred("change_scene", …)`: the string is a member name
    of the receiver; the only strings ever read as names (judge only)."""
    if name not in _NAMES_A_SIGNAL + _NAMES_A_METHOD or arguments is None or not arguments.named_children:
        return
    first = arguments.named_children[0]
    member = _text(first).strip("\"'") if first.type == "string" else ""
    if re.fullmatch(r"[A-Za-z_]\w*", member):
        kind = "signal" if name in _NAMES_A_SIGNAL else "method"
        cues.add(f"{kind}:{member}", "named_member", cues.scope.owner(type_, member))
        if kind == "signal" and cues.scope.signal_clash(type_, member):  # a signal Godot 4 renames here
            cues.add(member, "signal_clash", type_)


def _override_cue(name: str, receiver: str | None, cues: _Cues) -> None:
    """A call reaching a project method Godot 4's engine class already has (renamed project-wide); with
    an unknown receiver, a call of a name some project script renames (the call may reach it)."""
    if cues.scope is None or receiver is None:
        return
    found = override_of(cues.scope, receiver, name)
    if found is None and receiver in (UNKNOWN, ANY_PROJECT):
        found = overridden_anywhere(cues.scope, name)
        receiver = UNKNOWN if found is not None else receiver
    if found is not None:
        cues.add(found.name, *(("native_override", receiver) if receiver == UNKNOWN else _override_source(found)))


def _override_source(found: Override) -> tuple[str, str]:
    """The cue source and receiver of a project method Godot 4 renames: a native override, or a Godot 3 virtual."""
    return ("virtual_renamed", found.virtual_of) if found.virtual_of else ("native_override", found.native)


def _coroutine_cue(call: ts.Node, name: str, receiver: str | None, cues: _Cues) -> None:
    """A call of a project function that yields, whose value is used: Godot 4 needs `await` there."""
    if cues.scope is not None and receiver is not None and cues.scope.is_coroutine(receiver, name) and value_used(call):
        cues.add(name, "coroutine_call", receiver)


def _connection_override_cue(attrs: dict, cues: _Cues) -> None:
    """A scene connection calling a project method that Godot 4 renames (its node's script has it)."""
    scope = cues.scope
    target, method = attrs.get("to", "").strip('"'), attrs.get("method", "").strip('"')
    script = scope.context.scene_scripts.get((scope.path, target)) if scope is not None and target else None
    found = override_of(scope, PROJECT + script, method) if script and method else None
    if found is None and script and method:
        found = override_of(scope, scope.owner(PROJECT + script, method), method)
    if found is not None:
        cues.add(found.name, *_override_source(found))
    origin, signal = attrs.get("from", "").strip('"'), attrs.get("signal", "").strip('"')
    emitter = scope.context.scene_scripts.get((scope.path, origin)) if scope is not None and origin else None
    if emitter and signal and scope.signal_clash(PROJECT + emitter, signal):
        cues.add(signal, "signal_clash", PROJECT + emitter)


def emitter_class(attrs: dict, scope: Scope | None) -> str | None:
    """The engine class whose signal a scene connection names: its `from` node's type, unless the node's
    script declares a signal of that name itself."""
    origin, signal = attrs.get("from", "").strip('"'), attrs.get("signal", "").strip('"')
    if scope is None or not origin or not signal:
        return None
    script = scope.context.scene_scripts.get((scope.path, origin))
    declared = scope.context.scripts.get(script) if script else None
    if script and (scope.owner(PROJECT + script, signal).startswith(PROJECT) or
                   signal == "popup_hide" and declared is not None and signal in declared.self_signals):
        return None  # the script's own signal (a dialog's `popup_hide` it declares in Godot 4: popup_hide_host)
    return scope.context.node_type_in_scene(scope.path, origin)


def _call_receiver(name: str, scope: Scope | None) -> str | None:
    """A bare call: a constructor (`Timer()`, `PoolStringArray()`) or a method of the script's chain."""
    if scope is None:
        return None
    if name[:1].isupper() and not (scope.engine is not None and scope.engine.is_global_function("3", name)):
        return scope.class_type(name) or UNKNOWN
    return scope.implicit_owner(name, called=True)  # also `ColorN()`: a global function, not a class


def _continues_previous_line(node: ts.Node) -> bool:
    """Whether the code line before `node` (comments and blank lines skipped) ends with `\\`."""
    source = node.parent
    while source is not None and source.parent is not None:
        source = source.parent
    if source is None:
        return False
    lines = source.text.decode("utf-8", "replace").split("\n")[: node.start_point.row]
    for line in reversed(lines):
        code = line.strip()
        if not code or code.startswith("#"):
            continue
        return code.endswith("\\")
    return False


def _attribute_cues(node: ts.Node, cues: _Cues) -> None:
    """`Input.is_action_pressed`, `Vector2.ZERO`, `position.clamp`: each base with its next member."""
    parts: list[tuple[str, ts.Node]] = []
    receivers, read_on = cues.chain(node) if cues.scope is not None else ({}, {})
    for child in node.children:
        if child.type in (".", "line_continuation", "comment"):
            continue
        if child.type == "attribute_call":
            name = _text(child.children[0])
            parts.append((name, child))
            receiver = receivers.get(child.id)
            cues.add("." + name, "call", receiver)
            _override_cue(name, receiver, cues)
            _coroutine_cue(node if child is node.children[-1] else child, name, receiver, cues)
            if receiver == "OS" and cues.scope is not None and cues.scope.engine_version() != "4":
                for test in platform_tests(child, name, receiver):   # `OS.has_feature("HTML5")`: false in Godot 4
                    cues.add(f'{test.method}("{test.old}")', "platform_name", "OS")
            cues.add(_call_shape(name, child.child_by_field_name("arguments")), "call_shape", receiver)
            if cues.scope is not None:
                _named_member_cues(name, child.child_by_field_name("arguments"), read_on.get(child.id, UNKNOWN), cues)
            if name == "connect":
                args = child.child_by_field_name("arguments")
                first = args.named_children[0] if args is not None and args.named_children else None
                if first is not None and first.type == "string":
                    cues.add('connect("signal", …) string', "syntax")
                elif first is not None:
                    cues.add(".connect(callable)", "syntax")
        elif child.type == "identifier":
            parts.append((_text(child), child))
        elif child.type == "call":
            parts.append((_text(child.children[0]) + "()", child))
        elif child.type == "get_node":
            parts.append((_text(child), child))
        elif child.type == "attribute_subscript":
            parts.append((_text(child.children[0]), child))
        else:
            parts.append(("", child))
    for (base, _), (member, member_node) in itertools.pairwise(parts):
        if base and member:
            cues.add(f"{base}.{member}", "attribute", receivers.get(member_node.id))
    if cues.scope is not None:  # property reads and writes (not a signal's `.connect`/`.emit`): judge only
        for (member, member_node), (after, _) in itertools.pairwise(parts + [("", None)]):
            if member_node is not parts[0][1] and member_node.type == "identifier" and \
                    after not in ("connect", "disconnect", "emit", "is_connected"):
                cues.add("." + member, "property", receivers.get(member_node.id))
                found = shadow_of(cues.scope, member, receivers.get(member_node.id) or UNKNOWN)
                if found is not None:  # `panel.RegEx`: a project member named after a Godot 4 class
                    cues.add(member, "native_class_shadow", found.native)


# --- project.godot / .cfg, scenes and resources, other text ----------------------------------------

_KEY = re.compile(r"^([A-Za-z_][\w/.\-]*)\s*=\s*(.*)$")
_SECTION = re.compile(r"^\[([^\]]+)\]")
_CONSTRUCTOR = re.compile(r"\b([A-Z][A-Za-z0-9_]+)\(( ?)")
_HEADER_ATTR = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|[^\s\]]+)')
_OBJECT_KEYS = re.compile(r'"(scancode|physical_scancode|keycode|physical_keycode|button_index|doubleclick|'
                          r'alt|shift|control|meta|command|alt_pressed|shift_pressed|ctrl_pressed|meta_pressed|'
                          r'button_mask|factor|key_label|window_id|location)"\s*:')


def _value_cues(value: str, cues: _Cues) -> None:
    for name, space in _CONSTRUCTOR.findall(value):
        cues.add(name, "value_type")
        if name in ("ExtResource", "SubResource"):
            cues.add(f"{name}( … )" if space else f'{name}("…")', "call_shape")
    for key in _OBJECT_KEYS.findall(value):
        cues.add(key, "input_event_key")
    for event in re.findall(r"Object\((InputEvent\w+)", value):
        cues.add(event, "input_event")


def _ini_cues(text: str, cues: _Cues) -> None:
    for line in text.split("\n"):
        section = _SECTION.match(line)
        if section:
            cues.add(f"[{section.group(1)}]", "section")
            cues.add(section.group(1), "section")
            continue
        if line.startswith(";"):
            if "converter" in line.lower() or "godot" in line.lower():
                cues.add(line.lstrip("; ").strip()[:MAX_SHAPE], "comment")
            continue
        match = _KEY.match(line)
        if not match:
            _value_cues(line, cues)
            continue
        key, value = match.groups()
        cues.add(key, "key")
        short = value.strip()
        if len(short) <= 40 and "(" not in short:
            cues.add(f"{key}={short}", "key_value")
            if short.startswith('"res://'):
                cues.add(short.strip('"'), "value")
        _value_cues(value, cues)


def _scene_cues(text: str, cues: _Cues) -> None:
    """Header attributes, property names (each with its node's or resource's class as receiver, when
    the header or the project context tells it), value types, and the words of embedded shader code."""
    cls, node, members = None, None, {}
    lines = text.split("\n")
    for number, line in enumerate(lines):
        if line.startswith("["):
            tag = line[1:].split(" ", 1)[0].rstrip("]")
            cues.add(tag, "scene_header")
            attrs = dict(_HEADER_ATTR.findall(line))
            for name in ("format", "load_steps"):
                if name in attrs:
                    cues.add(f"{name}={attrs[name]}", "scene_header")
            if "uid" in attrs:
                cues.add("uid=", "scene_header")
            if "type" in attrs:
                cues.add(attrs["type"].strip('"'), "resource_type" if tag != "node" else "node_type")
            if "id" in attrs:
                cues.add("id=" + ("string" if attrs["id"].startswith('"') else "integer"), "scene_header")
            if attrs.get("path", "").endswith('.shader"'):
                cues.add(".shader", "scene_header")
            if tag == "connection":
                for name in ("signal", "method"):
                    if name in attrs:
                        cues.add(attrs[name].strip('"'), "connection",
                                 emitter_class(attrs, cues.scope) if name == "signal" else None)
                _connection_override_cue(attrs, cues)
            cls, node = _block_class(tag, attrs, cues.scope)
            members = _script_members(cues.scope, node)
            continue
        match = _KEY.match(line)
        if match and line[:1] not in (" ", "\t"):
            key, value = match.groups()
            cues.add(key, "property", members.get(key, cls))
            if re.match(r"tracks/\d+/type$", key) and value.strip() == '"transform"':
                cues.add("transform track", "animation_track")
            _value_cues(value, cues)
            if key == "code" and cls in ("Shader", "VisualShader"):
                for word in re.findall(r"[A-Za-z_][A-Za-z0-9_]{2,}", "\n".join(lines[number:])):
                    cues.add(word, "shader_word")
        else:
            _value_cues(line, cues)


def _script_members(scope: Scope | None, node: str | None) -> dict[str, str]:
    """What the script attached to a scene node declares (a scene may set it): name -> that script."""
    script = scope.context.scene_scripts.get((scope.path, node)) if scope is not None and node else None
    return dict.fromkeys(scope.script_members(script), PROJECT + script) if script else {}


def _block_class(tag: str, attrs: dict, scope: Scope | None) -> tuple[str | None, str | None]:
    """(class, node path) of a block whose properties follow: the header's type, else what the project
    context says (an instanced node's root, a `.tres`'s own type)."""
    typed = attrs.get("type", "").strip('"') or None
    if tag == "node":
        parent, name = attrs.get("parent", "").strip('"'), attrs.get("name", "").strip('"')
        path = "." if "parent" not in attrs else name if parent == "." else f"{parent}/{name}"
        if typed is None and scope is not None:
            typed = scope.context.node_type_in_scene(scope.path, path)
        return typed, path
    if tag == "resource" and scope is not None:
        return scope.context.node_type_in_scene(scope.path, "[resource]"), None
    return (typed, None) if tag == "sub_resource" else (None, None)


def _word_cues(text: str, cues: _Cues) -> None:
    for word in re.findall(r"[A-Za-z_][A-Za-z0-9_]{2,}", text):
        cues.add(word, "word")
        if len(cues.items) > 60:
            break


def dense_text(text: str, cues: list[Cue], limit: int = 1500) -> str:
    """What the dense search embeds: the main symbols, then the body (cut to `limit` characters)."""
    main = list(dict.fromkeys(c.cue for c in cues if c.source not in JUDGE_ONLY + ("request", "call_shape")))[:20]
    return (" ".join(main) + "\n" + text)[:limit]


def sparse_terms(cues: list[Cue]) -> list[str]:
    """What the sparse search matches: every cue but bare names (call shapes and request words included)."""
    return list(dict.fromkeys(c.cue for c in cues if c.source not in JUDGE_ONLY))
