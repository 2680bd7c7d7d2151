"""Many machines: the runs' steps on Celery workers (Dagster's `dagster-celery`) over the broker.

With a broker (`gd-assets broker start`, or GD_ASSETS_BROKER_URL) the code location's executor is
Dagster's `celery_executor`: a run launched by the daemon (a queued fragment run of `analyze
--workers`, a backfill or a click in the UI) sends each step to the broker, and `gd-assets worker`,
on any machine that reaches the broker, the instance's PostgreSQL and the object store, runs it.
A worker acknowledges a step only when it is done: a worker killed mid-step leaves it to another
(`task_reject_on_worker_lost`), which redoes only the fragments whose rows are not yet written.
"""

from __future__ import annotations

import ctypes
import logging
import os
import signal
import socket

from gd_assets import broker, home
from gd_assets.status import CELERY_ENV

QUEUE = "dagster"
# How long a step may run before the broker hands it to another worker as lost (seconds): longer
# than any one fragment run (a block of at most `orchestrate.CELERY_BLOCK` fragments).
VISIBILITY_SECONDS = int(os.environ.get("GD_ASSETS_STEP_TIMEOUT") or 1800)
CELERY_SETTINGS = {
    "task_acks_late": True,
    "task_reject_on_worker_lost": True,
    "worker_prefetch_multiplier": 1,
    "broker_connection_retry_on_startup": True,
    "broker_transport_options": {"visibility_timeout": VISIBILITY_SECONDS},
    "result_backend_transport_options": {"visibility_timeout": VISIBILITY_SECONDS},
    "result_expires": 24 * 3600,
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
    create_task(app)
    worker_process_init.connect(lambda **_: _die_with_parent(), weak=False)
    node = name or f"gd-assets-{os.getpid()}@{socket.gethostname()}"
    os.environ[CELERY_ENV] = node.replace("%h", socket.gethostname())   # on the runs it takes (`status.claim_run`)
    app.worker_main(["worker", "-Q", QUEUE, "-c", str(concurrency), "--prefetch-multiplier=1", "-n", node,
                     "--loglevel", "WARNING", "--without-gossip", "--without-mingle"])
