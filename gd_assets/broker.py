"""`gd-assets broker start|stop|status`: a local Redis server under the data home, the Celery broker
that hands fragment steps to `gd-assets worker` processes (`gd_assets.workers`).

Like `db start`, it listens on 127.0.0.1 and records its URL for this home until `broker stop`;
GD_ASSETS_BROKER_URL points every command and worker at another one (the one machines share).
Its queue is kept in an append-only file, so a restarted broker still holds the steps it had.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

from gd_assets import home

URL_FILE = "url"
PORT_FILE = "port"
START_SECONDS = 30


class BrokerError(Exception):
    """The local broker could not be started or reached; the message says what to do."""


def folder() -> Path:
    return home.data_home() / home.BROKER_DIR


def server_program() -> str:
    found = shutil.which("redis-server") or ("/usr/bin/redis-server" if Path("/usr/bin/redis-server").exists() else None)
    if not found:
        raise BrokerError("redis-server is not installed (Debian: apt-get install redis-server)")
    return found


def _port() -> int | None:
    path = folder() / PORT_FILE
    return int(path.read_text()) if path.exists() else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def answering(port: int | None) -> bool:
    """The server at `port` answers PING (a bare open port is not enough: it may still be loading)."""
    if port is None:
        return False
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
            s.sendall(b"PING\r\n")
            return s.recv(16).startswith(b"+PONG")
    except OSError:
        return False


def start() -> dict:
    """Start the server (first use creates its folder) and record its URL for this home."""
    base = folder()
    base.mkdir(parents=True, exist_ok=True)
    port = _port()
    if not answering(port):
        port = port or _free_port()
        (base / PORT_FILE).write_text(str(port))
        subprocess.run([server_program(), "--port", str(port), "--bind", "127.0.0.1", "--dir", str(base),
                        "--daemonize", "yes", "--pidfile", str(base / "redis.pid"), "--logfile", str(base / "redis.log"),
                        "--save", "", "--appendonly", "yes", "--appendfsync", "everysec"],
                       check=True, capture_output=True, timeout=30)
        deadline = time.monotonic() + START_SECONDS
        while not answering(port):
            if time.monotonic() > deadline:
                raise BrokerError(f"redis-server did not answer on port {port}; its log: {base / 'redis.log'}")
            time.sleep(0.05)
    (base / URL_FILE).write_text(f"redis://127.0.0.1:{port}/0\n")
    return status()


def stop() -> dict:
    """Stop the server and forget its URL (what it held stays in its folder for the next start)."""
    base = folder()
    (base / URL_FILE).unlink(missing_ok=True)
    pid_file = base / "redis.pid"
    if pid_file.exists():
        try:
            os.kill(int(pid_file.read_text()), 15)
        except (ProcessLookupError, ValueError):
            pass
        deadline = time.monotonic() + START_SECONDS
        while answering(_port()) and time.monotonic() < deadline:
            time.sleep(0.05)
    return status()


def url() -> str | None:
    """The broker of this home: GD_ASSETS_BROKER_URL, else the one `broker start` recorded, else None."""
    recorded = home.data_home(create=False) / home.BROKER_DIR / URL_FILE   # read at import: creates nothing
    return os.environ.get("GD_ASSETS_BROKER_URL") or (recorded.read_text().strip() if recorded.exists() else None)


def status() -> dict:
    port = _port()
    return {"broker": url(), "from": "GD_ASSETS_BROKER_URL" if os.environ.get("GD_ASSETS_BROKER_URL") else
            ("broker start" if (folder() / URL_FILE).exists() else None),
            "running": answering(port), "folder": str(folder())}
