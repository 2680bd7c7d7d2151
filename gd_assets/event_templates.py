"""A run's materialisation events serialised from templates: byte for byte what Dagster writes, cheaper.

A fragment run records one planned and one reported materialisation per fragment, and Dagster serialises
each whole (`serialize_value`: every namedtuple packed into a dict, then `json.dumps(sort_keys=True)`):
0.2-0.5 ms for a reported one with its metadata, more than judging the fragment (0.06 ms from a template). Events of
one asset in one run differ only in their values (partition, timestamp, tags, metadata texts and numbers).
So an event's values are swapped for unique stand-ins, that shape is serialised once, and every later event
of the same shape is the shape's text with its own values' JSON in the stand-ins' places. An event of any
other kind, or of a shape seen once, is serialised itself.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from functools import lru_cache
from json.encoder import encode_basestring_ascii
from typing import Any

import dagster as dg
from dagster._core.events import AssetMaterializationPlannedData, DagsterEventType, StepMaterializationData
from dagster._core.events.log import EventLogEntry

_PLANNED = DagsterEventType.ASSET_MATERIALIZATION_PLANNED.value
_REPORTED = DagsterEventType.ASSET_MATERIALIZATION.value
SHAPES_KEPT = 256  # shapes remembered per storage (a run has a few per asset)


@lru_cache(maxsize=None)
def _text_mark(slot: int) -> tuple[str, str]:
    mark = f"\x00gd-assets {slot}\x00"
    return mark, json.dumps(mark)


@lru_cache(maxsize=None)
def _number_mark(slot: int, kind: type) -> tuple[int | float, str]:
    mark = 7_340_031_994_610_000_000 + slot if kind is int else float(f"1.{slot:04d}3e-301")
    return mark, json.dumps(mark)


class _Stand:
    """An event's values taken out, in slot order, and stand-ins put in their places."""

    def __init__(self):
        self.values: list[str] = []   # each value's JSON, as `json.dumps` writes it
        self.marks: list[str] = []    # each stand-in's JSON

    def text(self, value: str) -> str:
        mark, written = _text_mark(len(self.values))
        self.values.append(encode_basestring_ascii(value))
        self.marks.append(written)
        return mark

    def number(self, value: int | float) -> int | float:
        mark, written = _number_mark(len(self.values), type(value))
        self.values.append(type(value).__repr__(value))
        self.marks.append(written)
        return mark


def _metadata_shape(value: Any, stand: _Stand) -> Any:
    """A metadata value with its text or number stood in for; any other value is part of the shape."""
    if type(value) is dg.TextMetadataValue and type(value.text) is str:
        return dg.TextMetadataValue(stand.text(value.text))
    if type(value) is dg.MarkdownMetadataValue and type(value.md_str) is str:
        return dg.MarkdownMetadataValue(stand.text(value.md_str))
    if type(value) is dg.IntMetadataValue and type(value.value) is int:
        return dg.IntMetadataValue(stand.number(value.value))
    if type(value) is dg.FloatMetadataValue and type(value.value) is float and math.isfinite(value.value):
        return dg.FloatMetadataValue(stand.number(value.value))
    return value


def _shape(entry: EventLogEntry) -> tuple[EventLogEntry, _Stand] | None:
    """A planned or reported materialisation of one partition with its values stood in for; None otherwise."""
    event = entry.dagster_event
    if event is None or not isinstance(entry.timestamp, float):
        return None
    data, stand = event.event_specific_data, _Stand()
    if event.event_type_value == _PLANNED:
        if not isinstance(data, AssetMaterializationPlannedData) or not isinstance(data.partition, str) or \
                data.partitions_subset is not None:
            return None
        data = data._replace(partition=stand.text(data.partition))
    elif event.event_type_value == _REPORTED:
        if not isinstance(data, StepMaterializationData) or type(data.materialization) is not dg.AssetMaterialization:
            return None
        made = data.materialization
        tags = made.tags
        if not isinstance(made.partition, str) or (tags is not None and not (
                isinstance(tags, dict) and all(type(v) is str for v in tags.values()))):
            return None
        made = made._replace(partition=stand.text(made.partition),
                             tags=None if tags is None else {k: stand.text(v) for k, v in tags.items()},
                             metadata={k: _metadata_shape(v, stand) for k, v in made.metadata.items()})
        data = data._replace(materialization=made)
    else:
        return None
    timestamp = stand.number(entry.timestamp)
    return entry._replace(timestamp=timestamp, dagster_event=event._replace(event_specific_data=data)), stand


class _Template:
    """A shape's serialised text cut at its stand-ins: `fill` puts an event's values back in."""

    def __init__(self, text: str, marks: list[str]):
        found = sorted((text.find(mark), slot, len(mark)) for slot, mark in enumerate(marks))
        self.usable = all(at >= 0 and text.count(marks[slot]) == 1 for at, slot, _ in found) and all(
            a + n <= b for (a, _, n), (b, _, _) in zip(found, found[1:]))
        self.segments, self.slots, last = [], [], 0
        for at, slot, n in found:
            self.segments.append(text[last:at])
            self.slots.append(slot)
            last = at + n
        self.segments.append(text[last:])

    def fill(self, values: list[str]) -> str:
        parts = [self.segments[0]]
        for slot, segment in zip(self.slots, self.segments[1:]):
            parts += (values[slot], segment)
        return "".join(parts)


def event_rows(storage, events: Sequence[EventLogEntry]) -> list[dict[str, Any]]:
    """The event log rows of `events`, each equal to `storage._event_to_row(event)`. A shape seen before in
    this storage is filled from its template (made on its second sighting, so a one-off costs nothing more)."""
    shapes: dict[str, tuple[dict, _Template | None] | None] = storage.__dict__.setdefault("_event_templates", {})
    rows: list[dict[str, Any]] = []
    for entry in events:
        shaped = _shape(entry)
        if shaped is None:
            rows.append(storage._event_to_row(entry))
            continue
        shape, stand = shaped
        key = repr(shape)
        if key not in shapes:
            if len(shapes) >= SHAPES_KEPT:
                shapes.clear()
            shapes[key] = None   # seen once: made into a template if it comes again
            rows.append(storage._event_to_row(entry))
            continue
        if shapes[key] is None:
            row = storage._event_to_row(shape)
            template = _Template(row["event"], stand.marks)
            shapes[key] = (row, template if template.usable else None)
        row, template = shapes[key]
        if template is None:
            rows.append(storage._event_to_row(entry))
            continue
        rows.append({**row, "partition": entry.dagster_event.partition,
                     "timestamp": storage._event_insert_timestamp(entry), "event": template.fill(stand.values)})
    return rows
