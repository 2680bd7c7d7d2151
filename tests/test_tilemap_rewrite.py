"""TileMap's Godot 3 calls on layer 0 of Godot 4's TileMap: cells by a Vector2i with a source id, atlas
coordinates and transform flags; `map_to_world`'s top-left corner kept; what terrains need left to people.
Each script is judged in its project and rewritten there, against the built corpus."""

from __future__ import annotations

import pytest
from rewrite_helpers import GODOT3, migrate

from gd_assets.core.rewrite import load_rules


@pytest.fixture(scope="module")
def rules(corpus_home):
    return load_rules(str(corpus_home / "corpora.duckdb"))


def tilemap_script(body: str, extends: str = "TileMap") -> dict[str, str]:
    return {**GODOT3, "map.gd": f"extends {extends}\n\n\nfunc _ready():\n" + body}


def test_set_cellv_writes_layer_0_with_the_tile_id_as_source_and_atlas_origin(rules):
    new, edits, manual = migrate(rules, tilemap_script(
        "\tset_cellv(Vector2(1, 2), 1)\n\tset_cell(3, 4, tile)\n\tset_cellv(pos, 0)\n"), "map.gd")
    assert "set_cell(0, Vector2i(1, 2), 1, Vector2i(0, 0))" in new
    assert "set_cell(0, Vector2i(3, 4), tile, Vector2i(0, 0))" in new
    assert "set_cell(0, Vector2i(pos), 0, Vector2i(0, 0))" in new
    assert {e.rule for e in edits} == {"tilemap_cell"}
    assert all(e.evidence for e in edits)
    [ids] = [m for m in manual if m.kind == "tilemap_ids"]  # said once for the fragment
    assert "source id" in ids.what


def test_a_cell_set_to_minus_one_is_erased(rules):
    new, edits, _ = migrate(rules, tilemap_script("\tset_cellv(Vector2(1, 2), -1)\n\tset_cell(x, y, -1)\n"), "map.gd")
    assert "erase_cell(0, Vector2i(1, 2))" in new and "erase_cell(0, Vector2i(x, y))" in new
    assert {e.rule for e in edits} == {"tilemap_erase_cell"}


def test_flips_and_the_autotile_coordinate_become_atlas_coords_and_transform_flags(rules):
    new, _, _ = migrate(rules, tilemap_script(
        "\tset_cellv(p, 2, true, false, false, Vector2(1, 0))\n\tset_cell(0, 0, 2, flip, false, true)\n"), "map.gd")
    assert "set_cell(0, Vector2i(p), 2, Vector2i(1, 0), TileSetAtlasSource.TRANSFORM_FLIP_H)" in new
    assert ("set_cell(0, Vector2i(0, 0), 2, Vector2i(0, 0), (TileSetAtlasSource.TRANSFORM_FLIP_H if flip else 0)"
            " | TileSetAtlasSource.TRANSFORM_TRANSPOSE)") in new


def test_cell_reads_go_through_layer_0(rules):
    new, _, manual = migrate(rules, tilemap_script(
        "\tprint(get_cellv(p), get_cell(1, 2))\n\tprint(get_cell_autotile_coord(1, 2))\n"
        "\tprint(is_cell_x_flipped(1, 2), is_cell_y_flipped(1, 2), is_cell_transposed(1, 2))\n"), "map.gd")
    assert "print(get_cell_source_id(0, Vector2i(p)), get_cell_source_id(0, Vector2i(1, 2)))" in new
    assert "get_cell_atlas_coords(0, Vector2i(1, 2))" in new
    assert ("is_cell_flipped_h(0, Vector2i(1, 2)), is_cell_flipped_v(0, Vector2i(1, 2)), "
            "is_cell_transposed(0, Vector2i(1, 2))") in new
    assert [m.kind for m in manual if m.kind == "tilemap_flip"] == ["tilemap_flip"]


def test_used_cells_name_layer_0(rules):
    new, edits, _ = migrate(rules, tilemap_script("\tprint(get_used_cells(), get_used_cells_by_id(3))\n"), "map.gd")
    assert "print(get_used_cells(0), get_used_cells_by_id(0, 3))" in new
    assert {e.rule for e in edits} == {"tilemap_layer"}


def test_map_to_world_keeps_the_top_left_corner(rules):
    new, edits, _ = migrate(rules, tilemap_script("\tvar a = map_to_world(cell)\n\tvar b = map_to_world(cell).x\n"),
                            "map.gd")
    assert "var a = (map_to_local(cell) - Vector2(tile_set.tile_size) / 2)" in new
    assert "var b = (map_to_local(cell) - Vector2(tile_set.tile_size) / 2).x" in new
    assert {e.rule for e in edits} == {"tilemap_map_to_local"}


def test_a_typed_tilemap_receiver_is_rewritten_through_its_chain(rules):
    files = {**GODOT3, "level.gd": "extends Node2D\n\nvar map: TileMap\n\n\nfunc _ready():\n"
                                   "\tmap.set_cellv(Vector2(1, 1), 0)\n\tvar p = map.map_to_world(Vector2(1, 1))\n"}
    new, _, _ = migrate(rules, files, "level.gd")
    assert "map.set_cell(0, Vector2i(1, 1), 0, Vector2i(0, 0))" in new
    assert "var p = (map.map_to_local(Vector2(1, 1)) - Vector2(map.tile_set.tile_size) / 2)" in new


def test_unknown_receivers_and_the_projects_own_set_cell_stay(rules):
    files = {**GODOT3, "grid.gd": "extends Node2D\n\n\nfunc set_cell(x, y, v):\n\tpass\n\n\nfunc _ready():\n"
                                  "\tset_cell(1, 2, 3)\n\tthing.set_cellv(Vector2(1, 1), 0)\n\tprint(OS.get_name())\n"}
    new, edits, _ = migrate(rules, files, "grid.gd")
    assert "\tset_cell(1, 2, 3)\n\tthing.set_cellv(Vector2(1, 1), 0)\n" in new
    assert not [e for e in edits if e.rule.startswith("tilemap")]


def test_gridmap_map_to_world_keeps_its_own_rule(rules):
    new, edits, _ = migrate(rules, tilemap_script("\tvar p = map_to_world(1, 2, 3)\n", "GridMap"), "map.gd")
    assert "var p = map_to_local(Vector3i(1, 2, 3))" in new
    assert {e.rule for e in edits} == {"gridmap_vector3i"}


def test_bitmask_updates_are_left_to_people_with_the_terrain_call(rules):
    new, _, manual = migrate(rules, tilemap_script("\tupdate_bitmask_region()\n\tupdate_bitmask_area(p)\n"
                                                   "\tupdate_dirty_quadrants()\n"), "map.gd")
    assert "update_internals()" in new
    terrain = [m for m in manual if m.kind == "tilemap_terrain"]
    assert len(terrain) == 2 and all("set_cells_terrain_connect" in m.why and m.evidence for m in terrain)


def test_cell_size_is_read_on_the_tileset_and_a_write_is_left_to_people(rules):
    files = {**GODOT3, "map.gd": "extends TileMap\n\n\nfunc _ready():\n\tvar half = cell_size / 2\n"
                                 "\tprint(cell_size.x, $Other.cell_size)\n\tcell_size = Vector2(8, 8)\n",
             "level.gd": "extends Node2D\n\nvar map: TileMap\n\n\nfunc _ready():\n\tprint(map.cell_size.y)\n"}
    new, edits, manual = migrate(rules, files, "map.gd")
    assert "var half = Vector2(tile_set.tile_size) / 2" in new and "print(Vector2(tile_set.tile_size).x" in new
    assert "\tcell_size = Vector2(8, 8)\n" in new
    assert [m.kind for m in manual if "cell_size" in m.what] == ["tilemap"]
    assert "tilemap_cell_size" in {e.rule for e in edits}
    new, _, _ = migrate(rules, files, "level.gd")
    assert "print(Vector2(map.tile_set.tile_size).y)" in new


def test_the_parents_set_cell_in_an_override_calls_super_with_layer_0(rules):
    files = {**GODOT3, "mirror.gd": "extends TileMap\n\n\nfunc set_cell(x, y, tile, flip_x = false, flip_y = false, "
                                    "transpose = false, coord = Vector2.ZERO):\n"
                                    "\t.set_cell(x, y, tile, false, false, transpose, coord)\n"}
    new, _, _ = migrate(rules, files, "mirror.gd")
    assert ("\tsuper.set_cell(0, Vector2i(x, y), tile, Vector2i(coord), "
            "(TileSetAtlasSource.TRANSFORM_TRANSPOSE if transpose else 0))\n") in new


def test_calls_whose_godot3_shape_fits_godot4s_arity_are_still_judged_godot3(rules):
    """`set_cell(x, y, tile)` takes three arguments in both engines: in a Godot 3 project the cell as
    `x, y` marks it, so a function holding only that call is migrated too."""
    files = {**GODOT3, "map.gd": ("extends TileMap\n\n\nfunc paint():\n\tset_cell(1, 2, 3)\n\n\n"
                                  "func used():\n\treturn get_used_cells_by_id(2)\n\n\n"
                                  "func turned(x, y):\n\treturn is_cell_transposed(x, y)\n")}
    new, edits, _ = migrate(rules, files, "map.gd")
    assert "\tset_cell(0, Vector2i(1, 2), 3, Vector2i(0, 0))\n" in new
    assert "return get_used_cells_by_id(0, 2)" in new
    assert "return is_cell_transposed(0, Vector2i(x, y))" in new
    godot4 = {"project.godot": "config_version=5\n",
              "map.gd": "extends TileMap\n\n\nfunc paint():\n\tset_cell(0, Vector2i(1, 2), 3)\n"}
    assert migrate(rules, godot4, "map.gd")[1] == []
