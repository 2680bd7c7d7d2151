"""`gd-assets serve`: a warm process for one data home that runs the commands clients hand it, so that a
command pays Python's, Dagster's and the corpus's start-up (about 4 of a tiny project's 6 s) once.

The console entry (`gd_assets.__main__`), before importing anything heavy, looks for the home's server (a Unix
socket only this user can reach) and, for the commands in SERVED, hands over its arguments, folder and
terminal, then prints what comes back. A server takes a command only when it would do what the client
would do itself: same code, same settings (the environment variables commands read), no other command
in flight. Otherwise the client runs the command itself, as if there were no server.

The process `gd-assets serve` starts holds the socket. A child it starts does the serving. A client's
Ctrl-C ends that child, just as it would have ended the client's own process: what was recorded is
kept, and `resume` finishes the rest. A fresh child then takes the next command, with the new code if
the files changed.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from gd_assets import home

SERVED = frozenset({"analyze", "migrate", "fragments", "status", "show", "resume", "forget", "search"})
SETTING_PREFIXES = ("GD_ASSETS_", "DAGSTER_", "AWS_", "XDG_", "HF_", "TRANSFORMERS_", "OPENAI_", "VLLM_", "CUDA_", "PG",
                    "LC_", "OMP_", "TORCH")
SETTING_NAMES = ("PATH", "PYTHONPATH", "HOME", "TMPDIR", "LANG", "VIRTUAL_ENV")
SWITCH = "GD_ASSETS_SERVER"   # "off": this shell never hands a command over
RESTART = 75                  # a child's exit status that asks for a fresh child
HELLO_SECONDS = 30            # how long a client waits for a starting server to greet it
REQUEST_SECONDS = 10          # how long a server waits for a greeted client's request
# The environment this process started with: commands add DAGSTER_HOME and others to their own, which
# are no client's settings.
_PRISTINE = dict(os.environ)


@dataclass(frozen=True)
class Commands:
    """How the serving child parses and runs a command line, and what it says when a client interrupts
    one: `gd_assets.cli`'s own, handed in, as this module sits below the command line."""

    parse: Callable[[list[str]], argparse.Namespace]
    run: Callable[[argparse.Namespace], int]
    hint: Callable[[argparse.Namespace], str]


class ServeError(Exception):
    """The server cannot start or be reached (one line for the user)."""


# --- what client and server must share -------------------------------------------------------------


def socket_path(data_home: Path) -> Path:
    """Where the server of a data home listens. The socket sits in a folder only this user may enter, as a
    home's own path can be longer than the 107 bytes a socket address holds."""
    folder = Path(tempfile.gettempdir()) / f"gd-assets-{os.getuid()}"
    return folder / (hashlib.sha1(str(data_home).encode()).hexdigest()[:20] + ".sock")


def settings(environ: dict[str, str] = _PRISTINE) -> dict[str, str]:
    """The environment variables a command reads (its settings, paths, the interpreter's threads), as
    this process started with them."""
    return {k: v for k, v in environ.items()
            if (k.startswith(SETTING_PREFIXES) or k in SETTING_NAMES) and k != SWITCH}


def code_version() -> str:
    """The interpreter and the state of the code's files: a server serves clients of its own code only."""
    digest = hashlib.sha1(f"{sys.prefix}|{os.path.realpath(sys.executable)}".encode())
    root = Path(__file__).resolve().parent.parent
    for package in ("gd_assets", "corpora_build"):
        for folder, dirs, files in os.walk(root / package):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(files):
                if name.endswith((".py", ".yaml")):
                    stat = os.stat(os.path.join(folder, name))
                    digest.update(f"{folder}/{name}:{stat.st_mtime_ns}:{stat.st_size}\n".encode())
    return digest.hexdigest()


def _send(conn: socket.socket, frame: dict) -> None:
    conn.sendall((json.dumps(frame) + "\n").encode())


# --- the client ------------------------------------------------------------------------------------


def servable(argv: list[str]) -> bool:
    """Whether a server may take this command line (`gd_assets.__main__` asks before importing the rest)."""
    words = [a for a in argv if not a.startswith("-")]
    return (bool(words) and words[0] in SERVED and not {"-h", "--help"} & set(argv)
            and os.environ.get(SWITCH, "").lower() not in ("off", "0", "no"))


def interrupted(signum, frame):
    raise KeyboardInterrupt  # SIGTERM ends a command like Ctrl-C: one line, not a traceback (`gd_assets.cli` too)


def _greeted(path: Path) -> tuple[socket.socket, object, dict]:
    """A connection to the server at `path`, its reader and the server's greeting (OSError, ValueError,
    TypeError or KeyError when none answers in time)."""
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.settimeout(HELLO_SECONDS)
        conn.connect(str(path))
        reader = conn.makefile("r", encoding="utf-8")
        return conn, reader, json.loads(reader.readline() or "null")["hello"]
    except BaseException:
        conn.close()
        raise


def hand_over(argv: list[str]) -> int | None:
    """Run the command in this home's server and return its exit status; None when no server runs or it
    does not take the command (the caller then runs it itself)."""
    path = socket_path(home.data_home(create=False))
    if not path.exists():
        return None
    verbose = "-v" in argv or "--verbose" in argv
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, interrupted)
    conn = None
    try:
        conn, reader, hello = _greeted(path)
        if hello["busy"]:
            return _declined(conn, verbose, f"it is running `gd-assets {hello['busy']}`")
        conn.settimeout(None)
        _send(conn, {"argv": argv, "cwd": os.getcwd(), "settings": settings(), "code": code_version(),
                     "tty": [sys.stdout.isatty(), sys.stderr.isatty()]})
        return _relay(conn, reader, verbose)
    except KeyboardInterrupt:
        print("gd-assets: interrupted", file=sys.stderr)
        return 130
    except (OSError, ValueError, TypeError, KeyError) as error:  # a stale socket, no greeting in time
        return _declined(conn, verbose, f"it does not answer ({error})")


def _relay(conn: socket.socket, reader, verbose: bool) -> int | None:
    """Print the command's output as it comes; on Ctrl-C, ask the server to stop it and print its last words."""
    streams = {"out": sys.stdout, "err": sys.stderr}
    frames = (json.loads(line) for line in reader)
    try:
        for frame in frames:
            if "refused" in frame:
                return _declined(conn, verbose, frame["refused"])
            if "rc" in frame:
                return frame["rc"]
            for kind, text in frame.items():
                streams[kind].write(text)
                streams[kind].flush()
    except (OSError, ValueError):  # the server died or was killed: the command is not run again here
        pass
    except KeyboardInterrupt:
        try:
            _send(conn, {"interrupt": True})
            conn.settimeout(5)
            for frame in map(json.loads, reader):
                if "rc" in frame:
                    return frame["rc"]
                sys.stderr.write(frame.get("err", ""))
        except (OSError, ValueError):
            pass
        return 130
    print("gd-assets: error: the server stopped during the command; what it recorded is kept "
          "(`gd-assets status` shows it)", file=sys.stderr)
    return 1


def _declined(conn: socket.socket | None, verbose: bool, why: str) -> None:
    if conn is not None:
        conn.close()
    if verbose:
        print(f"gd-assets: this home's server does not take the command: {why}; running it here", file=sys.stderr)
    return None


def control(action: str) -> dict:
    """`serve --status` (what the server of this home is doing) or `serve --stop`."""
    path = socket_path(home.data_home(create=False))
    try:
        conn, reader, hello = _greeted(path)
    except (OSError, ValueError, TypeError, KeyError):
        return {"running": False, "stopped": None, "socket": str(path), "home": str(home.data_home(create=False))}
    try:
        if action == "stop":
            _send(conn, {"stop": True})
            reader.readline()
    except OSError:
        pass   # it stopped before answering
    finally:
        conn.close()
    if action == "stop":
        return {"running": False, "stopped": hello["pid"], "socket": str(path), "home": hello["home"]}
    return {"running": True, "socket": str(path), **hello}


# --- the server ------------------------------------------------------------------------------------


def serve(idle_minutes: float = 0) -> int:
    """Hold this home's socket and keep a warm child serving it until stopped (Ctrl-C, SIGTERM, `serve
    --stop`, or `idle_minutes` without a command when above 0)."""
    # no serving child outlives the process holding the socket
    from gd_assets.run_queue import die_with_parent

    data_home = home.data_home()
    path = socket_path(data_home)
    path.parent.mkdir(mode=0o700, exist_ok=True)
    if path.parent.stat().st_uid != os.getuid():
        raise ServeError(f"{path.parent} belongs to another user")
    path.parent.chmod(0o700)
    if path.exists():
        if control("status")["running"]:
            raise ServeError(f"a server already serves {data_home} (`gd-assets serve --stop` stops it)")
        path.unlink()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(16)
    _log(f"serving {data_home} on {path}")
    child = None
    try:
        while True:
            child = subprocess.Popen([sys.executable, "-m", "gd_assets", "serve", "--child", str(listener.fileno()),
                                      "--idle", str(idle_minutes)],
                                     pass_fds=[listener.fileno()], env=_PRISTINE, preexec_fn=die_with_parent)
            code = _wait(child)
            if code != RESTART:
                return code
    except KeyboardInterrupt:
        if child is not None and child.poll() is None:
            child.terminate()
            child.wait(60)
        return 0
    finally:
        listener.close()
        path.unlink(missing_ok=True)
        _log("stopped")


def _wait(child: subprocess.Popen) -> int:
    """The child's exit status. Waiting in short steps lets Ctrl-C and SIGTERM in: a signal that one of this
    process's other threads receives does not interrupt the main thread's wait."""
    while True:
        try:
            return child.wait(timeout=0.5)
        except subprocess.TimeoutExpired:
            continue


def _log(line: str) -> None:
    print(f"gd-assets serve [{os.getpid()}] {time.strftime('%H:%M:%S')}: {line}", file=sys.__stderr__, flush=True)


def warm() -> None:
    """Open what a command opens first: the Dagster instance, then the corpus index, its API surface and
    the embedder (where a corpus is built)."""
    from gd_assets import orchestrate

    orchestrate.instance()
    try:
        from gd_assets.core.corpus.surface import load_surface
        from gd_assets.resources import RetrievalIndex

        RetrievalIndex().load().search_text("func _ready():\n\tpass", k=1)
        load_surface(str(home.corpora_db_path()))
    except Exception as error:  # no corpus yet: the first command builds or reports it
        _log(f"the corpus is not warm ({str(error).splitlines()[0] if str(error) else type(error).__name__})")


class _Frames(io.TextIOBase):
    """A command's stdout or stderr, sent to its client line by line; dropped once the client is gone."""

    def __init__(self, conn: socket.socket, lock: threading.RLock, kind: str, tty: bool):
        self.conn, self.lock, self.kind, self.tty = conn, lock, kind, tty
        self.pending: list[str] = []
        self.size = 0   # characters pending
        self.gone = False

    @property
    def encoding(self) -> str:
        return "utf-8"

    def isatty(self) -> bool:
        return self.tty

    def write(self, text: str) -> int:
        with self.lock:   # the command's threads write too (the progress line)
            self.pending.append(text)
            self.size += len(text)
            if "\n" in text or self.size > 8192:
                self.flush()
        return len(text)

    def flush(self) -> None:
        with self.lock:
            text, self.pending, self.size = "".join(self.pending), [], 0
            if text:
                self.send({self.kind: text})

    def send(self, frame: dict) -> None:
        with self.lock:
            if not self.gone:
                try:
                    _send(self.conn, frame)
                except OSError:
                    self.gone = True


class _Server:
    """The serving child: greets every client, runs one command at a time, answers the rest 'busy'."""

    def __init__(self, listener: socket.socket, idle_minutes: float, commands: Commands):
        self.listener, self.commands = listener, commands
        self.idle = idle_minutes * 60
        self.settings, self.code = settings(), code_version()
        self.cwd, self.environ = os.getcwd(), dict(os.environ)
        self.since, self.served, self.last = time.time(), 0, time.monotonic()
        self.busy: str | None = None  # the command in flight
        self.stale = False

    def loop(self) -> int:
        self.listener.settimeout(1)   # short: Ctrl-C and SIGTERM get in between
        while True:
            if self.stale and not self.busy:
                _log("the code changed: a fresh process takes the next command")
                return RESTART
            if self.idle and not self.busy and time.monotonic() - self.last > self.idle:
                _log(f"no command for {self.idle / 60:g} min: stopping")
                return 0
            try:
                conn, _ = self.listener.accept()
            except TimeoutError:
                continue
            if self.greet(conn) == "stop":
                _log("stopped by `gd-assets serve --stop`")
                return 0

    def greet(self, conn: socket.socket) -> str | None:
        creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        if struct.unpack("3i", creds)[1] != os.getuid():
            conn.close()
            return None
        try:
            conn.settimeout(REQUEST_SECONDS)
            _send(conn, {"hello": {"pid": os.getpid(), "home": str(home.data_home(create=False)), "since": self.since,
                                   "served": self.served, "busy": self.busy}})
            reader = conn.makefile("r", encoding="utf-8")
            request = json.loads(reader.readline() or "null")
            if not isinstance(request, dict):
                conn.close()
                return None
            if request.get("stop"):
                _send(conn, {"rc": 0})
                conn.close()
                return "stop"
            refusal = self.refusal(request)
            if refusal:
                _send(conn, {"refused": refusal})
                conn.close()
                return None
        except (OSError, ValueError):
            conn.close()
            return None
        conn.settimeout(None)
        self.busy = " ".join(request["argv"])
        threading.Thread(target=self.run, args=(conn, reader, request), daemon=True, name="gd-assets serve").start()
        return None

    def refusal(self, request: dict) -> str | None:
        if self.busy:
            return f"it is running `gd-assets {self.busy}`"
        if request.get("code") != self.code:
            self.stale = code_version() != self.code
            return "it runs other code" + (" (it restarts with the new code)" if self.stale else "")
        if request.get("settings") != self.settings:
            names = sorted(k for k in {*request.get("settings", {}), *self.settings}
                           if request.get("settings", {}).get(k) != self.settings.get(k))
            return f"its environment differs in {', '.join(names)}"
        if not isinstance(request.get("argv"), list) or not request["argv"]:
            return "no command"
        return None

    def run(self, conn: socket.socket, reader, request: dict) -> None:
        lock = threading.RLock()
        out = _Frames(conn, lock, "out", bool(request["tty"][0]))
        err = _Frames(conn, lock, "err", bool(request["tty"][1]))
        state: dict = {}
        threading.Thread(target=self.watch, args=(reader, err, state), daemon=True).start()
        began = time.monotonic()
        sys.stdout, sys.stderr = out, err
        try:
            os.chdir(request["cwd"])
            code = self.command(request["argv"], state)
        except OSError as error:
            print(f"gd-assets: error: {error}", file=sys.stderr)
            code = 1
        finally:
            out.flush()
            err.flush()
            sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
            os.chdir(self.cwd)
            os.environ.clear()
            os.environ.update(self.environ)
        out.send({"rc": code})
        conn.close()
        _log(f"{self.busy}: exit {code} in {time.monotonic() - began:.1f} s")
        self.served, self.last, self.busy = self.served + 1, time.monotonic(), None

    def command(self, argv: list[str], state: dict) -> int:
        try:
            state["args"] = args = self.commands.parse(argv)
            return self.commands.run(args)
        except SystemExit as exit_:
            return exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
        except Exception:
            traceback.print_exc()
            return 1

    def watch(self, reader, err: _Frames, state: dict) -> None:
        """A client's Ctrl-C ends its command as it would have ended the client's own process; a client
        that goes away leaves its command to finish unheard."""
        try:
            line = reader.readline()
            interrupt = bool(line) and json.loads(line).get("interrupt")
        except (OSError, ValueError):
            interrupt = False
        if not interrupt:
            err.gone = True
            return
        try:
            hint = self.commands.hint(state["args"])
        except Exception:
            hint = "gd-assets: interrupted"
        err.send({"err": hint + "\n"})
        err.send({"rc": 130})
        _log(f"{self.busy}: interrupted by its client; a fresh process takes the next command")
        os._exit(RESTART)


def serve_child(fd: int, idle_minutes: float, commands: Commands) -> None:
    """The serving child of `serve` (`gd-assets serve --child FD`): warm, then serve until told to stop,
    idle, or asked for a fresh child. It ends with `os._exit`: a command in flight stops with it."""
    listener = socket.socket(fileno=fd)
    began = time.monotonic()
    try:
        warm()
        _log(f"ready in {time.monotonic() - began:.1f} s")
        code = _Server(listener, idle_minutes, commands).loop()
    except KeyboardInterrupt:
        code = 0
    sys.__stderr__.flush()
    os._exit(code)
