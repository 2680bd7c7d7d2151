"""The cycle collector in an analysing process (`gd_assets.core.heap`): what lives as long as the process
(the imported modules, the API surface once read) is kept out of later collections, and garbage made
afterwards is still collected. Each check runs in a process of its own, as the freeze is for a process."""

from __future__ import annotations

import json
import subprocess
import sys

from conftest import REPO

# Reads the surface twice, then drops a cycle and collects: what was frozen, and whether the cycle went.
SURFACE_THEN_GARBAGE = """
import gc, json, sys, weakref
from gd_assets.core.corpus.surface import load_surface
before = gc.get_freeze_count()
surface = load_surface(sys.argv[1])
after_read = gc.get_freeze_count()
load_surface(sys.argv[1])
after_cached = gc.get_freeze_count()
class Node: pass
node = Node(); node.me = node; gone = weakref.ref(node); del node
gc.collect()
print(json.dumps({"before": before, "after_read": after_read, "after_cached": after_cached,
                  "collected": gone() is None, "classes": len(surface.classes["3"]), "enabled": gc.isenabled(),
                  "young": gc.get_threshold()[0]}))
"""

# A command from the console entry (`serve --status`, which imports the whole CLI): the collections it
# saw, by generation, and what was frozen once the modules were imported.
ENTRY_COMMAND = """
import gc, json, sys
full = []
gc.callbacks.append(lambda phase, info: full.append(1) if phase == "stop" and info["generation"] == 2 else None)
from gd_assets import __main__ as entry
code = entry.main(["serve", "--status"])
print(json.dumps({"code": code, "full_collections": len(full), "frozen": gc.get_freeze_count(),
                  "enabled": gc.isenabled(), "dagster": "dagster" in sys.modules}))
"""


def python(script: str, *args: str) -> dict:
    done = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, cwd=REPO, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_reading_the_surface_freezes_it_and_later_garbage_is_still_collected(corpus_home):
    seen = python(SURFACE_THEN_GARBAGE, str(corpus_home / "corpora.duckdb"))
    assert seen["classes"] > 500   # the 3.x class reference, read for real
    assert seen["after_read"] - seen["before"] > 100_000   # the surface's sets and dicts among them
    assert seen["after_cached"] == seen["after_read"]   # a cached surface freezes nothing more
    assert seen["collected"] and seen["enabled"]
    assert seen["young"] >= 10_000


def test_a_command_imports_with_no_full_collection_and_freezes_its_modules(gd_home):
    seen = python(ENTRY_COMMAND)
    assert seen["code"] == 0 and seen["dagster"]
    assert seen["full_collections"] == 0   # two while Dagster is imported without `heap.hold`
    assert seen["frozen"] > 100_000 and seen["enabled"]
