"""Many machines: the runs' steps on Celery workers (Dagster's `dagster-celery`) over the broker.

With a broker (`gd-assets broker start`, or GD_ASSETS_BROKER_URL) the code location's executor is
Dagster's `celery_executor`: a run launched by the daemon (a queued fragment run of `analyze
--workers`, a backfill or a click in the UI) sends each step to the broker, and `gd-assets worker`,
on any machine that reaches the broker, the instance's PostgreSQL and the object store, runs it.
A worker acknowledges a step only when it is done, and renews its lease on the steps it holds while
it runs them: a worker killed mid-step (kill -9 included) stops renewing, and within about
`LEASE_SECONDS` the broker hands its step to another worker, which redoes only the fragments whose
rows are not yet written. A step of any length keeps its lease as long as its worker lives.
"""

from __future__ import annotations

import ctypes
import logging
import os
import signal
import socket
import time

from gd_assets import broker, home
from gd_assets.status import CELERY_ENV

QUEUE = "dagster"
# How long a step's lease lasts without renewal (seconds): a worker renews the leases of the steps it
# holds every quarter of it, so only a dead or cut-off worker's step outlives it and goes to another.
LEASE_SECONDS = int(os.environ.get("GD_ASSETS_STEP_LEASE") or 60)
RESTORE_SECONDS = 5   # how often each worker looks for steps whose lease ran out
CELERY_SETTINGS = {
    "task_acks_late": True,
    "task_reject_on_worker_lost": True,
    "worker_prefetch_multiplier": 1,
    "broker_connection_retry_on_startup": True,
    "broker_transport_options": {"visibility_timeout": LEASE_SECONDS, "unacked_restore_interval": RESTORE_SECONDS,
                                 "unacked_restore_throttle": 1},
    "result_backend_transport_options": {"visibility_timeout": LEASE_SECONDS},
    "result_expires": 24 * 3600,
    # a restarted or briefly unreachable broker: the run waiting on its steps' results and the worker
    # storing one retry (about 2 minutes) rather than fail a run whose steps are fine
    "result_backend_always_retry": True,
    "result_backend_max_retries": 20,
    "result_backend_max_sleep_between_retries_ms": 10_000,
    "task_publish_retry_policy": {"max_retries": 30, "interval_start": 0, "interval_step": 1, "interval_max": 5},
    "worker_hijack_root_logger": False,
}
log = logging.getLogger(__name__)


def backend_url(url: str) -> str:
    """Results in the broker's next Redis database (the broker's own keys stay apart)."""
    base, _, db = url.rpartition("/")
    return f"{base}/{int(db) + 1}" if db.isdigit() else url


def executor_config(url: str) -> dict:
    return {"broker": url, "backend": backend_url(url), "config_source": CELERY_SETTINGS}


def celery_executor():
    """Dagster's celery executor on this home's broker; None without one (runs stay on their machine)."""
    url = broker.url()
    if not url:
        return None
    from dagster_celery import celery_executor as executor

    return executor.configured(executor_config(url), name="gd_assets_celery")


def check_settings() -> None:
    """Steps on other machines record their events in the instance: it must be PostgreSQL, not sqlite."""
    if broker.url() and not home.postgres_url():
        raise broker.BrokerError("a broker sends steps to other machines, which record them in the instance: "
                                 "set GD_ASSETS_POSTGRES_URL (or `gd-assets db start`) as well")


def _die_with_parent() -> None:
    """In a pool process: killed with the worker (kill -9 included), so its step is not left half-run
    by an orphan while the broker hands it to another worker."""
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)   # PR_SET_PDEATHSIG


def _lease_renewal():
    """A consumer bootstep: every quarter lease, the steps this worker holds (delivered, not yet
    acknowledged) get their lease renewed in the broker's index of unacknowledged messages, which is
    what kombu's Redis transport reads to hand lost steps to other workers."""
    from celery import bootsteps

    class LeaseRenewal(bootsteps.StartStopStep):
        requires = {"celery.worker.consumer.tasks:Tasks"}

        def start(self, consumer):
            consumer.timer.call_repeatedly(LEASE_SECONDS / 4, self.renew, (consumer,), priority=10)

        def renew(self, consumer):
            try:
                renew_leases(consumer.task_consumer.channel.qos)
            except Exception as error:   # the broker away: its own reconnection handles it; renew next time
                log.warning("could not renew step leases: %s", error)

    return LeaseRenewal


def renew_leases(qos) -> int:
    """Set the delivery time of every step `qos` holds to now; returns how many."""
    tags = list(qos._delivered)
    if tags:
        with qos.channel.conn_or_acquire() as client:
            now = time.time()
            client.zadd(qos.unacked_index_key, {tag: now for tag in tags}, xx=True)
    return len(tags)


def _steps_on_this_workers_instance() -> None:
    """dagster-celery opens the instance the run's process describes: its PostgreSQL URL and its
    folders, the head's. A worker on another machine reaches the same database by its own URL
    (GD_ASSETS_POSTGRES_URL) and keeps its files in its own home, so each step gets this worker's
    instance (the same run and event storage, its own artifact and log folders)."""
    import dagster_celery.tasks as tasks

    class WorkersInstance:
        @staticmethod
        def from_ref(_ref):
            return home.dagster_instance()

    tasks.DagsterInstance = WorkersInstance


def run_worker(name: str | None = None, concurrency: int = 1) -> None:
    """Serve steps until stopped: `gd-assets worker`. Fetches the published corpus first, so the first
    step does not wait on it."""
    from celery.signals import worker_process_init
    from dagster_celery.make_app import make_app
    from dagster_celery.tasks import create_task

    from gd_assets import shared_corpus

    check_settings()
    url = broker.url()
    if not url:
        raise broker.BrokerError("no broker: set GD_ASSETS_BROKER_URL (or `gd-assets broker start` on this machine)")
    shared_corpus.sync(force=True)
    home.ensure_dagster_home()
    app = make_app({"broker": url, "backend": backend_url(url)})
    app.conf.update(CELERY_SETTINGS)
    _steps_on_this_workers_instance()
    create_task(app)
    app.steps["consumer"].add(_lease_renewal())
    worker_process_init.connect(lambda **_: _die_with_parent(), weak=False)
    node = name or f"gd-assets-{os.getpid()}@{socket.gethostname()}"
    os.environ[CELERY_ENV] = node.replace("%h", socket.gethostname())   # on the runs it takes (`status.claim_run`)
    app.worker_main(["worker", "-Q", QUEUE, "-c", str(concurrency), "--prefetch-multiplier=1", "-n", node,
                     "--loglevel", "WARNING", "--without-gossip", "--without-mingle"])
