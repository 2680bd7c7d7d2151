"""Turn what the user points at (a folder, a .zip, a git repository or a text dump) into files.

Every file found is listed; the ones that are not analysed say why (documents, binaries, editor
caches, undecodable text...), so a person can see what was left out. Project code is never run:
zips are read in memory, git clones run with hooks, filters and command-running transports off.
"""

from __future__ import annotations

import hashlib
import io
import logging
import os
import re
import shutil
import stat
import subprocess
import tempfile
import unicodedata
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from urllib.parse import unquote

from gd_assets.core.dump import (
    DOCUMENT_NAMES,
    DOCUMENT_SUFFIXES,
    PROJECT_FILE,
    SOURCE_SUFFIXES,
    DumpError,
    header_path,
    parse_dump,
)

log = logging.getLogger(__name__)

KINDS = ("gdscript", "project", "scene", "resource", "shader", "config", "document", "binary", "other")

BINARY_SUFFIXES = {
    # images
    ".png", ".jpg", ".jpeg", ".webp", ".bmp", ".tga", ".gif", ".svg", ".ico", ".icns", ".hdr", ".exr",
    ".dds", ".ktx", ".psd", ".xcf", ".kra", ".ase", ".aseprite",
    # audio and video
    ".wav", ".ogg", ".mp3", ".flac", ".opus", ".ogv", ".webm", ".mp4",
    # fonts
    ".ttf", ".otf", ".woff", ".woff2", ".fnt", ".font",
    # models and animation
    ".glb", ".gltf", ".obj", ".fbx", ".blend", ".blend1", ".dae", ".mtl", ".mesh", ".anim",
    # compiled Godot resources and editor import cache
    ".scn", ".res", ".ctex", ".stex", ".ctexarray", ".texarr", ".translation", ".oggvorbisstr",
    ".sample", ".oggstr", ".mp3str", ".pck",
    # native libraries, executables, archives
    ".so", ".dll", ".dylib", ".exe", ".a", ".lib", ".o", ".wasm", ".jar", ".apk", ".aab",
    ".ipa", ".zip", ".7z", ".gz", ".tar", ".rar", ".xz", ".bz2",
}
EDITOR_CACHE_DIRS = {".godot", ".import"}

DOCUMENTS_REASON = "documents are excluded by default in source-analysis mode"
BINARY_REASON = "binary file"
OUTSIDE_SYMLINK_REASON = "symlink points outside the project"
ZIP_ESCAPE_REASON = "zip entry escapes the project folder"
DUMP_ESCAPE_REASON = "dump entry escapes the project folder"
SUPPORTED = "only GDScript, project.godot, scene, resource, shader and config files are analysed"

GIT_URL = re.compile(r"^(?:(?:https?|git|ssh|file|git\+ssh|ssh\+git)://|[\w.-]+@[\w.-]+:(?!//))", re.IGNORECASE)
REMOTE_HELPER = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*::")
GIT_TIMEOUT_SECONDS = 900
# Environment that would point a git command at another repository or inject configuration.
GIT_ENV_DROP = (
    "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR", "GIT_NAMESPACE", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "GIT_TEMPLATE_DIR",
)
# `-c` settings for every git command: no hooks, no LFS or other smudge filters, no `ext::`.
GIT_SAFE_CONFIG = (
    "core.hooksPath=/dev/null",
    "core.fsmonitor=false",
    "protocol.ext.allow=never",
    "filter.lfs.smudge=",
    "filter.lfs.process=",
    "filter.lfs.required=false",
    "submodule.recurse=false",
    "advice.detachedHead=false",
)

_HASH_CHUNK = 1 << 20


@dataclass
class SourceFile:
    """One file of the project, included for analysis or excluded with a reason.

    `text` has "\\n" newlines only; split it with `lines()` (not `splitlines()`, which also breaks
    on form feeds and Unicode separators) so line i matches line i in an editor.
    `content_hash` is "" when the bytes were never read (editor caches, files over the size
    limit, symlinks leaving the project, zip entries escaping it).
    """

    path: str
    kind: str
    size: int
    line_count: int | None
    content_hash: str
    included: bool
    reason: str | None
    text: str | None
    encoding: str | None
    dump_start_line: int | None = None

    def lines(self) -> list[str]:
        """The lines of `text` as an editor shows them (empty when not included)."""
        if not self.text:
            return []
        lines = self.text.split("\n")
        if self.text.endswith("\n"):
            lines.pop()
        return lines

    def dump_line(self, line: int) -> int | None:
        """The dump line number of file line `line` (1-based), when the input was a dump."""
        return None if self.dump_start_line is None else self.dump_start_line + line - 1


@dataclass
class Project:
    name: str
    source: str
    source_kind: str
    revision: str | None
    files: list[SourceFile] = field(default_factory=list)

    @property
    def included(self) -> list[SourceFile]:
        return [f for f in self.files if f.included]

    @property
    def excluded(self) -> list[SourceFile]:
        return [f for f in self.files if not f.included]


@dataclass
class IngestOptions:
    include_documents: bool = False
    max_file_bytes: int = 5_000_000


class IngestError(Exception):
    """The input cannot be read as a project; the message names it and says what to do."""


# ---------------------------------------------------------------------------------------- names


def project_slug(text: str) -> str:
    """A lowercase `[a-z0-9._-]` name: "Mini Dodge" -> "mini-dodge", "mini_dodge" -> "mini-dodge"."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9.]+", "-", ascii_text.lower())
    slug = re.sub(r"-{2,}", "-", slug).strip("-.")[:80].strip("-.")
    if not slug:
        raise ValueError(f"{text!r} gives an empty project name: use letters or digits")
    return slug


def default_project_name(source: str | Path) -> str:
    """The project name `ingest` gives a source when no name is passed ("Mini Dodge/" -> "mini-dodge")."""
    text = str(source)
    if isinstance(source, str) and _looks_like_git_url(text) and not Path(text).exists():
        stem = _url_stem(text)
    else:
        stem = Path(text).expanduser().resolve().name
    return _slug_or_error(_source_stem(stem))


def _url_stem(url: str) -> str:
    return unquote(url.rstrip("/").rsplit("/", 1)[-1].rsplit(":", 1)[-1])


def _source_stem(name: str) -> str:
    lowered = name.lower()
    for suffix in (".dump.txt", ".dump", ".txt", ".zip", ".git"):
        if lowered.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return name


# ---------------------------------------------------------------------------------------- kinds


def file_kind(path: str) -> str:
    """The kind of a file from its name alone (content can still turn a file binary)."""
    name = PurePosixPath(path).name
    if name == PROJECT_FILE:
        return "project"
    suffix = PurePosixPath(name).suffix.lower()
    if suffix in SOURCE_SUFFIXES:
        return SOURCE_SUFFIXES[suffix]
    if suffix == ".import":
        return "config"
    if suffix in DOCUMENT_SUFFIXES or name.split(".", 1)[0].upper() in DOCUMENT_NAMES:
        return "document"
    if suffix in BINARY_SUFFIXES:
        return "binary"
    return "other"


def _exclusion_by_name(path: str, kind: str, options: IngestOptions) -> str | None:
    """Why a file is left out before its bytes are read, or None when it should be read."""
    parts = PurePosixPath(path).parts
    cache = next((p for p in parts[:-1] if p in EDITOR_CACHE_DIRS), None)
    if cache is not None:
        return f"editor-generated cache ({cache}/): Godot rebuilds it, it is not project source"
    if path.lower().endswith(".import"):
        return "editor-generated import settings (.import): Godot writes them, they are not project source"
    if PurePosixPath(path).name == "export_presets.cfg":
        return "export presets can hold signing keys and passwords: never read into the store"
    if kind == "document" and not options.include_documents:
        return DOCUMENTS_REASON
    if kind == "binary":
        return f"{BINARY_REASON} ({PurePosixPath(path).suffix.lower()})"
    if kind == "other":
        suffix = PurePosixPath(path).suffix.lower() or PurePosixPath(path).name
        return f"unsupported file type ({suffix}): {SUPPORTED}"
    return None


def _decode(raw: bytes) -> tuple[str | None, str | None, str | None]:
    """(text, encoding, None) or (None, None, reason): UTF-8, then UTF-8 with BOM, then UTF-16 with BOM."""
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return raw.decode("utf-16"), "utf-16", None
        except UnicodeDecodeError:
            pass
    nul = raw.find(b"\x00")
    if nul >= 0:
        return None, None, f"{BINARY_REASON} (NUL byte at offset {nul})"
    bom = 3 if raw.startswith(b"\xef\xbb\xbf") else 0
    try:
        return raw[bom:].decode("utf-8"), "utf-8-sig" if bom else "utf-8", None
    except UnicodeDecodeError as error:
        offset = bom + error.start
    return None, None, (
        f"not UTF-8 (invalid byte 0x{raw[offset]:02x} at offset {offset}); also tried UTF-8 with BOM and UTF-16"
    )


def _normalise_newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _line_count(text: str) -> int:
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def _short_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def _capped_hash(stream: io.BufferedIOBase, limit: int) -> str:
    """The short hash of a stream, or "" past `limit` bytes (a huge file or a zip bomb is not read through)."""
    digest = hashlib.sha256()
    seen = 0
    while chunk := stream.read(_HASH_CHUNK):
        seen += len(chunk)
        if seen > limit:
            return ""
        digest.update(chunk)
    return digest.hexdigest()[:16]


def _build_file(
    path: str,
    size: int,
    options: IngestOptions,
    open_stream: Callable[[], io.BufferedIOBase],
) -> SourceFile:
    """Classify one file and, when it may be analysed, read and decode it."""
    kind = file_kind(path)
    reason = _exclusion_by_name(path, kind, options)
    if reason is None and size > options.max_file_bytes:
        reason = f"too large: {size} bytes (limit {options.max_file_bytes})"
    if reason is not None:
        digest = ""
        if size <= options.max_file_bytes and not reason.startswith("editor-generated cache"):
            with open_stream() as stream:
                digest = _capped_hash(stream, options.max_file_bytes)
        return SourceFile(path, kind, size, None, digest, False, reason, None, None)
    with open_stream() as stream:
        raw = stream.read(options.max_file_bytes + 1)
    if len(raw) > options.max_file_bytes:  # the recorded size was wrong (a growing file, a lying zip)
        reason = f"too large: more than {options.max_file_bytes} bytes (limit {options.max_file_bytes})"
        return SourceFile(path, kind, size, None, "", False, reason, None, None)
    size = len(raw)
    digest = _short_hash(raw)
    text, encoding, reason = _decode(raw)
    if text is None:
        if reason.startswith(BINARY_REASON):
            kind = "binary"
        return SourceFile(path, kind, size, None, digest, False, reason, None, None)
    text = _normalise_newlines(text)
    return SourceFile(path, kind, size, _line_count(text), digest, True, None, text, encoding)


def _excluded(path: str, kind: str | None, reason: str, size: int = 0) -> SourceFile:
    return SourceFile(path, kind or file_kind(path), size, None, "", False, reason, None, None)


def _safe_relative(name: str) -> str | None:
    """A clean relative POSIX path, or None when the name would leave the project folder."""
    name = name.replace("\\", "/")
    if not name or name.startswith("/") or re.match(r"^[A-Za-z]:", name) or "\x00" in name:
        return None
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if not parts or ".." in parts:
        return None
    return "/".join(parts)


# ---------------------------------------------------------------------------------------- folders


def _is_inside(target: str, root: str) -> bool:
    return target == root or target.startswith(root.rstrip(os.sep) + os.sep)


def _display_path(relative: str) -> tuple[str, str | None]:
    """The path as text, and a reason when the file name is not valid UTF-8."""
    try:
        relative.encode("utf-8")
        return relative, None
    except UnicodeEncodeError:
        shown = relative.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
        return shown, "file name is not valid UTF-8: rename it"


def _read_folder(root: Path, options: IngestOptions) -> list[SourceFile]:
    """Every file under root except git metadata; symlinks are followed only inside the project."""
    real_root = os.path.realpath(root)
    files: list[SourceFile] = []

    def on_error(error: OSError) -> None:
        log.warning("cannot list %s: %s", error.filename, error)
        relative = os.path.relpath(error.filename, root) if error.filename else "."
        files.append(_excluded(Path(relative).as_posix() + "/", "other", f"unreadable folder: {error.strerror}"))

    for folder, dirnames, filenames in os.walk(root, onerror=on_error, followlinks=False):
        kept = []
        for dirname in sorted(dirnames):
            full = os.path.join(folder, dirname)
            if dirname == ".git":
                continue
            if os.path.islink(full):
                relative = Path(os.path.relpath(full, root)).as_posix()
                if not _is_inside(os.path.realpath(full), real_root):
                    files.append(_excluded(relative, "other", OUTSIDE_SYMLINK_REASON))
                # A link to a folder inside the project: its files are listed under their own path.
                continue
            kept.append(dirname)
        dirnames[:] = kept
        for filename in filenames:
            if filename == ".git":  # a submodule's or worktree's pointer to its git directory
                continue
            full = os.path.join(folder, filename)
            relative, name_problem = _display_path(Path(os.path.relpath(full, root)).as_posix())
            if name_problem:
                files.append(_excluded(relative, None, name_problem))
                continue
            files.append(_folder_file(full, relative, real_root, options))
    return files


def _folder_file(full: str, relative: str, real_root: str, options: IngestOptions) -> SourceFile:
    try:
        if os.path.islink(full):
            target = os.path.realpath(full)
            if not _is_inside(target, real_root):
                return _excluded(relative, None, OUTSIDE_SYMLINK_REASON)
            if not os.path.exists(target):
                return _excluded(relative, None, "broken symlink: its target is missing or it loops")
            full = target
        info = os.stat(full)
        if not stat.S_ISREG(info.st_mode):
            return _excluded(relative, None, "not a regular file (device, socket or pipe)")
        return _build_file(relative, info.st_size, options, lambda: open(full, "rb"))
    except OSError as error:
        return _excluded(relative, None, f"unreadable: {error.strerror or error}")


def _git_revision(worktree: Path) -> str | None:
    """HEAD's commit read from the git files directly, so no git command runs in a user repository."""
    dot_git = worktree / ".git"
    try:
        if dot_git.is_file():
            pointer = dot_git.read_text(encoding="utf-8").strip()
            if not pointer.startswith("gitdir:"):
                return None
            dot_git = (worktree / pointer.removeprefix("gitdir:").strip()).resolve()
        head = (dot_git / "HEAD").read_text(encoding="utf-8").strip()
        if not head.startswith("ref:"):
            return head if re.fullmatch(r"[0-9a-f]{40,64}", head) else None
        ref = head.removeprefix("ref:").strip()
        common = dot_git
        commondir = dot_git / "commondir"
        if commondir.is_file():
            common = (dot_git / commondir.read_text(encoding="utf-8").strip()).resolve()
        for base in (dot_git, common):
            ref_file = base / ref
            if ref_file.is_file():
                return ref_file.read_text(encoding="utf-8").strip() or None
        packed = common / "packed-refs"
        if packed.is_file():
            for line in packed.read_text(encoding="utf-8").splitlines():
                sha, _, name = line.partition(" ")
                if name == ref:
                    return sha
    except (OSError, UnicodeDecodeError):
        return None
    return None


def _is_bare_repository(path: Path) -> bool:
    return (path / "HEAD").is_file() and (path / "objects").is_dir() and (path / "refs").is_dir()


# ---------------------------------------------------------------------------------------- zips


def _zip_entry_is_symlink(info: zipfile.ZipInfo) -> bool:
    return info.create_system == 3 and stat.S_ISLNK(info.external_attr >> 16)


def _zip_wrapper(paths: list[str]) -> str | None:
    """The one folder every entry sits in, when it holds project.godot ("game/project.godot")."""
    tops = {path.split("/", 1)[0] for path in paths}
    if len(tops) != 1 or not all("/" in path for path in paths):
        return None
    wrapper = next(iter(tops)) + "/"
    return wrapper if wrapper + PROJECT_FILE in paths else None


def _read_zip(archive: Path, options: IngestOptions) -> list[SourceFile]:
    """Every entry, read in memory; a single folder wrapping the whole project is dropped from the paths."""
    try:
        with zipfile.ZipFile(archive) as zf:
            entries = [info for info in zf.infolist() if not info.is_dir()]
            safe = {id(info): _safe_relative(info.filename) for info in entries}
            wrapper = _zip_wrapper([path for path in safe.values() if path])
            by_path: dict[str, SourceFile] = {}
            escaped: list[SourceFile] = []
            for info in entries:
                path = safe[id(info)]
                if path is None:
                    escaped.append(_excluded(info.filename, None, ZIP_ESCAPE_REASON, info.file_size))
                    continue
                if wrapper:
                    path = path.removeprefix(wrapper)
                if path in by_path:
                    log.warning("%s: entry %s appears twice; the later one is read", archive, path)
                by_path[path] = _zip_file(zf, info, path, options)
            return [*by_path.values(), *escaped]
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError) as error:
        raise IngestError(f"{archive} is not a readable zip archive ({error}): re-create the zip or pass the folder") from error


def _zip_file(zf: zipfile.ZipFile, info: zipfile.ZipInfo, path: str, options: IngestOptions) -> SourceFile:
    if _zip_entry_is_symlink(info):
        return _excluded(path, None, "symlink entry in a zip is not followed", info.file_size)
    if info.flag_bits & 0x1:
        return _excluded(path, None, "encrypted zip entry: unpack it and pass the folder", info.file_size)
    try:
        return _build_file(path, info.file_size, options, lambda: zf.open(info))
    except (zipfile.BadZipFile, RuntimeError, NotImplementedError, EOFError, ValueError) as error:
        return _excluded(path, None, f"unreadable zip entry: {error}", info.file_size)


# ---------------------------------------------------------------------------------------- git


def _git_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in GIT_ENV_DROP}
    env.update(
        GIT_TERMINAL_PROMPT="0",
        GIT_LFS_SKIP_SMUDGE="1",
        GIT_ALLOW_PROTOCOL="file:git:http:https:ssh",
    )
    return env


def _git(args: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    git = shutil.which("git")
    if git is None:
        raise IngestError("git is not installed: install git, or pass the project as a folder or a .zip")
    command = [git]
    for setting in GIT_SAFE_CONFIG:
        command += ["-c", setting]
    return subprocess.run(
        command + args, check=False, cwd=cwd, env=_git_env(), capture_output=True, text=True,
        timeout=GIT_TIMEOUT_SECONDS, stdin=subprocess.DEVNULL,
    )


def _clone(url: str, options: IngestOptions) -> tuple[list[SourceFile], str | None]:
    """Shallow-clone without hooks, templates, submodules or LFS, read the checkout, forget it."""
    with tempfile.TemporaryDirectory(prefix="gd-assets-clone-") as tmp:
        dest = Path(tmp) / "repo"
        args = ["clone", "--template=", "--depth", "1", "--no-recurse-submodules", "--quiet", "--", url, str(dest)]
        try:
            result = _git(args)
        except subprocess.TimeoutExpired as error:
            raise IngestError(f"cloning {url} took longer than {GIT_TIMEOUT_SECONDS} s: clone it yourself and pass the folder") from error
        if result.returncode != 0:
            detail = result.stderr.strip().splitlines()[-1:] or ["no message"]
            raise IngestError(f"cannot clone {url}: {detail[0]} (check the URL and your access to it)")
        head = _git(["rev-parse", "HEAD"], cwd=dest)
        revision = head.stdout.strip() if head.returncode == 0 else None
        return _read_folder(dest, options), revision


def _looks_like_git_url(text: str) -> bool:
    return bool(GIT_URL.match(text))


# ---------------------------------------------------------------------------------------- dumps


def _is_dump(path: Path) -> bool:
    name = path.name.lower()
    if name.endswith(".dump.txt"):
        return True
    if not name.endswith((".txt", ".dump")):
        return False
    try:
        with open(path, "rb") as stream:
            head = stream.read(64 * 1024)
    except OSError:
        return False
    text, _, _ = _decode(head)
    if text is None:  # the cut may split a character: be lenient for the sniff
        text = head.decode("utf-8", "replace")
    for line in _normalise_newlines(text.removeprefix("\ufeff")).split("\n"):
        if line.strip():
            return header_path(line) is not None
    return False


def _read_dump(path: Path, options: IngestOptions) -> list[SourceFile]:
    raw = path.read_bytes()
    text, encoding, reason = _decode(raw)
    if text is None:
        raise IngestError(f"{path}: {reason}: save the dump as UTF-8")
    try:
        entries = parse_dump(text)
    except DumpError as error:
        raise IngestError(f"{path} {error}") from None
    files: list[SourceFile] = []
    seen: dict[str, int] = {}
    for name, start, body in entries:
        clean = _safe_relative(name)
        if clean is None:
            files.append(_excluded(name, None, DUMP_ESCAPE_REASON))
            files[-1].dump_start_line = start
            continue
        if clean in seen:
            raise IngestError(
                f"{path}: '{clean}' appears twice, in the headers at dump lines {seen[clean] - 1} and {start - 1}: "
                "each file may appear once"
            )
        seen[clean] = start
        data = body.encode("utf-8")
        file = _build_file(clean, len(data), options, lambda data=data: io.BytesIO(data))
        file.dump_start_line = start
        if file.included:
            file.encoding = encoding
        files.append(file)
    return files


# ---------------------------------------------------------------------------------------- entry


def ingest(source: str | Path, name: str | None = None, options: IngestOptions | None = None) -> Project:
    """Read a folder, a .zip, a git repository (path or URL) or a text dump into a Project.

    Raises IngestError when the input is missing, unreadable, or holds no files at all; a project
    whose files are all excluded is returned with their reasons.
    """
    options = options or IngestOptions()
    text = str(source)
    revision = None
    given = _slug_or_error(name) if name is not None else None
    if isinstance(source, str) and REMOTE_HELPER.match(text) and not Path(text).exists():
        raise IngestError(f"{text}: git remote helpers ('<transport>::') are refused: use an https, ssh or file URL")
    if isinstance(source, str) and _looks_like_git_url(text) and not Path(text).exists():
        origin, kind = text, "git"
        files, revision = _clone(text, options)
        stem = _url_stem(text)
    else:
        path = Path(source).expanduser()
        if not path.exists():
            raise IngestError(f"{path} does not exist: pass a project folder, a .zip, a git URL or a *.dump.txt file")
        path = path.resolve()
        origin, stem = str(path), path.name
        if path.is_dir():
            if (path / ".git").exists() or not _is_bare_repository(path):
                kind = "folder"
                files = _read_folder(path, options)
                revision = _git_revision(path) if (path / ".git").exists() else None
            else:
                kind = "git"
                files, revision = _clone(str(path), options)
        elif path.suffix.lower() == ".zip":
            kind, files = "zip", _read_zip(path, options)
        elif _is_dump(path):
            kind, files = "dump", _read_dump(path, options)
        else:
            raise IngestError(
                f"{path} is a file but neither a .zip nor a text dump (a first line such as '# player.gd'): "
                "pass the project folder, a .zip, a git URL or a *.dump.txt file"
            )
    if not files:
        raise IngestError(f"{origin} contains no files: point at the folder that holds project.godot")
    files.sort(key=lambda f: f.path)
    log.info("%s: %d files, %d included", origin, len(files), sum(f.included for f in files))
    return Project(given or _slug_or_error(_source_stem(stem)), origin, kind, revision, files)


def raw_files(source: str, source_kind: str) -> Iterator[tuple[str, Callable[[], bytes]]]:
    """Every file of a folder, zip or git source as (path, reader of its bytes), under the rules of
    reading it: no `.git`, no symlink leaving the project, no zip entry escaping it. A dump has no
    files besides its text, so it yields nothing. Used to copy a project, never to analyse it."""
    if source_kind == "folder":
        yield from _raw_folder(Path(source))
    elif source_kind == "zip":
        with zipfile.ZipFile(source) as zf:
            entries = [i for i in zf.infolist() if not i.is_dir() and not _zip_entry_is_symlink(i)
                       and not i.flag_bits & 0x1]
            safe = {id(i): _safe_relative(i.filename) for i in entries}
            wrapper = _zip_wrapper([p for p in safe.values() if p])
            for info in entries:
                path = safe[id(info)]
                if path is not None:
                    yield (path.removeprefix(wrapper) if wrapper else path), (lambda info=info: zf.read(info))
    elif source_kind == "git":
        with tempfile.TemporaryDirectory(prefix="gd-assets-clone-") as tmp:
            dest = Path(tmp) / "repo"
            result = _git(["clone", "--template=", "--depth", "1", "--no-recurse-submodules", "--quiet", "--",
                           source, str(dest)])
            if result.returncode != 0:
                raise IngestError(f"cannot clone {source} again to copy its files: {result.stderr.strip()[-200:]}")
            yield from _raw_folder(dest)


def _raw_folder(root: Path) -> Iterator[tuple[str, Callable[[], bytes]]]:
    real_root = os.path.realpath(root)
    for folder, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if d != ".git" and not os.path.islink(os.path.join(folder, d)))
        for filename in sorted(filenames):
            full = os.path.join(folder, filename)
            if filename == ".git" or not _is_inside(os.path.realpath(full), real_root):
                continue
            if not os.path.isfile(full):
                continue
            relative, problem = _display_path(Path(os.path.relpath(full, root)).as_posix())
            if problem is None:
                yield relative, (lambda full=full: Path(full).read_bytes())


def _slug_or_error(text: str) -> str:
    try:
        return project_slug(text)
    except ValueError as error:
        raise IngestError(f"project name {error}: pass a name such as --project my-game") from None
