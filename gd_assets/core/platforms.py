"""Platform names a script tests: Godot 4 renamed them, and Godot 3's say false there without a word.

`OS.has_feature("HTML5")` is never true in Godot 4, whose platform feature tags are lowercase and renamed
(`web`, checked in 4.6.3: `X11` is false and `linuxbsd` true on Linux); `OS.get_name() == "X11"` likewise, where
the two class references list what `get_name()` returns (Godot 3: "HTML5", "OSX", "X11"; Godot 4: "Web",
"macOS", "Linux" or a BSD's name). Godot 4 has no UWP export nor a Server platform (it runs `--headless`).
"""

from __future__ import annotations

from dataclasses import dataclass

import tree_sitter as ts

# Godot 3 platform feature tag -> Godot 4's (`OS.has_feature`)
FEATURE_TAGS = {"X11": "linuxbsd", "HTML5": "web", "JavaScript": "web", "OSX": "macos", "Windows": "windows",
                "Android": "android", "iOS": "ios"}
# Godot 3 `OS.get_name()` value -> Godot 4's (the others kept their name: "Windows", "Android", "iOS")
OS_NAMES = {"X11": "Linux", "HTML5": "Web", "OSX": "macOS"}
GONE = {"UWP": "Godot 4 has no UWP export", "Server": "Godot 4 has no Server platform: a headless run shows as "
        "`DisplayServer.get_name() == \"headless\"`"}


@dataclass(frozen=True)
class PlatformTest:
    """A platform name in a test: the string literal, what the script wrote, and Godot 4's name ("" if none)."""

    literal: ts.Node
    old: str
    new: str
    method: str   # has_feature | get_name


def _value(node: ts.Node) -> str | None:
    raw = node.text.decode("utf-8", "replace")
    return raw[1:-1] if node.type == "string" and len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "\"'" else None


def platform_tests(call: ts.Node, name: str, receiver: str | None) -> list[PlatformTest]:
    """The platform names `OS.has_feature(...)` (the call) or `OS.get_name()` (compared with `==`/`!=`, or
    matched) tests whose Godot 3 name Godot 4 does not have."""
    if receiver != "OS":
        return []
    if name == "has_feature":
        args = call.child_by_field_name("arguments")
        literals = [a for a in args.named_children if a.type != "comment"] if args is not None else []
        table = FEATURE_TAGS
    elif name == "get_name":
        whole = call.parent if call.parent is not None and call.parent.type == "attribute" else call
        holder = whole.parent
        op = holder.child_by_field_name("op") if holder is not None and holder.type == "binary_operator" else None
        if op is not None and op.type in ("==", "!="):
            literals = [c for c in (holder.child_by_field_name("left"), holder.child_by_field_name("right"))
                        if c is not None and c.id != whole.id]
        elif holder is not None and holder.type == "match_statement" and holder.child_by_field_name("value") is not None \
                and holder.child_by_field_name("value").id == whole.id:
            body = holder.child_by_field_name("body")
            literals = [p for s in (body.named_children if body is not None else []) if s.type == "pattern_section"
                        for p in s.named_children if p.type == "string"]
        else:
            literals = []
        table = OS_NAMES
    else:
        return []
    found = []
    for literal in literals:
        value = _value(literal)
        if value is not None and (value in table or value in GONE):
            found.append(PlatformTest(literal, value, table.get(value, ""), name))
    return found
