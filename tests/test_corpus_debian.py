"""The Debian source adapter for real: downloads the godot3 and godot source packages (~55 MB)."""

from __future__ import annotations

import os
import shutil

import pytest
from conftest import SHARED

# Without ../shared/corpus the tests build their corpus from these packages anyway, so this runs then too.
pytestmark = [
    pytest.mark.apt,
    pytest.mark.skipif(not shutil.which("apt-get") or
                       os.environ.get("GD_ASSETS_TEST_APT") != "1" and (SHARED / "corpus").exists(),
                       reason="set GD_ASSETS_TEST_APT=1 on a Debian machine with network to its mirror"),
]


def test_debian_sources_carry_both_class_references_and_the_converter(gd_home):
    from corpora_build.api_mapping import build_api_mapping
    from corpora_build.sources import resolve

    sources = {s.name: s for s in resolve("debian")}
    assert sources["godot3_classes"].version.startswith("3.6")
    assert sources["godot4_classes"].version.startswith("4.")
    assert {s.adapter for s in sources.values()} == {"debian"}
    assert "converter_rules" in sources and sources["converter_rules"].location.endswith(".cpp")

    rows = build_api_mapping(sources)
    ids = {r["id"] for r in rows}
    assert "map:rename:class:KinematicBody2D" in ids
    assert any(r["category"] == "syntax" and r["old_name"].startswith("yield(") for r in rows)

    again = {s.name: s for s in resolve("auto")}  # the cache now answers `auto`
    assert {n: s.content_hash for n, s in again.items()} == {n: s.content_hash for n, s in sources.items()}
