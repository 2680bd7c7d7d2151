"""The `projects` and `fragments` dynamic partitions and the fragment key scheme.

A fragment key reads `<project>/<path>::<symbol>` (e.g. `mini-dodge/player.gd::_process`). It names
the fragment by what it declares, not by its lines, so editing one function leaves the keys of the
others unchanged; the current line range travels as data.
"""

from __future__ import annotations

import re

import dagster as dg

projects_partitions = dg.DynamicPartitionsDefinition(name="projects")
fragments_partitions = dg.DynamicPartitionsDefinition(name="fragments")

_UNSAFE = re.compile(r"[^A-Za-z0-9_.@~+\-/:$%=]")


def fragment_key(project: str, path: str, symbol: str) -> str:
    """A readable key, valid for Dagster: unsafe characters become `_`, `...` cannot occur."""
    key = f"{project}/{path}::{symbol}"
    key = _UNSAFE.sub("_", key)
    while "..." in key:
        key = key.replace("...", "._.")
    return key


def unique_keys(keys: list[str]) -> list[str]:
    """Make keys unique in order (`~2`, `~3` ...) after sanitising may have merged two."""
    seen: dict[str, int] = {}
    out = []
    for key in keys:
        count = seen.get(key, 0) + 1
        seen[key] = count
        out.append(key if count == 1 else f"{key}~{count}")
    return out


def project_of_key(key: str) -> str:
    return key.split("/", 1)[0]


def sync_fragment_partitions(instance: dg.DagsterInstance, project: str, keys: list[str]) -> tuple[int, int]:
    """Register the project's current fragment keys and remove those that disappeared.

    Returns (added, removed).
    """
    existing = set(instance.get_dynamic_partitions(fragments_partitions.name))
    prefix = project + "/"
    wanted = set(keys)
    new = [k for k in keys if k not in existing]
    gone = [k for k in existing if k.startswith(prefix) and k not in wanted]
    if new:
        instance.add_dynamic_partitions(fragments_partitions.name, new)
    for key in gone:
        instance.delete_dynamic_partition(fragments_partitions.name, key)
    return len(new), len(gone)
