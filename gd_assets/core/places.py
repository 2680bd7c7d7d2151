"""Where a fragment is, for people: the one formatter every view, log and report uses.

A place is tracking only: it is printed, never searched and never judged.
"""

from __future__ import annotations

from collections.abc import Mapping


def line_range(start: int | None, end: int | None, prefix: str = "") -> str:
    """`12-26`, or `12` for one line; with prefix `E` the seed's dump notation `E020-E034`."""
    if start is None:
        return ""
    width = 3 if prefix else 0
    a = f"{prefix}{start:0{width}d}"
    return a if end in (None, start) else f"{a}-{prefix}{end:0{width}d}"


def place(frag: Mapping, short: bool = False) -> str:
    """`player.gd 12-26 (dump E020-E034)`; `short`: `player.gd E020-E034` for dumps (the status
    notation), `player.gd 12-26` otherwise."""
    lines = line_range(frag["start_line"], frag["end_line"])
    if frag.get("dump_start_line") is None:
        return f"{frag['path']} {lines}"
    dump = line_range(frag["dump_start_line"], frag["dump_end_line"], "E")
    return f"{frag['path']} {dump}" if short else f"{frag['path']} {lines} (dump {dump})"
