"""`gd-assets db start|stop|status`: a local PostgreSQL cluster under the data home for the Dagster
instance (runs, events, schedules), so that several workers can record runs at once.

The cluster listens on 127.0.0.1 only, trusts its own user there, and is found by every command
with the same home through the URL it records (`home.postgres_url`) until `db stop`. Postgres
refuses to run as root: as root, the cluster's folders belong to the `postgres` user and its tools
run as that user.
"""

from __future__ import annotations

import glob
import os
import pwd
import shlex
import shutil
import socket
import subprocess
import time
from pathlib import Path

from gd_assets import home

USER = DATABASE = "gd_assets"
SERVER_USER = "postgres"  # who runs the server when we are root


class DatabaseError(Exception):
    """The local cluster could not be set up, started or reached; the message says what to do."""


def binaries() -> Path:
    """The folder with initdb, pg_ctl and createdb: Debian's /usr/lib/postgresql/<newest>/bin, else
    where pg_ctl on PATH really lives."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=lambda p: int(p.split("/")[4]))
    on_path = shutil.which("pg_ctl")
    if found:
        return Path(found[-1]).parent
    if on_path:
        return Path(on_path).resolve().parent
    raise DatabaseError("PostgreSQL's server programs are not installed (Debian: apt-get install postgresql)")


def _as_server_user(command: list[str], check: bool = True) -> subprocess.CompletedProcess:
    tool = Path(command[0]).name
    if os.geteuid() == 0:
        command = ["su", SERVER_USER, "-s", "/bin/sh", "-c", shlex.join(command)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    if check and result.returncode != 0:
        raise DatabaseError(f"{tool} failed: {(result.stderr or result.stdout).strip()[-800:]}")
    return result


def _folders() -> tuple[Path, Path, Path]:
    base = home.postgres_dir()
    return base / "data", base / "log", base / home.POSTGRES_URL_FILE


def _own(path: Path) -> None:
    """As root, hand a folder to the server user, and check that user can reach it at all."""
    path.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0:
        return
    server = pwd.getpwnam(SERVER_USER)
    os.chown(path, server.pw_uid, server.pw_gid)
    probe = subprocess.run(["su", SERVER_USER, "-s", "/bin/sh", "-c", f"test -w {shlex.quote(str(path))}"],
                           capture_output=True, check=False)
    if probe.returncode != 0:
        raise DatabaseError(f"the {SERVER_USER} user cannot reach {path} (a folder above it is closed to other "
                            "users): use a data home it can reach, or run as another user than root")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _port(data: Path) -> int | None:
    conf = data / "gd_assets.port"
    return int(conf.read_text()) if conf.exists() else None


def url_for(port: int) -> str:
    return f"postgresql://{USER}@127.0.0.1:{port}/{DATABASE}"


def running(port: int | None) -> bool:
    if port is None:
        return False
    with socket.socket() as s:
        s.settimeout(1)
        return s.connect_ex(("127.0.0.1", port)) == 0


def start() -> dict:
    """Create the cluster on first use, start it, and record its URL for this home."""
    data, log, recorded = _folders()
    bin_dir = binaries()
    home.postgres_dir().mkdir(parents=True, exist_ok=True)
    fresh = not (data / "PG_VERSION").exists()
    if fresh:
        _own(data)
        _as_server_user([str(bin_dir / "initdb"), "-D", str(data), "-U", USER, "--auth=trust", "-E", "UTF8",
                         "--no-instructions"])
    _own(log)
    port = _port(data)
    if not running(port):
        port = port or _free_port()
        (data / "gd_assets.port").write_text(str(port))
        options = f"-p {port} -c listen_addresses=127.0.0.1 -k {shlex.quote(str(data))} -c max_connections=200"
        _as_server_user([str(bin_dir / "pg_ctl"), "-D", str(data), "-l", str(log / "postgres.log"), "-w",
                         "-t", "60", "-o", options, "start"])
    if fresh or not _database_exists(bin_dir, port):
        _as_server_user([str(bin_dir / "createdb"), "-h", "127.0.0.1", "-p", str(port), "-U", USER, DATABASE])
    recorded.write_text(url_for(port) + "\n")
    return status()


def _database_exists(bin_dir: Path, port: int) -> bool:
    result = _as_server_user([str(bin_dir / "psql"), "-h", "127.0.0.1", "-p", str(port), "-U", USER, "-d", "postgres",
                              "-tAc", f"SELECT 1 FROM pg_database WHERE datname = '{DATABASE}'"], check=False)
    return result.stdout.strip() == "1"


def stop() -> dict:
    """Stop the cluster and forget its URL: this home's commands go back to the sqlite instance."""
    data, _, recorded = _folders()
    recorded.unlink(missing_ok=True)
    if running(_port(data)):
        _as_server_user([str(binaries() / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop"])
    return status()


def status() -> dict:
    """Which instance this home's commands use, and whether its local cluster is up."""
    data, log, recorded = _folders()
    port = _port(data)
    override = os.environ.get("GD_ASSETS_POSTGRES_URL")
    return {"instance": "postgres" if home.postgres_url() else "sqlite", "url": home.postgres_url(),
            "from": "GD_ASSETS_POSTGRES_URL" if override else ("db start" if recorded.exists() else None),
            "cluster": str(data) if (data / "PG_VERSION").exists() else None, "running": running(port),
            "log": str(log / "postgres.log")}


def check_reachable() -> None:
    """Before a command opens the instance: a recorded local cluster that is down gets a clear error."""
    _, _, recorded = _folders()
    if os.environ.get("GD_ASSETS_POSTGRES_URL") or not recorded.exists():
        return
    deadline = time.monotonic() + 5
    while not running(_port(_folders()[0])):
        if time.monotonic() > deadline:
            raise DatabaseError(f"this home's PostgreSQL ({home.postgres_url()}) is not running: "
                                "`gd-assets db start`, or `gd-assets db stop` to go back to sqlite")
        time.sleep(0.2)
