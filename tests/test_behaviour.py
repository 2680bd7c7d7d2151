"""Differential tests of the rules that keep behaviour: each case under `tests/fixtures/behaviour/` runs in
Godot 3.6, is migrated by the pipeline's own calls, and its copy runs in Godot 4; both must print the same
values, through the rules (and the rows, and the manual items) the case's header names.

One Godot 3 project holds every case, so each engine starts once per case scene and imports once."""

from __future__ import annotations

import pytest
from behaviour_harness import load_cases, run_differential

from gd_assets.core.rewrite import load_rules

CASES = load_cases()


@pytest.fixture(scope="module")
def differential(corpus_home, godot3, godot4, sandbox, tmp_path_factory):
    rules = load_rules(str(corpus_home / "corpora.duckdb"))
    return run_differential(CASES, godot3, godot4, sandbox, rules, tmp_path_factory.mktemp("behaviour"))


@pytest.mark.parametrize("case", CASES, ids=[c.slug for c in CASES])
def test_the_migrated_snippet_prints_what_godot3_printed(differential, case):
    printed3, printed4 = differential.normalised(case.slug)
    migrated = "\n".join(t for p, t in differential.migrated.items() if p.startswith(case.slug + "/") and
                         p.endswith(".gd"))
    errors = [e for e in differential.errors4 if case.slug in e]
    assert printed3, f"{case.slug}: Godot 3.6 printed nothing (the case itself is broken)"
    assert printed4 == printed3, f"{case.slug}: Godot 4 printed otherwise\n{migrated}\nerrors: {errors}"
    rules = {e["rule"] for e in differential.edits[case.slug]}
    assert set(case.rules) <= rules, f"{case.slug}: rules applied {sorted(rules)}"
    rows = {e["evidence"]["id"] for e in differential.edits[case.slug] if e["evidence"]}
    assert set(case.rows) <= rows, f"{case.slug}: rows cited {sorted(rows)}"
    kinds = {m["kind"] for m in differential.manual[case.slug]}
    assert set(case.manual) <= kinds, f"{case.slug}: manual items {sorted(kinds)}"


def test_every_case_names_what_the_migration_must_do():
    """A case that names no rule and no manual item proves nothing about the rewrite."""
    assert CASES and all(c.rules or c.manual for c in CASES)
