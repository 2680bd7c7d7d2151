"""Where Godot runs a project's code: a sandbox with no network and nothing writable but the run's
own folders, under time and memory limits.

Loading a project runs its tool scripts and autoloads, and running it runs everything, so `verify`
never starts an engine on the host as it is. Debian's bubblewrap (`bwrap`) gives the engine a
read-only view of the machine, a private `/tmp`, `/dev` and `/proc`, its own network, process and
IPC namespaces (a loopback with nothing listening), and binds writable only the folders the run
names (the scratch copy, the engine's home). Where only util-linux's `unshare` exists, a user and
mount namespace does the same with every mount remounted read-only. Without either the run is
refused: a run on the host as it is would be the project's code with the user's rights.
"""

from __future__ import annotations

import os
import resource
import shlex
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

MEMORY_LIMIT = 4 << 30          # address space per engine process (Godot 4 headless needs well under 1 GiB)
FILE_LIMIT = 2 << 30            # the largest file the engine may write
HOW_TO = ("no sandbox to run Godot in: install bubblewrap (`apt-get install bubblewrap`) or util-linux's "
          "`unshare` with user namespaces enabled")


class SandboxUnavailable(RuntimeError):
    """Neither bubblewrap nor a usable `unshare` is here; the message says what to install."""


@dataclass(frozen=True)
class Sandbox:
    """How a command is confined: `bubblewrap` or `unshare`, and the limits put on it."""

    kind: str
    program: str
    memory: int = MEMORY_LIMIT

    def describe(self) -> str:
        """One line for `--help`, the report and the UI."""
        return (f"sandboxed with {self.kind}: no network, read-only machine, writable only the run's scratch "
                f"copy and home, {self.memory >> 30} GiB of memory, a time limit per run")

    def wrap(self, argv: Sequence[str], writable: Sequence[Path]) -> list[str]:
        """`argv` run inside the sandbox, with `writable` (existing folders) bound read-write."""
        folders = [str(Path(w).resolve()) for w in writable]
        if self.kind == "bubblewrap":
            binds = [arg for folder in folders for arg in ("--bind", folder, folder)]
            return [self.program, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
                    "--tmpfs", "/dev/shm", *binds, "--unshare-all", "--die-with-parent", "--new-session",
                    "--", *argv]
        # unshare: a private mount namespace where every mount is remounted read-only, then the run's
        # folders bound back read-write; a fresh network namespace holds only a loopback.
        script = ("set -e; mount --make-rprivate / 2>/dev/null || true; "
                  "for f in " + " ".join(shlex.quote(f) for f in folders) + "; do mount --bind \"$f\" \"$f\"; done; "
                  "awk '{print $2}' /proc/self/mounts | sort -u | while read -r m; do "
                  "case \" " + " ".join(shlex.quote(f) for f in folders) + " \" in *\" $m \"*) continue;; esac; "
                  "mount -o remount,bind,ro \"$m\" 2>/dev/null || true; done; "
                  "exec \"$@\"")
        return [self.program, "--user", "--map-root-user", "--net", "--mount", "--pid", "--fork", "--ipc",
                "--uts", "sh", "-c", script, "sandbox", *argv]

    def limits(self) -> None:
        """Resource limits of the sandboxed process (a `preexec_fn`): address space and file size."""
        resource.setrlimit(resource.RLIMIT_AS, (self.memory, self.memory))
        resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_LIMIT, FILE_LIMIT))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def _works(argv: Sequence[str]) -> bool:
    try:
        return subprocess.run(argv, capture_output=True, timeout=30, stdin=subprocess.DEVNULL).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


_FOUND: dict[tuple[str, int], Sandbox] = {}


def find_sandbox(memory: int = MEMORY_LIMIT, env: dict[str, str] | None = None) -> Sandbox:
    """bubblewrap if it runs here, else `unshare` if it can make a user namespace; else SandboxUnavailable.
    Checked once per process (each check starts a sandbox)."""
    path = (env or os.environ).get("PATH")
    key = (path or "", memory)
    if key in _FOUND:
        return _FOUND[key]
    bwrap = shutil.which("bwrap", path=path)
    if bwrap and _works(Sandbox("bubblewrap", bwrap, memory).wrap(["true"], [])):
        found = Sandbox("bubblewrap", bwrap, memory)
    elif (unshare := shutil.which("unshare", path=path)) and _works(Sandbox("unshare", unshare, memory).wrap(["true"], [])):
        found = Sandbox("unshare", unshare, memory)
    else:
        raise SandboxUnavailable(HOW_TO)
    _FOUND[key] = found
    return found
