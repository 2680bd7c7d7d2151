"""The fragment key scheme: `<project>/<path>::<symbol>` (e.g. `mini-dodge/player.gd::_process`).

A key names the fragment by what it declares, not by its lines, so editing one function leaves the
keys of the others unchanged; the current line range travels as data.
"""

from __future__ import annotations

import re

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
