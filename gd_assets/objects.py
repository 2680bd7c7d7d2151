"""Object storage (S3 or any S3-compatible server): what machines that share no disk share.

GD_ASSETS_OBJECT_STORE=s3://bucket/prefix names the root; under it live the DuckLake store's data
files (`lake/`), the published corpus (`corpus/`), migrated copies and reports (`projects/`).
Credentials and the endpoint are the standard AWS settings (AWS_ACCESS_KEY_ID,
AWS_SECRET_ACCESS_KEY, AWS_REGION, AWS_ENDPOINT_URL for a server that is not AWS), read by boto3
here and handed to DuckDB's httpfs as a secret (httpfs does not read AWS_ENDPOINT_URL itself).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

from gd_assets.core.duck import StoreError

LAKE_PREFIX = "lake"
CORPUS_PREFIX = "corpus"
PROJECTS_PREFIX = "projects"
DEFAULT_REGION = "us-east-1"


@dataclass(frozen=True)
class Root:
    """Where everything shared lives: a bucket and a key prefix (no trailing slash)."""

    bucket: str
    prefix: str

    def key(self, *parts: str) -> str:
        return "/".join(p.strip("/") for p in (self.prefix, *parts) if p and p.strip("/"))

    def url(self, *parts: str) -> str:
        return f"s3://{self.bucket}/{self.key(*parts)}"


def root() -> Root | None:
    """GD_ASSETS_OBJECT_STORE as a Root, None when unset (one machine, local folders)."""
    value = (os.environ.get("GD_ASSETS_OBJECT_STORE") or "").strip()
    if not value:
        return None
    parsed = urlparse(value)
    if parsed.scheme != "s3" or not parsed.netloc:
        raise StoreError(f"GD_ASSETS_OBJECT_STORE={value!r}: an s3://bucket/prefix URL")
    return Root(parsed.netloc, parsed.path.strip("/"))


def endpoint() -> str | None:
    return (os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL") or "").strip() or None


def region() -> str:
    return os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or DEFAULT_REGION


def client():
    """A boto3 S3 client on the configured endpoint (path-style addressing off AWS); one per process and
    settings, as making one costs tens of milliseconds and a migrated copy uploads hundreds of files."""
    return _client(endpoint(), region(), os.environ.get("AWS_ACCESS_KEY_ID"), os.getpid())


@functools.lru_cache(maxsize=4)
def _client(endpoint_url: str | None, region_name: str, key_id: str | None, pid: int):
    import boto3
    from botocore.config import Config

    style = {"addressing_style": "path"} if endpoint_url else {}
    return boto3.client("s3", endpoint_url=endpoint_url, region_name=region_name,
                        config=Config(s3=style, retries={"max_attempts": 10, "mode": "standard"}))


def duckdb_secret_sql(name: str = "gd_assets_s3") -> str:
    """CREATE SECRET for httpfs from the same settings boto3 reads: keys and region from the
    environment (httpfs's config provider), the endpoint spelled out when there is one."""
    def quoted(value: str) -> str:
        return "'" + value.replace("'", "''") + "'"

    parts = ["TYPE s3", f"REGION {quoted(region())}"]
    for option, var in (("KEY_ID", "AWS_ACCESS_KEY_ID"), ("SECRET", "AWS_SECRET_ACCESS_KEY"),
                        ("SESSION_TOKEN", "AWS_SESSION_TOKEN")):
        if os.environ.get(var):
            parts.append(f"{option} {quoted(os.environ[var])}")
    if endpoint():
        url = urlparse(endpoint())
        parts += [f"ENDPOINT {quoted(url.netloc or url.path)}", "URL_STYLE 'path'",
                  f"USE_SSL {'true' if url.scheme == 'https' else 'false'}"]
    return f"CREATE OR REPLACE SECRET {name} ({', '.join(parts)})"


def _error(action: str, where: str, error: Exception) -> StoreError:
    return StoreError(f"object store: cannot {action} {where}: {error}")


def put_bytes(key: str, data: bytes, bucket: str | None = None) -> None:
    where = root()
    try:
        client().put_object(Bucket=bucket or where.bucket, Key=key, Body=data)
    except Exception as error:  # botocore's errors share no useful base with connection errors
        raise _error("write", key, error) from error


def get_bytes(key: str, bucket: str | None = None) -> bytes | None:
    """The object's bytes, None when there is no such object."""
    where = root()
    s3 = client()
    try:
        return s3.get_object(Bucket=bucket or where.bucket, Key=key)["Body"].read()
    except s3.exceptions.NoSuchKey:
        return None
    except Exception as error:
        raise _error("read", key, error) from error


def upload_file(path: Path, key: str) -> None:
    try:
        client().upload_file(str(path), root().bucket, key)
    except Exception as error:
        raise _error("upload", f"{path} to {key}", error) from error


def download_file(key: str, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        client().download_file(root().bucket, key, str(path))
    except Exception as error:
        raise _error("download", f"{key} to {path}", error) from error


def upload_tree(folder: Path, prefix: str) -> int:
    """Every file under `folder` to `prefix/<relative path>`; returns how many."""
    count = 0
    for path in sorted(folder.rglob("*")):
        if path.is_file() and not path.is_symlink():
            upload_file(path, f"{prefix.rstrip('/')}/{path.relative_to(folder).as_posix()}")
            count += 1
    return count


def keys_under(prefix: str) -> Iterator[str]:
    where = root()
    try:
        pages = client().get_paginator("list_objects_v2").paginate(Bucket=where.bucket, Prefix=prefix.rstrip("/") + "/")
        for page in pages:
            for item in page.get("Contents", []):
                yield item["Key"]
    except Exception as error:
        raise _error("list", prefix, error) from error


def download_tree(prefix: str, folder: Path) -> int:
    """Every object under `prefix/` into `folder` at its relative path; returns how many."""
    count = 0
    base = prefix.rstrip("/") + "/"
    for key in keys_under(prefix):
        relative = key[len(base):]
        target = (folder / relative).resolve()
        if folder.resolve() not in target.parents:
            raise StoreError(f"object store: {key} would land outside {folder}")
        download_file(key, target)
        count += 1
    return count


def publish_project(project: str, files: dict[str, Path], folder: tuple[str, Path] | None = None) -> str | None:
    """With an object store, copy a project's outputs to `projects/<project>/`: `files` by their names
    there, and a `folder` (the migrated copy) under its name; returns the URL, None without a store."""
    where = root()
    if where is None:
        return None
    for name, path in files.items():
        upload_file(path, where.key(PROJECTS_PREFIX, project, name))
    if folder is not None:
        name, path = folder
        stale = set(keys_under(where.key(PROJECTS_PREFIX, project, name)))
        written = {f"{where.key(PROJECTS_PREFIX, project, name)}/{p.relative_to(path).as_posix()}"
                   for p in path.rglob("*") if p.is_file() and not p.is_symlink()}
        upload_tree(path, where.key(PROJECTS_PREFIX, project, name))
        for key in sorted(stale - written):   # files an earlier copy had and this one has not
            client().delete_object(Bucket=where.bucket, Key=key)
    return where.url(PROJECTS_PREFIX, project)
