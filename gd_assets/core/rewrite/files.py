"""Godot 3's `File` and `Directory` objects: Godot 4 opens with static `FileAccess.open` / `DirAccess.open`."""

from __future__ import annotations

import re

import tree_sitter as ts

from gd_assets.core.rewrite.tree import args_of, receiver_start, text_of

ACCESS = {"File": "FileAccess", "Directory": "DirAccess"}
OPENERS = {"open", "open_encrypted", "open_encrypted_with_pass", "open_compressed"}
# `Directory.new().make_dir_recursive(p)`: a call on a throwaway object -> Godot 4's static function
STATIC_USES = {
    **{m: f"DirAccess.{m}_absolute" for m in ("make_dir", "make_dir_recursive", "remove", "rename", "copy",
                                             "dir_exists")},
    "file_exists": "FileAccess.file_exists",
}


class FileRules:
    """`var f = File.new()` + `f.open(p, File.READ)` -> `var f = FileAccess.open(p, FileAccess.READ)`;
    apart, the declaration keeps only its type and each `open` assigns the variable (and
    `f.open(...) != OK` reads `FileAccess.get_open_error()`); `f.file_exists(p)` is static."""

    def file_new(self, node: ts.Node, name: str) -> bool:
        """`File.new()` / `Directory.new()`; True when rewritten."""
        statement = node.parent.parent
        if self._file_open(node, name) or self._static_use(node.parent):
            return True
        if self.scope is None:  # its uses could not be followed to their receiver: left to people
            return False
        access = ACCESS[name]
        cite = self.rules.cite("file" if name == "File" else "directory")
        if statement is not None and statement.type == "variable_statement" and \
                statement.named_children[-1].id == node.parent.id:
            var = statement.child_by_field_name("name")
            self.edit(var.end_point, statement.end_point, f": {access}", "file_access", cite, 0.85)
            return True
        if statement is not None and statement.type == "assignment" and statement.named_children[-1].id == node.parent.id \
                and statement.parent is not None and statement.parent.type == "expression_statement":
            self.replace(statement, f"{self.render(statement.named_children[0])} = null", "file_access", cite, 0.85)
            return True
        return False

    def _static_use(self, chain: ts.Node) -> bool:
        """`Directory.new().make_dir_recursive(p)` -> `DirAccess.make_dir_recursive_absolute(p)`."""
        parts = [c for c in chain.children if c.type not in (".", "line_continuation")]
        if len(parts) != 3 or parts[2].type != "attribute_call" or text_of(parts[2].children[0]) not in STATIC_USES:
            return False
        target = STATIC_USES[text_of(parts[2].children[0])]
        cls, member = target.split(".")
        self.edit(receiver_start(chain), parts[2].children[0].end_point, target, "file_access",  # its arguments stay
                  {"table": "docs_chunks", "id": f"docs:4:{cls}.method.{member}", "title": f"{cls}.{member} (Godot 4 method)"},
                  0.85)
        return True

    SHAPES = {name: ("file_call", ()) for name in (*OPENERS, "file_exists")}

    def _file_open(self, node: ts.Node, name: str) -> bool:
        """`var f = File.new()` followed by `f.open(path, File.READ)` -> `var f = FileAccess.open(...)`."""
        statement = node.parent.parent
        if statement is None or statement.type != "variable_statement":
            return False
        var = statement.child_by_field_name("name")
        following = statement.next_named_sibling
        while following is not None and following.type == "comment":
            following = following.next_named_sibling
        if var is None or following is None or following.type != "expression_statement":
            return False
        call = following.named_children[0] if following.named_children else None
        if call is None or call.type != "attribute" or text_of(call.children[0]) != text_of(var):
            return False
        member = call.children[-1]
        if member.type != "attribute_call" or text_of(member.children[0]) not in OPENERS or len(call.children) != 3:
            return False
        access = ACCESS[name]
        args = self.open_args(member, access, text_of(var))
        value = statement.named_children[-1]
        cite = self.rules.cite("file" if name == "File" else "directory")
        self.replace(value, f"{access}.{text_of(member.children[0])}({args})", "file_access", cite, 0.85)
        self.edit(statement.end_point, following.end_point, "", "file_access", cite, 0.85)
        return True

    def open_args(self, call: ts.Node, access: str, target: str) -> str:
        """The call's arguments with `File.READ`, and `f.READ` read on the object being opened (null until
        open returns it), as `FileAccess.READ` (the following statement's edits are not made yet)."""
        args = ", ".join(self.render(a) for a in args_of(call))
        return re.sub(rf"\b(?:File|Directory|{re.escape(target)})\.(?=[A-Z_][A-Z0-9_]*\b)", access + ".", args)

    def file_call(self, call: ts.Node, chain: ts.Node | None, owner: str, name: str) -> bool:
        """`f.open(...)` on a File or Directory; `f.file_exists(p)` on a File."""
        if chain is None or owner not in ACCESS or len(chain.children) != 3 or chain.children[-1].id != call.id:
            return False
        access = ACCESS[owner]
        cite = self.rules.cite("file" if owner == "File" else "directory")
        target = self.render(chain.children[0])
        args = self.open_args(call, access, target)
        if name == "file_exists" and owner == "File":
            self.replace(chain, f"FileAccess.file_exists({args})", "file_access", cite, 0.9)
            return True
        if name not in OPENERS:
            return False
        setup = [f"{target} = {access}.{name}({args})"]
        if not self.hoist(chain, setup, f"{access}.get_open_error()", "file_access", "file" if owner == "File"
                          else "directory", 0.85):
            self.manual_item(call, "file_access", f"{owner}.{name}() inside a loop condition or an elif",
                             f"Godot 4 opens with {access}.{name}(), which returns the object (null on failure)", cite)
        return True
