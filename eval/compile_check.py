"""Tell, per .gd script of a Godot project, whether Godot 4 parses and compiles it.

Each project is copied to a scratch folder (Godot writes `.godot/` and `.uid` files into the project it
opens), imported once with `godot --headless --import` so that the class_name cache exists, and then one
Godot process loads every script through a small SceneTree tool script, with a marker line before and
after each file. Godot names the script an error belongs to (`at: GDScript::reload (res://x.gd:N)`), so
an error met while loading a dependency is charged to the dependency; a script counts as failing when it
does not load or when a parse or compile error names it. All scripts load in one process after the
autoloads are registered, so autoload names resolve as they do in the game.

Needs Godot 4: Debian sid's `godot` package in a debootstrap root, run through the root's own loader, as
../shared/devset/README.md ("Running Godot 4's own converter here") sets it up.

Run: python eval/compile_check.py [--godot-root /tmp/godot-sid] PROJECT_DIR [PROJECT_DIR ...] [--json] [--verbose]
`--godot-root` defaults to $GODOT_SID_ROOT, else /tmp/godot-sid. Other scripts call `check_projects`.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_GODOT_ROOT = "/tmp/godot-sid"
IMPORT_TIMEOUT = 900
CHECK_TIMEOUT = 600
MARK = "@@compile_check"
_COPY_IGNORE = shutil.ignore_patterns(".godot", ".import", ".git")
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_HEADER = re.compile(r"^(?:USER )?(?:SCRIPT )?ERROR: (.*)$")
_AT = re.compile(r"^\s+at: .*\((res://[^()]*?)(?::(\d+))?\)\s*$")
_FAILED_LOAD = re.compile(r'^Failed to load script "(res://[^"]+)"')
_SCRIPT_ERROR = re.compile(r"^(?:Parse|Compile) Error: ")
# Errors that only say a dependency is broken; the dependency's own errors say why.
_DEPENDENCY = re.compile(r"Could not (?:parse global class|resolve (?:script|class|super class|external class)|"
                         r"preload resource script|load (?:class|script))|Failed to load script|"
                         r"Failed to compile depended scripts")

TOOL_SCRIPT = """extends SceneTree

# Loads each res:// path listed in the file named by the first user argument, between marker lines.
# _initialize() runs after the autoloads are registered, so their names resolve.

func _initialize() -> void:
    var args := OS.get_cmdline_user_args()
    var text := FileAccess.get_file_as_string(args[0])
    for path in text.split("\\n", false):
        printerr("%(mark)s BEGIN ", path)
        var loaded = ResourceLoader.load(path)
        printerr("%(mark)s END ", path, " ", "ok" if loaded is Script else "fail")
    printerr("%(mark)s DONE")
    quit()
""" % {"mark": MARK}


class GodotMissing(RuntimeError):
    """Godot 4 is not installed where the caller said."""


@dataclass
class Godot:
    """How to start Godot from the sid root (through that root's loader), with a private HOME."""

    root: Path
    home: Path

    def command(self, *args: str) -> list[str]:
        lib = self.root / "usr/lib/x86_64-linux-gnu"
        return [str(self.root / "usr/lib64/ld-linux-x86-64.so.2"), "--library-path", f"{lib}:{lib / 'pulseaudio'}",
                str(self.root / "usr/bin/godot"), "--headless", *args]

    def env(self) -> dict[str, str]:
        """HOME and XDG_* in the scratch folder, so that no editor settings leak in or out."""
        env = dict(os.environ)
        env["HOME"] = str(self.home)
        for name, sub in (("XDG_CONFIG_HOME", "config"), ("XDG_DATA_HOME", "data"),
                          ("XDG_CACHE_HOME", "cache"), ("XDG_RUNTIME_DIR", "runtime")):
            env[name] = str(self.home / sub)
            (self.home / sub).mkdir(parents=True, exist_ok=True, mode=0o700)
        return env

    def run(self, args: list[str], timeout: float) -> tuple[int | None, str]:
        """Exit status (None on timeout) and stderr + stdout; the whole process group dies on timeout."""
        proc = subprocess.Popen(self.command(*args), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=self.env(), start_new_session=True)
        try:
            out, err = proc.communicate(timeout=timeout)
            status: int | None = proc.returncode
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
            status = None
        return status, _ANSI.sub("", err.decode(errors="replace") + "\n" + out.decode(errors="replace"))


def find_godot(root: Path, home: Path) -> Godot:
    """The Godot of a sid root, or a GodotMissing that says how to build one."""
    godot = Godot(root, home)
    missing = [p for p in (Path(godot.command()[0]), root / "usr/bin/godot") if not p.exists()]
    if missing:
        raise GodotMissing(f"Godot 4 not found: {', '.join(map(str, missing))} missing. Build the sid root as the "
                           "development set's README says (../shared/devset/README.md from the repository root, "
                           "\"Running Godot 4's own converter here\") and pass it with --godot-root or "
                           "$GODOT_SID_ROOT.")
    return godot


def script_files(project: Path) -> list[str]:
    """The project's .gd files, relative and sorted; hidden folders and folders with .gdignore are not
    part of a Godot project, so they are left out as Godot leaves them out."""
    found = []
    for folder, dirs, files in os.walk(project):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and not (Path(folder, d) / ".gdignore").exists())
        found += [Path(folder, f).relative_to(project).as_posix() for f in files if f.endswith(".gd")]
    return sorted(found)


@dataclass
class Log:
    """What one or more check runs said: per script its own errors, and how its load ended."""

    errors: dict[str, list[str]] = field(default_factory=dict)  # res path -> parse/compile errors naming it
    failed_load: dict[str, str] = field(default_factory=dict)  # res path -> "Failed to load script" line
    in_block: dict[str, list[str]] = field(default_factory=dict)  # res path -> other errors while loading it
    ended: dict[str, bool] = field(default_factory=dict)  # res path -> loaded
    begun: list[str] = field(default_factory=list)
    done: bool = False


def parse_log(text: str, log: Log) -> None:
    """Read Godot's error blocks (header line, then `at:` line) and the tool script's markers into `log`."""
    current: str | None = None
    message: str | None = None
    for line in text.splitlines():
        if line.startswith(MARK):
            word, _, arg = line[len(MARK):].strip().partition(" ")
            if word == "BEGIN":
                current = arg
                log.begun.append(current)
            elif word == "END":
                path, _, status = arg.rpartition(" ")
                log.ended[path] = status == "ok"
                current = None
            elif word == "DONE":
                log.done = True
            message = None
            continue
        header = _HEADER.match(line)
        if header:
            message = header.group(1).strip()
            failed = _FAILED_LOAD.match(message)
            if failed:
                log.failed_load.setdefault(failed.group(1), message)
            elif current is not None and not _SCRIPT_ERROR.match(message):
                log.in_block.setdefault(current, []).append(message)
            continue
        at = _AT.match(line)
        if at and message is not None:
            if _SCRIPT_ERROR.match(message):
                where = f"line {at.group(2)}: " if at.group(2) else ""
                log.errors.setdefault(at.group(1), []).append(where + message)
            message = None


def first_error(path: str, log: Log) -> str | None:
    """The error to show for one script: its own first error (not one that only blames a dependency),
    else what its failed load said; None when it loaded and no error names it."""
    own = log.errors.get(path, [])
    if own:
        return next((e for e in own if not _DEPENDENCY.search(e)), own[0])
    if log.ended.get(path, False):
        return None
    if path in log.failed_load:
        return log.failed_load[path]
    if path in log.in_block:
        return log.in_block[path][0]
    if path in log.ended:
        return "did not load (Godot printed no error)"
    if path in log.begun:
        return "Godot crashed or timed out while loading it"
    return "not checked: Godot stopped before loading it"


def run_checks(godot: Godot, copy: Path, scratch: Path, res_paths: list[str], timeout: float) -> Log:
    """Load every script in one Godot process; after a crash or timeout, go on with the scripts after the
    one being loaded, so one bad file costs only itself."""
    tool = scratch / "compile_check_tool.gd"
    tool.write_text(TOOL_SCRIPT)
    log = Log()
    remaining = list(res_paths)
    while remaining:
        listing = scratch / "compile_check_list.txt"
        listing.write_text("\n".join(remaining) + "\n")
        status, text = godot.run(["--path", str(copy), "-s", str(tool), "--", str(listing)], timeout)
        begun_before = len(log.begun)
        parse_log(text, log)
        if log.done:
            break
        started = log.begun[begun_before:]
        if not started:
            reason = "timed out" if status is None else f"exited with {status}"
            tail = " | ".join(text.strip().splitlines()[-3:])
            print(f"warning: {copy.name}: Godot {reason} before loading any script: {tail}", file=sys.stderr)
            break
        remaining = remaining[remaining.index(started[-1]) + 1:]
    return log


def check_project(godot: Godot, project: Path, scratch: Path, import_timeout: float = IMPORT_TIMEOUT,
                  check_timeout: float = CHECK_TIMEOUT) -> dict[str, str | None]:
    """Relative .gd path -> first error or None, for one project, working on a copy of it."""
    if not (project / "project.godot").is_file():
        raise FileNotFoundError(f"{project}: no project.godot, not a Godot project folder")
    copy = scratch / "project"
    shutil.copytree(project, copy, symlinks=True, ignore=_COPY_IGNORE)
    files = script_files(copy)
    status, text = godot.run(["--path", str(copy), "--import"], import_timeout)
    if status is None:
        print(f"warning: {project}: import timed out after {import_timeout:.0f}s; the class_name cache may be "
              "incomplete", file=sys.stderr)
    res_paths = [f"res://{f}" for f in files]
    log = run_checks(godot, copy, scratch, res_paths, check_timeout) if files else Log()
    return {f: first_error(r, log) for f, r in zip(files, res_paths)}


def check_projects(dirs: list[Path], godot_root: Path, import_timeout: float = IMPORT_TIMEOUT,
                   check_timeout: float = CHECK_TIMEOUT) -> dict[str, dict[str, str | None]]:
    """Project folder (as given) -> {relative .gd path -> first error or None}; the folders are not touched."""
    with tempfile.TemporaryDirectory(prefix="compile-check-") as tmp:
        godot = find_godot(Path(godot_root), Path(tmp) / "home")
        results = {}
        for i, project in enumerate(dirs):
            scratch = Path(tmp) / f"p{i}"
            scratch.mkdir()
            results[str(project)] = check_project(godot, Path(project).resolve(), scratch, import_timeout,
                                                  check_timeout)
            shutil.rmtree(scratch, ignore_errors=True)
        return results


def summary(files: dict[str, str | None]) -> dict[str, float | int]:
    """Scripts, failing scripts, the failing share, and the failing scripts whose only errors blame a broken
    dependency (they may well be fine once the dependency is)."""
    failing = [e for e in files.values() if e is not None]
    return {"scripts": len(files), "failing": len(failing), "share": len(failing) / len(files) if files else 0.0,
            "dependency_only": sum(bool(_DEPENDENCY.search(e)) for e in failing)}


def print_report(results: dict[str, dict[str, str | None]], verbose: bool) -> None:
    """One line per project (and its failing files with --verbose), then the pooled line."""
    width = max([len(p) for p in results] + [6])
    print(f"{'project':<{width}}  scripts  failing   share  dependency-only")
    for project, files in results.items():
        s = summary(files)
        print(f"{project:<{width}}  {s['scripts']:7}  {s['failing']:7}  {s['share']:6.1%}  {s['dependency_only']:15}")
        if verbose:
            for path, error in files.items():
                if error is not None:
                    print(f"    {path}: {error}")
    pooled = summary({f"{p}/{f}": e for p, files in results.items() for f, e in files.items()})
    print(f"{'pooled':<{width}}  {pooled['scripts']:7}  {pooled['failing']:7}  {pooled['share']:6.1%}  "
          f"{pooled['dependency_only']:15}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("projects", nargs="+", type=Path, metavar="PROJECT_DIR", help="Godot project folders")
    default_root = Path(os.environ.get("GODOT_SID_ROOT") or DEFAULT_GODOT_ROOT)
    parser.add_argument("--godot-root", type=Path, default=default_root,
                        help="debootstrap root holding sid's godot (default $GODOT_SID_ROOT or /tmp/godot-sid)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON instead of a table")
    parser.add_argument("--verbose", action="store_true", help="list each failing script with its first error")
    parser.add_argument("--import-timeout", type=float, default=IMPORT_TIMEOUT, help="seconds for --import")
    parser.add_argument("--check-timeout", type=float, default=CHECK_TIMEOUT, help="seconds for one check run")
    args = parser.parse_args(argv)
    try:
        results = check_projects(args.projects, args.godot_root, args.import_timeout, args.check_timeout)
    except (GodotMissing, FileNotFoundError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if args.json:
        pooled = {f"{p}/{f}": e for p, files in results.items() for f, e in files.items()}
        out = {"projects": {p: {**summary(files), "files": files} for p, files in results.items()},
               "pooled": summary(pooled)}
        print(json.dumps(out, indent=2))
    else:
        print_report(results, args.verbose)
    return 0


if __name__ == "__main__":
    sys.exit(main())
