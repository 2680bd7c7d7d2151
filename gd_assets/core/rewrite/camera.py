"""Camera2D's `zoom`, which Godot 4 inverted: Godot 3's `zoom = Vector2(2, 2)` showed twice as much of the
world, Godot 4's shows half as much. Each write stores the reciprocal and each read reads it back, so the
script's own numbers keep their Godot 3 meaning (the scene's value is inverted by the scene rewrite)."""

from __future__ import annotations

import re

import tree_sitter as ts

from gd_assets.core.rewrite.tree import args_of, bare_reference, receiver_start, text_of

_NUMBER = re.compile(r"^-?\d+(\.\d*)?$")
_SWAPPED = {"*=": "/=", "/=": "*="}


def _reciprocal(text: str) -> str | None:
    """`2` -> `0.5`: a non-zero number literal's reciprocal, else None."""
    if not _NUMBER.match(text) or float(text) == 0:
        return None
    value = 1 / float(text)
    return str(int(value)) if value == int(value) else repr(round(value, 6))


class CameraRules:
    """Camera2D's `zoom` written and read with Godot 3's meaning."""

    def on_identifier(self, node: ts.Node) -> None:
        if not (bare_reference(node) and text_of(node) == "zoom" and self._camera_zoom(node, None, self.implicit_owner("zoom"))):
            super().on_identifier(node)

    def on_attribute(self, node: ts.Node) -> None:
        for member in node.children[1:]:
            if member.type == "identifier" and text_of(member) == "zoom":
                self._camera_zoom(member, node, self.chain_owner(node, member))
        super().on_attribute(node)

    def _camera_cite(self) -> dict | None:
        return self.rules.cite_prototype("camera2d-zoom-inverted") or (
            {"table": "docs_chunks", "id": "docs:4:Camera2D.property.zoom", "title": "Camera2D.zoom (Godot 4 property)"})

    def _camera_zoom(self, node: ts.Node, chain: ts.Node | None, owner: str) -> bool:
        if owner != "Camera2D" or self.scope is None or self.scope.engine_version() == "4":
            return False
        if chain is not None and chain.children[-1].id != node.id:
            # `camera.zoom.x`: the part of the chain through `zoom` is the value read
            whole_end = node.end_point
            base = self.render_until(chain, node)
            if any(c.type == "attribute_call" for c in chain.children):
                return False
            statement = chain.parent
            if statement is not None and statement.type in ("assignment", "augmented_assignment") and \
                    statement.children[0].id == chain.id:
                self.manual_item(statement, "camera_zoom", "a component of Camera2D.zoom is set",
                                 "Godot 4 inverted zoom: set the whole vector to its reciprocal "
                                 "(`zoom = Vector2(1.0 / x, zoom.y)`)", self._camera_cite())
                return True
            self.edit(receiver_start(chain), whole_end, f"(Vector2.ONE / {base + '.' if base else ''}zoom)",
                      "camera_zoom", self._camera_cite(), 0.85)
            return True
        whole = chain if chain is not None else node
        start = receiver_start(whole) if chain is not None else node.start_point  # `a < (b.camera).zoom`
        text = self.render_span(start, whole.end_point)
        statement = whole.parent
        cite = self._camera_cite()
        if statement is not None and statement.type in ("assignment", "augmented_assignment") and \
                statement.children[0].id == whole.id:
            operator = statement.children[1]
            value = statement.children[-1]
            op = text_of(operator)
            if statement.type == "augmented_assignment" and op in _SWAPPED:
                self.replace(operator, _SWAPPED[op], "camera_zoom", cite, 0.9)
                return True
            if statement.type == "augmented_assignment":
                self.manual_item(statement, "camera_zoom", f"Camera2D.zoom {op} …", "Godot 4 inverted zoom: "
                                 "compute the Godot 3 value, then store its reciprocal (`zoom = Vector2.ONE / v`)", cite)
                return True
            self.replace(value, self._camera_inverse(value), "camera_zoom", cite, 0.9)
            return True
        self.edit(start, whole.end_point, f"(Vector2.ONE / {text})", "camera_zoom", cite, 0.85)
        return True

    def _camera_inverse(self, value: ts.Node) -> str:
        """`Vector2(2, 2)` -> `Vector2(0.5, 0.5)`; any other value `v` -> `Vector2.ONE / (v)`."""
        if value.type == "call" and text_of(value.children[0]) == "Vector2":
            parts = [_reciprocal(self.render(a)) for a in args_of(value)]
            if len(parts) == 2 and all(parts):
                return f"Vector2({parts[0]}, {parts[1]})"
        text = self.render(value)
        return f"Vector2.ONE / {text}" if value.type in ("identifier", "attribute") else f"Vector2.ONE / ({text})"
