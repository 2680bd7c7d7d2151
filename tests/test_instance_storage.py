"""The data home's Dagster instance keeps its connections and writes a run's planned materialisations
as one batch: what it records must be what Dagster's stock sqlite storage records, event for event."""

import os
from collections import Counter
from pathlib import Path

import dagster as dg
import pytest
from dagster._core.events import AssetMaterializationPlannedData, DagsterEvent, StepMaterializationData
from dagster._core.events.log import EventLogEntry
from dagster._core.storage.event_log.sql_event_log import SqlEventLogStorage
from dagster._core.storage.partition_status_cache import AssetPartitionStatus

from gd_assets import home
from gd_assets.event_templates import event_rows
from gd_assets.partitions import report_batch

keys_def = dg.DynamicPartitionsDefinition(name="keys")
KEYS = [f"k{i:02d}" for i in range(12)]
STOCK_SQLITE = "storage:\n  sqlite:\n    base_dir: {storage}\n"

class StopAt(dg.Config):
    stop_at: int = -1

@dg.asset(partitions_def=keys_def, backfill_policy=dg.BackfillPolicy.single_run(), output_required=False)
def per_key(context: dg.AssetExecutionContext, config: StopAt):
    """One materialisation per key as it goes, like the fragment assets; fails at `stop_at`."""
    for i, key in enumerate(context.partition_keys):
        if i == config.stop_at:
            raise dg.Failure(f"stopped at {key}")
        yield dg.AssetMaterialization(asset_key="per_key", partition=key, tags={"dagster/data_version": f"v-{key}"})

@dg.asset(name="per_key", partitions_def=keys_def, backfill_policy=dg.BackfillPolicy.single_run(),
          output_required=False)
def per_key_by_batch(context: dg.AssetExecutionContext, config: StopAt):
    """`per_key` as the fragment assets report: a batch of materialisations at once through `report_batch`."""
    keys = list(context.partition_keys)
    for start in range(0, len(keys), 4):
        made = []
        for i, key in enumerate(keys[start:start + 4], start):
            if i == config.stop_at:
                raise dg.Failure(f"stopped at {key}")
            made.append(dg.AssetMaterialization(asset_key="per_key", partition=key,
                                                tags={"dagster/data_version": f"v-{key}"}))
        yield from report_batch(context, made)

@dg.asset(partitions_def=keys_def, backfill_policy=dg.BackfillPolicy.single_run(), output_required=False)
def reads_as_it_goes(context: dg.AssetExecutionContext):
    """Reports its keys in two halves and reads the event log in between, as the fragment assets do."""
    keys = list(context.partition_keys)
    seen = []
    for half in (keys[:len(keys) // 2], keys[len(keys) // 2:]):
        for key in half:
            yield dg.AssetMaterialization(asset_key="reads_as_it_goes", partition=key)
        records = context.instance.fetch_materializations(dg.AssetKey("reads_as_it_goes"), limit=100).records
        seen.append(len(records))
    context.log.info(f"seen {seen}")
    assert seen == [len(keys) // 2, len(keys)], seen

def _range(first: str, last: str) -> dict[str, str]:
    return {"dagster/asset_partition_range_start": first, "dagster/asset_partition_range_end": last}

def record(instance: dg.DagsterInstance, keys: list[str] = KEYS, stop_at: int = 3, asset=per_key) -> dict:
    """Two runs over halves of `keys`, the second failing at its `stop_at`th key; what the instance then tells."""
    instance.add_dynamic_partitions("keys", keys)
    half = len(keys) // 2
    assert dg.materialize([asset], instance=instance, tags=_range(keys[0], keys[half - 1])).success
    failed = dg.materialize([asset], instance=instance, tags=_range(keys[half], keys[-1]), raise_on_error=False,
                            run_config={"ops": {"per_key": {"config": {"stop_at": stop_at}}}})
    assert not failed.success
    asset = dg.AssetKey("per_key")
    done = instance.fetch_materializations(dg.AssetRecordsFilter(asset_key=asset), limit=100).records
    runs = instance.get_runs()
    logs = [e for r in runs for e in instance.all_logs(r.run_id) if e.dagster_event_type]
    planned = [e.dagster_event.event_specific_data for e in logs
               if e.dagster_event_type == dg.DagsterEventType.ASSET_MATERIALIZATION_PLANNED]
    return {
        "status": instance.get_status_by_partition(asset, keys, keys_def),
        "planned": Counter(p.partition for p in planned),
        "versions": {r.partition_key: r.asset_materialization.tags["dagster/data_version"] for r in done},
        "events": sorted(sorted(Counter(e.dagster_event_type for e in instance.all_logs(r.run_id)
                                        if e.dagster_event_type).items()) for r in runs),
    }

def stock_instance(folder) -> dg.DagsterInstance:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "dagster.yaml").write_text(STOCK_SQLITE.format(storage=folder / "storage"))
    return dg.DagsterInstance.from_config(str(folder))

def test_records_what_the_stock_storage_records(gd_home, instance_kind, tmp_path, monkeypatch):
    monkeypatch.setenv("DAGSTER_EVENT_BATCH_SIZE", str(home.EVENT_BATCH))
    instance = home.dagster_instance()
    expected_class = "PooledEventLogStorage" if instance_kind == "postgres" else "PooledSqliteEventLogStorage"
    assert type(instance.event_log_storage).__name__ == expected_class

    ours = record(instance)
    stock = record(stock_instance(tmp_path / "stock"))

    assert ours == stock
    assert ours["planned"] == {k: 1 for k in KEYS}, "one planned materialisation per partition, not per run"
    assert {k for k, s in ours["status"].items() if s == AssetPartitionStatus.MATERIALIZED} == set(KEYS[:9])
    assert {k for k, s in ours["status"].items() if s == AssetPartitionStatus.FAILED} == set(KEYS[9:])
    assert ours["versions"] == {k: f"v-{k}" for k in KEYS[:9]}

def test_a_batch_reported_through_report_batch_records_what_yielding_each_records(gd_home, instance_kind, tmp_path,
                                                                                  monkeypatch):
    monkeypatch.setenv("DAGSTER_EVENT_BATCH_SIZE", str(home.EVENT_BATCH))
    by_batch = record(home.dagster_instance(), asset=per_key_by_batch, stop_at=4)
    yielded = record(stock_instance(tmp_path / "stock"), stop_at=4)
    assert by_batch == yielded
    assert {k for k, s in by_batch["status"].items() if s == AssetPartitionStatus.MATERIALIZED} == set(KEYS[:10])


def test_planned_materialisations_are_serialised_byte_for_byte_as_dagster_does(gd_home):
    """A run's planned materialisations of one asset are written from one serialised template; each row
    must be what Dagster's own `_event_to_row` gives, whatever the partition key holds."""
    storage = home.dagster_instance().event_log_storage
    keys = ["p/a.gd::f", 'p/ü "quoted" \\ back.gd::g', "p/\u00e9\n.tscn::node.Root", "p/x.gd::h"]
    events = []
    for i, key in enumerate(keys):
        planned = DagsterEvent.build_asset_materialization_planned_event(
            "job", "fragment_evidence", AssetMaterializationPlannedData(dg.AssetKey("fragment_evidence"), partition=key))
        events.append(EventLogEntry(error_info=None, level=10, user_message="", run_id="run-1", timestamp=1.7e9 + i / 7,
                                    step_key=planned.step_key, job_name="job", dagster_event=planned))
    other = EventLogEntry(error_info=None, level=20, user_message="hello", run_id="run-1", timestamp=1.7e9,
                          step_key=None, job_name="job", dagster_event=None)
    mixed = events[:2] + [other] + events[2:]
    assert event_rows(storage, mixed) == [storage._event_to_row(e) for e in mixed]


def test_reported_materialisations_are_serialised_byte_for_byte_as_dagster_does(gd_home, instance_kind):
    """Reported materialisations of one shape are filled into one serialised template; each row must be
    what Dagster's own `_event_to_row` gives, whatever their texts, numbers and tags hold."""
    storage = home.dagster_instance().event_log_storage
    texts = ["plain", 'ü "quoted" \\ back\n\ttab', "\x00gd-assets 0\x00", '"\x00gd-assets 1\x00"', "\u2028 \ud7ff",
             "1.00013e-301", "7340031994610000002", "```gdscript\nfunc _ready():\n\tpass\n```"]
    numbers = [0.5, 1 / 3, float("nan"), float("inf"), -0.0, 1e300, 7, -12, 2**70]
    events = []
    for i in range(60):
        text = texts[i % len(texts)]
        metadata = {"tracking": dg.MetadataValue.text(text), "fragment": dg.MetadataValue.md(texts[(i * 3) % len(texts)]),
                    "signal": ["godot3", "godot4", "neutral"][i % 3], "migration_needed": i % 2 == 0,
                    "confidence": numbers[i % len(numbers)], "count": i, "nothing": None}
        if i % 13 == 0:   # a value that is part of the shape
            metadata["table"] = dg.MetadataValue.json({"i": i, "text": text})
        made = dg.AssetMaterialization(asset_key="fragment_judgement", partition=f"p/{text}.gd::f{i}", metadata=metadata,
                                       tags={"dagster/data_version": f"v{i}-{text}", "dagster/code_version": "judgement-1"})
        event = DagsterEvent(event_type_value=dg.DagsterEventType.ASSET_MATERIALIZATION.value, job_name="job",
                             step_key="fragment_judgement", event_specific_data=StepMaterializationData(made),
                             message="Materialized value fragment_judgement.", pid=7)
        events.append(EventLogEntry(error_info=None, level=10, user_message="", run_id="run-1", timestamp=1.7e9 + i / 7,
                                    step_key="fragment_judgement", job_name="job", dagster_event=event))
    other = EventLogEntry(error_info=None, level=20, user_message="hello", run_id="run-1", timestamp=1.7e9,
                          step_key=None, job_name="job", dagster_event=None)
    mixed = events[:30] + [other] + events[30:]
    assert event_rows(storage, mixed) == [storage._event_to_row(e) for e in mixed]
    templates = [t for t in storage._event_templates.values() if t is not None and t[1] is not None]
    assert templates, "no event was filled from a template"
    if instance_kind == "postgres":   # dagster-postgres inserts a batch of them with this statement
        ours = storage.prepare_insert_event_batch(events).compile().params
        assert ours == SqlEventLogStorage.prepare_insert_event_batch(storage, events).compile().params


def _rows_of(storage, run_id: str) -> dict[str, list[tuple]]:
    """The run's event rows in its shard and in the index, and the index's tag rows, by event (not by id)."""
    import sqlalchemy as sa

    with storage.run_connection(run_id) as conn:
        in_run = conn.execute(sa.text("SELECT run_id, event, dagster_event_type, timestamp, step_key, asset_key, "
                                      "partition FROM event_logs ORDER BY id")).all()
    with storage.index_connection() as conn:
        in_index = conn.execute(sa.text("SELECT id, run_id, event, dagster_event_type, timestamp, step_key, "
                                        "asset_key, partition FROM event_logs ORDER BY id")).all()
        tags = conn.execute(sa.text("SELECT event_id, asset_key, key, value, event_timestamp FROM asset_event_tags "
                                    "ORDER BY event_id, key")).all()
    by_id = {row[0]: row[1:] for row in in_index}
    return {"run": [tuple(r) for r in in_run], "index": [tuple(r[1:]) for r in in_index],
            "tags": [(by_id[t[0]][-1],) + tuple(t[1:]) for t in tags]}


def test_a_batch_is_written_row_for_row_as_the_stock_storage_writes_each_event(gd_home, tmp_path, monkeypatch):
    """The sqlite batch goes through the driver's executemany, its ids taken from the last one inserted:
    its rows (and each tag row's event) must be the stock storage's, event by event."""
    monkeypatch.delenv("GD_ASSETS_POSTGRES_URL", raising=False)
    storage = home.dagster_instance().event_log_storage
    assert type(storage).__name__ == "PooledSqliteEventLogStorage"
    stock = stock_instance(tmp_path / "stock").event_log_storage
    events = []
    for i, key in enumerate(["a", "b 'quoted'", "c\\n", "d", "ü"]):
        planned = DagsterEvent.build_asset_materialization_planned_event(
            "job", "per_key", AssetMaterializationPlannedData(dg.AssetKey("per_key"), partition=key))
        made = dg.AssetMaterialization(asset_key="per_key", partition=key,
                                       tags={"dagster/data_version": f"v-{key}", "dagster/code_version": "1"})
        done = DagsterEvent(event_type_value=dg.DagsterEventType.ASSET_MATERIALIZATION.value, job_name="job",
                            step_key="per_key", event_specific_data=StepMaterializationData(made), pid=7)
        events.append([EventLogEntry(error_info=None, level=10, user_message="", run_id="run-1",
                                     timestamp=1.7e9 + i + half / 2, step_key="per_key", job_name="job",
                                     dagster_event=event) for half, event in enumerate((planned, done))])
    planned, reported = [e[0] for e in events], [e[1] for e in events]
    for batch in (planned, reported[:2], reported[2:]):
        storage._store_batch(batch)
    for event in planned + reported:
        stock.store_event(event)
    ours, theirs = _rows_of(storage, "run-1"), _rows_of(stock, "run-1")
    assert ours == theirs
    assert len(ours["index"]) == 10 and [t[0] for t in ours["tags"]] == ["a", "b 'quoted'", "c\\n", "d", "ü"]
    [record] = storage.get_event_tags_for_asset(dg.AssetKey("per_key"), filter_tags={"dagster/data_version": "v-d"})
    assert record == {"dagster/data_version": "v-d"}


def test_a_home_made_with_the_stock_storage_keeps_its_history(gd_home, monkeypatch):
    """Homes from before the kept connections: the same files, read and written on by the new instance."""
    monkeypatch.delenv("GD_ASSETS_POSTGRES_URL", raising=False)
    before = record(stock_instance(gd_home / home.DAGSTER_DIR), KEYS[:6], stop_at=1)

    instance = home.dagster_instance()   # rewrites the home's dagster.yaml
    assert "PooledSqliteEventLogStorage" in (gd_home / home.DAGSTER_DIR / "dagster.yaml").read_text()
    asset = dg.AssetKey("per_key")
    assert instance.get_status_by_partition(asset, KEYS[:6], keys_def) == before["status"]
    assert len(instance.get_runs()) == 2

    after = record(instance, KEYS[6:], stop_at=1)
    statuses = instance.get_status_by_partition(asset, KEYS, keys_def)
    assert [k for k in KEYS if statuses[k] == AssetPartitionStatus.MATERIALIZED] == KEYS[:4] + KEYS[6:10]
    assert [k for k in KEYS if statuses[k] == AssetPartitionStatus.FAILED] == KEYS[4:6] + KEYS[10:]
    assert after["planned"] == {k: 1 for k in KEYS}
    assert len(after["events"]) == 4

def open_run_shards(folder) -> set[str]:
    """The per-run sqlite files this process holds open."""
    names = set()
    for fd in Path("/proc/self/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith(str(folder)) and target.endswith(".db") and not target.endswith("index.db"):
            names.add(Path(target).stem)
    return names

@pytest.mark.skipif(not Path("/proc/self/fd").exists(), reason="reads the open files from /proc")
def test_open_run_shards_are_bounded(gd_home, monkeypatch):
    """Each run has its own sqlite file; a long-lived process keeps only the most recent few open."""
    monkeypatch.delenv("GD_ASSETS_POSTGRES_URL", raising=False)
    instance = home.dagster_instance()
    monkeypatch.setattr(type(instance.event_log_storage), "KEEP", 3)
    instance.add_dynamic_partitions("keys", KEYS)
    for key in KEYS[:6]:
        assert dg.materialize([per_key], instance=instance, partition_key=key).success
    runs = instance.get_runs()   # newest first
    assert len(runs) == 6
    assert open_run_shards(gd_home) == {r.run_id for r in runs[:3]}
    statuses = instance.get_status_by_partition(dg.AssetKey("per_key"), KEYS[:6], keys_def)
    assert set(statuses.values()) == {AssetPartitionStatus.MATERIALIZED}


def test_reported_materialisations_wait_for_their_batch_but_every_read_sees_them(gd_home, instance_kind, monkeypatch):
    """Reported materialisations are written a batch at a time (one transaction per shard); a read of the
    event log in between, here inside the asset, sees every one reported so far."""
    monkeypatch.setenv("DAGSTER_EVENT_BATCH_SIZE", str(home.EVENT_BATCH))
    instance = home.dagster_instance()
    instance.add_dynamic_partitions("keys", KEYS)
    storage = type(instance.event_log_storage)
    writes, errors = [], []
    original = storage._store_batch

    def store_batch(self, events):
        writes.append(len(events))
        try:
            return original(self, events)
        except Exception as error:  # Dagster would fall back to one write per event and say so on stderr only
            errors.append(error)
            raise

    monkeypatch.setattr(storage, "_store_batch", store_batch)
    assert dg.materialize([reads_as_it_goes], instance=instance, tags=_range(KEYS[0], KEYS[-1])).success
    assert not errors
    records = instance.fetch_materializations(dg.AssetKey("reads_as_it_goes"), limit=100).records
    assert sorted(r.partition_key for r in records) == KEYS
    assert writes == [len(KEYS), len(KEYS) // 2, len(KEYS) // 2], "planned at once, then each half in one write"
    assert instance.get_status_by_partition(dg.AssetKey("reads_as_it_goes"), KEYS, keys_def) == {
        k: AssetPartitionStatus.MATERIALIZED for k in KEYS}


def test_one_instance_per_home_and_settings_and_each_run_file_from_one_template(gd_home, monkeypatch):
    """A process reuses its home's instance until the home's settings change; each run's sqlite file is a
    copy of one empty file with the schema Dagster made, which reads and writes as Dagster's own."""
    import sqlite3

    monkeypatch.delenv("GD_ASSETS_POSTGRES_URL", raising=False)
    instance = home.dagster_instance()
    assert home.dagster_instance() is instance
    instance.add_dynamic_partitions("keys", KEYS)
    for key in KEYS[:2]:
        assert dg.materialize([per_key], instance=instance, partition_key=key).success
    folders = {p.parent for p in gd_home.rglob("index.db")}
    assert len(folders) == 1
    runs = folders.pop()
    assert len(list(runs.glob(".run-shard-*.db"))) == 1 and instance.get_runs_count() == 2

    def revision(path) -> list:
        with sqlite3.connect(path) as con:
            return con.execute("SELECT version_num FROM alembic_version").fetchall()

    assert all(revision(runs / f"{r.run_id}.db") == revision(runs / "index.db") for r in instance.get_runs())
    assert {e.dagster_event_type for r in instance.get_runs() for e in instance.all_logs(r.run_id)} >= {
        dg.DagsterEventType.ASSET_MATERIALIZATION, dg.DagsterEventType.RUN_SUCCESS}
    yaml = Path(os.environ["DAGSTER_HOME"]) / "dagster.yaml"
    yaml.write_text(yaml.read_text() + "\n# changed\n")
    assert home.dagster_instance() is not instance
