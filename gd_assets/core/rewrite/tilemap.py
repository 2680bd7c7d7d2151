"""TileMap's Godot 3 calls on layer 0 of Godot 4's TileMap.

Godot 4 reads a Godot 3 TileSet by making one atlas source per Godot 3 tile, numbered in the order of
the tile ids (0, 1, 2... when the ids have no gaps), a single tile at atlas coordinates (0, 0) and an
atlas or autotile's subtiles at their own coordinates; the scene's cells are mapped the same way. So
a tile id becomes a source id, an autotile coordinate the atlas coordinates, and the flips the
alternative tile's transform flags. Where a TileSet's ids have gaps the source ids shift: said once a
fragment, in a manual item.
"""

from __future__ import annotations

import tree_sitter as ts

from gd_assets.core.rewrite.tree import args_of, bare_reference, receiver_start, text_of

LAYER = "0"
_FLIPS = ("TileSetAtlasSource.TRANSFORM_FLIP_H", "TileSetAtlasSource.TRANSFORM_FLIP_V",
          "TileSetAtlasSource.TRANSFORM_TRANSPOSE")
_FLIPPED = {"is_cell_x_flipped": "is_cell_flipped_h", "is_cell_y_flipped": "is_cell_flipped_v",
            "is_cell_transposed": "is_cell_transposed"}
_BITMASK = ("update_bitmask_region", "update_bitmask_area")


class TileMapRules:
    """TileMap's Godot 3 calls on layer 0 of Godot 4's TileMap."""

    SHAPES: dict[str, tuple[str, tuple]] = {
        **{name: ("_tile_set_cell", ()) for name in ("set_cell", "set_cellv")},
        **{name: ("_tile_read_cell", ("get_cell_source_id",)) for name in ("get_cell", "get_cellv")},
        "get_cell_autotile_coord": ("_tile_read_cell", ("get_cell_atlas_coords",)),
        **{name: ("_tile_read_cell", (new,)) for name, new in _FLIPPED.items()},
        "get_used_cells": ("_tile_on_layer", ()), "get_used_cells_by_id": ("_tile_on_layer", ()),
        "map_to_world": ("_tile_map_to_local", ()),
        **{name: ("_tile_bitmask", ()) for name in _BITMASK},
        "update_dirty_quadrants": ("_tile_dirty_quadrants", ()),
    }

    def _is_tilemap(self, owner: str) -> bool:
        """A TileMap, or a project script extending one (receivers report its engine class)."""
        return owner == "TileMap"

    def _tile_cite(self, name: str, new: str | None = None) -> dict | None:
        """The api_mapping row of Godot 3's `TileMap.name` where the rules load it, else the Godot 4 class
        reference row of the method the rewrite calls (`new`)."""
        cite = self.rules.cite(f"map:diff:method:TileMap.{name}")
        new = new or name
        if cite is None and self.rules.surface.class_member("4", "TileMap", new):
            cite = {"table": "docs_chunks", "id": f"docs:4:TileMap.method.{new}", "title": f"TileMap.{new} (Godot 4 method)"}
        return cite

    def _tile_coords(self, args: list[ts.Node], vector: bool) -> tuple[str, list[ts.Node]] | None:
        """The cell as a Vector2i and the arguments after it: `Vector2(x, y)` / `p` or `x, y`."""
        if vector:
            if not args:
                return None
            first = args[0]
            if first.type == "call" and text_of(first.children[0]) in ("Vector2", "Vector2i"):
                inner = args_of(first)
                coords = f"Vector2i({', '.join(self.render(a) for a in inner)})" if len(inner) == 2 else \
                    f"Vector2i({self.render(first)})"
            else:
                coords = f"Vector2i({self.render(first)})"
            return coords, args[1:]
        if len(args) < 2:
            return None
        return f"Vector2i({self.render(args[0])}, {self.render(args[1])})", args[2:]

    def _tile_ids_note(self, call: ts.Node, name: str) -> None:
        """Once a fragment: the Godot 3 tile id is taken as the Godot 4 source id."""
        if any(m.kind == "tilemap_ids" for m in self.manual):
            return
        self.manual_item(call, "tilemap_ids", f"TileMap.{name}(): the Godot 3 tile id is used as the source id",
                         "Godot 4 converts each Godot 3 tile into its own atlas source, numbered in tile-id order: "
                         "the ids stay the same only when the TileSet's tile ids are 0, 1, 2... without gaps; "
                         "check the converted TileSet's source ids",
                         self._tile_cite(name, "get_cell_source_id"))

    def _tile_set_cell(self, call: ts.Node, chain: ts.Node | None, owner: str, name: str) -> bool:
        """`set_cellv(p, tile, flip_x, flip_y, transpose, coord)` -> `set_cell(0, Vector2i(p), tile, coord, flips)`;
        `set_cellv(p, -1)` -> `erase_cell(0, Vector2i(p))`."""
        args = args_of(call)
        if not self._is_tilemap(owner) or len(args) > 1 and text_of(args[1]).startswith("Vector2i("):
            return False  # (Godot 4's `set_cell(layer, Vector2i(...), ...)` already)
        found = self._tile_coords(args, name == "set_cellv")
        if found is None or not found[1] or len(found[1]) > 5:
            return False
        coords, rest = found
        tile = self.render(rest[0])
        cite = self._tile_cite(name, "set_cell")
        if tile.replace(" ", "") == "-1" and len(rest) == 1:
            self.replace(call, f"erase_cell({LAYER}, {coords})", "tilemap_erase_cell",
                         self._tile_cite(name, "erase_cell"), 0.9)
            return True
        flags = []
        for value, flag in zip(rest[1:4], _FLIPS):
            text = self.render(value)
            if text == "true":
                flags.append(flag)
            elif text != "false":
                flags.append(f"({flag} if {text} else 0)")
        atlas = rest[4] if len(rest) > 4 else None
        atlas_text = "Vector2i(0, 0)" if atlas is None else self._tile_coords([atlas], True)[0]
        parts = [LAYER, coords, tile, atlas_text] + ([" | ".join(flags)] if flags else [])
        self.replace(call, f"set_cell({', '.join(parts)})", "tilemap_cell", cite, 0.85)
        self._tile_ids_note(call, name)
        return True

    def _tile_read_cell(self, call: ts.Node, chain: ts.Node | None, owner: str, name: str, new: str) -> bool:
        """`get_cellv(p)` -> `get_cell_source_id(0, Vector2i(p))` (and the autotile coordinate, the flips)."""
        if not self._is_tilemap(owner):
            return False
        args = args_of(call)
        found = self._tile_coords(args, name == "get_cellv" or len(args) == 1)
        if found is None or found[1]:
            return False
        cite = self._tile_cite(name, new)
        self.replace(call, f"{new}({LAYER}, {found[0]})", "tilemap_cell", cite, 0.85)
        if name in ("get_cell", "get_cellv"):
            self._tile_ids_note(call, name)
        elif name in _FLIPPED and not any(m.kind == "tilemap_flip" for m in self.manual):
            self.manual_item(call, "tilemap_flip", f"TileMap.{name}(): a cell flipped in a converted Godot 3 scene "
                             "reads as not flipped", f"`{new}` reads the transform flags of the cell's alternative tile; "
                             "Godot 4's conversion stores the flips of a scene's cells as alternative tiles 1-7 instead "
                             "(check get_cell_tile_data(0, coords).flip_h)",
                             cite)
        return True

    def _tile_on_layer(self, call: ts.Node, chain: ts.Node | None, owner: str, name: str) -> bool:
        """`get_used_cells()` -> `get_used_cells(0)`; `get_used_cells_by_id(id)` -> `get_used_cells_by_id(0, id)`."""
        args = args_of(call)
        if not self._is_tilemap(owner) or len(args) != (name == "get_used_cells_by_id"):
            return False
        values = [LAYER, *(self.render(a) for a in args)]
        self.replace(call, f"{name}({', '.join(values)})", "tilemap_layer", self._tile_cite(name), 0.9)
        if args:
            self._tile_ids_note(call, name)
        return True

    def _tile_map_to_local(self, call: ts.Node, chain: ts.Node | None, owner: str, name: str) -> bool:
        """`map_to_world(cell)` -> `(map_to_local(cell) - Vector2(tile_set.tile_size) / 2)`: Godot 4 returns the
        cell's centre, Godot 3 its top-left corner. GridMap's keeps its own rule."""
        if owner == "GridMap":
            return self._grid_cell(call, chain, owner, name, "map_to_local")
        args = args_of(call)
        if not self._is_tilemap(owner) or len(args) not in (1, 2):
            return False
        cell = self.render(args[0])
        base = self.render_until(chain, call) + "." if chain is not None and len(chain.children) >= 3 else ""
        start = receiver_start(chain) if base else call.start_point
        new = f"({base}map_to_local({cell}) - Vector2({base}tile_set.tile_size) / 2)"
        cite = self._tile_cite(name, "map_to_local")
        self.edit(start, call.end_point, new, "tilemap_map_to_local", cite, 0.85)
        if len(args) == 2 and text_of(args[1]) != "false":
            self.manual_item(call, "tilemap", "TileMap.map_to_world(cell, ignore_half_ofs): the half offset is gone",
                             "Godot 4's map_to_local() always places the cell by the TileSet's tile shape and layout",
                             cite)
        return True

    def _tile_bitmask(self, call: ts.Node, chain: ts.Node | None, owner: str, name: str) -> bool:
        if not self._is_tilemap(owner):
            return False
        self.manual_item(call, "tilemap_terrain", f"TileMap.{name}(): autotile bitmasks became terrains",
                         "Godot 4 picks tiles by terrain: give the TileSet a terrain set, paint the tiles' terrain "
                         "peering bits, then call set_cells_terrain_connect(0, cells, terrain_set, terrain)",
                         self._tile_cite(name, "set_cells_terrain_connect"))
        return True

    def _tile_dirty_quadrants(self, call: ts.Node, chain: ts.Node | None, owner: str, name: str) -> bool:
        """`update_dirty_quadrants()` -> `update_internals()`: both apply pending cell changes now."""
        if not self._is_tilemap(owner) or args_of(call):
            return False
        self.replace(call, "update_internals()", "tilemap_update", self._tile_cite(name, "update_internals"), 0.85)
        return True

    def on_base_call(self, node: ts.Node) -> None:
        """`.set_cell(x, y, tile)` in a TileMap script (Godot 3's call of the parent's method) ->
        `super.set_cell(0, Vector2i(x, y), tile, ...)`, as the same call without the dot."""
        ident = node.children[1] if len(node.children) > 1 and node.children[1].type == "identifier" else None
        name = text_of(ident) if ident is not None else ""
        script = self.scope.script if self.scope is not None else None
        if name in TileMapRules.SHAPES and name != "map_to_world" and script is not None and script.extends:
            owner = self.scope.owner(self.scope.resolve(script.extends), name)
            handler = self.call_rule(name)
            if handler is not None and handler(node, None, owner):
                whole = next((p for p in self.pending if (p.start, p.end) == (node.start_point, node.end_point)), None)
                if whole is not None:
                    whole.new = "super." + whole.new.lstrip(".")
                    return
        super().on_base_call(node)

    # `cell_size` -------------------------------------------------------------------------------------

    def on_identifier(self, node: ts.Node) -> None:
        if not (bare_reference(node) and text_of(node) == "cell_size" and self._tile_cell_size(node, None, self.implicit_owner("cell_size"))):
            super().on_identifier(node)

    def on_attribute(self, node: ts.Node) -> None:
        for member in node.children[1:]:
            if member.type == "identifier" and text_of(member) == "cell_size":
                self._tile_cell_size(member, node, self.chain_owner(node, member))
        super().on_attribute(node)

    def _tile_cell_size(self, node: ts.Node, chain: ts.Node | None, owner: str) -> bool:
        """A TileMap's `cell_size` read -> `Vector2(tile_set.tile_size)` (Godot 4 keeps the size on the TileSet,
        as a Vector2i: the Vector2 keeps `/` dividing as floats); a write is left to people: the TileSet is shared."""
        if not self._is_tilemap(owner):
            return False
        base = self.render_until(chain, node) + "." if chain is not None else ""
        whole = chain if chain is not None and chain.children[-1].id == node.id else node
        statement = whole.parent
        cite = self.rules.cite("map:diff:property:TileMap.cell_size") or (
            {"table": "docs_chunks", "id": "docs:4:TileSet.property.tile_size", "title": "TileSet.tile_size (Godot 4 property)"}
            if self.rules.surface.class_member("4", "TileSet", "tile_size") else None)
        if statement is not None and statement.type in ("assignment", "augmented_assignment") and \
                statement.children[0].id == whole.id:
            self.manual_item(statement, "tilemap", "TileMap.cell_size is set: Godot 4 keeps it on the TileSet",
                             f"set `{base}tile_set.tile_size` (a Vector2i) instead; it changes every TileMap sharing "
                             "that TileSet", cite)
            return True
        self.edit(receiver_start(chain) if chain is not None else node.start_point, node.end_point,
                  f"Vector2({base}tile_set.tile_size)", "tilemap_cell_size", cite, 0.85)
        return True
