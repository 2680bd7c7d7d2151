"""Ask Godot 4 itself whether a finding's claim about its API is true.

A flag on a human port's Godot 4 code, in a script Godot 4 loads, is counted false by `ports.py`. But
a script loads with a Godot 3 member read on an untyped value (`if button.pressed:` reads Godot 4's
`pressed` signal, always true; `$Popup.get_minimum_size()` calls what Godot 4's PopupPanel, a Window,
does not have): the port is wrong there and only a run shows it. This module takes the claims of the
form "`Class.member` exists only in Godot 3" out of the findings' rationales and asks Godot 4's
ClassDB, in one headless run, what `Class` (the receiver, when the rationale names one) has under
that name: nothing (the claim holds: a runtime error or a wrong value in the port), another kind of
member (the claim holds for the kind read: a signal read as a property), or the member itself (the
claim is wrong).
"""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path

from gd_assets.core import engines

CLAIM = re.compile(r"`(\w+)\.(\w+)` exists only in Godot 3")
STATIC = re.compile(r"`(\w+)\.(\w+)\(\)` is static in Godot 4")
VIRTUAL = re.compile(r"overrides Godot 3's virtual `(\w+)\.(\w+)`")
RECEIVER = re.compile(r"^[^;]*?: on a `(\w+)`")
GONE_CLASS = re.compile(r"class `(\w+)` exists only in Godot 3")
ANY_METHOD = re.compile(r"(?:^|[:;.] )(?:method )?`(\w+)\(\)` exists only in Godot 3")
ANY = "*"  # a claim about every class: no Godot 4 class has a member of that name
SCRIPT = """\
extends SceneTree
func _init():
\tvar out = {}
\tfor pair in JSON.parse_string(FileAccess.get_file_as_string("%s")):
\t\tvar cls = pair[0]
\t\tvar name = pair[1].trim_prefix("static ").trim_prefix("virtual ")
\t\tvar kinds = []
\t\tif cls == "*":
\t\t\tif every_member().has(name): kinds.append("member")
\t\telif name == "class":
\t\t\tkinds.append("class" if ClassDB.class_exists(cls) else "no class")
\t\telif not ClassDB.class_exists(cls):
\t\t\tkinds.append("no class")
\t\telse:
\t\t\tif ClassDB.class_has_method(cls, name): kinds.append("method")
\t\t\tfor m in ClassDB.class_get_method_list(cls):
\t\t\t\tif m["name"] == name and m["flags"] & METHOD_FLAG_STATIC: kinds.append("static")
\t\t\t\tif m["name"] == name and m["flags"] & METHOD_FLAG_VIRTUAL: kinds.append("virtual")
\t\t\tif ClassDB.class_has_signal(cls, name): kinds.append("signal")
\t\t\tif ClassDB.class_has_integer_constant(cls, name) or ClassDB.class_has_enum(cls, name): kinds.append("constant")
\t\t\tfor p in ClassDB.class_get_property_list(cls):
\t\t\t\tif p["name"] == name: kinds.append("property")
\t\t\tif kinds.is_empty() and pair[1] == name and ClassDB.can_instantiate(cls):
\t\t\t\tif accepts_write(ClassDB.instantiate(cls), name): kinds.append("compatibility setter")
\t\tout[cls + "." + pair[1]] = kinds
\tprint("@@claims " + JSON.stringify(out))
\tquit()

# Every method, property and signal name of every Godot 4 class, once.
var _every = {}
func every_member():
\tif _every.is_empty():
\t\tfor c in ClassDB.get_class_list():
\t\t\tfor m in ClassDB.class_get_method_list(c, true): _every[m["name"]] = true
\t\t\tfor p in ClassDB.class_get_property_list(c, true): _every[p["name"]] = true
\t\t\tfor g in ClassDB.class_get_signal_list(c, true): _every[g["name"]] = true
\treturn _every

# Whether setting `name` changes any listed property: a name Godot 4 keeps for old scenes in `_set` only
# (TextureRect's `expand` sets `expand_mode`), which ClassDB does not list.
func accepts_write(o, name):
\tvar before = {}
\tfor p in o.get_property_list():
\t\tbefore[p["name"]] = o.get(p["name"])
\tvar changed = false
\tfor value in [true, 1, 1.0]:
\t\to.set(name, value)
\t\tfor p in o.get_property_list():
\t\t\tif before.has(p["name"]) and typeof(before[p["name"]]) == typeof(o.get(p["name"])) and before[p["name"]] != o.get(p["name"]):
\t\t\t\tchanged = true
\tif o is Object and not o is RefCounted:
\t\to.free()
\treturn changed
"""


def claims(rationale: str) -> list[tuple[str, str]]:
    """The (receiver class, member) pairs a rationale says Godot 4 lacks, in order, then the methods it says
    Godot 4 made static (as (class, "static " + name)); a Godot 3 virtual the rationale says Godot 4 never
    calls comes first (as (class, "virtual " + name)): Godot 4 has no virtual of that name. Then the classes it says
    Godot 4 removed (as (class, "class")) and the methods it says no Godot 4 class has (as ("*", name)): ClassDB
    lists no such class, no member of that name on any class."""
    out = [(cls, f"virtual {name}") for cls, name in VIRTUAL.findall(rationale)]
    for found in CLAIM.finditer(rationale):
        receiver = RECEIVER.match(rationale[found.end():].split(". ", 1)[0])
        out.append((receiver.group(1) if receiver else found.group(1), found.group(2)))
    out += [(cls, f"static {name}") for cls, name in STATIC.findall(rationale)]
    return out + [(cls, "class") for cls in GONE_CLASS.findall(rationale)] + \
        [(ANY, name) for name in ANY_METHOD.findall(rationale)]


def godot4_members(pairs: set[tuple[str, str]], godot_path: str | None) -> dict[tuple[str, str], list[str]]:
    """What Godot 4's ClassDB has as each (class, name): a list of kinds, empty when nothing, ["no class"]."""
    if not pairs:
        return {}
    godot = engines.find_godot(godot_path)
    with tempfile.TemporaryDirectory(prefix="gd-claims-") as tmp:
        folder = Path(tmp)
        (folder / "pairs.json").write_text(json.dumps(sorted(pairs)))
        (folder / "claims.gd").write_text(SCRIPT % (folder / "pairs.json"))
        status, text = godot.run(["--script", str(folder / "claims.gd")], folder / "home", timeout=120)
    line = next((row for row in text.splitlines() if row.startswith("@@claims ")), None)
    if line is None:
        raise RuntimeError(f"Godot 4 answered no claims (status {status}): {text[-2000:]}")
    found = json.loads(line.removeprefix("@@claims "))
    return {(cls, name): found.get(f"{cls}.{name}", []) for cls, name in pairs}


def verdict(name: str, kinds: list[str]) -> str:
    """How Godot 4 answers one claim about `name`: `holds` (nothing of that name; for "static m", a static
    method), `holds: another kind` (a signal where a property was read) or `wrong` (Godot 4 has the member,
    takes a write of it through a compatibility setter, or the method is not static)."""
    if name.startswith("static "):
        return "holds" if "static" in kinds else "wrong"
    if name.startswith("virtual "):
        return "wrong" if "virtual" in kinds else "holds"
    if name == "class":
        return "holds" if kinds == ["no class"] else "wrong"
    if "compatibility setter" in kinds:
        return "wrong"   # a write still works (a read does not): not confirmed
    if not kinds or kinds == ["no class"]:
        return "holds"
    if kinds == ["signal"]:
        return "holds: another kind"
    return "wrong"
