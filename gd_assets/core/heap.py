"""Python's cycle collector and the objects an analysing process keeps until it ends.

Dagster's modules, this package's and the corpus's API surface are some 300,000 objects that live as
long as the process. Every full collection walked them again (2 s of a 22-s analysis of a
4,500-fragment game), the collections while they were imported took 0.5 s of a tiny project's 5 s,
and the collection at exit 1 s more. What an analysis makes and drops is collected as before.
"""

from __future__ import annotations

import gc

# Young objects are collected every this many allocations (Python's default is 700): an analysis
# allocates millions, most of them freed by reference counting long before a collection sees them.
YOUNG_GENERATION = 10_000


def hold() -> None:
    """No collections until `settle`: call it before importing what the process keeps to its end."""
    gc.disable()


def settle(collect: bool = True) -> None:
    """Keep every object alive now out of later collections (`gc.freeze`), after one collection
    unless `collect` is False (imports leave little garbage, and collecting it costs 0.2 s). Call it
    when what was loaded lives as long as the process: the modules once imported, the API surface once read."""
    if collect:
        gc.collect()
    gc.freeze()
    young, older, oldest = gc.get_threshold()
    gc.set_threshold(max(young, YOUNG_GENERATION), older, oldest)
    gc.enable()


def before_exit() -> None:
    """Spare the interpreter's last collection the objects alive at exit: they are all freed anyway."""
    gc.freeze()
